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

package receiver

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

const (
	// filterSlots is how many evaluations of one endpoint's spec.filter
	// run at a time on a replica: an evaluation may take up to
	// filter.EvalTimeout of a core, and one endpoint's calls must not
	// take all of them.
	filterSlots = 2
	// filterWait is how long a call waits for one of its endpoint's slots
	// before it is answered 503.
	filterWait = time.Second
)

// filterGate holds the evaluation slots of each endpoint that has calls
// evaluating or waiting to: an endpoint's entry exists only while it is in
// use, so nothing is kept of an endpoint between its calls. The zero value
// is ready.
type filterGate struct {
	mu    sync.Mutex
	slots map[types.UID]*endpointSlots
}

type endpointSlots struct {
	// taken holds one token per running evaluation.
	taken chan struct{}
	// users counts the calls evaluating or waiting, under filterGate.mu.
	users int
}

// enter waits up to filterWait, or until ctx ends, for one of uid's slots;
// false when none was free. A call that entered must leave.
func (g *filterGate) enter(ctx context.Context, uid types.UID) bool {
	g.mu.Lock()
	if g.slots == nil {
		g.slots = map[types.UID]*endpointSlots{}
	}
	s := g.slots[uid]
	if s == nil {
		s = &endpointSlots{taken: make(chan struct{}, filterSlots)}
		g.slots[uid] = s
	}
	s.users++
	g.mu.Unlock()

	select {
	case s.taken <- struct{}{}:
		return true
	default:
	}
	wait := time.NewTimer(filterWait)
	defer wait.Stop()
	select {
	case s.taken <- struct{}{}:
		return true
	case <-wait.C:
	case <-ctx.Done():
	}
	g.drop(uid, s)
	return false
}

// leave gives back the slot a call took with enter.
func (g *filterGate) leave(uid types.UID) {
	g.mu.Lock()
	s := g.slots[uid]
	g.mu.Unlock()
	<-s.taken
	g.drop(uid, s)
}

func (g *filterGate) drop(uid types.UID, s *endpointSlots) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(g.slots, uid)
	}
}

// inUse is the number of endpoints with an entry.
func (g *filterGate) inUse() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.slots)
}
