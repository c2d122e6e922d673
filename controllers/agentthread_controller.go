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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// +kubebuilder:rbac:groups=agents.hookrun.dev,resources=agentthreads,verbs=patch

// AgentThreadReconciler reports whether a thread's Agent exists, makes the
// Agent the thread's owner and shows the thread's A2A context.
type AgentThreadReconciler struct {
	client.Client
}

// threadCondition is the AgentThread's Ready condition; agent is nil when it
// does not exist.
func threadCondition(th *agentsv1alpha1.AgentThread, agent *agentsv1alpha1.Agent) metav1.Condition {
	if agent == nil {
		return condition(agentsv1alpha1.ConditionReady, false, agentsv1alpha1.ReasonAgentNotFound,
			fmt.Sprintf("Agent %q does not exist in this namespace; create it (spec.agentRef cannot change)", th.Spec.AgentRef.Name))
	}
	if agent.Spec.Archived {
		return condition(agentsv1alpha1.ConditionReady, false, agentsv1alpha1.ReasonAgentArchived,
			fmt.Sprintf("Agent %q is archived; no runs are appended until it is unarchived", agent.Name))
	}
	return condition(agentsv1alpha1.ConditionReady, true, agentsv1alpha1.ReasonAvailable,
		fmt.Sprintf("Thread of Agent %q", agent.Name))
}

// Reconcile sets the thread's Ready condition and context.
func (r *AgentThreadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
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
	default:
		err = ensureOwner(ctx, r.Client, th, agent)
	}
	// An attached context (spec.contextId) is the thread's context from the start.
	if th.Status.ContextID == "" && th.Spec.ContextID != "" {
		th.Status.ContextID = th.Spec.ContextID
	}
	cond := threadCondition(th, agent)
	if err != nil {
		cond = reconcileFailedCondition(err)
	} else {
		th.Status.ObservedGeneration = th.Generation
	}
	cond.ObservedGeneration = th.Generation
	meta.SetStatusCondition(&th.Status.Conditions, cond)
	return ctrl.Result{}, errors.Join(err, patchStatusIfChanged(ctx, r.Client, before, th, &before.Status, &th.Status))
}

// SetupWithManager registers the reconciler; Agent changes re-check their threads.
func (r *AgentThreadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&agentsv1alpha1.AgentThread{}).
		Named("agentthread").
		Watches(&agentsv1alpha1.Agent{},
			handler.EnqueueRequestsFromMapFunc(mapByIndex(r.Client, &agentsv1alpha1.AgentThreadList{}, indexThreadAgent)),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}
