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
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
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
	// OwnerDefaulting is the mode of the owner policies installed: Required
	// where the API server serves no MutatingAdmissionPolicy.
	OwnerDefaulting clusterinstall.OwnerDefaulting

	mu    sync.Mutex
	procs map[string]*process
	// metrics are the operator's and the receiver's metrics addresses.
	metrics map[string]string
	// receiverHealth is the receiver's health probe address (ReceiverServes).
	receiverHealth string
}

// MetricsURL is the /metrics URL of the operator or the receiver.
func (c *Cluster) MetricsURL(name string) string { return "http://" + c.metrics[name] + "/metrics" }

type process struct {
	name string
	args []string
	// extra are arguments added to args from the next Start on (SetExtraArgs).
	extra   []string
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
	started := &Cluster{opts: opts, procs: map[string]*process{}, ReceiverURL: "http://" + opts.ReceiverAddress}
	c = started
	defer func() {
		if err != nil {
			started.Stop() // c is nil by now: each error return sets it
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

func (c *Cluster) install(ctx context.Context) error {
	mode, err := clusterinstall.DetectOwnerDefaulting(c.AdminClient)
	if err != nil {
		return err
	}
	c.OwnerDefaulting = mode
	c.logf("installing RBAC and admission policies (owner defaulting: %s)", mode)
	if err := clusterinstall.InstallAccessControlIn(ctx, c.AdminClient, c.opts.Root, mode); err != nil {
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
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: clusterinstall.Namespace, Name: name}}
	if err := c.AdminClient.SubResource("token").Create(ctx, sa, req); err != nil {
		return nil, fmt.Errorf("requesting a token for service account %s: %w", name, err)
	}
	cfg := rest.AnonymousClientConfig(c.Admin)
	cfg.BearerToken = req.Status.Token
	return cfg, nil
}

func (c *Cluster) startProcesses(ctx context.Context) error {
	for name, account := range map[string]string{Operator: clusterinstall.OperatorServiceAccount, Receiver: clusterinstall.ReceiverServiceAccount} {
		cfg, err := c.serviceAccountConfig(ctx, account)
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
	c.receiverHealth = receiverHealth
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
		"--namespace=" + clusterinstall.Namespace,
	}, c.opts.OperatorArgs...), httpReady("http://"+operatorHealth+"/readyz"))
	c.define(Receiver, c.opts.Hookrun, append([]string{"receiver",
		"--kubeconfig=" + c.Kubeconfig(Receiver),
		"--listen-address=" + c.opts.ReceiverAddress,
		"--health-probe-bind-address=" + receiverHealth,
		"--metrics-bind-address=" + receiverMetrics,
		"--namespace=" + clusterinstall.Namespace,
	}, c.opts.ReceiverArgs...), httpReady("http://"+receiverHealth+"/readyz"))
	for _, name := range []string{ControllerManager, DemoAgent, Operator, Receiver} {
		if err := c.Start(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// Kubectl is the path of the kubectl the control plane was built with.
func (c *Cluster) Kubectl() string { return filepath.Join(c.opts.Assets, "kubectl") }

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Build returns hookrun and the demo agent for suites that run the
// processes: the binaries make test built once into $HOOKRUN_TEST_BIN when it
// is set, else builds them from the tree at root into dir.
func Build(ctx context.Context, root, dir string) (hookrun, demoAgent string, err error) {
	if hookrun, err = Binary(ctx, root, dir, "hookrun", "."); err != nil {
		return "", "", err
	}
	if demoAgent, err = Binary(ctx, root, dir, "demo-agent", "./hack/demo-agent"); err != nil {
		return "", "", err
	}
	return hookrun, demoAgent, nil
}

// Binary returns the binary name that make test built into
// $HOOKRUN_TEST_BIN, or builds package pkg of the tree at root into dir as
// name, with -race when this program has it (so the two share compiled
// packages).
func Binary(ctx context.Context, root, dir, name, pkg string) (string, error) {
	if prebuilt := os.Getenv("HOOKRUN_TEST_BIN"); prebuilt != "" {
		bin := filepath.Join(prebuilt, name)
		st, err := os.Stat(bin)
		if err != nil {
			return "", fmt.Errorf("HOOKRUN_TEST_BIN holds no %s (make test-binaries builds it): %w", name, err)
		}
		if newer, err := newestSource(root); err != nil {
			return "", err
		} else if newer.ModTime().After(st.ModTime()) {
			return "", fmt.Errorf("%s in HOOKRUN_TEST_BIN is older than %s: make test-binaries builds it again", name, newer.Name())
		}
		return bin, nil
	}
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	build := exec.CommandContext(ctx, "go", append(args, pkg)...)
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return bin, nil
}

// newestSource is the Go source file (or go.mod, go.sum) of the tree at root
// changed last: a binary older than it is stale. Build outputs (bin, dist)
// and hidden directories are not sources.
func newestSource(root string) (fs.FileInfo, error) {
	var newest fs.FileInfo
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			if name := d.Name(); path != root && (name == "bin" || name == "dist" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		case !strings.HasSuffix(d.Name(), ".go") && d.Name() != "go.mod" && d.Name() != "go.sum":
			return nil
		}
		info, err := d.Info()
		if err == nil && (newest == nil || info.ModTime().After(newest.ModTime())) {
			newest = info
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("looking for the newest source under %s: %w", root, err)
	}
	return newest, nil
}
