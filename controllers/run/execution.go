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
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/tracing"
)

// A2AClient is what execution needs of an agent.
type A2AClient interface {
	SendMessage(ctx context.Context, msg a2a.Message) (*a2a.Task, error)
	GetTask(ctx context.Context, id string) (*a2a.Task, error)
	CancelTask(ctx context.Context, id string) (*a2a.Task, error)
}

// ExecutionReconciler executes started runs: it sends each to its Agent over
// A2A, follows the task, and ends the run (done, failed, timed out,
// canceled). It is the only writer of a running run's status. Each
// reconcile takes one step from what the run stores and writes it once:
// a run marked running without a task is sent (again, with the run's UID as
// the A2A messageId, which agents deduplicate), one with a task is polled.
type ExecutionReconciler struct {
	client.Client
	// APIReader reads payload and token Secrets (never cached) and Agents
	// the cache has not seen yet.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// Rand draws the jitter of retries (retry.go).
	Rand      io.Reader
	NewClient A2AClientFactory
	// Workers is how many runs are executed in parallel; one Agent's calls
	// hold at most AgentShare of them.
	Workers int
	// CallTimeout bounds one A2A call (--a2a-call-timeout).
	CallTimeout time.Duration

	// Tracer starts the spans of A2A calls.
	Tracer RunTracer

	unconfirmed cached.UnconfirmedWrites
	calls       *callQueue
	// Cards is where a send that failed asks for the Agent's card to be
	// read again (agent.CardRefreshes); nil: nowhere.
	Cards CardRefresher
}

// CardRefresher asks for an Agent's card to be read again: a send failed in
// a way a newer card may mend (agent.CardRefreshes).
type CardRefresher interface {
	Request(agent types.NamespacedName)
}

// finalError is a failure no retry can mend: the run ends with its message,
// and its reason when it has one (status.reason).
type finalError struct{ msg, reason string }

func (e finalError) Error() string { return e.msg }

// Reconcile takes one step of a running run.
func (r *ExecutionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	defer r.calls.settle(ctx, req.NamespacedName)
	if err := r.unconfirmed.Settle(ctx, r.Client, req); err != nil {
		return ctrl.Result{}, err
	}
	run := &agentsv1alpha1.AgentRun{}
	if err := r.Get(ctx, req.NamespacedName, run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if run.EffectiveState() != agentsv1alpha1.RunRunning || !run.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // queued runs are admission's, finished ones done
	}
	before := run.DeepCopy()
	res, err := r.step(ctx, run)
	var final finalError
	if errors.As(err, &final) {
		Finish(&run.Status, agentsv1alpha1.RunError, final.msg, "", r.Clock.Now())
		run.Status.Reason = final.reason
		res, err = ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	written, err := r.record(ctx, before, run)
	if err != nil || !written {
		return res, err
	}
	if run.Status.State.IsFinished() {
		runEnded(r.Recorder, run)
	}
	// The next step, which may come at once, must see this one's write.
	// Only execution writes a running run's status, so the cache shows the
	// write once it shows that status, whatever else changed meanwhile.
	recorded := cached.Status(run)
	return res, r.unconfirmed.Await(ctx, r.Client, req, []cached.Write{{Key: client.ObjectKeyFromObject(run), Shown: func(cached *agentsv1alpha1.AgentRun) bool {
		return equality.Semantic.DeepEqual(cached.Status, recorded)
	}}})
}

// step is the run's next step: end it, send it, or look at its task. It
// changes run's status in memory only.
func (r *ExecutionReconciler) step(ctx context.Context, run *agentsv1alpha1.AgentRun) (ctrl.Result, error) {
	now := r.Clock.Now()
	agent, err := cached.GetOrLive(ctx, r.Client, r.APIReader, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.AgentRef.Name}, &agentsv1alpha1.Agent{})
	switch {
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading Agent %s: %w", run.Spec.AgentRef.Name, err)
	case agent == nil:
		return ctrl.Result{}, finalError{msg: fmt.Sprintf("Agent %s was deleted while the run was running", run.Spec.AgentRef.Name)}
	case retryWait(run, agent, now) > 0:
		// The agent turned the last call away: nobody is called before
		// status.retry.notBefore, whatever woke the run.
		return ctrl.Result{RequeueAfter: retryWait(run, agent, now)}, nil
	case !r.calls.take(run):
		return r.waitForCall(ctx), nil // woken when its turn comes
	}
	defer r.calls.release(ctx, run)
	target, found := a2aTarget(agent)
	switch {
	case r.timedOut(run, agent, now):
		return r.expire(ctx, run, agent, target, found, now)
	case !found:
		return waitForCard(ctx, agent), nil
	case run.Status.TaskID == "":
		return r.send(ctx, run, agent, target, now)
	default:
		return r.poll(ctx, run, agent, target, now)
	}
}

