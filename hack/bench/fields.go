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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hookrun/hookrun/controllers/filter"
)

// What spec.fields saves the agent and costs the receiver, on real GitHub
// deliveries (octokit/webhooks' examples, controllers/filter/testdata/github):
// the message of a run with four fields in place of the body against the
// message with the body, and one evaluation of the four fields against one
// of the documented filter on the same body, measured in this process.

// fieldsDeliveries are the deliveries, their four fields, and the
// documented filter of their event.
var fieldsDeliveries = []struct {
	file, name, event, filter string
	fields                    map[string]string
}{
	{"issues-opened.json", "GitHub issues opened", "issues", `event == "issues" && body.action == "opened"`, map[string]string{
		"title": `body.issue.title`, "number": `body.issue.number`, "labels": `body.issue.labels.map(l, l.name)`, "text": `body.issue.body`,
	}},
	{"pull_request-opened.json", "GitHub pull_request opened", "pull_request", `event == "pull_request" && body.action == "opened"`, map[string]string{
		"title": `body.pull_request.title`, "number": `body.number`, "branch": `body.pull_request.head.ref`, "text": `body.pull_request.body`,
	}},
	{"push.json", "GitHub push", "push", `event == "push" && body.ref == "refs/heads/main"`, map[string]string{
		"ref": `body.ref`, "repository": `body.repository.full_name`, "commits": `body.commits.map(c, c.message)`, "pusher": `body.pusher.name`,
	}},
}

// messageText is the text of a run's message with prompt and payload, as
// DESIGN.md section 5 composes it.
func messageText(prompt string, payload []byte) string {
	return prompt + "\n\n<webhook-payload>\n" + string(payload) + "\n</webhook-payload>"
}

func measureFields(repeat int, logf func(string, ...any)) ([]row, error) {
	var rows []row
	for _, d := range fieldsDeliveries {
		body, err := os.ReadFile(filepath.Join("controllers", "filter", "testdata", "github", d.file))
		if err != nil {
			return nil, err
		}
		fields, err := filter.CompileFields(d.fields)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		p, err := filter.Compile(d.filter)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		call := filter.Call{Event: d.event, Body: body}
		v := fields.Eval(context.Background(), call)
		if len(v.Errors) > 0 {
			return nil, fmt.Errorf("%s: fields %v failed", d.name, v.Errors)
		}
		const prompt = "Triage this."
		withBody, withFields := len(messageText(prompt, body)), len(messageText(prompt, v.Object))
		share := float64(withFields) / float64(withBody)
		logf("%-60s %d of %d bytes", d.name, withFields, withBody)
		rows = append(rows, row{
			what:   fmt.Sprintf("fields: bytes of the message text for a %s delivery (octokit/webhooks), four fields in place of the body", d.name),
			goal:   "<= 5% of the body's",
			figure: fmt.Sprintf("%.1f%% (%d bytes against %d)", 100*share, withFields, withBody),
			ok:     share <= 0.05,
		})
		evalTime := median(repeat, func() { fields.Eval(context.Background(), call) })
		filterTime := median(repeat, func() { _, _ = p.Matches(context.Background(), call) })
		logf("%-60s fields %s, filter %s", d.name, evalTime, filterTime)
		rows = append(rows, row{
			what:   fmt.Sprintf("fields: evaluating the four fields of a %s delivery, against its documented filter", d.name),
			goal:   "",
			figure: fmt.Sprintf("%.1f µs per call, %.1fx the filter's %.1f µs", micros(evalTime), float64(evalTime)/float64(filterTime), micros(filterTime)),
			ok:     true,
		})
	}
	return rows, nil
}

// median is the median time of fn over 1000 runs, repeat times.
func median(repeat int, fn func()) time.Duration {
	const n = 1000
	var times []time.Duration
	for range max(repeat, 1) {
		start := time.Now()
		for range n {
			fn()
		}
		times = append(times, time.Since(start)/n)
	}
	slices.Sort(times)
	return times[len(times)/2]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
