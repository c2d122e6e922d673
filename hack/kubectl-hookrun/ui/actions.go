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
	"net/http"
	"strings"
)

// The actions. Each acts as the user through the plugin's own code and
// answers with the Agent's page and the outcome above the cards: what the
// command would print, or the refusal as the API server wrote it. The
// outcome is rendered into the answer, never put in a URL.

// returnTo is the Agent whose page an action answers with: the form's
// "agent" field.
func returnTo(r *http.Request) string {
	return r.PostFormValue("agent")
}

func (s *Server) pause(pause bool) http.HandlerFunc {
	return s.act(func(ctx context.Context, ns, name string) (string, error) {
		return s.opts.Plugin.SetPaused(ctx, ns, name, pause)
	})
}

// act does an action on an endpoint that needs no confirmation.
func (s *Server) act(do func(ctx context.Context, ns, name string) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ns, name := r.PathValue("ns"), r.PathValue("name")
		msg, err := do(r.Context(), ns, name)
		s.answer(w, r, ns, msg, err)
	}
}

func (s *Server) takeOwnership(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.confirmed(w, r, takeOwnershipQuestion(name), "Take ownership and resume") {
		return
	}
	msg, err := s.opts.Plugin.TakeOwnership(r.Context(), ns, name)
	s.answer(w, r, ns, msg, err)
}

func (s *Server) deleteEndpoint(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.confirmed(w, r, deleteQuestion(name), "Delete") {
		return
	}
	msg, err := s.opts.Plugin.Delete(r.Context(), ns, name)
	s.answer(w, r, ns, msg, err)
}

// rotate and addSecret show the new secret once, in the answer to the
// POST: never in an address or the log, and the answer is not stored
// (Cache-Control: no-store, as every answer of the UI).
func (s *Server) rotate(w http.ResponseWriter, r *http.Request) {
	s.newSecret(w, r, rotateQuestion(r.PathValue("name")), "Rotate the secret", s.opts.Plugin.Rotate)
}

func (s *Server) addSecret(w http.ResponseWriter, r *http.Request) {
	s.newSecret(w, r, addSecretQuestion(r.PathValue("name")), "Add a secret", s.opts.Plugin.AddSecret)
}

func (s *Server) newSecret(w http.ResponseWriter, r *http.Request, question, label string, do func(ctx context.Context, ns, name string) (NewSecret, error)) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.confirmed(w, r, question, label) {
		return
	}
	made, err := do(r.Context(), ns, name)
	p := s.opts.Plugin
	n := &notice{Error: err != nil, Text: p.Printable(made.Said)}
	status := http.StatusOK
	if err != nil {
		n.Text, status = p.Printable(strings.TrimSpace(made.Said+"\n"+err.Error())), statusOf(err)
	} else {
		n.Secret, n.Warning = p.Printable(made.Secret), p.Printable(made.Warning)
	}
	s.showAgent(w, r, ns, returnTo(r), status, n)
}

func addSecretQuestion(name string) string {
	return "Give endpoint " + name + " a secret? From then on calls without it are refused: its senders must be given it."
}

func rotateQuestion(name string) string {
	return "Rotate the secret of endpoint " + name + "? Its senders must be given the new one: the current secret stops working " +
		"(after spec.sender.rotationOverlap, if set)."
}

func deleteQuestion(name string) string {
	return "Delete endpoint " + name + "? Its URL stops taking calls and cannot be had back."
}

func takeOwnershipQuestion(name string) string {
	return "Become the owner of endpoint " + name + "? Its runs then act with your rights."
}

// confirmView asks before an action, for a browser without script (the
// page's script asks with a dialog and sends confirmed=yes).
type confirmView struct {
	page
	Question, Label string
	Action          string
	Agent, Back     string
}

// confirmed tells whether the form was confirmed; if not, it answers with
// a page that asks.
func (s *Server) confirmed(w http.ResponseWriter, r *http.Request, question, label string) bool {
	if r.PostFormValue("confirmed") == "yes" {
		return true
	}
	ns, agent := r.PathValue("ns"), returnTo(r)
	s.render(w, http.StatusOK, "confirm.html", confirmView{page: page{Title: "Confirm", Namespace: ns},
		Question: question, Label: label, Action: r.URL.Path, Agent: agent, Back: agentPath(ns, agent)})
	return false
}

// answer shows the Agent's page with an action's outcome.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, ns, msg string, err error) {
	agent := returnTo(r)
	if err != nil {
		// What the command said before it failed, then why.
		text := strings.TrimSpace(msg + "\n" + err.Error())
		s.showAgent(w, r, ns, agent, statusOf(err), &notice{Error: true, Text: s.opts.Plugin.Printable(text)})
		return
	}
	s.showAgent(w, r, ns, agent, http.StatusOK, &notice{Text: s.opts.Plugin.Printable(msg)})
}
