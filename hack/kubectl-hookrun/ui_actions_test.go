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

package main

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
)

// uiEndpoint is endpoint name of Agent triage in namespace team, Ready.
func uiEndpoint(name string, spec func(*agentsv1alpha1.WebhookEndpointSpec), status func(*agentsv1alpha1.WebhookEndpointStatus)) *agentsv1alpha1.WebhookEndpoint {
	ep := &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name},
		Spec: agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage.",
			Owner: &agentsv1alpha1.Owner{User: "alice"}},
		Status: agentsv1alpha1.WebhookEndpointStatus{Phase: agentsv1alpha1.EndpointActive, URL: "https://hooks.example.com/api/webhooks/" + name + "/receive",
			Conditions: []metav1.Condition{{Type: agentsv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: agentsv1alpha1.ReasonAvailable}}},
	}
	if spec != nil {
		spec(&ep.Spec)
	}
	if status != nil {
		status(&ep.Status)
	}
	return ep
}

func fakeCluster(objs ...client.Object) client.WithWatch {
	objs = append(objs, &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "triage"}})
	return fake.NewClientBuilder().WithScheme(cli.Scheme).WithObjects(objs...).
		WithStatusSubresource(&agentsv1alpha1.WebhookEndpoint{}, &agentsv1alpha1.AgentRun{}).Build()
}

// A card's badge and its pause button say the same thing: a pause or a
// resume asked for but not made yet shows as such with the button that
// undoes it, and an endpoint hookrun paused because its owner left offers
// what a member can do, take it over, not a Resume that cannot resume it.
func TestUICardBadgeAndPauseButtonAgree(t *testing.T) {
	paused := func(reason agentsv1alpha1.PauseReason) func(*agentsv1alpha1.WebhookEndpointStatus) {
		return func(s *agentsv1alpha1.WebhookEndpointStatus) {
			s.Phase, s.PauseReason = agentsv1alpha1.EndpointPaused, reason
		}
	}
	asked := func(s *agentsv1alpha1.WebhookEndpointSpec) { s.Paused = true }
	cases := []struct {
		ep            *agentsv1alpha1.WebhookEndpoint
		badge, action string
	}{
		{uiEndpoint("active", nil, nil), "Active", "pause"},
		{uiEndpoint("pausing", asked, nil), "Pausing…", "resume"},
		{uiEndpoint("paused", asked, paused(agentsv1alpha1.PauseReasonPaused)), "Paused (by owner)", "resume"},
		{uiEndpoint("resuming", nil, paused(agentsv1alpha1.PauseReasonPaused)), "Resuming…", "pause"},
		{uiEndpoint("left", nil, paused(agentsv1alpha1.PauseReasonOwnerNotMember)), "Paused (OwnerNotMember)", "take-ownership"},
		{uiEndpoint("left-asked", asked, paused(agentsv1alpha1.PauseReasonOwnerNotMember)), "Paused (OwnerNotMember)", "take-ownership"},
	}
	objs := []client.Object{}
	for _, c := range cases {
		objs = append(objs, c.ep)
	}
	body := fakeUI(t, fakeCluster(objs...)).page("/namespaces/team/agents/triage")
	for _, c := range cases {
		card := regexp.MustCompile(`(?s)<article class="card" id="endpoint-` + c.ep.Name + `".*?</header>`).FindString(body)
		badge := regexp.MustCompile(`data-phase>([^<]*)<`).FindStringSubmatch(card)
		actions := regexp.MustCompile(`data-action="(pause|resume|take-ownership)"`).FindAllStringSubmatch(card, -1)
		if badge == nil || badge[1] != c.badge || len(actions) != 1 || actions[0][1] != c.action {
			t.Errorf("endpoint %s: badge %q and actions %q, want %q with only %q:\n%s", c.ep.Name, badge, actions, c.badge, c.action, card)
		}
	}
}

// Delete asks first: the page's script with a dialog (the browser spec),
// a browser without script with a page of the UI's own; only a confirmed
// form deletes.
func TestUIDeleteAsksFirst(t *testing.T) {
	c := fakeCluster(uiEndpoint("hooks", nil, nil))
	u := fakeUI(t, c)
	form := url.Values{"agent": {"triage"}}
	resp, body := u.send(http.MethodPost, "/namespaces/team/endpoints/hooks/delete", form)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Delete endpoint hooks?") ||
		!strings.Contains(body, `<input type="hidden" name="confirmed" value="yes">`) {
		t.Fatalf("an unconfirmed delete answered %s, not the question:\n%s", resp.Status, body)
	}
	ep := &agentsv1alpha1.WebhookEndpoint{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: "hooks"}, ep); err != nil {
		t.Fatalf("an unconfirmed delete deleted: %v", err)
	}
	form.Set("confirmed", "yes")
	resp, body = u.send(http.MethodPost, "/namespaces/team/endpoints/hooks/delete", form)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Deleted endpoint team/hooks") {
		t.Fatalf("a confirmed delete answered %s:\n%s", resp.Status, body)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: "hooks"}, ep); !apierrors.IsNotFound(err) {
		t.Fatalf("the endpoint is still there: %v", err)
	}
}

// An endpoint continues only a thread of its own Agent: the forms that
// create and edit one offer no other, and the server refuses one sent anyway.
func TestUICreateTakesOnlyAThreadOfTheAgent(t *testing.T) {
	c := fakeCluster(&agentsv1alpha1.AgentThread{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "elsewhere"},
		Spec: agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "other"}}}, uiEndpoint("hooks", nil, nil))
	u := fakeUI(t, c)
	if body := u.page("/namespaces/team/agents/triage"); strings.Contains(body, `value="elsewhere"`) {
		t.Errorf("the form offers a thread of another Agent:\n%s", body)
	}
	form := url.Values{"name": {"alerts"}, "prompt": {"Summarize."}, "threadStrategy": {"ContinueExisting"}, "targetThread": {"elsewhere"}}
	resp, body := u.send(http.MethodPost, "/namespaces/team/agents/triage/endpoints", form)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "is not a thread of Agent triage") {
		t.Errorf("a thread of another Agent: %s\n%s", resp.Status, body)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: "alerts"}, &agentsv1alpha1.WebhookEndpoint{}); !apierrors.IsNotFound(err) {
		t.Errorf("the endpoint was created: %v", err)
	}
	for _, path := range []string{"/namespaces/team/endpoints/hooks/edit"} {
		if body := u.page(path); strings.Contains(body, `value="elsewhere"`) {
			t.Errorf("%s offers a thread of another Agent:\n%s", path, body)
		}
		resp, body := u.send(http.MethodPost, path, form)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "is not a thread of Agent triage") {
			t.Errorf("%s with a thread of another Agent: %s\n%s", path, resp.Status, body)
		}
	}
	ep := &agentsv1alpha1.WebhookEndpoint{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: "hooks"}, ep); err != nil || ep.Spec.TargetThreadRef != nil {
		t.Errorf("the edit changed the endpoint: %v %v", err, ep.Spec.TargetThreadRef)
	}
}
