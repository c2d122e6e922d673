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

// Package devcluster runs hookrun on one machine as real processes: etcd,
// kube-apiserver and kube-controller-manager on loopback, the CRDs, RBAC and
// admission policies installed, the demo agent, and the operator and the
// receiver each as its own process with its own service account's token.
// `hookrun dev` (make dev) and the end-to-end suite both use it.
package devcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/testenv"
)

// Names of the processes a Cluster runs besides etcd and kube-apiserver.
const (
	// KubeAPIServer is started by envtest and taken over by the Cluster, so
	// it can be killed and started again like the others (Kill, Start).
	KubeAPIServer     = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	DemoAgent         = "demo-agent"
	Operator          = "operator"
	Receiver          = "receiver"
)

// Developer is the user samples are applied as: bound to the built-in
// "edit" role in the sample namespace, which aggregates hookrun's roles.
const Developer = "developer@hookrun.local"

// Options say where things are and how to run them.
type Options struct {
	// Root is the repository root (config/ is read from there).
	Root string
	// Assets holds etcd, kube-apiserver, kube-controller-manager and kubectl.
	Assets string
	// Hookrun and DemoAgentBinary are the built binaries.
	Hookrun, DemoAgentBinary string
	// WorkDir receives logs and kubeconfigs; it is emptied first.
	WorkDir string
	// ReceiverAddress and AgentAddress are where the receiver and the demo
	// agent listen (the samples expect the agent on 127.0.0.1:18090).
	ReceiverAddress, AgentAddress string
	// OperatorArgs and ReceiverArgs are extra flags.
	OperatorArgs, ReceiverArgs []string
	// SampleNamespace receives config/samples; empty: no samples.
	SampleNamespace string
	// Log receives progress lines.
	Log io.Writer
}

// Cluster is a running local hookrun.
type Cluster struct {
	opts Options
	env  *envtest.Environment
	// Admin is a system:masters configuration.
	Admin *rest.Config
	// AdminClient uses Admin.
	AdminClient client.Client
	// DeveloperKubeconfig is the kubeconfig file of Developer.
	DeveloperKubeconfig string
	// ReceiverURL is the receiver's base URL.
	ReceiverURL string

	mu    sync.Mutex
	procs map[string]*process
	// metrics are the operator's and the receiver's metrics addresses.
	metrics map[string]string
}

// MetricsURL is the /metrics URL of the operator or the receiver.
func (c *Cluster) MetricsURL(name string) string { return "http://" + c.metrics[name] + "/metrics" }

type process struct {
	name    string
	args    []string
	log     string
	ready   func(context.Context) error
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	// adopted is the pid of a process someone else started (envtest's
	// kube-apiserver) until we first stop it; cmd is nil meanwhile.
	adopted int
}

// Scheme knows the core and hookrun kinds.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = agentsv1alpha1.AddToScheme(s)
	return s
}

