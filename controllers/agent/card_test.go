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
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
	"github.com/hookrun/hookrun/controllers/internal/secretref"
)

// cardBench is an Reconciler whose card reads are counted and answered
// by answer.
type cardBench struct {
	r      *Reconciler
	reads  int
	answer func() (a2a.Interface, error)
}

func newCardBench() *cardBench {
	b := &cardBench{answer: func() (a2a.Interface, error) {
		return a2a.Interface{URL: "http://agent/rest", Binding: a2a.BindingHTTPJSON, Version: a2a.V10}, nil
	}}
	b.r = &Reconciler{Cards: NewCardRefreshes(), ReadCard: func(context.Context, string, *secretref.AgentTLS) (a2a.Interface, error) {
		b.reads++
		return b.answer()
	}}
	return b
}

func discoveredAgent() *agentsv1alpha1.Agent {
	return &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "triage", Generation: 1},
		Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://agent/"}},
	}
}

// observed is agent as the next reconcile reads it: its status written at
// its generation.
func observed(agent *agentsv1alpha1.Agent) *agentsv1alpha1.Agent {
	next := agent.DeepCopy()
	next.Status.ObservedGeneration = next.Generation
	return next
}

func TestCardReadWhenDue(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	b := newCardBench()
	agent := discoveredAgent()

	st := b.r.resolveA2A(context.Background(), agent, nil, false, t0)
	if b.reads != 1 || agent.Status.A2A == nil || agent.Status.A2A.ProtocolBinding != agentsv1alpha1.A2ABindingHTTPJSON || st.next != cardRefresh {
		t.Fatalf("first reconcile: %d reads, status %+v, next %v; want one read, HTTP+JSON, next %v", b.reads, agent.Status.A2A, st.next, cardRefresh)
	}
	agent = observed(agent)

	st = b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(time.Minute))
	if b.reads != 1 || st.next != 9*time.Minute {
		t.Fatalf("a minute later: %d reads, next %v; want no new read, next 9m", b.reads, st.next)
	}

	key := types.NamespacedName{Namespace: "team-a", Name: "triage"}
	for range 100 { // a hundred runs failing at once ask for one read
		b.r.Cards.Request(key)
	}
	st = b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(time.Minute))
	if b.reads != 2 {
		t.Fatalf("after sends asked for it: %d reads, want 2", b.reads)
	}
	for range 100 {
		b.r.Cards.Request(key)
	}
	st = b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(time.Minute+10*time.Second))
	if b.reads != 2 || st.next != CardRetry-10*time.Second {
		t.Fatalf("asked again 10s after a read: %d reads, next %v; want still 2, next 20s", b.reads, st.next)
	}
	b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(time.Minute+CardRetry))
	if b.reads != 3 {
		t.Fatalf("30s after: %d reads, want 3", b.reads)
	}
	b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(time.Minute+CardRetry+cardRefresh))
	if b.reads != 4 {
		t.Fatalf("10 minutes after: %d reads, want 4", b.reads)
	}

	agent.Generation++ // the spec changed
	b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(time.Minute+CardRetry+cardRefresh))
	if b.reads != 5 {
		t.Fatalf("after a spec change: %d reads, want 5", b.reads)
	}
}

func TestCardReadAfterOperatorRestart(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	b := newCardBench()
	agent := discoveredAgent()
	b.r.resolveA2A(context.Background(), agent, nil, false, t0)
	agent = observed(agent)

	b.r.Cards = NewCardRefreshes() // a new operator: nothing in memory
	st := b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(2*time.Minute))
	if b.reads != 1 || st.next != 8*time.Minute {
		t.Fatalf("after a restart: %d reads, next %v; want the card of status.a2a trusted until its refresh (1 read, next 8m)", b.reads, st.next)
	}
}

func TestCardFailures(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	unreachable := &a2a.Error{Op: "card", Retryable: true, Err: errors.New("connection refused")}
	useless := errors.New("the agent card at http://agent/.well-known/agent-card.json lists no interface the operator speaks; it lists: GRPC 1.0")

	t.Run("unreachable before any read: reconciling, read again in 30s, not before", func(t *testing.T) {
		b := newCardBench()
		b.answer = func() (a2a.Interface, error) { return a2a.Interface{}, unreachable }
		agent := discoveredAgent()
		st := b.r.resolveA2A(context.Background(), agent, nil, false, t0)
		if st.problem == "" || !st.transient || st.next != CardRetry || agent.Status.A2A != nil {
			t.Fatalf("got %+v, status %+v", st, agent.Status.A2A)
		}
		agent = observed(agent)
		st = b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(10*time.Second))
		if b.reads != 1 || st.problem == "" || st.next != 20*time.Second {
			t.Fatalf("10s later: %d reads, %+v; want the failure kept, no read", b.reads, st)
		}
		b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(CardRetry))
		if b.reads != 2 {
			t.Fatalf("30s later: %d reads, want 2", b.reads)
		}
	})

	t.Run("unreachable after a good read: the last card holds", func(t *testing.T) {
		b := newCardBench()
		agent := discoveredAgent()
		b.r.resolveA2A(context.Background(), agent, nil, false, t0)
		agent = observed(agent)
		b.answer = func() (a2a.Interface, error) { return a2a.Interface{}, unreachable }
		st := b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(cardRefresh))
		if st.problem != "" || agent.Status.A2A == nil || st.next != CardRetry {
			t.Fatalf("got %+v, status %+v; want the earlier card kept, read again in 30s", st, agent.Status.A2A)
		}
	})

	t.Run("a card that lists nothing usable: stalled, status.a2a cleared", func(t *testing.T) {
		b := newCardBench()
		agent := discoveredAgent()
		b.r.resolveA2A(context.Background(), agent, nil, false, t0)
		agent = observed(agent)
		b.answer = func() (a2a.Interface, error) { return a2a.Interface{}, useless }
		st := b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(cardRefresh))
		if st.problem != useless.Error() || st.transient || agent.Status.A2A != nil {
			t.Fatalf("got %+v, status %+v", st, agent.Status.A2A)
		}
	})
}

