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
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/runs"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/senders"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// kubectl hookrun redeliver --endpoint NAME: an endpoint's runs sent again,
// after an outage, oldest first; a dry run unless --yes.

// finishedStates are the states of runs that may be sent again in bulk.
var finishedStates = []string{string(agentsv1alpha1.RunError), string(agentsv1alpha1.RunSuccess), string(agentsv1alpha1.RunSkipped)}

// bulkOptions are the flags of redeliver --endpoint.
type bulkOptions struct {
	endpoint string
	states   []string
	since    time.Duration
	yes      bool
}

func (b *bulkOptions) addFlags(cmd *cobra.Command, e *cli.Env) {
	fs := cmd.Flags()
	fs.StringVar(&b.endpoint, "endpoint", "", "Redeliver the runs of this endpoint (instead of one run): a list unless --yes.")
	fs.StringSliceVar(&b.states, "state", []string{string(agentsv1alpha1.RunError)}, "With --endpoint: the runs in these states ("+strings.Join(finishedStates, ", ")+").")
	fs.DurationVar(&b.since, "since", 0, "With --endpoint: only runs received within this duration, for example 2h (0: every run retained).")
	fs.BoolVar(&b.yes, "yes", false, "With --endpoint: send them; without it, list what would be sent and send nothing.")
	_ = cmd.RegisterFlagCompletionFunc("endpoint", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return e.CompleteEndpoints(cmd, nil, toComplete)
	})
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(finishedStates, cobra.ShellCompDirectiveNoFileComp))
}

// changed tells whether a flag that goes only with --endpoint was given.
func (b *bulkOptions) changed(cmd *cobra.Command) bool {
	fs := cmd.Flags()
	return fs.Changed("state") || fs.Changed("since") || fs.Changed("yes")
}

// bulkDeliveryPrefix starts the delivery ID of a run sent again in bulk; the
// run's name follows, so sending it again while its new run exists is
// answered with that run.
const bulkDeliveryPrefix = "hookrun-redeliver-"

