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

package rejections

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/answer"
)

func endpointIn(namespace, name string) *agentsv1alpha1.WebhookEndpoint {
	return &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + namespace + "-" + name)}}
}

// refuse counts n refusals of ep.
func refuse(rc *Counter, ep *agentsv1alpha1.WebhookEndpoint, n int) {
	for range n {
		rc.Add(ep, answer.SlotOf(answer.CodeForbidden), hour0)
	}
}

// byKey indexes lines by key, and sums their refusals by namespace.
func byKey(lines []reportLine) (map[types.UID]int64, map[string]int64) {
	keys, namespaces := map[types.UID]int64{}, map[string]int64{}
	for _, l := range lines {
		keys[l.uid] = l.entry.total()
		namespaces[l.entry.namespace] += l.entry.total()
	}
	return keys, namespaces
}

// One tenant refusing calls to more endpoints than a report holds does not
// push another tenant's counts out of it: each namespace has its share of
// the lines, and what a namespace has beyond its share is summed into a
// line of its own, so nothing is lost.
func TestReportSharesLinesByNamespace(t *testing.T) {
	rc := NewCounter()
	victim := endpointIn("victim", "github-issues")
	refuse(rc, victim, 1)
	for i := range MaxEntries + 100 {
		refuse(rc, endpointIn("flood", fmt.Sprintf("e%04d", i)), 5)
	}
	lines, _ := rc.take(hour0, MaxEntries)
	if len(lines) != MaxEntries {
		t.Fatalf("%d lines, want %d", len(lines), MaxEntries)
	}
	keys, namespaces := byKey(lines)
	if keys[victim.UID] != 1 {
		t.Errorf("the victim's endpoint has %d refusals in the report, want its 1", keys[victim.UID])
	}
	if want := int64(5 * (MaxEntries + 100)); namespaces["flood"] != want || keys[othersKey("flood")] == 0 {
		t.Errorf("the flooding namespace's lines sum %d refusals (its others line %d), want all %d", namespaces["flood"], keys[othersKey("flood")], want)
	}
}

// Lines go to the namespaces max-min fair: one that wants fewer than its
// share keeps them all, and the others split what is left.
func TestReportShareIsFair(t *testing.T) {
	rc := NewCounter()
	for i := range 2 {
		refuse(rc, endpointIn("small", fmt.Sprintf("s%d", i)), 1)
	}
	for _, ns := range []string{"big-a", "big-b"} {
		for i := range 20 {
			refuse(rc, endpointIn(ns, fmt.Sprintf("b%02d", i)), 100-i)
		}
	}
	lines, _ := rc.take(hour0, 10)
	perNamespace := map[string]int{}
	for _, l := range lines {
		perNamespace[l.entry.namespace]++
	}
	if want := map[string]int{"small": 2, "big-a": 4, "big-b": 4}; fmt.Sprint(perNamespace) != fmt.Sprint(want) {
		t.Errorf("lines per namespace %v, want %v", perNamespace, want)
	}
	keys, _ := byKey(lines)
	// big-a keeps its three most refused endpoints and sums the other 17.
	if keys[endpointIn("big-a", "b02").UID] != 98 || keys[endpointIn("big-a", "b03").UID] != 0 || keys[othersKey("big-a")] == 0 {
		t.Errorf("big-a's lines: %v", keys)
	}
}

// With more namespaces than lines, the namespaces with the most refusals
// keep a line and the rest share one.
func TestReportWithMoreNamespacesThanLines(t *testing.T) {
	rc := NewCounter()
	for i := range 15 {
		refuse(rc, endpointIn(fmt.Sprintf("ns%02d", i), "e"), i+1)
	}
	lines, _ := rc.take(hour0, 10)
	keys, _ := byKey(lines)
	if len(lines) != 10 || keys[endpointIn("ns14", "e").UID] != 15 || keys[endpointIn("ns05", "e").UID] != 0 {
		t.Fatalf("lines %v, want the 9 namespaces with the most refusals and one line for the rest", keys)
	}
	if want := int64(1 + 2 + 3 + 4 + 5 + 6); keys[othersKey("")] != want {
		t.Errorf("the line of the namespaces without one sums %d, want %d", keys[othersKey("")], want)
	}
}

// A restarted replica takes its summed lines back and writes them again.
func TestReportRestoresSummedLines(t *testing.T) {
	w, c, clk := fakeReportWriter(t, interceptor.Funcs{})
	for i := range 5 {
		refuse(w.Counter, endpointIn("flood", fmt.Sprintf("e%d", i)), 2)
	}
	lines, _ := w.Counter.take(clk.Now(), 3)
	cm, err := w.report(lines, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := w.write(ctx, cm); err != nil {
		t.Fatal(err)
	}
	again, _, _ := fakeReportWriter(t, interceptor.Funcs{})
	again.Reader = c
	again.restore(ctx)
	again.Counter.markChanged()
	restored, _ := again.Counter.take(clk.Now(), 3)
	if keys, namespaces := byKey(restored); namespaces["flood"] != 10 || keys[othersKey("flood")] != 6 {
		t.Errorf("restored %v, want the 10 refusals with the same line of 6 summed", keys)
	}
	if _, err := agentsv1alpha1.DecodeRejectionReportEntry(cm.Data[string(othersKey("flood"))]); err != nil {
		t.Errorf("the summed line is not an entry: %v", err)
	}
}

// A restored line of the namespaces without one (namespace "") is summed
// into the one such line of the new report, never written beside it: two
// lines of one key would overwrite each other in the ConfigMap.
func TestReportKeepsOneOthersLine(t *testing.T) {
	var lines []reportLine
	restored := reportLine{uid: othersKey(""), entry: rejectionEntry{window: hour0}}
	restored.entry.counts[0] = 7
	for _, namespaces := range []int{3, 15} {
		lines = []reportLine{restored}
		for i := range namespaces {
			l := reportLine{uid: types.UID(fmt.Sprintf("uid-%02d", i)), entry: rejectionEntry{namespace: fmt.Sprintf("ns%02d", i), name: "e", window: hour0}}
			l.entry.counts[0] = int64(i + 1)
			lines = append(lines, l)
		}
		out := shareLines(lines, 10)
		seen := map[types.UID]int{}
		var total int64
		for _, l := range out {
			seen[l.uid]++
			total += l.entry.total()
		}
		if len(out) > 10 || seen[othersKey("")] != 1 {
			t.Errorf("%d namespaces: %d lines, %d of them %q; want at most 10 and one", namespaces, len(out), seen[othersKey("")], othersKey(""))
		}
		if want := int64(7 + namespaces*(namespaces+1)/2); total != want {
			t.Errorf("%d namespaces: the lines count %d refusals, want %d", namespaces, total, want)
		}
	}
}
