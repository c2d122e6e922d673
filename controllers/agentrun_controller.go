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
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
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
	"github.com/hookrun/hookrun/controllers/a2a"
)

// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=agentthreads/status,verbs=patch

const (
	// payloadGrace is how long a queued run may wait for its payload Secret
	// (the receiver writes it right after the run) before it fails.
	payloadGrace = agentsv1alpha1.PayloadGrace
	// sendRetryInterval spaces retries of a send that failed with a retryable error.
	sendRetryInterval = 2 * time.Second
	// defaultCallTimeout bounds one A2A call; a call also ends when the run times out.
	defaultCallTimeout = 30 * time.Second
	// cacheLagRetry is how soon a run the cache does not list yet is looked at again.
	cacheLagRetry = time.Second
)

// A2AClient is what the dispatcher needs of an agent.
type A2AClient interface {
	SendMessage(ctx context.Context, msg a2a.Message) (*a2a.Task, error)
	GetTask(ctx context.Context, id string) (*a2a.Task, error)
	CancelTask(ctx context.Context, id string) (*a2a.Task, error)
}

// A2AClientFactory makes the client for one run: the agent's endpoint and
// version, its bearer token (may be empty) and the run owner's user name.
type A2AClientFactory func(agent *agentsv1alpha1.Agent, token, userID string) A2AClient

// NewHTTPA2AClient is the production factory.
func NewHTTPA2AClient(hc *http.Client) A2AClientFactory {
	return func(agent *agentsv1alpha1.Agent, token, userID string) A2AClient {
		return &a2a.Client{
			URL: agent.Spec.A2A.URL, Version: a2a.Version(agent.Spec.A2A.ProtocolVersion),
			Token: token, HTTP: hc, Headers: map[string]string{"X-User-Id": userID},
		}
	}
}

// AgentRunReconciler sends queued AgentRuns to their Agent over A2A and
// follows each task to its end.
type AgentRunReconciler struct {
	client.Client
	// APIReader reads payload and token Secrets, threads, and Agents the
	// cache does not have, around the cache.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	NewClient A2AClientFactory
	// NewContextID makes A2A context IDs (UUIDs in production).
	NewContextID func() string
	// Workers is how many runs are reconciled in parallel.
	Workers int
	// CallTimeout bounds one A2A call (default 30 s).
	CallTimeout time.Duration

	// payloadMissingSince remembers, by run key, when a queued run was first
	// seen without its payload Secret (the receiver writes it just after;
	// its creation enqueues the run).
	payloadMissingSince sync.Map

	// threadPending holds, by run key, finished runs whose thread has not
	// learnt of them: the answer came at once and was stored although
	// telling the thread failed. A look at a final run retries it.
	threadPending sync.Map

	// started holds the runs this operator decided to start, until the
	// cache shows them running: with parallel workers and a cache that lags
	// a decision must see the ones made just before it (see reserve).
	startedMu sync.Mutex
	started   map[types.NamespacedName]startedRun
}

// startedRun is a run decided to start: its Agent and thread.
type startedRun struct {
	agent, thread string
}

// finalError is a failure no retry can mend: the run ends with its message.
type finalError struct{ msg string }

func (e finalError) Error() string { return e.msg }

// Reconcile moves one run forward: start it when its turn comes, or look at
// its task.
func (r *AgentRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	run := &agentsv1alpha1.AgentRun{}
	if err := r.Get(ctx, req.NamespacedName, run); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			r.threadPending.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if run.EffectiveState().IsFinished() || !run.DeletionTimestamp.IsZero() {
		r.forget(req.NamespacedName)
		return ctrl.Result{}, errors.Join(r.tellThreadIfPending(ctx, run), r.backfillConditions(ctx, run))
	}
	before := run.DeepCopy()
	res, err := r.advance(ctx, run)
	var final finalError
	if errors.As(err, &final) {
		finish(&run.Status, agentsv1alpha1.RunError, final.msg, "", r.Clock.Now())
		res, err = ctrl.Result{}, nil
	}
	if run.Status.State.IsFinished() {
		// The thread learns of its latest run before the run is final: a
		// final run is not looked at again, and the thread's next run
		// cannot start before this one is final. On failure the run is
		// looked at again and its outcome found again. (An answer that came
		// at once is final already: recordTask told the thread first, and
		// if that failed, tellThreadIfPending tries until it succeeds.)
		if terr := r.updateThread(ctx, run); terr != nil {
			return ctrl.Result{}, terr
		}
		r.threadPending.Delete(req.NamespacedName)
	}
	setRunConditions(run)
	if perr := patchStatusIfChanged(ctx, r.Client, before, run, &before.Status, &run.Status); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	if run.Status.State == agentsv1alpha1.RunError && before.Status.State != agentsv1alpha1.RunError {
		r.Recorder.Eventf(run, nil, corev1.EventTypeWarning, agentsv1alpha1.EventRunFailed, "Run", "%s", run.Status.Message)
	}
	if run.Status.State.IsFinished() {
		r.forget(req.NamespacedName)
		runsFinished.WithLabelValues(string(run.Status.State)).Inc()
		if run.Status.StartedAt != nil && run.Status.CompletedAt != nil {
			runDuration.Observe(run.Status.CompletedAt.Sub(run.Status.StartedAt.Time).Seconds())
		}
	}
	return result(res, err)
}

