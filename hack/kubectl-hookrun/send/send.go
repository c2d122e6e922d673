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

package send

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/endpoints"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/secrets"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/senders"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// Options are the flags of test and redeliver.
type Options struct {
	data, event string
	// ContentType is the body's (--content-type).
	ContentType string
	// ReceiverURL is --receiver-url: the receiver's scheme and host to send
	// to instead of the endpoint URL's.
	ReceiverURL string
	// NoFollow is --no-follow: print the answer, do not follow the run.
	NoFollow      bool
	followTimeout time.Duration
	format        string
	// token and tokenFrom give an OIDC sender's token (tokenOptions).
	token, tokenFrom string
}

func (o *Options) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&o.ReceiverURL, "receiver-url", "",
		"Send to this base URL (scheme and host, for example a port-forward's http://127.0.0.1:8080) instead of the one in the endpoint's URL; the path stays.")
	fs.BoolVar(&o.NoFollow, "no-follow", false, "Do not wait for the run to end; print the answer and stop.")
	fs.DurationVar(&o.followTimeout, "follow-timeout", 0, "Stop following the run after this long (0: until it ends; an Agent's runTimeout is 15m by default; Ctrl-C stops following).")
	fs.StringVar(&o.token, "token", os.Getenv(tokenEnv), "For an endpoint of an OIDC sender (spec.sender.oidc): the token to call with. Default: $"+tokenEnv+".")
	fs.StringVar(&o.tokenFrom, "token-from", "", "For an endpoint of the cluster's service account tokens (spec.sender.oidc without issuer): call with a 10-minute token of this service account of the endpoint's namespace, for the endpoint's audience (needs create on serviceaccounts/token).")
	cli.OutputFlag(cmd, &o.format)
}

// delivered is what test and redeliver print with -o json|yaml.
type delivered struct {
	Endpoint   string                   `json:"endpoint"`
	URL        string                   `json:"url"`
	HTTPStatus int                      `json:"httpStatus"`
	Answer     json.RawMessage          `json:"answer,omitempty"`
	Fields     *runFields               `json:"fields,omitempty"`
	Run        *agentsv1alpha1.AgentRun `json:"run,omitempty"`
}

func NewTestCommand(e *cli.Env) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "test NAME",
		Short: "Send one call as the endpoint's sender would, follow its run to the end and print the outcome",
		Long: `Send one call to the endpoint as its configured sender would (the secret in its
header, or the body signed with it; an event type and a new delivery ID), then
follow the run until it ends and print its outcome. Every check of the receiver
applies. Needs get on Secrets in the namespace for an endpoint with a secret.
Exit status 0 when the run succeeded, 1 when the call was refused or the run failed.`,
		Example: `  kubectl hookrun test github-issues
  kubectl hookrun test github-issues --event pull_request --data @payload.json
  echo '{"status":"firing"}' | kubectl hookrun test alerts --data @-`,
		Args:              cli.ExactlyOne("endpoint name"),
		ValidArgsFunction: e.CompleteEndpoints,
		RunE: e.OnNamed(&o.format, func(cmd *cobra.Command, ns, name string) error {
			return Test(cmd.Context(), e, cmd.InOrStdin(), ns, name, o)
		}),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.data, "data", "d", "", "The body: text, @FILE, or @- for standard input (default: a sample of the sender's events).")
	fs.StringVar(&o.ContentType, "content-type", "application/json", "The Content-Type of the body.")
	fs.StringVar(&o.event, "event", "", "The event type, for senders that name it in a header (GitHub, GitLab) or in the sample body (default: the first of spec.sender.events, or a common one).")
	o.addFlags(cmd)
	return cmd
}

