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

package cached

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Field indexes on the operator's cache. Each maps a referenced object back
// to the objects that name it, so a watch on the referenced kind enqueues
// exactly those.
const (
	IndexEndpointAgent     = "spec.agentRef.name"
	IndexEndpointThread    = "spec.targetThreadRef.name"
	IndexEndpointSecretRef = "spec.secretRef.name"
	// indexEndpointIDSecret indexes the endpoints still waiting for the ID
	// their spec.endpointIDSecretRef pins (it is read once).
	IndexEndpointIDSecret = "spec.endpointIDSecretRef.name"
	// indexEndpointID indexes endpoints by status.endpointID, in every
	// namespace: two with one ID are a conflict.
	IndexEndpointID  = "status.endpointID"
	IndexThreadAgent = "spec.agentRef.name"
	// IndexAgentSecrets indexes Agents by the Secrets they name: the
	// token of spec.a2a.authSecretRef and those of spec.a2a.tls.
	IndexAgentSecrets = "agentSecrets"
	// IndexRunEndpoint indexes AgentRuns by their endpoint label.
	IndexRunEndpoint = "metadata.labels.endpoint"
	// indexActiveRunAgent indexes the AgentRuns not finished yet (queued
	// or running) by their agent reference: what dispatch decisions look
	// at, however long the history of finished runs.
	IndexActiveRunAgent = "activeRunsByAgent"
	// indexRunThread indexes AgentRuns by the AgentThread they are
	// appended to (spec, not the thread label, which anyone who may patch
	// a run could change): a thread's status is derived from its runs.
	IndexRunThread = "runsByThread"
	// indexSigningKeyEndpoint finds the signing-key Secrets (metadata) of
	// an endpoint by "namespace/name".
	IndexSigningKeyEndpoint = "SigningKeyEndpoint"
)

type indexSpec struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

var indexes = []indexSpec{
	{&agentsv1alpha1.WebhookEndpoint{}, IndexEndpointAgent, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		return []string{ep.Spec.AgentRef.Name}
	})},
	{&agentsv1alpha1.WebhookEndpoint{}, IndexEndpointThread, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		return refName(ep.Spec.TargetThreadRef)
	})},
	{&agentsv1alpha1.WebhookEndpoint{}, IndexEndpointSecretRef, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		if ep.Spec.SecretRef == nil {
			return nil
		}
		return []string{ep.Spec.SecretRef.Name} // a SecretKeyReference, not a LocalObjectReference
	})},
	{&agentsv1alpha1.WebhookEndpoint{}, IndexEndpointIDSecret, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		if ep.Spec.EndpointIDSecretRef == nil || ep.Status.EndpointID != "" {
			return nil
		}
		return []string{ep.Spec.EndpointIDSecretRef.Name}
	})},
	{&agentsv1alpha1.WebhookEndpoint{}, IndexEndpointID, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		if ep.Status.EndpointID == "" {
			return nil
		}
		return []string{ep.Status.EndpointID}
	})},
	{&agentsv1alpha1.AgentThread{}, IndexThreadAgent, by(func(th *agentsv1alpha1.AgentThread) []string {
		return []string{th.Spec.AgentRef.Name}
	})},
	{&agentsv1alpha1.Agent{}, IndexAgentSecrets, by(func(a *agentsv1alpha1.Agent) []string {
		var names []string
		if ref := a.Spec.A2A.AuthSecretRef; ref != nil {
			names = append(names, ref.Name)
		}
		if t := a.Spec.A2A.TLS; t != nil && t.CASecretRef != nil {
			names = append(names, t.CASecretRef.Name)
		}
		if t := a.Spec.A2A.TLS; t != nil && t.ClientCertSecretRef != nil {
			names = append(names, t.ClientCertSecretRef.Name)
		}
		slices.Sort(names)
		return slices.Compact(names) // a cert-manager Secret holds the CA and the client certificate
	})},
	{&agentsv1alpha1.AgentRun{}, IndexRunEndpoint, byLabel(agentsv1alpha1.LabelEndpoint)},
	{SecretMetadata("", ""), IndexSigningKeyEndpoint, func(o client.Object) []string {
		if req, ok := SigningKeyEndpoint(o); ok {
			return []string{req.String()}
		}
		return nil
	}},
	{&agentsv1alpha1.AgentRun{}, IndexRunThread, by(func(run *agentsv1alpha1.AgentRun) []string {
		if k := agentsv1alpha1.ThreadKey(run); k != "" {
			return []string{k}
		}
		return nil
	})},
	{&agentsv1alpha1.AgentRun{}, IndexActiveRunAgent, by(func(run *agentsv1alpha1.AgentRun) []string {
		if run.EffectiveState().IsFinished() {
			return nil
		}
		return []string{run.Spec.AgentRef.Name}
	})},
}

// by adapts a typed extractor to a client.IndexerFunc.
func by[T client.Object](extract func(T) []string) client.IndexerFunc {
	return func(o client.Object) []string {
		if t, ok := o.(T); ok {
			return extract(t)
		}
		return nil
	}
}

func byLabel(key string) client.IndexerFunc {
	return func(o client.Object) []string {
		if v := o.GetLabels()[key]; v != "" {
			return []string{v}
		}
		return nil
	}
}

func refName(ref *agentsv1alpha1.LocalObjectReference) []string {
	if ref == nil {
		return nil
	}
	return []string{ref.Name}
}

// SetupIndexes registers every field index with the manager's cache.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	for _, ix := range indexes {
		if err := indexer.IndexField(ctx, ix.obj, ix.field, ix.extract); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", ix.obj, ix.field, err)
		}
	}
	return nil
}

// SigningKeyEndpoint maps a signing-key Secret to its endpoint, so a
// deleted or changed key is put back and an orphan is removed.
func SigningKeyEndpoint(o client.Object) (reconcile.Request, bool) {
	l := o.GetLabels()
	if l[agentsv1alpha1.LabelSigningKey] != "true" || l[agentsv1alpha1.LabelEndpointNamespace] == "" || l[agentsv1alpha1.LabelEndpoint] == "" {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{
		Namespace: l[agentsv1alpha1.LabelEndpointNamespace], Name: l[agentsv1alpha1.LabelEndpoint],
	}}, true
}

// MapByIndex returns a map function that enqueues the objects of list's kind
// in the event object's namespace whose index field equals its name.
func MapByIndex(c client.Client, list client.ObjectList, field string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		l, ok := list.DeepCopyObject().(client.ObjectList)
		if !ok {
			return nil
		}
		if err := c.List(ctx, l, client.InNamespace(o.GetNamespace()), client.MatchingFields{field: o.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing objects that reference a changed object", "index", field, "name", o.GetName())
			return nil
		}
		var reqs []reconcile.Request
		_ = meta.EachListItem(l, func(item runtime.Object) error {
			if obj, ok := item.(client.Object); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
			}
			return nil
		})
		return reqs
	}
}

// RunEndpointAfter enqueues an AgentRun's endpoint (its endpoint label)
// after delay. The work queue keeps one pending entry per endpoint, so any
// number of run events within delay become one reconcile and at most one
// status write.
func RunEndpointAfter(delay time.Duration) handler.EventHandler {
	add := func(o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if ep := o.GetLabels()[agentsv1alpha1.LabelEndpoint]; ep != "" {
			q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ep}}, delay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
	}
}
