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
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// idWaiters remembers which endpoints wait for an endpoint ID that another
// endpoint holds: such an endpoint has no ID in its status, so no index
// finds it when the holder goes. The map is rebuilt by the reconciles that
// follow a restart; it holds one entry per waiting endpoint.
type idWaiters struct {
	mu    sync.Mutex
	byID  map[string]map[types.NamespacedName]struct{}
	hopes map[types.NamespacedName]string
}

// wait records that key waits for id.
func (w *idWaiters) wait(id string, key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(key)
	if w.byID == nil {
		w.byID, w.hopes = map[string]map[types.NamespacedName]struct{}{}, map[types.NamespacedName]string{}
	}
	if w.byID[id] == nil {
		w.byID[id] = map[types.NamespacedName]struct{}{}
	}
	w.byID[id][key] = struct{}{}
	w.hopes[key] = id
}

// forget records that key waits for no ID (it has one, or is gone).
func (w *idWaiters) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(key)
}

func (w *idWaiters) forgetLocked(key types.NamespacedName) {
	id, ok := w.hopes[key]
	if !ok {
		return
	}
	delete(w.hopes, key)
	delete(w.byID[id], key)
	if len(w.byID[id]) == 0 {
		delete(w.byID, id)
	}
}

// waitingFor returns the endpoints waiting for id.
func (w *idWaiters) waitingFor(id string) []types.NamespacedName {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(w.byID[id]))
	for key := range w.byID[id] {
		out = append(out, key)
	}
	return out
}