func Test(ctx context.Context, e *cli.Env, stdin io.Reader, ns, name string, o Options) error {
	ep, err := e.Endpoint(ctx, ns, name)
	if err != nil {
		return err
	}
	t := ep.Spec.SenderOf()
	if o.event != "" && !senders.NamesEvents(t) {
		return cli.Usage(fmt.Errorf("--event: senders of type %s name no event", t))
	}
	if o.event != "" && o.data != "" && !senders.EventInHeader(t) {
		return cli.Usage(fmt.Errorf("--event: a %s sender names its event in the body; put it into the body you send", t))
	}
	d := senders.Delivery{Event: o.event}
	if d.Event == "" {
		d.Event = senders.DefaultEvent(&ep.Spec)
	}
	var body []byte
	switch {
	case o.data == "":
		id := ""
		if senders.BodyCarriesID(t) {
			id = senders.NewDeliveryID("hookrun-test-")
		}
		body = senders.SampleBody(t, d.Event, id)
	case o.data == "@-":
		if body, err = io.ReadAll(io.LimitReader(stdin, agentsv1alpha1.MaxPayloadBytes+1)); err != nil {
			return err
		}
	case strings.HasPrefix(o.data, "@"):
		if body, err = os.ReadFile(o.data[1:]); err != nil {
			return cli.Usage(fmt.Errorf("--data: %w", err))
		}
	default:
		body = []byte(o.data)
	}
	if !senders.EventInHeader(t) {
		d.Event = ""
	}
	if !senders.BodyCarriesID(t) {
		d.ID = senders.NewDeliveryID("hookrun-test-")
	}
	return deliver(ctx, e, ep, body, o.ContentType, d, o)
}

// errRunFailed: the call was refused, ignored, or its run did not succeed.
var errRunFailed = errors.New("no successful run")

// deliver sends body to ep as its sender would, reports the answer and
// follows the run it starts.
func deliver(ctx context.Context, e *cli.Env, ep *agentsv1alpha1.WebhookEndpoint, body []byte, contentType string, d senders.Delivery, o Options) error {
	secret, err := callCredential(ctx, e, ep, o)
	if err != nil {
		return err
	}
	human := o.format == ""
	a, err := post(ctx, e, ep, secret, body, contentType, d, o.ReceiverURL, func(target string, n int) {
		if human {
			fmt.Fprintf(e.Out, "POST %s\n  as a %s sender%s, %d bytes\n", terminal.PrintableLine(target), terminal.PrintableLine(string(ep.Spec.SenderOf())), describeDelivery(d), n)
		}
	})
	if err != nil {
		return err
	}
	out := delivered{Endpoint: ep.Namespace + "/" + ep.Name, URL: a.target, HTTPStatus: a.status}
	if json.Valid(a.answer) {
		out.Answer = a.answer
	}
	if human {
		fmt.Fprintf(e.Out, "%s %s\n", terminal.Printable(a.statusText), terminal.Printable(string(a.answer)))
	}
	result := judgeAnswer(e, a.status, a.answer, d)
	if a.status == http.StatusAccepted && !o.NoFollow {
		if a.runID == "" {
			return fmt.Errorf("the receiver answered 202 without a runId: %s", a.answer)
		}
		if len(ep.Spec.Fields) > 0 {
			if out.Fields, err = fieldsOf(ctx, e, ep.Namespace, a.runID); err != nil {
				fmt.Fprintf(e.ErrOut, "Not showing the run's fields: %v\n", err)
			} else if human {
				printFields(e.Out, ep.Spec.Payload, out.Fields)
			}
		}
		out.Run, result = follow(ctx, e, ep.Namespace, a.runID, human, o.followTimeout, a.sent)
	}
	if !human {
		if err := terminal.PrintData(e.Out, o.format, out); err != nil {
			return err
		}
	}
	return result
}

// callCredential is the secret calls to ep carry, or for an OIDC sender
// the token o gives; "" for an endpoint without.
func callCredential(ctx context.Context, e *cli.Env, ep *agentsv1alpha1.WebhookEndpoint, o Options) (string, error) {
	if ep.Spec.OIDCOf() != nil {
		return callToken(ctx, e, ep, o)
	}
	if ep.Status.AuthMode == agentsv1alpha1.AuthNone {
		return "", nil
	}
	secret, err := secrets.Of(ctx, e, ep)
	if err != nil {
		return "", fmt.Errorf("sending a call needs the endpoint's secret: %w", err)
	}
	return secret, nil
}

