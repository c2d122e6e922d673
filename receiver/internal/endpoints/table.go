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
	"crypto/sha256"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/senders"
)

// endpoint is what the receiver knows of one WebhookEndpoint: the cached
// object (shared with the informer: read only), its parsed secret digests
// and its sender.
type Endpoint struct {
	Obj       *agentsv1alpha1.WebhookEndpoint
	digest    [sha256.Size]byte
	HasDigest bool
	// previous is the digest of the secret before the last change, valid
	// until previousUntil (spec.sender.rotationOverlap); zero time: none.
	previous      [sha256.Size]byte
	previousUntil time.Time
	Sender        *senders.Sender
}

// digests returns the digests a hash-only credential may match now.
func (e *Endpoint) Digests(now time.Time) []*[sha256.Size]byte {
	var out []*[sha256.Size]byte
	if e.HasDigest {
		out = append(out, &e.digest)
	}
	if now.Before(e.previousUntil) {
		out = append(out, &e.previous)
	}
	return out
}

// signingKey is what an endpoint's signing-key Secret holds: the secret
// whose hash is hash and, during a rotation overlap, the previous one. Each
// is kept only if it hashes to the hash annotated beside it.
type signingKey struct {
	hash, previousHash string
	secret, previous   []byte
}

// secretFor returns the secret whose hash is hash, if the Secret holds it.
func (k *signingKey) secretFor(hash string) []byte {
	switch {
	case hash == "":
		return nil
	case k.hash == hash:
		return k.secret
	case k.previousHash == hash:
		return k.previous
	}
	return nil
}

// table is the in-memory view the hot path reads: endpoints by endpoint ID,
// and the Agents and AgentThreads they refer to. Informer event handlers
// keep it current; lookups take a read lock and allocate nothing.
type Table struct {
	mu        sync.RWMutex
	endpoints map[string]*Endpoint            // by status.endpointID: the oldest endpoint with that ID
	byUID     map[types.UID]*Endpoint         // every endpoint that has an ID
	claims    map[string]int                  // endpointID -> how many endpoints have it
	agents    map[types.NamespacedName]bool   // Agent -> archived
	threads   map[types.NamespacedName]string // AgentThread -> agent name
	keys      map[types.UID]*signingKey       // endpoint UID -> signing key
	// filters holds the compiled filters of the endpoints called last
	// (FilterOf, ClaimsOf, FieldsOf).
	filters *lru.Cache
	// onUpsert and onDelete tell the handler of every endpoint the
	// informer delivers and removes.
	OnUpsert func(*agentsv1alpha1.WebhookEndpoint)
	OnDelete func(endpointID string, uid types.UID)
}

func NewTable() *Table {
	return &Table{
		endpoints: map[string]*Endpoint{},
		byUID:     map[types.UID]*Endpoint{},
		claims:    map[string]int{},
		agents:    map[types.NamespacedName]bool{},
		threads:   map[types.NamespacedName]string{},
		keys:      map[types.UID]*signingKey{},
		filters:   lru.New(filterCacheEntries),
	}
}

// keysFor returns the HMAC keys a signed call to e may verify with now: the
// key of the secret status.secretHash names and, during a rotation overlap,
// of the one status.previousSecretHash names, derived for e's sender type.
// A signing-key Secret that is behind the endpoint's status (or ahead of it)
// contributes only the secrets whose hashes the status names.
func (t *Table) KeysFor(e *Endpoint, now time.Time) [][]byte {
	t.mu.RLock()
	k := t.keys[e.Obj.UID]
	t.mu.RUnlock()
	if k == nil {
		return nil
	}
	var keys [][]byte
	add := func(hash string) {
		if secret := k.secretFor(hash); secret != nil {
			if key, err := agentsv1alpha1.SigningKey(e.Sender.Kind, secret); err == nil {
				keys = append(keys, key)
			}
		}
	}
	add(e.Obj.Status.SecretHash)
	if now.Before(e.previousUntil) {
		add(e.Obj.Status.PreviousSecretHash)
	}
	return keys
}

