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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	payloadGrace = 30 * time.Second
	// sendRetryInterval spaces retries of a send that failed with a retryable error.
	sendRetryInterval = 2 * time.Second
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
	// APIReader reads payload and token Secrets and threads around the cache.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	NewClient A2AClientFactory
	// NewContextID makes A2A context IDs (UUIDs in production).
	NewContextID func() string

	// payloadMissingSince remembers, by run UID, when a queued run was first
	// seen without its payload Secret (the receiver writes it just after).
	payloadMissingSince sync.Map
}

// Reconcile moves one run forward: start it when its turn comes, or look at
// its task.
func (r *AgentRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	run := &agentsv1alpha1.AgentRun{}
	if err := r.Get(ctx, req.NamespacedName, run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if run.EffectiveState().IsFinished() || !run.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := run.DeepCopy()
	res, err := r.advance(ctx, run)
	if perr := patchStatusIfChanged(ctx, r.Client, before, run, &before.Status, &run.Status); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	if run.Status.State.IsFinished() {
		runsFinished.WithLabelValues(string(run.Status.State)).Inc()
		if run.Status.StartedAt != nil && run.Status.CompletedAt != nil {
			runDuration.Observe(run.Status.CompletedAt.Sub(run.Status.StartedAt.Time).Seconds())
		}
	}
	return result(res, err)
}

func (r *AgentRunReconciler) advance(ctx context.Context, run *agentsv1alpha1.AgentRun) (ctrl.Result, error) {
	now := r.Clock.Now()
	agent := &agentsv1alpha1.Agent{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.AgentRef.Name}, agent)
	switch {
	case apierrors.IsNotFound(err):
		agent = nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading Agent %s: %w", run.Spec.AgentRef.Name, err)
	}
	if run.EffectiveState() == agentsv1alpha1.RunQueued {
		switch {
		case agent == nil:
			finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("Agent %s was deleted before the run started", run.Spec.AgentRef.Name), "", now)
			return ctrl.Result{}, nil
		case agent.Spec.Archived:
			finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("Agent %s was archived before the run started", agent.Name), "", now)
			return ctrl.Result{}, nil
		}
		if run.Spec.Payload == nil {
			finish(&run.Status, agentsv1alpha1.RunError, "The run has no payload to send", "", now)
			return ctrl.Result{}, nil
		}
		return r.start(ctx, run, agent, now)
	}
	if agent == nil {
		finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("Agent %s was deleted while the run was running", run.Spec.AgentRef.Name), "", now)
		return ctrl.Result{}, nil
	}
	return r.follow(ctx, run, agent, now)
}

// start sends a queued run if its turn has come.
func (r *AgentRunReconciler) start(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) (ctrl.Result, error) {
	siblings := &agentsv1alpha1.AgentRunList{}
	if err := r.List(ctx, siblings, client.InNamespace(run.Namespace), client.MatchingFields{indexRunAgent: agent.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the runs of Agent %s: %w", agent.Name, err)
	}
	if ok, _ := mayStart(run, siblings.Items, int(agent.Spec.MaxConcurrentRuns)); !ok {
		return ctrl.Result{}, nil // a finishing run of the agent enqueues this one again
	}

	payload := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.Payload.SecretName}, payload); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading payload Secret %s: %w", run.Spec.Payload.SecretName, err)
		}
		first, _ := r.payloadMissingSince.LoadOrStore(run.UID, now)
		if since, ok := first.(time.Time); ok && now.Sub(since) < payloadGrace {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		r.payloadMissingSince.Delete(run.UID)
		finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("The payload Secret %s does not exist", run.Spec.Payload.SecretName), "", now)
		return ctrl.Result{}, nil
	}

	r.payloadMissingSince.Delete(run.UID)
	thread, err := r.threadFor(ctx, run, agent)
	if err != nil {
		return ctrl.Result{}, err
	}
	if thread == nil {
		finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("AgentThread %s is missing or belongs to another agent", threadKey(run)), "", now)
		return ctrl.Result{}, nil
	}
	started := metav1.NewTime(now)
	run.Status.State = agentsv1alpha1.RunRunning
	run.Status.StartedAt = &started
	run.Status.Thread = thread
	// Recorded before sending: after a restart the run is followed, not sent again.
	before := run.DeepCopy()
	before.Status = agentsv1alpha1.AgentRunStatus{}
	if err := patchStatusIfChanged(ctx, r.Client, before, run, &before.Status, &run.Status); err != nil {
		return ctrl.Result{}, err
	}
	queueLatency.Observe(now.Sub(run.Spec.ReceivedAt.Time).Seconds())
	return r.send(ctx, run, agent, payload.Data[agentsv1alpha1.PayloadBodyKey], now)
}

