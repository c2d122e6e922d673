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

package v1alpha1_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// spec.sender.hmac.prefix reaches headers and the curl kubectl hookrun
// prints: printable ASCII only, so it carries no terminal escape.
var _ = Describe("spec.sender.hmac.prefix", func() {
	withPrefix := func(prefix string) *agentsv1alpha1.Sender {
		return &agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderHMAC, HMAC: &agentsv1alpha1.HMACSettings{Header: "X-Signature", Prefix: prefix}}
	}

	DescribeTable("refuses what is not printable ASCII",
		func(ctx SpecContext, prefix string) {
			ep := validEndpoint(newNamespace(ctx))
			ep.Spec.Sender = withPrefix(prefix)
			expectInvalid(k8sClient.Create(ctx, ep), "spec.sender.hmac.prefix", "should match")
		},
		Entry("an OSC 52 sequence (ESC ] 52 ; ... BEL)", "\x1b]52;c;aGk=\x07"),
		Entry("a CSI sequence", "\x1b[2J"),
		Entry("a C1 CSI", "\u009b2J"),
		Entry("a newline", "sha256=\n"),
		Entry("a tab", "sha256=\t"),
		Entry("DEL", "sha256=\x7f"),
		Entry("a bidi override", "\u202esha256="),
		Entry("a letter that is not ASCII", "shä256="),
	)

	It("accepts printable ASCII, space to tilde", func(ctx SpecContext) {
		ep := validEndpoint(newNamespace(ctx))
		ep.Spec.Sender = withPrefix(` !"#$%&'()*+,-./09:;<=>?@AZ[\]^_` + "`az{|}~")
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
	})
})
