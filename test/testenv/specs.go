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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
)

// What the operator's envtest specs build and check the same way, whichever
// suite they are in: one namespace per spec, an Agent and an endpoint as a
// spec starts them, and conditions read back through an uncached client.

// NewNamespace creates a namespace for one spec through c.
func NewNamespace(ctx context.Context, c client.Client) string {
	ginkgo.GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "op-"}}
	gomega.Expect(c.Create(ctx, ns)).To(gomega.Succeed())
	return ns.Name
}

// Agent is an Agent named name in ns that no run reaches.
func Agent(ns, name string) *agentsv1alpha1.Agent {
	return &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		// Port 1 refuses connections: runs stay queued or retrying unless a spec
		// points the Agent at a test agent (18090 would reach a running make dev).
		// protocolVersion is set, so no card is read: specs that read cards clear it.
		Spec: agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://127.0.0.1:1/", ProtocolVersion: agentsv1alpha1.A2AProtocolV10}},
	}
}

// Endpoint is a WebhookEndpoint named name in ns of Agent agent, owned by
// alice@example.com of team-a.
func Endpoint(ns, name, agent string) *agentsv1alpha1.WebhookEndpoint {
	return &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef:       agentsv1alpha1.LocalObjectReference{Name: agent},
			Prompt:         "Triage this.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Owner:          &agentsv1alpha1.Owner{User: "alice@example.com", Groups: []string{"team-a"}},
		},
	}
}

// Fresh returns a function that reads obj from the API server through c,
// into a new object each time.
func Fresh[T client.Object](ctx context.Context, c client.Client, obj T) func() T {
	return func() T {
		got, ok := obj.DeepCopyObject().(T)
		gomega.Expect(ok).To(gomega.BeTrue())
		gomega.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(gomega.Succeed())
		return got
	}
}

// ReadyEndpoint waits until ep is Ready (Available) for its current
// generation, and returns it as read through c.
func ReadyEndpoint(ctx context.Context, c client.Client, ep *agentsv1alpha1.WebhookEndpoint) *agentsv1alpha1.WebhookEndpoint {
	ginkgo.GinkgoHelper()
	var got *agentsv1alpha1.WebhookEndpoint
	gomega.Eventually(func(g gomega.Gomega) {
		got = &agentsv1alpha1.WebhookEndpoint{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ep), got)).To(gomega.Succeed())
		g.Expect(ConditionOf(got.Status.Conditions, agentsv1alpha1.ConditionReady)).To(HaveCondition(metav1.ConditionTrue, agentsv1alpha1.ReasonAvailable))
		g.Expect(got.Status.ObservedGeneration).To(gomega.Equal(got.Generation))
	}).Should(gomega.Succeed())
	return got
}

