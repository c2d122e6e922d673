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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestReportExpiry(t *testing.T) {
	report := func(writtenAt string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			CreationTimestamp: metav1.NewTime(t10.Add(-5 * time.Hour)),
			Annotations:       map[string]string{agentsv1alpha1.AnnotationReportWrittenAt: writtenAt},
		}}
	}
	for writtenAt, want := range map[string]time.Time{
		t10.Add(59 * time.Minute).Format(time.RFC3339): t10.Add(2 * time.Hour),
		t10.Format(time.RFC3339):                       t10.Add(2 * time.Hour),
		"yesterday":                                    t10.Add(-3 * time.Hour), // from its creation
	} {
		if got := reportExpiry(report(writtenAt)); !got.Equal(want) {
			t.Errorf("reportExpiry(written at %s) = %s, want %s", writtenAt, got, want)
		}
	}
}
