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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/demo-agent/demoagent"
)

// The report: counting what was lost or delivered twice, and printing it.

// Report counts what happened.
type Report struct {
	// Sent calls; Accepted got 202; Refused503 got 503 with Retry-After
	// (nothing stored, the caller retries); NoAnswer got no HTTP answer
	// (the receiver was down, or died or timed out mid-call).
	Sent, Accepted, Refused503, NoAnswer int
	// NotMade counts the calls the load did not make because every worker
	// was waiting on an answer: how long the receiver held calls.
	NotMade int
	// SlowestAccepted is the longest a call took to get its 202.
	SlowestAccepted time.Duration
	// Other counts any other status (none is expected).
	Other map[int]int
	// Lost are accepted runIds whose AgentRun is missing or did not reach
	// success, with what was found.
	Lost []string
	// Duplicated is how many accepted runs' messages reached the agent more
	// than once (the same messageId each time); Deliveries counts them all.
	Duplicated, Deliveries int
	// NotDelivered are successful runs whose message the agent never got.
	NotDelivered []string
	// Unacknowledged counts AgentRuns whose call got no 202, by state and
	// by what the caller got: the receiver died after storing the run (no
	// answer), or the API server lost its answer to a write that it had
	// made, and the cleanup failed too (503).
	Unacknowledged map[string]int
	// Recovered says, for each restart, how long after the process was
	// ready the first call was accepted; NotRecovered names the restarts
	// after which none was within Options.Recover.
	Recovered, NotRecovered []string
	// Events are the kills and restarts, with times since the load began.
	Events []string
	// Load is how long the load ran; Settled how long the runs took to
	// finish after it stopped.
	Load, Settled time.Duration
}

