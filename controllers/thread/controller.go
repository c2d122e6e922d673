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

package thread

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/status"
)

// Reconciler reports whether a thread's Agent exists and derives
// from the thread's runs its A2A context and latest run. The thread carries
// no owner reference to its Agent: the Agent's finalizer deletes its threads
// (package agent). It is the only writer of thread status: what it
// shows is computed again from the runs on every look, so a write that
// fails, or an operator that dies before making it, leaves nothing wrong
// for long.
type Reconciler struct {
	client.Client
}

// threadSummary is the AgentThread's Ready, Reconciling and Stalled; agent
// is nil when it does not exist (Stalled). A thread of an archived Agent is
// as asked: Ready (kstatus Current) with reason AgentArchived.
func threadSummary(th *agentsv1alpha1.AgentThread, agent *agentsv1alpha1.Agent) status.Summary {
	if agent == nil {
		return status.Stalled(agentsv1alpha1.ReasonAgentNotFound,
			fmt.Sprintf("Agent %q does not exist in this namespace; create it (spec.agentRef cannot change)", th.Spec.AgentRef.Name))
	}
	if agent.Spec.Archived {
		return status.Current(agentsv1alpha1.ReasonAgentArchived,
			fmt.Sprintf("Agent %q is archived; no runs are appended until it is unarchived", agent.Name))
	}
	return status.Current(agentsv1alpha1.ReasonAvailable, fmt.Sprintf("Thread of Agent %q", agent.Name))
}

// Reconcile sets the thread's Ready condition and context.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	th := &agentsv1alpha1.AgentThread{}
	if err := r.Get(ctx, req.NamespacedName, th); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := th.DeepCopy()
	var err error
	agent := &agentsv1alpha1.Agent{}
	switch getErr := r.Get(ctx, client.ObjectKey{Namespace: th.Namespace, Name: th.Spec.AgentRef.Name}, agent); {
	case apierrors.IsNotFound(getErr):
		agent = nil
	case getErr != nil:
		err = fmt.Errorf("reading Agent %s: %w", th.Spec.AgentRef.Name, getErr)
	}
	if derr := r.deriveFromRuns(ctx, th); derr != nil {
		err = errors.Join(err, derr)
	}
	sum := threadSummary(th, agent)
	if err != nil {
		sum = status.ReconcileFailed(err)
	} else {
		th.Status.ObservedGeneration = th.Generation
	}
	status.SetSummary(&th.Status.Conditions, sum, th.Generation)
	return ctrl.Result{}, errors.Join(err, status.PatchIfChanged(ctx, r.Client, before, th, &before.Status, &th.Status))
}

// deriveFromRuns sets the thread's context and latest run from its runs. A
// thread whose runs are all gone keeps what it showed; an attached context
// (spec.contextId) is its context until a run has one.
func (r *Reconciler) deriveFromRuns(ctx context.Context, th *agentsv1alpha1.AgentThread) error {
	runs, err := cached.RunsOfThread(ctx, r.Client, th)
	if err != nil {
		return err
	}
	contextID, last := agentsv1alpha1.ThreadFromRuns(runs)
	switch {
	case contextID != "":
		th.Status.ContextID = contextID
	case th.Status.ContextID == "":
		th.Status.ContextID = th.Spec.ContextID
	}
	if last != "" {
		th.Status.LastRunName = last
	}
	return nil
}

// SetupWithManager registers the reconciler: Agent changes re-check their
// threads, and a run appended to a thread, given a context, finished or
// deleted updates it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&agentsv1alpha1.AgentThread{}).
		Named("agentthread").
		Watches(&agentsv1alpha1.Agent{},
			handler.EnqueueRequestsFromMapFunc(cached.MapByIndex(r.Client, &agentsv1alpha1.AgentThreadList{}, cached.IndexThreadAgent)),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&agentsv1alpha1.AgentRun{}, handler.EnqueueRequestsFromMapFunc(threadOfRun), builder.WithPredicates(threadMatters)).
		Complete(r)
}

// threadOfRun maps a run to the thread it is appended to.
func threadOfRun(_ context.Context, o client.Object) []reconcile.Request {
	run, ok := o.(*agentsv1alpha1.AgentRun)
	if !ok || agentsv1alpha1.ThreadKey(run) == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: run.Namespace, Name: agentsv1alpha1.ThreadKey(run)}}}
}

// threadMatters passes the run events that change what a thread derives:
// a run's state or context changing, and a run going away.
var threadMatters = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return !cached.IsRunIn(e.Object, agentsv1alpha1.RunQueued) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*agentsv1alpha1.AgentRun)
		run, ok2 := e.ObjectNew.(*agentsv1alpha1.AgentRun)
		return ok1 && ok2 && (old.EffectiveState() != run.EffectiveState() || agentsv1alpha1.ContextOf(&old.Status) != agentsv1alpha1.ContextOf(&run.Status))
	},
	DeleteFunc: func(event.DeleteEvent) bool { return true },
}
