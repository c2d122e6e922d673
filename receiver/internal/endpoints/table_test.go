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

package endpoints

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
)

// Two endpoints with one ID: the older is served, whatever order the
// informer delivers them in, and the other takes over only when the older
// lets the ID go.
func TestTableServesTheOlderOfTwoEndpointsWithOneID(t *testing.T) {
	created := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	ep := func(uid, id string, age time.Duration) *agentsv1alpha1.WebhookEndpoint {
		return &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid), CreationTimestamp: metav1.NewTime(created.Add(-age))},
			Status:     agentsv1alpha1.WebhookEndpointStatus{EndpointID: id},
		}
	}
	served := func(tb *Table, id string) string {
		t.Helper()
		if e := tb.Lookup(id); e != nil {
			return e.Obj.Name
		}
		return ""
	}
	for _, order := range [][]string{{"victim", "thief"}, {"thief", "victim"}} {
		tb := NewTable()
		var forgotten []string
		tb.OnDelete = func(id string, _ types.UID) { forgotten = append(forgotten, id) }
		eps := map[string]*agentsv1alpha1.WebhookEndpoint{"victim": ep("victim", "X", time.Hour), "thief": ep("thief", "X", 0)}
		for _, name := range order {
			tb.UpsertEndpoint(eps[name])
		}
		if got := served(tb, "X"); got != "victim" {
			t.Fatalf("order %v: X serves %q, want the older endpoint", order, got)
		}
		// The thief's status changes: still not served.
		tb.UpsertEndpoint(ep("thief", "X", 0))
		if got := served(tb, "X"); got != "victim" {
			t.Fatalf("order %v: after an update of the newer, X serves %q", order, got)
		}
		// Deleting the newer leaves the older's windows alone.
		tb.DeleteEndpoint(eps["thief"])
		if got := served(tb, "X"); got != "victim" || len(forgotten) != 1 || forgotten[0] != "" {
			t.Fatalf("order %v: after deleting the newer, X serves %q, forgotten IDs %q", order, got, forgotten)
		}
		// The newer comes back; the older moves to another ID, then goes.
		tb.UpsertEndpoint(eps["thief"])
		tb.UpsertEndpoint(ep("victim", "Y", time.Hour))
		if got, other := served(tb, "X"), served(tb, "Y"); got != "thief" || other != "victim" {
			t.Fatalf("order %v: X serves %q and Y %q, want thief and victim", order, got, other)
		}
		tb.DeleteEndpoint(eps["victim"])
		tb.DeleteEndpoint(eps["thief"])
		if len(tb.endpoints) != 0 || len(tb.byUID) != 0 || len(tb.claims) != 0 {
			t.Fatalf("order %v: left %d endpoints, %d by UID, claims %v", order, len(tb.endpoints), len(tb.byUID), tb.claims)
		}
	}
}

// The receiver serves the endpoint the operator keeps the ID with: the one
// holding it longer (status.endpointIDSince), also when it is the younger
// object, and also through the receiver's cache transform.
func TestTableServesTheEndpointHoldingTheIDLonger(t *testing.T) {
	created := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	ep := func(name string, createdAt, since time.Time) *agentsv1alpha1.WebhookEndpoint {
		s := metav1.NewMicroTime(since)
		out, err := StripToUse(&agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(createdAt)},
			Status:     agentsv1alpha1.WebhookEndpointStatus{EndpointID: "X", EndpointIDSince: &s},
		})
		cut, ok := out.(*agentsv1alpha1.WebhookEndpoint)
		if err != nil || !ok {
			t.Fatalf("stripToUse: %T, %v", out, err)
		}
		return cut
	}
	// The sleeper was created first, but the victim held the ID first.
	victim := ep("victim", created, created.Add(time.Minute))
	sleeper := ep("sleeper", created.Add(-time.Hour), created.Add(2*time.Hour))
	for _, order := range [][]*agentsv1alpha1.WebhookEndpoint{{victim, sleeper}, {sleeper, victim}} {
		tb := NewTable()
		for _, e := range order {
			tb.UpsertEndpoint(e)
		}
		if e := tb.Lookup("X"); e == nil || e.Obj.Name != "victim" {
			t.Fatalf("X serves %v, want the victim, which held it first", e)
		}
	}
}

// Filters are compiled when a call needs them, and only the last
// filterCacheEntries are kept: every replica holds every endpoint, and a
// compiled 4,096-character filter holds far more than its text.
func TestFiltersCompiledOnUseAndBounded(t *testing.T) {
	tb := NewTable()
	n := filterCacheEntries + 50
	var eps []*Endpoint
	for i := range n {
		id := fmt.Sprintf("%043d", i)
		tb.UpsertEndpoint(&agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("ep-%d", i), UID: types.UID(id)},
			Spec:       agentsv1alpha1.WebhookEndpointSpec{Filter: fmt.Sprintf(`event == "e%d"`, i)},
			Status:     agentsv1alpha1.WebhookEndpointStatus{EndpointID: id},
		})
		eps = append(eps, tb.Lookup(id))
	}
	if got := tb.filters.Len(); got != 0 {
		t.Fatalf("%d filters compiled before any call, want 0", got)
	}
	for i, e := range eps {
		f := tb.FilterOf(e)
		if f == nil || f.Err != nil {
			t.Fatalf("endpoint %d: filter %v", i, f)
		}
		if ok, err := f.Program.Matches(t.Context(), filter.Call{Event: fmt.Sprintf("e%d", i)}); err != nil || !ok {
			t.Fatalf("endpoint %d: its own filter does not match its event (%v)", i, err)
		}
	}
	if got := tb.filters.Len(); got != filterCacheEntries {
		t.Errorf("%d filters kept after calls to %d endpoints, want %d", got, n, filterCacheEntries)
	}
	// A changed expression is compiled again.
	changed := *eps[n-1].Obj
	changed.Spec.Filter = `event == "other"`
	tb.UpsertEndpoint(&changed)
	if ok, _ := tb.FilterOf(tb.Lookup(changed.Status.EndpointID)).Program.Matches(t.Context(), filter.Call{Event: "other"}); !ok {
		t.Error("the changed filter was not compiled again")
	}
}