// upsertKey takes a signing-key Secret: only under the name the operator
// gives it, and only the secrets that hash to their annotations.
func (t *Table) UpsertKey(s *corev1.Secret) {
	uid, ok := signingKeyUID(s)
	if !ok {
		return
	}
	k := &signingKey{}
	if h := s.Annotations[agentsv1alpha1.AnnotationKeyHash]; agentsv1alpha1.SecretHash(s.Data[agentsv1alpha1.SigningKeySecret]) == h {
		k.hash, k.secret = h, s.Data[agentsv1alpha1.SigningKeySecret]
	}
	if h := s.Annotations[agentsv1alpha1.AnnotationPreviousKeyHash]; agentsv1alpha1.SecretHash(s.Data[agentsv1alpha1.SigningKeyPreviousSecret]) == h {
		k.previousHash, k.previous = h, s.Data[agentsv1alpha1.SigningKeyPreviousSecret]
	}
	t.mu.Lock()
	t.keys[uid] = k
	t.mu.Unlock()
}

// signingKeyUID is the endpoint UID of a signing-key Secret named as the
// operator names it.
func signingKeyUID(s *corev1.Secret) (types.UID, bool) {
	uid := s.Labels[agentsv1alpha1.LabelEndpointUID]
	return types.UID(uid), uid != "" && s.Name == agentsv1alpha1.SigningKeySecretName(uid)
}

func (t *Table) DeleteKey(s *corev1.Secret) {
	uid, ok := signingKeyUID(s)
	if !ok {
		return
	}
	t.mu.Lock()
	delete(t.keys, uid)
	t.mu.Unlock()
}

func (t *Table) Lookup(id string) *Endpoint {
	t.mu.RLock()
	e := t.endpoints[id]
	t.mu.RUnlock()
	return e
}

// agentAvailable tells whether the Agent exists and is not archived.
func (t *Table) AgentAvailable(ns, name string) bool {
	t.mu.RLock()
	archived, ok := t.agents[types.NamespacedName{Namespace: ns, Name: name}]
	t.mu.RUnlock()
	return ok && !archived
}

// threadOf returns the agent of an AgentThread and whether it exists.
func (t *Table) ThreadOf(ns, name string) (string, bool) {
	t.mu.RLock()
	agent, ok := t.threads[types.NamespacedName{Namespace: ns, Name: name}]
	t.mu.RUnlock()
	return agent, ok
}

