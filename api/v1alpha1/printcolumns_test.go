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
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// tableAccept asks the API server for the table `kubectl get` prints: the
// CRD's printer columns evaluated by the server.
const tableAccept = "application/json;as=Table;g=meta.k8s.io;v=v1"

// endpointTable lists the WebhookEndpoints of ns as `kubectl get whe` does and
// returns the rows by name, each a map of column name to its cell.
func endpointTable(ctx context.Context, ns string) map[string]map[string]any {
	clientset, err := kubernetes.NewForConfig(testEnv.Config)
	Expect(err).NotTo(HaveOccurred())
	raw, err := clientset.Discovery().RESTClient().Get().
		AbsPath("apis", agentsv1alpha1.GroupVersion.Group, agentsv1alpha1.GroupVersion.Version, "namespaces", ns, "webhookendpoints").
		SetHeader("Accept", tableAccept).
		DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())

	var table metav1.Table
	Expect(json.Unmarshal(raw, &table)).To(Succeed())
	Expect(table.Kind).To(Equal("Table"))
	rows := map[string]map[string]any{}
	for _, row := range table.Rows {
		Expect(row.Cells).To(HaveLen(len(table.ColumnDefinitions)))
		cells := map[string]any{}
		for i, col := range table.ColumnDefinitions {
			cells[col.Name] = row.Cells[i]
		}
		name, ok := cells["Name"].(string)
		Expect(ok).To(BeTrue(), "the first column is the name")
		rows[name] = cells
	}
	return rows
}

// setEndpointStatus writes phase Active and the given Ready condition, as the
// operator would.
func setEndpointStatus(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint, ready metav1.Condition) {
	ep.Status.Phase = agentsv1alpha1.EndpointActive
	ready.ObservedGeneration = ep.Generation
	meta.SetStatusCondition(&ep.Status.Conditions, ready)
	Expect(k8sClient.Status().Update(ctx, ep)).To(Succeed())
}

var _ = Describe("kubectl get webhookendpoints", func() {
	It("shows Ready and its reason beside the phase, so an Active endpoint that is not Ready reads so", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		broken := validEndpoint(ns)
		Expect(k8sClient.Create(ctx, broken)).To(Succeed())
		setEndpointStatus(ctx, broken, agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionReady, false,
			agentsv1alpha1.ReasonAgentNotFound, "Agent triage does not exist"))
		working := validEndpoint(ns)
		working.Name = "working"
		Expect(k8sClient.Create(ctx, working)).To(Succeed())
		setEndpointStatus(ctx, working, agentsv1alpha1.NewCondition(agentsv1alpha1.ConditionReady, true,
			agentsv1alpha1.ReasonAvailable, "Accepting calls"))

		rows := endpointTable(ctx, ns)
		Expect(rows).To(HaveKey(broken.Name))
		Expect(rows[broken.Name]).To(HaveKeyWithValue("Phase", "Active"))
		Expect(rows[broken.Name]).To(HaveKeyWithValue("Ready", "False"))
		Expect(rows[broken.Name]).To(HaveKeyWithValue("Reason", agentsv1alpha1.ReasonAgentNotFound))
		Expect(rows).To(HaveKey(working.Name))
		Expect(rows[working.Name]).To(HaveKeyWithValue("Phase", "Active"))
		Expect(rows[working.Name]).To(HaveKeyWithValue("Ready", "True"))
		Expect(rows[working.Name]).To(HaveKeyWithValue("Reason", agentsv1alpha1.ReasonAvailable))
	})
})
