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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// cacheAt serves one AgentRun whose resourceVersion a test moves, as a
// cache that shows writes when it gets to them.
type cacheAt struct {
	client.Reader
	version atomic.Value // string; "" means not found
	gets    atomic.Int32
}

func (c *cacheAt) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	c.gets.Add(1)
	v, _ := c.version.Load().(string)
	if v == "" {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "agentruns"}, key.Name)
	}
	obj.SetResourceVersion(v)
	return nil
}

func TestWaitForCache(t *testing.T) {
	key := client.ObjectKey{Namespace: "ns", Name: "run-1"}
	shows2 := func(r *agentsv1alpha1.AgentRun) bool { return r.ResourceVersion == "2" }

	t.Run("returns once the cache shows the write", func(t *testing.T) {
		c := &cacheAt{}
		c.version.Store("1")
		time.AfterFunc(20*time.Millisecond, func() { c.version.Store("2") })
		if err := waitForCacheWithin(context.Background(), time.Second, c, key, shows2); err != nil {
			t.Fatal(err)
		}
		if c.gets.Load() < 2 {
			t.Errorf("looked %d times, want it to have looked again", c.gets.Load())
		}
	})
	t.Run("a run gone from the cache is done", func(t *testing.T) {
		c := &cacheAt{}
		c.version.Store("")
		if err := waitForCacheWithin(context.Background(), time.Second, c, key, shows2); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a stalled cache ends the wait at the limit, naming the run", func(t *testing.T) {
		c := &cacheAt{}
		c.version.Store("1")
		start := time.Now()
		err := waitForCacheWithin(context.Background(), 300*time.Millisecond, c, key, shows2)
		if err == nil || !strings.Contains(err.Error(), "AgentRun ns/run-1") {
			t.Fatalf("err = %v, want one naming AgentRun ns/run-1", err)
		}
		if waited := time.Since(start); waited > 5*time.Second {
			t.Errorf("waited %s with a limit of 300ms", waited)
		}
		// Backing off to cacheWaitMax: about 2+4+…+64 ms, then every 100 ms.
		if n := c.gets.Load(); n > 15 {
			t.Errorf("looked %d times in 300ms; want it to back off to every %s", n, cacheWaitMax)
		}
	})
}

func TestUnconfirmedWrites(t *testing.T) {
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "triage"}}
	other := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "other"}}
	shows2 := func(r *agentsv1alpha1.AgentRun) bool { return r.ResourceVersion == "2" }
	c := &cacheAt{}
	c.version.Store("1") // stalled: it does not show the write
	u := &UnconfirmedWrites{limit: 50 * time.Millisecond}
	writes := []Write{{client.ObjectKey{Namespace: "ns", Name: "run-1"}, shows2}, {client.ObjectKey{Namespace: "ns", Name: "run-2"}, shows2}}

	if err := u.Await(ctx, c, req, writes); err == nil || !strings.Contains(err.Error(), "ns/run-1") {
		t.Fatalf("await on a stalled cache: err = %v, want one naming ns/run-1", err)
	}
	gets := c.gets.Load()
	if err := u.Settle(ctx, c, req); err == nil || !strings.Contains(err.Error(), "deciding nothing") {
		t.Fatalf("settle while the cache is still stalled: err = %v, want a refusal to decide", err)
	}
	if c.gets.Load() == gets {
		t.Error("settle did not look at the cache again")
	}
	if err := u.Settle(ctx, c, other); err != nil {
		t.Fatalf("another request's writes are its own: err = %v", err)
	}
	c.version.Store("2") // the informer caught up
	if err := u.Settle(ctx, c, req); err != nil {
		t.Fatalf("settle once the cache shows the writes: %v", err)
	}
	if _, kept := u.m.Load(req); kept {
		t.Error("writes the cache shows are still kept")
	}
	gets = c.gets.Load()
	if err := u.Settle(ctx, c, req); err != nil || c.gets.Load() != gets {
		t.Errorf("settle with nothing kept: err = %v, looked %d times; want nil and no look", err, c.gets.Load()-gets)
	}
}
