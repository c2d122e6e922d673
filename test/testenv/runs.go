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

package testenv

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/a2apeers"
)

// Runs as the receiver stores them, and the agents they reach
// (test/a2apeers), the same way in every suite that runs them.

// QueueRun stores, through c, a run name of Agent triage in ns (endpoint
// hook) received at receivedAt, and its payload Secret holding data (the
// body, and the fields), as the receiver does; mutate changes the run
// before it is stored (no payload Secret when it drops the payload). The
// run is deleted when the spec ends.
func QueueRun(ctx context.Context, c client.Client, ns, name string, data map[string][]byte, receivedAt time.Time, mutate func(*agentsv1alpha1.AgentRun)) *agentsv1alpha1.AgentRun {
	ginkgo.GinkgoHelper()
	body := data[agentsv1alpha1.PayloadBodyKey]
	run := &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			agentsv1alpha1.LabelEndpoint: "hook", agentsv1alpha1.LabelAgent: "triage",
		}},
		Spec: agentsv1alpha1.AgentRunSpec{
			EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "hook"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
			Prompt: "Triage this.", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Owner:      &agentsv1alpha1.Owner{User: "alice@example.com"},
			Payload:    &agentsv1alpha1.PayloadReference{SecretName: name, Bytes: int64(len(body)), ContentType: "application/json"},
			ReceivedAt: metav1.NewTime(receivedAt),
		},
	}
	if mutate != nil {
		mutate(run)
	}
	gomega.Expect(c.Create(ctx, run)).To(gomega.Succeed())
	ginkgo.DeferCleanup(func(ctx ginkgo.SpecContext) {
		gomega.Expect(client.IgnoreNotFound(c.Delete(ctx, run))).To(gomega.Succeed())
	})
	if run.Spec.Payload != nil {
		gomega.Expect(c.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "AgentRun", Name: run.Name, UID: run.UID,
			}}},
			Type: agentsv1alpha1.SecretTypeWebhookPayload,
			Data: data,
		})).To(gomega.Succeed())
	}
	return run
}

// StartPeer starts an A2A 0.3 agent of a2a-go (a2apeers.V03) until the
// spec ends.
func StartPeer() *a2apeers.Peer {
	peer := a2apeers.V03()
	ginkgo.DeferCleanup(peer.Close)
	return peer
}

// ServePeer starts an A2A 0.3 agent (StartPeer) and creates, through c,
// Agent triage in ns for it (a run timeout of a minute), changed by mutate
// if not nil.
func ServePeer(ctx context.Context, c client.Client, ns string, mutate func(*agentsv1alpha1.Agent)) *a2apeers.Peer {
	ginkgo.GinkgoHelper()
	peer := StartPeer()
	a := Agent(ns, "triage")
	a.Spec.A2A.URL = peer.URL
	a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
	a.Spec.RunTimeout = &metav1.Duration{Duration: time.Minute}
	if mutate != nil {
		mutate(a)
	}
	gomega.Expect(c.Create(ctx, a)).To(gomega.Succeed())
	return peer
}

// CallsTo counts the HTTP requests peer received.
func CallsTo(peer *a2apeers.Peer) func() int {
	return func() int { return len(peer.Requests()) }
}

// MessagesTo counts the messages peer was sent with an ID.
func MessagesTo(peer *a2apeers.Peer) func(messageID string) int {
	return func(id string) int {
		n := 0
		for _, m := range peer.Messages() {
			if m.MessageID == id {
				n++
			}
		}
		return n
	}
}
