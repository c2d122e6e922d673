/*
Copyright 2026 The hookrun Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package devcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// Processes of the cluster: starting, probing, killing and stopping them.

// FreeAddresses returns n loopback addresses nobody listens on right now,
// on ports below Linux's ephemeral range (32768-60999). A port from that
// range (what listening on port 0 gives) may be taken, between this call
// and the process binding it, as the local port of any outgoing
// connection, and so may a killed process's port before its restart: the
// receiver of make chaos once exited with "address already in use".
func FreeAddresses(n int) ([]string, error) {
	var out []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for tries := 0; len(out) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("no free port among 1000 tried in %d-%d", minPort, maxPort)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(minPort+rand.IntN(maxPort-minPort+1))))
		if err != nil {
			continue // taken: try another
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// The ports FreeAddresses picks from: above the well-known services a
// machine may run, below the ephemeral range.
const minPort, maxPort = 20000, 32767

func (c *Cluster) define(name, bin string, args []string, ready func(context.Context) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.procs[name] = &process{name: name, args: append([]string{bin}, args...), log: c.LogFile(name), ready: ready}
}

// Start starts process name (again, after Kill) and waits until it is ready.
func (c *Cluster) Start(ctx context.Context, name string) error {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("no process %q", name)
	}
	logFile, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	c.mu.Lock()
	args := append(slices.Clone(p.args[1:]), p.extra...)
	c.mu.Unlock()
	cmd := exec.Command(p.args[0], args...) //nolint:gosec // our own binaries
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A binary built with -race (make test's) stops at its first data race,
	// so that the suite sees it die; others ignore GORACE.
	cmd.Env = append(os.Environ(), "GORACE=halt_on_error=1 "+os.Getenv("GORACE"))
	// Killed with us, even by SIGKILL: nothing is left running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	exited := make(chan struct{})
	c.mu.Lock()
	p.cmd, p.exited = cmd, exited
	c.mu.Unlock()
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		c.mu.Lock()
		p.waitErr = err
		c.mu.Unlock()
		close(exited)
	}()
	c.logf("started %s (log: %s)", name, p.log)
	if p.ready == nil {
		return nil
	}
	return c.waitFor(ctx, name+" to be ready (log: "+p.log+")", func(ctx context.Context) (string, error) {
		select {
		case <-exited:
			return "", stopWaiting(fmt.Errorf("%s exited before it was ready: %w", name, exitError(p.waitErr)))
		default:
		}
		if err := p.ready(ctx); err != nil {
			return "not ready: " + err.Error(), nil
		}
		return "", nil
	})
}

// SetExtraArgs gives process name these arguments besides its own from its
// next Start on (none: only its own again).
func (c *Cluster) SetExtraArgs(name string, args ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.procs[name]; p != nil {
		p.extra = args
	}
}

// PID is the process id of process name, or 0 when it is not running.
func (c *Cluster) PID(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.procs[name]
	if p == nil {
		return 0
	}
	if p.adopted != 0 {
		return p.adopted
	}
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	select {
	case <-p.exited:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

// Kill ends process name with SIGKILL and waits for it.
func (c *Cluster) Kill(name string) { c.stop(name, syscall.SIGKILL) }

// stop signals process name and waits up to 10 s before killing it.
func (c *Cluster) stop(name string, sig syscall.Signal) {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	if p == nil {
		return
	}
	c.mu.Lock()
	adopted := p.adopted
	p.adopted = 0
	c.mu.Unlock()
	if adopted != 0 {
		stopAdopted(adopted, sig)
		return
	}
	if p.cmd == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// stopAdopted signals a process we did not start and waits up to 10 s (then
// kills it) until its parent has reaped it.
func stopAdopted(pid int, sig syscall.Signal) {
	_ = syscall.Kill(pid, sig)
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(10 * time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop ends every process, then the control plane. It is safe to call twice.
func (c *Cluster) Stop() {
	for _, name := range []string{Receiver, Operator, DemoAgent, ControllerManager, KubeAPIServer} {
		c.stop(name, syscall.SIGTERM)
	}
	if c.env != nil {
		if err := c.env.Stop(); err != nil {
			c.logf("stopping the control plane: %v", err)
		}
		c.env = nil
	}
}

// WaitTCP waits up to 10 s until addr accepts connections.
func WaitTCP(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return tcpReady(addr)(ctx) == nil, nil
	})
}

func tcpReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
}

func httpReady(url string) func(context.Context) error {
	return func(ctx context.Context) error { return httpGetOK(ctx, http.DefaultClient, url) }
}

func httpGetOK(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// adoptAPIServer defines process KubeAPIServer as the command line envtest
// started it with (same port, certificates and etcd), so that Start runs it
// again after Kill. State lives in etcd; a new API server serves it all.
func (c *Cluster) adoptAPIServer() error {
	pid, args, err := childRunning("kube-apiserver")
	if err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(c.Admin)
	if err != nil {
		return err
	}
	readyz := strings.TrimSuffix(c.Admin.Host, "/") + "/readyz"
	c.define(KubeAPIServer, args[0], args[1:], func(ctx context.Context) error {
		return httpGetOK(ctx, hc, readyz)
	})
	c.mu.Lock()
	c.procs[KubeAPIServer].adopted = pid
	c.mu.Unlock()
	return nil
}

// childRunning finds this process's child running a binary called name
// and returns its pid and command line.
func childRunning(name string) (int, []string, error) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, nil, err
	}
	self := os.Getpid()
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || filepath.Base(exe) != name {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(self) {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return 0, nil, err
		}
		return pid, strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"), nil
	}
	return 0, nil, fmt.Errorf("no child process runs %s", name)
}

// Exited reports the processes that have ended on their own, with their logs.
func (c *Cluster) Exited() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, p := range c.procs {
		if p.exited == nil {
			continue
		}
		select {
		case <-p.exited:
			errs = append(errs, fmt.Errorf("%s exited: %w (log: %s)", p.name, exitError(p.waitErr), p.log))
		default:
		}
	}
	return errors.Join(errs...)
}

// exitError is a process's wait error, or one saying it exited cleanly.
func exitError(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}