func (r *AgentRunReconciler) advance(ctx context.Context, run *agentsv1alpha1.AgentRun) (ctrl.Result, error) {
	now := r.Clock.Now()
	agent, err := r.agentOf(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if run.EffectiveState() == agentsv1alpha1.RunQueued {
		switch {
		case agent == nil:
			return ctrl.Result{}, finalError{fmt.Sprintf("Agent %s was deleted before the run started", run.Spec.AgentRef.Name)}
		case agent.Spec.Archived:
			return ctrl.Result{}, finalError{fmt.Sprintf("Agent %s was archived before the run started", agent.Name)}
		case run.Spec.Payload == nil:
			return ctrl.Result{}, finalError{"The run has no payload to send"}
		}
		return r.start(ctx, run, agent, now)
	}
	if agent == nil {
		return ctrl.Result{}, finalError{fmt.Sprintf("Agent %s was deleted while the run was running", run.Spec.AgentRef.Name)}
	}
	return r.follow(ctx, run, agent, now)
}

// agentOf reads the run's Agent, or nil when it is gone. A run ends when
// its Agent is gone, so the cache's word is not enough: it may not have
// seen an Agent created just before the run. A miss is asked again of the
// API server.
func (r *AgentRunReconciler) agentOf(ctx context.Context, run *agentsv1alpha1.AgentRun) (*agentsv1alpha1.Agent, error) {
	key := client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.AgentRef.Name}
	agent := &agentsv1alpha1.Agent{}
	err := r.Get(ctx, key, agent)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, agent)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Agent %s: %w", key.Name, err)
	}
	return agent, nil
}

// start sends a queued run if its turn has come.
func (r *AgentRunReconciler) start(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) (ctrl.Result, error) {
	siblings := &agentsv1alpha1.AgentRunList{}
	// Read-only, so not copied: with a long queue the copies were most of the cost.
	if err := r.List(ctx, siblings, client.InNamespace(run.Namespace), client.MatchingFields{indexActiveRunAgent: agent.Name},
		client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the runs of Agent %s: %w", agent.Name, err)
	}
	switch verdict, why := r.reserve(run, siblings.Items, int(agent.Spec.MaxConcurrentRuns)); verdict {
	case startWait:
		ctrl.LoggerFrom(ctx).V(1).Info("run waits", "reason", why)
		return ctrl.Result{}, nil // a run of the agent that finishes enqueues this one again
	case startNotListed:
		return ctrl.Result{RequeueAfter: cacheLagRetry}, nil // no event will come for a run the cache lacks
	}
	marked := false
	defer func() {
		if !marked {
			r.unreserve(client.ObjectKeyFromObject(run)) // it did not start after all
		}
	}()

	payload, res, err := r.payload(ctx, run, now)
	if payload == nil {
		return res, err
	}
	thread, err := r.threadFor(ctx, run, agent)
	if err != nil {
		return ctrl.Result{}, err
	}
	if thread == nil {
		return ctrl.Result{}, finalError{fmt.Sprintf("AgentThread %s is missing or belongs to another agent", threadKey(run))}
	}
	started := metav1.NewTime(now)
	run.Status.State = agentsv1alpha1.RunRunning
	run.Status.StartedAt = &started
	run.Status.Thread = thread
	// Recorded before sending: after a restart the run is followed, not sent again.
	before := run.DeepCopy()
	before.Status = agentsv1alpha1.AgentRunStatus{}
	setRunConditions(run)
	if err := patchStatusIfChanged(ctx, r.Client, before, run, &before.Status, &run.Status); err != nil {
		return ctrl.Result{}, err
	}
	marked = true
	queueLatency.Observe(now.Sub(run.Spec.ReceivedAt.Time).Seconds())
	return r.send(ctx, run, agent, payload.Data[agentsv1alpha1.PayloadBodyKey], now)
}

