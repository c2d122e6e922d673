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
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	toolscache "k8s.io/client-go/tools/cache"
)

// server is the receive route's HTTP server, run by the manager. It starts
// listening once the informers have synced. When the manager stops
// (SIGTERM) it drains: its readiness check fails at once, it keeps serving
// new connections for delay (keep-alives off, so that clients reconnect to
// another replica), then stops accepting and lets the calls in flight
// finish, for ShutdownTimeout at most.
//
// The manager stops it first of all (it is in the group of runnables that
// need no leader election, stopped before the caches and the health probe
// server), so the informers keep the table current and /readyz is served
// while it drains.
type server struct {
	addr    string
	handler http.Handler
	ready   func() bool
	log     logr.Logger
	// delay is --shutdown-delay.
	delay time.Duration
	// draining is set when the manager stops the server.
	draining atomic.Bool
	// drained, if set, is closed when Start returns: nothing is served any more.
	drained chan struct{}
	// listening, if set, receives the bound address (tests listen on :0).
	listening chan<- string
}

// drainingCheckName names the readiness check that fails once the replica
// drains.
const drainingCheckName = "draining"

// errDraining: the replica is stopping; Services and load balancers should
// send it nothing new.
var errDraining = errors.New("this replica is shutting down")

// NeedLeaderElection: every receiver replica serves.
func (s *server) NeedLeaderElection() bool { return false }

// readyz fails once the server drains.
func (s *server) readyz(*http.Request) error {
	if s.draining.Load() {
		return errDraining
	}
	return nil
}

func (s *server) Start(ctx context.Context) error {
	if s.drained != nil {
		defer close(s.drained)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), s.ready) {
		s.draining.Store(true)
		return nil // stopped before the caches synced
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.addr, err)
	}
	srv := newHTTPServer(s.handler)
	s.log.Info("serving the receive route", "address", ln.Addr().String())
	if s.listening != nil {
		s.listening <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return s.drain(srv, errc)
}

// drain fails the readiness check, serves for the delay without
// keep-alives, then stops accepting and waits for the calls in flight.
func (s *server) drain(srv *http.Server, errc <-chan error) error {
	s.draining.Store(true)
	// Answers say "Connection: close" and idle connections are closed:
	// clients open their next connection through the Service, which
	// soon sends it to another replica.
	srv.SetKeepAlivesEnabled(false)
	s.log.Info("stopping: serving the receive route for the shutdown delay, then draining the calls in flight", "delay", s.delay, "drainTimeout", ShutdownTimeout)
	delay := time.NewTimer(s.delay)
	defer delay.Stop()
	select {
	case err := <-errc:
		return err
	case <-delay.C:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("draining the receive route: %w", err)
	}
	s.log.Info("the receive route is drained")
	return nil
}

// newHTTPServer applies the receiver's timeouts and header bound.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}
