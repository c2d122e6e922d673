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
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/runs"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/senders"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// Redeliver: a past run's stored body sent again through the receiver, one
// run (followed), or an endpoint's runs in bulk (redeliverAll).

func NewRedeliverCommand(e *cli.Env) *cobra.Command {
	var o Options
	var b bulkOptions
	cmd := &cobra.Command{
		Use:   "redeliver RUN | --endpoint NAME [--state STATE] [--since DURATION] [--yes]",
		Short: "Send past runs' stored payloads again through the receiver: one run, and follow it, or an endpoint's runs",
		Long: `Send the body a run received, stored while its payload is retained, to its endpoint
again, as the endpoint's sender would, with the event type the run recorded and a
new delivery ID (a sender that carries the delivery ID in the body, Stripe,
Slack or a CloudEvent in structured mode, repeats it: while the first run exists
the receiver answers with that run's id and starts nothing). Every check of the receiver applies. Needs get on
Secrets in the namespace (the payload and the endpoint's secret are Secrets).

With --endpoint instead of a run: the endpoint's runs in --state (default error)
received within --since, oldest first. Without --yes it lists them and sends
nothing; with --yes it sends each, printing its new runId, and stops at the first
429 or 503, saying how many are left and when to try again. Each is sent with the
delivery ID hookrun-redeliver-<RUN>: run again (after a 429, say), the command
skips the runs it sent before and sends only the resends that failed too.`,
		Example: `  kubectl hookrun redeliver github-issues-01jd5v3x7q9m2k8w4r6t0y1z2a
  kubectl hookrun redeliver --endpoint github-issues --since 2h
  kubectl hookrun redeliver --endpoint github-issues --since 2h --yes`,
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case b.endpoint == "" && len(args) != 1:
				return cli.Usage(fmt.Errorf("expected one argument, the run name (the runId), or --endpoint; got %d arguments", len(args)))
			case b.endpoint != "" && len(args) != 0:
				return cli.Usage(errors.New("name either a run or --endpoint, not both"))
			}
			return nil
		},
		ValidArgsFunction: runs.Completion(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckOutput(o.format); err != nil {
				return err
			}
			ns, err := e.Namespace()
			if err != nil {
				return err
			}
			if b.endpoint != "" {
				return redeliverAll(cmd.Context(), e, ns, b, o)
			}
			if b.changed(cmd) {
				return cli.Usage(errors.New("--state, --since and --yes go with --endpoint"))
			}
			return Redeliver(cmd.Context(), e, ns, args[0], o)
		},
	}
	o.addFlags(cmd)
	b.addFlags(cmd, e)
	return cmd
}

// errPayloadGone: the run's payload is no longer stored.
var errPayloadGone = errors.New("its payload is no longer retained (the operator deletes payloads after --payload-ttl and with runs beyond --run-history-limit), so there is nothing to redeliver")

func Redeliver(ctx context.Context, e *cli.Env, ns, name string, o Options) error {
	if err := e.Connect(); err != nil {
		return err
	}
	run := &agentsv1alpha1.AgentRun{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("run %q not found in namespace %s: %w", name, ns, errPayloadGone)
		}
		return cli.Refused(err, fmt.Sprintf("read run %s/%s", ns, name), cli.RoleRead)
	}
	body, err := StoredBody(ctx, e, run)
	if err != nil {
		return err
	}
	ep, err := e.Endpoint(ctx, ns, run.Spec.EndpointRef.Name)
	if err != nil {
		return fmt.Errorf("run %s/%s came through endpoint %s: %w", ns, name, run.Spec.EndpointRef.Name, err)
	}
	d := redelivery(ep, run, senders.NewDeliveryID("hookrun-redeliver-"))
	fmt.Fprintf(e.ErrOut, "Redelivering the payload of run %s (%d bytes, received %s).\n", name, len(body), terminal.Age(&run.Spec.ReceivedAt, e.Now()))
	return deliver(ctx, e, ep, body, run.Spec.Payload.ContentType, d, o)
}

// StoredBody reads the body the receiver stored for run.
func StoredBody(ctx context.Context, e *cli.Env, run *agentsv1alpha1.AgentRun) ([]byte, error) {
	ns, name := run.Namespace, run.Name
	if run.Spec.Payload == nil {
		return nil, fmt.Errorf("run %s/%s was %s (%s): the receiver stored no payload for it, so there is nothing to redeliver",
			ns, name, run.EffectiveState(), terminal.OneLine(run.Status.Message, 200))
	}
	payload := &corev1.Secret{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: run.Spec.Payload.SecretName}, payload); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("run %s/%s: %w", ns, name, errPayloadGone)
		}
		return nil, cli.Refused(err, fmt.Sprintf("read the payload of run %s/%s (Secret %s)", ns, name, run.Spec.Payload.SecretName), cli.RoleSecrets)
	}
	body, ok := payload.Data[agentsv1alpha1.PayloadBodyKey]
	if !ok {
		return nil, fmt.Errorf("run %s/%s: %w", ns, name, errPayloadGone)
	}
	return body, nil
}

// redelivery is the delivery that sends run's payload again through ep:
// the event (and CloudEvents source) the run recorded, and id as the
// delivery ID where the sender type names it outside the body.
func redelivery(ep *agentsv1alpha1.WebhookEndpoint, run *agentsv1alpha1.AgentRun, id string) senders.Delivery {
	var d senders.Delivery
	if senders.EventInHeader(ep.Spec.SenderOf()) && run.Spec.Sender != nil {
		d.Event, d.Source = run.Spec.Sender.Event, run.Spec.Sender.Source
	}
	if !senders.BodyCarriesID(ep.Spec.SenderOf()) {
		d.ID = id
	}
	return d
}
