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
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// recentOnCard is how many invocations a card lists, as `show` does.
const recentOnCard = 10

// agentView is an Agent's page: its Invocations tab.
type agentView struct {
	page
	Agent, DisplayName string
	Archived           bool
	EndpointsPath      string // the cards alone, for live updates
	EventsPath         string
	Cards              []cardView
	NewEndpoint        *endpointForm // on the page, not in the live cards
}

// cardView is an endpoint's card.
type cardView struct {
	Name, Namespace string
	Agent           string
	URL             string
	Curl, CurlNote  string
	Phase           string
	Badge           string // the phase's colour: ok, warn (paused), bad
	Active          bool
	Toggle          toggle // the one pause action the badge goes with
	DeletePath      string
	DeleteQuestion  string
	RotatePath      string // empty when the endpoint has no generated secret
	RotateQuestion  string
	AddSecretPath   string // set when the endpoint allows unauthenticated calls
	AddSecretQ      string
	SendPath        string // empty while the endpoint has no URL
	EditPath        string
	Sender, Auth    string
	Runs            agentsv1alpha1.RunCounts
	NotReady        *metav1.Condition
	LastFilterError *agentsv1alpha1.EvaluationError
	Recent          []runRow
	Chart           chart
	PausePath       string
	ResumePath      string
}

// runRow is a line of "Recent invocations".
type runRow struct {
	Name, Path                   string
	State                        string
	Received, Started, Completed string
	Duration, Message, Thread    string
	StartedTitle, CompletedTitle string
	ReceivedTitle                string
	RedeliverPath                string // empty when no payload was stored
}

func (s *Server) agentView(ctx context.Context, ns, name string) (*agentView, error) {
	c := s.opts.Plugin.Client()
	agent := &agentsv1alpha1.Agent{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, agent); err != nil {
		return nil, fmt.Errorf("reading Agent %s/%s: %w", ns, name, err)
	}
	eps := &agentsv1alpha1.WebhookEndpointList{}
	if err := c.List(ctx, eps, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the webhook endpoints of namespace %s: %w", ns, err)
	}
	runs := &agentsv1alpha1.AgentRunList{}
	if err := c.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelAgent: name}); err != nil {
		return nil, fmt.Errorf("listing the runs of Agent %s/%s: %w", ns, name, err)
	}
	byEndpoint := map[string][]agentsv1alpha1.AgentRun{}
	for _, r := range runs.Items {
		byEndpoint[r.Spec.EndpointRef.Name] = append(byEndpoint[r.Spec.EndpointRef.Name], r)
	}
	path := agentPath(ns, name)
	v := &agentView{
		page:  page{Title: name, Namespace: ns},
		Agent: name, DisplayName: s.opts.Plugin.Printable(agent.Spec.DisplayName), Archived: agent.Spec.Archived,
		EndpointsPath: path + "/endpoints", EventsPath: path + "/events",
	}
	sort.Slice(eps.Items, func(i, j int) bool { return eps.Items[i].Name < eps.Items[j].Name })
	for i := range eps.Items {
		if ep := &eps.Items[i]; ep.Spec.AgentRef.Name == name {
			v.Cards = append(v.Cards, s.card(ctx, ep, byEndpoint[ep.Name]))
		}
	}
	return v, nil
}

