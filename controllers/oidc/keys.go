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

package oidc

import (
	"context"
	"errors"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"k8s.io/utils/clock"
)

const (
	// RefreshInterval is how often, at most, an issuer's keys are read
	// again, counted from the end of the last read: a flood of tokens with
	// made-up key IDs costs the issuer one request a minute per replica.
	RefreshInterval = time.Minute
	// RetryInterval is how soon keys are read again after a read failed,
	// while none were ever read (with keys, RefreshInterval).
	RetryInterval = 10 * time.Second
	// MaxKeyAge is how long keys serve before they are read again in the
	// background (the calls meanwhile use them): a key the issuer dropped
	// stops verifying within it, also for tokens without a key ID.
	MaxKeyAge = 10 * time.Minute
	// FetchTimeout bounds one read of an issuer's keys.
	FetchTimeout = 10 * time.Second
)

// Why no key verifies a token.
var (
	// ErrUnknownKey: the issuer has no key of the token's ID, as of its
	// keys read last (within RefreshInterval).
	ErrUnknownKey = errors.New("the issuer has no key of the token's key ID")
	// ErrKeysUnavailable: the issuer's keys could not be read.
	ErrKeysUnavailable = errors.New("the issuer's keys could not be read")
)

// keySet is one issuer's keys as last read, and the reading of them: one
// read at a time, started by the first call that needs it (and finished
// even if that call hangs up).
type keySet struct {
	name  string // as endpoints name the issuer; "" the cluster's
	fetch fetchFunc
	clock clock.PassiveClock
	// failed, if not nil, is told of every read that failed.
	failed func(issuer string, err error)

	mu     sync.Mutex
	issuer string // as the issuer names itself (its tokens' iss)
	keys   []jose.JSONWebKey
	// readAt is when the keys were read; next when the next read may
	// start.
	readAt, next time.Time
	lastErr      error
	reading      chan struct{} // closed when the read under way ends
}

// lookup returns the issuer's name and the keys that may have signed a
// token with key ID kid (every key when kid is empty), reading the keys
// first when none are known or none has that ID and the last read is old
// enough. Keys older than MaxKeyAge are returned while a read starts in
// the background.
func (s *keySet) lookup(ctx context.Context, kid string) (string, []jose.JSONWebKey, error) {
	now := s.clock.Now()
	s.mu.Lock()
	if keys := s.match(kid); len(keys) > 0 {
		if now.Sub(s.readAt) >= MaxKeyAge {
			s.startRead(now)
		}
		issuer := s.issuer
		s.mu.Unlock()
		return issuer, keys, nil
	}
	done := s.startRead(now)
	s.mu.Unlock()
	if done == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return "", nil, s.missing()
	}
	select {
	case <-done:
	case <-ctx.Done():
		return "", nil, context.Cause(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if keys := s.match(kid); len(keys) > 0 {
		return s.issuer, keys, nil
	}
	return "", nil, s.missing()
}

// startRead returns the read under way, or starts one if the last ended
// long enough before now; nil when neither. s.mu is held.
func (s *keySet) startRead(now time.Time) chan struct{} {
	if s.reading != nil {
		return s.reading
	}
	if now.Before(s.next) {
		return nil
	}
	s.reading = make(chan struct{})
	go s.read(s.reading, now)
	return s.reading
}

// missing is why no key was found: the last read failed, or the keys lack
// the ID.
func (s *keySet) missing() error {
	if s.keys == nil && s.lastErr != nil {
		return errors.Join(ErrKeysUnavailable, s.lastErr)
	}
	return ErrUnknownKey
}

// match returns the keys of ID kid, or all keys for an empty kid. The
// slice returned is never written again: a read replaces it.
func (s *keySet) match(kid string) []jose.JSONWebKey {
	if kid == "" {
		return s.keys
	}
	for i := range s.keys {
		if s.keys[i].KeyID == kid {
			return s.keys[i : i+1 : i+1]
		}
	}
	return nil
}

// read reads the keys, replacing those known when it succeeds (keys that
// could not be read again are kept: an issuer down does not end tokens
// that verified before). The next read may start RefreshInterval after
// this one ended (RetryInterval while no keys were ever read).
func (s *keySet) read(done chan struct{}, started time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), FetchTimeout)
	defer cancel()
	issuer, keys, err := s.fetch(ctx)
	ended := s.clock.Now()
	if err != nil && s.failed != nil {
		s.failed(s.name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
	switch {
	case err == nil:
		s.issuer, s.keys, s.readAt = issuer, keys, started
		s.next = ended.Add(RefreshInterval)
	case s.keys != nil:
		s.next = ended.Add(RefreshInterval)
	default:
		s.next = ended.Add(RetryInterval)
	}
	s.reading = nil
	close(done)
}
