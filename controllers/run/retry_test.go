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

package run

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// TestBackoff: from 1s doubling to 1m, each wait shortened by at most a
// fifth by the jitter.
func TestBackoff(t *testing.T) {
	cases := []struct {
		attempts int32
		frac     float64
		want     time.Duration
	}{
		{1, 0, time.Second},
		{2, 0, 2 * time.Second},
		{3, 0, 4 * time.Second},
		{6, 0, 32 * time.Second},
		{7, 0, time.Minute},
		{40, 0, time.Minute},
		{1, 0.5, 900 * time.Millisecond},
		{3, 0.999, 3200*time.Millisecond + 800*time.Microsecond},
		{100, 0.25, 57 * time.Second},
	}
	for _, tc := range cases {
		if got := backoff(tc.attempts, tc.frac); got != tc.want {
			t.Errorf("backoff(%d, %v) = %v, want %v", tc.attempts, tc.frac, got, tc.want)
		}
	}
}

// TestRetryPlan: an agent's Retry-After wins over the backoff, within its
// bounds; a status without one, or no answer, backs off; floor is the
// least wait; the message says what came back and how long the run waits.
func TestRetryPlan(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	answered := func(status int, retryAfter string) error {
		return &a2a.Error{Op: "message/send", StatusCode: status, Retryable: true, RetryAfter: retryAfter, Err: errors.New("busy")}
	}
	noAnswer := &a2a.Error{Op: "message/send", Retryable: true, Transport: true, Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	cases := []struct {
		name     string
		err      error
		attempts int32
		floor    time.Duration
		want     time.Duration
		message  string
	}{
		{"429 with seconds", answered(429, "30"), 1, 0, 30 * time.Second,
			"The agent answered 429; sending again in 30s (Retry-After)"},
		{"503 with a date", answered(503, now.Add(2*time.Minute).Format(http.TimeFormat)), 4, 0, 2 * time.Minute,
			"The agent answered 503; sending again in 2m0s (Retry-After)"},
		{"429 asking for an hour", answered(429, "3600"), 1, 0, 5 * time.Minute,
			"The agent answered 429; sending again in 5m0s (Retry-After)"},
		{"503 without Retry-After", answered(503, ""), 3, 0, 3600 * time.Millisecond,
			"The agent answered 503; sending again in 3.6s (backoff, 3 in a row)"},
		{"502 with Retry-After, which only 429 and 503 carry", answered(502, "30"), 1, 0, 900 * time.Millisecond,
			"The agent answered 502; sending again in 900ms (backoff, 1 in a row)"},
		{"no answer", noAnswer, 2, 0, 1800 * time.Millisecond,
			"The call to the agent failed (a2a message/send: dial tcp 127.0.0.1:1: connect: connection refused); sending again in 1.8s (backoff, 2 in a row)"},
		{"floor over the backoff", answered(503, ""), 1, 5 * time.Second, 5 * time.Second,
			"The agent answered 503; sending again in 5s (backoff, 1 in a row)"},
		{"floor under the Retry-After", answered(429, "30"), 1, 5 * time.Second, 30 * time.Second,
			"The agent answered 429; sending again in 30s (Retry-After)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wait, why := retryPlan(tc.err, tc.attempts, now, 0.5, tc.floor)
			if wait != tc.want {
				t.Errorf("wait %v, want %v", wait, tc.want)
			}
			if msg := retryMessage(tc.err, sendAgain, wait, why); msg != tc.message {
				t.Errorf("message %q,\n want %q", msg, tc.message)
			}
		})
	}
	long := errors.New(strings.Repeat("é", 2000)) // not an *a2a.Error, whose text Sanitize cuts
	if msg := retryMessage(long, sendAgain, time.Second, "backoff"); len(msg) > maxRetryMessageBytes || !strings.HasSuffix(msg, "…") {
		t.Errorf("a long error's message is %d bytes, ending %q", len(msg), msg[len(msg)-8:])
	}
}

// TestWaitToRetry: each call turned away in a row counts, the jitter comes
// from Rand, and the wait (status.retry.notBefore) holds a step back until
// it ends or the run times out.
func TestWaitToRetry(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	agent := &agentsv1alpha1.Agent{Spec: agentsv1alpha1.AgentSpec{RunTimeout: &metav1.Duration{Duration: time.Minute}}}
	run := &agentsv1alpha1.AgentRun{Status: agentsv1alpha1.AgentRunStatus{StartedAt: &metav1.Time{Time: now.Add(-50 * time.Second)}}}
	// 0x8000 of 0x10000: half the jitter, a tenth off the wait.
	r := &ExecutionReconciler{Rand: bytes.NewReader([]byte{0x80, 0x00, 0x80, 0x00, 0x80, 0x00})}
	busy := &a2a.Error{StatusCode: 503, Retryable: true, Err: errors.New("busy")}

	res := r.waitToRetry(run, agent, busy, sendAgain, 0, now)
	if got := run.Status.Retry; got == nil || got.Attempts != 1 || !got.NotBefore.Time.Equal(now.Add(900*time.Millisecond)) || res.RequeueAfter != 900*time.Millisecond {
		t.Fatalf("first: retry %+v, requeue %v", got, res.RequeueAfter)
	}
	if w := retryWait(run, agent, now.Add(400*time.Millisecond)); w != 500*time.Millisecond {
		t.Errorf("wait left %v, want 500ms", w)
	}
	if w := retryWait(run, agent, now.Add(time.Second)); w != 0 {
		t.Errorf("wait left after notBefore %v, want 0", w)
	}
	res = r.waitToRetry(run, agent, busy, sendAgain, 0, now)
	if got := run.Status.Retry; got.Attempts != 2 || res.RequeueAfter != 1800*time.Millisecond {
		t.Errorf("second: retry %+v, requeue %v", got, res.RequeueAfter)
	}
	slow := &a2a.Error{StatusCode: 429, Retryable: true, RetryAfter: "30", Err: errors.New("slow down")}
	res = r.waitToRetry(run, agent, slow, sendAgain, 0, now)
	if got := run.Status.Retry; got.Attempts != 3 || !got.NotBefore.Time.Equal(now.Add(30*time.Second)) || res.RequeueAfter != 10*time.Second {
		t.Errorf("Retry-After past the timeout: retry %+v, requeue %v (10s are left)", got, res.RequeueAfter)
	}
	if w := retryWait(run, agent, now.Add(10*time.Second)); w != 0 {
		t.Errorf("wait left at the timeout %v, want 0", w)
	}
	if got := turnedAway(run); got != " (calls turned away in a row: 3)" {
		t.Errorf("turnedAway %q", got)
	}
}
