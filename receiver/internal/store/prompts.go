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

package store

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// promptCache holds the prompts of the endpoints called last. The informer
// keeps no prompt (endpoints.StripToUse): a prompt is up to 64 KiB, every replica
// would hold every endpoint's, and 2,000 of the largest took more memory
// than a replica has. A run copies its endpoint's prompt when it is stored,
// so the prompt is read then: from here when this replica read it for the
// endpoint's generation the informer shows (or a later one), else with one
// GET of the endpoint from the API server, whose answer is kept. An
// endpoint called again within promptCacheEntries others costs no request.
type promptCache struct {
	reader  client.Reader
	entries *lru.Cache
}

// promptEntry is an endpoint's prompt and spec.fields at generation (the
// informer keeps no fields either: 32 of 1,024 characters).
type promptEntry struct {
	generation int64
	prompt     string
	fields     map[string]agentsv1alpha1.FieldExpression
	payload    agentsv1alpha1.PayloadMode
}

// FieldsSpec is an endpoint's spec.fields and spec.payload at generation:
// read together, so that a run sends the fields it has.
type FieldsSpec struct {
	Generation int64
	Fields     map[string]agentsv1alpha1.FieldExpression
	Payload    agentsv1alpha1.PayloadMode
}

func newPromptCache(reader client.Reader) *promptCache {
	return &promptCache{reader: reader, entries: lru.New(promptCacheEntries)}
}

// promptOf returns ep's prompt at ep's generation or later: the prompt when
// the call came, as the run records it.
func (p *promptCache) promptOf(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (string, error) {
	e, err := p.entryOf(ctx, ep)
	return e.prompt, err
}

// fieldsOf returns ep's spec.fields and spec.payload at ep's generation or
// later.
func (p *promptCache) fieldsOf(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (FieldsSpec, error) {
	e, err := p.entryOf(ctx, ep)
	return FieldsSpec{Generation: e.generation, Fields: e.fields, Payload: e.payload}, err
}

// entryOf returns what is kept of ep at ep's generation or later, reading
// it if nothing is.
func (p *promptCache) entryOf(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (promptEntry, error) {
	if v, ok := p.entries.Get(ep.UID); ok {
		if e := v.(promptEntry); e.generation >= ep.Generation { //nolint:errcheck // only promptEntry is stored
			return e, nil
		}
	}
	fresh := &agentsv1alpha1.WebhookEndpoint{}
	if err := p.reader.Get(ctx, client.ObjectKey{Namespace: ep.Namespace, Name: ep.Name}, fresh); err != nil {
		return promptEntry{}, fmt.Errorf("reading the prompt of WebhookEndpoint %s/%s: %w", ep.Namespace, ep.Name, err)
	}
	if fresh.UID != ep.UID {
		return promptEntry{}, fmt.Errorf("reading the prompt of WebhookEndpoint %s/%s: it was deleted and created again", ep.Namespace, ep.Name)
	}
	e := promptEntry{generation: fresh.Generation, prompt: fresh.Spec.Prompt, fields: fresh.Spec.Fields, payload: fresh.Spec.Payload}
	p.entries.Add(ep.UID, e)
	return e, nil
}

// forget drops a deleted endpoint's prompt.
func (p *promptCache) forget(uid types.UID) {
	p.entries.Remove(uid)
}
