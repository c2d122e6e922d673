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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestNotAnAccountingWrite(t *testing.T) {
	const noChange = "nothing the cache keeps (an annotation it drops)"
	old := &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Name: "ep", ResourceVersion: "1", Generation: 1},
		Status:     agentsv1alpha1.WebhookEndpointStatus{EndpointID: "id", Runs: agentsv1alpha1.RunCounts{Total: 1}},
	}
	for _, tc := range []struct {
		name   string
		change func(*agentsv1alpha1.WebhookEndpoint)
		want   bool
	}{
		{"status.runs and status.rejections", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.ResourceVersion = "2"
			ep.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "hookrun"}}
			ep.Status.Runs = agentsv1alpha1.RunCounts{Total: 2, Running: 1}
			ep.Status.Rejections = &agentsv1alpha1.EndpointRejections{}
		}, false},
		{noChange, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.ResourceVersion = "2" }, true},
		{"status.runs and a condition", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Status.Runs.Total = 2
			ep.Status.Conditions = []metav1.Condition{{Type: agentsv1alpha1.ConditionReady}}
		}, true},
		{"status.endpointID", func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Status.EndpointID = "other" }, true},
		{"a condition", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Status.Conditions = []metav1.Condition{{Type: agentsv1alpha1.ConditionReady}}
		}, true},
		{"the spec", func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Generation, ep.Spec.Paused = 2, true }, true},
		{"an annotation", func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Annotations = map[string]string{"a": "b"} }, true},
		{"the deletion", func(ep *agentsv1alpha1.WebhookEndpoint) { ep.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }, true},
	} {
		ep := old.DeepCopy()
		tc.change(ep)
		if tc.want && tc.name != noChange {
			// With an accounting change in the same update, too.
			withCounts := ep.DeepCopy()
			withCounts.Status.Runs.Total = 99
			if !notAnAccountingWrite.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: withCounts}) {
				t.Errorf("%s and status.runs changed: filtered, want it passed", tc.name)
			}
		}
		if got := notAnAccountingWrite.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: ep}); got != tc.want {
			t.Errorf("%s changed: passes %v, want %v", tc.name, got, tc.want)
		}
	}
}
