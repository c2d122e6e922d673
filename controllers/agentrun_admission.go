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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// AgentAdmissionReconciler moves runs out of queued. It is keyed by Agent:
// each pass looks at all of the Agent's unfinished runs and starts those
// whose turn has come (planAdmission) or fails those that never can. It is
// the only writer of that move, and controller-runtime never reconciles one
// Agent twice at once, so it keeps no record of its own decisions: a pass
// ends once the cache shows what it wrote, and the next pass counts it.
type AgentAdmissionReconciler struct {
	client.Client
	// APIReader reads Agents and threads the cache has not seen yet, and
	// confirms a payload is missing before a run fails for it.
	APIReader client.Reader
	// Metadata is the cache's metadata-only view of Secrets: whether a
	// run's payload exists, at no API request.
	Metadata client.Reader
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// NewContextID makes A2A context IDs (UUIDs in production).
	NewContextID func() string
}

// cacheWaitTimeout bounds how long a pass waits for the cache to show its
// writes; past it the pass fails and is retried.
const cacheWaitTimeout = 10 * time.Second

// Reconcile looks at one Agent's unfinished runs.
func (r *AgentAdmissionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	agent, err := getCachedOrLive(ctx, r.Client, r.APIReader, req.NamespacedName, &agentsv1alpha1.Agent{})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading Agent %s: %w", req.Name, err)
	}
	runs := &agentsv1alpha1.AgentRunList{}
	// Read-only, so not copied: with a long queue the copies were most of the cost.
	if err := r.List(ctx, runs, client.InNamespace(req.Namespace), client.MatchingFields{indexActiveRunAgent: req.Name},
		client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the runs of Agent %s: %w", req.Name, err)
	}
	now := r.Clock.Now()
	plan := planAdmission(agent, req.Name, runs.Items, r.payloadExists(ctx), now)
	written, err := r.apply(ctx, &plan, agent, now)
	for _, w := range written {
		if werr := waitForCache(ctx, r.Client, w.key, w.shown); werr != nil {
			err = errors.Join(err, werr)
			break
		}
	}
	return result(ctrl.Result{RequeueAfter: plan.wake}, err)
}

// write is a run admission wrote, and how to tell the cache shows it.
type write struct {
	key   client.ObjectKey
	shown func(*agentsv1alpha1.AgentRun) bool
	// lookAgain is how soon the run needs another pass (no event comes).
	lookAgain time.Duration
}

// apply makes the plan's moves, failures first, and returns what it wrote.
func (r *AgentAdmissionReconciler) apply(ctx context.Context, plan *admission, agent *agentsv1alpha1.Agent, now time.Time) ([]write, error) {
	var written []write
	for _, f := range plan.fail {
		w, err := r.refuse(ctx, f, agent, now)
		if err != nil {
			return written, err
		}
		if w != nil {
			written = append(written, *w)
			plan.wake = minPositive(plan.wake, w.lookAgain)
		}
	}
	for _, q := range plan.start {
		run, err := r.start(ctx, q, agent, now)
		if err != nil {
			return written, err
		}
		written = append(written, write{key: client.ObjectKeyFromObject(run), shown: outOfQueue})
	}
	return written, nil
}

// refuse ends a run that can never start. A run whose payload is overdue is
// looked at closer: if the API server has the payload, the cache lags and
// the Secret's event comes; if not, the first time the run is only marked
// WaitingForPayload (its grace counts again from now, by this operator's
// clock), and the second time it fails.
func (r *AgentAdmissionReconciler) refuse(ctx context.Context, f refusal, agent *agentsv1alpha1.Agent, now time.Time) (*write, error) {
	key := client.ObjectKeyFromObject(f.run)
	if agentRefusal(agent, "") == "" { // the Agent is fine: the payload is overdue
		gone, err := r.payloadGone(ctx, f.run)
		if err != nil || !gone {
			return nil, err
		}
		if !waitedForPayload(f.run) {
			return &write{key, waitedForPayload, payloadGrace}, r.markWaitingForPayload(ctx, f.run, now)
		}
	}
	if _, err := r.end(ctx, f.run, f.message, now); err != nil {
		return nil, err
	}
	return &write{key: key, shown: outOfQueue}, nil
}