// redeliverAll lists the endpoint's runs b selects, oldest first, and with
// b.yes sends each again: a line per run with its new runId, stopping at
// the first 429.
func redeliverAll(ctx context.Context, e *cli.Env, ns string, b bulkOptions, o Options) error {
	for _, s := range b.states {
		if !slices.Contains(finishedStates, s) {
			return cli.Usage(fmt.Errorf("--state %q: runs that ended can be sent again, in state %s (a queued or running run would reach the agent twice)", s, strings.Join(finishedStates, ", ")))
		}
	}
	if b.since < 0 {
		return cli.Usage(fmt.Errorf("--since must not be negative"))
	}
	if o.format != "" {
		return cli.Usage(fmt.Errorf("-o: redeliver --endpoint prints lines, not %s", o.format))
	}
	ep, err := e.Endpoint(ctx, ns, b.endpoint)
	if err != nil {
		return err
	}
	all, _, _, err := runs.Recent(ctx, e, runs.Filter{Endpoint: b.endpoint})
	if err != nil {
		return err
	}
	// The runs sent again before, by the run they resend: their delivery
	// ID names it.
	resentAs := map[string]string{}
	for i := range all {
		if s := all[i].Spec.Sender; s != nil && strings.HasPrefix(s.DeliveryID, bulkDeliveryPrefix) {
			resentAs[strings.TrimPrefix(s.DeliveryID, bulkDeliveryPrefix)] = all[i].Name
		}
	}
	selected := runs.Select(e, all, runs.Filter{States: b.states, Since: b.since})
	slices.Reverse(selected) // oldest first, as they were received
	which := "in state " + strings.Join(b.states, ", ")
	if b.since > 0 {
		which += ", received within " + b.since.String()
	}
	if len(selected) == 0 {
		fmt.Fprintf(e.Out, "No run of endpoint %s/%s %s.\n", ns, b.endpoint, which)
		return nil
	}
	if !b.yes {
		fmt.Fprintf(e.Out, "%d runs of endpoint %s/%s %s would be sent again, oldest first:\n", len(selected), ns, b.endpoint, which)
		for i := range selected {
			r := &selected[i]
			note := payloadSize(r)
			if again, ok := resentAs[r.Name]; ok {
				note = "sent again before, as run " + terminal.PrintableLine(again) + ": skipped"
			}
			fmt.Fprintf(e.Out, "  %s  %s  received %s  %s\n", terminal.PrintableLine(r.Name), r.EffectiveState(), terminal.Age(&r.Spec.ReceivedAt, e.Now()), note)
		}
		fmt.Fprintln(e.Out, "Nothing was sent: add --yes to send them.")
		return nil
	}
	secret, err := callCredential(ctx, e, ep, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "Sending %d runs of endpoint %s/%s %s again, oldest first:\n", len(selected), ns, b.endpoint, which)
	var sent, before, skipped int
	for i := range selected {
		r := &selected[i]
		prefix := fmt.Sprintf("[%d/%d] %s", i+1, len(selected), terminal.PrintableLine(r.Name))
		if again, ok := resentAs[r.Name]; ok {
			// Sent again before: sending it now would be answered with
			// that run, and take a call from the endpoint's rate limit.
			fmt.Fprintf(e.Out, "%s: sent again before, as run %s\n", prefix, terminal.PrintableLine(again))
			before++
			continue
		}
		body, err := StoredBody(ctx, e, r)
		if err != nil {
			fmt.Fprintf(e.Out, "%s: skipped: %v\n", prefix, err)
			skipped++
			continue
		}
		a, err := post(ctx, e, ep, secret, body, r.Spec.Payload.ContentType, redelivery(ep, r, bulkDeliveryPrefix+r.Name), o.ReceiverURL, nil)
		if err != nil {
			return fmt.Errorf("%s: %w (%d sent, %d left)", prefix, err, sent, len(selected)-i)
		}
		switch a.status {
		case http.StatusAccepted:
			if a.runID == r.Name {
				// A sender type whose delivery ID is in the body:
				// the receiver answered with this very run.
				fmt.Fprintf(e.Out, "%s: not started again: its delivery ID is in the body, and the receiver answered with this run\n", prefix)
				skipped++
				continue
			}
			fmt.Fprintf(e.Out, "%s: 202, run %s\n", prefix, terminal.PrintableLine(a.runID))
			sent++
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			left := len(selected) - i
			fmt.Fprintf(e.Out, "%s: %s %s\n", prefix, terminal.Printable(a.statusText), terminal.Printable(string(a.answer)))
			return fmt.Errorf("%w: stopped at the first %d: %d sent, %d left; try again in %s (the same command skips the runs sent)",
				errRunFailed, a.status, sent, left, retryIn(a.retryAfter))
		default:
			fmt.Fprintf(e.Out, "%s: not sent again: %v\n", prefix, judgeAnswer(e, a.status, a.answer, senders.Delivery{}))
			skipped++
		}
	}
	fmt.Fprintf(e.Out, "Done: %d sent, %d sent before, %d not sent.\n", sent, before, skipped)
	if skipped > 0 {
		return fmt.Errorf("%w: %d of %d runs were not sent again", errRunFailed, skipped, len(selected))
	}
	return nil
}

// payloadSize is the size of the body the run stored, for the list.
func payloadSize(r *agentsv1alpha1.AgentRun) string {
	if r.Spec.Payload == nil {
		return "no payload"
	}
	return fmt.Sprintf("%d bytes", r.Spec.Payload.Bytes)
}

// retryIn reads a Retry-After of seconds.
func retryIn(retryAfter string) string {
	if retryAfter == "" {
		return "a minute"
	}
	return terminal.PrintableLine(retryAfter) + " s"
}
