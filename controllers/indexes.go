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
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Field indexes on the operator's cache. Each maps a referenced object back
// to the objects that name it, so a watch on the referenced kind enqueues
// exactly those.
const (
	indexEndpointAgent     = "spec.agentRef.name"
	indexEndpointThread    = "spec.targetThreadRef.name"
	indexEndpointSecretRef = "spec.secretRef.name"
	// indexEndpointIDSecret indexes the endpoints still waiting for the ID
	// their spec.endpointIDSecretRef pins (it is read once).
	indexEndpointIDSecret = "spec.endpointIDSecretRef.name"
	// indexEndpointID indexes endpoints by status.endpointID, in every
	// namespace: two with one ID are a conflict.
	indexEndpointID      = "status.endpointID"
	indexThreadAgent     = "spec.agentRef.name"
	indexAgentAuthSecret = "spec.a2a.authSecretRef.name"
	// indexRunEndpoint indexes AgentRuns by their endpoint label.
	indexRunEndpoint = "metadata.labels.endpoint"
	// indexActiveRunAgent indexes the AgentRuns not finished yet (queued
	// or running) by their agent reference: what dispatch decisions look
	// at, however long the history of finished runs.
	indexActiveRunAgent = "activeRunsByAgent"
	// indexRunThread indexes AgentRuns by the AgentThread they are
	// appended to (spec, not the thread label, which anyone who may patch
	// a run could change): a thread's status is derived from its runs.
	indexRunThread = "runsByThread"
	// indexSigningKeyEndpoint finds the signing-key Secrets (metadata) of
	// an endpoint by "namespace/name".
	indexSigningKeyEndpoint = "signingKeyEndpoint"
)

type indexSpec struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

var indexes = []indexSpec{
	{&agentsv1alpha1.WebhookEndpoint{}, indexEndpointAgent, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		return []string{ep.Spec.AgentRef.Name}
	})},
	{&agentsv1alpha1.WebhookEndpoint{}, indexEndpointThread, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		return refName(ep.Spec.TargetThreadRef)
	})},
	{&agentsv1alpha1.WebhookEndpoint{}, indexEndpointSecretRef, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		if ep.Spec.SecretRef == nil {
			return nil
		}
		return []string{ep.Spec.SecretRef.Name} // a SecretKeyReference, not a LocalObjectReference
	})},
	{&agentsv1alpha1.WebhookEndpoint{}, indexEndpointIDSecret, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		if ep.Spec.EndpointIDSecretRef == nil || ep.Status.EndpointID != "" {
			return nil
		}
		return []string{ep.Spec.EndpointIDSecretRef.Name}
	})},
	{&agentsv1alpha1.WebhookEndpoint{}, indexEndpointID, by(func(ep *agentsv1alpha1.WebhookEndpoint) []string {
		if ep.Status.EndpointID == "" {
			return nil
		}
		return []string{ep.Status.EndpointID}
	})},
	{&agentsv1alpha1.AgentThread{}, indexThreadAgent, by(func(th *agentsv1alpha1.AgentThread) []string {
		return []string{th.Spec.AgentRef.Name}
	})},
	{&agentsv1alpha1.Agent{}, indexAgentAuthSecret, by(func(a *agentsv1alpha1.Agent) []string {
		if a.Spec.A2A.AuthSecretRef == nil {
			return nil
		}
		return []string{a.Spec.A2A.AuthSecretRef.Name}
	})},
	{&agentsv1alpha1.AgentRun{}, indexRunEndpoint, byLabel(agentsv1alpha1.LabelEndpoint)},
	{secretMetadata("", ""), indexSigningKeyEndpoint, func(o client.Object) []string {
		if req, ok := signingKeyEndpoint(o); ok {
			return []string{req.String()}
		}
		return nil
	}},
	{&agentsv1alpha1.AgentRun{}, indexRunThread, by(func(run *agentsv1alpha1.AgentRun) []string {
		if k := threadKey(run); k != "" {
			return []string{k}
		}
		return nil
	})},
	{&agentsv1alpha1.AgentRun{}, indexActiveRunAgent, by(func(run *agentsv1alpha1.AgentRun) []string {
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

// setupIndexes registers every field index with the manager's cache.
func setupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	for _, ix := range indexes {
		if err := indexer.IndexField(ctx, ix.obj, ix.field, ix.extract); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", ix.obj, ix.field, err)
		}
	}
	return nil
}
