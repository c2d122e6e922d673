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
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSlidingWindowEdges(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	w := newSlidingWindow(3)
	at := func(d time.Duration) Verdict { return w.take(t0.Add(d), time.Minute) }

	for i, d := range []time.Duration{0, 10 * time.Second, 20 * time.Second} {
		if v := at(d); !v.Allowed {
			t.Fatalf("call %d at +%s rejected", i, d)
		}
	}
	v := at(30 * time.Second)
	if v.Allowed || !v.First || v.RetryAfter != 30*time.Second {
		t.Fatalf("4th call at +30s = %+v, want rejected, first, retry after 30s", v)
	}
	v = at(59*time.Second + 999*time.Millisecond)
	if v.Allowed || v.First || v.RetryAfter != time.Millisecond {
		t.Fatalf("call at +59.999s = %+v, want rejected, not first, retry after 1ms", v)
	}
	if got := RetryAfterSeconds(v.RetryAfter); got != 1 {
		t.Errorf("Retry-After for 1ms = %d, want 1 (at least one second)", got)
	}
	// Exactly one window after the first call, its slot is free again.
	if v := at(time.Minute); !v.Allowed {
		t.Fatalf("call at +60s = %+v, want allowed (the call at +0s left the window)", v)
	}
	if v := at(time.Minute + time.Second); v.Allowed || !v.First || v.RetryAfter != 9*time.Second {
		t.Fatalf("call at +61s = %+v, want rejected, first again after an allowed call, retry after 9s", v)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int64{
		0: 1, time.Nanosecond: 1, time.Second: 1, time.Second + 1: 2, 59*time.Second + 1: 60, time.Minute: 60,
	} {
		if got := RetryAfterSeconds(d); got != want {
			t.Errorf("retryAfterSeconds(%s) = %d, want %d", d, got, want)
		}
	}
}

// Run with -race: many goroutines on one endpoint never let more than the
// limit through, and exactly one rejection is reported first.
func TestLimitersConcurrent(t *testing.T) {
	l := NewLocal(60)
	now := time.Now()
	var allowed, first atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				key := "ep"
				if i%10 == 0 {
					key = fmt.Sprintf("other-%d", g)
				}
				v := l.Take(context.Background(), key, now)
				if key == "ep" && v.Allowed {
					allowed.Add(1)
				}
				if key == "ep" && v.First {
					first.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != 60 || first.Load() != 1 {
		t.Errorf("allowed %d, first rejections %d; want 60 and 1", allowed.Load(), first.Load())
	}
	if l.Len() != 17 {
		t.Errorf("%d windows, want 17 (one per key)", l.Len())
	}
	l.Forget("ep")
	if l.Len() != 16 {
		t.Errorf("forget left %d windows, want 16", l.Len())
	}
}
