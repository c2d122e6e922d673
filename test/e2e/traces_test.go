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

package e2e

import (
	"encoding/json"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

var _ = Describe("Traces", func() {
	It("makes one trace of a call with a traceparent, from the receiver's receive span to the operator's send, exported by both", func(ctx SpecContext) {
		const (
			senderTrace = "0af7651916cd43dd8448eb211c80319c"
			senderSpan  = "b7ad6b7169203331"
		)
		ep := newEndpoint(ctx, developer(), "traced")
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, strings.NewReader(`{"issue":1}`))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(agentsv1alpha1.SecretHeader, ep.Secret)
		req.Header.Set("traceparent", "00-"+senderTrace+"-"+senderSpan+"-01")
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		var answer struct {
			RunID string `json:"runId"`
		}
		Expect(json.NewDecoder(resp.Body).Decode(&answer)).To(Succeed())
		Expect(resp.Body.Close()).To(Succeed())
		Expect(resp.StatusCode).To(Equal(http.StatusAccepted))
		runID := answer.RunID
		Expect(succeeds(ctx, runID).Status.TraceID).To(Equal(senderTrace))

		// The batching exporters send within seconds.
		var spans []exportedSpan
		Eventually(func() []string {
			spans = otlp.inTrace(senderTrace)
			var names []string
			for _, s := range spans {
				names = append(names, s.Service+"/"+s.Name)
			}
			return names
		}).Should(ContainElements("hookrun-receiver/receive", "hookrun-operator/admission", "hookrun-operator/send"))
		byName := map[string]exportedSpan{}
		for _, s := range spans {
			byName[s.Name] = s
			Expect(s.Attributes).To(And(
				HaveKeyWithValue("hookrun.endpoint", ns+"/traced"), HaveKeyWithValue("hookrun.run", runID),
				HaveKeyWithValue("hookrun.agent", "triage")), s.Name)
		}
		Expect(byName["receive"].Parent).To(Equal(senderSpan), "the receive span continues the sender's")
		Expect(byName["admission"].Parent).To(Equal(byName["receive"].SpanID))
		Expect(byName["send"].Parent).To(Equal(byName["receive"].SpanID))
	})
})
