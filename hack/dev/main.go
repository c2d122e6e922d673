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

// Command hookrun-dev is `make dev`: hookrun on this machine, as real
// processes, with a ready curl command. It lives apart from the hookrun
// binary so that the image carries no test control plane code.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	opts := devcluster.Options{
		Root: ".", Assets: filepath.Join("bin", "k8s", "v1.37.0"),
		Hookrun: filepath.Join("bin", "hookrun"), DemoAgentBinary: filepath.Join("bin", "demo-agent"),
		WorkDir: ".dev", ReceiverAddress: "127.0.0.1:18080", AgentAddress: "127.0.0.1:18090",
		SampleNamespace: "default",
	}
	cmd := &cobra.Command{
		Use:   "hookrun-dev",
		Short: "Run hookrun locally: control plane, operator, receiver and demo agent as processes (make dev)",
		Long: `Runs etcd, kube-apiserver and kube-controller-manager on loopback, installs the CRDs,
RBAC and admission policies, starts the demo agent, the operator and the receiver (each as
its own service account), applies config/samples and prints a ready curl command.
Run it from the repository root after 'make build control-plane' (make dev does all of it).
Ctrl-C stops everything.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDev(cmd.Context(), cmd.OutOrStdout(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Root, "root", opts.Root, "Repository root (config/ is read from there).")
	fs.StringVar(&opts.Assets, "assets", opts.Assets, "Directory with etcd, kube-apiserver, kube-controller-manager and kubectl.")
	fs.StringVar(&opts.Hookrun, "hookrun", opts.Hookrun, "The hookrun binary to run the operator and the receiver with.")
	fs.StringVar(&opts.DemoAgentBinary, "demo-agent", opts.DemoAgentBinary, "The demo agent binary.")
	fs.StringVar(&opts.WorkDir, "work-dir", opts.WorkDir, "Directory for logs and kubeconfigs (emptied first).")
	fs.StringVar(&opts.ReceiverAddress, "receiver-address", opts.ReceiverAddress, "Address the receiver listens on.")
	fs.StringVar(&opts.AgentAddress, "agent-address", opts.AgentAddress, "Address the demo agent listens on (config/samples expects 127.0.0.1:18090).")
	return cmd
}

// pluginCommands lists the plugin's commands for the endpoint named ep.
func pluginCommands(ep string) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, c := range [][2]string{
		{"endpoints", "every endpoint: agent, sender, phase, runs, URL"},
		{"show " + ep, "its card: URL, a sample curl that works as printed, recent invocations"},
		{"test " + ep, "send a call as its sender would and follow the run to its end"},
		{"runs " + ep + " --watch", "recent invocations, newest first, and new ones as they come"},
		{"secret " + ep, "the secret, with the warning to save it"},
		{"rotate " + ep, "a new secret, printed once; the old one stops working"},
		{"pause " + ep + " / resume " + ep, "calls answered 422 while paused"},
		{"redeliver RUN", "send a past run's payload again"},
	} {
		fmt.Fprintf(w, "  kubectl hookrun %s\t# %s\n", c[0], c[1])
	}
	_ = w.Flush()
	return b.String()
}

func runDev(ctx context.Context, out io.Writer, opts devcluster.Options) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	began := time.Now()
	opts.Log = out
	c, err := devcluster.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(out, "\nstopping every process...")
		c.Stop()
		fmt.Fprintln(out, "stopped")
	}()
	ep, err := c.EndpointFor(ctx, opts.SampleNamespace, "github-issues")
	if err != nil {
		return err
	}
	kubectl := c.Kubectl() + " --kubeconfig " + c.DeveloperKubeconfig
	fmt.Fprintf(out, `
hookrun is running (ready in %s). Logs: %s

Endpoint %s/%s
  URL:    %s
  Secret: %s

Send it a call (202 and a runId):
  curl -sS -X POST %s \
    -H %s -H 'Content-Type: application/json' \
    -d '{"action":"opened","issue":{"number":1,"title":"Login fails"}}'

Watch its runs reach success (the demo agent answers with the payload's size and first line):
  %s get agentruns -n %s -l %s=%s --sort-by=.metadata.creationTimestamp -w
  %s get agentruns -n %s -o custom-columns=RUN:.metadata.name,STATE:.status.state,OUTPUT:.status.output

Or with the kubectl plugin (bin/kubectl-hookrun), in another shell:
  export PATH="$PWD/bin:$PWD/%s:$PATH" KUBECONFIG="$PWD/%s"
%s
Kubeconfigs (as %s, and as an admin): %s, %s
Ctrl-C stops everything.
`, time.Since(began).Round(100*time.Millisecond), filepath.Join(opts.WorkDir, "logs"),
		ep.Namespace, ep.Name, ep.URL, ep.Secret,
		devcluster.ShellQuote(ep.URL), devcluster.ShellQuote(agentsv1alpha1.SecretHeader+": "+ep.Secret),
		kubectl, ep.Namespace, agentsv1alpha1.LabelEndpoint, ep.Name,
		kubectl, ep.Namespace,
		filepath.Clean(opts.Assets), c.DeveloperKubeconfig, pluginCommands(ep.Name),
		devcluster.Developer, c.DeveloperKubeconfig, c.Kubeconfig("admin"))
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			if err := c.Exited(); err != nil {
				return err
			}
		}
	}
}
