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
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/testenv"
)

// What docs/api.md (Conditions and health) and docs/argocd.md tell users to
// run, run with the control plane's kubectl against the running operator.
var _ = Describe("health as kubectl wait and kstatus read it", func() {
	It("kubectl wait --for=condition=Ready returns for a ready endpoint and for a paused one; a misconfigured one is Stalled", func(ctx SpecContext) {
		newEndpoint(ctx, developer(), "waited")
		kubectlWait(ctx, "--for=condition=Ready", "webhookendpoint/waited")
		Expect(kstatusOf(ctx, "WebhookEndpoint", "waited")).To(Equal(status.CurrentStatus))

		patchEndpoint(ctx, developer(), "waited", func(e *agentsv1alpha1.WebhookEndpoint) { e.Spec.Paused = true })
		kubectlWait(ctx, "--for=jsonpath={.status.phase}=Paused", "webhookendpoint/waited")
		kubectlWait(ctx, "--for=condition=Ready", "webhookendpoint/waited")
		Expect(kubectlJSONPath(ctx, "webhookendpoint/waited", `{.status.conditions[?(@.type=="Ready")].reason}`)).To(Equal("Paused"))
		Expect(kstatusOf(ctx, "WebhookEndpoint", "waited")).To(Equal(status.CurrentStatus))

		Expect(developer().Create(ctx, &agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stray"},
			Spec: agentsv1alpha1.WebhookEndpointSpec{
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "no-such-agent"}, Prompt: "Triage this.",
				ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			},
		})).To(Succeed())
		kubectlWait(ctx, "--for=condition=Stalled", "webhookendpoint/stray")
		Expect(kubectlJSONPath(ctx, "webhookendpoint/stray", `{.status.conditions[?(@.type=="Stalled")].message}`)).
			To(ContainSubstring(`Agent "no-such-agent" does not exist`))
		Expect(kstatusOf(ctx, "WebhookEndpoint", "stray")).To(Equal(status.FailedStatus))
	})

	It("kubectl wait for a run's success, or for its end whatever the outcome", func(ctx SpecContext) {
		ep := newEndpoint(ctx, developer(), "waited-runs")
		ok := accepted(ctx, ep, `{"wait":"for me"}`)
		kubectlWait(ctx, "--for=condition=Succeeded", "agentrun/"+ok)
		Expect(kstatusOf(ctx, "AgentRun", ok)).To(Equal(status.CurrentStatus))

		failed := accepted(ctx, ep, "demo:fail")
		kubectlWait(ctx, `--for=jsonpath={.status.conditions[?(@.type=="Succeeded")].status}`, "agentrun/"+failed)
		Expect(kubectlJSONPath(ctx, "agentrun/"+failed, `{.status.conditions[?(@.type=="Succeeded")].status}`)).To(Equal("False"))
		kubectlWait(ctx, "--for=condition=Stalled", "agentrun/"+failed)
		Expect(kstatusOf(ctx, "AgentRun", failed)).To(Equal(status.FailedStatus))
	})

	It("installs the Argo CD health checks and actions with the documented kubectl patch of argocd-cm", func(ctx SpecContext) {
		Expect(cluster.AdminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argocd"}})).To(Succeed())
		Expect(cluster.AdminClient.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "argocd-cm"},
			Data:       map[string]string{"url": "https://argocd.example.com"},
		})).To(Succeed())
		dir := filepath.Join(testenv.Root(), "charts", "hookrun", "argocd")
		out, err := kubectlAs(ctx, cluster.Kubeconfig("admin"), "-n", "argocd", "patch", "configmap", "argocd-cm",
			"--patch-file", filepath.Join(dir, "argocd-cm-patch.yaml"))
		Expect(err).NotTo(HaveOccurred(), out)
		script, err := os.ReadFile(filepath.Join(dir, "health.lua"))
		Expect(err).NotTo(HaveOccurred())
		cm := &corev1.ConfigMap{}
		Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: "argocd", Name: "argocd-cm"}, cm)).To(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("url", "https://argocd.example.com"))
		for _, kind := range []string{"Agent", "WebhookEndpoint", "AgentThread", "AgentRun"} {
			Expect(cm.Data).To(HaveKeyWithValue("resource.customizations.health.agents.hookrun.dev_"+kind, string(script)))
		}
		// The resource actions of WebhookEndpoint (pause, resume, rotate).
		Expect(cm.Data).To(HaveKeyWithValue("resource.customizations.actions.agents.hookrun.dev_WebhookEndpoint",
			And(ContainSubstring("discovery.lua: |"), ContainSubstring("- name: rotate"))))
	})
})

// kubectlWait runs kubectl wait in the sample namespace as the developer
// and expects it to succeed within a minute.
func kubectlWait(ctx context.Context, args ...string) {
	GinkgoHelper()
	out, err := kubectl(ctx, append([]string{"wait", "-n", ns, "--timeout=60s"}, args...)...)
	Expect(err).NotTo(HaveOccurred(), out)
}

// kubectlJSONPath prints a field of resource in the sample namespace.
func kubectlJSONPath(ctx context.Context, resource, path string) string {
	GinkgoHelper()
	out, err := kubectl(ctx, "get", "-n", ns, resource, "-o", "jsonpath="+path)
	Expect(err).NotTo(HaveOccurred(), out)
	return strings.TrimSpace(out)
}

// kubectlAs runs the control plane's kubectl with kubeconfig.
func kubectlAs(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, cluster.Kubectl(), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// kstatusOf is what kstatus (Flux's health checks) computes for an object
// of the sample namespace as the API server has it now.
func kstatusOf(ctx context.Context, kind, name string) status.Status {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(agentsv1alpha1.GroupVersion.WithKind(kind))
	Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	res, err := status.Compute(u)
	Expect(err).NotTo(HaveOccurred())
	return res.Status
}