// payload reads a queued run's payload Secret. When it is not there yet, it
// returns nil and the result that waits for it (its creation enqueues the
// run; the requeue is the grace period's end).
func (r *AgentRunReconciler) payload(ctx context.Context, run *agentsv1alpha1.AgentRun, now time.Time) (*corev1.Secret, ctrl.Result, error) {
	payload := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.Payload.SecretName}, payload)
	switch {
	case err == nil:
		r.payloadMissingSince.Delete(client.ObjectKeyFromObject(run))
		return payload, ctrl.Result{}, nil
	case !apierrors.IsNotFound(err):
		return nil, ctrl.Result{}, fmt.Errorf("reading payload Secret %s: %w", run.Spec.Payload.SecretName, err)
	}
	first, _ := r.payloadMissingSince.LoadOrStore(client.ObjectKeyFromObject(run), now)
	if since, ok := first.(time.Time); ok && now.Sub(since) < payloadGrace {
		return nil, ctrl.Result{RequeueAfter: payloadGrace - now.Sub(since)}, nil
	}
	return nil, ctrl.Result{}, finalError{fmt.Sprintf("The payload Secret %s does not exist", run.Spec.Payload.SecretName)}
}

// send sends the run's message (again, after a retryable failure) and
// records the agent's task at once.
func (r *AgentRunReconciler) send(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, body []byte, now time.Time) (ctrl.Result, error) {
	if r.timedOut(run, agent, now) {
		return r.expire(ctx, run, agent, now)
	}
	c, err := r.clientFor(ctx, run, agent)
	if err != nil {
		return ctrl.Result{}, err
	}
	text, file := composeMessage(run.Spec.Prompt, body, run.Spec.Payload.ContentType)
	model := run.Spec.Model
	if model == "" {
		model = agent.Spec.Model
	}
	if run.Status.Thread == nil {
		// A running run without its thread (a status written by hand, or
		// by an older version): send in a new context rather than panic.
		run.Status.Thread = &agentsv1alpha1.RunThread{}
	}
	callCtx, cancel := r.callContext(ctx, run, agent, now)
	task, err := c.SendMessage(callCtx, a2a.Message{
		MessageID: string(run.UID),
		ContextID: run.Status.Thread.ContextID,
		Text:      text,
		File:      file,
		Metadata:  runMetadata(run, model, run.Status.Thread.Title),
	})
	timedOutCall := callCtx.Err() != nil && ctx.Err() == nil
	cancel()
	switch {
	case a2a.IsRetryable(err) || (err != nil && timedOutCall):
		ctrl.LoggerFrom(ctx).Info("sending the run failed; retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: sendRetryInterval}, nil
	case err != nil:
		return ctrl.Result{}, finalError{sendFailure(err)}
	}
	if task.State.Terminal() {
		// Answered at once (a message, or a finished task): the outcome is
		// stored with the task id, in one write, so a failure after it
		// cannot lead to a second send.
		state, msg := outcome(task)
		finish(&run.Status, state, msg, task.Output, now)
	}
	if err := r.recordTask(ctx, run, task); err != nil {
		return ctrl.Result{}, err
	}
	if run.Status.State.IsFinished() {
		return ctrl.Result{}, nil
	}
	if err := r.recordContext(ctx, run); err != nil {
		return ctrl.Result{}, err
	}
	return r.observe(ctx, run, agent, task, now)
}

// sendFailure is the message of a run whose send failed for good. The
// A2A client's errors carry what the agent said only as one short line.
func sendFailure(err error) string {
	var refused *a2a.NotAllowedError
	if errors.As(err, &refused) {
		return fmt.Sprintf("The run was not sent: %v", err)
	}
	return fmt.Sprintf("The agent refused the message: %v", err)
}

// recordTask stores the task's id (and the context the agent used, and the
// outcome when the agent answered at once) on the run before anything else
// can fail: a run marked running without a task id is sent again. The merge
// patch touches only those fields, so it needs no resourceVersion and is
// retried until the API server takes it. A value the API server refuses (an
// id over the schema's bounds) ends the run.
func (r *AgentRunReconciler) recordTask(ctx context.Context, run *agentsv1alpha1.AgentRun, task *a2a.Task) error {
	base := run.DeepCopy()
	base.Status.State, base.Status.Message, base.Status.Output = agentsv1alpha1.RunRunning, "", ""
	base.Status.CompletedAt, base.Status.Duration = nil, ""
	run.Status.TaskID = task.ID
	if task.ContextID != "" {
		run.Status.Thread.ContextID = task.ContextID
	}
	if run.Status.State.IsFinished() {
		// The thread learns of its latest run before the run is final, as
		// in Reconcile. Failing here must not cost the answer (the message
		// would be sent again): it is tried again after this write, until
		// it succeeds (tellThreadIfPending).
		if err := r.updateThread(ctx, run); err != nil {
			ctrl.LoggerFrom(ctx).Info("recording the run on its thread failed; trying again after storing the answer", "error", err.Error())
			r.threadPending.Store(client.ObjectKeyFromObject(run), true)
		}
	}
	setRunConditions(run)
	final := func(err error) bool { return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) }
	err := retry.OnError(retry.DefaultBackoff, func(err error) bool { return !apierrors.IsNotFound(err) && !final(err) }, func() error {
		return r.Status().Patch(ctx, run, client.MergeFrom(base))
	})
	switch {
	case final(err):
		return finalError{fmt.Sprintf("The agent's answer cannot be recorded (task %q, context %q): %v", a2a.Sanitize(task.ID), a2a.Sanitize(task.ContextID), err)}
	case err != nil:
		return fmt.Errorf("recording task %s of the run: %w", task.ID, err)
	}
	return nil
}

