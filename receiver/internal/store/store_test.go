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

package store

import (
	"bytes"
	"strings"
	"testing"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestULIDAndRunName(t *testing.T) {
	now := time.UnixMilli(1763812800123)
	a, err := NewULID(now, bytes.NewReader(bytes.Repeat([]byte{0}, 10)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewULID(now.Add(time.Millisecond), bytes.NewReader(bytes.Repeat([]byte{0xff}, 10)))
	if len(a) != 26 || len(b) != 26 || a >= b {
		t.Errorf("ULIDs %q < %q should sort by time and be 26 characters", a, b)
	}
	if strings.Trim(a, crockford) != "" {
		t.Errorf("ULID %q has characters outside the lower-case Crockford alphabet", a)
	}
	if !strings.HasSuffix(a, "0000000000000000") || !strings.HasSuffix(b, "zzzzzzzzzzzzzzzz") {
		t.Errorf("the random part is not the last 16 characters: %q %q", a, b)
	}
	if _, err := NewULID(now, bytes.NewReader(nil)); err == nil {
		t.Error("NewULID succeeded without randomness")
	}
	for endpoint, want := range map[string]string{
		"github-issues":                   "github-issues-" + a,
		strings.Repeat("e", 63):           strings.Repeat("e", 30) + "-" + a,
		strings.Repeat("a", 29) + "-tail": strings.Repeat("a", 29) + "-" + a,
		strings.Repeat("a", 29) + ".tail": strings.Repeat("a", 29) + "-" + a,
	} {
		if got := RunName(endpoint, a); got != want {
			t.Errorf("RunName(%q) = %q, want %q", endpoint, got, want)
		}
	}
}

// A run's writes (run, payload, and the undo of a run whose payload
// failed) end before the operator gives up waiting for the payload: a run
// the operator starts or fails is never one the receiver still completes
// or removes.
func TestStoreEndsWithinThePayloadGrace(t *testing.T) {
	if budget := storeTimeout + CleanupTimeout; budget >= agentsv1alpha1.PayloadGrace {
		t.Errorf("storing and undoing a run may take %s, not less than the operator's payload grace of %s", budget, agentsv1alpha1.PayloadGrace)
	}
}
