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
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Reading through the operator's cache, for every reconciler: objects the
// cache may not have yet, our own writes the cache must show before the
// next decision, and Secrets, which the cache keeps as metadata only.

// GetOrLive reads obj from the cache and, when the cache does not have
// it, from the API server: an object created just before the event that
// led here may not be cached yet, and taking it for gone would end runs. It
// returns nil when the object does not exist.
func GetOrLive[T client.Object](ctx context.Context, cache client.Client, live client.Reader, key client.ObjectKey, obj T) (T, error) {
	var none T
	err := cache.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		err = live.Get(ctx, key, obj)
	}
	switch {
	case apierrors.IsNotFound(err):
		return none, nil
	case err != nil:
		return none, err
	}
	return obj, nil
}

// Bounds of waitForCacheWithin. Our own writes usually show in the cache within
// milliseconds, so it looks soon and then less often; an informer that has
// shown nothing for cacheWaitLimit is stalled, and the worker is freed
// rather than kept (cluster-api's machinepool controller waits the same way).
const (
	cacheWaitFirst = 2 * time.Millisecond
	cacheWaitMax   = 100 * time.Millisecond
	cacheWaitLimit = 10 * time.Second
)

// waitForCacheWithin waits until the cache shows the run at key as done
// says (or gone): the next reconcile, which may come at once, must see what
// this one wrote. Only our own writes are awaited. After limit
// (cacheWaitLimit in unconfirmedWrites) it fails, naming the run: the
// reconcile returns the error and is retried with backoff instead of
// holding one of the workers every Agent shares, and unconfirmedWrites
// keeps the write so that the retry decides nothing before the cache shows
// it.
func waitForCacheWithin(ctx context.Context, limit time.Duration, cache client.Reader, key client.ObjectKey, done func(*agentsv1alpha1.AgentRun) bool) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for interval := cacheWaitFirst; ; interval = min(2*interval, cacheWaitMax) {
		cached := &agentsv1alpha1.AgentRun{}
		err := cache.Get(ctx, key, cached)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("waiting for the cache to show the write of AgentRun %s/%s: %w", key.Namespace, key.Name, err)
		case done(cached):
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the cache to show the write of AgentRun %s/%s: %w", key.Namespace, key.Name, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// SecretMetadata is a Secret as the metadata cache holds it (no data), to
// read by name.
func SecretMetadata(namespace, name string) *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return obj
}

// Write is one of our writes of a run, and how to tell the cache shows it.
type Write struct {
	Key   client.ObjectKey
	Shown func(*agentsv1alpha1.AgentRun) bool
}

// UnconfirmedWrites remembers, per reconcile request, the writes whose wait
// for the cache gave up (waitForCacheWithin's bound), until the cache shows them.
// A reconcile settles its request's first and decides nothing until they
// are shown: a decision from a cache that does not show our last write
// could start a run past the Agent's capacity or act twice on a run. Only
// writes behind a stalled informer are kept, and each only until it shows.
type UnconfirmedWrites struct {
	// limit bounds each wait (cacheWaitLimit when zero).
	limit time.Duration
	m     sync.Map // reconcile.Request -> []cacheWrite
}

// Await waits until the cache shows each of writes; those it gives up on
// are kept for req, and the error names them.
func (u *UnconfirmedWrites) Await(ctx context.Context, cache client.Reader, req reconcile.Request, writes []Write) error {
	var pending []Write
	var errs []error
	for _, w := range writes {
		// Once one wait gave up, the cache is stalled: the rest are kept
		// without waiting for each again.
		if len(errs) > 0 {
			pending = append(pending, w)
			continue
		}
		if err := waitForCacheWithin(ctx, u.waitLimit(), cache, w.Key, w.Shown); err != nil {
			pending, errs = append(pending, w), append(errs, err)
		}
	}
	if len(pending) > 0 {
		u.m.Store(req, pending)
	} else {
		u.m.Delete(req)
	}
	return errors.Join(errs...)
}

// Settle waits for the writes kept for req, if any. It fails while the
// cache still does not show one of them.
func (u *UnconfirmedWrites) Settle(ctx context.Context, cache client.Reader, req reconcile.Request) error {
	kept, ok := u.m.Load(req)
	if !ok {
		return nil
	}
	writes, _ := kept.([]Write)
	if err := u.Await(ctx, cache, req, writes); err != nil {
		return fmt.Errorf("the cache does not show an earlier write yet; deciding nothing until it does: %w", err)
	}
	return nil
}

func (u *UnconfirmedWrites) waitLimit() time.Duration {
	if u.limit > 0 {
		return u.limit
	}
	return cacheWaitLimit
}
