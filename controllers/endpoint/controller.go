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

package endpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/status"
	"github.com/hookrun/hookrun/controllers/membership"
	"github.com/hookrun/hookrun/controllers/oidc"
)

// Generated Secrets are owned by their endpoint with blockOwnerDeletion,
// which needs update on the finalizers where OwnerReferencesPermissionEnforcement is on.
// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=webhookendpoints/finalizers,verbs=update

const (
	// TokenBytes is the size of endpoint IDs and generated secrets.
	TokenBytes = 32
	// DefaultOwnerRecheckInterval is how often an endpoint paused because its
	// owner lost membership checks whether the owner is a member again.
	DefaultOwnerRecheckInterval = time.Minute
)

// Reconciler gives every WebhookEndpoint its ID, URL and secret, and keeps
// its phase and conditions honest. Its runs are counted and pruned, and its
// refusals summed, by package accounting.
type Reconciler struct {
	client.Client
	// APIReader reads around the cache: Secret data, and the live endpoint
	// before a once-only value (ID, secret) is generated.
	APIReader client.Reader
	// MetadataReader reads object metadata from the cache (Secrets are
	// cached as metadata only).
	MetadataReader client.Reader
	Recorder       events.EventRecorder
	Clock          clock.PassiveClock
	// CacheClock measures how long an ID claim holds against the cache's
	// delay, which is real time whatever Clock is (idWaiters.claim): the
	// real clock unless a test sets another.
	CacheClock clock.PassiveClock
	// Rand is the source of endpoint IDs and secrets (crypto/rand in production).
	Rand       io.Reader
	Membership membership.Checker

	PublicBaseURL string
	// RunCountDelay batches the AgentRun events that may move the
	// OwnerNotMember pause into one reconcile.
	RunCountDelay        time.Duration
	OwnerRecheckInterval time.Duration
	// Namespace is the receiver's namespace, where signing keys are kept.
	Namespace string
	// OIDCIssuers are the issuers besides the cluster's that OIDC senders
	// may name (--oidc-issuers, as the receiver's).
	OIDCIssuers oidc.Issuers
	// APIAudiences are the audiences the API server accepts
	// (oidc.APIAudiences): an OIDC endpoint naming one is Ready=False
	// OIDCAudienceInvalid. Nil when they could not be learned.
	APIAudiences []string

	// idWaiters are the endpoints waiting for an ID another one holds.
	idWaiters idWaiters
	// filterVerdicts are the compiled filters' verdicts, per generation.
	filterVerdicts filterVerdicts
}

// endpointScope carries one reconcile's state from phase to phase.
type endpointScope struct {
	ep           *agentsv1alpha1.WebhookEndpoint
	requeueAfter time.Duration
	// secretValue is the secret this reconcile generated or read, if any.
	secretValue []byte
	// idHeldElsewhere: another endpoint, holding it longer, has this endpoint's ID.
	idHeldElsewhere bool
	// idProblem: the pinned ID (spec.endpointIDSecretRef) cannot be used
	// yet, and why; it comes before everything else in Ready.
	idProblem *status.Summary
	// filterProblem: spec.filter does not compile, and why.
	filterProblem *status.Summary
	// runs are the endpoint's AgentRuns (from the cache), once listed.
	runs       []agentsv1alpha1.AgentRun
	runsListed bool
	// afterStatus are called once the status is written: events that the
	// status makes true.
	afterStatus []func()
}

// afterStatusWritten adds f (an event) to what runs once the status is written.
func (s *endpointScope) afterStatusWritten(f func()) {
	s.afterStatus = append(s.afterStatus, f)
}

func (s *endpointScope) requeueWithin(d time.Duration) {
	if d > 0 && (s.requeueAfter == 0 || d < s.requeueAfter) {
		s.requeueAfter = d
	}
}

func (s *endpointScope) setCondition(c metav1.Condition) {
	c.ObservedGeneration = s.ep.Generation
	meta.SetStatusCondition(&s.ep.Status.Conditions, c)
}

