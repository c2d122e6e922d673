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

package endpoint

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/secretref"
	"github.com/hookrun/hookrun/controllers/internal/status/statustest"
)

// Table tests of the pinned endpoint ID's decisions.

// A valid ID: 32 bytes 0x00..0x1f in base64url.
const pinnedTestID = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

func TestValidEndpointID(t *testing.T) {
	cases := []struct {
		id   string
		want bool
	}{
		{pinnedTestID, true},
		{"", false},
		{pinnedTestID[:42], false},
		{pinnedTestID + "A", false},
		{pinnedTestID + "\n", false},
		{pinnedTestID + "=", false},
		{strings.Repeat("_", 42) + "w", true},
		{strings.Repeat("/", 42) + "w", false}, // standard base64
		{pinnedTestID[:42] + "9", false},       // low bits not zero: no encoder writes it
		{strings.Repeat("A", 43), true},
		{" " + pinnedTestID[1:], false},
	}
	for _, tc := range cases {
		if got := validEndpointID(tc.id); got != tc.want {
			t.Errorf("validEndpointID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestPinnedID(t *testing.T) {
	secret := func(value string) *corev1.Secret {
		return &corev1.Secret{Data: map[string][]byte{"id": []byte(value)}}
	}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "ids")
	cases := []struct {
		name    string
		secret  *corev1.Secret
		readErr error
		wantID  string
		want    pinnedIDOutcome
	}{
		{"valid", secret(pinnedTestID), nil, pinnedTestID, pinnedIDValid},
		{"missing Secret", nil, notFound, "", pinnedIDSecretNotFound},
		{"not labelled", nil, secretref.ErrNotReferable, "", pinnedIDSecretNotReferable},
		{"transient error", nil, errors.New("connection refused"), "", pinnedIDReadFailed},
		{"no such key", &corev1.Secret{Data: map[string][]byte{"other": []byte(pinnedTestID)}}, nil, "", pinnedIDKeyMissing},
		{"trailing newline", secret(pinnedTestID + "\n"), nil, "", pinnedIDMalformed},
		{"too short", secret("abc"), nil, "", pinnedIDMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, got := pinnedID(tc.secret, "id", tc.readErr)
			if id != tc.wantID || got != tc.want {
				t.Errorf("pinnedID = %q, %d; want %q, %d", id, got, tc.wantID, tc.want)
			}
		})
	}
}

func TestPinnedIDSummary(t *testing.T) {
	ref := &agentsv1alpha1.SecretKeyReference{Name: "hook-id", Key: "id"}
	cases := []struct {
		outcome pinnedIDOutcome
		reason  string
		msg     string
	}{
		{pinnedIDSecretNotFound, agentsv1alpha1.ReasonSecretNotFound, `Secret "hook-id" named in spec.endpointIDSecretRef does not exist`},
		{pinnedIDSecretNotReferable, agentsv1alpha1.ReasonSecretNotReferable, "kubectl label secret hook-id agents.hookrun.dev/allow-reference=true"},
		{pinnedIDKeyMissing, agentsv1alpha1.ReasonSecretKeyMissing, `has no key "id"`},
		{pinnedIDMalformed, agentsv1alpha1.ReasonEndpointIDInvalid, "holds 44 bytes that are not an endpoint ID"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			got := pinnedIDSummary(tc.outcome, ref, 44)
			if got.Progress != agentsv1alpha1.ProgressStalled {
				t.Errorf("progress %d, want Stalled", got.Progress)
			}
			statustest.CheckCondition(t, got.Ready, agentsv1alpha1.ConditionReady, metav1.ConditionFalse, tc.reason, tc.msg)
			statustest.CheckCondition(t, got.Ready, agentsv1alpha1.ConditionReady, metav1.ConditionFalse, tc.reason, "no ID and no URL")
		})
	}
}

// The handover reservation: for IDHandoverReserve after the holder's
// deletion, the ID is reserved for the holder's namespace; ended
// reservations are dropped.
func TestIDHandoverReservation(t *testing.T) {
	var w idWaiters
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	w.handOver("id-1", "team-a", t0)
	if until, reserved := w.reservedFor("id-1", "team-b", t0.Add(IDHandoverReserve-time.Second)); !reserved || !until.Equal(t0.Add(IDHandoverReserve)) {
		t.Errorf("another namespace within the reserve: reserved %v until %v, want reserved until %v", reserved, until, t0.Add(IDHandoverReserve))
	}
	if _, reserved := w.reservedFor("id-1", "team-a", t0); reserved {
		t.Error("the holder's namespace is kept from its own ID")
	}
	if _, reserved := w.reservedFor("id-1", "team-b", t0.Add(IDHandoverReserve)); reserved {
		t.Error("the reservation outlives IDHandoverReserve")
	}
	if _, reserved := w.reservedFor("id-2", "team-b", t0); reserved {
		t.Error("an ID nobody held is reserved")
	}
	w.handOver("id-2", "team-c", t0.Add(IDHandoverReserve))
	if _, ok := w.reserved["id-1"]; ok || len(w.reserved) != 1 {
		t.Errorf("an ended reservation is kept: %v", w.reserved)
	}

	// A waiter that saw the holder and finds it gone before the deletion's
	// event came starts the reservation itself.
	w.wait("id-3", types.NamespacedName{Namespace: "team-b", Name: "sleeper"})
	w.sawHolder("id-3", "team-a")
	if _, reserved := w.reservedFor("id-3", "team-b", t0); !reserved {
		t.Error("a holder seen and gone before its deletion was handled leaves its ID to any namespace")
	}
	if _, reserved := w.reservedFor("id-3", "team-a", t0); reserved {
		t.Error("the seen holder's namespace is kept from its ID")
	}
}

func TestIDClaim(t *testing.T) {
	var w idWaiters
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	a := types.NamespacedName{Namespace: "team-b", Name: "a"}
	b := types.NamespacedName{Namespace: "team-c", Name: "b"}
	if !w.claim("held", a, t0) {
		t.Fatal("the first endpoint may not take a free ID")
	}
	if w.claim("held", b, t0.Add(time.Second)) {
		t.Fatal("a second endpoint took the ID the first took a second ago: both would hold it")
	}
	if !w.claim("held", a, t0.Add(2*time.Second)) {
		t.Fatal("the endpoint that took the ID may not write it again (a retried write)")
	}
	if !w.claim("other", b, t0.Add(2*time.Second)) {
		t.Fatal("a claim blocks another ID")
	}
	if !w.claim("held", b, t0.Add(2*time.Second+claimHold)) {
		t.Fatal("a claim outlives claimHold")
	}
	if len(w.claims) != 1 {
		t.Fatalf("%d claims kept, want only the live one", len(w.claims))
	}
}
