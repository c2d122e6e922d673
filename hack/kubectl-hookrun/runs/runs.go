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

package runs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// Filter selects runs: of one endpoint (or all), in some states, received since.
type Filter struct {
	// All is every namespace's runs; else the namespace of -n.
	All bool
	// Endpoint is the endpoint's name; "" for every endpoint.
	Endpoint string
	// States are the states to keep; none for all.
	States []string
	// Since keeps the runs received within it; 0 for all.
	Since time.Duration
	// Limit is the most runs to keep; 0 for all.
	Limit int
}

var States = []string{
	string(agentsv1alpha1.RunQueued), string(agentsv1alpha1.RunRunning), string(agentsv1alpha1.RunSuccess),
	string(agentsv1alpha1.RunError), string(agentsv1alpha1.RunSkipped),
}

// NewCommand is `kubectl hookrun runs`.
func NewCommand(e *cli.Env) *cobra.Command {
	var f Filter
	var format string
	var watchRuns bool
	cmd := &cobra.Command{
		Use:     "runs [ENDPOINT]",
		Aliases: []string{"run", "invocations"},
		Short:   "Recent invocations, newest first: state, started, completed, duration, thread, message",
		Long: `List the recent invocations (AgentRuns) of one endpoint, or of every endpoint in the
namespace, newest first. --watch keeps printing runs as they arrive and change.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return cli.Usage(fmt.Errorf("expected at most one argument, an endpoint name; got %d", len(args)))
			}
			return nil
		},
		ValidArgsFunction: e.CompleteEndpoints,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckOutput(format); err != nil {
				return err
			}
			for _, s := range f.States {
				if !slices.Contains(States, s) {
					return cli.Usage(fmt.Errorf("--state %q: a run's state is one of %s", s, strings.Join(States, ", ")))
				}
			}
			if f.Since < 0 || f.Limit < 0 {
				return cli.Usage(fmt.Errorf("--since and --limit must not be negative"))
			}
			if len(args) == 1 {
				f.Endpoint = args[0]
			}
			return list(cmd.Context(), e, f, format, watchRuns)
		},
	}
	fs := cmd.Flags()
	fs.BoolVarP(&f.All, "all-namespaces", "A", false, "List the runs of every namespace.")
	fs.StringSliceVar(&f.States, "state", nil, "Only runs in these states ("+strings.Join(States, ", ")+"); repeat or separate with commas.")
	fs.DurationVar(&f.Since, "since", 0, "Only runs received within this duration, for example 1h.")
	fs.IntVar(&f.Limit, "limit", 20, "Print at most this many runs (0: all).")
	fs.BoolVarP(&watchRuns, "watch", "w", false, "After listing, print runs as they arrive and change, until interrupted.")
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(States, cobra.ShellCompDirectiveNoFileComp))
	cli.OutputFlag(cmd, &format)
	return cmd
}

// listOptions selects the runs of f in the user's namespace (or all).
func runListOptions(e *cli.Env, f Filter) ([]client.ListOption, string, error) {
	var opts []client.ListOption
	where := "in every namespace"
	if !f.All {
		ns, err := e.Namespace()
		if err != nil {
			return nil, "", err
		}
		opts = append(opts, client.InNamespace(ns))
		where = "in namespace " + ns
	}
	if f.Endpoint != "" {
		opts = append(opts, client.MatchingLabels{agentsv1alpha1.LabelEndpoint: f.Endpoint})
		where = "of endpoint " + f.Endpoint + " " + where
	}
	return opts, where, nil
}

// matches tells whether run passes f's state and time filters.
func (f Filter) matches(run *agentsv1alpha1.AgentRun, now time.Time) bool {
	if len(f.States) > 0 && !slices.Contains(f.States, string(run.EffectiveState())) {
		return false
	}
	return f.Since == 0 || !run.Spec.ReceivedAt.Time.Before(now.Add(-f.Since))
}

// Recent lists the runs f selects, newest first, at most f.Limit.
func Recent(ctx context.Context, e *cli.Env, f Filter) ([]agentsv1alpha1.AgentRun, string, string, error) {
	if err := e.Connect(); err != nil {
		return nil, "", "", err
	}
	opts, where, err := runListOptions(e, f)
	if err != nil {
		return nil, "", "", err
	}
	list := &agentsv1alpha1.AgentRunList{}
	if err := e.Client.List(ctx, list, opts...); err != nil {
		return nil, "", "", cli.Refused(err, "list runs "+where, cli.RoleRead)
	}
	return Select(e, list.Items, f), where, list.ResourceVersion, nil
}

// Select is the runs f selects, newest first, at most f.Limit.
func Select(e *cli.Env, runs []agentsv1alpha1.AgentRun, f Filter) []agentsv1alpha1.AgentRun {
	now := e.Now()
	runs = slices.DeleteFunc(slices.Clone(runs), func(r agentsv1alpha1.AgentRun) bool { return !f.matches(&r, now) })
	SortNewestFirst(runs)
	for i := range runs {
		runs[i].ManagedFields = nil // as kubectl prints objects
	}
	if f.Limit > 0 && len(runs) > f.Limit {
		runs = runs[:f.Limit]
	}
	return runs
}

// Count counts runs by namespace and endpoint, as the card shows them:
// from the runs that exist now (an endpoint's status.runs may lag by a
// reconcile).
func Count(runs []agentsv1alpha1.AgentRun) map[client.ObjectKey]agentsv1alpha1.RunCounts {
	counts := map[client.ObjectKey]agentsv1alpha1.RunCounts{}
	for i := range runs {
		r := &runs[i]
		key := client.ObjectKey{Namespace: r.Namespace, Name: r.Spec.EndpointRef.Name}
		c := counts[key]
		c.Total++
		switch r.EffectiveState() {
		case agentsv1alpha1.RunQueued:
			c.Queued++
			c.Running++
		case agentsv1alpha1.RunRunning:
			c.Running++
		}
		if c.LastRunTime == nil || r.Spec.ReceivedAt.After(c.LastRunTime.Time) {
			c.LastRunTime = r.Spec.ReceivedAt.DeepCopy()
		}
		counts[key] = c
	}
	return counts
}

func SortNewestFirst(runs []agentsv1alpha1.AgentRun) {
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := &runs[i], &runs[j]
		if !a.Spec.ReceivedAt.Equal(&b.Spec.ReceivedAt) {
			return a.Spec.ReceivedAt.After(b.Spec.ReceivedAt.Time)
		}
		// receivedAt has second precision. Within a second: by the name's
		// suffix, a time-ordered ULID for calls without a delivery ID (a
		// hash of the delivery ID otherwise, in no time order).
		return nameSuffix(a.Name) > nameSuffix(b.Name)
	})
}

func list(ctx context.Context, e *cli.Env, f Filter, format string, watchRuns bool) error {
	runs, where, rv, err := Recent(ctx, e, f)
	if err != nil {
		return err
	}
	if len(runs) == 0 && f.Endpoint != "" && !f.All {
		ns, _ := e.Namespace()
		if _, err := e.Endpoint(ctx, ns, f.Endpoint); err != nil {
			return err
		}
	}
	t := Table{ShowEndpoint: f.Endpoint == "", ShowNamespace: f.All, Now: e.Now}
	switch {
	case format != "" && !watchRuns:
		list := &agentsv1alpha1.AgentRunList{Items: runs}
		list.APIVersion, list.Kind = agentsv1alpha1.GroupVersion.String(), "AgentRunList"
		return terminal.PrintData(e.Out, format, list)
	case format != "":
		for i := range runs {
			if err := terminal.PrintData(e.Out, format, &runs[i]); err != nil {
				return err
			}
		}
	case len(runs) == 0 && !watchRuns:
		fmt.Fprintf(e.ErrOut, "No runs %s.\n", where)
		return nil
	default:
		if err := t.Print(e.Out, runs, true); err != nil {
			return err
		}
	}
	if !watchRuns {
		return nil
	}
	return watchSelected(ctx, e, f, rv, func(run *agentsv1alpha1.AgentRun) error {
		if format != "" {
			return terminal.PrintData(e.Out, format, run)
		}
		return t.Print(e.Out, []agentsv1alpha1.AgentRun{*run}, false)
	})
}

// watchSelected calls show for every run f selects that is added or changes
// after resourceVersion rv, until ctx ends. A watch the API server ends
// (they time out after minutes) is opened again from the last version seen.
func watchSelected(ctx context.Context, e *cli.Env, f Filter, rv string, show func(*agentsv1alpha1.AgentRun) error) error {
	opts, where, err := runListOptions(e, f)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		w, err := e.Client.Watch(ctx, &agentsv1alpha1.AgentRunList{}, append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})...)
		if err != nil {
			return cli.Refused(err, "watch runs "+where, cli.RoleRead)
		}
		rv, err = showEvents(ctx, e, w, f, rv, show)
		w.Stop()
		if err != nil {
			return fmt.Errorf("watching runs %s: %w", where, err)
		}
	}
	return nil
}

// showEvents shows the runs of w's events until w or ctx ends, and returns
// the last resourceVersion seen.
func showEvents(ctx context.Context, e *cli.Env, w watch.Interface, f Filter, rv string, show func(*agentsv1alpha1.AgentRun) error) (string, error) {
	for {
		select {
		case <-ctx.Done():
			return rv, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, nil
			}
			run, isRun := ev.Object.(*agentsv1alpha1.AgentRun)
			if ev.Type == watch.Error || !isRun {
				// 410 Gone: the version is too old; say so rather than skip runs.
				return rv, fmt.Errorf("%w; run the command again", apierrors.FromObject(ev.Object))
			}
			rv = run.ResourceVersion
			if ev.Type == watch.Deleted || !f.matches(run, e.Now()) {
				continue
			}
			if err := show(run); err != nil {
				return rv, err
			}
		}
	}
}

// nameSuffix is what a run's name ends with after the endpoint's name.
func nameSuffix(name string) string {
	return name[strings.LastIndexByte(name, '-')+1:]
}

// Table prints runs as a table for people.
type Table struct {
	ShowEndpoint, ShowNamespace bool
	Now                         func() time.Time
}

func (t Table) Print(out io.Writer, runs []agentsv1alpha1.AgentRun, header bool) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	if header {
		if t.ShowNamespace {
			fmt.Fprint(w, "NAMESPACE\t")
		}
		fmt.Fprint(w, "RUN\t")
		if t.ShowEndpoint {
			fmt.Fprint(w, "ENDPOINT\t")
		}
		fmt.Fprintln(w, "STATE\tRECEIVED\tSTARTED\tCOMPLETED\tDURATION\tTHREAD\tMESSAGE")
	}
	now := t.Now()
	for i := range runs {
		r := &runs[i]
		if t.ShowNamespace {
			fmt.Fprintf(w, "%s\t", terminal.PrintableLine(r.Namespace))
		}
		fmt.Fprintf(w, "%s\t", terminal.PrintableLine(r.Name))
		if t.ShowEndpoint {
			fmt.Fprintf(w, "%s\t", terminal.PrintableLine(r.Spec.EndpointRef.Name))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", terminal.PrintableLine(string(r.EffectiveState())), terminal.Age(&r.Spec.ReceivedAt, now),
			terminal.Age(r.Status.StartedAt, now), terminal.Age(r.Status.CompletedAt, now), terminal.PrintableLine(terminal.OrDash(r.Status.Duration)), ThreadOf(r), terminal.OneLine(r.Status.Message, 100))
	}
	return w.Flush()
}

// ThreadOf names the thread a run worked in: its AgentThread, or a new
// thread by the start of its A2A context ID (printableLine).
func ThreadOf(r *agentsv1alpha1.AgentRun) string {
	t := r.Status.Thread
	switch {
	case t == nil:
		if ref := r.Spec.TargetThreadRef; ref != nil {
			return terminal.PrintableLine(ref.Name)
		}
		return "-"
	case t.Name != "":
		return terminal.PrintableLine(t.Name)
	case t.ContextID != "":
		return "new:" + terminal.PrintableLine(string([]rune(t.ContextID)[:min(8, len([]rune(t.ContextID)))]))
	}
	return "-"
}

// Completion completes the names of the runs in the namespace that have
// a payload to send again, newest first.
func Completion(e *cli.Env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeRuns(e, cmd, args, prefix)
	}
}

func completeRuns(e *cli.Env, cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list := &agentsv1alpha1.AgentRunList{}
	return e.CompleteNames(cmd, list, prefix, func() []string {
		SortNewestFirst(list.Items)
		names := make([]string, 0, len(list.Items))
		for _, r := range list.Items {
			if r.Spec.Payload != nil {
				names = append(names, r.Name)
			}
		}
		return names
	})
}
