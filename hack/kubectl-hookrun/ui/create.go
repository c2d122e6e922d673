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
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// endpointForm is the form that creates an endpoint of the Agent, kept
// filled in when the API server refuses it.
type endpointForm struct {
	Path                 string
	Name, Prompt         string
	Strategy, Thread     string
	Hint, Model          string
	AllowUnauthenticated bool
	Open                 bool // shown unfolded (after a refusal)
	// Edit: the form edits endpoint Name of Agent, and goes Back after.
	Edit        bool
	Agent, Back string
	// Threads are the AgentThreads of this Agent, the only ones a run
	// may continue.
	Threads []threadOption
}

type threadOption struct{ Name, Title string }

// newEndpointForm is the empty form for Agent agent.
func (s *Server) newEndpointForm(ctx context.Context, ns, agent string) *endpointForm {
	return &endpointForm{Path: agentPath(ns, agent) + "/endpoints", Strategy: string(agentsv1alpha1.NewThreadEachRun),
		Threads: s.threadsOf(ctx, ns, agent)}
}

// threadsOf lists the threads of Agent agent (none if the user may not
// list them).
func (s *Server) threadsOf(ctx context.Context, ns, agent string) []threadOption {
	list := &agentsv1alpha1.AgentThreadList{}
	if err := s.opts.Plugin.Client().List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil
	}
	var threads []threadOption
	for _, t := range list.Items {
		if t.Spec.AgentRef.Name == agent {
			threads = append(threads, threadOption{Name: t.Name, Title: s.opts.Plugin.Printable(t.Spec.Title)})
		}
	}
	sort.Slice(threads, func(i, j int) bool { return threads[i].Name < threads[j].Name })
	return threads
}

// createEndpoint creates an endpoint of the Agent as the user; refused,
// it shows the form again as it was sent, with the API server's words.
func (s *Server) createEndpoint(w http.ResponseWriter, r *http.Request) {
	ctx, ns, agent := r.Context(), r.PathValue("ns"), r.PathValue("agent")
	f := s.newEndpointForm(ctx, ns, agent)
	f.read(r)
	f.Name = strings.TrimSpace(r.PostFormValue("name"))
	ep := &agentsv1alpha1.WebhookEndpoint{}
	ep.Namespace, ep.Name = ns, f.Name
	ep.Spec = agentsv1alpha1.WebhookEndpointSpec{
		AgentRef: agentsv1alpha1.LocalObjectReference{Name: agent}, Prompt: f.Prompt,
		ThreadStrategy: agentsv1alpha1.ThreadStrategy(f.Strategy), ThreadNamingHint: f.Hint,
		AllowUnauthenticated: f.AllowUnauthenticated, Model: f.Model,
	}
	if ep.Spec.ThreadStrategy == agentsv1alpha1.ContinueExisting {
		if !f.hasThread(f.Thread) {
			f.Open = true
			s.showAgentWith(w, r, ns, agent, http.StatusBadRequest, &notice{Error: true,
				Text: s.opts.Plugin.Printable(fmt.Sprintf("%q is not a thread of Agent %s: an endpoint may continue only a thread of its own Agent.", f.Thread, agent))}, f)
			return
		}
		ep.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: f.Thread}
	}
	msg, err := s.opts.Plugin.CreateEndpoint(ctx, ep)
	if err != nil {
		f.Open = true
		s.showAgentWith(w, r, ns, agent, statusOf(err), &notice{Error: true, Text: s.opts.Plugin.Printable(err.Error())}, f)
		return
	}
	s.showAgent(w, r, ns, agent, http.StatusOK, &notice{Text: s.opts.Plugin.Printable(msg)})
}

// read reads the fields a user may set from the posted form.
func (f *endpointForm) read(r *http.Request) {
	f.Prompt = r.PostFormValue("prompt")
	f.Strategy, f.Thread = r.PostFormValue("threadStrategy"), r.PostFormValue("targetThread")
	f.Hint, f.Model = r.PostFormValue("threadNamingHint"), strings.TrimSpace(r.PostFormValue("model"))
	f.AllowUnauthenticated = r.PostFormValue("allowUnauthenticated") == "on"
}

func (f *endpointForm) hasThread(name string) bool {
	for _, t := range f.Threads {
		if t.Name == name {
			return true
		}
	}
	return false
}
