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

package membership

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The answers themselves come from a real API server in the operator suite;
// this checks the cache around them: reviews asked, attributes sent, expiry.
func TestSubjectAccessReviewCheckerCaches(t *testing.T) {
	allowed := map[string]bool{"alice": true}
	var reviews []authorizationv1.SubjectAccessReviewSpec
	c := reviewClient(t, func(sar *authorizationv1.SubjectAccessReview) {
		reviews = append(reviews, sar.Spec)
		sar.Status.Allowed = allowed[sar.Spec.User]
	})
	clk := clocktesting.NewFakeClock(time.Now())
	checker := NewSubjectAccessReviewChecker(c, readyNow, clk, DefaultTTL)
	ctx := t.Context()
	alice := &agentsv1alpha1.Owner{User: "alice", Groups: []string{"b", "a"}}

	for range 3 {
		if ok, err := checker.IsMember(ctx, "team-a", "triage", alice); err != nil || !ok {
			t.Fatalf("IsMember(alice) = %v, %v; want true", ok, err)
		}
	}
	if len(reviews) != 1 {
		t.Fatalf("%d reviews for three checks within the TTL, want 1", len(reviews))
	}
	got := reviews[0]
	if got.User != "alice" || got.Groups[0] != "a" || got.ResourceAttributes.Verb != "trigger" ||
		got.ResourceAttributes.Resource != "agents" || got.ResourceAttributes.Group != "agents.hookrun.dev" ||
		got.ResourceAttributes.Name != "triage" || got.ResourceAttributes.Namespace != "team-a" {
		t.Errorf("review spec %+v, want trigger on agents.hookrun.dev/agents/triage in team-a for alice with sorted groups", got)
	}

	allowed["alice"] = false
	clk.Step(DefaultTTL - time.Millisecond)
	if ok, _ := checker.IsMember(ctx, "team-a", "triage", alice); !ok {
		t.Error("answer changed before the TTL ran out")
	}
	clk.Step(time.Millisecond)
	if ok, _ := checker.IsMember(ctx, "team-a", "triage", alice); ok {
		t.Error("answer not refreshed after the TTL")
	}
	if ok, _ := checker.IsMember(ctx, "team-a", "other-agent", alice); ok {
		t.Error("another agent shares alice's cached answer")
	}
	n := len(reviews)
	if ok, err := checker.IsMember(ctx, "team-a", "triage", nil); ok || err != nil {
		t.Errorf("IsMember(no owner) = %v, %v; want false, nil", ok, err)
	}
	if len(reviews) != n {
		t.Error("a review was asked for an endpoint without an owner")
	}
}

func TestSubjectAccessReviewCheckerBoundsItsCache(t *testing.T) {
	c := reviewClient(t, func(*authorizationv1.SubjectAccessReview) {})
	clk := clocktesting.NewFakeClock(time.Now())
	checker := NewSubjectAccessReviewChecker(c, readyNow, clk, DefaultTTL)
	for i := range maxEntries + 10 {
		if i == maxEntries/2 {
			clk.Step(DefaultTTL) // the first half expires
		}
		if _, err := checker.IsMember(t.Context(), "ns", "agent", &agentsv1alpha1.Owner{User: string(rune('a'+i%26)) + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(checker.answers); n > maxEntries {
		t.Errorf("%d cached answers, want at most %d", n, maxEntries)
	}
}

// readyNow is an API server that is ready.
func readyNow(context.Context) error { return nil }

// A starting API server denies every review until its RBAC caches are
// filled (test/e2e/chaos shows it). A denial is believed only when
// /readyz passes after it and a review asked then denies too; until then
// it is an error (the receiver answers 503) and nothing is cached.
func TestSubjectAccessReviewCheckerBelievesOnlyReadyDenials(t *testing.T) {
	var answers []bool // the next reviews' answers; then denials
	reviews := 0
	c := reviewClient(t, func(sar *authorizationv1.SubjectAccessReview) {
		reviews++
		if len(answers) > 0 {
			sar.Status.Allowed, answers = answers[0], answers[1:]
		}
	})
	var notReady error
	readyChecks := 0
	ready := func(context.Context) error { readyChecks++; return notReady }
	checker := NewSubjectAccessReviewChecker(c, ready, clocktesting.NewFakeClock(time.Now()), DefaultTTL)
	ask := func(user string) (bool, error) {
		return checker.IsMember(t.Context(), "ns", "triage", &agentsv1alpha1.Owner{User: user})
	}

	notReady = errors.New("its /readyz answered 500")
	if ok, err := ask("ann"); err == nil || ok || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("denied by an API server that is not ready: IsMember = %v, %v; want an error", ok, err)
	}
	if reviews != 1 || readyChecks != 1 {
		t.Fatalf("%d reviews and %d readiness checks, want 1 and 1", reviews, readyChecks)
	}
	notReady = nil
	answers = []bool{false, true} // denied before the caches were filled, allowed after
	if ok, err := ask("ann"); err != nil || !ok {
		t.Fatalf("denied, then allowed once ready: IsMember = %v, %v; want true (the error was not cached)", ok, err)
	}
	if ok, err := ask("bob"); err != nil || ok {
		t.Fatalf("denied twice by a ready API server: IsMember = %v, %v; want false, nil", ok, err)
	}
	if ok, err := ask("bob"); err != nil || ok {
		t.Fatalf("a believed denial, asked again: IsMember = %v, %v; want false, nil", ok, err)
	}
	if reviews != 5 || readyChecks != 3 {
		t.Errorf("%d reviews and %d readiness checks, want 5 and 3: a denial costs two reviews and a readiness check, and a believed one is cached", reviews, readyChecks)
	}
}

// reviewClient is a client on which creating a SubjectAccessReview calls
// answer to fill in its status.
func reviewClient(t *testing.T, answer func(*authorizationv1.SubjectAccessReview)) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			sar, ok := obj.(*authorizationv1.SubjectAccessReview)
			if !ok {
				t.Fatalf("created a %T", obj)
			}
			answer(sar)
			return nil
		},
	}).Build()
}
