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
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/status"
)

// AdmissionReconciler moves runs out of queued. It is keyed by Agent:
// each pass looks at all of the Agent's unfinished runs and starts those
// whose turn has come (planAdmission) or fails those that never can. It is
// the only writer of that move, and controller-runtime never reconciles one
// Agent twice at once: a pass, whether it succeeds or fails, ends once the
// cache shows what it wrote, and the next pass counts it. The one record it
// keeps is of writes the cache did not show within waitForCacheWithin's bound
// (a stalled informer): the next pass of that Agent waits for them first.
type AdmissionReconciler struct {
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

	// Tracer starts the spans of admission.
	Tracer RunTracer

	unconfirmed cached.UnconfirmedWrites
}

// Reconcile looks at one Agent's unfinished runs.
func (r *AdmissionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.unconfirmed.Settle(ctx, r.Client, req); err != nil {
		return ctrl.Result{}, err
	}
	agent, err := cached.GetOrLive(ctx, r.Client, r.APIReader, req.NamespacedName, &agentsv1alpha1.Agent{})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading Agent %s: %w", req.Name, err)
	}
	runs := &agentsv1alpha1.AgentRunList{}
	// Read-only, so not copied: with a long queue the copies were most of the cost.
	if err := r.List(ctx, runs, client.InNamespace(req.Namespace), client.MatchingFields{cached.IndexActiveRunAgent: req.Name},
		client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the runs of Agent %s: %w", req.Name, err)
	}
	now := r.Clock.Now()
	plan := planAdmission(agent, req.Name, runs.Items, r.payloadExists(ctx), now)
	p := &pass{r: r, agent: agent, now: now, wake: plan.wake}
	err = p.apply(ctx, plan)
	// Whatever happened, the pass ends only once the cache shows what it
	// wrote: the next pass, which may come at once, must count it.
	if werr := r.unconfirmed.Await(ctx, r.Client, req, p.written); werr != nil {
		err = errors.Join(err, werr)
	}
	return status.Result(ctrl.Result{RequeueAfter: p.wake}, err)
}

// pass is one admission pass: what it wrote and when to look again.
type pass struct {
	r       *AdmissionReconciler
	agent   *agentsv1alpha1.Agent
	now     time.Time
	written []cached.Write
	wake    time.Duration
}

