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
	"bytes"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The pages, each under its namespace.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, agentsPath(s.opts.Namespace), http.StatusSeeOther)
	})
	s.mux.HandleFunc("GET /pick", s.pickNamespace)
	s.mux.HandleFunc("GET /namespaces/{ns}/agents", s.agentsPage)
	s.mux.HandleFunc("GET /namespaces/{ns}/agents/{agent}", s.agentPage)
	s.mux.HandleFunc("GET /namespaces/{ns}/agents/{agent}/endpoints", s.endpointsFragment)
	s.mux.HandleFunc("POST /namespaces/{ns}/agents/{agent}/endpoints", s.createEndpoint)
	s.mux.HandleFunc("GET /namespaces/{ns}/agents/{agent}/events", s.events)
	s.mux.HandleFunc("GET /namespaces/{ns}/runs/{run}", s.runPage)
	s.mux.HandleFunc("GET /namespaces/{ns}/endpoints/{name}/edit", s.editPage)
	s.mux.HandleFunc("POST /namespaces/{ns}/endpoints/{name}/edit", s.editEndpoint)
	s.mux.HandleFunc("POST /namespaces/{ns}/endpoints/{name}/pause", s.pause(true))
	s.mux.HandleFunc("POST /namespaces/{ns}/endpoints/{name}/resume", s.pause(false))
	s.mux.HandleFunc("POST /namespaces/{ns}/endpoints/{name}/take-ownership", s.takeOwnership)
	s.mux.HandleFunc("POST /namespaces/{ns}/endpoints/{name}/delete", s.deleteEndpoint)
	s.mux.HandleFunc("POST /namespaces/{ns}/endpoints/{name}/rotate", s.rotate)
	s.mux.HandleFunc("POST /namespaces/{ns}/endpoints/{name}/add-secret", s.addSecret)
	s.mux.HandleFunc("POST /namespaces/{ns}/endpoints/{name}/send", s.act(s.opts.Plugin.Send))
	s.mux.HandleFunc("POST /namespaces/{ns}/runs/{name}/redeliver", s.act(s.opts.Plugin.Redeliver))
}

func agentsPath(ns string) string {
	return "/namespaces/" + url.PathEscape(ns) + "/agents"
}

func agentPath(ns, agent string) string {
	return agentsPath(ns) + "/" + url.PathEscape(agent)
}

// page is what every page's layout shows.
type page struct {
	Title      string
	Namespace  string
	Namespaces []string // those the user may list; empty when they may not
	Notice     *notice
}

// notice is an action's outcome shown above the cards.
type notice struct {
	Error bool
	Text  string
	// Secret is shown once, with Warning (a rotation's new secret).
	Secret, Warning string
}

func (s *Server) pickNamespace(w http.ResponseWriter, r *http.Request) {
	ns := strings.TrimSpace(r.URL.Query().Get("namespace"))
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		s.fail(w, r, http.StatusBadRequest, "Namespace "+ns+": "+strings.Join(errs, "; "))
		return
	}
	http.Redirect(w, r, agentsPath(ns), http.StatusSeeOther)
}

// namespaces lists the namespaces the user may list (none without the right).
func (s *Server) namespaces(ctx context.Context, current string) []string {
	list := &corev1.NamespaceList{}
	if err := s.opts.Plugin.Client().List(ctx, list); err != nil {
		return nil
	}
	names := []string{}
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	if !slices.Contains(names, current) {
		names = append(names, current)
	}
	slices.Sort(names)
	return names
}

type agentsView struct {
	page
	Agents []agentItem
}

type agentItem struct {
	Name, DisplayName, Path string
	Archived                bool
	Endpoints               int
}

