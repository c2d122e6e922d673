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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The load: calls at a steady rate, each answer noted.

// load sends calls at a steady rate and remembers what came back.
type load struct {
	opts     Options
	eps      []endpoint
	mu       sync.Mutex
	accepted map[string]bool
	// answers is what each call (by its sequence number) got.
	answers map[int]string
	// acceptedAt are the times of the 202s, in the order they came.
	acceptedAt []time.Time
	rep        Report
}

// firstAcceptedSince returns when the first call answered 202 at t or
// later got its answer.
func (l *load) firstAcceptedSince(t time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, at := range l.acceptedAt {
		if !at.Before(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

func (l *load) run(ctx context.Context) {
	hc := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: l.opts.Workers}}
	ticks := make(chan int, l.opts.Workers)
	var wg sync.WaitGroup
	for range l.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range ticks {
				l.call(ctx, hc, seq)
			}
		}()
	}
	t := time.NewTicker(time.Duration(float64(time.Second) / l.opts.Rate))
	defer t.Stop()
	for seq := 0; ; seq++ {
		select {
		case <-ctx.Done():
			close(ticks)
			wg.Wait()
			return
		case <-t.C:
			select {
			case ticks <- seq:
			default: // every worker is waiting on an answer: the call is not made
				l.mu.Lock()
				l.rep.NotMade++
				l.mu.Unlock()
			}
		}
	}
}

func (l *load) call(ctx context.Context, hc *http.Client, seq int) {
	ep := l.eps[seq%len(l.eps)]
	// The load's context is not the request's: a call in flight when the
	// load stops still gets its answer, so no 202 goes unseen.
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, ep.url,
		strings.NewReader(fmt.Sprintf(`{"chaos":%d}`, seq)))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(agentsv1alpha1.SecretHeader, ep.secret)
	start := time.Now()
	resp, err := hc.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rep.Sent++
	l.answers[seq] = "no answer"
	if err == nil {
		l.answers[seq] = strconv.Itoa(resp.StatusCode)
	}
	switch {
	case err != nil:
		l.rep.NoAnswer++
	case resp.StatusCode == http.StatusAccepted:
		var out struct {
			RunID string `json:"runId"`
		}
		if json.Unmarshal(body, &out) != nil || out.RunID == "" {
			l.rep.Other[resp.StatusCode]++
			return
		}
		l.rep.Accepted++
		l.accepted[out.RunID] = true
		now := time.Now()
		l.acceptedAt = append(l.acceptedAt, now)
		l.rep.SlowestAccepted = max(l.rep.SlowestAccepted, now.Sub(start))
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
		l.rep.Refused503++
	default:
		l.rep.Other[resp.StatusCode]++
	}
}
