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
	indexThreadAgent       = "spec.agentRef.name"
	indexAgentAuthSecret   = "spec.a2a.authSecretRef.name"
	// indexRunEndpoint indexes AgentRuns by their endpoint label.
	indexRunEndpoint = "metadata.labels.endpoint"
)

type indexSpec struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

var indexes = []indexSpec{
	{&agentsv1alpha1.WebhookEndpoint{}, indexEndpointAgent, func(o client.Object) []string {
		return []string{o.(*agentsv1alpha1.WebhookEndpoint).Spec.AgentRef.Name}
	}},
	{&agentsv1alpha1.WebhookEndpoint{}, indexEndpointThread, func(o client.Object) []string {
		if ref := o.(*agentsv1alpha1.WebhookEndpoint).Spec.TargetThreadRef; ref != nil {
			return []string{ref.Name}
		}
		return nil
	}},
	{&agentsv1alpha1.WebhookEndpoint{}, indexEndpointSecretRef, func(o client.Object) []string {
		if ref := o.(*agentsv1alpha1.WebhookEndpoint).Spec.SecretRef; ref != nil {
			return []string{ref.Name}
		}
		return nil
	}},
	{&agentsv1alpha1.AgentThread{}, indexThreadAgent, func(o client.Object) []string {
		return []string{o.(*agentsv1alpha1.AgentThread).Spec.AgentRef.Name}
	}},
	{&agentsv1alpha1.Agent{}, indexAgentAuthSecret, func(o client.Object) []string {
		if ref := o.(*agentsv1alpha1.Agent).Spec.A2A.AuthSecretRef; ref != nil {
			return []string{ref.Name}
		}
		return nil
	}},
	{&agentsv1alpha1.AgentRun{}, indexRunEndpoint, func(o client.Object) []string {
		if name := o.GetLabels()[agentsv1alpha1.LabelEndpoint]; name != "" {
			return []string{name}
		}
		return nil
	}},
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
