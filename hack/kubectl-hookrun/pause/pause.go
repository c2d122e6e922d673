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

package pause

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/endpoints"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

func NewCommand(e *cli.Env, pause bool) *cobra.Command {
	var takeOwnership bool
	cmd := &cobra.Command{
		Use:   "pause NAME",
		Short: "Pause an endpoint: calls are answered 422, URL, secret and history are kept",
		Long: `Pause an endpoint (spec.paused: true) and wait until hookrun has paused it: calls
are then answered 422 endpoint_paused; its URL, secret and history are kept.
Only the endpoint's owner may pause it.`,
		Args:              cli.ExactlyOne("endpoint name"),
		ValidArgsFunction: e.CompleteEndpoints,
		RunE: e.OnNamed(nil, func(cmd *cobra.Command, ns, name string) error {
			return setPaused(cmd.Context(), e, ns, name, pause, takeOwnership)
		}),
	}
	if !pause {
		cmd.Use = "resume NAME"
		cmd.Short = "Resume a paused endpoint (--take-ownership: take over one whose owner left)"
		cmd.Long = `Resume an endpoint (spec.paused: false) and wait until it accepts calls again.
Only the endpoint's owner may resume it.

An endpoint paused with reason OwnerNotMember (its owner may no longer trigger
its Agent) resumes when the owner is a member again, or when another member of
the Agent takes ownership: --take-ownership sets spec.owner to you, and runs
then act with your rights.`
		cmd.Flags().BoolVar(&takeOwnership, "take-ownership", false,
			"Become the endpoint's owner; allowed only while it is paused with reason OwnerNotMember and you may trigger its Agent.")
	}
	return cmd
}

// Request sets spec.paused (and with takeOwnership, the owner) and
// returns the endpoint as it was and the verb for what was asked; it does
// not wait for the operator (kubectl hookrun ui shows the change live).
func Request(ctx context.Context, e *cli.Env, ns, name string, pause, takeOwnership bool) (*agentsv1alpha1.WebhookEndpoint, string, error) {
	ep, err := e.Endpoint(ctx, ns, name)
	if err != nil {
		return nil, "", err
	}
	ownerLeft := ep.Status.PauseReason == agentsv1alpha1.PauseReasonOwnerNotMember
	if takeOwnership && !ownerLeft {
		return nil, "", fmt.Errorf("--take-ownership applies only while an endpoint is paused with reason OwnerNotMember; %s/%s is %s", ns, name, endpoints.PhaseOf(ep))
	}
	if !pause && ownerLeft && !takeOwnership {
		if ep.Spec.Paused {
			if err := e.PatchSpec(ctx, ep, map[string]any{"paused": false}); err != nil {
				return nil, "", cli.Refused(err, fmt.Sprintf("resume endpoint %s/%s", ns, name), cli.RoleMember)
			}
		}
		return nil, "", fmt.Errorf("endpoint %s/%s stays paused: its owner (%s) may no longer trigger Agent %s. "+
			"It resumes when the owner is a member again, or when another member takes ownership: kubectl hookrun resume %s --take-ownership",
			ns, name, terminal.PrintableLine(ep.Spec.Owner.UserName()), terminal.PrintableLine(ep.Spec.AgentRef.Name), name)
	}
	spec := map[string]any{"paused": pause}
	verb := "pause"
	if !pause {
		verb = "resume"
	}
	if takeOwnership {
		me, err := e.WhoAmI(ctx)
		if err != nil {
			return nil, "", err
		}
		// The admission policy sets the groups to the requester's.
		spec["owner"] = map[string]any{"user": me, "groups": nil}
		verb = "take ownership of"
	}
	if err := e.PatchSpec(ctx, ep, spec); err != nil {
		return nil, "", cli.Refused(err, fmt.Sprintf("%s endpoint %s/%s", verb, ns, name), cli.RoleMember)
	}
	return ep, verb, nil
}

func setPaused(ctx context.Context, e *cli.Env, ns, name string, pause, takeOwnership bool) error {
	ep, verb, err := Request(ctx, e, ns, name, pause, takeOwnership)
	if err != nil {
		return err
	}
	generation := ep.Generation
	err = e.WaitFor(ctx, func(ctx context.Context) (bool, error) {
		cur, err := e.Endpoint(ctx, ns, name)
		if err != nil {
			return false, err
		}
		ep = cur
		paused := cur.Status.Phase == agentsv1alpha1.EndpointPaused
		return cur.Status.ObservedGeneration >= generation && paused == pause, nil
	})
	if err != nil {
		return fmt.Errorf("asked to %s endpoint %s/%s, but it is still %s after %s (kubectl describe webhookendpoint %s shows why)",
			verb, ns, name, endpoints.PhaseOf(ep), e.Timeout, name)
	}
	if pause {
		fmt.Fprintf(e.Out, "Endpoint %s/%s is paused: calls are answered 422 endpoint_paused; its URL, secret and history are kept.\nResume it with: kubectl hookrun resume %s\n", ns, name, name)
		return nil
	}
	if takeOwnership {
		fmt.Fprintf(e.Out, "You (%s) own endpoint %s/%s now; its runs act with your rights.\n", terminal.PrintableLine(ep.Spec.Owner.UserName()), ns, name)
	}
	if phase := endpoints.PhaseOf(ep); phase != string(agentsv1alpha1.EndpointActive) {
		fmt.Fprintf(e.Out, "Endpoint %s/%s is resumed, but it is %s (kubectl hookrun show %s says why).\n", ns, name, terminal.PrintableLine(phase), name)
		return nil
	}
	fmt.Fprintf(e.Out, "Endpoint %s/%s is Active: it accepts calls at %s\n", ns, name, terminal.PrintableLine(ep.Status.URL))
	return nil
}
