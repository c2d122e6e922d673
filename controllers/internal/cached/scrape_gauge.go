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

package cached

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ScrapeGauge is a gauge computed from the leader's cache when scraped:
// gather lists what it counts and emits one value per label set.
type ScrapeGauge struct {
	LeaderCache
	Desc   *prometheus.Desc
	Gather func(ctx context.Context, r client.Reader, emit func(n int, labels ...string)) error
}

func (g *ScrapeGauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.Desc }

func (g *ScrapeGauge) Collect(ch chan<- prometheus.Metric) {
	r, ok := g.get()
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A failed list reports no series: absent, not a wrong zero.
	_ = g.Gather(ctx, r, func(n int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(g.Desc, prometheus.GaugeValue, float64(n), labels...)
	})
}

// LeaderCache is what the gauges computed at scrape time read: the
// manager's cache, once this replica leads. A standby replica reports none
// of them, so a sum over replicas counts each object once, and it starts no
// informer for them.
type LeaderCache struct {
	reader  atomic.Pointer[client.Reader]
	elected atomic.Pointer[<-chan struct{}]
}

// Use points the gauges at the manager's cache; they report once elected
// is closed.
func (l *LeaderCache) Use(r client.Reader, elected <-chan struct{}) {
	l.reader.Store(&r)
	l.elected.Store(&elected)
}

// get is the cache, or false before Use or while this replica does not lead.
func (l *LeaderCache) get() (client.Reader, bool) {
	r, elected := l.reader.Load(), l.elected.Load()
	if r == nil || elected == nil {
		return nil, false
	}
	select {
	case <-*elected:
		return *r, true
	default:
		return nil, false
	}
}