func TestNoCardRead(t *testing.T) {
	b := newCardBench()
	agent := discoveredAgent()
	agent.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
	st := b.r.resolveA2A(context.Background(), agent, nil, false, time.Now())
	want := agentsv1alpha1.A2AStatus{URL: "http://agent/", ProtocolBinding: agentsv1alpha1.A2ABindingJSONRPC, ProtocolVersion: "0.3"}
	if b.reads != 0 || st != (cardState{}) || agent.Status.A2A == nil || *agent.Status.A2A != want {
		t.Fatalf("protocolVersion set: %d reads, %+v, status %+v; want no read and status %+v", b.reads, st, agent.Status.A2A, want)
	}

	agent = discoveredAgent()
	b.r.resolveA2A(context.Background(), agent, nil, true, time.Now())
	if b.reads != 0 || agent.Status.A2A != nil {
		t.Fatalf("URL refused by the allow-list: %d reads, status %+v; want none", b.reads, agent.Status.A2A)
	}
}

func TestCardReadRetriesBackOff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 4: 4 * time.Minute, 5: 5 * time.Minute, 50: 5 * time.Minute} {
		if got := retryAfter(n); got != want {
			t.Errorf("retryAfter(%d) = %v, want %v", n, got, want)
		}
	}
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	b := newCardBench()
	b.answer = func() (a2a.Interface, error) { return a2a.Interface{}, errors.New("HTTP 404 at both places") }
	agent := discoveredAgent()
	at := t0
	for i, want := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute} {
		st := b.r.resolveA2A(context.Background(), agent, nil, false, at)
		if b.reads != i+1 || st.next != want {
			t.Fatalf("failure %d: %d reads, next %v; want %d reads, next %v", i+1, b.reads, st.next, i+1, want)
		}
		agent = observed(agent)
		at = at.Add(want)
	}
}

func TestCardKeptAcrossAnotherSpecChange(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	b := newCardBench()
	agent := discoveredAgent()
	b.r.resolveA2A(context.Background(), agent, nil, false, t0)
	agent = observed(agent)
	agent.Generation++ // spec.model changed, not the URL
	b.answer = func() (a2a.Interface, error) {
		return a2a.Interface{}, &a2a.Error{Op: "card", Retryable: true, Err: errors.New("connection reset")}
	}
	st := b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(time.Minute))
	if b.reads != 2 || st.problem != "" || agent.Status.A2A == nil {
		t.Fatalf("after another field changed and the card could not be read: %d reads, %+v, status %+v; want the card kept", b.reads, st, agent.Status.A2A)
	}
	agent = observed(agent)
	agent.Generation++
	agent.Spec.A2A.URL = "http://elsewhere/"
	st = b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(2*time.Minute))
	if st.problem == "" || agent.Status.A2A != nil {
		t.Fatalf("after the URL changed: %+v, status %+v; want the old URL's card dropped", st, agent.Status.A2A)
	}
}

func TestCardReadAgainWhenItsStatusWasLost(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	b := newCardBench()
	agent := discoveredAgent()
	b.r.resolveA2A(context.Background(), agent, nil, false, t0)
	lost := discoveredAgent() // the status write conflicted: the Agent still shows none
	b.r.resolveA2A(context.Background(), lost, nil, false, t0.Add(time.Second))
	if b.reads != 2 || lost.Status.A2A == nil {
		t.Fatalf("%d reads, status %+v; want the card read again and set", b.reads, lost.Status.A2A)
	}
}

func TestCardRequestWakesOnce(t *testing.T) {
	c := NewCardRefreshes()
	key := types.NamespacedName{Namespace: "team-a", Name: "triage"}
	for range 100 {
		c.Request(key)
	}
	if n := len(c.wake); n != 1 {
		t.Fatalf("a hundred requests woke the reconciler %d times, want once", n)
	}
}

