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

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Env is what every command works with: the user's kubeconfig flags, the
// output streams, the clock and an HTTP client for calls to the receiver.
type Env struct {
	// Flags are kubectl's (-n, --kubeconfig, --context...), bound to the
	// root command's persistent flags.
	Flags  *genericclioptions.ConfigFlags
	Out    io.Writer
	ErrOut io.Writer
	Now    func() time.Time
	// HTTP calls the receiver; it follows no redirect.
	HTTP *http.Client
	// Timeout is --wait-timeout: how long commands wait for hookrun.
	Timeout time.Duration

	// Client and Rest are the user's, once Connect made them.
	Client client.WithWatch
	Rest   *rest.Config
}

// NewEnv is an Env printing to out and errOut, not connected yet.
func NewEnv(out, errOut io.Writer) *Env {
	return &Env{
		Flags: genericclioptions.NewConfigFlags(true),
		Out:   out, ErrOut: errOut,
		Now: time.Now,
		HTTP: &http.Client{
			Timeout: 30 * time.Second,
			// Senders do not follow redirects, and a redirect to another
			// host would carry the secret header there.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// Scheme knows Kubernetes' own kinds and hookrun's.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(agentsv1alpha1.AddToScheme(Scheme))
}

// Connect makes the API client from the kubeconfig flags (once).
func (e *Env) Connect() error {
	if e.Client != nil {
		return nil
	}
	cfg, err := e.Flags.ToRESTConfig()
	if err != nil {
		return err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		return err
	}
	e.Rest, e.Client = cfg, c
	return nil
}

// Namespace is the namespace of -n, or the kubeconfig context's.
func (e *Env) Namespace() (string, error) {
	ns, _, err := e.Flags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

// Endpoint reads the endpoint name in ns.
func (e *Env) Endpoint(ctx context.Context, ns, name string) (*agentsv1alpha1.WebhookEndpoint, error) {
	if err := e.Connect(); err != nil {
		return nil, err
	}
	ep := &agentsv1alpha1.WebhookEndpoint{}
	err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("webhook endpoint %q not found in namespace %s (kubectl hookrun endpoints lists them)", name, ns)
	}
	if err != nil {
		return nil, Refused(err, fmt.Sprintf("read webhook endpoint %s/%s", ns, name), RoleRead)
	}
	return ep, nil
}

// WhoAmI asks the API server who the user is.
func (e *Env) WhoAmI(ctx context.Context) (string, error) {
	if err := e.Connect(); err != nil {
		return "", err
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := e.Client.Create(ctx, review); err != nil {
		return "", fmt.Errorf("asking the API server who you are: %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

// PatchSpec merge-patches the endpoint's spec with fields.
func (e *Env) PatchSpec(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint, fields map[string]any) error {
	body, err := json.Marshal(map[string]any{"spec": fields})
	if err != nil {
		return err
	}
	return e.Client.Patch(ctx, ep, client.RawPatch(client.Merge.Type(), body))
}

// PollInterval is how often the plugin looks again while it waits.
const PollInterval = 200 * time.Millisecond

// WaitFor polls done until it is true, it fails, or --wait-timeout passes.
func (e *Env) WaitFor(ctx context.Context, done wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, PollInterval, e.Timeout, true, done)
}
