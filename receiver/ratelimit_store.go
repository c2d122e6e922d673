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
	"sigs.k8s.io/controller-runtime/pkg/manager"
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
	// storeRetryInterval is how long a replica counts alone after the store
	// failed, before it asks the store again: one call in that time waits
	// for an unreachable store, not every call.
	storeRetryInterval = time.Second
	// storeLogInterval spaces the log lines of a failing store.
	storeLogInterval = time.Minute
)

// StorePasswordEnv names the environment variable with the store's password
// (the chart sets it from receiver.rateLimit.existingSecret); a password in
// the URL is used when it is unset.
const StorePasswordEnv = "HOOKRUN_RATE_LIMIT_STORE_PASSWORD"

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

// rateStore is the client of a shared store and what the replica knows of
// its health; both limits of a replica share it.
type rateStore struct {
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

// parseStoreURL reads --rate-limit-store: redis:// or rediss:// (TLS),
// with an optional user, password and database number (/2).
func parseStoreURL(raw string) (*redis.Options, error) {
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
func newRateStore(raw, password string, errs func(), log logr.Logger) (*rateStore, func() error, error) {
	opts, err := parseStoreURL(raw)
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
	return newRateStoreOf(c, errs, log), c.Close, nil
}

func newRateStoreOf(c redis.Scripter, errs func(), log logr.Logger) *rateStore {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &rateStore{client: c, prefix: "hookrun:ratelimit:", process: hex.EncodeToString(b[:]), errors: errs, log: log}
}

// take runs the script for the window of limit name of endpoint id. ok is
// false when the store did not answer, or is resting after a failure.
func (s *rateStore) take(ctx context.Context, name, id string, limit int, now time.Time) (verdict, bool) {
	if now.UnixNano() < s.downUntil.Load() {
		return verdict{}, false
	}
	// The key's braces keep both keys of an endpoint on one Redis Cluster slot.
	key := s.prefix + "{" + id + "}:" + name
	member := s.process + "-" + strconv.FormatUint(s.seq.Add(1), 36)
	window := RateWindow.Microseconds()
	// A caller that hangs up does not make the store look down.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeCallTimeout)
	defer cancel()
	res, err := windowScript.Run(ctx, s.client, []string{key, key + ":refusing"}, now.UnixMicro(), window, limit, member).Int64Slice()
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("the rate-limit script answered %d values, want 3", len(res))
	}
	if err != nil {
		s.failed(err, now)
		return verdict{}, false
	}
	return verdict{allowed: res[0] == 1, first: res[1] == 1, retryAfter: time.Duration(res[2]) * time.Microsecond}, true
}

// failed counts a failure, rests the store for storeRetryInterval and logs
// at most once a storeLogInterval.
func (s *rateStore) failed(err error, now time.Time) {
	s.errors()
	s.downUntil.Store(now.Add(storeRetryInterval).UnixNano())
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

// setRateLimiters makes the invocation and unauthenticated limits: each
// replica's own, or kept in the store of --rate-limit-store, whose client
// closes when mgr stops.
func (h *Handler) setRateLimiters(mgr manager.Manager, opts *Options) error {
	inv, pre := newLimiters(opts.RateLimit), newLimiters(opts.UnauthenticatedRateLimit)
	h.invocation, h.preParse = inv, pre
	if opts.RateLimitStore == "" {
		return nil
	}
	store, closeStore, err := newRateStore(opts.RateLimitStore, opts.RateLimitStorePassword, h.metrics.storeErrors.Inc, h.log)
	if err != nil {
		return err
	}
	h.invocation = &sharedLimiters{name: limitInvocation, store: store, local: inv}
	h.preParse = &sharedLimiters{name: limitUnauthenticated, store: store, local: pre}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return closeStore()
	}))
}

// clientLog is go-redis's logger, at logr's debug level.
type clientLog struct{ log logr.Logger }

func (l clientLog) Printf(_ context.Context, format string, v ...any) {
	l.log.V(1).Info(fmt.Sprintf(format, v...))
}

// rateLimiter is one limit (invocation or unauthenticated) over all
// endpoints.
type rateLimiter interface {
	take(ctx context.Context, id string, now time.Time) verdict
	forget(id string)
}

// sharedLimiters checks a limit in the store, and counts alone (local) when
// the store does not answer.
type sharedLimiters struct {
	name  string
	store *rateStore
	local *limiters
}

func (l *sharedLimiters) take(ctx context.Context, id string, now time.Time) verdict {
	if v, ok := l.store.take(ctx, l.name, id, l.local.limit, now); ok {
		return v
	}
	return l.local.take(ctx, id, now)
}

// forget drops the local window of a deleted endpoint; the store's expire
// with the window.
func (l *sharedLimiters) forget(id string) { l.local.forget(id) }
