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

package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
)

// Deleting an Agent deletes its WebhookEndpoints and AgentThreads. Users
// apply those (often through GitOps, and Argo CD does not prune an object
// that carries an owner reference: argoproj/argo-cd#4764), so they carry no
// owner reference and the garbage collector cannot do it. Instead every
// Agent carries the finalizer agents.hookrun.dev/cleanup; when the Agent is
// deleted, the Agent reconciler deletes the endpoints and threads whose
// spec.agentRef names it (found through the cache indexes), waits until they
// are gone, confirms that with the API server, and removes the finalizer.
// Propagation Orphan (kubectl delete --cascade=orphan) does not keep them:
// the garbage collector may drop its orphan finalizer before this reconciler
// sees it, so honouring it would be a race.
// The garbage collector then deletes what hangs off the endpoints through
// owner references (runs, their payloads, generated Secrets).

// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=agents,verbs=patch
// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=agents/finalizers,verbs=update
// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=webhookendpoints;agentthreads,verbs=patch;delete

// cleanupConfirmRetry is how soon an Agent whose dependents the cache no
// longer shows, but the API server still has, is looked at again.
const cleanupConfirmRetry = time.Second

// cleanupStep is what the Agent's finalizer calls for now.
type cleanupStep int

const (
	// cleanupNone: nothing to do.
	cleanupNone cleanupStep = iota
	// cleanupAddFinalizer: a live Agent without the finalizer.
	cleanupAddFinalizer
	// cleanupRelease: a live Agent with the finalizer whose endpoints or
	// threads carry owner references to Agents (left by earlier versions).
	cleanupRelease
	// cleanupDelete: the Agent is being deleted and some of its endpoints or
	// threads are not yet.
	cleanupDelete
	// cleanupWait: all of them are being deleted; wait until they are gone.
	cleanupWait
	// cleanupConfirm: the cache shows none; confirm with the API server,
	// then remove the finalizer.
	cleanupConfirm
)

// cleanupStepFor decides the finalizer's next step for agent, given the
// endpoints and threads the cache shows naming it.
func cleanupStepFor(agent *agentsv1alpha1.Agent, dependents []client.Object) cleanupStep {
	ours := controllerutil.ContainsFinalizer(agent, agentsv1alpha1.FinalizerCleanup)
	switch {
	case agent.DeletionTimestamp.IsZero() && !ours:
		return cleanupAddFinalizer
	case agent.DeletionTimestamp.IsZero():
		if slices.ContainsFunc(dependents, hasAgentOwnerReference) {
			return cleanupRelease
		}
		return cleanupNone
	case !ours:
		return cleanupNone
	case slices.ContainsFunc(dependents, func(o client.Object) bool { return o.GetDeletionTimestamp().IsZero() }):
		return cleanupDelete
	case len(dependents) > 0:
		return cleanupWait
	default:
		return cleanupConfirm
	}
}

// isAgentOwnerReference tells whether ref names a hookrun Agent.
func isAgentOwnerReference(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == agentsv1alpha1.GroupVersion.Group && ref.Kind == "Agent"
}

// hasAgentOwnerReference tells whether o has an owner reference to an Agent.
func hasAgentOwnerReference(o client.Object) bool {
	return slices.ContainsFunc(o.GetOwnerReferences(), isAgentOwnerReference)
}

