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
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/runs"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// follow waits until the run ends (or timeout passes, when not 0), printing
// its states for people. A run received before the call was sent is a
// duplicate delivery's first run: nothing new started.
func follow(ctx context.Context, e *cli.Env, ns, name string, human bool, timeout time.Duration, sent time.Time) (*agentsv1alpha1.AgentRun, error) {
	if human {
		fmt.Fprintf(e.ErrOut, "Following run %s until it ends (kubectl hookrun runs shows it later)...\n", name)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var run *agentsv1alpha1.AgentRun
	var last agentsv1alpha1.RunState
	err := wait.PollUntilContextCancel(ctx, cli.PollInterval, true, func(ctx context.Context) (bool, error) {
		cur := &agentsv1alpha1.AgentRun{}
		if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cur); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil // the receiver stores the run before it answers; a cache may lag
			}
			return false, cli.Refused(err, fmt.Sprintf("read run %s/%s", ns, name), cli.RoleRead)
		}
		run = cur
		// Progress goes to standard error: which states a poll sees
		// depends on timing; the outcome on standard output does not.
		if s := cur.EffectiveState(); s != last && human {
			last = s
			fmt.Fprintf(e.ErrOut, "  %s%s\n", s, stateDetail(cur))
		}
		return cur.EffectiveState().IsFinished(), nil
	})
	if err != nil {
		state := "not found"
		if run != nil {
			state = string(run.EffectiveState())
		}
		return run, fmt.Errorf("stopped following run %s/%s while it is %s: %w", ns, name, state, err)
	}
	run.ManagedFields = nil
	if human {
		printOutcome(e.Out, run)
	}
	// receivedAt has second precision.
	if run.Spec.ReceivedAt.Time.Before(sent.Truncate(time.Second).Add(-time.Second)) {
		return run, fmt.Errorf("%w: the receiver took the call for a duplicate delivery (its delivery ID was accepted %s as run %s/%s) and started nothing",
			errRunFailed, terminal.Age(&run.Spec.ReceivedAt, e.Now()), ns, name)
	}
	if run.EffectiveState() != agentsv1alpha1.RunSuccess {
		return run, fmt.Errorf("%w: run %s/%s ended %s: %s", errRunFailed, ns, name, run.EffectiveState(), terminal.OneLine(run.Status.Message, 500))
	}
	return run, nil
}

func stateDetail(r *agentsv1alpha1.AgentRun) string {
	switch r.EffectiveState() {
	case agentsv1alpha1.RunRunning:
		return " (thread " + runs.ThreadOf(r) + ")"
	case agentsv1alpha1.RunSuccess, agentsv1alpha1.RunError:
		if r.Status.Duration != "" {
			return " after " + terminal.PrintableLine(r.Status.Duration)
		}
	}
	return ""
}

func printOutcome(out io.Writer, r *agentsv1alpha1.AgentRun) {
	fmt.Fprintf(out, "Run %s: %s", terminal.PrintableLine(r.Name), terminal.PrintableLine(string(r.EffectiveState())))
	if r.Status.Duration != "" {
		fmt.Fprintf(out, " in %s", terminal.PrintableLine(r.Status.Duration))
	}
	fmt.Fprintf(out, ", thread %s\n", runs.ThreadOf(r))
	if r.Status.Message != "" {
		fmt.Fprintln(out, "Message:")
		for _, line := range strings.Split(strings.TrimRight(terminal.Printable(r.Status.Message), "\n"), "\n") {
			fmt.Fprintln(out, "  "+line)
		}
	}
	if r.Status.Output != "" {
		fmt.Fprintln(out, "Output:")
		for _, line := range strings.Split(strings.TrimRight(terminal.Printable(r.Status.Output), "\n"), "\n") {
			fmt.Fprintln(out, "  "+line)
		}
	}
}
