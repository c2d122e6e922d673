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

	"github.com/hookrun/hookrun/controllers/manager"
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
		shared := manager.NewOptions()
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
