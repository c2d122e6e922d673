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
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
	"github.com/hookrun/hookrun/controllers/internal/secretref"
	"github.com/hookrun/hookrun/controllers/internal/status"
)

// When an Agent's card is read again (DESIGN §11): every cardRefresh, when
// the spec changes, and when a send failed for a reason a new card may mend
// (the agent moved, or speaks another version now), though then at most
// once per CardRetry, whatever the number of runs failing. A read that
// failed is tried again after CardRetry, doubling with each failure in a
// row up to cardRetryMax. A read takes at most cardReadTimeout (both
// places), so an agent that never answers holds one of the Agent
// reconciler's workers that long, at most once per cardRetryMax.
const (
	cardRefresh     = 10 * time.Minute
	cardRetryMax    = 5 * time.Minute
	cardReadTimeout = 10 * time.Second
)

// CardRetry is the least time between two reads of one Agent's card asked
// for by failed sends, and the wait after a first failed read.
const CardRetry = 30 * time.Second

// CardReader reads the agent card under agentURL, over the TLS of the
// Agent's spec.a2a.tls (nil: the operator's defaults), and picks the
// interface runs are sent to; a2a.ReadCard with the operator's
// egress-checked clients.
type CardReader func(ctx context.Context, agentURL string, tls *secretref.AgentTLS) (a2a.Interface, error)

// NewHTTPCardReader is the production CardReader, with the clients runs
// are sent with.
func NewHTTPCardReader(allow *a2a.AllowList, clients *a2a.Clients) CardReader {
	return func(ctx context.Context, agentURL string, t *secretref.AgentTLS) (a2a.Interface, error) {
		hc := clients.Plain()
		if t != nil {
			var err error
			if hc, err = clients.For(t.Namespace, t.ID, t.Config); err != nil {
				return a2a.Interface{}, err
			}
		}
		return a2a.ReadCard(ctx, hc, allow, agentURL)
	}
}

// cardState is what the Agent reconciler knows of an Agent's card.
type cardState struct {
	// problem is why no interface can be used; empty when status.a2a is set
	// or no card is needed.
	problem string
	// transient: the read may succeed later by itself (the agent is not up
	// yet); otherwise the card or the URL must change.
	transient bool
	// next is when to read the card again; zero when no card is read.
	next time.Duration
}

// cardAttempt is the last read of an Agent's card, kept in memory so that
// a card that cannot be read is not read again on every event of the Agent.
type cardAttempt struct {
	at         time.Time
	generation int64
	// url is the spec.a2a.url read; failures, how many reads in a row failed.
	url      string
	failures int
	state    cardState
}

// CardRefreshes is where execution asks for an Agent's card to be read
// again, and the Agent reconciler learns of it. It holds one entry per
// Agent at most, and attempts only for Agents whose card is read.
type CardRefreshes struct {
	mu       sync.Mutex
	wanted   map[types.NamespacedName]bool
	attempts map[types.NamespacedName]cardAttempt
	// reading counts the card reads in flight by namespace, an entry only
	// while one is.
	reading map[string]int
	wake    chan event.TypedGenericEvent[reconcile.Request]
}

// namespaceReads is how many cards of one namespace's Agents are read at
// once: half the Agent workers. A read may take cardReadTimeout, and one
// namespace's Agents whose card URLs hang must leave workers to the
// others' new Agents.
const namespaceReads = agentWorkers / 2

// readBusyRetry is when an Agent whose namespace reads as many cards as it
// may is looked at again.
const readBusyRetry = time.Second

func NewCardRefreshes() *CardRefreshes {
	return &CardRefreshes{
		wanted:   map[types.NamespacedName]bool{},
		attempts: map[types.NamespacedName]cardAttempt{},
		reading:  map[string]int{},
		wake:     make(chan event.TypedGenericEvent[reconcile.Request], 1024),
	}
}

