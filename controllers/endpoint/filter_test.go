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
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

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
		got := filterSummary(&agentsv1alpha1.WebhookEndpointSpec{Filter: tc.expr}, nil, nil)
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

// TestFieldsSummary: fields that do not compile are FieldsInvalid, after a
// filter that does not; the sample's fields compile.
func TestFieldsSummary(t *testing.T) {
	bad := map[string]agentsv1alpha1.FieldExpression{"title": `body.issue.title`, "labels": `body.issue.labels.map(l,`}
	got := filterSummary(&agentsv1alpha1.WebhookEndpointSpec{Fields: bad}, nil, nil)
	if got == nil || got.Ready.Reason != agentsv1alpha1.ReasonFieldsInvalid || got.Progress != agentsv1alpha1.ProgressStalled ||
		!strings.Contains(got.Ready.Message, "field labels: ") || !strings.Contains(got.Ready.Message, "422 fields_invalid") {
		t.Errorf("filterSummary(fields %v) = %+v, want Stalled FieldsInvalid naming the field labels", bad, got)
	}
	if got := filterSummary(&agentsv1alpha1.WebhookEndpointSpec{Filter: `event ==`, Fields: bad}, nil, nil); got == nil || got.Ready.Reason != agentsv1alpha1.ReasonFilterInvalid {
		t.Errorf("a filter and fields that do not compile: %+v, want FilterInvalid first", got)
	}

	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "fields", "github.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sample := &agentsv1alpha1.WebhookEndpoint{}
	if err := yaml.UnmarshalStrict(raw, sample); err != nil {
		t.Fatal(err)
	}
	if len(sample.Spec.Fields) != 4 || sample.Spec.Payload != agentsv1alpha1.PayloadFields {
		t.Fatalf("the sample has fields %v and payload %q, want four and Fields", sample.Spec.Fields, sample.Spec.Payload)
	}
	if got := filterSummary(&sample.Spec, nil, nil); got != nil {
		t.Errorf("the sample's filter or fields do not compile: %s", got.Ready.Message)
	}
}
