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

package agent

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/secretref"
	"github.com/hookrun/hookrun/controllers/internal/status/statustest"
)

func TestAgentSummary(t *testing.T) {
	agent := &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "triage"}, Spec: agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{
		URL: "http://a/", ProtocolVersion: "1.0", AuthSecretRef: &agentsv1alpha1.SecretKeyReference{Name: "tok", Key: "token"},
	}}}
	agent.Status.A2A = &agentsv1alpha1.A2AStatus{URL: "http://a/", ProtocolBinding: agentsv1alpha1.A2ABindingJSONRPC, ProtocolVersion: "1.0"}
	archived := agent.DeepCopy()
	archived.Spec.Archived = true
	discovered := agent.DeepCopy()
	discovered.Spec.A2A.ProtocolVersion = ""
	discovered.Status.A2A = &agentsv1alpha1.A2AStatus{URL: "http://a/rest", ProtocolBinding: agentsv1alpha1.A2ABindingHTTPJSON, ProtocolVersion: "1.0", CardReadAt: &metav1.Time{}}
	noCard := discovered.DeepCopy()
	noCard.Status.A2A = nil
	cases := []struct {
		name       string
		agent      *agentsv1alpha1.Agent
		auth       authSecretState
		tlsBad     *secretref.TLSSecretError
		urlRefused bool
		card       cardState
		progress   agentsv1alpha1.Progress
		reason     string
		message    string
	}{
		{"available", agent, authSecretFound, nil, false, cardState{}, agentsv1alpha1.ProgressCurrent, agentsv1alpha1.ReasonAvailable, "http://a/ over A2A 1.0"},
		{"archived: as asked", archived, authSecretFound, nil, false, cardState{}, agentsv1alpha1.ProgressCurrent, agentsv1alpha1.ReasonAgentArchived, "answer 422"},
		{"token Secret missing", agent, authSecretMissing, nil, false, cardState{}, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonAuthSecretNotFound, `Secret "tok"`},
		{"token key missing", agent, authSecretKeyMissing, nil, false, cardState{}, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonAuthSecretNotFound, `no key "token"`},
		{"token Secret not referable", agent, authSecretNotReferable, nil, false, cardState{}, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonSecretNotReferable,
			"kubectl label secret tok agents.hookrun.dev/allow-reference=true"},
		{"URL not allowed", agent, authSecretFound, nil, true, cardState{}, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonAgentURLNotAllowed, "allow a"},
		{"archived with a missing token: the misconfiguration wins", archived, authSecretMissing, nil, false, cardState{}, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonAuthSecretNotFound, `Secret "tok"`},
		{"CA Secret missing", archived, authSecretFound, &secretref.TLSSecretError{Field: secretref.FieldCASecretRef, Name: "ca", Reason: agentsv1alpha1.ReasonTLSSecretNotFound, Problem: "does not exist"},
			false, cardState{}, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonTLSSecretNotFound, `Secret "ca" named in spec.a2a.tls.caSecretRef does not exist; runs cannot reach the agent over TLS`},
		{"client certificate malformed", agent, authSecretFound, &secretref.TLSSecretError{Field: secretref.FieldClientCertSecretRef, Name: "me", Reason: agentsv1alpha1.ReasonTLSSecretInvalid, Problem: "holds no usable certificate"},
			false, cardState{}, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonTLSSecretInvalid, `Secret "me" named in spec.a2a.tls.clientCertSecretRef holds no usable certificate`},
		{"card read", discovered, authSecretFound, nil, false, cardState{}, agentsv1alpha1.ProgressCurrent, agentsv1alpha1.ReasonAvailable, "http://a/rest over A2A 1.0 (HTTP+JSON), as the agent card lists"},
		{"card lists nothing usable", noCard, authSecretFound, nil, false, cardState{problem: "it lists: GRPC 1.0"}, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonAgentCardInvalid, "it lists: GRPC 1.0"},
		{"agent not up yet", noCard, authSecretFound, nil, false, cardState{problem: "connection refused", transient: true}, agentsv1alpha1.ProgressReconciling, agentsv1alpha1.ReasonAgentCardInvalid, "read again after 30s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			statustest.CheckSummary(t, agentSummary(tc.agent, tc.auth, tc.tlsBad, tc.urlRefused, tc.card), tc.progress, tc.reason, tc.message)
		})
	}
}