// follow looks at a running run's task.
func (r *AgentRunReconciler) follow(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) (ctrl.Result, error) {
	if r.timedOut(run, agent, now) {
		return r.expire(ctx, run, agent, now)
	}
	if run.Status.TaskID == "" {
		return r.resend(ctx, run, agent, now)
	}
	c, err := r.clientFor(ctx, run, agent)
	if err != nil {
		return ctrl.Result{}, err
	}
	callCtx, cancel := r.callContext(ctx, run, agent, now)
	task, err := c.GetTask(callCtx, run.Status.TaskID)
	timedOutCall := callCtx.Err() != nil && ctx.Err() == nil
	cancel()
	switch {
	case a2a.IsRetryable(err) || (err != nil && timedOutCall):
		return ctrl.Result{RequeueAfter: pollInterval(now.Sub(run.Status.StartedAt.Time))}, nil
	case err != nil:
		return ctrl.Result{}, finalError{fmt.Sprintf("Following the task failed: %v", err)}
	}
	return r.observe(ctx, run, agent, task, now)
}

// resend handles a run marked running without a task: the send failed, or
// our own write of the task id has not reached the cache yet. Only the API
// server can tell which; never send twice because of a stale copy.
func (r *AgentRunReconciler) resend(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) (ctrl.Result, error) {
	live := &agentsv1alpha1.AgentRun{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(run), live); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if live.Status.TaskID != "" || live.Status.State != agentsv1alpha1.RunRunning {
		return ctrl.Result{RequeueAfter: pollInterval(0)}, nil // the cache will catch up
	}
	// The send failed or was cut short: send again, with the same messageId.
	if run.Spec.Payload == nil {
		return ctrl.Result{}, finalError{"The run has no payload to send"}
	}
	payload := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.Payload.SecretName}, payload); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, finalError{fmt.Sprintf("The payload Secret %s is gone; the message cannot be sent again", run.Spec.Payload.SecretName)}
		}
		return ctrl.Result{}, err
	}
	return r.send(ctx, run, agent, payload.Data[agentsv1alpha1.PayloadBodyKey], now)
}

// observe finishes the run if its task is terminal or it timed out, and
// otherwise schedules the next look.
func (r *AgentRunReconciler) observe(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, task *a2a.Task, now time.Time) (ctrl.Result, error) {
	if task.State.Terminal() {
		state, msg := outcome(task)
		finish(&run.Status, state, msg, task.Output, now)
		return ctrl.Result{}, nil
	}
	if r.timedOut(run, agent, now) {
		return r.expire(ctx, run, agent, now)
	}
	return ctrl.Result{RequeueAfter: pollInterval(now.Sub(run.Status.StartedAt.Time))}, nil
}

