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
	"fmt"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

type editView struct {
	page
	Form *endpointForm
}

// editForm is the form that edits ep, filled in from its spec.
func (s *Server) editForm(r *http.Request, ep *agentsv1alpha1.WebhookEndpoint) *endpointForm {
	agent := ep.Spec.AgentRef.Name
	f := &endpointForm{Path: r.URL.Path, Edit: true, Name: ep.Name, Agent: agent, Back: agentPath(ep.Namespace, agent),
		Prompt: ep.Spec.Prompt, Strategy: string(ep.Spec.ThreadStrategy), Hint: ep.Spec.ThreadNamingHint,
		AllowUnauthenticated: ep.Spec.AllowUnauthenticated, Model: ep.Spec.Model,
		Threads: s.threadsOf(r.Context(), ep.Namespace, agent)}
	if ep.Spec.TargetThreadRef != nil {
		f.Thread = ep.Spec.TargetThreadRef.Name
	}
	return f
}

func (s *Server) editPage(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	ep := &agentsv1alpha1.WebhookEndpoint{}
	if err := s.opts.Plugin.Client().Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, ep); err != nil {
		s.fail(w, r, statusOf(err), "Reading webhook endpoint "+ns+"/"+name+": "+err.Error())
		return
	}
	s.render(w, http.StatusOK, "edit.html", editView{page: page{Title: "Edit " + name, Namespace: ns}, Form: s.editForm(r, ep)})
}

// editEndpoint changes the fields of the form in the endpoint's spec, as
// the user (only its owner may); refused, the form is shown again as sent.
func (s *Server) editEndpoint(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	ep := &agentsv1alpha1.WebhookEndpoint{}
	if err := s.opts.Plugin.Client().Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, ep); err != nil {
		s.fail(w, r, statusOf(err), "Reading webhook endpoint "+ns+"/"+name+": "+err.Error())
		return
	}
	f := s.editForm(r, ep)
	f.read(r)
	again := func(status int, msg string) {
		s.render(w, status, "edit.html", editView{page: page{Title: "Edit " + name, Namespace: ns,
			Notice: &notice{Error: true, Text: s.opts.Plugin.Printable(msg)}}, Form: f})
	}
	spec := map[string]any{"prompt": f.Prompt, "threadStrategy": f.Strategy, "allowUnauthenticated": f.AllowUnauthenticated,
		"targetThreadRef": nil, "threadNamingHint": orNull(f.Hint), "model": orNull(f.Model)}
	if f.Strategy == string(agentsv1alpha1.ContinueExisting) {
		if !f.hasThread(f.Thread) {
			again(http.StatusBadRequest, fmt.Sprintf("%q is not a thread of Agent %s: an endpoint may continue only a thread of its own Agent.", f.Thread, f.Agent))
			return
		}
		spec["targetThreadRef"] = map[string]any{"name": f.Thread}
	}
	msg, err := s.opts.Plugin.EditEndpoint(r.Context(), ns, name, spec)
	if err != nil {
		again(statusOf(err), err.Error())
		return
	}
	s.showAgent(w, r, ns, f.Agent, http.StatusOK, &notice{Text: s.opts.Plugin.Printable(msg)})
}

// orNull is v, or nil (which a merge patch removes) when v is empty.
func orNull(v string) any {
	if v == "" {
		return nil
	}
	return v
}
