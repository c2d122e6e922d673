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

package v1alpha1

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSecretHash(t *testing.T) {
	// echo -n "" | sha256sum; echo -n "hello" | sha256sum
	cases := map[string]string{
		"":      "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"hello": "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
	}
	for in, want := range cases {
		if got := SecretHash([]byte(in)); got != want {
			t.Errorf("SecretHash(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSecretHash(t *testing.T) {
	good := SecretHash([]byte("a secret of at least thirty-two bytes"))
	digest, err := ParseSecretHash(good)
	if err != nil {
		t.Fatalf("ParseSecretHash(%q): %v", good, err)
	}
	if got := SecretHashPrefix + strings.ToLower(hexString(digest[:])); got != good {
		t.Errorf("round trip = %q, want %q", got, good)
	}

	bad := []string{
		"",
		"sha256:",
		strings.TrimPrefix(good, SecretHashPrefix),           // no prefix
		"sha1:" + strings.TrimPrefix(good, SecretHashPrefix), // wrong prefix
		good[:len(good)-1], // too short
		good + "0",         // too long
		SecretHashPrefix + strings.Repeat("g", 64),                // not hex
		SecretHashPrefix + strings.ToUpper(good[len("sha256:"):]), // upper case
	}
	for _, in := range bad {
		if _, err := ParseSecretHash(in); err == nil {
			t.Errorf("ParseSecretHash(%q) succeeded, want an error", in)
		}
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&0xf])
	}
	return string(out)
}

func TestRunStateIsFinished(t *testing.T) {
	for state, want := range map[RunState]bool{
		"": false, RunQueued: false, RunRunning: false,
		RunSuccess: true, RunError: true, RunSkipped: true,
	} {
		if got := state.IsFinished(); got != want {
			t.Errorf("%q.IsFinished() = %v, want %v", state, got, want)
		}
	}
}

func TestGeneratedSecretName(t *testing.T) {
	if got := GeneratedSecretName("github-issues"); got != "github-issues-webhook-secret" {
		t.Errorf("GeneratedSecretName = %q", got)
	}
}

func TestEffectiveState(t *testing.T) {
	withPayload := &AgentRun{Spec: AgentRunSpec{Payload: &PayloadReference{SecretName: "p"}}}
	if got := withPayload.EffectiveState(); got != RunQueued {
		t.Errorf("empty state with payload = %q, want queued", got)
	}
	if got := (&AgentRun{}).EffectiveState(); got != RunSkipped {
		t.Errorf("empty state without payload = %q, want skipped", got)
	}
	withPayload.Status.State = RunError
	if got := withPayload.EffectiveState(); got != RunError {
		t.Errorf("explicit state = %q, want error", got)
	}
	if (*Owner)(nil).UserName() != "(none)" || (&Owner{User: "a"}).UserName() != "a" {
		t.Error("Owner.UserName")
	}
}

func TestHoldsIDBefore(t *testing.T) {
	at := func(sec int64) *metav1.MicroTime { tm := metav1.NewMicroTime(time.Unix(sec, 0)); return &tm }
	endpoint := func(uid string, created int64, since *metav1.MicroTime) *WebhookEndpoint {
		return &WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), CreationTimestamp: metav1.Unix(created, 0)},
			Status:     WebhookEndpointStatus{EndpointID: "same", EndpointIDSince: since},
		}
	}
	cases := []struct {
		name       string
		ep, other  *WebhookEndpoint
		holdsFirst bool
	}{
		{"held longer, though created later", endpoint("b", 20, at(30)), endpoint("a", 10, at(40)), true},
		{"held shorter, though created earlier (a sleeper)", endpoint("a", 10, at(40)), endpoint("b", 20, at(30)), false},
		{"held since before the field existed", endpoint("b", 20, nil), endpoint("a", 10, at(5)), true},
		{"against one that did", endpoint("a", 10, at(5)), endpoint("b", 20, nil), false},
		{"same moment: the older", endpoint("b", 10, at(30)), endpoint("a", 20, at(30)), true},
		{"neither stamped: the older", endpoint("b", 10, nil), endpoint("a", 20, nil), true},
		{"same moment, same second: by UID", endpoint("a", 10, at(30)), endpoint("b", 10, at(30)), true},
		{"by UID, the other way", endpoint("b", 10, at(30)), endpoint("a", 10, at(30)), false},
	}
	for _, c := range cases {
		if got := c.ep.HoldsIDBefore(c.other); got != c.holdsFirst {
			t.Errorf("%s: HoldsIDBefore = %v, want %v", c.name, got, c.holdsFirst)
		}
	}
}