func (s *Server) card(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint, runs []agentsv1alpha1.AgentRun) cardView {
	p := s.opts.Plugin
	base := "/namespaces/" + pathEscape(ep.Namespace) + "/endpoints/" + pathEscape(ep.Name)
	c := cardView{
		Name: ep.Name, Namespace: ep.Namespace, Agent: ep.Spec.AgentRef.Name, URL: ep.Status.URL, Phase: p.Phase(ep),
		Sender: string(ep.Spec.SenderOf()), Auth: authOf(ep), Runs: ep.Status.Runs,
	}
	c.Active = c.Phase == string(agentsv1alpha1.EndpointActive)
	switch {
	case c.Active:
		c.Badge = "ok"
	case ep.Status.Phase == agentsv1alpha1.EndpointPaused:
		c.Badge = "warn"
	default:
		c.Badge = "bad"
	}
	c.pauseState(ep, base)
	c.DeletePath, c.DeleteQuestion = base+"/delete", deleteQuestion(ep.Name)
	c.EditPath = base + "/edit"
	if ep.Status.URL != "" {
		c.SendPath = base + "/send"
	}
	if ep.Spec.SecretRef == nil && !ep.Spec.AllowUnauthenticated && ep.Spec.OIDCOf() == nil {
		c.RotatePath, c.RotateQuestion = base+"/rotate", rotateQuestion(ep.Name)
	}
	if ep.Spec.AllowUnauthenticated {
		c.AddSecretPath, c.AddSecretQ = base+"/add-secret", addSecretQuestion(ep.Name)
	}
	c.Curl, c.CurlNote = p.SampleCurl(ctx, ep)
	c.CurlNote = p.Printable(c.CurlNote)
	if ready := meta.FindStatusCondition(ep.Status.Conditions, agentsv1alpha1.ConditionReady); ready != nil && ready.Status != metav1.ConditionTrue {
		c.NotReady = &metav1.Condition{Reason: p.Printable(ready.Reason), Message: p.Printable(ready.Message)}
	}
	if r := ep.Status.Rejections; r != nil && r.LastEvaluationError != nil {
		c.LastFilterError = &agentsv1alpha1.EvaluationError{Expression: r.LastEvaluationError.Expression,
			Message: p.Printable(r.LastEvaluationError.Message), Time: r.LastEvaluationError.Time}
	}
	sortNewestFirst(runs)
	for i := range runs[:min(recentOnCard, len(runs))] {
		c.Recent = append(c.Recent, s.runRow(&runs[i]))
	}
	c.Chart = runsPerHour(runs, s.opts.Now())
	return c
}

// authOf says how callers authenticate.
func authOf(ep *agentsv1alpha1.WebhookEndpoint) string {
	switch ep.Status.AuthMode {
	case agentsv1alpha1.AuthNone:
		return "None: anyone with the URL can call it"
	case agentsv1alpha1.AuthOIDC:
		return "OIDC token"
	case agentsv1alpha1.AuthSecret:
		if ep.Spec.SenderOf().Signed() {
			return "Signature with the secret"
		}
		return "Secret header"
	}
	if ep.Spec.AllowUnauthenticated {
		return "None: anyone with the URL can call it"
	}
	return "Secret (not set up yet)"
}

func (s *Server) runRow(r *agentsv1alpha1.AgentRun) runRow {
	now := s.opts.Now()
	row := runRow{
		Name: r.Name, Path: "/namespaces/" + pathEscape(r.Namespace) + "/runs/" + pathEscape(r.Name),
		State: string(r.EffectiveState()), Message: s.opts.Plugin.Printable(r.Status.Message), Thread: s.opts.Plugin.Thread(r),
		Duration: s.opts.Plugin.Printable(r.Status.Duration),
	}
	if r.Spec.Payload != nil {
		row.RedeliverPath = row.Path + "/redeliver"
	}
	row.Received, row.ReceivedTitle = ago(&r.Spec.ReceivedAt, now)
	row.Started, row.StartedTitle = ago(r.Status.StartedAt, now)
	row.Completed, row.CompletedTitle = ago(r.Status.CompletedAt, now)
	if row.Duration == "" && r.Status.StartedAt != nil && r.Status.CompletedAt != nil {
		row.Duration = r.Status.CompletedAt.Sub(r.Status.StartedAt.Time).Round(time.Millisecond).String()
	}
	if row.Duration == "" {
		row.Duration = "-"
	}
	return row
}

// ago is how long ago t was, and t itself for a tooltip.
func ago(t *metav1.Time, now time.Time) (string, string) {
	if t == nil || t.IsZero() {
		return "-", ""
	}
	return duration.HumanDuration(now.Sub(t.Time)) + " ago", t.UTC().Format(time.RFC3339)
}

// sortNewestFirst sorts runs by when they were received, newest first.
func sortNewestFirst(runs []agentsv1alpha1.AgentRun) {
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := &runs[i], &runs[j]
		if !a.Spec.ReceivedAt.Equal(&b.Spec.ReceivedAt) {
			return a.Spec.ReceivedAt.After(b.Spec.ReceivedAt.Time)
		}
		return a.Name > b.Name
	})
}

// statusOf is the HTTP status that tells the API server's error.
func statusOf(err error) int {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if code := int(status.Status().Code); code >= 400 {
			return code
		}
	}
	return http.StatusBadGateway
}

// isJSON tells whether a payload is a JSON object or array.
func isJSON(b []byte) bool {
	return len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Valid(b)
}

func indentJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

func pathEscape(s string) string { return url.PathEscape(s) }

func funcs() template.FuncMap {
	return template.FuncMap{
		"stateClass": func(state string) string { return "state-" + state },
		"lower":      strings.ToLower,
	}
}
