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
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
)

// What makes the endpoint reconciler look at an endpoint again, besides the
// endpoint itself (SetupWithManager lists the watches): map functions from
// a changed object to the endpoints it concerns.

// endpointsSharingID maps an endpoint to the others with its endpoint ID:
// when one goes or changes its ID, the newer ones learn whether they are
// served now.
func (r *Reconciler) endpointsSharingID(ctx context.Context, o client.Object) []reconcile.Request {
	ep, ok := o.(*agentsv1alpha1.WebhookEndpoint)
	if !ok || ep.Status.EndpointID == "" {
		return nil
	}
	same, err := r.endpointsWithID(ctx, ep.Status.EndpointID, ep)
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(same))
	for i := range same {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&same[i])})
	}
	return out
}

// endpointsWaitingForID maps a deleted endpoint to those waiting for its ID
// (a pinned copy that was never written): one of its namespace takes it now,
// and for IDHandoverReserve no other namespace's (handOver). Only
// deletions: an ID never changes while its holder exists, and a holder's
// other writes must not wake every copy of its ID.
func (r *Reconciler) endpointsWaitingForID(_ context.Context, o client.Object) []reconcile.Request {
	ep, ok := o.(*agentsv1alpha1.WebhookEndpoint)
	if !ok || ep.Status.EndpointID == "" {
		return nil
	}
	r.idWaiters.handOver(ep.Status.EndpointID, ep.Namespace, r.Clock.Now())
	var out []reconcile.Request
	for _, key := range r.idWaiters.waitingFor(ep.Status.EndpointID) {
		out = append(out, reconcile.Request{NamespacedName: key})
	}
	return out
}

// endpointsForSecret enqueues the endpoint whose signing key or generated
// Secret this is (or would be), the endpoints whose spec.secretRef names it,
// and those without an ID whose spec.endpointIDSecretRef names it.
func (r *Reconciler) endpointsForSecret(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() == r.Namespace {
		if req, ok := cached.SigningKeyEndpoint(o); ok {
			return []reconcile.Request{req}
		}
	}
	reqs := cached.MapByIndex(r.Client, &agentsv1alpha1.WebhookEndpointList{}, cached.IndexEndpointSecretRef)(ctx, o)
	reqs = append(reqs, cached.MapByIndex(r.Client, &agentsv1alpha1.WebhookEndpointList{}, cached.IndexEndpointIDSecret)(ctx, o)...)
	// By name, not label: a foreign Secret holding the generated name blocks
	// the endpoint, and its deletion must unblock it.
	if ep, ok := strings.CutSuffix(o.GetName(), agentsv1alpha1.GeneratedSecretName("")); ok && ep != "" {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ep}})
	}
	return reqs
}

// notAnAccountingWrite passes every event of an endpoint but an update
// that changes the fields package accounting writes (status.runs,
// status.rejections) and nothing else: nothing this reconciler decides reads
// them, and each run counted would otherwise cost a reconcile here. Any
// other status write (its own, or someone's with access to /status) passes,
// and so does an update the cache shows no change in (an annotation it does
// not keep).
var notAnAccountingWrite = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*agentsv1alpha1.WebhookEndpoint)
		ep, ok2 := e.ObjectNew.(*agentsv1alpha1.WebhookEndpoint)
		if !ok1 || !ok2 {
			return true
		}
		if equality.Semantic.DeepEqual(old.Status.Runs, ep.Status.Runs) && equality.Semantic.DeepEqual(old.Status.Rejections, ep.Status.Rejections) {
			return true
		}
		oldMeta, meta := old.ObjectMeta, ep.ObjectMeta
		oldMeta.ResourceVersion, meta.ResourceVersion = "", ""
		oldMeta.ManagedFields, meta.ManagedFields = nil, nil
		oldStatus, status := old.Status, ep.Status
		oldStatus.Runs, status.Runs = agentsv1alpha1.RunCounts{}, agentsv1alpha1.RunCounts{}
		oldStatus.Rejections, status.Rejections = nil, nil
		return !equality.Semantic.DeepEqual(oldMeta, meta) || !equality.Semantic.DeepEqual(old.Spec, ep.Spec) ||
			!equality.Semantic.DeepEqual(oldStatus, status)
	},
}
