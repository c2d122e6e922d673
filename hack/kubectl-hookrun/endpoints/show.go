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

package endpoints

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/runs"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/secrets"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/senders"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// recentOnCard is how many invocations the card lists.
const recentOnCard = 10

// card is an endpoint's card, as show prints it (-o json|yaml prints this).
type card struct {
	Namespace  string                             `json:"namespace"`
	Name       string                             `json:"name"`
	Agent      string                             `json:"agent"`
	Owner      string                             `json:"owner"`
	Phase      string                             `json:"phase"`
	URL        string                             `json:"url"`
	Sender     agentsv1alpha1.SenderType          `json:"sender"`
	Setup      []string                           `json:"setup"`
	Payload    agentsv1alpha1.PayloadMode         `json:"payload"`
	Fields     []cardField                        `json:"fields,omitempty"`
	Secret     string                             `json:"secret,omitempty"` // where it is, never the value
	Token      string                             `json:"token,omitempty"`  // an OIDC sender's, instead of a secret
	Curl       string                             `json:"curl,omitempty"`
	CurlNote   string                             `json:"curlNote,omitempty"`
	Conditions []metav1.Condition                 `json:"conditions,omitempty"`
	Runs       agentsv1alpha1.RunCounts           `json:"runs"`
	Rejections *agentsv1alpha1.EndpointRejections `json:"rejections,omitempty"`
	Recent     []agentsv1alpha1.AgentRun          `json:"recent"`
}

func NewShowCommand(e *cli.Env) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print an endpoint's card: URL, sender setup, a sample curl that works as printed, conditions, recent invocations",
		Long: `Print an endpoint's card: its URL, what the sender must be configured with, a
sample curl for its sender type (carrying the secret, or signed with it; a
timestamped signature is valid for spec.sender.tolerance), its conditions in
words, its run counts and its last 10 invocations. The curl needs the secret:
without get on Secrets in the namespace the card says so and shows the rest.`,
		Args:              cli.ExactlyOne("endpoint name"),
		ValidArgsFunction: e.CompleteEndpoints,
		RunE: e.OnNamed(&format, func(cmd *cobra.Command, ns, name string) error {
			c, err := readCard(cmd.Context(), e, ns, name)
			if err != nil {
				return err
			}
			if format != "" {
				return terminal.PrintData(e.Out, format, c)
			}
			return c.print(e.Out, e.Now())
		}),
	}
	cli.OutputFlag(cmd, &format)
	return cmd
}