func (t *Table) UpsertEndpoint(ep *agentsv1alpha1.WebhookEndpoint) {
	if t.OnUpsert != nil {
		t.OnUpsert(ep)
	}
	e := &Endpoint{Obj: ep, Sender: senders.New(&ep.Spec)}
	if ep.Status.SecretHash != "" {
		if d, err := agentsv1alpha1.ParseSecretHash(ep.Status.SecretHash); err == nil {
			e.digest, e.HasDigest = d, true
		}
	}
	if ep.Status.PreviousSecretHash != "" && ep.Status.PreviousSecretExpiresAt != nil {
		if d, err := agentsv1alpha1.ParseSecretHash(ep.Status.PreviousSecretHash); err == nil {
			e.previous, e.previousUntil = d, ep.Status.PreviousSecretExpiresAt.Time
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.byUID[ep.UID]; old != nil && old.Obj.Status.EndpointID != ep.Status.EndpointID {
		t.release(old)
	}
	id := ep.Status.EndpointID
	if id == "" {
		return
	}
	if old := t.byUID[ep.UID]; old == nil {
		t.claims[id]++
	}
	t.byUID[ep.UID] = e
	// Two endpoints with one ID (copied into status, or pinned twice): the
	// older keeps it, the newer is not served (the operator reports
	// EndpointIDConflict on it).
	if cur := t.endpoints[id]; cur == nil || cur.Obj.UID == ep.UID || ep.HoldsIDBefore(cur.Obj) {
		t.endpoints[id] = e
	}
}

// release drops e's claim on its ID; if e was served under it, the oldest
// other endpoint with that ID is served instead. It reports whether e was
// served. t.mu must be held.
func (t *Table) release(e *Endpoint) bool {
	id := e.Obj.Status.EndpointID
	delete(t.byUID, e.Obj.UID)
	if t.claims[id]--; t.claims[id] <= 0 {
		delete(t.claims, id)
	}
	if cur := t.endpoints[id]; cur == nil || cur.Obj.UID != e.Obj.UID {
		return false
	}
	delete(t.endpoints, id)
	if t.claims[id] == 0 {
		return true
	}
	for _, other := range t.byUID { // rare: only while an ID is claimed twice
		if other.Obj.Status.EndpointID == id {
			if cur := t.endpoints[id]; cur == nil || other.Obj.HoldsIDBefore(cur.Obj) {
				t.endpoints[id] = other
			}
		}
	}
	return true
}

func (t *Table) DeleteEndpoint(ep *agentsv1alpha1.WebhookEndpoint) {
	t.mu.Lock()
	id := ""
	if e := t.byUID[ep.UID]; e != nil && t.release(e) && t.endpoints[e.Obj.Status.EndpointID] == nil {
		id = e.Obj.Status.EndpointID // nothing is served under it any more
	}
	t.mu.Unlock()
	if t.OnDelete != nil {
		t.OnDelete(id, ep.UID) // id is empty unless the ID is no longer served
	}
}

func (t *Table) UpsertAgent(a *agentsv1alpha1.Agent) {
	t.mu.Lock()
	t.agents[types.NamespacedName{Namespace: a.Namespace, Name: a.Name}] = a.Spec.Archived
	t.mu.Unlock()
}

func (t *Table) DeleteAgent(a *agentsv1alpha1.Agent) {
	t.mu.Lock()
	delete(t.agents, types.NamespacedName{Namespace: a.Namespace, Name: a.Name})
	t.mu.Unlock()
}

func (t *Table) UpsertThread(th *agentsv1alpha1.AgentThread) {
	t.mu.Lock()
	t.threads[types.NamespacedName{Namespace: th.Namespace, Name: th.Name}] = th.Spec.AgentRef.Name
	t.mu.Unlock()
}

func (t *Table) DeleteThread(th *agentsv1alpha1.AgentThread) {
	t.mu.Lock()
	delete(t.threads, types.NamespacedName{Namespace: th.Namespace, Name: th.Name})
	t.mu.Unlock()
}

// Claimants tells how many endpoints claim the ID id (two while one is
// copied into another's status, or pinned twice).
func (t *Table) Claimants(id string) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.claims[id]
}

// KeyHashes returns the hashes of the secrets an endpoint's signing-key
// Secret holds, as taken (only those that hash to their annotations), and
// whether the table has its Secret.
func (t *Table) KeyHashes(uid types.UID) (hash, previousHash string, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	k := t.keys[uid]
	if k == nil {
		return "", "", false
	}
	return k.hash, k.previousHash, true
}

// Available is step 5 of the receive route: the endpoint is not paused,
// its Agent is there and not archived, and its target thread (if any) is
// the Agent's. If not, it returns the answer (422) and why.
func (t *Table) Available(e *Endpoint) (answer.Answer, string, bool) {
	ep := e.Obj
	if ep.Spec.Paused || ep.Status.Phase == agentsv1alpha1.EndpointPaused {
		return answer.Paused, answer.ReasonPaused, false
	}
	if !t.AgentAvailable(ep.Namespace, ep.Spec.AgentRef.Name) {
		return answer.NoAgent, answer.ReasonNoAgent, false
	}
	if ep.Spec.ThreadStrategy == agentsv1alpha1.ContinueExisting {
		if ep.Spec.TargetThreadRef == nil {
			return answer.NoThread, answer.ReasonNoThread, false
		}
		if agent, ok := t.ThreadOf(ep.Namespace, ep.Spec.TargetThreadRef.Name); !ok || agent != ep.Spec.AgentRef.Name {
			return answer.NoThread, answer.ReasonNoThread, false
		}
	}
	return answer.Answer{}, "", true
}
