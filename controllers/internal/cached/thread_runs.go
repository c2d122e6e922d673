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

package cached

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// A thread is derived from its runs: which runs were appended to it (and not
// to an earlier thread of the same name), and what its status says of them.
// Admission decides a run's A2A context from them; the thread reconciler
// writes the thread's status from them.

// RunsOfThread lists the runs appended to th (from the cache). A run
// started before th was created was appended to an earlier thread of the
// same name, and is left out; a run queued before and started after counts.
func RunsOfThread(ctx context.Context, c client.Reader, th *agentsv1alpha1.AgentThread) ([]agentsv1alpha1.AgentRun, error) {
	runs := &agentsv1alpha1.AgentRunList{}
	if err := c.List(ctx, runs, client.InNamespace(th.Namespace), client.MatchingFields{IndexRunThread: th.Name}); err != nil {
		return nil, fmt.Errorf("listing the runs of AgentThread %s: %w", th.Name, err)
	}
	out := runs.Items[:0]
	for _, run := range runs.Items {
		if appendedTo(&run, th) {
			out = append(out, run)
		}
	}
	return out, nil
}

// appendedTo tells whether run was appended to th, and not to an earlier
// thread of the same name: the run names th's UID. A run started before
// runs recorded the UID counts when it started once th existed; that
// compares the operator's clock with the API server's, so it is only the
// fallback (creation times are whole seconds, so a run of an earlier thread
// started in the second th was created counts too).
func appendedTo(run *agentsv1alpha1.AgentRun, th *agentsv1alpha1.AgentThread) bool {
	switch {
	case run.Status.StartedAt == nil || run.Status.Thread == nil:
		return false
	case run.Status.Thread.UID != "":
		return run.Status.Thread.UID == string(th.UID)
	}
	return !run.Status.StartedAt.Truncate(time.Second).Before(th.CreationTimestamp.Time)
}
