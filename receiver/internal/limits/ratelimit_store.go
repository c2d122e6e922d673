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
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	neturl "net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/redis/go-redis/v9"
)

// A shared rate-limit store (--rate-limit-store) keeps both sliding windows
// and the first-refusal-per-window mark in Redis or Valkey, so that the
// replicas together let through exactly the limit. Each check is one call of
// one script, which the store runs atomically. When the store does not
// answer, the replica counts alone (the local windows) until it answers
// again.

// Timeouts of the store's client: a check waits at most storeCallTimeout for
// the store (a store on the same network answers in well under a
// millisecond), then the replica counts alone.
const (
	storeDialTimeout = 500 * time.Millisecond
	storeCallTimeout = 250 * time.Millisecond
	// StoreRetryInterval is how long a replica counts alone after the store
	// failed, before it asks the store again: one call in that time waits
	// for an unreachable store, not every call.
	StoreRetryInterval = time.Second
	// storeLogInterval spaces the log lines of a failing store.
	storeLogInterval = time.Minute
)

// slidingWindowScript checks one call against one sliding window, as
// slidingWindow.take does: KEYS[1] is the window (a sorted set of the
// allowed calls' times in microseconds), KEYS[2] marks a window that has
// refused since it last allowed a call. ARGV: now (µs), the window (µs),
// the limit, the member to add (unique per call). It answers {allowed,
// first refusal, µs until a call would be allowed}.
//
//go:embed ratelimit.lua
var slidingWindowScript string

var windowScript = redis.NewScript(slidingWindowScript)

// Store is the client of a shared store and what the replica knows of
// its health; both limits of a replica share it.
type Store struct {
	client redis.Scripter
	// prefix starts every key.
	prefix string
	// process and seq make each call's member of a window unique across
	// replicas: a random part of this process and a counter.
	process string
	seq     atomic.Uint64
	// downUntil is when (unix nanoseconds of the handler's clock) the
	// replica asks the store again after it failed.
	downUntil atomic.Int64
	// loggedAt is when a failure was last logged.
	logMu    sync.Mutex
	loggedAt time.Time
	errors   func()
	log      logr.Logger
}

// ParseStoreURL reads --rate-limit-store: redis:// or rediss:// (TLS),
// with an optional user, password and database number (/2).
func ParseStoreURL(raw string) (*redis.Options, error) {
	u, err := neturl.Parse(raw)
	if err != nil {
		// Not the URL: it may hold a password.
		var bad *neturl.Error
		if errors.As(err, &bad) {
			err = bad.Err
		}
		return nil, fmt.Errorf("--rate-limit-store is not a URL: %w", err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("--rate-limit-store must be a redis:// or rediss:// URL, got scheme %q", u.Scheme)
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("--rate-limit-store: %w", err)
	}
	return opts, nil
}

// newRateStore connects (lazily: the first check dials) to the store at raw;
// password, when not empty, replaces the URL's.
func NewStore(raw, password string, errs func(), log logr.Logger) (*Store, func() error, error) {
	opts, err := ParseStoreURL(raw)
	if err != nil {
		return nil, nil, err
	}
	if password != "" {
		opts.Password = password
	}
	opts.DialTimeout = storeDialTimeout
	opts.ReadTimeout = storeCallTimeout
	opts.WriteTimeout = storeCallTimeout
	// A check waits for a free connection no longer than for an answer:
	// a flood that holds every connection makes the replica count alone
	// for a second, never makes other calls wait.
	opts.PoolTimeout = storeCallTimeout
	// One retry (a pooled connection the store closed); after that the
	// replica counts alone for storeRetryInterval.
	opts.MaxRetries = 1
	opts.DialerRetries = 1
	opts.DisableIdentity = true
	// The client's own lines (a dial that failed, on every call) go to the
	// debug level: failed logs once a minute.
	redis.SetLogger(clientLog{log})
	c := redis.NewClient(opts)
	return NewStoreOf(c, errs, log), c.Close, nil
}

func NewStoreOf(c redis.Scripter, errs func(), log logr.Logger) *Store {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Store{client: c, prefix: "hookrun:ratelimit:", process: hex.EncodeToString(b[:]), errors: errs, log: log}
}

// take runs the script for the window of limit name of endpoint id. ok is
// false when the store did not answer, or is resting after a failure.
func (s *Store) take(ctx context.Context, name, id string, limit int, now time.Time) (Verdict, bool) {
	if now.UnixNano() < s.downUntil.Load() {
		return Verdict{}, false
	}
	// The key's braces keep both keys of an endpoint on one Redis Cluster slot.
	key := s.prefix + "{" + id + "}:" + name
	member := s.process + "-" + strconv.FormatUint(s.seq.Add(1), 36)
	window := Window.Microseconds()
	// A caller that hangs up does not make the store look down.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeCallTimeout)
	defer cancel()
	res, err := windowScript.Run(ctx, s.client, []string{key, key + ":refusing"}, now.UnixMicro(), window, limit, member).Int64Slice()
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("the rate-limit script answered %d values, want 3", len(res))
	}
	if err != nil {
		s.failed(err, now)
		return Verdict{}, false
	}
	return Verdict{Allowed: res[0] == 1, First: res[1] == 1, RetryAfter: time.Duration(res[2]) * time.Microsecond}, true
}

// failed counts a failure, rests the store for storeRetryInterval and logs
// at most once a storeLogInterval.
func (s *Store) failed(err error, now time.Time) {
	s.errors()
	s.downUntil.Store(now.Add(StoreRetryInterval).UnixNano())
	s.logMu.Lock()
	log := s.loggedAt.IsZero() || now.Sub(s.loggedAt) >= storeLogInterval
	if log {
		s.loggedAt = now
	}
	s.logMu.Unlock()
	if log {
		s.log.Error(err, "the rate-limit store did not answer; this replica counts its rate limits alone until it does (logged once a minute; hookrun_receiver_rate_limit_store_errors_total counts each failure)")
	}
}

// clientLog is go-redis's logger, at logr's debug level.
type clientLog struct{ log logr.Logger }

func (l clientLog) Printf(_ context.Context, format string, v ...any) {
	l.log.V(1).Info(fmt.Sprintf(format, v...))
}

// RateLimiter is one limit (invocation or unauthenticated) over all
// endpoints.
type RateLimiter interface {
	Take(ctx context.Context, id string, now time.Time) Verdict
	Forget(id string)
}

// Shared checks a limit in the store, and counts alone (local) when
// the store does not answer.
type Shared struct {
	Name  string
	Store *Store
	Local *Local
}

func (l *Shared) Take(ctx context.Context, id string, now time.Time) Verdict {
	if v, ok := l.Store.take(ctx, l.Name, id, l.Local.Limit, now); ok {
		return v
	}
	return l.Local.Take(ctx, id, now)
}

// Forget drops the local window of a deleted endpoint; the store's expire
// with the window.
func (l *Shared) Forget(id string) { l.Local.Forget(id) }
