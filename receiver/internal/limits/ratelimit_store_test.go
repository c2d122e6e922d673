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

package limits

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/redis/go-redis/v9"

	"github.com/hookrun/hookrun/hack/redisserver"
)

// The shared rate-limit store against a real redis-server (Debian's
// package; make test says in one line when it is not on PATH).

// startRedis runs a redis-server for the test, or skips it.
func startRedis(t *testing.T, password string) *redisserver.Server {
	t.Helper()
	if !redisserver.Available() {
		t.Skip("redis-server is not on PATH: the rate-limit store's tests do not run")
	}
	s, err := redisserver.Start(password)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// replica is one receiver's limiter of the store at url, and its count of
// store errors.
type replica struct {
	limiter *Shared
	errors  atomic.Int64
}

func newReplica(t *testing.T, url, password string, limit int) *replica {
	t.Helper()
	r := &replica{}
	store, closeStore, err := NewStore(url, password, func() { r.errors.Add(1) }, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeStore() })
	r.limiter = &Shared{Name: "invocation", Store: store, Local: NewLocal(limit)}
	return r
}

// TestStoreWindowIsTheLocalWindow: the script decides every call as the
// replica's own sliding window does (the oracle), for random times across
// several windows, with the first refusal of each run of refusals and the
// time until a call fits.
func TestStoreWindowIsTheLocalWindow(t *testing.T) {
	s := startRedis(t, "")
	for _, limit := range []int{1, 3, 60} {
		r := newReplica(t, s.URL(), "", limit)
		oracle := newSlidingWindow(limit)
		rng := rand.New(rand.NewPCG(uint64(limit), 7))
		now := time.Unix(1_800_000_000, 0)
		id := "oracle-" + strings.Repeat("x", limit)
		for i := range 2000 {
			now = now.Add(time.Duration(rng.Int64N(int64(3*time.Minute/time.Duration(limit)))) / time.Microsecond * time.Microsecond)
			got := r.limiter.Take(t.Context(), id, now)
			want := oracle.take(now, Window)
			if got != want {
				t.Fatalf("limit %d, call %d at %s: store %+v, own window %+v", limit, i, now.Format(time.RFC3339Nano), got, want)
			}
		}
		if n := r.errors.Load(); n != 0 {
			t.Errorf("limit %d: %d store errors", limit, n)
		}
	}
}

