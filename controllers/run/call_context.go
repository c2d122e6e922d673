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

package run

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The deadline of one A2A call: --a2a-call-timeout, cut by the time the
// run has left.

// DefaultCallTimeout bounds one A2A HTTP call (a send, a poll or a cancel)
// when --a2a-call-timeout does not say otherwise.
const DefaultCallTimeout = 30 * time.Second

// waitForCall is the result of a step that waits for its Agent's or its
// namespace's share: it is woken when its turn comes, and looks again after
// a call timeout in any case (its run may time out meanwhile).
func (r *ExecutionReconciler) waitForCall(ctx context.Context) ctrl.Result {
	ctrl.LoggerFrom(ctx).V(1).Info("the Agent's calls are at its share of the dispatch workers, or its namespace's are at theirs; waiting",
		"share", r.calls.share, "namespaceShare", r.calls.namespaceShare)
	return ctrl.Result{RequeueAfter: r.callTimeout()}
}

// callTimeout is --a2a-call-timeout.
func (r *ExecutionReconciler) callTimeout() time.Duration {
	if r.CallTimeout > 0 {
		return r.CallTimeout
	}
	return DefaultCallTimeout
}

// callContext bounds one A2A call by CallTimeout and by the time the run has
// left, so a slow agent holds a worker no longer than either.
func (r *ExecutionReconciler) callContext(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) (context.Context, context.CancelFunc) {
	d := r.callTimeout()
	if run.Status.StartedAt != nil {
		d = min(d, runTimeout(agent)-now.Sub(run.Status.StartedAt.Time))
	}
	return context.WithTimeout(ctx, max(d, time.Second))
}
