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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// IDHandoverReserve is how long after the endpoint holding an ID is deleted
// only an endpoint of its namespace may take the ID. Without it, the waiters
// woken by the deletion race for the ID in no fixed order, and a tenant who
// learned an ID could stack endpoints pinning it in its own namespace and
// win the handover almost every time (the holder's team moving its URL to a
// new endpoint loses it).
const IDHandoverReserve = 10 * time.Minute

// idWaiters remembers which endpoints wait for an endpoint ID that another
// endpoint holds: such an endpoint has no ID in its status, so no index
// finds it when the holder goes. The map is rebuilt by the reconciles that
// follow a restart; it holds one entry per waiting endpoint.
//
// It also remembers, for IDHandoverReserve after a holder's deletion, the
// namespace the ID is reserved for (handOver). That is memory only: after
// an operator restart (or a change of leader) within those minutes the
// reservation is gone, and the waiters rebuilt by the reconciles take the
// ID in no fixed order. Persisting it would add a write path for every
// deletion of an endpoint; a tenant cannot cause a restart (the cache's
// memory is bounded per object), and a holder's team that moves its URL
// creates its new endpoint before it deletes the old one, as the docs say.
type idWaiters struct {
	mu    sync.Mutex
	byID  map[string]map[types.NamespacedName]struct{}
	hopes map[types.NamespacedName]string
	// reserved maps an ID whose holder was deleted to the holder's
	// namespace and the end of the reservation.
	reserved map[string]idReservation
	// heldBy maps an ID that endpoints wait for to the namespace of the
	// holder they found: a waiter that finds the holder gone before the
	// deletion's event was handled starts the reservation itself.
	heldBy map[string]string
	// claims maps an ID to the endpoint that wrote it into its status in
	// the last claimHold (claim).
	claims map[string]idClaim
}

// claimHold is how long an endpoint that takes an ID holds it against the
// other endpoints this operator reconciles, while the cache may not show
// its status yet. The operator's clock does not count here: the cache's
// delay is real time.
const claimHold = 10 * time.Second

// idClaim is an endpoint that took an ID, and when.
type idClaim struct {
	key types.NamespacedName
	at  time.Time
}

// claim records that key is about to take id, and tells whether it may:
// not when another endpoint took it within claimHold. Two endpoints woken
// at once (a holder deleted, a reservation ended) both find no holder in
// the cache; without the claim both would write the ID, and both would
// hold it. Claims older than claimHold are dropped, so the map holds the
// IDs taken in the last claimHold.
func (w *idWaiters) claim(id string, key types.NamespacedName, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, c := range w.claims {
		if now.Sub(c.at) >= claimHold {
			delete(w.claims, k)
		}
	}
	if c, ok := w.claims[id]; ok && c.key != key {
		return false
	}
	if w.claims == nil {
		w.claims = map[string]idClaim{}
	}
	w.claims[id] = idClaim{key: key, at: now}
	return true
}

// idReservation is an ID kept for the namespace of its deleted holder.
type idReservation struct {
	namespace string
	until     time.Time
}

// wait records that key waits for id.
func (w *idWaiters) wait(id string, key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(key)
	if w.byID == nil {
		w.byID, w.hopes = map[string]map[types.NamespacedName]struct{}{}, map[types.NamespacedName]string{}
	}
	if w.byID[id] == nil {
		w.byID[id] = map[types.NamespacedName]struct{}{}
	}
	w.byID[id][key] = struct{}{}
	w.hopes[key] = id
}

// forget records that key waits for no ID (it has one, or is gone).
func (w *idWaiters) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(key)
}

func (w *idWaiters) forgetLocked(key types.NamespacedName) {
	id, ok := w.hopes[key]
	if !ok {
		return
	}
	delete(w.hopes, key)
	delete(w.byID[id], key)
	if len(w.byID[id]) == 0 {
		delete(w.byID, id)
		delete(w.heldBy, id)
	}
}

// waitingFor returns the endpoints waiting for id.
func (w *idWaiters) waitingFor(id string) []types.NamespacedName {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(w.byID[id]))
	for key := range w.byID[id] {
		out = append(out, key)
	}
	return out
}

// handOver records that the endpoint of namespace holding id was deleted at
// now: until IDHandoverReserve later only an endpoint of namespace may take
// id. Reservations that ended are dropped, so the map holds only the
// deletions of the last IDHandoverReserve.
func (w *idWaiters) handOver(id, namespace string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, r := range w.reserved {
		if !now.Before(r.until) {
			delete(w.reserved, k)
		}
	}
	w.reserveLocked(id, namespace, now)
}

func (w *idWaiters) reserveLocked(id, namespace string, now time.Time) {
	if w.reserved == nil {
		w.reserved = map[string]idReservation{}
	}
	w.reserved[id] = idReservation{namespace: namespace, until: now.Add(IDHandoverReserve)}
	delete(w.heldBy, id)
}

// sawHolder records that an endpoint waiting for id found it held by an
// endpoint of namespace.
func (w *idWaiters) sawHolder(id, namespace string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.heldBy == nil {
		w.heldBy = map[string]string{}
	}
	w.heldBy[id] = namespace
}

// reservedFor tells whether id, which no endpoint holds now, is reserved at
// now for a namespace other than namespace, and until when. A holder that
// waiters saw (sawHolder) and whose deletion was not handled yet is gone
// now: its reservation starts.
func (w *idWaiters) reservedFor(id, namespace string, now time.Time) (until time.Time, reserved bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ns, ok := w.heldBy[id]; ok {
		w.reserveLocked(id, ns, now)
	}
	r, ok := w.reserved[id]
	if !ok || r.namespace == namespace || !now.Before(r.until) {
		return time.Time{}, false
	}
	return r.until, true
}