// withoutAgentOwnerReferences is refs without those to Agents; the others
// (a user's own) stay.
func withoutAgentOwnerReferences(refs []metav1.OwnerReference) []metav1.OwnerReference {
	kept := slices.DeleteFunc(slices.Clone(refs), isAgentOwnerReference)
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// reconcileCleanup takes the finalizer's step for agent. stop tells the
// caller to write no status this time: the Agent is being deleted, or its
// finalizer was just added (that write starts the next reconcile, which
// then writes the status against what it wrote: one write per reconcile).
// Once the finalizer no longer holds a deleted Agent, its metric series go.
func (r *Reconciler) reconcileCleanup(ctx context.Context, agent *agentsv1alpha1.Agent) (stop bool, _ ctrl.Result, _ error) {
	stop, res, err := r.cleanupStep(ctx, agent)
	if err == nil && r.FollowAgent != nil {
		r.FollowAgent(agent)
	}
	return stop, res, err
}

// cleanupStep takes the finalizer's step for agent (reconcileCleanup).
func (r *Reconciler) cleanupStep(ctx context.Context, agent *agentsv1alpha1.Agent) (stop bool, _ ctrl.Result, _ error) {
	deleting := !agent.DeletionTimestamp.IsZero()
	dependents, err := r.dependents(ctx, agent)
	if err != nil {
		return deleting, ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)
	switch cleanupStepFor(agent, dependents) {
	case cleanupAddFinalizer:
		return true, ctrl.Result{}, r.patchFinalizer(ctx, agent, controllerutil.AddFinalizer)
	case cleanupRelease:
		return deleting, ctrl.Result{}, r.releaseDependents(ctx, dependents)
	case cleanupDelete:
		log.Info("Deleting the endpoints and threads of a deleted Agent", "count", len(dependents))
		return deleting, ctrl.Result{}, r.deleteDependents(ctx, dependents)
	case cleanupConfirm:
		left, err := r.dependentsLeft(ctx, agent)
		if err != nil || left {
			return deleting, ctrl.Result{RequeueAfter: cleanupConfirmRetry}, err
		}
		return deleting, ctrl.Result{}, r.patchFinalizer(ctx, agent, controllerutil.RemoveFinalizer)
	}
	return deleting, ctrl.Result{}, nil // none, or wait: their deletion starts a reconcile
}

// dependents are the endpoints and threads in agent's namespace whose
// spec.agentRef names it, as the cache shows them.
func (r *Reconciler) dependents(ctx context.Context, agent *agentsv1alpha1.Agent) ([]client.Object, error) {
	eps := &agentsv1alpha1.WebhookEndpointList{}
	if err := r.List(ctx, eps, client.InNamespace(agent.Namespace), client.MatchingFields{cached.IndexEndpointAgent: agent.Name}); err != nil {
		return nil, fmt.Errorf("listing the endpoints of Agent %s: %w", agent.Name, err)
	}
	threads := &agentsv1alpha1.AgentThreadList{}
	if err := r.List(ctx, threads, client.InNamespace(agent.Namespace), client.MatchingFields{cached.IndexThreadAgent: agent.Name}); err != nil {
		return nil, fmt.Errorf("listing the threads of Agent %s: %w", agent.Name, err)
	}
	out := make([]client.Object, 0, len(eps.Items)+len(threads.Items))
	for i := range eps.Items {
		out = append(out, &eps.Items[i])
	}
	for i := range threads.Items {
		out = append(out, &threads.Items[i])
	}
	return out, nil
}

// patchFinalizer adds or removes the cleanup finalizer, with a patch locked
// to the resourceVersion read (the list of finalizers is replaced whole).
func (r *Reconciler) patchFinalizer(ctx context.Context, agent *agentsv1alpha1.Agent, change func(client.Object, string) bool) error {
	patch := client.MergeFromWithOptions(agent.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if !change(agent, agentsv1alpha1.FinalizerCleanup) {
		return nil
	}
	if err := r.Patch(ctx, agent, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("changing the finalizers of Agent %s: %w", agent.Name, err)
	}
	return nil
}

// releaseDependents removes the owner references to Agents that earlier
// versions put on endpoints and threads; the finalizer does their job now.
// Each patch is locked to the resourceVersion the cache showed.
func (r *Reconciler) releaseDependents(ctx context.Context, dependents []client.Object) error {
	var errs []error
	for _, o := range dependents {
		if !hasAgentOwnerReference(o) {
			continue
		}
		before, ok := o.DeepCopyObject().(client.Object)
		if !ok {
			return fmt.Errorf("cannot copy %T", o)
		}
		o.SetOwnerReferences(withoutAgentOwnerReferences(o.GetOwnerReferences()))
		if err := r.Patch(ctx, o, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("removing the owner reference to its Agent from %T %s: %w", o, o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// deleteDependents deletes the endpoints and threads not being deleted yet,
// each only as the cache showed it (UID and resourceVersion): one whose
// spec.agentRef moved to another Agent meanwhile is not deleted, and the
// conflict retries the reconcile.
func (r *Reconciler) deleteDependents(ctx context.Context, dependents []client.Object) error {
	var errs []error
	for _, o := range dependents {
		if !o.GetDeletionTimestamp().IsZero() {
			continue
		}
		uid, rv := o.GetUID(), o.GetResourceVersion()
		err := r.Delete(ctx, o, client.Preconditions{UID: &uid, ResourceVersion: &rv}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting %T %s of the deleted Agent: %w", o, o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// dependentsLeft asks the API server whether an endpoint or thread still
// names agent: the cache may not show one created a moment ago. The
// CRDs declare spec.agentRef.name a selectable field.
func (r *Reconciler) dependentsLeft(ctx context.Context, agent *agentsv1alpha1.Agent) (bool, error) {
	for _, list := range []client.ObjectList{&agentsv1alpha1.WebhookEndpointList{}, &agentsv1alpha1.AgentThreadList{}} {
		err := r.APIReader.List(ctx, list, client.InNamespace(agent.Namespace),
			client.MatchingFields{"spec.agentRef.name": agent.Name}, client.Limit(1))
		if err != nil {
			return false, fmt.Errorf("confirming that nothing names Agent %s any more: %w", agent.Name, err)
		}
		if meta.LenList(list) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// agentOfDependent maps an endpoint or thread (an event dependentMatters
// passed) to its Agent when the Agent's cleanup cares: the object carries an
// owner reference to an Agent (to release), or its Agent is being deleted
// (and may be waiting for it). The deletion of an endpoint of a live Agent
// does not cost the Agent a reconcile.
func (r *Reconciler) agentOfDependent(ctx context.Context, o client.Object) []reconcile.Request {
	key := client.ObjectKey{Namespace: o.GetNamespace(), Name: agentRefName(o)}
	if key.Name == "" {
		return nil
	}
	if !hasAgentOwnerReference(o) {
		agent := &agentsv1alpha1.Agent{}
		if err := r.Get(ctx, key, agent); err != nil || agent.DeletionTimestamp.IsZero() {
			return nil
		}
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// agentRefName is the Agent an endpoint or thread names.
func agentRefName(o client.Object) string {
	switch d := o.(type) {
	case *agentsv1alpha1.WebhookEndpoint:
		return d.Spec.AgentRef.Name
	case *agentsv1alpha1.AgentThread:
		return d.Spec.AgentRef.Name
	}
	return ""
}

// dependentMatters passes the endpoint and thread events the cleanup acts
// on: a deletion, and an object that carries an owner reference to an Agent.
var dependentMatters = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return hasAgentOwnerReference(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return hasAgentOwnerReference(e.ObjectNew) },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// watchDependents has the Agent reconciler look at the events of endpoints
// and threads that its cleanup acts on.
func (r *Reconciler) watchDependents(b *builder.Builder) *builder.Builder {
	for _, o := range []client.Object{&agentsv1alpha1.WebhookEndpoint{}, &agentsv1alpha1.AgentThread{}} {
		b = b.Watches(o, handler.EnqueueRequestsFromMapFunc(r.agentOfDependent), builder.WithPredicates(dependentMatters))
	}
	return b
}