// markWaitingForPayload sets a queued run's Ready condition to
// WaitingForPayload, now.
func (r *AgentAdmissionReconciler) markWaitingForPayload(ctx context.Context, cached *agentsv1alpha1.AgentRun, now time.Time) error {
	run := cached.DeepCopy()
	meta.SetStatusCondition(&run.Status.Conditions, metav1.Condition{
		Type: agentsv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: agentsv1alpha1.ReasonWaitingForPayload,
		Message:            fmt.Sprintf("%s; the run fails if it does not appear within %s", missingPayload(run), payloadGrace),
		ObservedGeneration: run.Generation, LastTransitionTime: metav1.NewTime(now),
	})
	if err := r.Status().Patch(ctx, run, client.MergeFromWithOptions(cached, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("marking AgentRun %s as waiting for its payload: %w", run.Name, err)
	}
	return nil
}

// start marks a queued run running in its thread: the execution reconciler
// sends it from there. The thread's A2A context is decided here, as the
// run's turn in its thread comes.
func (r *AgentAdmissionReconciler) start(ctx context.Context, cached *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) (*agentsv1alpha1.AgentRun, error) {
	run := cached.DeepCopy()
	thread, err := r.threadFor(ctx, run, agent)
	if err != nil {
		return nil, err
	}
	if thread == nil {
		return r.end(ctx, cached, fmt.Sprintf("AgentThread %s is missing or belongs to another agent", threadKey(run)), now)
	}
	started := metav1.NewTime(now)
	run.Status.State = agentsv1alpha1.RunRunning
	run.Status.StartedAt = &started
	run.Status.Thread = thread
	if err := r.transition(ctx, cached, run); err != nil {
		return nil, err
	}
	queueLatency.Observe(now.Sub(run.Spec.ReceivedAt.Time).Seconds())
	return run, nil
}

// end fails a queued run with message.
func (r *AgentAdmissionReconciler) end(ctx context.Context, cached *agentsv1alpha1.AgentRun, message string, now time.Time) (*agentsv1alpha1.AgentRun, error) {
	run := cached.DeepCopy()
	finish(&run.Status, agentsv1alpha1.RunError, message, "", now)
	if err := r.transition(ctx, cached, run); err != nil {
		return nil, err
	}
	runEnded(r.Recorder, run)
	return run, nil
}

// transition writes a run's move out of queued with an optimistic lock: if
// the run changed since the cache read it (the receiver marked it skipped,
// it was deleted), the write fails and the pass is retried.
func (r *AgentAdmissionReconciler) transition(ctx context.Context, before, run *agentsv1alpha1.AgentRun) error {
	setRunConditions(run)
	if err := r.Status().Patch(ctx, run, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("moving AgentRun %s out of queued: %w", run.Name, err)
	}
	return nil
}

// payloadExists tells from the cache whether a run's payload Secret exists.
func (r *AgentAdmissionReconciler) payloadExists(ctx context.Context) func(*agentsv1alpha1.AgentRun) bool {
	return func(run *agentsv1alpha1.AgentRun) bool {
		s := secretMetadata(run.Namespace, run.Spec.Payload.SecretName)
		return r.Metadata.Get(ctx, client.ObjectKeyFromObject(s), s) == nil
	}
}

// payloadGone asks the API server whether a run's payload Secret is missing.
func (r *AgentAdmissionReconciler) payloadGone(ctx context.Context, run *agentsv1alpha1.AgentRun) (bool, error) {
	s := secretMetadata(run.Namespace, run.Spec.Payload.SecretName)
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s), s)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading payload Secret %s: %w", s.Name, err)
	}
	return false, nil
}

// threadFor decides the run's thread: a new context per run, or the
// AgentThread's context, which its runs carry from one to the next. It
// returns nil when the thread is missing or another Agent's.
func (r *AgentAdmissionReconciler) threadFor(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent) (*agentsv1alpha1.RunThread, error) {
	name := threadKey(run)
	if name == "" {
		t := &agentsv1alpha1.RunThread{ContextID: r.NewContextID()}
		if run.Spec.ThreadNamingHint == "" {
			t.Title = "Webhook: " + agentTitle(agent)
		}
		return t, nil
	}
	th, err := getCachedOrLive(ctx, r.Client, r.APIReader, client.ObjectKey{Namespace: run.Namespace, Name: name}, &agentsv1alpha1.AgentThread{})
	if err != nil || th == nil || th.Spec.AgentRef.Name != agent.Name {
		return nil, err
	}
	runs, err := runsOfThread(ctx, r.Client, th)
	if err != nil {
		return nil, err
	}
	contextID, _ := threadFromRuns(runs)
	for _, c := range []string{contextID, th.Status.ContextID, th.Spec.ContextID, r.NewContextID()} {
		if c != "" {
			contextID = c
			break
		}
	}
	return &agentsv1alpha1.RunThread{Name: name, ContextID: contextID, Title: th.Spec.Title}, nil
}

func agentTitle(agent *agentsv1alpha1.Agent) string {
	if agent.Spec.DisplayName != "" {
		return agent.Spec.DisplayName
	}
	return agent.Name
}

