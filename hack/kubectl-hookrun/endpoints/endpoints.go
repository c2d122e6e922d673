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
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

func NewListCommand(e *cli.Env) *cobra.Command {
	var all bool
	var format string
	cmd := &cobra.Command{
		Use:     "endpoints",
		Aliases: []string{"endpoint", "ep", "ls"},
		Short:   "List webhook endpoints: agent, sender, phase (and why), runs, last run, URL",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.CheckOutput(format); err != nil {
				return err
			}
			return listEndpoints(cmd.Context(), e, all, format)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "List the endpoints of every namespace.")
	cli.OutputFlag(cmd, &format)
	return cmd
}

func listEndpoints(ctx context.Context, e *cli.Env, all bool, format string) error {
	if err := e.Connect(); err != nil {
		return err
	}
	var opts []client.ListOption
	where := "in every namespace"
	if !all {
		ns, err := e.Namespace()
		if err != nil {
			return err
		}
		opts = append(opts, client.InNamespace(ns))
		where = "in namespace " + ns
	}
	list := &agentsv1alpha1.WebhookEndpointList{}
	if err := e.Client.List(ctx, list, opts...); err != nil {
		return cli.Refused(err, "list webhook endpoints "+where, cli.RoleRead)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := &list.Items[i], &list.Items[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	if format != "" {
		list.APIVersion, list.Kind = agentsv1alpha1.GroupVersion.String(), "WebhookEndpointList"
		return terminal.PrintData(e.Out, format, list)
	}
	if len(list.Items) == 0 {
		fmt.Fprintf(e.ErrOut, "No webhook endpoints %s.\n", where)
		return nil
	}
	w := tabwriter.NewWriter(e.Out, 0, 8, 2, ' ', 0)
	if all {
		fmt.Fprint(w, "NAMESPACE\t")
	}
	fmt.Fprintln(w, "NAME\tAGENT\tSENDER\tPHASE\tRUNS\tLAST RUN\tURL")
	now := e.Now()
	for i := range list.Items {
		ep := &list.Items[i]
		if all {
			fmt.Fprintf(w, "%s\t", terminal.PrintableLine(ep.Namespace))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", terminal.PrintableLine(ep.Name), terminal.PrintableLine(ep.Spec.AgentRef.Name),
			terminal.PrintableLine(string(ep.Spec.SenderOf())), terminal.PrintableLine(PhaseOf(ep)), runCounts(ep.Status.Runs),
			terminal.Age(ep.Status.Runs.LastRunTime, now), terminal.PrintableLine(terminal.OrNone(ep.Status.URL)))
	}
	return w.Flush()
}

// PhaseOf is the endpoint's phase and, when it takes no calls, why.
func PhaseOf(ep *agentsv1alpha1.WebhookEndpoint) string {
	ready := meta.FindStatusCondition(ep.Status.Conditions, agentsv1alpha1.ConditionReady)
	switch {
	case ready == nil:
		return "Pending"
	case ep.Status.Phase == agentsv1alpha1.EndpointPaused && ep.Status.PauseReason == agentsv1alpha1.PauseReasonPaused:
		return "Paused (by owner)"
	case ep.Status.Phase == agentsv1alpha1.EndpointPaused:
		return fmt.Sprintf("Paused (%s)", ep.Status.PauseReason)
	case ready.Status != metav1.ConditionTrue:
		return fmt.Sprintf("NotReady (%s)", ready.Reason)
	case ready.Reason == agentsv1alpha1.ReasonAgentArchived:
		return "Refusing (AgentArchived)"
	}
	return string(agentsv1alpha1.EndpointActive)
}

func runCounts(r agentsv1alpha1.RunCounts) string {
	if r.Running > 0 {
		return fmt.Sprintf("%d (%d in progress)", r.Total, r.Running)
	}
	return fmt.Sprint(r.Total)
}
