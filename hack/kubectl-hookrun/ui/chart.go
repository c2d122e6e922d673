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

package ui

import (
	"fmt"
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The runs-per-hour chart: the last chartHours hours, one bar each, drawn as
// inline SVG on the server (no script, nothing the CSP must allow).
const (
	chartHours  = 24
	chartBarW   = 10
	chartHeight = 36
)

type chart struct {
	Width, Height int
	Bars          []bar
	Total, Max    int
}

type bar struct {
	X, Y, W, H int
	Count      int
	Title      string
}

// runsPerHour counts runs by the hour they were received, over the last
// chartHours hours up to now.
func runsPerHour(runs []agentsv1alpha1.AgentRun, now time.Time) chart {
	end := now.Truncate(time.Hour).Add(time.Hour)
	start := end.Add(-chartHours * time.Hour)
	counts := make([]int, chartHours)
	c := chart{Width: chartHours * chartBarW, Height: chartHeight}
	for i := range runs {
		t := runs[i].Spec.ReceivedAt.Time
		if t.Before(start) || !t.Before(end) {
			continue
		}
		counts[int(t.Sub(start)/time.Hour)]++
		c.Total++
	}
	for _, n := range counts {
		c.Max = max(c.Max, n)
	}
	for i, n := range counts {
		h := 1 // an empty hour is a thin line, so the axis shows
		if c.Max > 0 && n > 0 {
			h = max(2, n*(chartHeight-2)/c.Max)
		}
		from := start.Add(time.Duration(i) * time.Hour).UTC()
		c.Bars = append(c.Bars, bar{
			X: i * chartBarW, Y: chartHeight - h, W: chartBarW - 2, H: h, Count: n,
			Title: fmt.Sprintf("%d %s received %s–%s UTC", n, plural(n, "run", "runs"), from.Format("Jan 2 15:04"), from.Add(time.Hour).Format("15:04")),
		})
	}
	return c
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