// runsOfThread lists the runs appended to th (from the cache), leaving out
// those of an earlier thread of the same name.
func runsOfThread(ctx context.Context, c client.Reader, th *agentsv1alpha1.AgentThread) ([]agentsv1alpha1.AgentRun, error) {
	runs := &agentsv1alpha1.AgentRunList{}
	if err := c.List(ctx, runs, client.InNamespace(th.Namespace), client.MatchingFields{indexRunThread: th.Name}); err != nil {
		return nil, fmt.Errorf("listing the runs of AgentThread %s: %w", th.Name, err)
	}
	out := runs.Items[:0]
	for _, run := range runs.Items {
		if !run.CreationTimestamp.Before(&th.CreationTimestamp) {
			out = append(out, run)
		}
	}
	return out, nil
}

// getCachedOrLive reads obj from the cache and, when the cache does not have
// it, from the API server: an object created just before the event that
// led here may not be cached yet, and taking it for gone would end runs. It
// returns nil when the object does not exist.
func getCachedOrLive[T client.Object](ctx context.Context, cache client.Client, live client.Reader, key client.ObjectKey, obj T) (T, error) {
	var none T
	err := cache.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		err = live.Get(ctx, key, obj)
	}
	switch {
	case apierrors.IsNotFound(err):
		return none, nil
	case err != nil:
		return none, err
	}
	return obj, nil
}

// waitForCache waits until the cache shows the run at key as done says
// (or gone): the next reconcile, which may come at once, must see what this
// one wrote. Only our own writes are awaited, a few milliseconds away.
func waitForCache(ctx context.Context, cache client.Reader, key client.ObjectKey, done func(*agentsv1alpha1.AgentRun) bool) error {
	err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, cacheWaitTimeout, true, func(ctx context.Context) (bool, error) {
		cached := &agentsv1alpha1.AgentRun{}
		err := cache.Get(ctx, key, cached)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && done(cached), err
	})
	if err != nil {
		return fmt.Errorf("waiting for the cache to show the write of AgentRun %s: %w", key.Name, err)
	}
	return nil
}

// outOfQueue tells whether a run has left queued.
func outOfQueue(run *agentsv1alpha1.AgentRun) bool {
	return run.EffectiveState() != agentsv1alpha1.RunQueued
}

// SetupWithManager registers admission. An Agent that appears, changes
// (capacity, archive) or goes; a run that is queued, finishes or goes; and a
// payload Secret that appears each look at the Agent's runs again.
func (r *AgentAdmissionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.NewContextID == nil {
		r.NewContextID = uuid.NewString
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("agentadmission").
		For(&agentsv1alpha1.Agent{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: admissionWorkers}).
		Watches(&agentsv1alpha1.AgentRun{}, handler.EnqueueRequestsFromMapFunc(agentOfRun), builder.WithPredicates(admissionMatters)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.agentOfPayload),
			builder.OnlyMetadata, builder.WithPredicates(predicate.Funcs{
				CreateFunc: func(event.CreateEvent) bool { return true },
				UpdateFunc: func(event.UpdateEvent) bool { return false },
				DeleteFunc: func(event.DeleteEvent) bool { return false },
			})).
		Complete(r)
}

// admissionWorkers is how many Agents are looked at in parallel.
const admissionWorkers = 4

// admissionMatters passes the run events that can change what admission
// decides: a run queued, a run leaving the unfinished (a slot or its
// thread freed), an unfinished run going away.
var admissionMatters = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return isRunIn(e.Object, agentsv1alpha1.RunQueued) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*agentsv1alpha1.AgentRun)
		run, ok2 := e.ObjectNew.(*agentsv1alpha1.AgentRun)
		return ok1 && ok2 && !old.EffectiveState().IsFinished() && run.EffectiveState().IsFinished()
	},
	DeleteFunc: func(e event.DeleteEvent) bool {
		run, ok := e.Object.(*agentsv1alpha1.AgentRun)
		return ok && !run.EffectiveState().IsFinished()
	},
}

func isRunIn(o client.Object, state agentsv1alpha1.RunState) bool {
	run, ok := o.(*agentsv1alpha1.AgentRun)
	return ok && run.EffectiveState() == state
}

// agentOfRun maps a run to its Agent.
func agentOfRun(_ context.Context, o client.Object) []reconcile.Request {
	run, ok := o.(*agentsv1alpha1.AgentRun)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: run.Namespace, Name: run.Spec.AgentRef.Name}}}
}

// agentOfPayload maps a payload Secret to the Agent of the run that owns it.
func (r *AgentAdmissionReconciler) agentOfPayload(ctx context.Context, o client.Object) []reconcile.Request {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind != "AgentRun" || ref.APIVersion != agentsv1alpha1.GroupVersion.String() {
			continue
		}
		run := &agentsv1alpha1.AgentRun{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: ref.Name}, run); err != nil {
			return nil // not cached yet: its own event comes
		}
		return agentOfRun(ctx, run)
	}
	return nil
}