// TestStoreCountsAllReplicasOnce: two replicas' goroutines call at once;
// together they let through exactly the limit, and exactly one refusal is
// the first of its window. Run under -race by make test.
func TestStoreCountsAllReplicasOnce(t *testing.T) {
	const limit, callers, calls = 60, 32, 10
	s := startRedis(t, "hunter2")
	replicas := []*replica{newReplica(t, s.URL(), "hunter2", limit), newReplica(t, s.URL(), "hunter2", limit)}
	now := time.Unix(1_800_000_000, 0)
	var allowed, first atomic.Int64
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for i := range calls {
				v := replicas[g%2].limiter.Take(t.Context(), "busy", now.Add(time.Duration(i)*time.Millisecond))
				if v.Allowed {
					allowed.Add(1)
				}
				if v.First {
					first.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if allowed.Load() != limit || first.Load() != 1 {
		t.Errorf("%d calls of two replicas: %d allowed, %d first refusals; want %d and 1", callers*calls, allowed.Load(), first.Load(), limit)
	}
	for i, r := range replicas {
		if n := r.errors.Load(); n != 0 {
			t.Errorf("replica %d: %d store errors", i, n)
		}
	}
}

// TestStoreDownCountsAlone: a replica whose store is gone counts alone (its
// own window, the limit again), counts the failure, and asks the store
// again a second later; a store that came back (empty) counts for all.
func TestStoreDownCountsAlone(t *testing.T) {
	const limit = 3
	s := startRedis(t, "")
	a, b := newReplica(t, s.URL(), "", limit), newReplica(t, s.URL(), "", limit)
	now := time.Unix(1_800_000_000, 0)
	count := func(calls int, at time.Time) (allowed int) {
		for i := range calls {
			if []*replica{a, b}[i%2].limiter.Take(t.Context(), "ep", at).Allowed {
				allowed++
			}
		}
		return allowed
	}
	if got := count(8, now); got != limit {
		t.Fatalf("with the store: %d of 8 allowed, want %d", got, limit)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := count(8, now); got != 2*limit {
		t.Errorf("store down: %d of 8 allowed, want %d (each replica alone)", got, 2*limit)
	}
	if a.errors.Load() != 1 || b.errors.Load() != 1 {
		t.Errorf("store errors %d and %d, want 1 each: a replica rests the store for %s after a failure", a.errors.Load(), b.errors.Load(), StoreRetryInterval)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	later := now.Add(StoreRetryInterval)
	// Each replica's first call after the rest may meet a pooled
	// connection of the killed server (one retry takes a new one).
	if got := count(8, later); got != limit {
		t.Errorf("store back: %d of 8 allowed, want %d", got, limit)
	}
	if a.errors.Load() != 1 || b.errors.Load() != 1 {
		t.Errorf("store back: errors %d and %d, want still 1 each", a.errors.Load(), b.errors.Load())
	}
}

// TestStoreRefusesBadURLs: the flag takes redis:// and rediss:// only, and
// its errors never repeat a password.
func TestStoreRefusesBadURLs(t *testing.T) {
	for _, raw := range []string{"http://host:6379", "unix:///tmp/redis.sock", "redis://user:s3cret@host:6379/x", "redis://:s3cret@[::1", "valkey://host"} {
		_, err := ParseStoreURL(raw)
		if err == nil {
			t.Errorf("%q: no error", raw)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: the error repeats the password: %v", raw, err)
		}
	}
	for _, raw := range []string{"redis://valkey.cache.svc:6379", "rediss://user@redis.example.com:6380/2"} {
		if _, err := ParseStoreURL(raw); err != nil {
			t.Errorf("%q: %v", raw, err)
		}
	}
}

// TestStoreKeysOfAnEndpointShareASlot: both keys of a window hash to one
// Redis Cluster slot (the script touches both).
func TestStoreKeysOfAnEndpointShareASlot(t *testing.T) {
	s := startRedis(t, "")
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer func() { _ = c.Close() }()
	r := newReplica(t, s.URL(), "", 1)
	r.limiter.Take(context.Background(), "ep-slot", time.Unix(1_800_000_000, 0))
	r.limiter.Take(context.Background(), "ep-slot", time.Unix(1_800_000_000, 0))
	keys, err := c.Keys(t.Context(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("keys %v, want the window and its refusal mark", keys)
	}
	for _, k := range keys {
		if !strings.Contains(k, "{ep-slot}") {
			t.Errorf("key %q has no hash tag of the endpoint", k)
		}
	}
}

// TestStoreLoweredLimit: while a rollout lowers --rate-limit, a window may
// hold more calls than the new limit; a refusal then says when enough of
// them have left it.
func TestStoreLoweredLimit(t *testing.T) {
	s := startRedis(t, "")
	before, after := newReplica(t, s.URL(), "", 5), newReplica(t, s.URL(), "", 2)
	t0 := time.Unix(1_800_000_000, 0)
	for i := range 5 {
		if !before.limiter.Take(t.Context(), "ep", t0.Add(time.Duration(i)*time.Second)).Allowed {
			t.Fatalf("call %d refused under the old limit", i)
		}
	}
	now := t0.Add(10 * time.Second)
	v := after.limiter.Take(t.Context(), "ep", now)
	// Four calls (t0 to t0+3s) must leave before one more fits under 2.
	if want := t0.Add(3 * time.Second).Add(Window).Sub(now); v.Allowed || !v.First || v.RetryAfter != want {
		t.Errorf("under the lowered limit: %+v, want refused, first, retry after %s", v, want)
	}
	if !after.limiter.Take(t.Context(), "ep", now.Add(v.RetryAfter)).Allowed {
		t.Errorf("refused after its retryAfter")
	}
}

// BenchmarkStoreCheck is what one check of a window in the store costs a
// call: one script over loopback (the figure docs/benchmarks.md gives
// beside make bench's accepted calls with the store).
func BenchmarkStoreCheck(b *testing.B) {
	if !redisserver.Available() {
		b.Skip("redis-server is not on PATH")
	}
	s, err := redisserver.Start("")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	store, closeStore, err := NewStore(s.URL(), "", func() { b.Fatal("store error") }, logr.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = closeStore() }()
	l := &Shared{Name: "invocation", Store: store, Local: NewLocal(60)}
	now := time.Unix(1_800_000_000, 0)
	for i := 0; b.Loop(); i++ {
		l.Take(context.Background(), "bench", now.Add(time.Duration(i)*time.Second))
	}
}
