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

package receiver

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/limits"
)

const memCloudEventsID = "EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE"

// newCloudEventsHandler is newMemoryHandler with a CloudEvents endpoint.
func newCloudEventsHandler(b *testing.B) *Handler {
	h, _ := newMemoryHandler(b)
	h.invocation, h.invocationLimit = limits.NewLocal(1<<30), 1<<30
	h.table.UpsertEndpoint(&agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ce", UID: "u5"},
		Spec: agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "a"}, Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Sender: &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderCloudEvents}},
		Status: agentsv1alpha1.WebhookEndpointStatus{EndpointID: memCloudEventsID, SecretHash: agentsv1alpha1.SecretHash([]byte(memSecret))},
	})
	return h
}

// BenchmarkCloudEvents: the paths of a CloudEvents endpoint a flood takes,
// against the in-memory store: the same event again (answered with its
// runId), in either mode; a call that is no event; the OPTIONS handshake.
func BenchmarkCloudEvents(b *testing.B) {
	data := []byte(`{"order":"A-1001","reason":"arrived broken"}`)
	binary := []string{"Authorization", "Bearer " + memSecret, "Content-Type", "application/json",
		"ce-specversion", "1.0", "ce-id", "A-1001-1", "ce-source", "/shop/orders", "ce-type", "com.example.order.refunded"}
	b.Run("binary duplicate", func(b *testing.B) {
		runBench(b, newCloudEventsHandler(b), newBenchCall(memCloudEventsID, data, binary...), http.StatusAccepted)
	})
	b.Run("structured duplicate", func(b *testing.B) {
		envelope := []byte(`{"specversion":"1.0","id":"A-1001-1","source":"/shop/orders","type":"com.example.order.refunded","data":{"order":"A-1001","reason":"arrived broken"}}`)
		c := newBenchCall(memCloudEventsID, envelope, "Authorization", "Bearer "+memSecret, "Content-Type", "application/cloudevents+json")
		runBench(b, newCloudEventsHandler(b), c, http.StatusAccepted)
	})
	b.Run("not an event", func(b *testing.B) {
		runBench(b, newCloudEventsHandler(b), newBenchCall(memCloudEventsID, data, binary[:len(binary)-2]...), http.StatusBadRequest)
	})
	b.Run("handshake", func(b *testing.B) {
		c := newBenchCall(memCloudEventsID, nil, "WebHook-Request-Origin", "eventgrid.example.com")
		c.req.Method = http.MethodOptions
		runBench(b, newCloudEventsHandler(b), c, http.StatusOK)
	})
}
