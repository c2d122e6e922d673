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
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// A replica's rejection report holds at most MaxEntries lines. Kept
// by the most refusals alone, one tenant refusing calls to hundreds of its
// own endpoints would push every other tenant's counts out of it. So the
// namespaces share the lines: each gets an equal share, and what a
// namespace does not use goes to the others (max-min fair). Within its
// share a namespace keeps the endpoints with the most refusals, and sums
// the rest into one line of its own, othersKey(namespace): a flood in one
// namespace costs the others nothing, and its own counts are not lost. With
// more namespaces than lines, those that get no line are summed into one
// line, othersKey(""). The operator sums lines by endpoint UID, so it
// ignores these lines (they name no endpoint); they are there for people
// reading the report.

// othersPrefix starts the key of a line of summed counts.
const othersPrefix = "others"

// othersKey is the key of the line summing the endpoints of namespace that
// have no line of their own; "" for the namespaces without a line. A UID
// never looks like it, and it is a valid ConfigMap key.
func othersKey(namespace string) types.UID {
	if namespace == "" {
		return othersPrefix
	}
	return types.UID(othersPrefix + "." + namespace)
}

// namespaceLines are the lines of one namespace before they are shared.
type namespaceLines struct {
	namespace string
	// endpoints are its endpoints' lines, the most refused first.
	endpoints []reportLine
	// summed are lines without an endpoint (restored from an earlier
	// report), always summed into the namespace's others line.
	summed []reportLine
	total  int64
}

// wants is the number of lines the namespace fills with nothing summed
// away: one per endpoint, and its others line if it has one already.
func (n *namespaceLines) wants() int {
	if len(n.summed) > 0 {
		return len(n.endpoints) + 1
	}
	return len(n.endpoints)
}

// lines returns the namespace's lines within give of them: the endpoints
// with the most refusals, and the others line summing the rest.
func (n *namespaceLines) lines(give int) []reportLine {
	if give >= n.wants() && len(n.summed) == 0 {
		return n.endpoints
	}
	keep := min(len(n.endpoints), give-1)
	return append(slices.Clip(n.endpoints[:keep]), sumLines(othersKey(n.namespace), n.namespace, n.endpoints[keep:], n.summed))
}

// shareLines bounds lines to limit, shared between their namespaces as
// described above, and orders them the most refused first.
func shareLines(lines []reportLine, limit int) []reportLine {
	byNamespace := map[string]*namespaceLines{}
	// unlisted are the lines summed into othersKey(""): a restored one of
	// those, and the namespaces that get no line.
	var unlisted []reportLine
	for _, l := range lines {
		if l.entry.namespace == "" {
			unlisted = append(unlisted, l)
			continue
		}
		n := byNamespace[l.entry.namespace]
		if n == nil {
			n = &namespaceLines{namespace: l.entry.namespace}
			byNamespace[l.entry.namespace] = n
		}
		if l.entry.name == "" {
			n.summed = append(n.summed, l)
		} else {
			n.endpoints = append(n.endpoints, l)
		}
		n.total += l.entry.total()
	}
	namespaces := make([]*namespaceLines, 0, len(byNamespace))
	for _, n := range byNamespace {
		slices.SortFunc(n.endpoints, byMostRefused)
		namespaces = append(namespaces, n)
	}
	left := limit
	if len(unlisted) > 0 {
		left = max(limit-1, 0) // the others line
	}
	if len(namespaces) > left {
		// More namespaces than lines: those with the most refusals keep a
		// line at least, the rest share one.
		slices.SortFunc(namespaces, func(a, b *namespaceLines) int {
			return cmp.Or(cmp.Compare(b.total, a.total), cmp.Compare(a.namespace, b.namespace))
		})
		left = max(limit-1, 0)
		for _, n := range namespaces[left:] {
			unlisted = append(append(unlisted, n.endpoints...), n.summed...)
		}
		namespaces = namespaces[:left]
	}
	// The namespaces that want the fewest lines first: each takes what it
	// wants up to an equal share of the lines left, at least one.
	slices.SortFunc(namespaces, func(a, b *namespaceLines) int {
		return cmp.Or(cmp.Compare(a.wants(), b.wants()), cmp.Compare(a.namespace, b.namespace))
	})
	out := make([]reportLine, 0, min(len(lines), limit))
	for i, n := range namespaces {
		give := min(n.wants(), left/(len(namespaces)-i))
		left -= give
		out = append(out, n.lines(give)...)
	}
	if len(unlisted) > 0 {
		out = append(out, sumLines(othersKey(""), "", unlisted))
	}
	slices.SortFunc(out, byMostRefused)
	return out
}

// sumLines is one line with the counts of all of groups, of namespace.
func sumLines(key types.UID, namespace string, groups ...[]reportLine) reportLine {
	sum := reportLine{uid: key, entry: rejectionEntry{namespace: namespace}}
	for _, g := range groups {
		for i := range g {
			e := &g[i].entry
			// take rolled every entry to the same period (or a later
			// one, for a clock set back): the latest wins.
			if e.window.After(sum.entry.window) {
				sum.entry.window = e.window
			}
			for s := range e.counts {
				sum.entry.counts[s] += e.counts[s]
				sum.entry.previous[s] += e.previous[s]
			}
			if e.last.After(sum.entry.last) {
				sum.entry.last = e.last
			}
		}
	}
	return sum
}
