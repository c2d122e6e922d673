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

package devcluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestWaitWith(t *testing.T) {
	bounds := waitBounds{interval: time.Millisecond, look: 100 * time.Millisecond, stall: 40 * time.Millisecond, limit: time.Second}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		// look is called with the number of earlier looks.
		look func(n int) (string, error)
		// wantErr: substrings of the error; none means success.
		wantErr []string
	}{
		{
			name: "done at once",
			look: func(int) (string, error) { return "", nil },
		},
		{
			name: "slow progress outlasts the stall timeout",
			// 200 looks of ≥1 ms each is longer than the stall timeout, but
			// every look reports something new.
			look: func(n int) (string, error) {
				if n == 200 {
					return "", nil
				}
				return fmt.Sprintf("%d of 200 endpoints missing", 200-n), nil
			},
		},
		{
			name:    "no progress: says what it waited for and last saw",
			look:    func(int) (string, error) { return "a: Ready=False (AgentNotFound: no Agent)", nil },
			wantErr: []string{"waited", "for the thing", "nothing changed for 40ms", "last seen: a: Ready=False (AgentNotFound: no Agent)"},
		},
		{
			name: "a failing look is one more thing seen",
			look: func(n int) (string, error) {
				if n < 3 {
					return "", boom
				}
				return "", nil
			},
		},
		{
			name:    "a failing look that stays failing is reported",
			look:    func(int) (string, error) { return "", boom },
			wantErr: []string{"last seen: error: boom"},
		},
		{
			name:    "stopWaiting ends at once",
			look:    func(int) (string, error) { return "", stopWaiting(boom) },
			wantErr: []string{"waiting for the thing: boom"},
		},
		{
			name:    "limit bounds endless change",
			look:    func(n int) (string, error) { return fmt.Sprint(n), nil },
			wantErr: []string{"still not there after 1s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := waitWith(context.Background(), "the thing", bounds, func(context.Context) (string, error) {
				defer func() { n++ }()
				return tc.look(n)
			})
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("err = nil, want one containing %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestWaitWithEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// The look honours its context: the one the end cuts short fails, and
	// what it saw must not replace what the wait last saw.
	err := waitWith(ctx, "the thing", waitBounds{time.Millisecond, time.Hour, time.Hour, time.Hour}, func(ctx context.Context) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Millisecond):
			return "still missing", nil
		}
	})
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") || !strings.Contains(err.Error(), "last seen: still missing") {
		t.Fatalf("err = %v, want the context's end and what was last seen", err)
	}
}

func TestWaitWithSlowLookIsNotARefusal(t *testing.T) {
	// The first look outlasts its bound and, cut short, reports a refusal
	// (as a client's deadline error would be taken); the wait goes on.
	n := 0
	err := waitWith(context.Background(), "the thing", waitBounds{time.Millisecond, 20 * time.Millisecond, time.Second, time.Second}, func(ctx context.Context) (string, error) {
		n++
		if n == 1 {
			<-ctx.Done()
			return "", stopWaiting(ctx.Err())
		}
		return "", nil
	})
	if err != nil {
		t.Fatalf("err = %v, want the slow look taken for one more thing seen", err)
	}
}
