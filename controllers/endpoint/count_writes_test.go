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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestCountWrites: after a count is written, the next waits out the delay;
// other endpoints do not wait; a deleted endpoint is forgotten.
func TestCountWrites(t *testing.T) {
	var c countWrites
	a, b := types.NamespacedName{Namespace: "n", Name: "a"}, types.NamespacedName{Namespace: "n", Name: "b"}
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	const delay = 2 * time.Second
	if w := c.wait(a, delay, t0); w != 0 {
		t.Fatalf("a first count waits %s", w)
	}
	c.written(a, t0)
	if w := c.wait(a, delay, t0.Add(500*time.Millisecond)); w != 1500*time.Millisecond {
		t.Errorf("0.5s after a write: wait %s, want 1.5s", w)
	}
	if w := c.wait(b, delay, t0.Add(500*time.Millisecond)); w != 0 {
		t.Errorf("another endpoint waits %s", w)
	}
	if w := c.wait(a, delay, t0.Add(delay)); w != 0 {
		t.Errorf("after the delay: wait %s", w)
	}
	c.written(a, t0)
	c.forget(a)
	if w := c.wait(a, delay, t0); w != 0 || len(c.last) != 0 {
		t.Errorf("a forgotten endpoint waits %s (%d remembered)", w, len(c.last))
	}
}
