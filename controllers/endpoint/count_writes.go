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

// countWrites remembers when each endpoint's status.runs was last written,
// so that a burst of runs is counted in one write per RunCountDelay. The
// AgentRun watch delays its reconcile by RunCountDelay, but the endpoint's
// own status write starts another at once: without this, while runs keep
// arriving, the count was written as often as a reconcile could follow the
// last write (13 writes for 40 runs on a loaded machine, where 10 was the
// bound).
type countWrites struct {
	mu   sync.Mutex
	last map[types.NamespacedName]time.Time
}

// wait returns how long the count of endpoint must wait before it is
// written again, zero if it may be written now.
func (c *countWrites) wait(endpoint types.NamespacedName, delay time.Duration, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at, ok := c.last[endpoint]; ok {
		if wait := at.Add(delay).Sub(now); wait > 0 {
			return wait
		}
	}
	return 0
}

// written records that the count of endpoint was written at now.
func (c *countWrites) written(endpoint types.NamespacedName, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[types.NamespacedName]time.Time{}
	}
	c.last[endpoint] = now
}

// forget drops a deleted endpoint.
func (c *countWrites) forget(endpoint types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.last, endpoint)
}
