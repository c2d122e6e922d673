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

package chaos

import (
	"bytes"
	"testing"
	"time"
)

func TestSplitDoc(t *testing.T) {
	const (
		bench = "# Benchmarks\n\n| a | b |\n"
		sect  = ReportHeading + "\n\n| count | value |\n"
		hand  = HandHeading + "\n\n- a figure, `its command`\n"
	)
	for _, tc := range []struct {
		name, doc                      string
		wantBench, wantChaos, wantHand string
	}{
		{"bench only", bench, bench, "", ""},
		{"bench and chaos", bench + "\n" + sect, bench + "\n", sect, ""},
		{"all three", bench + "\n" + sect + "\n" + hand, bench + "\n", sect, hand},
		{"bench and hand", bench + "\n" + hand, bench, "", hand},
		{"blank lines before hand", bench + "\n" + sect + "\n\n\n" + hand, bench + "\n", sect, hand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, c, h := SplitDoc([]byte(tc.doc))
			if string(b) != tc.wantBench || string(c) != tc.wantChaos || string(h) != tc.wantHand {
				t.Errorf("SplitDoc:\nbench %q, want %q\nchaos %q, want %q\nhand %q, want %q",
					b, tc.wantBench, c, tc.wantChaos, h, tc.wantHand)
			}
		})
	}
}

// TestSplitDocKeepsTheHandSection: rewriting the chaos section as make
// chaos does, twice, keeps the hand-written section and adds no blank lines.
func TestSplitDocKeepsTheHandSection(t *testing.T) {
	doc := []byte("# Benchmarks\n\n" + ReportHeading + "\n\nold\n\n" + HandHeading + "\n\n- kept\n")
	for range 2 {
		bench, _, hand := SplitDoc(doc)
		next := append(append([]byte{}, bench...), ReportHeading+"\n\nnew\n"...)
		if len(hand) > 0 {
			next = append(append(next, '\n'), hand...)
		}
		doc = next
	}
	want := "# Benchmarks\n\n" + ReportHeading + "\n\nnew\n\n" + HandHeading + "\n\n- kept\n"
	if !bytes.Equal(doc, []byte(want)) {
		t.Errorf("after two rewrites:\n%s\nwant:\n%s", doc, want)
	}
}

// TestSplitDocPartsDoNotOverlap: appending a longer section to bench, as
// make chaos does, leaves the hand-written part as it was (the parts share
// the document's array).
func TestSplitDocPartsDoNotOverlap(t *testing.T) {
	doc := []byte("# Benchmarks\n\n" + ReportHeading + "\n\nold\n\n" + HandHeading + "\n\n- kept\n")
	bench, _, hand := SplitDoc(doc)
	want := string(hand)
	grown := append(bench, ReportHeading+"\n\na much longer section than the old one\n"...)
	if string(hand) != want {
		t.Fatalf("appending to bench overwrote the hand-written part: %q", hand)
	}
	_ = grown
}

// TestUntilAccepted: the recovery after a restart is the first 202 at or
// after the process was ready, not one before it; with none, the wait ends
// at its bound.
func TestUntilAccepted(t *testing.T) {
	ready := time.Now()
	ld := &load{acceptedAt: []time.Time{ready.Add(-time.Second), ready.Add(1500 * time.Millisecond), ready.Add(2 * time.Second)}}
	took, ok, err := untilAccepted(t.Context(), ld, ready, time.Minute)
	if err != nil || !ok || took != 1500*time.Millisecond {
		t.Errorf("recovered after %s (%v, %v), want 1.5s", took, ok, err)
	}
	ld = &load{acceptedAt: []time.Time{ready.Add(-time.Second)}}
	if _, ok, err := untilAccepted(t.Context(), ld, ready, 0); ok || err != nil {
		t.Errorf("a 202 before the restart counted as recovery (%v, %v)", ok, err)
	}
}
