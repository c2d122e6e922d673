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

package ui

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// keepAlive is how often an idle event stream sends a comment, so that
// nothing between closes it as idle.
const keepAlive = 25 * time.Second

// rewatchDelay is how long to wait before watching again after the API
// server ended a watch.
const rewatchDelay = time.Second

// events streams server-sent events for an Agent's page: "change" when one
// of the namespace's endpoints or one of the Agent's runs changed (the page
// then fetches its cards again), "failure" when a watch was refused. The
// watches act as the user. Changes that come while one is being sent are
// told once.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	ctx, ns, agent := r.Context(), r.PathValue("ns"), r.PathValue("agent")
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "event: ready\ndata: watching\n\n")
	flusher.Flush()

	changed := make(chan struct{}, 1)
	failed := make(chan error, 2)
	go s.watch(ctx, &agentsv1alpha1.WebhookEndpointList{}, changed, failed, client.InNamespace(ns))
	go s.watch(ctx, &agentsv1alpha1.AgentRunList{}, changed, failed, client.InNamespace(ns),
		client.MatchingLabels{agentsv1alpha1.LabelAgent: agent})
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			fmt.Fprint(w, "event: change\ndata: changed\n\n")
		case err := <-failed:
			fmt.Fprintf(w, "event: failure\ndata: %s\n\n", strings.ReplaceAll(err.Error(), "\n", " "))
			flusher.Flush()
			return
		case <-tick.C:
			fmt.Fprint(w, ": still here\n\n")
		}
		flusher.Flush()
	}
}

// watch watches list's kind until ctx is done, telling changed of every
// event. A watch the API server ends is started again (its first events, the
// objects as they are now, are changes too); one it refuses is a failure.
func (s *Server) watch(ctx context.Context, list client.ObjectList, changed chan<- struct{}, failed chan<- error, opts ...client.ListOption) {
	for ctx.Err() == nil {
		wi, err := s.opts.Plugin.Client().Watch(ctx, list, opts...)
		if err != nil {
			if ctx.Err() == nil {
				failed <- fmt.Errorf("live updates stopped: %w", err)
			}
			return
		}
		drain(ctx, wi, changed)
		wi.Stop()
		select { // not in a hot loop when the API server ends watches at once
		case <-ctx.Done():
		case <-time.After(rewatchDelay):
		}
	}
}

func drain(ctx context.Context, wi watch.Interface, changed chan<- struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			select {
			case changed <- struct{}{}:
			default: // one is pending already
			}
		}
	}
}
