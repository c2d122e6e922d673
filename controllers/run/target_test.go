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

package run

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// discoveredAgent is an Agent whose spec names no protocol version: its
// card says how to reach it.
func discoveredAgent() *agentsv1alpha1.Agent {
	return &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "triage", Generation: 1},
		Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://agent/"}},
	}
}

func TestA2ATarget(t *testing.T) {
	agent := discoveredAgent()
	if _, found := a2aTarget(agent); found {
		t.Fatal("an Agent whose card was never read has a target")
	}
	agent.Status.A2A = &agentsv1alpha1.A2AStatus{URL: "http://agent/rest", ProtocolBinding: agentsv1alpha1.A2ABindingHTTPJSON, ProtocolVersion: "1.0", Tenant: "t1"}
	agent.Status.ObservedGeneration = 1
	got, found := a2aTarget(agent)
	if want := (a2a.Interface{URL: "http://agent/rest", Binding: a2a.BindingHTTPJSON, Version: a2a.V10, Tenant: "t1"}); !found || got != want {
		t.Fatalf("got %+v, %v; want %+v", got, found, want)
	}
	agent.Generation = 2 // spec changed; status.a2a is the old URL's
	if _, found := a2aTarget(agent); found {
		t.Fatal("status.a2a of an earlier generation is used")
	}
	agent.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV10
	got, found = a2aTarget(agent)
	if want := (a2a.Interface{URL: "http://agent/", Binding: a2a.BindingJSONRPC, Version: a2a.V10}); !found || got != want {
		t.Fatalf("protocolVersion set: got %+v; want %+v", got, want)
	}
}

// TestTokenOnlyToTheURLsOriginAndPath: the Agent's token goes to
// spec.a2a.url's origin and path or below it; not to another path of the
// same gateway (another team's route, which a card read at the gateway's
// origin may name), another scheme, port or host.
func TestTokenOnlyToTheURLsOriginAndPath(t *testing.T) {
	agent := discoveredAgent()
	agent.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "tok", Key: "token"}
	for _, base := range []string{"https://gw.example.com/team-a/", "https://gw.example.com/team-a"} {
		agent.Spec.A2A.URL = base
		for target, withheld := range map[string]bool{
			"https://gw.example.com/team-a/rpc":               false,
			"https://gw.example.com/team-a/":                  false,
			"https://gw.example.com/team-a":                   false,
			"https://GW.example.com:443/team-a/rpc":           false,
			"https://gw.example.com/":                         true, // the origin: another path of the same gateway
			"https://gw.example.com/team-b/rpc":               true,
			"https://gw.example.com/team-ab/rpc":              true,
			"https://gw.example.com/team-a/../team-b/rpc":     true,
			"https://gw.example.com/team-a/%2e%2e/team-b/rpc": true,
			"http://gw.example.com/team-a/rpc":                true,
			"https://gw.example.com:8443/team-a/":             true,
			"https://evil.example.com/team-a/":                true,
		} {
			if got := tokenWithheld(agent, a2a.Interface{URL: target}); got != withheld {
				t.Errorf("spec.a2a.url %s, target %s: withheld %v, want %v", base, target, got, withheld)
			}
		}
	}
	agent.Spec.A2A.URL = "https://agent.example.com"
	if tokenWithheld(agent, a2a.Interface{URL: "https://agent.example.com/a2a/v1"}) {
		t.Error("a URL without a path holds every path of its origin")
	}
	agent.Spec.A2A.AuthSecretRef = nil
	if tokenWithheld(agent, a2a.Interface{URL: "https://evil.example.com/"}) {
		t.Error("an Agent without a token has one withheld")
	}
}