// apply makes the plan's moves: the failures and overdue payloads (each on
// its own), then the starts, which stop at the first error so that no run
// starts past one whose write is in doubt.
func (p *pass) apply(ctx context.Context, plan admission) error {
	var errs []error
	for _, f := range plan.fail {
		errs = append(errs, p.end(ctx, f.run, f.message))
	}
	for _, run := range plan.overdue {
		errs = append(errs, p.overdue(ctx, run))
	}
	for _, q := range plan.start {
		if err := p.start(ctx, q); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	return errors.Join(errs...)
}

// overdue looks closer at a run whose payload the cache does not show past
// its deadline: if the API server has it, the cache lags (look again in a
// second); if not, the first time the run only gets a payloadDeadline (a
// grace from now, by this operator's clock; Ready says WaitingForPayload),
// and the second time it fails.
func (p *pass) overdue(ctx context.Context, run *agentsv1alpha1.AgentRun) error {
	gone, err := p.r.payloadGone(ctx, run)
	switch {
	case err != nil:
		return err
	case !gone:
		p.wake = minPositive(p.wake, time.Second)
		return nil
	case waitedForPayload(run):
		return p.end(ctx, run, missingPayload(run))
	}
	marked := run.DeepCopy()
	waitForPayload(marked, p.now)
	p.wake = minPositive(p.wake, payloadGrace)
	// Shown by its version, not by the field: an API server whose CRD does
	// not know the field yet drops it, and the cache would never show it.
	read := run.ResourceVersion
	return p.write(ctx, run, marked, func(cached *agentsv1alpha1.AgentRun) bool { return cached.ResourceVersion != read })
}

// start marks a queued run running in its thread: the execution reconciler
// sends it from there. The thread's A2A context is decided here, as the
// run's turn in its thread comes.
func (p *pass) start(ctx context.Context, cached *agentsv1alpha1.AgentRun) error {
	thread, err := p.r.threadFor(ctx, cached, p.agent)
	if err != nil {
		return err
	}
	if thread == nil {
		return p.end(ctx, cached, fmt.Sprintf("AgentThread %s is missing or belongs to another agent", agentsv1alpha1.ThreadKey(cached)))
	}
	run := cached.DeepCopy()
	started := metav1.NewTime(p.now)
	run.Status.State = agentsv1alpha1.RunRunning
	run.Status.StartedAt = &started
	run.Status.Thread = thread
	run.Status.PayloadDeadline = nil // it came: the deadline is over
	agentsv1alpha1.SetRunConditions(run)
	span := p.r.Tracer.admit(ctx, cached, run)
	err = p.write(ctx, cached, run, outOfQueue)
	endAdmission(span, run, err)
	if err != nil {
		return err
	}
	observeRunStarted(run, p.now)
	return nil
}

// end fails a queued run with message.
func (p *pass) end(ctx context.Context, cached *agentsv1alpha1.AgentRun, message string) error {
	run := cached.DeepCopy()
	Finish(&run.Status, agentsv1alpha1.RunError, message, "", p.now)
	agentsv1alpha1.SetRunConditions(run)
	span := p.r.Tracer.admit(ctx, cached, run)
	err := p.write(ctx, cached, run, outOfQueue)
	endAdmission(span, run, err)
	if err != nil {
		return err
	}
	runEnded(p.r.Recorder, run)
	return nil
}

// write patches a queued run's status with an optimistic lock: if the run
// changed since the cache read it (it was deleted, or the receiver or an
// earlier pass wrote it), the write fails. A write whose outcome is unknown
// (the answer was lost) is awaited if the API server shows it landed.
func (p *pass) write(ctx context.Context, before, run *agentsv1alpha1.AgentRun, shown func(*agentsv1alpha1.AgentRun) bool) error {
	key := client.ObjectKeyFromObject(run)
	err := p.r.Status().Patch(ctx, run, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	switch {
	case err == nil:
		p.written = append(p.written, cached.Write{Key: key, Shown: shown})
		return nil
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsInvalid(err):
		// Refused: nothing of this pass is in the run.
	default:
		live := &agentsv1alpha1.AgentRun{}
		if gerr := p.r.APIReader.Get(ctx, key, live); gerr == nil && live.ResourceVersion != before.ResourceVersion {
			read := before.ResourceVersion
			p.written = append(p.written, cached.Write{Key: key, Shown: func(cached *agentsv1alpha1.AgentRun) bool { return cached.ResourceVersion != read }})
		}
	}
	return fmt.Errorf("writing the status of queued AgentRun %s: %w", run.Name, err)
}

// payloadExists tells from the cache whether a run's payload Secret exists.
func (r *AdmissionReconciler) payloadExists(ctx context.Context) func(*agentsv1alpha1.AgentRun) bool {
	return func(run *agentsv1alpha1.AgentRun) bool {
		s := cached.SecretMetadata(run.Namespace, run.Spec.Payload.SecretName)
		return r.Metadata.Get(ctx, client.ObjectKeyFromObject(s), s) == nil
	}
}

// payloadGone asks the API server whether a run's payload Secret is missing.
func (r *AdmissionReconciler) payloadGone(ctx context.Context, run *agentsv1alpha1.AgentRun) (bool, error) {
	s := cached.SecretMetadata(run.Namespace, run.Spec.Payload.SecretName)
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
func (r *AdmissionReconciler) threadFor(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent) (*agentsv1alpha1.RunThread, error) {
	name := agentsv1alpha1.ThreadKey(run)
	if name == "" {
		t := &agentsv1alpha1.RunThread{ContextID: r.NewContextID()}
		if run.Spec.ThreadNamingHint == "" {
			t.Title = "Webhook: " + agentTitle(agent)
		}
		return t, nil
	}
	th, err := cached.GetOrLive(ctx, r.Client, r.APIReader, client.ObjectKey{Namespace: run.Namespace, Name: name}, &agentsv1alpha1.AgentThread{})
	if err != nil || th == nil || th.Spec.AgentRef.Name != agent.Name {
		return nil, err
	}
	runs, err := cached.RunsOfThread(ctx, r.Client, th)
	if err != nil {
		return nil, err
	}
	contextID, _ := agentsv1alpha1.ThreadFromRuns(runs)
	for _, c := range []string{th.Status.ContextID, th.Spec.ContextID} {
		if contextID == "" {
			contextID = c
		}
	}
	if contextID == "" {
		contextID = r.NewContextID()
	}
	return &agentsv1alpha1.RunThread{Name: name, UID: string(th.UID), ContextID: contextID, Title: th.Spec.Title}, nil
}

func agentTitle(agent *agentsv1alpha1.Agent) string {
	if agent.Spec.DisplayName != "" {
		return agent.Spec.DisplayName
	}
	return agent.Name
}

// outOfQueue tells whether a run has left queued.
func outOfQueue(run *agentsv1alpha1.AgentRun) bool {
	return run.EffectiveState() != agentsv1alpha1.RunQueued
}

// SetupWithManager registers admission. An Agent that appears, changes
// (capacity, archive) or goes; a run that is queued, finishes or goes; and a
// payload Secret that appears each look at the Agent's runs again.
func (r *AdmissionReconciler) SetupWithManager(mgr ctrl.Manager) error {
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
	CreateFunc: func(e event.CreateEvent) bool { return cached.IsRunIn(e.Object, agentsv1alpha1.RunQueued) },
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

// agentOfRun maps a run to its Agent.
func agentOfRun(_ context.Context, o client.Object) []reconcile.Request {
	run, ok := o.(*agentsv1alpha1.AgentRun)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: run.Namespace, Name: run.Spec.AgentRef.Name}}}
}

// agentOfPayload maps a payload Secret to the Agent of the run that owns it.
func (r *AdmissionReconciler) agentOfPayload(ctx context.Context, o client.Object) []reconcile.Request {
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