// send sends the run's message and keeps the agent's task (and its
// outcome, when the agent answered at once).
func (r *ExecutionReconciler) send(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, target a2a.Interface, now time.Time) (ctrl.Result, error) {
	// The cache may not show a task id written by a step whose wait for the
	// cache was cut short: only the API server can tell, and a second send
	// must never come from a stale copy.
	live := &agentsv1alpha1.AgentRun{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(run), live); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if live.Status.TaskID != "" || live.Status.State != agentsv1alpha1.RunRunning {
		return ctrl.Result{RequeueAfter: pollInterval(0)}, nil // the cache will catch up
	}
	if wait := retryWait(live, agent, now); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil // nor is a send sent before its wait ends
	}
	p, err := r.payload(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	c, err := r.clientFor(ctx, run, agent, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	if run.Status.Thread == nil {
		// A running run without its thread (a status written by hand, or
		// by an older version): send in a new context rather than panic.
		run.Status.Thread = &agentsv1alpha1.RunThread{}
	}
	callCtx, cancel := r.callContext(ctx, run, agent, now)
	callCtx, span := r.Tracer.call(callCtx, tracing.SpanSend, run)
	// The cache holds no prompt (stripForCache): it comes from the read
	// above, of the run in full.
	task, err := c.SendMessage(callCtx, runMessage(run, live.Spec.Prompt, agent, p))
	timedOutCall := callCtx.Err() != nil && ctx.Err() == nil
	cancel()
	endCall(span, taskState(task), err)
	if err != nil {
		return r.sendFailed(ctx, run, agent, target, err, timedOutCall, now)
	}
	run.Status.TaskID = task.ID
	if task.ContextID != "" {
		run.Status.Thread.ContextID = task.ContextID
	}
	return r.observe(run, task, now), nil
}

// runMessage is the A2A message of a run: prompt (its spec.prompt) and
// payload (the body, or the fields with spec.payload.send Fields), with
// the run's UID as messageId.
func runMessage(run *agentsv1alpha1.AgentRun, prompt string, agent *agentsv1alpha1.Agent, p payload) a2a.Message {
	wrapped, contentType := p.body, run.Spec.Payload.ContentType
	if run.Spec.Payload.Send == agentsv1alpha1.PayloadFields {
		wrapped, contentType = p.fields, "application/json"
	}
	text, file := composeMessage(prompt, wrapped, contentType)
	model := run.Spec.Model
	if model == "" {
		model = agent.Spec.Model
	}
	return a2a.Message{
		MessageID: string(run.UID),
		ContextID: run.Status.Thread.ContextID,
		Text:      text,
		File:      file,
		Metadata:  runMetadata(run, model, run.Status.Thread.Title, p),
	}
}

// poll looks at the run's task.
func (r *ExecutionReconciler) poll(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, target a2a.Interface, now time.Time) (ctrl.Result, error) {
	c, err := r.clientFor(ctx, run, agent, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	callCtx, cancel := r.callContext(ctx, run, agent, now)
	callCtx, span := r.Tracer.call(callCtx, tracing.SpanPoll, run)
	task, err := c.GetTask(callCtx, run.Status.TaskID)
	timedOutCall := callCtx.Err() != nil && ctx.Err() == nil
	cancel()
	endCall(span, taskState(task), err)
	switch {
	case a2a.IsRetryable(err) || (err != nil && timedOutCall):
		return r.waitToRetry(run, agent, err, pollAgain, pollInterval(now.Sub(run.Status.StartedAt.Time)), now), nil
	case err != nil:
		return ctrl.Result{}, finalError{msg: fmt.Sprintf("Following the task failed: %v", err)}
	}
	return r.observe(run, task, now), nil
}

// observe ends the run if its task is terminal, and otherwise schedules the
// next look.
func (r *ExecutionReconciler) observe(run *agentsv1alpha1.AgentRun, task *a2a.Task, now time.Time) ctrl.Result {
	run.Status.Retry = nil // the agent took the call
	if task.State.Terminal() {
		state, msg := outcome(task)
		Finish(&run.Status, state, msg, task.Output, now)
		return ctrl.Result{}
	}
	elapsed := time.Duration(0)
	if run.Status.StartedAt != nil {
		elapsed = now.Sub(run.Status.StartedAt.Time)
	}
	return ctrl.Result{RequeueAfter: pollInterval(elapsed)}
}

// expire ends a run past its timeout, canceling its task if it has one
// and the Agent still says where (found).
func (r *ExecutionReconciler) expire(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, target a2a.Interface, found bool, now time.Time) (ctrl.Result, error) {
	msg := fmt.Sprintf("The run exceeded its timeout of %s", runTimeout(agent))
	switch {
	case run.Status.TaskID == "" && !found:
		Finish(&run.Status, agentsv1alpha1.RunError, msg+" while waiting for a usable agent card: "+cardProblem(agent), "", now)
		return ctrl.Result{}, nil
	case run.Status.TaskID == "":
		Finish(&run.Status, agentsv1alpha1.RunError, msg+" before the agent accepted the message"+turnedAway(run), "", now)
		return ctrl.Result{}, nil
	case !found:
		Finish(&run.Status, agentsv1alpha1.RunError, msg+"; the task was not canceled: the Agent has no usable agent card now", "", now)
		return ctrl.Result{}, nil
	}
	c, err := r.clientFor(ctx, run, agent, target)
	if err == nil {
		callCtx, cancel := context.WithTimeout(ctx, r.callTimeout())
		callCtx, span := r.Tracer.call(callCtx, tracing.SpanCancel, run)
		var task *a2a.Task
		task, err = c.CancelTask(callCtx, run.Status.TaskID)
		cancel()
		endCall(span, taskState(task), err)
	}
	if err != nil {
		msg += fmt.Sprintf("; canceling the task failed: %v", err)
	} else {
		msg += "; the task was canceled"
	}
	Finish(&run.Status, agentsv1alpha1.RunError, msg, "", now)
	return ctrl.Result{}, nil
}

// record writes the step's status, if it changed, and says whether it did.
// After a send it is retried a few times (retry.DefaultBackoff), since a
// lost task id means sending again; a value the API server refuses (an id
// over the schema's bounds) ends the run instead. Only this reconciler
// writes a running run, so a merge patch without a lock is safe.
func (r *ExecutionReconciler) record(ctx context.Context, before, run *agentsv1alpha1.AgentRun) (bool, error) {
	agentsv1alpha1.SetRunConditions(run)
	if !cached.StatusChanged(before, run) {
		return false, nil
	}
	refused := func(err error) bool { return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) }
	patch := func() error {
		return retry.OnError(retry.DefaultBackoff, func(err error) bool { return !apierrors.IsNotFound(err) && !refused(err) }, func() error {
			return r.Status().Patch(ctx, run, client.MergeFrom(before))
		})
	}
	err := patch()
	if refused(err) {
		answer := run.Status
		run.Status = *before.Status.DeepCopy()
		Finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("The agent's answer cannot be recorded (task %q, context %q): %v",
			a2a.Sanitize(answer.TaskID), a2a.Sanitize(agentsv1alpha1.ContextOf(&answer)), err), "", r.Clock.Now())
		agentsv1alpha1.SetRunConditions(run)
		err = patch()
	}
	if err != nil {
		return false, client.IgnoreNotFound(fmt.Errorf("recording the run's status: %w", err))
	}
	return true, nil
}

func runTimeout(agent *agentsv1alpha1.Agent) time.Duration {
	if agent.Spec.RunTimeout != nil {
		return agent.Spec.RunTimeout.Duration
	}
	return 15 * time.Minute
}

func (r *ExecutionReconciler) timedOut(run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) bool {
	return run.Status.StartedAt != nil && now.Sub(run.Status.StartedAt.Time) >= runTimeout(agent)
}

// SetupWithManager registers execution: it looks at running runs only, and
// at those woken by their Agent's call queue.
func (r *ExecutionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	running := predicate.NewPredicateFuncs(func(o client.Object) bool { return cached.IsRunIn(o, agentsv1alpha1.RunRunning) })
	r.calls = newCallQueue(r.Workers)
	return ctrl.NewControllerManagedBy(mgr).
		For(&agentsv1alpha1.AgentRun{}, builder.WithPredicates(running)).
		WatchesRawSource(r.calls.source()).
		Named("agentrun").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}