// Request asks for the card of agent to be read again. Only the first
// request since the last read wakes the reconciler, which reads the card
// when CardRetry has passed since the last read, or requeues the Agent for
// then: a hundred failing sends cost one reconcile. It never blocks: when
// the wake channel is full, the wish is still recorded and is seen at the
// Agent's next reconcile (at most cardRefresh away).
func (c *CardRefreshes) Request(agent types.NamespacedName) {
	if c == nil {
		return
	}
	c.mu.Lock()
	already := c.wanted[agent]
	c.wanted[agent] = true
	c.mu.Unlock()
	if already {
		return
	}
	select {
	case c.wake <- event.TypedGenericEvent[reconcile.Request]{Object: reconcile.Request{NamespacedName: agent}}:
	default:
	}
}

// source wakes the Agent reconciler for each request.
func (c *CardRefreshes) source() source.TypedSource[reconcile.Request] {
	return source.TypedChannel(c.wake, handler.TypedEnqueueRequestsFromMapFunc(
		func(_ context.Context, r reconcile.Request) []reconcile.Request { return []reconcile.Request{r} }))
}

// forget drops what is known of a deleted Agent, or of one whose card is
// no longer read.
func (c *CardRefreshes) forget(agent types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.wanted, agent)
	delete(c.attempts, agent)
}

// resolveA2A sets agent.Status.A2A to where runs are sent, reading the
// agent card when spec.a2a.protocolVersion is unset and a read is due.
// urlRefused: the allow-list refuses spec.a2a.url, so nothing is read;
// agentTLS: the Agent's TLS Secrets the card is read with (nil: none).
func (r *Reconciler) resolveA2A(ctx context.Context, agent *agentsv1alpha1.Agent, agentTLS *secretref.AgentTLS, urlRefused bool, now time.Time) cardState {
	key := types.NamespacedName{Namespace: agent.Namespace, Name: agent.Name}
	spec := agent.Spec.A2A
	switch {
	case spec.ProtocolVersion != "":
		r.Cards.forget(key)
		agent.Status.A2A = &agentsv1alpha1.A2AStatus{URL: spec.URL, ProtocolBinding: agentsv1alpha1.A2ABindingJSONRPC, ProtocolVersion: spec.ProtocolVersion}
		return cardState{}
	case urlRefused:
		r.Cards.forget(key)
		agent.Status.A2A = nil
		return cardState{}
	}
	last, due := r.Cards.due(key, agent, now)
	if !due {
		return last.state
	}
	if !r.Cards.startRead(key.Namespace) {
		// The namespace reads as many cards as it may: look again soon,
		// without holding a worker.
		return cardState{problem: last.state.problem, transient: last.state.transient, next: readBusyRetry}
	}
	iface, err := func() (a2a.Interface, error) {
		defer r.Cards.endRead(key.Namespace)
		readCtx, cancel := context.WithTimeout(ctx, cardReadTimeout)
		defer cancel()
		return r.ReadCard(readCtx, spec.URL, agentTLS)
	}()
	attempt := cardAttempt{at: now, generation: agent.Generation, url: spec.URL, state: cardState{next: cardRefresh}}
	switch {
	case err == nil:
		agent.Status.A2A = &agentsv1alpha1.A2AStatus{
			URL: iface.URL, ProtocolBinding: agentsv1alpha1.A2AProtocolBinding(iface.Binding),
			ProtocolVersion: agentsv1alpha1.A2AProtocolVersion(iface.Version), Tenant: iface.Tenant,
			CardReadAt: &metav1.Time{Time: now},
		}
	case a2a.IsRetryable(err) && readFrom(agent, last, spec.URL):
		// The agent is briefly unreachable: what its card said a moment ago
		// still holds, and sends report their own errors.
		attempt.failures = failuresInARow(last, spec.URL)
		attempt.state.next = retryAfter(attempt.failures)
	default:
		agent.Status.A2A = nil
		attempt.failures = failuresInARow(last, spec.URL)
		attempt.state = cardState{problem: err.Error(), transient: a2a.IsRetryable(err), next: retryAfter(attempt.failures)}
	}
	r.Cards.attempted(key, attempt)
	return attempt.state
}

// readFrom tells whether status.a2a holds what the card under url said:
// read for the Agent's current generation, or for an earlier one with the
// same url (another field of the spec changed).
func readFrom(agent *agentsv1alpha1.Agent, last cardAttempt, url string) bool {
	return cardCurrent(agent) || agent.Status.A2A != nil && agent.Status.A2A.CardReadAt != nil && last.url == url
}