// ConditionOf is the condition of type t in conds, or nil.
func ConditionOf(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// HaveCondition matches a *metav1.Condition with the status and reason.
func HaveCondition(status metav1.ConditionStatus, reason string) gomega.OmegaMatcher {
	return gomega.And(gomega.Not(gomega.BeNil()), gomega.HaveField("Status", status), gomega.HaveField("Reason", reason))
}

// Events returns a function that lists, through c, the events.k8s.io
// events about obj with reason.
func Events(ctx context.Context, c client.Client, obj client.Object, reason string) func() []eventsv1.Event {
	return func() []eventsv1.Event {
		list := &eventsv1.EventList{}
		gomega.Expect(c.List(ctx, list, client.InNamespace(obj.GetNamespace()))).To(gomega.Succeed())
		var out []eventsv1.Event
		for _, e := range list.Items {
			if e.Regarding.UID == obj.GetUID() && e.Reason == reason {
				out = append(out, e)
			}
		}
		return out
	}
}

// Get reads obj fresh from the API server through c.
func Get[T client.Object](ctx context.Context, c client.Client, obj T) T {
	ginkgo.GinkgoHelper()
	gomega.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(gomega.Succeed())
	return obj
}

// Poke makes the operator reconcile obj now (any metadata change does).
func Poke[T client.Object](ctx context.Context, c client.Client, obj T) {
	ginkgo.GinkgoHelper()
	orig, ok := obj.DeepCopyObject().(T)
	gomega.Expect(ok).To(gomega.BeTrue())
	patch := client.MergeFrom(orig)
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["test.hookrun.dev/poke"] = time.Now().Format(time.RFC3339Nano)
	obj.SetAnnotations(ann)
	gomega.Expect(c.Patch(ctx, obj, patch)).To(gomega.Succeed())
}

// ReferableLabels mark a Secret for hookrun (DESIGN section 9).
func ReferableLabels() map[string]string {
	return map[string]string{agentsv1alpha1.LabelAllowReference: agentsv1alpha1.AllowReferenceTrue}
}

// SetReferable labels (or unlabels) Secret name of ns for hookrun, through c.
func SetReferable(ctx context.Context, c client.Client, ns, name string, on bool) {
	ginkgo.GinkgoHelper()
	s := Get(ctx, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	patch := client.MergeFrom(s.DeepCopy())
	if on {
		s.Labels = ReferableLabels()
	} else {
		delete(s.Labels, agentsv1alpha1.LabelAllowReference)
	}
	gomega.Expect(c.Patch(ctx, s, patch)).To(gomega.Succeed())
}

// GeneratedSecret reads, through c, the Secret the operator generated for ep.
func GeneratedSecret(ctx context.Context, c client.Client, ep *agentsv1alpha1.WebhookEndpoint) *corev1.Secret {
	ginkgo.GinkgoHelper()
	s := &corev1.Secret{}
	gomega.Expect(c.Get(ctx, client.ObjectKey{Namespace: ep.Namespace, Name: agentsv1alpha1.GeneratedSecretName(ep.Name)}, s)).To(gomega.Succeed())
	return s
}

// SHA256Hex is status.secretHash as a spec expects it for secret: "sha256:"
// and the hex SHA-256, computed here rather than by api/v1alpha1.SecretHash,
// which it checks.
func SHA256Hex(secret []byte) string {
	sum := sha256.Sum256(secret)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// RecordOwnerSkip does what the receiver does, as the receiver's service
// account, when a call arrives after the endpoint's owner lost membership:
// it records the call as a skipped run marked OwnerNotMember, naming the
// owner. The receiver writes nothing else; the operator pauses the endpoint.
func RecordOwnerSkip(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, cur *agentsv1alpha1.WebhookEndpoint, receivedAt time.Time) *agentsv1alpha1.AgentRun {
	ginkgo.GinkgoHelper()
	asReceiver, err := client.New(AsServiceAccount(cfg, clusterinstall.Namespace, clusterinstall.ReceiverServiceAccount), client.Options{Scheme: scheme})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	run := &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cur.Namespace, GenerateName: cur.Name + "-",
			Labels: map[string]string{
				agentsv1alpha1.LabelEndpoint:   cur.Name,
				agentsv1alpha1.LabelAgent:      cur.Spec.AgentRef.Name,
				agentsv1alpha1.LabelSkipReason: agentsv1alpha1.SkipReasonOwnerNotMember,
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "WebhookEndpoint", Name: cur.Name, UID: cur.UID,
			}},
		},
		Spec: agentsv1alpha1.AgentRunSpec{
			EndpointRef: agentsv1alpha1.LocalObjectReference{Name: cur.Name}, AgentRef: cur.Spec.AgentRef,
			Prompt: cur.Spec.Prompt, ThreadStrategy: cur.Spec.ThreadStrategy, Owner: cur.Spec.Owner.DeepCopy(),
			Trust: agentsv1alpha1.TrustStandard, ReceivedAt: metav1.NewTime(receivedAt),
		},
	}
	gomega.Expect(asReceiver.Create(ctx, run)).To(gomega.Succeed())
	SkipAsReceiver(ctx, asReceiver, run, "Skipped: the endpoint's owner "+cur.Spec.Owner.UserName()+" may no longer trigger Agent "+cur.Spec.AgentRef.Name)
	return run
}

// SkipAsReceiver writes the status of a run just created as the receiver
// does for a skipped call: its state, message and conditions in one write.
func SkipAsReceiver(ctx context.Context, c client.Client, run *agentsv1alpha1.AgentRun, message string) {
	ginkgo.GinkgoHelper()
	patch := client.MergeFrom(run.DeepCopy())
	run.Status.State = agentsv1alpha1.RunSkipped
	run.Status.Message = message
	run.Status.CompletedAt = &run.Spec.ReceivedAt
	agentsv1alpha1.SetRunConditions(run)
	gomega.Expect(c.Status().Patch(ctx, run, patch)).To(gomega.Succeed())
}

// MustJSON is v as JSON.
func MustJSON(v any) []byte {
	ginkgo.GinkgoHelper()
	b, err := json.Marshal(v)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return b
}