// Reconcile runs the phases in order and writes status once, at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	ep := &agentsv1alpha1.WebhookEndpoint{}
	if err := r.Get(ctx, req.NamespacedName, ep); err != nil {
		if apierrors.IsNotFound(err) {
			r.idWaiters.forget(req.NamespacedName)
			r.filterVerdicts.forget(req.NamespacedName)
			return ctrl.Result{}, r.deleteSigningKeys(ctx, req.Namespace, req.Name, "")
		}
		return ctrl.Result{}, err
	}
	if !ep.DeletionTimestamp.IsZero() {
		// The garbage collector removes the generated Secret and the runs;
		// the signing key lives in another namespace.
		return ctrl.Result{}, r.deleteSigningKeys(ctx, req.Namespace, req.Name, "")
	}
	if needsOnceOnlyValue(ep) {
		// An ID or a secret is generated from the endpoint as the API server
		// has it: the cache may not show our last status write yet, and a
		// value generated from a stale copy would replace one someone has.
		// The status write is locked to this read's resourceVersion.
		if err := r.APIReader.Get(ctx, req.NamespacedName, ep); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	before := ep.DeepCopy()
	s := &endpointScope{ep: ep}

	defer func() { retErr = r.writeStatus(ctx, before, s, retErr) }()

	var errs []error
	for _, phase := range []func(context.Context, *endpointScope) error{
		r.reconcileIdentity,
		r.reconcileFilter,
		r.reconcileAgent,
		r.reconcileThread,
		r.reconcileSecret,
		r.reconcileSigningKey,
		r.reconcilePhase,
	} {
		if err := phase(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	return status.Result(ctrl.Result{RequeueAfter: s.requeueAfter}, errors.Join(errs...))
}

// writeStatus ends a reconcile that is returning phasesErr: Ready,
// Reconciling, Stalled and observedGeneration from that outcome, then one
// status patch against before; after it, the events that waited for it are
// recorded. It returns phasesErr joined with its own error.
func (r *Reconciler) writeStatus(ctx context.Context, before *agentsv1alpha1.WebhookEndpoint, s *endpointScope, phasesErr error) error {
	ep := s.ep
	sum := endpointSummary(&ep.Status, s.idHeldElsewhere, phasesErr)
	switch {
	case s.idProblem != nil:
		sum = *s.idProblem
	case s.filterProblem != nil && !s.idHeldElsewhere:
		sum = *s.filterProblem
	}
	status.SetSummary(&ep.Status.Conditions, sum, ep.Generation)
	if phasesErr == nil {
		ep.Status.ObservedGeneration = ep.Generation
	}
	if err := status.PatchIfChanged(ctx, r.Client, before, ep, &before.Status, &ep.Status); err != nil {
		return errors.Join(phasesErr, err)
	}
	for _, f := range s.afterStatus {
		f()
	}
	return phasesErr
}

// needsOnceOnlyValue tells whether this reconcile may generate an endpoint ID
// or a secret, values that must never be generated twice.
func needsOnceOnlyValue(ep *agentsv1alpha1.WebhookEndpoint) bool {
	if ep.Status.EndpointID == "" {
		return true
	}
	if ep.Spec.AllowUnauthenticated || ep.Spec.SecretRef != nil || ep.Spec.OIDCOf() != nil {
		return false
	}
	fresh, rotate := generatedSecretAction(ep)
	return fresh || rotate
}

// generatedSecretAction decides, for an endpoint with a generated secret,
// whether a secret must be made now (fresh: none yet, or the endpoint just
// became authenticated or left secretRef) or rotated (the annotation has a
// value not handled yet). The annotation is compared in the form
// lastHandledRotation records (RotationValue), which is also the form the
// cache keeps: a cached and a live read of the endpoint decide alike.
func generatedSecretAction(ep *agentsv1alpha1.WebhookEndpoint) (fresh, rotate bool) {
	rotation := agentsv1alpha1.RotationValue(ep.Annotations[agentsv1alpha1.AnnotationRotateSecret])
	fresh = ep.Status.AuthMode != agentsv1alpha1.AuthSecret || ep.Status.SecretHash == "" ||
		ep.Status.SecretName != agentsv1alpha1.GeneratedSecretName(ep.Name)
	rotate = !fresh && rotation != "" && rotation != ep.Status.LastHandledRotation
	return fresh, rotate
}

// reconcileAgent reports on the Agent. The endpoint carries no owner
// reference to it: the Agent's finalizer deletes its endpoints
// (package agent).
func (r *Reconciler) reconcileAgent(ctx context.Context, s *endpointScope) error {
	agent := &agentsv1alpha1.Agent{}
	err := r.Get(ctx, client.ObjectKey{Namespace: s.ep.Namespace, Name: s.ep.Spec.AgentRef.Name}, agent)
	switch {
	case apierrors.IsNotFound(err):
		s.setCondition(agentReadyCondition(s.ep.Spec.AgentRef.Name, nil))
		return nil
	case err != nil:
		return fmt.Errorf("reading Agent %q: %w", s.ep.Spec.AgentRef.Name, err)
	}
	s.setCondition(agentReadyCondition(agent.Name, agent))
	return nil
}

// reconcileThread reports on a ContinueExisting endpoint's thread.
func (r *Reconciler) reconcileThread(ctx context.Context, s *endpointScope) error {
	spec := &s.ep.Spec
	if spec.ThreadStrategy != agentsv1alpha1.ContinueExisting || spec.TargetThreadRef == nil {
		s.setCondition(threadReadyCondition(spec, nil))
		return nil
	}
	thread := &agentsv1alpha1.AgentThread{}
	err := r.Get(ctx, client.ObjectKey{Namespace: s.ep.Namespace, Name: spec.TargetThreadRef.Name}, thread)
	switch {
	case apierrors.IsNotFound(err):
		thread = nil
	case err != nil:
		return fmt.Errorf("reading AgentThread %q: %w", spec.TargetThreadRef.Name, err)
	}
	s.setCondition(threadReadyCondition(spec, thread))
	return nil
}

// reconcilePhase decides Active or Paused. This reconciler alone writes the
// OwnerNotMember pause: the receiver records a call whose owner is not a
// member as a skipped run, and ownerNotMemberPause derives the pause from
// those runs, asking for the owner's membership only when one of them, or
// the pause itself, calls for it.
func (r *Reconciler) reconcilePhase(ctx context.Context, s *endpointScope) error {
	ep := s.ep
	runs, err := r.endpointRuns(ctx, s)
	if err != nil {
		return err
	}
	paused, handledUntil, err := ownerNotMemberPause(ep, runs, func() (bool, error) {
		return r.Membership.IsMember(ctx, ep.Namespace, ep.Spec.AgentRef.Name, ep.Spec.Owner)
	})
	if err != nil {
		return fmt.Errorf("checking whether owner %s may trigger Agent %s: %w", ep.Spec.Owner.UserName(), ep.Spec.AgentRef.Name, err)
	}
	if paused {
		s.requeueWithin(r.OwnerRecheckInterval)
	}
	owner, agent := ep.Spec.Owner.UserName(), ep.Spec.AgentRef.Name
	switch was := ep.Status.PauseReason == agentsv1alpha1.PauseReasonOwnerNotMember; {
	case paused && !was:
		s.afterStatusWritten(func() {
			r.Recorder.Eventf(ep, nil, corev1.EventTypeWarning, agentsv1alpha1.EventOwnerNotMember, "Pause",
				"A call was skipped: the owner %s may no longer trigger Agent %s. The endpoint is paused until the owner is a member again or another member takes ownership", owner, agent)
		})
	case !paused && was:
		s.afterStatusWritten(func() {
			r.Recorder.Eventf(ep, nil, corev1.EventTypeNormal, agentsv1alpha1.EventMembershipRestored, "Resume",
				"The owner %s may trigger Agent %s again; the OwnerNotMember pause is lifted", owner, agent)
		})
	}
	ep.Status.OwnerNotMemberHandledUntil = handledUntil
	wasPhase, wasReason := ep.Status.Phase, ep.Status.PauseReason
	ep.Status.Phase, ep.Status.PauseReason = endpointPhase(ep.Spec.Paused, paused)
	r.ownerPauseEvent(s, wasPhase, wasReason)
	return nil
}

// endpointWorkers is how many endpoints are reconciled in parallel.
const endpointWorkers = 8

// SetupWithManager registers the reconciler and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.CacheClock == nil {
		r.CacheClock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		// Not woken by the accounting's writes (notAnAccountingWrite).
		For(&agentsv1alpha1.WebhookEndpoint{}, builder.WithPredicates(notAnAccountingWrite)).
		Named("webhookendpoint").
		// Endpoints are independent; a few writes each. One worker took
		// 85 s to bring 1,000 new endpoints to Ready (make bench).
		WithOptions(controller.Options{MaxConcurrentReconciles: endpointWorkers}).
		Watches(&agentsv1alpha1.Agent{},
			handler.EnqueueRequestsFromMapFunc(cached.MapByIndex(r.Client, &agentsv1alpha1.WebhookEndpointList{}, cached.IndexEndpointAgent)),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&agentsv1alpha1.AgentThread{},
			handler.EnqueueRequestsFromMapFunc(cached.MapByIndex(r.Client, &agentsv1alpha1.WebhookEndpointList{}, cached.IndexEndpointThread)),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.endpointsForSecret), builder.OnlyMetadata).
		Watches(&agentsv1alpha1.AgentRun{}, cached.RunEndpointAfter(r.RunCountDelay)).
		Watches(&agentsv1alpha1.WebhookEndpoint{}, handler.EnqueueRequestsFromMapFunc(r.endpointsSharingID),
			builder.WithPredicates(notAnAccountingWrite)).
		Watches(&agentsv1alpha1.WebhookEndpoint{}, handler.EnqueueRequestsFromMapFunc(r.endpointsWaitingForID),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc: func(event.CreateEvent) bool { return false },
				UpdateFunc: func(event.UpdateEvent) bool { return false },
			})).
		Complete(r)
}

// endpointRuns lists the endpoint's AgentRuns from the cache, once per
// reconcile: the skipped ones decide the OwnerNotMember pause (reconcilePhase).
func (r *Reconciler) endpointRuns(ctx context.Context, s *endpointScope) ([]agentsv1alpha1.AgentRun, error) {
	if !s.runsListed {
		runs := &agentsv1alpha1.AgentRunList{}
		if err := r.List(ctx, runs, client.InNamespace(s.ep.Namespace), client.MatchingFields{cached.IndexRunEndpoint: s.ep.Name}); err != nil {
			return nil, fmt.Errorf("listing AgentRuns: %w", err)
		}
		s.runs, s.runsListed = runs.Items, true
	}
	return s.runs, nil
}