// failuresInARow counts the read failing now with those before it at url.
func failuresInARow(last cardAttempt, url string) int {
	if last.url != url {
		return 1
	}
	return last.failures + 1
}

// retryAfter is when to read again after n failures in a row.
func retryAfter(n int) time.Duration {
	d := CardRetry
	for i := 1; i < n && d < cardRetryMax; i++ {
		d *= 2
	}
	return min(d, cardRetryMax)
}

// cardCurrent tells whether status.a2a was read from the card of the spec
// the Agent has now.
func cardCurrent(agent *agentsv1alpha1.Agent) bool {
	st := agent.Status
	return st.A2A != nil && st.A2A.CardReadAt != nil && st.ObservedGeneration == agent.Generation
}

// due tells whether agent's card must be read now, and returns the last
// attempt with its next read scheduled from now.
func (c *CardRefreshes) due(key types.NamespacedName, agent *agentsv1alpha1.Agent, now time.Time) (cardAttempt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, tried := c.attempts[key]
	if tried && last.generation == agent.Generation && last.state.problem == "" && !cardCurrent(agent) {
		// Read for this generation, but the status written with it did not
		// land (a conflict): read again rather than wait for the refresh.
		return last, true
	}
	if tried && last.generation != agent.Generation && last.failures > 0 && now.Sub(last.at) < last.state.next &&
		last.url == agent.Spec.A2A.URL {
		// The last read failed: a spec change that leaves spec.a2a.url
		// (a model patched in a loop) does not read again before its
		// backoff ends; the next read is of the spec the Agent has then. A
		// new URL (the fix of a wrong one) is read at once: a namespace
		// changing URLs in a loop is bounded by its share of reads.
		last.state.next -= now.Sub(last.at)
		return last, false
	}
	if !tried || last.generation != agent.Generation {
		if cardCurrent(agent) {
			// Read before a restart of the operator: trust it until its refresh.
			last = cardAttempt{at: agent.Status.A2A.CardReadAt.Time, generation: agent.Generation, state: cardState{next: cardRefresh}}
		} else {
			return last, true
		}
	}
	since := now.Sub(last.at)
	wanted := c.wanted[key] && since >= CardRetry
	if wanted || since >= last.state.next {
		delete(c.wanted, key)
		return last, true
	}
	next := last.state.next - since
	if c.wanted[key] {
		next = min(next, CardRetry-since)
	}
	last.state.next = next
	return last, false
}

// startRead takes one of namespace's card reads; false when it reads as
// many as it may. A read started must end (endRead).
func (c *CardRefreshes) startRead(namespace string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reading[namespace] >= max(namespaceReads, 1) {
		return false
	}
	c.reading[namespace]++
	return true
}

func (c *CardRefreshes) endRead(namespace string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reading[namespace]--; c.reading[namespace] <= 0 {
		delete(c.reading, namespace)
	}
}

func (c *CardRefreshes) attempted(key types.NamespacedName, a cardAttempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts[key] = a
}

// cardSummary is the Ready of an Agent whose card gives no interface.
func cardSummary(state cardState) status.Summary {
	if state.problem == "" {
		return status.Reconciling(agentsv1alpha1.ReasonAgentCardInvalid, "spec.a2a.protocolVersion is unset and the agent card has not been read for the current spec yet; runs wait for it")
	}
	msg := fmt.Sprintf("spec.a2a.protocolVersion is unset and the agent card gives no interface to send runs to: %s. Runs wait for a usable card until their timeout", state.problem)
	if state.transient {
		// No time left in the message: it would change at every look, and
		// every change is a status write.
		return status.Reconciling(agentsv1alpha1.ReasonAgentCardInvalid, msg+"; the card is read again after 30s, then less often up to every 5m")
	}
	return status.Stalled(agentsv1alpha1.ReasonAgentCardInvalid, msg+"; fix the card, or set spec.a2a.protocolVersion to send JSON-RPC to spec.a2a.url")
}