// TestFailedCardReadBacksOffAcrossSpecChanges: after a failed read, a
// spec change (a tenant patching spec.model in a loop on an Agent whose
// card URL hangs) does not read again before the backoff ends; then the
// spec the Agent has is read.
func TestFailedCardReadBacksOffAcrossSpecChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	b := newCardBench()
	b.answer = func() (a2a.Interface, error) { return a2a.Interface{}, errors.New("context deadline exceeded") }
	agent := discoveredAgent()
	st := b.r.resolveA2A(context.Background(), agent, nil, false, t0)
	if b.reads != 1 || st.next != CardRetry {
		t.Fatalf("first read: %d reads, next %v; want 1, %v", b.reads, st.next, CardRetry)
	}
	for i := range 20 {
		agent.Generation++
		agent.Spec.Model = fmt.Sprintf("model-%d", i)
		st = b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(time.Duration(i)*time.Second))
	}
	if b.reads != 1 {
		t.Fatalf("20 spec changes within the backoff: %d reads, want still 1", b.reads)
	}
	if want := CardRetry - 19*time.Second; st.next != want {
		t.Fatalf("next %v, want %v: the backoff's end", st.next, want)
	}
	b.answer = func() (a2a.Interface, error) {
		return a2a.Interface{URL: "http://agent/rest", Binding: a2a.BindingHTTPJSON, Version: a2a.V10}, nil
	}
	b.r.resolveA2A(context.Background(), agent, nil, false, t0.Add(CardRetry))
	if b.reads != 2 || agent.Status.A2A == nil {
		t.Fatalf("once the backoff ended: %d reads, status %+v; want a read of the current spec", b.reads, agent.Status.A2A)
	}

	// A new URL, the fix of a wrong one, is read at once.
	b.answer = func() (a2a.Interface, error) { return a2a.Interface{}, errors.New("context deadline exceeded") }
	wrong := discoveredAgent()
	wrong.Name = "moved"
	b.r.resolveA2A(context.Background(), wrong, nil, false, t0)
	b.answer = func() (a2a.Interface, error) {
		return a2a.Interface{URL: "http://fixed/rest", Binding: a2a.BindingHTTPJSON, Version: a2a.V10}, nil
	}
	wrong.Generation++
	wrong.Spec.A2A.URL = "http://fixed/"
	b.r.resolveA2A(context.Background(), wrong, nil, false, t0.Add(time.Second))
	if b.reads != 4 || wrong.Status.A2A == nil {
		t.Fatalf("a new spec.a2a.url a second after a failed read: %d reads, status %+v; want it read at once", b.reads, wrong.Status.A2A)
	}
}

// TestCardReadsOfANamespaceHoldHalfTheWorkers: while one namespace's
// Agents read as many cards as it may (half the Agent workers, each read
// up to cardReadTimeout), another of its Agents does not read (it is
// looked at again in a second, holding no worker), and another
// namespace's Agent reads at once.
func TestCardReadsOfANamespaceHoldHalfTheWorkers(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	hang := make(chan struct{})
	started := make(chan string, agentWorkers)
	r := &Reconciler{Cards: NewCardRefreshes(), ReadCard: func(ctx context.Context, url string, _ *secretref.AgentTLS) (a2a.Interface, error) {
		started <- url
		if url == "http://hangs/" {
			select {
			case <-hang:
			case <-ctx.Done(): // cardReadTimeout
			}
			return a2a.Interface{}, errors.New("context deadline exceeded")
		}
		return a2a.Interface{URL: url + "rest", Binding: a2a.BindingHTTPJSON, Version: a2a.V10}, nil
	}}
	agentOf := func(ns, name, url string) *agentsv1alpha1.Agent {
		a := discoveredAgent()
		a.Namespace, a.Name, a.Spec.A2A.URL = ns, name, url
		return a
	}
	var wg sync.WaitGroup
	for i := range namespaceReads {
		wg.Go(func() {
			r.resolveA2A(context.Background(), agentOf("tarpit", fmt.Sprintf("a%d", i), "http://hangs/"), nil, false, now)
		})
	}
	for range namespaceReads {
		<-started
	}
	st := r.resolveA2A(context.Background(), agentOf("tarpit", "another", "http://hangs/"), nil, false, now)
	if st.next != readBusyRetry {
		t.Fatalf("a third read of the namespace: next %v, want %v and no read", st.next, readBusyRetry)
	}
	other := agentOf("team-b", "triage", "http://agent/")
	r.resolveA2A(context.Background(), other, nil, false, now)
	if other.Status.A2A == nil {
		t.Fatal("another namespace's Agent got no card while the first held its share")
	}
	close(hang)
	wg.Wait()
	if got := <-started; got != "http://agent/" {
		t.Fatalf("read %s; the namespace over its share read", got)
	}
	r.Cards.mu.Lock()
	defer r.Cards.mu.Unlock()
	if len(r.Cards.reading) != 0 {
		t.Fatalf("reads left counted: %v", r.Cards.reading)
	}
}
