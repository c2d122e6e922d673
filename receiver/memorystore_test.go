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

package receiver

import (
	"bytes"
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/store"
)

// In-memory stand-ins for the API server, for fuzzing and the bad-input
// table; the behaviour against a real API server is in receiver_test.go.

type memoryStore struct {
	mu      sync.Mutex
	runs    []*agentsv1alpha1.AgentRun
	bodies  map[string][]byte
	skipped []string
}

func (m *memoryStore) CreateRun(_ context.Context, run *agentsv1alpha1.AgentRun, data map[string][]byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.bodies[run.Name]; ok {
		return true, nil
	}
	m.runs = append(m.runs, run)
	if m.bodies == nil {
		m.bodies = map[string][]byte{}
	}
	m.bodies[run.Name] = bytes.Clone(data[agentsv1alpha1.PayloadBodyKey])
	return false, nil
}

func (m *memoryStore) Fields(_ context.Context, ep *agentsv1alpha1.WebhookEndpoint) (store.FieldsSpec, error) {
	return store.FieldsSpec{Generation: ep.Generation, Fields: ep.Spec.Fields, Payload: ep.Spec.Payload}, nil
}

func (m *memoryStore) Duplicate(_ context.Context, _, name string, _ map[string][]byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.bodies[name]
	return ok, nil
}

func (m *memoryStore) RecordSkipped(_ context.Context, run *agentsv1alpha1.AgentRun, message string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.skipped = append(m.skipped, message)
	return nil
}

// prompt returns the prompt the endpoint holds: in memory nothing strips it.
func (m *memoryStore) Prompt(_ context.Context, ep *agentsv1alpha1.WebhookEndpoint) (string, error) {
	return ep.Spec.Prompt, nil
}

func (m *memoryStore) Forget(types.UID) {}

type allowAll struct{}

func (allowAll) IsMember(context.Context, string, string, *agentsv1alpha1.Owner) (bool, error) {
	return true, nil
}