// send sends the run's message (again, after a retryable failure).
func (r *AgentRunReconciler) send(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, body []byte, now time.Time) (ctrl.Result, error) {
	c, err := r.clientFor(ctx, run, agent)
	if err != nil {
		return ctrl.Result{}, err
	}
	text, file := composeMessage(run.Spec.Prompt, body, run.Spec.Payload.ContentType)
	model := run.Spec.Model
	if model == "" {
		model = agent.Spec.Model
	}
	task, err := c.SendMessage(ctx, a2a.Message{
		MessageID: string(run.UID),
		ContextID: run.Status.Thread.ContextID,
		Text:      text,
		File:      file,
		Metadata:  runMetadata(run, model, run.Status.Thread.Title),
	})
	switch {
	case a2a.IsRetryable(err):
		if r.timedOut(run, agent, now) {
			finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("The agent could not be reached before the run timeout: %v", err), "", now)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: sendRetryInterval}, nil
	case err != nil:
		finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("The agent refused the message: %v", err), "", now)
		return ctrl.Result{}, nil
	}
	run.Status.TaskID = task.ID
	if err := r.recordContext(ctx, run, task.ContextID); err != nil {
		return ctrl.Result{}, err
	}
	return r.observe(ctx, run, agent, task, now)
}

// follow looks at a running run's task.
func (r *AgentRunReconciler) follow(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) (ctrl.Result, error) {
	if run.Status.TaskID == "" {
		// Marked running without a task: the send failed, or our own write
		// of the task id has not reached the cache yet. Only the API
		// server can tell which; never send twice because of a stale copy.
		live := &agentsv1alpha1.AgentRun{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(run), live); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if live.Status.TaskID != "" || live.Status.State != agentsv1alpha1.RunRunning {
			return ctrl.Result{RequeueAfter: pollInterval(0)}, nil // the cache will catch up
		}
		// The send failed or was cut short: send again, with the same messageId.
		payload := &corev1.Secret{}
		if run.Spec.Payload == nil {
			finish(&run.Status, agentsv1alpha1.RunError, "The run has no payload to send", "", now)
			return ctrl.Result{}, nil
		}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.Payload.SecretName}, payload); err != nil {
			if apierrors.IsNotFound(err) {
				finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("The payload Secret %s is gone; the message cannot be sent again", run.Spec.Payload.SecretName), "", now)
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, err
		}
		return r.send(ctx, run, agent, payload.Data[agentsv1alpha1.PayloadBodyKey], now)
	}
	c, err := r.clientFor(ctx, run, agent)
	if err != nil {
		return ctrl.Result{}, err
	}
	task, err := c.GetTask(ctx, run.Status.TaskID)
	switch {
	case a2a.IsRetryable(err):
		if r.timedOut(run, agent, now) {
			finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("The agent could not be reached before the run timeout: %v", err), "", now)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: pollInterval(now.Sub(run.Status.StartedAt.Time))}, nil
	case err != nil:
		finish(&run.Status, agentsv1alpha1.RunError, fmt.Sprintf("Following the task failed: %v", err), "", now)
		return ctrl.Result{}, nil
	}
	return r.observe(ctx, run, agent, task, now)
}