// expire ends a run past its timeout, canceling its task if it has one.
func (r *AgentRunReconciler) expire(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) (ctrl.Result, error) {
	msg := fmt.Sprintf("The run exceeded its timeout of %s", runTimeout(agent))
	if run.Status.TaskID == "" {
		finish(&run.Status, agentsv1alpha1.RunError, msg+" before the agent accepted the message", "", now)
		return ctrl.Result{}, nil
	}
	c, err := r.clientFor(ctx, run, agent)
	if err == nil {
		callCtx, cancel := context.WithTimeout(ctx, r.callTimeout())
		_, err = c.CancelTask(callCtx, run.Status.TaskID)
		cancel()
	}
	if err != nil {
		msg += fmt.Sprintf("; canceling the task failed: %v", err)
	} else {
		msg += "; the task was canceled"
	}
	finish(&run.Status, agentsv1alpha1.RunError, msg, "", now)
	return ctrl.Result{}, nil
}

func runTimeout(agent *agentsv1alpha1.Agent) time.Duration {
	if agent.Spec.RunTimeout != nil {
		return agent.Spec.RunTimeout.Duration
	}
	return 15 * time.Minute
}

func (r *AgentRunReconciler) timedOut(run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) bool {
	return run.Status.StartedAt != nil && now.Sub(run.Status.StartedAt.Time) >= runTimeout(agent)
}

func (r *AgentRunReconciler) callTimeout() time.Duration {
	if r.CallTimeout > 0 {
		return r.CallTimeout
	}
	return defaultCallTimeout
}

// callContext bounds one A2A call by CallTimeout and by the time the run has
// left, so a slow agent holds a worker no longer than either.
func (r *AgentRunReconciler) callContext(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) (context.Context, context.CancelFunc) {
	d := r.callTimeout()
	if run.Status.StartedAt != nil {
		d = min(d, runTimeout(agent)-now.Sub(run.Status.StartedAt.Time))
	}
	return context.WithTimeout(ctx, max(d, time.Second))
}

// clientFor builds the A2A client with the agent's bearer token, read
// around the cache. A token Secret or key that does not exist is final.
func (r *AgentRunReconciler) clientFor(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent) (A2AClient, error) {
	var token string
	if ref := agent.Spec.A2A.AuthSecretRef; ref != nil {
		s, err := getReferableSecret(ctx, r.APIReader, agent.Namespace, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil, finalError{fmt.Sprintf("The agent's token Secret %s does not exist; create it and send the call again", ref.Name)}
			}
			if errors.Is(err, errSecretNotReferable) {
				return nil, finalError{notReferableMessage("the Agent's spec.a2a.authSecretRef", ref.Name) + "; then send the call again"}
			}
			return nil, fmt.Errorf("reading the agent's token Secret %s: %w", ref.Name, err)
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			return nil, finalError{fmt.Sprintf("The agent's token Secret %s has no key %q", ref.Name, ref.Key)}
		}
		token = string(v)
	}
	owner := ""
	if run.Spec.Owner != nil {
		owner = run.Spec.Owner.User
	}
	return r.NewClient(agent, token, owner), nil
}

// threadFor decides the run's thread: a new context per run, or the
// AgentThread's context, created and stored on its first run. It returns
// nil when the thread is unusable.
func (r *AgentRunReconciler) threadFor(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent) (*agentsv1alpha1.RunThread, error) {
	name := threadKey(run)
	if name == "" {
		t := &agentsv1alpha1.RunThread{ContextID: r.NewContextID()}
		if run.Spec.ThreadNamingHint == "" {
			title := agent.Spec.DisplayName
			if title == "" {
				title = agent.Name
			}
			t.Title = "Webhook: " + title
		}
		return t, nil
	}
	th := &agentsv1alpha1.AgentThread{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, th); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading AgentThread %s: %w", name, err)
	}
	if th.Spec.AgentRef.Name != agent.Name {
		return nil, nil
	}
	if th.Status.ContextID == "" {
		before := th.DeepCopy()
		th.Status.ContextID = th.Spec.ContextID
		if th.Status.ContextID == "" {
			th.Status.ContextID = r.NewContextID()
		}
		// The optimistic lock makes a racing first run fail here and retry
		// with the context the other one stored.
		if err := patchStatusIfChanged(ctx, r.Client, before, th, &before.Status, &th.Status); err != nil {
			return nil, err
		}
	}
	return &agentsv1alpha1.RunThread{Name: name, ContextID: th.Status.ContextID, Title: th.Spec.Title}, nil
}

