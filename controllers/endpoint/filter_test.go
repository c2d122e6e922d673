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

package endpoint

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestFilterSummary(t *testing.T) {
	for _, tc := range []struct {
		expr, want string // want: "" for no problem, else part of the message
	}{
		{"", ""},
		{`event == "issues" && body.action == "opened"`, ""},
		{`event ==`, "Syntax error"},
		{`body.action`, "not bool"},
		{`body.items.exists(a, body.items.exists(b, a == b))`, "more than the limit"},
		{`rawBody.matches("(")`, "does not compile"},
		{`body.items.all(x, size(rawBody) > 0)`, "more than the limit"},
	} {
		got := filterSummary(tc.expr)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("filterSummary(%q) = %v, want none", tc.expr, got.Ready.Message)
		case tc.want != "" && (got == nil || got.Ready.Reason != agentsv1alpha1.ReasonFilterInvalid ||
			got.Ready.Status != metav1.ConditionFalse || got.Progress != agentsv1alpha1.ProgressStalled ||
			!strings.Contains(got.Ready.Message, tc.want) || !strings.Contains(got.Ready.Message, "422 filter_invalid")):
			t.Errorf("filterSummary(%q) = %+v, want Stalled FilterInvalid naming %q", tc.expr, got, tc.want)
		}
	}
}