// observe finishes the run if its task is terminal or it timed out, and
// otherwise schedules the next look.
func (r *AgentRunReconciler) observe(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, task *a2a.Task, now time.Time) (ctrl.Result, error) {
	if task.State.Terminal() {
		state, msg := outcome(task)
		finish(&run.Status, state, msg, task.Output, now)
		return ctrl.Result{}, r.updateThread(ctx, run)
	}
	if r.timedOut(run, agent, now) {
		msg := fmt.Sprintf("The run exceeded its timeout of %s; the task was canceled", agent.Spec.RunTimeout.Duration)
		if c, err := r.clientFor(ctx, run, agent); err == nil {
			if _, err := c.CancelTask(ctx, run.Status.TaskID); err != nil {
				msg = fmt.Sprintf("The run exceeded its timeout of %s; canceling the task failed: %v", agent.Spec.RunTimeout.Duration, err)
			}
		}
		finish(&run.Status, agentsv1alpha1.RunError, msg, "", now)
		return ctrl.Result{}, r.updateThread(ctx, run)
	}
	return ctrl.Result{RequeueAfter: pollInterval(now.Sub(run.Status.StartedAt.Time))}, nil
}

func (r *AgentRunReconciler) timedOut(run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) bool {
	timeout := 15 * time.Minute
	if agent.Spec.RunTimeout != nil {
		timeout = agent.Spec.RunTimeout.Duration
	}
	return run.Status.StartedAt != nil && now.Sub(run.Status.StartedAt.Time) >= timeout
}

// clientFor builds the A2A client with the agent's bearer token, read
// around the cache.
func (r *AgentRunReconciler) clientFor(ctx context.Context, run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent) (A2AClient, error) {
	var token string
	if ref := agent.Spec.A2A.AuthSecretRef; ref != nil {
		s := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: agent.Namespace, Name: ref.Name}, s); err != nil {
			return nil, fmt.Errorf("reading the agent's token Secret %s: %w", ref.Name, err)
		}
		token = string(s.Data[ref.Key])
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

// recordContext keeps the context the agent actually used.
func (r *AgentRunReconciler) recordContext(ctx context.Context, run *agentsv1alpha1.AgentRun, contextID string) error {
	if contextID == "" || contextID == run.Status.Thread.ContextID {
		return nil
	}
	run.Status.Thread.ContextID = contextID
	if run.Status.Thread.Name == "" {
		return nil
	}
	th := &agentsv1alpha1.AgentThread{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Status.Thread.Name}, th); err != nil {
		return client.IgnoreNotFound(err)
	}
	before := th.DeepCopy()
	th.Status.ContextID = contextID
	return patchStatusIfChanged(ctx, r.Client, before, th, &before.Status, &th.Status)
}

// updateThread records the run as its thread's latest.
func (r *AgentRunReconciler) updateThread(ctx context.Context, run *agentsv1alpha1.AgentRun) error {
	if run.Status.Thread == nil || run.Status.Thread.Name == "" {
		return nil
	}
	th := &agentsv1alpha1.AgentThread{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Status.Thread.Name}, th); err != nil {
		return client.IgnoreNotFound(err)
	}
	before := th.DeepCopy()
	th.Status.LastRunName = run.Name
	return patchStatusIfChanged(ctx, r.Client, before, th, &before.Status, &th.Status)
}

// SetupWithManager registers the dispatcher. A run that changes (finishes)
// and an Agent that changes (capacity, archive) re-examine the Agent's queued runs.
func (r *AgentRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.NewContextID == nil {
		r.NewContextID = uuid.NewString
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&agentsv1alpha1.AgentRun{}).
		Named("agentrun").
		Watches(&agentsv1alpha1.AgentRun{}, handler.EnqueueRequestsFromMapFunc(r.queuedRunsOfAgent(func(o client.Object) string {
			return o.GetLabels()[agentsv1alpha1.LabelAgent]
		}))).
		Watches(&agentsv1alpha1.Agent{}, handler.EnqueueRequestsFromMapFunc(r.queuedRunsOfAgent(func(o client.Object) string {
			return o.GetName()
		})), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

func (r *AgentRunReconciler) queuedRunsOfAgent(agentOf func(client.Object) string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		agent := agentOf(o)
		if agent == "" {
			return nil
		}
		runs := &agentsv1alpha1.AgentRunList{}
		if err := r.List(ctx, runs, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexRunAgent: agent}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the runs of an agent", "agent", agent)
			return nil
		}
		var reqs []reconcile.Request
		for i := range runs.Items {
			if runs.Items[i].EffectiveState() == agentsv1alpha1.RunQueued && runs.Items[i].Name != o.GetName() {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&runs.Items[i])})
			}
		}
		return reqs
	}
}