// OK tells whether no accepted run was lost.
func (r Report) OK() error {
	var errs []error
	if r.Accepted == 0 {
		errs = append(errs, errors.New("no call was accepted"))
	}
	if len(r.Lost) > 0 {
		errs = append(errs, fmt.Errorf("%d accepted runs lost: %s", len(r.Lost), strings.Join(first(r.Lost, 10), "; ")))
	}
	if len(r.NotDelivered) > 0 {
		errs = append(errs, fmt.Errorf("%d successful runs never reached the agent: %s", len(r.NotDelivered), strings.Join(first(r.NotDelivered, 10), ", ")))
	}
	if len(r.Other) > 0 {
		errs = append(errs, fmt.Errorf("unexpected answers: %v", r.Other))
	}
	if len(r.NotRecovered) > 0 {
		errs = append(errs, fmt.Errorf("no call was accepted after restarting %s", strings.Join(r.NotRecovered, ", ")))
	}
	return errors.Join(errs...)
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// Table is the report as Markdown table rows.
func (r Report) Table() string {
	var b strings.Builder
	b.WriteString("| count | value |\n|---|---|\n")
	row := func(k string, v any) { fmt.Fprintf(&b, "| %s | %v |\n", k, v) }
	row("calls sent", r.Sent)
	row("accepted (202)", r.Accepted)
	row("refused with 503 and Retry-After", r.Refused503)
	row("no answer (receiver down or killed mid-call)", r.NoAnswer)
	row("not made (every worker waiting on an answer)", r.NotMade)
	row("slowest accepted call", r.SlowestAccepted.Round(10*time.Millisecond))
	if len(r.Recovered) > 0 {
		row("first call accepted after each restart, from ready", strings.Join(r.Recovered, ", "))
	}
	if len(r.Other) > 0 {
		row("other answers", fmt.Sprint(r.Other))
	}
	row("**lost** (202 but no successful run)", fmt.Sprintf("**%d**", len(r.Lost)))
	row("accepted runs whose message arrived twice or more (same messageId; the agent dedupes)", r.Duplicated)
	row("deliveries to the agent for accepted runs", r.Deliveries)
	row("successful runs the agent never received", len(r.NotDelivered))
	un := []string{}
	for _, k := range slices.Sorted(maps.Keys(r.Unacknowledged)) {
		un = append(un, fmt.Sprintf("%d %s", r.Unacknowledged[k], k))
	}
	if len(un) == 0 {
		un = append(un, "0")
	}
	row("runs stored without a 202 (by state, and what the caller got)", strings.Join(un, "; "))
	row("load / settle time", fmt.Sprintf("%s / %s", r.Load.Round(time.Second), r.Settled.Round(time.Second)))
	return b.String()
}

// settle waits until no run of the namespace is queued or running, or
// opts.Settle passes, and returns the runs.
func settle(ctx context.Context, cl client.Client, opts Options) ([]agentsv1alpha1.AgentRun, error) {
	var runs []agentsv1alpha1.AgentRun
	err := wait.PollUntilContextTimeout(ctx, time.Second, opts.Settle, true, func(ctx context.Context) (bool, error) {
		list := &agentsv1alpha1.AgentRunList{}
		if err := cl.List(ctx, list, client.InNamespace(opts.Namespace)); err != nil {
			return false, nil // the API server may still be catching up
		}
		runs = list.Items
		pending := 0
		for _, r := range runs {
			if !finished(r.Status.State) {
				pending++
			}
		}
		opts.Log("%d runs, %d not finished", len(runs), pending)
		return pending == 0, nil
	})
	if err != nil && !wait.Interrupted(err) {
		return nil, err
	}
	return runs, nil // unfinished runs are reported, not an error here
}

func finished(s agentsv1alpha1.RunState) bool {
	switch s {
	case agentsv1alpha1.RunSuccess, agentsv1alpha1.RunError, agentsv1alpha1.RunSkipped:
		return true
	}
	return false
}

// check fills in what became of the accepted runs and of the others.
func check(ctx context.Context, cl client.Client, rep *Report, ld *load, runs []agentsv1alpha1.AgentRun, agent *demoagent.Agent) {
	accepted := ld.accepted
	rep.Unacknowledged = map[string]int{}
	found := map[string]bool{}
	for _, r := range runs {
		state := string(r.Status.State)
		if state == "" {
			state = string(agentsv1alpha1.RunQueued)
		}
		if !accepted[r.Name] {
			rep.Unacknowledged[state+", caller got "+callerGot(ctx, cl, &r, ld.answers)]++
			continue
		}
		found[r.Name] = true
		seen := agent.Seen(string(r.UID))
		rep.Deliveries += seen
		if seen > 1 {
			rep.Duplicated++
		}
		switch {
		case r.Status.State != agentsv1alpha1.RunSuccess:
			rep.Lost = append(rep.Lost, fmt.Sprintf("%s: %s %s", r.Name, state, r.Status.Message))
		case seen == 0:
			rep.NotDelivered = append(rep.NotDelivered, r.Name)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(accepted)) {
		if !found[id] {
			rep.Lost = append(rep.Lost, id+": no AgentRun")
		}
	}
	sort.Strings(rep.Lost)
}

// callerGot tells what the call that stored run got, found by the sequence
// number in its payload.
func callerGot(ctx context.Context, cl client.Client, run *agentsv1alpha1.AgentRun, answers map[int]string) string {
	if run.Spec.Payload == nil {
		return "unknown (no payload)"
	}
	secret := &corev1.Secret{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Spec.Payload.SecretName}, secret); err != nil {
		return "unknown (payload not stored)"
	}
	var body struct {
		Chaos *int `json:"chaos"`
	}
	if json.Unmarshal(secret.Data[agentsv1alpha1.PayloadBodyKey], &body) != nil || body.Chaos == nil {
		return "unknown (payload unreadable)"
	}
	if a, ok := answers[*body.Chaos]; ok {
		return a
	}
	return "unknown"
}

// ReportHeading starts the section of docs/benchmarks.md that `make chaos`
// writes; `make bench` keeps it when it writes the rest.
const ReportHeading = "## Reliability: kill -9 under load (make chaos)"

// HandHeading starts the last section of docs/benchmarks.md: figures the
// guides quote that were measured by hand, each with its command. Neither
// `make bench` nor `make chaos` writes it; both keep it.
const HandHeading = "## Figures quoted in the guides"

// SplitDoc cuts docs/benchmarks.md into the part `make bench` writes, the
// part `make chaos` writes and the hand-written part both keep.
// The parts share doc's array, but each is capped at its own end: a writer
// that appends its section to bench copies it, and cannot overwrite the
// hand-written part after it (it once did, when the chaos section grew).
func SplitDoc(doc []byte) (bench, chaos, hand []byte) {
	if i := bytes.Index(doc, []byte(HandHeading)); i >= 0 {
		doc, hand = doc[:i:i], doc[i:]
		// The writers put one blank line before it again.
		for bytes.HasSuffix(doc, []byte("\n\n")) {
			doc = doc[:len(doc)-1]
		}
	}
	i := bytes.Index(doc, []byte(ReportHeading))
	if i < 0 {
		return doc[:len(doc):len(doc)], nil, hand
	}
	return doc[:i:i], doc[i:len(doc):len(doc)], hand
}
