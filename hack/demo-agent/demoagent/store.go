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

package demoagent

import (
	"context"
	"errors"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// taskStore is the SDK's in-memory task store, bounded to limit tasks. The
// SDK's store cannot delete a task, so this one keeps two of them, each of
// at most limit/2 tasks, and drops the older whole when the newer is full:
// it holds the newest limit/2 to limit tasks.
type taskStore struct {
	half int

	mu       sync.Mutex
	cur, old *taskstore.InMemory
	n        int // tasks created in cur
}

var _ taskstore.Store = (*taskStore)(nil)

func newTaskStore(limit int) *taskStore {
	return &taskStore{half: max(limit/2, 1), cur: newInMemory()}
}

func newInMemory() *taskstore.InMemory {
	// The authenticator the SDK's handler gives the store it makes itself.
	return taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: a2asrv.NewTaskStoreAuthenticator()})
}

// Create implements taskstore.Store.
func (s *taskStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	s.mu.Lock()
	if s.n >= s.half {
		s.old, s.cur, s.n = s.cur, newInMemory(), 0
	}
	s.n++
	cur := s.cur
	s.mu.Unlock()
	return cur.Create(ctx, task)
}

// Update implements taskstore.Store.
func (s *taskStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	cur, old := s.generations()
	v, err := cur.Update(ctx, req)
	if errors.Is(err, a2a.ErrTaskNotFound) && old != nil {
		return old.Update(ctx, req)
	}
	return v, err
}

// Get implements taskstore.Store.
func (s *taskStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	cur, old := s.generations()
	t, err := cur.Get(ctx, id)
	if errors.Is(err, a2a.ErrTaskNotFound) && old != nil {
		return old.Get(ctx, id)
	}
	return t, err
}

// List implements taskstore.Store over the newer half only: the demo agent
// authenticates nobody, and the SDK's store lists only a user's tasks, so it
// answers every List with ErrUnauthenticated anyway.
func (s *taskStore) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	cur, _ := s.generations()
	return cur.List(ctx, req)
}

func (s *taskStore) generations() (cur, old *taskstore.InMemory) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.old
}
