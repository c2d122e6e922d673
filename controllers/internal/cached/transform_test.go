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

package cached

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// What the cache keeps of a Secret's metadata that a tenant stuffed with
// keys under hookrun's prefix: the keys hookrun defines, a long annotation
// value as its hash, and nothing else, however many keys there were.
func TestStripForCacheKeepsOnlyHookrunKeys(t *testing.T) {
	labels := map[string]string{agentsv1alpha1.LabelAllowReference: agentsv1alpha1.AllowReferenceTrue}
	for i := range 6000 {
		labels[fmt.Sprintf("agents.hookrun.dev/ballast-%05d", i)] = strings.Repeat("v", 63)
	}
	long := strings.Repeat("r", 300)
	tracestate := "vendor=" + strings.Repeat("t", agentsv1alpha1.MaxTracestateBytes-len("vendor="))
	secret := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
		agentsv1alpha1.AnnotationRotateSecret: long,
		agentsv1alpha1.AnnotationTracestate:   tracestate,
		agentsv1alpha1.AnnotationKeyHash:      "sha256:00",
		"agents.hookrun.dev/ballast":          strings.Repeat("a", 64<<10),
		"example.com/note":                    "other",
	}}}
	Strip(secret)
	if want := map[string]string{agentsv1alpha1.LabelAllowReference: agentsv1alpha1.AllowReferenceTrue}; fmt.Sprint(secret.Labels) != fmt.Sprint(want) {
		t.Errorf("labels kept: %d, want %v", len(secret.Labels), want)
	}
	want := map[string]string{
		agentsv1alpha1.AnnotationRotateSecret: agentsv1alpha1.SecretHash([]byte(long)),
		agentsv1alpha1.AnnotationTracestate:   tracestate,
		agentsv1alpha1.AnnotationKeyHash:      "sha256:00",
	}
	if fmt.Sprint(secret.Annotations) != fmt.Sprint(want) {
		t.Errorf("annotations kept: %v, want %v", secret.Annotations, want)
	}
	if got := agentsv1alpha1.RotationValue(secret.Annotations[agentsv1alpha1.AnnotationRotateSecret]); got != agentsv1alpha1.RotationValue(long) {
		t.Errorf("the kept rotate-secret value compares as %q, the live one as %q", got, agentsv1alpha1.RotationValue(long))
	}
}