// Start brings everything up and returns when the operator and the receiver
// are ready (and, with samples, the sample endpoints are Ready). On error,
// whatever was started is stopped.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if err := os.RemoveAll(opts.WorkDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(opts.WorkDir, "logs"), 0o755); err != nil {
		return nil, err
	}
	c = &Cluster{opts: opts, procs: map[string]*process{}, ReceiverURL: "http://" + opts.ReceiverAddress}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if err := c.startControlPlane(); err != nil {
		return nil, err
	}
	if err := c.install(ctx); err != nil {
		return nil, err
	}
	if err := c.startProcesses(ctx); err != nil {
		return nil, err
	}
	if opts.SampleNamespace != "" {
		if err := c.applySamples(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) logf(format string, args ...any) {
	if c.opts.Log != nil {
		fmt.Fprintf(c.opts.Log, format+"\n", args...)
	}
}

// LogFile is where process name writes its output.
func (c *Cluster) LogFile(name string) string {
	return filepath.Join(c.opts.WorkDir, "logs", name+".log")
}

func (c *Cluster) startControlPlane() error {
	c.logf("starting etcd and kube-apiserver")
	etcdLog, err := os.Create(c.LogFile("etcd"))
	if err != nil {
		return err
	}
	apiLog, err := os.Create(c.LogFile("kube-apiserver"))
	if err != nil {
		return err
	}
	c.env = &envtest.Environment{
		BinaryAssetsDirectory: c.opts.Assets,
		CRDDirectoryPaths:     []string{filepath.Join(c.opts.Root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	c.env.ControlPlane.Etcd = &envtest.Etcd{Out: etcdLog, Err: etcdLog}
	c.env.ControlPlane.APIServer = &envtest.APIServer{Out: apiLog, Err: apiLog}
	cfg, err := c.env.Start()
	if err != nil {
		return fmt.Errorf("starting the control plane (logs: %s, %s): %w", c.LogFile("etcd"), c.LogFile("kube-apiserver"), err)
	}
	c.Admin = cfg
	if c.AdminClient, err = client.New(cfg, client.Options{Scheme: Scheme()}); err != nil {
		return err
	}
	if err := c.adoptAPIServer(); err != nil {
		// Only Kill and Start of KubeAPIServer need it; they say so then.
		c.logf("kube-apiserver cannot be restarted: %v", err)
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

func (c *Cluster) install(ctx context.Context) error {
	c.logf("installing RBAC and admission policies")
	if err := testenv.InstallAccessControlFrom(ctx, c.AdminClient, c.opts.Root); err != nil {
		return err
	}
	admin, err := c.env.AddUser(envtest.User{Name: "hookrun-dev-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	return c.writeKubeconfig("admin", admin.Config())
}

// Kubeconfig is the path of a kubeconfig file the cluster wrote: "admin",
// "developer", "operator" or "receiver".
func (c *Cluster) Kubeconfig(name string) string {
	return filepath.Join(c.opts.WorkDir, name+".kubeconfig")
}

func (c *Cluster) writeKubeconfig(name string, cfg *rest.Config) error {
	return WriteKubeconfig(cfg, name, c.Kubeconfig(name))
}

// WriteKubeconfig writes cfg (client certificate or token) as a kubeconfig
// file for kubectl, with user name.
func WriteKubeconfig(cfg *rest.Config, name, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hookrun-dev"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken,
	}
	kc.Contexts["hookrun-dev"] = &clientcmdapi.Context{Cluster: "hookrun-dev", AuthInfo: name}
	kc.CurrentContext = "hookrun-dev"
	return clientcmd.WriteToFile(*kc, path)
}

// serviceAccountConfig is a configuration carrying a token of service
// account hookrun-system/name, so the process has exactly its role.
func (c *Cluster) serviceAccountConfig(ctx context.Context, name string) (*rest.Config, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](7 * 24 * 3600)}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: testenv.Namespace, Name: name}}
	if err := c.AdminClient.SubResource("token").Create(ctx, sa, req); err != nil {
		return nil, fmt.Errorf("requesting a token for service account %s: %w", name, err)
	}
	cfg := rest.AnonymousClientConfig(c.Admin)
	cfg.BearerToken = req.Status.Token
	return cfg, nil
}

func (c *Cluster) startProcesses(ctx context.Context) error {
	for _, name := range []string{Operator, Receiver} {
		cfg, err := c.serviceAccountConfig(ctx, "hookrun-"+name)
		if err != nil {
			return err
		}
		if err := c.writeKubeconfig(name, cfg); err != nil {
			return err
		}
	}
	addrs, err := FreeAddresses(4)
	if err != nil {
		return err
	}
	operatorHealth, receiverHealth, operatorMetrics, receiverMetrics := addrs[0], addrs[1], addrs[2], addrs[3]
	c.metrics = map[string]string{Operator: operatorMetrics, Receiver: receiverMetrics}
	c.define(ControllerManager, filepath.Join(c.opts.Assets, "kube-controller-manager"), []string{
		"--kubeconfig=" + c.Kubeconfig("admin"),
		"--controllers=garbagecollector,namespace,serviceaccount,clusterrole-aggregation",
		"--leader-elect=false", "--secure-port=0", "--concurrent-gc-syncs=5",
	}, nil)
	c.define(DemoAgent, c.opts.DemoAgentBinary, []string{"--listen=" + c.opts.AgentAddress}, tcpReady(c.opts.AgentAddress))
	c.define(Operator, c.opts.Hookrun, append([]string{"operator",
		"--kubeconfig=" + c.Kubeconfig(Operator),
		"--public-base-url=" + c.ReceiverURL,
		"--health-probe-bind-address=" + operatorHealth,
		"--metrics-bind-address=" + operatorMetrics,
		"--namespace=" + testenv.Namespace,
	}, c.opts.OperatorArgs...), httpReady("http://"+operatorHealth+"/readyz"))
	c.define(Receiver, c.opts.Hookrun, append([]string{"receiver",
		"--kubeconfig=" + c.Kubeconfig(Receiver),
		"--listen-address=" + c.opts.ReceiverAddress,
		"--health-probe-bind-address=" + receiverHealth,
		"--metrics-bind-address=" + receiverMetrics,
		"--namespace=" + testenv.Namespace,
	}, c.opts.ReceiverArgs...), httpReady("http://"+receiverHealth+"/readyz"))
	for _, name := range []string{ControllerManager, DemoAgent, Operator, Receiver} {
		if err := c.Start(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// FreeAddresses returns n loopback addresses nobody listens on right now.
func FreeAddresses(n int) ([]string, error) {
	var out []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

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
	cmd := exec.Command(p.args[0], p.args[1:]...) //nolint:gosec // our own binaries
	cmd.Stdout, cmd.Stderr = logFile, logFile
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
	readyCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	err = wait.PollUntilContextCancel(readyCtx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case <-exited:
			return false, fmt.Errorf("%s exited before it was ready: %w (log: %s)", name, exitError(p.waitErr), p.log)
		default:
		}
		return p.ready(ctx) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to be ready (log: %s): %w", name, p.log, err)
	}
	return nil
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

// applySamples makes Developer an editor of the sample namespace (hookrun's
// roles aggregate into "edit") and applies config/samples as Developer, so
// the admission policy makes Developer the owner.
func (c *Cluster) applySamples(ctx context.Context) error {
	ns := c.opts.SampleNamespace
	if err := client.IgnoreAlreadyExists(c.AdminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})); err != nil {
		return err
	}
	if err := client.IgnoreAlreadyExists(c.AdminClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "developer-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: Developer}},
	})); err != nil {
		return err
	}
	dev, err := c.env.AddUser(envtest.User{Name: Developer, Groups: []string{"hookrun-developers"}}, nil)
	if err != nil {
		return err
	}
	if err := c.writeKubeconfig("developer", dev.Config()); err != nil {
		return err
	}
	c.DeveloperKubeconfig = c.Kubeconfig("developer")
	devClient, err := client.New(dev.Config(), client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	c.logf("applying config/samples to namespace %s as %s", ns, Developer)
	// Aggregation into "edit" and the policies' view of the CRDs settle
	// asynchronously: retry until the samples apply.
	samples := filepath.Join(c.opts.Root, "config", "samples")
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		err := testenv.ApplyIn(ctx, devClient, ns, samples)
		if err != nil && (apierrors.IsForbidden(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsNotFound(err)) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("applying config/samples as %s: %w", Developer, err)
	}
	if err := c.pointAgentsAtDemoAgent(ctx, devClient, ns); err != nil {
		return err
	}
	return c.waitReady(ctx, ns)
}

// sampleAgentURL is where config/samples expects the demo agent.
const sampleAgentURL = "http://127.0.0.1:18090/"

// pointAgentsAtDemoAgent moves the sample Agents to the demo agent's address
// when it is not the one the samples name (the end-to-end suite picks a free port).
func (c *Cluster) pointAgentsAtDemoAgent(ctx context.Context, dev client.Client, ns string) error {
	url := "http://" + c.opts.AgentAddress + "/"
	if url == sampleAgentURL {
		return nil
	}
	agents := &agentsv1alpha1.AgentList{}
	if err := dev.List(ctx, agents, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range agents.Items {
		a := &agents.Items[i]
		if a.Spec.A2A.URL != sampleAgentURL {
			continue
		}
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.A2A.URL = url
		if err := dev.Patch(ctx, a, patch); err != nil {
			return fmt.Errorf("pointing Agent %s at the demo agent: %w", a.Name, err)
		}
	}
	return nil
}

// waitReady waits until every endpoint of ns is Ready, the receiver serves
// it, and its owner may trigger its Agent: the operator's Ready comes before
// the receiver's informer has the endpoint (a call in between gets 404), and
// before kube-controller-manager has aggregated hookrun's trigger verb into
// the edit role the samples' owner holds (a call in between gets 422
// owner_not_member).
func (c *Cluster) waitReady(ctx context.Context, ns string) error {
	// Each endpoint is probed until it is served, then never again: a probe
	// of an unauthenticated endpoint spends one of its pre-parse rate limit.
	served := map[string]bool{}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		eps := &agentsv1alpha1.WebhookEndpointList{}
		if err := c.AdminClient.List(ctx, eps, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, ep := range eps.Items {
			if !ready(ep.Status.Conditions) || ep.Status.URL == "" {
				return false, nil
			}
			if !served[ep.Status.URL] && (!Serves(ctx, ep.Status.URL) || !c.ownerMayTrigger(ctx, &ep)) {
				return false, nil
			}
			served[ep.Status.URL] = true
		}
		return len(eps.Items) > 0, nil
	})
}

func ready(conds []metav1.Condition) bool {
	for _, c := range conds {
		if c.Type == agentsv1alpha1.ConditionReady {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// Endpoint is what a caller needs to call an endpoint.
type Endpoint struct {
	Namespace, Name, URL, Secret string
}

// EndpointFor reads an endpoint's URL and, if it has one, its generated secret.
func (c *Cluster) EndpointFor(ctx context.Context, ns, name string) (Endpoint, error) {
	ep := &agentsv1alpha1.WebhookEndpoint{}
	if err := c.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep); err != nil {
		return Endpoint{}, err
	}
	out := Endpoint{Namespace: ns, Name: name, URL: ep.Status.URL}
	if ep.Status.SecretHash == "" {
		return out, nil
	}
	secret := &corev1.Secret{}
	if err := c.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName(name)}, secret); err != nil {
		return Endpoint{}, fmt.Errorf("reading the secret of endpoint %s: %w", name, err)
	}
	out.Secret = string(secret.Data[agentsv1alpha1.WebhookSecretKey])
	return out, nil
}

// Kubectl is the path of the kubectl the control plane was built with.
func (c *Cluster) Kubectl() string { return filepath.Join(c.opts.Assets, "kubectl") }

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

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Build builds hookrun and the demo agent from the tree at root into dir
// and returns their paths, for suites that run the processes.
func Build(ctx context.Context, root, dir string) (hookrun, demoAgent string, err error) {
	hookrun, demoAgent = filepath.Join(dir, "hookrun"), filepath.Join(dir, "demo-agent")
	for out, pkg := range map[string]string{hookrun: ".", demoAgent: "./hack/demo-agent"} {
		build := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		build.Dir = root
		if b, err := build.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
		}
	}
	return hookrun, demoAgent, nil
}