// tellThreadIfPending tells the thread of a final run whose answer was
// stored although telling the thread failed (recordTask). An error retries.
func (r *AgentRunReconciler) tellThreadIfPending(ctx context.Context, run *agentsv1alpha1.AgentRun) error {
	key := client.ObjectKeyFromObject(run)
	if _, pending := r.threadPending.Load(key); !pending {
		return nil
	}
	if run.DeletionTimestamp.IsZero() {
		if err := r.updateThread(ctx, run); err != nil {
			return err
		}
	}
	r.threadPending.Delete(key)
	return nil
}

// recordContext keeps the context the agent actually used on the run's thread.
func (r *AgentRunReconciler) recordContext(ctx context.Context, run *agentsv1alpha1.AgentRun) error {
	if run.Status.Thread.Name == "" {
		return nil
	}
	return r.patchThread(ctx, run, func(st *agentsv1alpha1.AgentThreadStatus) error {
		st.ContextID = run.Status.Thread.ContextID
		return nil
	})
}

// updateThread records the run as its thread's latest, unless a run
// appended after it already is. It is called before the run's final state
// is stored, so the thread's next run cannot start first; but when the call
// before storing an answer that came at once fails, it is made again after
// (see recordTask), and by then the next run may have finished.
func (r *AgentRunReconciler) updateThread(ctx context.Context, run *agentsv1alpha1.AgentRun) error {
	if run.Status.Thread == nil || run.Status.Thread.Name == "" {
		return nil
	}
	return r.patchThread(ctx, run, func(st *agentsv1alpha1.AgentThreadStatus) error {
		if st.LastRunName != "" && st.LastRunName != run.Name {
			latest := &agentsv1alpha1.AgentRun{}
			err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: st.LastRunName}, latest)
			switch {
			case err == nil && appendedAfter(latest, run):
				return nil
			case err != nil && !apierrors.IsNotFound(err):
				return fmt.Errorf("reading AgentRun %s, the latest of thread %s: %w", st.LastRunName, run.Status.Thread.Name, err)
			}
		}
		st.LastRunName = run.Name
		if run.Status.Thread.ContextID != "" {
			st.ContextID = run.Status.Thread.ContextID // again, in case recording it after the send failed
		}
		return nil
	})
}

// patchThread changes the status of the run's AgentThread, read live and
// retried on conflicts. A thread that is gone needs nothing.
func (r *AgentRunReconciler) patchThread(ctx context.Context, run *agentsv1alpha1.AgentRun, change func(*agentsv1alpha1.AgentThreadStatus) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		th := &agentsv1alpha1.AgentThread{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Status.Thread.Name}, th); err != nil {
			return client.IgnoreNotFound(err)
		}
		before := th.DeepCopy()
		if err := change(&th.Status); err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(before.Status, th.Status) {
			return nil
		}
		return client.IgnoreNotFound(r.Status().Patch(ctx, th, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
	})
}

// SetupWithManager registers the dispatcher. A run that finishes or goes,
// and an Agent that changes (capacity, archive), re-examine the Agent's
// queued runs; a payload Secret that appears enqueues its run.
func (r *AgentRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.NewContextID == nil {
		r.NewContextID = uuid.NewString
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&agentsv1alpha1.AgentRun{}).
		Named("agentrun").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Watches(&agentsv1alpha1.AgentRun{}, handler.EnqueueRequestsFromMapFunc(r.queuedRunsOfAgent(func(o client.Object) (string, string) {
			if run, ok := o.(*agentsv1alpha1.AgentRun); ok {
				return run.Spec.AgentRef.Name, run.Name
			}
			return "", ""
		})), builder.WithPredicates(slotFreed)).
		Watches(&agentsv1alpha1.Agent{}, handler.EnqueueRequestsFromMapFunc(r.queuedRunsOfAgent(func(o client.Object) (string, string) {
			return o.GetName(), ""
		})), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(runOfPayload),
			builder.OnlyMetadata, builder.WithPredicates(predicate.Funcs{
				CreateFunc: func(event.CreateEvent) bool { return true },
				UpdateFunc: func(event.UpdateEvent) bool { return false },
				DeleteFunc: func(event.DeleteEvent) bool { return false },
			})).
		Complete(r)
}

