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

package limits

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Backlog caps the runs waiting to start, per endpoint and per Agent, across
// receiver replicas. The operator counts each endpoint's queued runs into
// status.runs.queued (batched, so seconds behind); this replica adds the
// runs it stored itself since the newest run that count includes
// (status.runs.lastRunTime, in whole seconds), for at most backlogSelfCount.
// Another replica's runs show only once the operator has counted them: the
// cap may be overshot by what the other replicas store within that lag. It
// is a safety cap, not a rate limit.
type Backlog struct {
	PerEndpoint, PerAgent int64

	mu        sync.Mutex
	endpoints map[types.UID]*endpointBacklog
	agents    map[types.NamespacedName]int64 // queued runs of the Agent's endpoints
}

// endpointBacklog is one endpoint's share of the backlog.
type endpointBacklog struct {
	agent    types.NamespacedName
	counted  int64     // status.runs.queued
	countsTo time.Time // status.runs.lastRunTime, to whole seconds
	// stored holds when each run this replica stored after countsTo was
	// received, oldest first; at most perEndpoint entries, since no more
	// are admitted.
	stored    []time.Time
	rejecting bool // a call was refused since the last one admitted
}

func (e *endpointBacklog) queued() int64 { return e.counted + int64(len(e.stored)) }

func NewBacklog(perEndpoint, perAgent int) *Backlog {
	return &Backlog{
		PerEndpoint: int64(perEndpoint),
		PerAgent:    int64(perAgent),
		endpoints:   map[types.UID]*endpointBacklog{},
		agents:      map[types.NamespacedName]int64{},
	}
}

// Observe takes an endpoint's counts from its status. Runs this replica
// stored that were received before the newest counted one are in the count.
func (b *Backlog) Observe(ep *agentsv1alpha1.WebhookEndpoint) {
	agent := types.NamespacedName{Namespace: ep.Namespace, Name: ep.Spec.AgentRef.Name}
	var countsTo time.Time
	if t := ep.Status.Runs.LastRunTime; t != nil {
		countsTo = t.Time
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.endpoints[ep.UID]
	if e == nil {
		e = &endpointBacklog{agent: agent}
		b.endpoints[ep.UID] = e
	}
	b.addToAgent(e.agent, -e.queued())
	e.agent, e.counted, e.countsTo = agent, ep.Status.Runs.Queued, countsTo
	kept := e.stored[:0]
	for _, t := range e.stored {
		// lastRunTime has whole seconds: a run stored in the same second
		// as the newest counted one is taken as counted. Keeping it would
		// keep a full backlog full for good once nothing new is admitted;
		// if it was not counted yet, the cap is overshot by it until the
		// operator counts it.
		if t.Truncate(time.Second).After(countsTo) {
			kept = append(kept, t)
		}
	}
	e.stored = kept
	b.addToAgent(e.agent, e.queued())
}

// Forget drops a deleted endpoint's share.
func (b *Backlog) Forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.endpoints[uid]; e != nil {
		b.addToAgent(e.agent, -e.queued())
		delete(b.endpoints, uid)
	}
}

func (b *Backlog) addToAgent(agent types.NamespacedName, n int64) {
	if v := b.agents[agent] + n; v > 0 {
		b.agents[agent] = v
	} else {
		delete(b.agents, agent)
	}
}

// backlogScope names a cap: the endpoint's or its Agent's.
type BacklogScope string

const (
	BacklogScopeEndpoint BacklogScope = "endpoint"
	BacklogScopeAgent    BacklogScope = "agent"
)

// BacklogVerdict is the outcome of reserve.
type BacklogVerdict struct {
	Allowed bool
	// first is true for the first refusal since the endpoint last admitted a call.
	First bool
	// scope names the cap that refused.
	Scope BacklogScope
	// reservation is the admitted call's place in the backlog: release it if
	// no run is stored.
	reservation time.Time
}

// expire stops counting, at now, the runs this replica stored longer than
// backlogSelfCount ago: the operator has counted them by then, or they are
// gone (a run deleted before it was counted never moves lastRunTime, and
// would otherwise hold the cap for good). b.mu must be held.
func (b *Backlog) expire(e *endpointBacklog, now time.Time) {
	n := 0
	for n < len(e.stored) && now.Sub(e.stored[n]) > backlogSelfCount {
		n++
	}
	if n > 0 {
		e.stored = append(e.stored[:0], e.stored[n:]...)
		b.addToAgent(e.agent, -int64(n))
	}
}

// reserve admits a call received at now if neither cap is reached, and
// counts it as queued until release, the endpoint's status counts it, or
// backlogSelfCount has passed.
func (b *Backlog) Reserve(uid types.UID, now time.Time) BacklogVerdict {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.endpoints[uid]
	if e == nil { // not observed yet: the informer delivers it before lookups find it
		return BacklogVerdict{Allowed: true}
	}
	b.expire(e, now)
	var scope BacklogScope
	switch {
	case e.queued() >= b.PerEndpoint:
		scope = BacklogScopeEndpoint
	case b.agents[e.agent] >= b.PerAgent:
		scope = BacklogScopeAgent
	}
	if scope != "" {
		first := !e.rejecting
		e.rejecting = true
		return BacklogVerdict{First: first, Scope: scope}
	}
	e.rejecting = false
	e.stored = append(e.stored, now)
	b.addToAgent(e.agent, 1)
	return BacklogVerdict{Allowed: true, reservation: now}
}

// Release gives back a reservation whose call stored no run.
func (b *Backlog) Release(uid types.UID, v BacklogVerdict) {
	if !v.Allowed || v.reservation.IsZero() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.endpoints[uid]
	if e == nil {
		return
	}
	for i, t := range e.stored {
		if t.Equal(v.reservation) {
			e.stored = append(e.stored[:i], e.stored[i+1:]...)
			b.addToAgent(e.agent, -1)
			return
		}
	}
}

// Full tells, without reserving, whether a call at now would be refused.
func (b *Backlog) Full(uid types.UID, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.endpoints[uid]
	if e == nil {
		return false
	}
	b.expire(e, now)
	return e.queued() >= b.PerEndpoint || b.agents[e.agent] >= b.PerAgent
}
