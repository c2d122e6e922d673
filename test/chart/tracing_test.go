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

package chart

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hookrun/hookrun/controllers/sharedflags"
	"github.com/hookrun/hookrun/test/testenv"
)

// tracing.otlpEndpoint reaches both components as --otlp-endpoint they
// accept; it is not rendered when empty, and the schema refuses what is not
// an http(s) URL.
func TestChartTracing(t *testing.T) {
	g := NewWithT(t)
	args := func(component string, values ...string) []string {
		container := onlyContainer(g, render(t, values...)[deploymentKey(component)])
		args, _, err := unstructured.NestedStringSlice(container, "args")
		g.Expect(err).NotTo(HaveOccurred())
		return args
	}
	for _, component := range []string{"operator", "receiver"} {
		shared := sharedflags.NewOptions()
		parseArgs(g, args(component, "--set", "tracing.otlpEndpoint=http://otel-collector.monitoring:4318"),
			func(*pflag.FlagSet) {}, sharedFlags(shared, component))
		g.Expect(shared.Validate()).To(Succeed())
		g.Expect(shared.OTLPEndpoint).To(Equal("http://otel-collector.monitoring:4318"), component)
		g.Expect(args(component)).NotTo(ContainElement(HavePrefix("--otlp-endpoint")), component)
	}
	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	out, err := helmCommand(t, "template", "hookrun", chart, "--set", "publicBaseURL=https://hooks.example.com",
		"--set", "tracing.otlpEndpoint=otel-collector:4318").CombinedOutput()
	g.Expect(err).To(HaveOccurred(), string(out))
	g.Expect(string(out)).To(ContainSubstring("does not match pattern"))
}

// collectorValues writes a values file that exports traces to a collector
// in namespace monitoring, on top of egressValues.
func collectorValues(t *testing.T) string {
	t.Helper()
	return valuesFile(t, `
tracing:
  otlpEndpoint: http://otel-collector.monitoring:4318
  collectorPeers:
    - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}
      podSelector: {matchLabels: {app.kubernetes.io/name: opentelemetry-collector}}
`)
}

// tracing.collectorPeers gets a rule of its own in the operator's
// NetworkPolicy, on the port of tracing.otlpEndpoint only, and never a place
// among the agent peers: the operator connects wherever any tenant's Agent
// URL points, so an agent rule would open the collector's other ports to
// every tenant.
func TestChartTraceCollectorEgress(t *testing.T) {
	g := NewWithT(t)
	const policy = "networking.k8s.io/v1/NetworkPolicy/" + release + "/hookrun-operator"
	egress := func(args ...string) []any {
		objs := render(t, args...)
		g.Expect(objs).To(HaveKey(policy))
		rules, _, err := unstructured.NestedSlice(objs[policy].Object, "spec", "egress")
		g.Expect(err).NotTo(HaveOccurred())
		return rules
	}
	collector := map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}},
		"podSelector":       map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "opentelemetry-collector"}},
	}
	withoutCollector := egress("-f", egressValues(t))
	rules := egress("-f", egressValues(t), "-f", collectorValues(t))
	g.Expect(rules).To(HaveLen(len(withoutCollector)+1), "one rule more: the collector's")
	g.Expect(rules[:len(withoutCollector)]).To(Equal(withoutCollector), "the agent rule (and the others) unchanged")
	g.Expect(rules[len(rules)-1]).To(Equal(map[string]any{
		"to":    []any{collector},
		"ports": []any{map[string]any{"port": int64(4318), "protocol": "TCP"}},
	}))
	for _, r := range rules[:len(rules)-1] {
		rule, ok := r.(map[string]any)
		g.Expect(ok).To(BeTrue(), "an egress rule is an object")
		to, _, _ := unstructured.NestedSlice(rule, "to")
		g.Expect(to).NotTo(ContainElement(collector), "the collector is in no other rule")
	}

	// Agents on any port (no agentPorts): the collector's rule still names its
	// port only.
	rules = egress("--set", "operator.networkPolicy.enabled=true", "-f", collectorValues(t))
	g.Expect(rules[len(rules)-1]).To(HaveKeyWithValue("ports", []any{map[string]any{"port": int64(4318), "protocol": "TCP"}}))
	// Without a port in the URL, the scheme's.
	rules = egress("--set", "operator.networkPolicy.enabled=true", "-f", collectorValues(t),
		"--set", "tracing.otlpEndpoint=https://otel.example.com/otlp")
	g.Expect(rules[len(rules)-1]).To(HaveKeyWithValue("ports", []any{map[string]any{"port": int64(443), "protocol": "TCP"}}))

	// No NetworkPolicy, no rule; peers without an endpoint are refused.
	g.Expect(render(t, "-f", collectorValues(t))).NotTo(HaveKey(policy))
	out, err := helmCommand(t, "template", "hookrun", filepath.Join(testenv.Root(), "charts", "hookrun"),
		"--set", "publicBaseURL=https://hooks.example.com", "-f", collectorValues(t),
		"--set", "operator.networkPolicy.enabled=true", "--set", "tracing.otlpEndpoint=").CombinedOutput()
	g.Expect(err).To(HaveOccurred(), string(out))
	g.Expect(string(out)).To(ContainSubstring("tracing.collectorPeers needs tracing.otlpEndpoint"))
}
