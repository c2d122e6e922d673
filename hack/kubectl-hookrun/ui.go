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

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/endpoints"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/pause"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/runs"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/secrets"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/send"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/ui"
)

type uiOptions struct {
	address     string
	port        int
	noBrowser   bool
	receiverURL string
}

func newUICommand(e *cli.Env) *cobra.Command {
	var o uiOptions
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the Invocations tab, a web UI of endpoints and their runs, on loopback as you",
		Long: `Serve a web UI on this machine: the Agents of a namespace, and for each Agent its
"Invocations" tab with a card per webhook endpoint (URL, sample curl, phase,
run count, recent invocations, runs per hour), kept up to date live, with
actions (create and edit an endpoint, pause, resume, take ownership, rotate the secret,
add a secret, send a test call, redeliver a run, delete). Every request it makes to the API server is made
with your kubeconfig's credentials, as kubectl does: RBAC and hookrun's
admission policies decide, and nothing is installed in the cluster.

It prints its address with a token for this process only and opens it in a
browser (unless --no-browser). Requests without the token are refused. It
serves until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveUI(cmd.Context(), e, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.address, "address", "127.0.0.1", "The address to serve on. Anyone who can reach it and has the token acts as you: keep it on loopback.")
	fs.IntVar(&o.port, "port", 0, "The port to serve on (0: any free port).")
	fs.BoolVar(&o.noBrowser, "no-browser", false, "Only print the address; open no browser.")
	fs.StringVar(&o.receiverURL, "receiver-url", "",
		"Send test calls and redeliveries to this base URL (scheme and host, for example a port-forward's http://127.0.0.1:8080) instead of the one in the endpoint's URL; the path stays.")
	return cmd
}

func serveUI(ctx context.Context, e *cli.Env, o uiOptions) error {
	if o.port < 0 || o.port > 65535 {
		return cli.Usage(fmt.Errorf("--port must be between 0 and 65535, not %d", o.port))
	}
	if o.receiverURL != "" {
		if _, err := send.ParseReceiverURL(o.receiverURL); err != nil {
			return err
		}
	}
	if err := e.Connect(); err != nil {
		return err
	}
	ns, err := e.Namespace()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(o.address, strconv.Itoa(o.port)))
	if err != nil {
		return err
	}
	s, err := ui.New(l.Addr().String(), ui.Options{Plugin: uiPlugin{e: e, receiverURL: o.receiverURL}, Namespace: ns, Log: e.ErrOut, Now: e.Now})
	if err != nil {
		_ = l.Close()
		return err
	}
	fmt.Fprintf(e.Out, "Serving the hookrun UI as your kubeconfig's user; open:\n\n  %s\n\nThe address holds a token for this process: do not share it. Press Ctrl+C to stop.\n", s.URL())
	if !o.noBrowser {
		if err := openBrowser(s.URL()); err != nil {
			fmt.Fprintf(e.ErrOut, "No browser opened (%v): open the address above.\n", err)
		}
	}
	return s.Serve(ctx, l)
}

// openBrowser opens url with the system's own opener, and does not wait
// for the browser.
func openBrowser(url string) error {
	var name string
	var args []string
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	default:
		name = "xdg-open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	cmd := exec.Command(path, append(args, url)...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// uiPlugin gives the UI the commands' own code, acting as the user.
type uiPlugin struct {
	e *cli.Env
	// receiverURL is --receiver-url, for test calls and redeliveries.
	receiverURL string
}

var _ ui.Plugin = uiPlugin{}

func (p uiPlugin) Client() client.WithWatch { return p.e.Client }

func (p uiPlugin) Phase(ep *agentsv1alpha1.WebhookEndpoint) string { return endpoints.PhaseOf(ep) }

func (p uiPlugin) SampleCurl(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (string, string) {
	return endpoints.SampleCurl(ctx, p.e, ep)
}

func (p uiPlugin) Printable(s string) string { return terminal.Printable(s) }

func (p uiPlugin) Thread(run *agentsv1alpha1.AgentRun) string { return runs.ThreadOf(run) }

func (p uiPlugin) Payload(ctx context.Context, run *agentsv1alpha1.AgentRun) ([]byte, error) {
	return send.StoredBody(ctx, p.e, run)
}

func (p uiPlugin) SetPaused(ctx context.Context, ns, name string, paused bool) (string, error) {
	ep, verb, err := pause.Request(ctx, p.e, ns, name, paused, false)
	if err != nil {
		return "", err
	}
	if paused {
		return fmt.Sprintf("Asked to pause endpoint %s/%s: once hookrun has paused it, calls are answered 422 endpoint_paused; its URL, secret and history are kept.", ns, ep.Name), nil
	}
	return fmt.Sprintf("Asked to %s endpoint %s/%s: it accepts calls again once hookrun has resumed it.", verb, ns, ep.Name), nil
}

func (p uiPlugin) TakeOwnership(ctx context.Context, ns, name string) (string, error) {
	ep, verb, err := pause.Request(ctx, p.e, ns, name, false, true)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Asked to %s endpoint %s/%s: you own it now and its runs act with your rights; it accepts calls again once hookrun has resumed it.", verb, ns, ep.Name), nil
}

func (p uiPlugin) CreateEndpoint(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (string, error) {
	if err := p.e.Client.Create(ctx, ep); err != nil {
		return "", cli.Refused(err, fmt.Sprintf("create endpoint %s/%s", ep.Namespace, ep.Name), "")
	}
	how := "its secret"
	if ep.Spec.AllowUnauthenticated {
		how = "no secret: anyone with the URL can call it"
	}
	return fmt.Sprintf("Created endpoint %s/%s: hookrun gives it its URL and %s in a moment, and its card shows them.", ep.Namespace, ep.Name, how), nil
}

func (p uiPlugin) EditEndpoint(ctx context.Context, ns, name string, spec map[string]any) (string, error) {
	ep, err := p.e.Endpoint(ctx, ns, name)
	if err != nil {
		return "", err
	}
	if err := p.e.PatchSpec(ctx, ep, spec); err != nil {
		return "", cli.Refused(err, fmt.Sprintf("edit endpoint %s/%s", ns, name), cli.RoleMember)
	}
	return fmt.Sprintf("Saved endpoint %s/%s: hookrun applies the change to its next calls.", ns, name), nil
}

func (p uiPlugin) Delete(ctx context.Context, ns, name string) (string, error) {
	ep, err := p.e.Endpoint(ctx, ns, name)
	if err != nil {
		return "", err
	}
	// Only the endpoint read here, not one made since under its name.
	if err := p.e.Client.Delete(ctx, ep, client.Preconditions{UID: &ep.UID}); err != nil {
		return "", cli.Refused(err, fmt.Sprintf("delete endpoint %s/%s", ns, name), cli.RoleMember)
	}
	return fmt.Sprintf("Deleted endpoint %s/%s: its URL no longer takes calls.", ns, name), nil
}

func (p uiPlugin) Rotate(ctx context.Context, ns, name string) (ui.NewSecret, error) {
	ep, value, err := secrets.RequestRotation(ctx, p.e, ns, name)
	if err != nil {
		return ui.NewSecret{}, err
	}
	made, err := secrets.AwaitRotation(ctx, p.e, ep, value)
	if err != nil {
		return ui.NewSecret{Said: fmt.Sprintf("Asked to rotate the secret of endpoint %s/%s.", ns, name)}, err
	}
	return shown(made), nil
}

func (p uiPlugin) AddSecret(ctx context.Context, ns, name string) (ui.NewSecret, error) {
	ep, err := secrets.RequestSecret(ctx, p.e, ns, name)
	if err != nil {
		return ui.NewSecret{}, err
	}
	made, err := secrets.AwaitAddedSecret(ctx, p.e, ep)
	if err != nil {
		return ui.NewSecret{Said: fmt.Sprintf("Endpoint %s/%s no longer allows unauthenticated calls.", ns, name)}, err
	}
	return shown(made), nil
}

// shown is a new secret as the UI shows it once.
func shown(n *secrets.NewSecret) ui.NewSecret {
	return ui.NewSecret{Said: n.Said(), Secret: n.Value, Warning: secrets.Warning(n.Endpoint)}
}

func (p uiPlugin) Send(ctx context.Context, ns, name string) (string, error) {
	out, said, err := p.captured(func(e *cli.Env) error {
		return send.Test(ctx, e, strings.NewReader(""), ns, name, send.Options{ContentType: "application/json", NoFollow: true, ReceiverURL: p.receiverURL})
	})
	return strings.TrimSpace(said + out), err
}

func (p uiPlugin) Redeliver(ctx context.Context, ns, run string) (string, error) {
	out, said, err := p.captured(func(e *cli.Env) error {
		return send.Redeliver(ctx, e, ns, run, send.Options{NoFollow: true, ReceiverURL: p.receiverURL})
	})
	return strings.TrimSpace(said + out), err
}

// captured runs a command's own code as it runs in a terminal, keeping
// what it prints: on standard output and on standard error.
func (p uiPlugin) captured(do func(e *cli.Env) error) (string, string, error) {
	var out, said bytes.Buffer
	e := *p.e
	e.Out, e.ErrOut = &out, &said
	err := do(&e)
	return out.String(), said.String(), err
}
