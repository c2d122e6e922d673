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

// Package loadgen is a closed-loop HTTP load generator: a fixed number of
// workers each send one request, wait for the answer, and send the next,
// for a fixed time. The same generator drives hookrun and its baselines, so
// their throughputs compare.
package loadgen

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Result is one load run.
type Result struct {
	Requests int
	// Statuses counts answers by HTTP status; transport errors count under 0.
	Statuses map[int]int
	Elapsed  time.Duration
	// P50 and P99 are latency percentiles of all requests.
	P50, P99 time.Duration
}

// Throughput is requests per second.
func (r Result) Throughput() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

func (r Result) String() string {
	return fmt.Sprintf("%.0f req/s, p50 %s, p99 %s, %d requests %v", r.Throughput(), r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Requests, r.Statuses)
}

// Request makes worker w's i-th request.
type Request func(ctx context.Context, w, i int) (*http.Request, error)

// Client is an HTTP client for load: keep-alive, enough idle connections
// for every worker, no timeouts beyond the context's.
func Client(workers int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        workers * 2,
		MaxIdleConnsPerHost: workers * 2,
		IdleConnTimeout:     90 * time.Second,
		// Requests that say "Expect: 100-continue" send their body only
		// when the server asks for it.
		ExpectContinueTimeout: 5 * time.Second,
	}}
}

// Run sends requests from workers workers for d and reports what came back.
func Run(ctx context.Context, c *http.Client, workers int, d time.Duration, next Request) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	res := Result{Statuses: map[int]int{}}
	var all []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses := map[int]int{}
			var lat []time.Duration
			for i := 0; ctx.Err() == nil; i++ {
				req, err := next(ctx, w, i)
				if err != nil {
					statuses[0]++
					continue
				}
				t := time.Now()
				resp, err := c.Do(req)
				if err != nil {
					if ctx.Err() != nil {
						break // the run ended mid-request: not counted
					}
					statuses[0]++
					lat = append(lat, time.Since(t))
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				lat = append(lat, time.Since(t))
				statuses[resp.StatusCode]++
			}
			mu.Lock()
			defer mu.Unlock()
			for k, v := range statuses {
				res.Statuses[k] += v
			}
			all = append(all, lat...)
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Requests = len(all)
	slices.Sort(all)
	if len(all) > 0 {
		res.P50 = all[len(all)*50/100]
		res.P99 = all[min(len(all)-1, len(all)*99/100)]
	}
	return res
}

// Median returns the result with the median throughput.
func Median(rs []Result) Result {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b Result) int {
		switch {
		case a.Throughput() < b.Throughput():
			return -1
		case a.Throughput() > b.Throughput():
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}