// slotFreed passes the run events that may let a queued run start: a run
// reaching a final state, and a run going away.
var slotFreed = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*agentsv1alpha1.AgentRun)
		after, ok2 := e.ObjectNew.(*agentsv1alpha1.AgentRun)
		return ok1 && ok2 && !before.EffectiveState().IsFinished() && after.EffectiveState().IsFinished()
	},
	DeleteFunc: func(event.DeleteEvent) bool { return true },
}

// runOfPayload maps a payload Secret to the AgentRun that owns it.
func runOfPayload(_ context.Context, o client.Object) []reconcile.Request {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "AgentRun" && ref.APIVersion == agentsv1alpha1.GroupVersion.String() {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}}
		}
	}
	return nil
}

// queuedRunsOfAgent maps an event to the queued runs of an Agent; of
// returns the Agent's name and the name of a run to leave out (the one the
// event is about).
func (r *AgentRunReconciler) queuedRunsOfAgent(of func(client.Object) (agent, except string)) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		agent, except := of(o)
		if agent == "" {
			return nil
		}
		runs := &agentsv1alpha1.AgentRunList{}
		if err := r.List(ctx, runs, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexActiveRunAgent: agent},
			client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the runs of an agent", "agent", agent)
			return nil
		}
		_, busyThreads, queued := activeRuns(runs.Items)
		a := &agentsv1alpha1.Agent{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: agent}, a); err == nil && !a.Spec.Archived {
			// Only the runs that would take the Agent's slots if all were
			// free can start now; the rest move up with later events. (All
			// of them, on every event, made dispatch quadratic in the queue.)
			queueOrder(queued)
			queued = slotTakers(queued, busyThreads, int(a.Spec.MaxConcurrentRuns))
		} // a deleted or archived Agent ends every queued run
		var reqs []reconcile.Request
		for _, q := range queued {
			if q.Name != except {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(q)})
			}
		}
		return reqs
	}
}

// reserve decides, under one lock for all workers, whether run may start
// among its Agent's cached runs plus the runs started since the cache last
// showed them, and if so records it as started. Without this two workers
// could each see the other's run still queued and both start.
func (r *AgentRunReconciler) reserve(run *agentsv1alpha1.AgentRun, cached []agentsv1alpha1.AgentRun, maxConcurrent int) (startVerdict, string) {
	r.startedMu.Lock()
	defer r.startedMu.Unlock()
	if r.started == nil {
		r.started = map[types.NamespacedName]startedRun{}
	}
	runs := withStarted(cached, run.Namespace, run.Spec.AgentRef.Name, r.started)
	verdict, why := mayStart(run, runs, maxConcurrent)
	if verdict == startNow {
		r.started[client.ObjectKeyFromObject(run)] = startedRun{agent: run.Spec.AgentRef.Name, thread: threadKey(run)}
	}
	return verdict, why
}

// withStarted marks, in cached (the Agent's active runs as the cache lists
// them: copies, changed in place), the runs in started as running. Entries
// the cache already shows running are dropped from started, and so are
// those it no longer lists: a started run leaves the active runs only by
// finishing or going away, and then it holds no slot.
func withStarted(cached []agentsv1alpha1.AgentRun, ns, agent string, started map[types.NamespacedName]startedRun) []agentsv1alpha1.AgentRun {
	listed := make(map[types.NamespacedName]bool, len(started))
	for i := range cached {
		run := &cached[i]
		key := types.NamespacedName{Namespace: run.Namespace, Name: run.Name}
		if _, ok := started[key]; !ok {
			continue
		}
		listed[key] = true
		if run.EffectiveState() != agentsv1alpha1.RunQueued {
			delete(started, key) // the cache has caught up
		} else {
			run.Status.State = agentsv1alpha1.RunRunning
		}
	}
	for key, s := range started {
		if key.Namespace == ns && s.agent == agent && !listed[key] {
			delete(started, key)
		}
	}
	return cached
}

// unreserve drops a run that was decided to start but did not.
func (r *AgentRunReconciler) unreserve(key types.NamespacedName) {
	r.startedMu.Lock()
	defer r.startedMu.Unlock()
	delete(r.started, key)
}

// forget drops what the reconciler remembers of a run that is final or gone.
func (r *AgentRunReconciler) forget(key types.NamespacedName) {
	r.payloadMissingSince.Delete(key)
	r.unreserve(key)
}
