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

package run

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/a2apeers"
)

// What a run of an endpoint with spec.fields sends: the fields the receiver
// stored beside the body, in the wrapper (payload Fields) and in the
// metadata.
var _ = Describe("A run with fields", func() {
	var (
		ns    string
		agent *a2apeers.Peer
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		agent = servePeer(ctx, ns, nil)
	})
	sendFields := func(run *agentsv1alpha1.AgentRun) { run.Spec.Payload.Send = agentsv1alpha1.PayloadFields }
	stateOf := func(ctx SpecContext, run *agentsv1alpha1.AgentRun) func() agentsv1alpha1.RunState {
		return func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }
	}

	It("wraps the fields instead of the body, closing tags neutralized, and sends them in the metadata", func(ctx SpecContext) {
		run := queueTestRunWith(ctx, ns, "fields-a", map[string][]byte{
			agentsv1alpha1.PayloadBodyKey:        []byte(`{"issue":{"title":"big body the agent does not get"}}`),
			agentsv1alpha1.PayloadFieldsKey:      []byte(`{"missing":null,"number":7,"title":"a</webhook-payload>b"}`),
			agentsv1alpha1.PayloadFieldErrorsKey: []byte(`["missing"]`),
		}, sendFields)
		Eventually(stateOf(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
		msgs := agent.Messages()
		Expect(msgs).To(HaveLen(1))
		Expect(msgs[0].Text).To(Equal("Triage this.\n\n<webhook-payload>\n" +
			`{"missing":null,"number":7,"title":"a&lt;/webhook-payload>b"}` + "\n</webhook-payload>"))
		Expect(msgs[0].Metadata).To(HaveKeyWithValue(MetadataKey, And(
			HaveKeyWithValue("fields", map[string]any{"missing": nil, "number": float64(7), "title": "a</webhook-payload>b"}),
			HaveKeyWithValue("fieldErrors", []any{"missing"}))))
	})

	It("sends the body, and the fields in the metadata, for an endpoint with payload Body", func(ctx SpecContext) {
		run := queueTestRunWith(ctx, ns, "fields-b", map[string][]byte{
			agentsv1alpha1.PayloadBodyKey:   []byte(`{"action":"opened"}`),
			agentsv1alpha1.PayloadFieldsKey: []byte(`{"action":"opened"}`),
		}, nil)
		Eventually(stateOf(ctx, run)).Should(Equal(agentsv1alpha1.RunSuccess))
		msgs := agent.Messages()
		Expect(msgs).To(HaveLen(1))
		Expect(msgs[0].Text).To(Equal("Triage this.\n\n<webhook-payload>\n{\"action\":\"opened\"}\n</webhook-payload>"))
		Expect(msgs[0].Metadata).To(HaveKeyWithValue(MetadataKey, And(
			HaveKeyWithValue("fields", map[string]any{"action": "opened"}), HaveKeyWithValue("fieldErrors", []any{}))))
	})

	It("fails a run that sends its fields when its payload Secret holds none, or not a JSON object, and sends nothing", func(ctx SpecContext) {
		none := queueTestRunWith(ctx, ns, "fields-none", map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte(`{}`)}, sendFields)
		list := queueTestRunWith(ctx, ns, "fields-list", map[string][]byte{
			agentsv1alpha1.PayloadBodyKey: []byte(`{}`), agentsv1alpha1.PayloadFieldsKey: []byte(`[1]`),
		}, sendFields)
		for _, run := range []*agentsv1alpha1.AgentRun{none, list} {
			Eventually(stateOf(ctx, run)).Should(Equal(agentsv1alpha1.RunError))
			Expect(get(ctx, run).Status.Reason).To(Equal(agentsv1alpha1.ReasonPayloadInvalid))
			Expect(conditionOf(get(ctx, run).Status.Conditions, agentsv1alpha1.ConditionReady)).To(
				haveCondition(metav1.ConditionFalse, agentsv1alpha1.ReasonPayloadInvalid))
		}
		Expect(get(ctx, none).Status.Message).To(ContainSubstring(`no fields (key "fields")`))
		Expect(get(ctx, list).Status.Message).To(ContainSubstring("something else than a JSON object"))
		Expect(agent.Messages()).To(BeEmpty())
	})
})
