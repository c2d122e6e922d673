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
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
)

// The wait of a run whose agent turned a call away (DESIGN §12): the
// agent's Retry-After when its 429 or 503 gave one (a2a.RetryAfter: 1s to
// 5m), otherwise a backoff from backoffFirst doubling to backoffMax, each
// wait shortened by up to backoffJitter at random, so that runs turned away
// together do not all come back together. The run's timeout ends it however
// it waits. The wait is kept in status.retry: it holds across a restart of
// the operator, and a step before its notBefore (woken by the run's own
// status write, or by its Agent's call queue) calls nobody.
const (
	backoffFirst  = time.Second
	backoffMax    = time.Minute
	backoffJitter = 0.2
	// maxRetryMessageBytes bounds status.retry.message (the API's bound).
	maxRetryMessageBytes = 1024
)

// backoff is the wait after the attempts-th call in a row the agent turned
// away without a Retry-After; frac, in [0, 1), draws the jitter.
func backoff(attempts int32, frac float64) time.Duration {
	d := backoffFirst
	for i := int32(1); i < attempts && d < backoffMax; i++ {
		d *= 2
	}
	d = min(d, backoffMax)
	return d - time.Duration(float64(d)*backoffJitter*frac)
}

// retryPlan is how long to wait after the attempts-th call in a row the
// agent turned away with err, at now, and why that long; floor is the
// least wait.
func retryPlan(err error, attempts int32, now time.Time, frac float64, floor time.Duration) (time.Duration, string) {
	if d, ok := a2a.RetryAfter(err, now); ok {
		return max(d, floor), "Retry-After"
	}
	return max(backoff(attempts, frac), floor), fmt.Sprintf("backoff, %d in a row", attempts)
}

// retryMessage says what the agent answered and when the run calls again,
// for example "The agent answered 429; sending again in 30s (Retry-After)".
func retryMessage(err error, again string, wait time.Duration, why string) string {
	var e *a2a.Error
	answered := fmt.Sprintf("The call to the agent failed (%v)", err)
	if errors.As(err, &e) && e.StatusCode != 0 {
		answered = fmt.Sprintf("The agent answered %d", e.StatusCode)
	}
	msg := fmt.Sprintf("%s; %s in %s (%s)", answered, again, wait.Round(100*time.Millisecond), why)
	if len(msg) > maxRetryMessageBytes {
		msg = msg[:utf8Boundary(msg, maxRetryMessageBytes-len("…"))] + "…"
	}
	return msg
}

// What a run does again after a call was turned away.
const (
	sendAgain = "sending again"
	pollAgain = "looking at its task again"
)

// waitToRetry records on run's status that the agent turned a call away
// with err, and when the run calls again (again says what it does then);
// floor is the least wait. The wait is cut at the run's timeout.
func (r *ExecutionReconciler) waitToRetry(run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, err error, again string, floor time.Duration, now time.Time) ctrl.Result {
	attempts := int32(1)
	if run.Status.Retry != nil {
		attempts = run.Status.Retry.Attempts + 1
	}
	wait, why := retryPlan(err, attempts, now, r.jitter(), floor)
	run.Status.Retry = &agentsv1alpha1.RunRetry{
		Attempts:  attempts,
		NotBefore: metav1.NewMicroTime(now.Add(wait)),
		Message:   retryMessage(err, again, wait, why),
	}
	// At least a moment: a call that ended past the timeout leaves none,
	// and the next step ends the run.
	return ctrl.Result{RequeueAfter: max(min(wait, timeLeft(run, agent, now)), 100*time.Millisecond)}
}

// retryWait is how long run still waits to call its agent again: until
// status.retry.notBefore, or its timeout if that comes first; 0 when it
// does not wait.
func retryWait(run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) time.Duration {
	if run.Status.Retry == nil {
		return 0
	}
	return max(min(run.Status.Retry.NotBefore.Sub(now), timeLeft(run, agent, now)), 0)
}

// timeLeft is the time until run's timeout.
func timeLeft(run *agentsv1alpha1.AgentRun, agent *agentsv1alpha1.Agent, now time.Time) time.Duration {
	if run.Status.StartedAt == nil {
		return runTimeout(agent)
	}
	return runTimeout(agent) - now.Sub(run.Status.StartedAt.Time)
}

// turnedAway notes, for the message of a run that timed out unsent, how
// many calls the agent turned away.
func turnedAway(run *agentsv1alpha1.AgentRun) string {
	if run.Status.Retry == nil {
		return ""
	}
	return fmt.Sprintf(" (calls turned away in a row: %d)", run.Status.Retry.Attempts)
}

// jitter draws a number in [0, 1) from Rand; 0 without one.
func (r *ExecutionReconciler) jitter() float64 {
	var b [2]byte
	if r.Rand == nil {
		return 0
	}
	if _, err := io.ReadFull(r.Rand, b[:]); err != nil {
		return 0
	}
	return float64(binary.BigEndian.Uint16(b[:])) / (1 << 16)
}
