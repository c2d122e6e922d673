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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("Two endpoints with one ID", func() {
	It("serves the older one until it is gone, never the copy", func(ctx SpecContext) {
		f := newFixture(ctx)
		victim, id := f.endpoint(ctx, endpointSpec{name: "victim", secret: "victim-secret"})
		// creationTimestamp has whole seconds, and endpoints of one second
		// are ordered by UID: make the victim the older by a second.
		Eventually(time.Now).Should(BeTemporally(">=", victim.CreationTimestamp.Add(time.Second)))
		// Another tenant's endpoint in another namespace gets the same ID
		// into its status (admission stops tenants from writing status;
		// this is the receiver's own line of defence).
		g := newFixture(ctx)
		thief, _ := g.endpoint(ctx, endpointSpec{name: "thief", secret: "thief-secret"})
		patch := client.MergeFrom(thief.DeepCopy())
		thief.Status.EndpointID = id
		Expect(k8sClient.Status().Patch(ctx, thief, patch)).To(Succeed())
		Eventually(func() int { return handler.table.Claimants(id) }).Should(Equal(2))

		Expect(post(id, ptr("thief-secret"), `{}`).status).To(Equal(http.StatusForbidden))
		r := post(id, ptr("victim-secret"), `{}`)
		Expect(r.status).To(Equal(http.StatusAccepted))
		Expect(runsIn(ctx, g.ns)).To(BeEmpty(), "nothing reaches the copy")
		Expect(runsIn(ctx, f.ns)).To(HaveLen(1))

		Expect(k8sClient.Delete(ctx, victim)).To(Succeed())
		Eventually(func() int { return post(id, ptr("thief-secret"), `{}`).status }).Should(Equal(http.StatusAccepted))
		Expect(runsIn(ctx, g.ns)).To(HaveLen(1))
	})
})
