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

// Package redisserver runs the OS's redis-server (Debian's package) on
// loopback for the tests and benchmarks of the receiver's shared rate-limit
// store: started on a free port, killed, and started again on the same port.
package redisserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Binary is the program run; Available tells whether it is on PATH.
const Binary = "redis-server"

// startTimeout bounds how long redis-server takes to say it is ready.
const startTimeout = 30 * time.Second

// Available tells whether redis-server is on PATH.
func Available() bool {
	_, err := exec.LookPath(Binary)
	return err == nil
}

// Server is one redis-server, without persistence: a killed
// server comes back empty, as a store that lost its data does.
type Server struct {
	// Addr is host:port.
	Addr     string
	host     string
	port     int
	password string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// Start runs redis-server on a free port of 127.0.0.1, requiring password
// when it is not empty, and returns once it accepts connections.
func Start(password string) (*Server, error) { return StartOn("127.0.0.1", password) }

// StartOn is Start on a free port of host (an address of this machine).
func StartOn(host, password string) (*Server, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port //nolint:errcheck // a TCP listener's address
	if err := l.Close(); err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort(host, strconv.Itoa(port)), host: host, port: port, password: password}
	return s, s.Restart()
}

// URL is the store's redis:// URL, without the password.
func (s *Server) URL() string { return "redis://" + s.Addr }

// Restart starts the server again on its port after Kill (or first).
func (s *Server) Restart() error {
	args := []string{"--port", strconv.Itoa(s.port), "--bind", s.host, "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--dir", os.TempDir(), "--loglevel", "notice"}
	if s.password != "" {
		args = append(args, "--requirepass", s.password)
	}
	cmd := exec.Command(Binary, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", Binary, err)
	}
	ready := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		// Redis says when it is ready; what it said before goes into the
		// error if it never does.
		var said strings.Builder
		r := bufio.NewScanner(out)
		for r.Scan() {
			if line := r.Text(); strings.Contains(line, "Ready to accept connections") {
				ready <- nil
				_, _ = io.Copy(io.Discard, out)
				break
			}
			said.WriteString(r.Text() + "\n")
		}
		// After a ready server exits, ready has room and no reader.
		ready <- fmt.Errorf("%s exited before it was ready:\n%s", Binary, said.String())
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case err := <-ready:
		if err != nil {
			return err
		}
	case <-time.After(startTimeout):
		_ = cmd.Process.Kill()
		return fmt.Errorf("%s was not ready after %s", Binary, startTimeout)
	}
	s.cmd, s.exited = cmd, exited
	return nil
}

// Kill stops the server with SIGKILL and waits for it to exit.
func (s *Server) Kill() error {
	if s.cmd == nil {
		return errors.New("the server is not running")
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	<-s.exited
	s.cmd = nil
	return nil
}

// Close kills the server if it runs.
func (s *Server) Close() {
	if s.cmd != nil {
		_ = s.Kill()
	}
}
