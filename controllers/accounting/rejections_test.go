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

package accounting

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

var t10 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func TestSumRejections(t *testing.T) {
	now := t10.Add(42 * time.Minute)
	entry := func(window time.Time, last time.Duration, counts, previous map[string]int64) agentsv1alpha1.RejectionReportEntry {
		return agentsv1alpha1.RejectionReportEntry{Window: window, Counts: counts, Previous: previous, Last: window.Add(last)}
	}
	for _, c := range []struct {
		name    string
		entries []agentsv1alpha1.RejectionReportEntry
		want    *agentsv1alpha1.EndpointRejections
	}{
		{name: "nothing", want: nil},
		{name: "two replicas this hour, with the hour before", entries: []agentsv1alpha1.RejectionReportEntry{
			entry(t10, 5*time.Minute, map[string]int64{"forbidden": 3}, map[string]int64{"unauthorized": 2}),
			entry(t10, 30*time.Minute+500*time.Millisecond, map[string]int64{"forbidden": 1, "rate_limited": 4}, nil),
		}, want: &agentsv1alpha1.EndpointRejections{
			Since:             metav1.NewTime(t10.Add(-time.Hour)),
			Counts:            []agentsv1alpha1.RejectionCount{{Code: "forbidden", Count: 4}, {Code: "rate_limited", Count: 4}, {Code: "unauthorized", Count: 2}},
			LastRejectionTime: &metav1.Time{Time: t10.Add(30 * time.Minute)},
		}},
		{name: "a replica that last wrote in the hour before: its counts, not the ones before", entries: []agentsv1alpha1.RejectionReportEntry{
			entry(t10.Add(-time.Hour), 10*time.Minute, map[string]int64{"forbidden": 2}, map[string]int64{"unauthorized": 9}),
		}, want: &agentsv1alpha1.EndpointRejections{
			Since:             metav1.NewTime(t10.Add(-time.Hour)),
			Counts:            []agentsv1alpha1.RejectionCount{{Code: "forbidden", Count: 2}},
			LastRejectionTime: &metav1.Time{Time: t10.Add(-50 * time.Minute)},
		}},
		{name: "two hours old: nothing", entries: []agentsv1alpha1.RejectionReportEntry{
			entry(t10.Add(-2*time.Hour), 0, map[string]int64{"forbidden": 2}, nil),
		}, want: nil},
		{name: "a replica's clock in the next hour counts as this one", entries: []agentsv1alpha1.RejectionReportEntry{
			entry(t10.Add(time.Hour), time.Second, map[string]int64{"forbidden": 1}, map[string]int64{"forbidden": 1}),
		}, want: &agentsv1alpha1.EndpointRejections{
			Since:             metav1.NewTime(t10.Add(-time.Hour)),
			Counts:            []agentsv1alpha1.RejectionCount{{Code: "forbidden", Count: 2}},
			LastRejectionTime: &metav1.Time{Time: t10.Add(time.Hour + time.Second)},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := sumRejections(c.entries, now)
			if (got == nil) != (c.want == nil) || got != nil && (!got.Since.Equal(&c.want.Since) ||
				!equalCounts(got.Counts, c.want.Counts) || !got.LastRejectionTime.Equal(c.want.LastRejectionTime)) {
				t.Errorf("sumRejections = %+v, want %+v", got, c.want)
			}
		})
	}
}

func equalCounts(a, b []agentsv1alpha1.RejectionCount) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSumRejectionsKeepsTheNewestEvaluationError: status shows the newest
// evaluation error of any replica within the counted period, its message
// cut to the CRD's bound; an error of no known expression (a report
// written by hand) or from before the period is not shown.
func TestSumRejectionsKeepsTheNewestEvaluationError(t *testing.T) {
	now := t10.Add(42 * time.Minute)
	withError := func(at time.Time, expr agentsv1alpha1.EvaluatedExpression, message string) agentsv1alpha1.RejectionReportEntry {
		return agentsv1alpha1.RejectionReportEntry{Window: t10, Counts: map[string]int64{"filter_error": 1}, Last: at,
			LastError: &agentsv1alpha1.ReportedError{Expression: expr, Message: message, Time: at}}
	}
	long := strings.Repeat("é", agentsv1alpha1.MaxEvaluationErrorBytes)
	for _, c := range []struct {
		name    string
		entries []agentsv1alpha1.RejectionReportEntry
		want    *agentsv1alpha1.EvaluationError
	}{
		{"the newest of two replicas", []agentsv1alpha1.RejectionReportEntry{
			withError(t10.Add(time.Minute), agentsv1alpha1.ExpressionFilter, "no such key: action"),
			withError(t10.Add(2*time.Minute+300*time.Millisecond), agentsv1alpha1.ExpressionFields, "1 of 2 fields failed (title); title: no such key: issue"),
		}, &agentsv1alpha1.EvaluationError{Expression: agentsv1alpha1.ExpressionFields,
			Message: "1 of 2 fields failed (title); title: no such key: issue", Time: metav1.NewTime(t10.Add(2 * time.Minute))}},
		{"a long message cut at a character", []agentsv1alpha1.RejectionReportEntry{
			withError(t10, agentsv1alpha1.ExpressionFilter, long),
		}, &agentsv1alpha1.EvaluationError{Expression: agentsv1alpha1.ExpressionFilter,
			Message: long[:agentsv1alpha1.MaxEvaluationErrorBytes], Time: metav1.NewTime(t10)}},
		{"an unknown expression", []agentsv1alpha1.RejectionReportEntry{withError(t10, "Claims", "x")}, nil},
		{"before the counted period", []agentsv1alpha1.RejectionReportEntry{
			withError(t10.Add(-61*time.Minute), agentsv1alpha1.ExpressionFilter, "old"),
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := sumRejections(c.entries, now)
			if got == nil {
				t.Fatal("sumRejections = nil")
			}
			if e := got.LastEvaluationError; (e == nil) != (c.want == nil) || e != nil && (e.Expression != c.want.Expression ||
				e.Message != c.want.Message || !e.Time.Equal(&c.want.Time) || !utf8.ValidString(e.Message)) {
				t.Errorf("LastEvaluationError = %+v, want %+v", e, c.want)
			}
		})
	}
}
