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
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestBodyBudgetShare(t *testing.T) {
	for _, c := range []struct{ limit, share int64 }{
		{maxBody, maxBody},
		{2 * maxBody, maxBody},
		{32 * maxBody, 32 * maxBody / 4},
	} {
		if got := NewBodyBudget(c.limit).share; got != c.share {
			t.Errorf("share of %d = %d, want %d", c.limit, got, c.share)
		}
	}
	for _, c := range []struct{ limit, share int64 }{
		{maxBody, maxBody},
		{3 * maxBody, 3 * maxBody / 2},
		{32 * maxBody, 32 * maxBody / 2},
	} {
		if got := NewBodyBudget(c.limit).namespaceShare; got != c.share {
			t.Errorf("namespace share of %d = %d, want %d", c.limit, got, c.share)
		}
	}
}

// A body's buffer grows with what arrived: an announced 1 MiB of which two
// bytes come allocates a few KiB, not the megabyte, and takes as much.
func TestAnnouncedBodyAllocatesWhatArrives(t *testing.T) {
	b := NewBodyBudget(32 * maxBody)
	ep := &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", UID: "u"}}
	var held BodyHold
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, verdict, err := ReadBody(strings.NewReader("{}"), maxBody, BodyTaker{b, ep}, &held)
	runtime.ReadMemStats(&after)
	if verdict != BudgetTaken || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("verdict %v, error %v; want the body cut short", verdict, err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*firstBodyChunk {
		t.Errorf("%d bytes allocated for 2 bytes of an announced 1 MiB, want at most %d", got, 4*firstBodyChunk)
	}
	if held.n != firstBodyChunk {
		t.Errorf("took %d bytes of the budget, want the %d of the buffer the bytes arrived in", held.n, firstBodyChunk)
	}
}

// TestBodyBudgetKeepsAReserve: two namespaces' slow uploads (one team's
// dev and prod) at their shares do not hold the whole budget: beyond one
// largest body, a namespace leaves the reserve free, and a third and a
// fourth namespace's deliveries are read from it.
func TestBodyBudgetKeepsAReserve(t *testing.T) {
	b := NewBodyBudget(8 * maxBody) // a namespace's share 4 MiB, an endpoint's 2 MiB, the reserve 2 MiB
	var held BodyHold
	fill := func(ns string) int64 {
		var n int64
		for i := range 8 {
			var h BodyHold
			if b.Take(types.UID(fmt.Sprintf("%s-%d", ns, i%4)), ns, maxBody/2, &h) != BudgetTaken {
				break
			}
			n += maxBody / 2
		}
		return n
	}
	dev, prod := fill("dev"), fill("prod")
	if dev != 4*maxBody || dev+prod != 6*maxBody {
		t.Fatalf("dev holds %d, prod %d: want 4 MiB, and 6 MiB together (the reserve of 2 MiB left)", dev, prod)
	}
	for _, ns := range []string{"third", "fourth"} {
		// A body arrives in steps: each must fit.
		for range 4 {
			if v := b.Take(types.UID(ns), ns, maxBody/4, &held); v != BudgetTaken {
				t.Fatalf("%s namespace's 1 MiB delivery refused (%d) while two namespaces hold theirs", ns, v)
			}
		}
	}
	if v := b.Take("third-2", "third", 1, &held); v == BudgetTaken {
		t.Fatal("a namespace holding a largest body took more from the reserve")
	}
}