func (s *Server) agentsPage(w http.ResponseWriter, r *http.Request) {
	ctx, ns := r.Context(), r.PathValue("ns")
	c := s.opts.Plugin.Client()
	agents := &agentsv1alpha1.AgentList{}
	if err := c.List(ctx, agents, client.InNamespace(ns)); err != nil {
		s.fail(w, r, statusOf(err), "Listing the Agents of namespace "+ns+": "+err.Error())
		return
	}
	eps := &agentsv1alpha1.WebhookEndpointList{}
	count := map[string]int{}
	if err := c.List(ctx, eps, client.InNamespace(ns)); err == nil {
		for _, ep := range eps.Items {
			count[ep.Spec.AgentRef.Name]++
		}
	}
	v := agentsView{page: page{Title: "Agents", Namespace: ns, Namespaces: s.namespaces(ctx, ns)}}
	for _, a := range agents.Items {
		v.Agents = append(v.Agents, agentItem{Name: a.Name, DisplayName: s.opts.Plugin.Printable(a.Spec.DisplayName), Path: agentPath(ns, a.Name),
			Archived: a.Spec.Archived, Endpoints: count[a.Name]})
	}
	s.render(w, http.StatusOK, "agents.html", v)
}

func (s *Server) agentPage(w http.ResponseWriter, r *http.Request) {
	s.showAgent(w, r, r.PathValue("ns"), r.PathValue("agent"), http.StatusOK, nil)
}

// showAgent renders an Agent's page, its Invocations tab, with n above it.
func (s *Server) showAgent(w http.ResponseWriter, r *http.Request, ns, agent string, status int, n *notice) {
	s.showAgentWith(w, r, ns, agent, status, n, s.newEndpointForm(r.Context(), ns, agent))
}

// showAgentWith renders an Agent's page with the form f to create an
// endpoint.
func (s *Server) showAgentWith(w http.ResponseWriter, r *http.Request, ns, agent string, status int, n *notice, f *endpointForm) {
	ctx := r.Context()
	v, err := s.agentView(ctx, ns, agent)
	if err != nil {
		s.fail(w, r, statusOf(err), err.Error())
		return
	}
	v.Namespaces, v.Notice, v.NewEndpoint = s.namespaces(ctx, ns), n, f
	s.render(w, status, "agent.html", v)
}

func (s *Server) endpointsFragment(w http.ResponseWriter, r *http.Request) {
	v, err := s.agentView(r.Context(), r.PathValue("ns"), r.PathValue("agent"))
	if err != nil {
		s.fail(w, r, statusOf(err), err.Error())
		return
	}
	s.render(w, http.StatusOK, "endpoints", v)
}

type runView struct {
	page
	Agent, AgentPath string
	Run              runRow
	Prompt, Output   string
	Payload          string
	PayloadNote      string
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	ctx, ns := r.Context(), r.PathValue("ns")
	run := &agentsv1alpha1.AgentRun{}
	if err := s.opts.Plugin.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: r.PathValue("run")}, run); err != nil {
		s.fail(w, r, statusOf(err), "Reading run "+r.PathValue("run")+": "+err.Error())
		return
	}
	v := runView{
		page:  page{Title: "Run " + run.Name, Namespace: ns},
		Agent: run.Spec.AgentRef.Name, AgentPath: agentPath(ns, run.Spec.AgentRef.Name),
		Run: s.runRow(run), Prompt: s.opts.Plugin.Printable(run.Spec.Prompt), Output: s.opts.Plugin.Printable(run.Status.Output),
	}
	body, err := s.opts.Plugin.Payload(ctx, run)
	switch {
	case err != nil:
		v.PayloadNote = s.opts.Plugin.Printable(err.Error())
	case isJSON(body):
		v.Payload = s.opts.Plugin.Printable(indentJSON(body))
	default:
		v.Payload = s.opts.Plugin.Printable(string(body))
	}
	s.render(w, http.StatusOK, "run.html", v)
}

// render writes the template name with v; a template that fails writes
// nothing of itself.
func (s *Server) render(w http.ResponseWriter, status int, name string, v any) {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, v); err != nil {
		s.logf("rendering %s: %v", name, err)
		http.Error(w, "The page could not be rendered.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// fail shows an error page with the API server's words.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	ns := r.PathValue("ns")
	if ns == "" {
		ns = s.opts.Namespace
	}
	s.render(w, status, "error.html", page{Title: "Error", Namespace: ns, Notice: &notice{Error: true, Text: s.opts.Plugin.Printable(msg)}})
}