func readCard(ctx context.Context, e *cli.Env, ns, name string) (*card, error) {
	ep, err := e.Endpoint(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	c := &card{
		Namespace: ns, Name: name, Agent: ep.Spec.AgentRef.Name, Owner: ep.Spec.Owner.UserName(),
		Phase: PhaseOf(ep), URL: ep.Status.URL, Sender: ep.Spec.SenderOf(),
		Conditions: ep.Status.Conditions, Rejections: ep.Status.Rejections,
	}
	switch c.Token = senders.TokenOf(&ep.Spec); {
	case c.Token != "":
	case ep.Status.AuthMode != agentsv1alpha1.AuthNone:
		c.Secret = fmt.Sprintf("Secret %s, key %s", secrets.Location(ep), secrets.Key(ep))
	}
	c.Setup = senders.Setup(&ep.Spec, name)
	c.Payload, c.Fields = payloadOnCard(&ep.Spec)
	c.Curl, c.CurlNote = SampleCurl(ctx, e, ep)
	recent, _, _, err := runs.Recent(ctx, e, runs.Filter{Endpoint: name})
	if err != nil {
		return nil, err
	}
	c.Runs = runs.Count(recent)[client.ObjectKeyFromObject(ep)]
	c.Recent = recent[:min(recentOnCard, len(recent))]
	return c, nil
}

// SampleCurl is a curl command that makes a call as the endpoint's sender
// would, and a note on it; without the secret, only the note.
func SampleCurl(ctx context.Context, e *cli.Env, ep *agentsv1alpha1.WebhookEndpoint) (string, string) {
	if ep.Status.URL == "" {
		return "", "The endpoint has no URL yet: " + PhaseOf(ep) + "."
	}
	secret := ""
	switch {
	case ep.Spec.OIDCOf() != nil:
		secret = senders.TokenPlaceholder
	case ep.Status.AuthMode != agentsv1alpha1.AuthNone:
		var err error
		if secret, err = secrets.Of(ctx, e, ep); err != nil {
			return "", "No sample call: it needs the endpoint's secret, and " + err.Error()
		}
	}
	t := ep.Spec.SenderOf()
	d := senders.Delivery{Event: senders.DefaultEvent(&ep.Spec)}
	id := ""
	if senders.BodyCarriesID(t) || senders.NeedsDeliveryID(t) {
		id = senders.NewDeliveryID("hookrun-sample-")
	}
	body := senders.SampleBody(t, d.Event, id)
	if !senders.EventInHeader(t) {
		d.Event = ""
	}
	if senders.NeedsDeliveryID(t) {
		d.ID = id
	}
	now := e.Now()
	call, err := senders.BuildCall(&ep.Spec, secret, body, "application/json", d, now)
	if err != nil {
		return "", "No sample call: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "curl -sS -i -X POST %s \\\n", terminal.ShellQuote(ep.Status.URL))
	fmt.Fprintf(&b, "  -H %s \\\n", terminal.ShellQuote("Content-Type: "+call.ContentType))
	for _, h := range call.Headers {
		if secret == senders.TokenPlaceholder && h.Value == "Bearer "+senders.TokenPlaceholder {
			fmt.Fprintf(&b, "  -H \"%s: %s\" \\\n", h.Name, h.Value) // the shell puts $TOKEN in
			continue
		}
		fmt.Fprintf(&b, "  -H %s \\\n", terminal.ShellQuote(h.Name+": "+h.Value))
	}
	fmt.Fprintf(&b, "  --data-binary %s", terminal.ShellQuote(string(call.Body)))
	var notes []string
	if !call.Expires.IsZero() {
		notes = append(notes, fmt.Sprintf("Its signed timestamp is accepted until %s (%s from now); run show again for a fresh one.",
			call.Expires.UTC().Format(time.RFC3339), call.Expires.Sub(now).Round(time.Second)))
	}
	if id != "" {
		notes = append(notes, "It carries delivery ID "+id+": sent again, it is answered with the first run's id and starts nothing.")
	}
	if secret == senders.TokenPlaceholder {
		notes = append(notes, senders.TokenHowTo(ep))
	} else if secret != "" && !t.Signed() {
		notes = append(notes, "It carries the secret: treat it as one.")
	}
	return b.String(), strings.Join(notes, " ")
}

func (c *card) print(out io.Writer, now time.Time) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "Endpoint:\t%s/%s\n", terminal.PrintableLine(c.Namespace), terminal.PrintableLine(c.Name))
	fmt.Fprintf(w, "Agent:\t%s\n", terminal.PrintableLine(c.Agent))
	fmt.Fprintf(w, "Owner:\t%s\n", terminal.PrintableLine(c.Owner))
	fmt.Fprintf(w, "Phase:\t%s\n", terminal.PrintableLine(c.Phase))
	fmt.Fprintf(w, "URL:\t%s\n", terminal.PrintableLine(terminal.OrNone(c.URL)))
	fmt.Fprintf(w, "Sender:\t%s\n", terminal.PrintableLine(string(c.Sender)))
	for _, line := range c.Setup {
		fmt.Fprintf(w, "\t%s\n", terminal.PrintableLine(line))
	}
	c.printPayload(w)
	switch {
	case c.Token != "":
		fmt.Fprintf(w, "Secret:\tnone: calls carry %s\n", terminal.PrintableLine(c.Token))
	case c.Secret != "":
		fmt.Fprintf(w, "Secret:\tkubectl hookrun secret %s (in %s)\n", terminal.PrintableLine(c.Name), terminal.PrintableLine(c.Secret))
	default:
		fmt.Fprintf(w, "Secret:\tnone: anyone with the URL can call it\n")
	}
	counts := fmt.Sprintf("%d total, %d queued or running", c.Runs.Total, c.Runs.Running)
	if c.Runs.LastRunTime != nil {
		counts += ", last received " + terminal.Age(c.Runs.LastRunTime, now)
	}
	fmt.Fprintf(w, "Runs:\t%s\n", counts)
	if r := c.Rejections; r != nil && len(r.Counts) > 0 {
		var parts []string
		for _, rc := range r.Counts {
			parts = append(parts, fmt.Sprintf("%s %d", terminal.PrintableLine(rc.Code), rc.Count))
		}
		fmt.Fprintf(w, "Refused:\t%s in the last one to two hours (the latest %s)\n", strings.Join(parts, ", "), terminal.Age(r.LastRejectionTime, now))
	}
	if e := c.Rejections; e != nil && e.LastEvaluationError != nil {
		le := e.LastEvaluationError
		fmt.Fprintf(w, "Last %s error:\t%s (%s)\n", strings.ToLower(string(le.Expression)), terminal.PrintableLine(le.Message), terminal.Age(&le.Time, now))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nSample call:")
	if c.Curl != "" {
		for _, line := range strings.Split(c.Curl, "\n") {
			fmt.Fprintln(out, "  "+line)
		}
	}
	if c.CurlNote != "" {
		fmt.Fprintln(out, "  "+terminal.PrintableLine(c.CurlNote))
	}
	fmt.Fprintln(out, "\nConditions:")
	w = tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "  TYPE\tSTATUS\tREASON\tMESSAGE")
	for _, cond := range c.Conditions {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", terminal.PrintableLine(cond.Type), terminal.PrintableLine(string(cond.Status)), terminal.PrintableLine(cond.Reason), terminal.OneLine(cond.Message, 160))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nRecent invocations (newest first; kubectl hookrun runs %s lists more):\n", terminal.PrintableLine(c.Name))
	if len(c.Recent) == 0 {
		fmt.Fprintln(out, "  none yet")
		return nil
	}
	var b strings.Builder
	if err := (runs.Table{Now: func() time.Time { return now }}).Print(&b, c.Recent, true); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		fmt.Fprintln(out, "  "+line)
	}
	return nil
}