// answered is the receiver's answer to one call.
type answered struct {
	target     string
	sent       time.Time
	status     int
	statusText string
	answer     []byte
	// runID is the runId of a 202; retryAfter the Retry-After header.
	runID, retryAfter string
}

// post sends body to ep as its sender would, with secret; sending (if not
// nil) is told the URL and the bytes first.
func post(ctx context.Context, e *cli.Env, ep *agentsv1alpha1.WebhookEndpoint, secret string, body []byte, contentType string, d senders.Delivery, receiverURL string,
	sending func(target string, n int)) (answered, error) {
	target, err := Target(e, ep, receiverURL)
	if err != nil {
		return answered{}, err
	}
	c, err := senders.BuildCall(&ep.Spec, secret, body, contentType, d, e.Now())
	if err != nil {
		return answered{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(c.Body))
	if err != nil {
		return answered{}, err
	}
	if c.ContentType != "" {
		req.Header.Set("Content-Type", c.ContentType)
	}
	for _, h := range c.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	if sending != nil {
		sending(target, len(c.Body))
	}
	a := answered{target: target, sent: e.Now()}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return answered{}, fmt.Errorf("calling the receiver at %s: %w (from outside the cluster, --receiver-url can name a port-forward)", target, err)
	}
	a.answer, err = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if err != nil {
		return answered{}, err
	}
	a.answer = bytes.TrimSpace(a.answer)
	a.status, a.statusText, a.retryAfter = resp.StatusCode, resp.Status, resp.Header.Get("Retry-After")
	if a.status == http.StatusAccepted {
		var accepted struct {
			RunID string `json:"runId"`
		}
		if json.Unmarshal(a.answer, &accepted) == nil {
			a.runID = accepted.RunID
		}
	}
	return a, nil
}

// Target is the URL to send to: the endpoint's, or its path on base.
func Target(e *cli.Env, ep *agentsv1alpha1.WebhookEndpoint, base string) (string, error) {
	if ep.Status.URL == "" {
		return "", fmt.Errorf("endpoint %s/%s has no URL yet (%s)", ep.Namespace, ep.Name, endpoints.PhaseOf(ep))
	}
	if base == "" {
		return ep.Status.URL, nil
	}
	u, err := url.Parse(ep.Status.URL)
	if err != nil {
		return "", err
	}
	b, err := ParseReceiverURL(base)
	if err != nil {
		return "", err
	}
	u.Scheme, u.Host = b.Scheme, b.Host
	return u.String(), nil
}

// ParseReceiverURL reads --receiver-url: a scheme and a host.
func ParseReceiverURL(base string) (*url.URL, error) {
	b, err := url.Parse(base)
	if err != nil || (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" {
		return nil, cli.Usage(fmt.Errorf("--receiver-url %q: give a scheme and host, for example http://127.0.0.1:8080", base))
	}
	return b, nil
}

func describeDelivery(d senders.Delivery) string {
	var parts []string
	if d.Event != "" {
		parts = append(parts, "event "+terminal.Printable(d.Event))
	}
	if d.ID != "" {
		parts = append(parts, "delivery "+terminal.Printable(d.ID))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// judgeAnswer says what an answer other than a followed 202 means.
func judgeAnswer(e *cli.Env, status int, answer []byte, d senders.Delivery) error {
	var a struct {
		Status string `json:"status"`
		Error  struct {
			Code, Message string
		} `json:"error"`
	}
	_ = json.Unmarshal(answer, &a)
	switch {
	case status == http.StatusAccepted:
		return nil
	case status == http.StatusOK && a.Status == "ignored":
		return fmt.Errorf("%w: the endpoint ignored the call: its event %q is not in spec.sender.events", errRunFailed, terminal.Printable(d.Event))
	case status < 300:
		return nil // a handshake (pong, challenge): answered, no run
	case a.Error.Code != "":
		return fmt.Errorf("%w: the receiver refused the call: %d %s: %s", errRunFailed, status, terminal.Printable(a.Error.Code), terminal.Printable(a.Error.Message))
	}
	return fmt.Errorf("%w: the receiver answered %d", errRunFailed, status)
}
