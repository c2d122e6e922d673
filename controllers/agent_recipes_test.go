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

package controllers

import (
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/demo-agent/demoagent"
	"github.com/hookrun/hookrun/test/a2apeers"
	"github.com/hookrun/hookrun/test/testenv"
)

// agentRecipes are the ```yaml blocks of section "## Recipes" of
// docs/agent-authors.md, by the first word of the "###" heading above each.
func agentRecipes() map[string][]string {
	GinkgoHelper()
	doc, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "agent-authors.md"))
	Expect(err).NotTo(HaveOccurred())
	recipes := map[string][]string{}
	var section, heading string
	var fence, keep bool
	var block strings.Builder
	for line := range strings.SplitSeq(string(doc), "\n") {
		switch {
		case fence && strings.TrimSpace(line) == "```":
			if keep {
				recipes[heading] = append(recipes[heading], block.String())
			}
			fence = false
		case fence:
			block.WriteString(line + "\n")
		case strings.HasPrefix(line, "```"):
			fence, keep = true, section == "## Recipes" && strings.TrimSpace(strings.TrimPrefix(line, "```")) == "yaml"
			block.Reset()
		case strings.HasPrefix(line, "## "):
			section, heading = strings.TrimSpace(line), ""
		case strings.HasPrefix(line, "### "):
			heading = strings.Fields(line)[1]
		}
	}
	return recipes
}

// recipePeer is an agent served as the SDK a recipe stands for serves it.
type recipePeer struct {
	// url is where it is served; the recipe's Agent takes its host.
	url string
	// chosen is what the operator should take from its card.
	chosen agentsv1alpha1.A2AStatus
	// received is how many times it was sent messageID.
	received func(messageID string) int
}

// The recipes of docs/agent-authors.md, each Agent applied as the document
// writes it (only its namespace, and the host of its URL, are the test's)
// against the SDK its recipe stands for, served as that SDK serves it: the
// operator must find the agent through its card and a run must succeed.
var _ = Describe("Agent recipes of docs/agent-authors.md", func() {
	It("has one Agent for each recipe, and no other", func() {
		recipes := agentRecipes()
		Expect(recipes).To(HaveLen(3), "recipes with YAML: %v", recipes)
		for _, heading := range []string{"a2a-go", "ADK", "kagent"} {
			Expect(recipes[heading]).To(HaveLen(1), "recipe %q", heading)
		}
	})

	DescribeTable("reaches the recipe's agent through its card, and runs on it",
		func(ctx SpecContext, heading string, serve func() recipePeer) {
			blocks := agentRecipes()[heading]
			Expect(blocks).To(HaveLen(1), "the recipe %q has one YAML block", heading)
			var a agentsv1alpha1.Agent
			Expect(yaml.UnmarshalStrict([]byte(blocks[0]), &a)).To(Succeed(), blocks[0])
			Expect(a.APIVersion + " " + a.Kind).To(Equal(agentsv1alpha1.GroupVersion.String() + " Agent"))

			peer := serve()
			written, err := url.Parse(a.Spec.A2A.URL)
			Expect(err).NotTo(HaveOccurred())
			served, err := url.Parse(peer.url)
			Expect(err).NotTo(HaveOccurred())
			written.Host = served.Host
			a.Spec.A2A.URL = written.String()
			a.Namespace = newNamespace(ctx)
			Expect(k8sClient.Create(ctx, &a)).To(Succeed())

			Eventually(func() *agentsv1alpha1.A2AStatus {
				st := get(ctx, &a).Status.A2A
				if st != nil {
					st = st.DeepCopy()
					st.CardReadAt = nil
				}
				return st
			}).Should(Equal(&peer.chosen), "the operator takes the interface the card names")
			Expect(conditionOf(get(ctx, &a).Status.Conditions, agentsv1alpha1.ConditionReady)).To(
				HaveField("Status", metav1.ConditionTrue))

			run := queueTestRun(ctx, a.Namespace, "recipe", "hello", func(r *agentsv1alpha1.AgentRun) {
				r.Spec.AgentRef.Name = a.Name
				r.Labels[agentsv1alpha1.LabelAgent] = a.Name
			})
			Eventually(func() agentsv1alpha1.RunState { return get(ctx, run).Status.State }).Should(Equal(agentsv1alpha1.RunSuccess),
				func() string { return get(ctx, run).Status.Message })
			Expect(get(ctx, run).Status.Output).To(ContainSubstring("hello"))
			Expect(peer.received(string(run.UID))).To(Equal(1))
		},
		Entry("a2a-go: the demo agent", "a2a-go", func() recipePeer {
			demo := demoagent.New()
			srv := httptest.NewServer(demo)
			DeferCleanup(srv.Close)
			return recipePeer{url: srv.URL + "/", received: demo.Seen, chosen: agentsv1alpha1.A2AStatus{
				URL: srv.URL + "/", ProtocolBinding: agentsv1alpha1.A2ABindingJSONRPC, ProtocolVersion: agentsv1alpha1.A2AProtocolV10,
			}}
		}),
		Entry("ADK: to_a2a's A2A 0.3 JSON-RPC at /, the card's url naming host and port", "ADK", func() recipePeer {
			peer := a2apeers.V03()
			DeferCleanup(peer.Close)
			return recipePeer{url: peer.URL, received: messagesOf(peer), chosen: agentsv1alpha1.A2AStatus{
				URL: peer.URL, ProtocolBinding: agentsv1alpha1.A2ABindingJSONRPC, ProtocolVersion: agentsv1alpha1.A2AProtocolV03,
			}}
		}),
		Entry("kagent: its controller's A2A 1.0 under /api/a2a/kagent/k8s-agent/", "kagent", func() recipePeer {
			peer := a2apeers.Kagent("kagent", "k8s-agent")
			DeferCleanup(peer.Close)
			return recipePeer{url: peer.URL, received: messagesOf(peer), chosen: agentsv1alpha1.A2AStatus{
				URL: peer.URL, ProtocolBinding: agentsv1alpha1.A2ABindingJSONRPC, ProtocolVersion: agentsv1alpha1.A2AProtocolV10,
			}}
		}),
	)
})
