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
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/test/testenv"
)

// OIDC senders against the whole system: the sample CronJob's script, run
// as its Pod would with the token the kubelet would mount, and the sample
// GitHub Actions endpoint on a cluster whose receiver trusts no other
// issuer.
var _ = Describe("OIDC senders", Ordered, func() {
	samples := filepath.Join(testenv.Root(), "config", "samples", "senders", "oidc")
	var cronJob *batchv1.CronJob

	// projectedToken is what the kubelet mounts for the sample CronJob's
	// Pod: a token of account for the projected volume's audience.
	projectedToken := func(ctx context.Context, account string) string {
		GinkgoHelper()
		source := cronJob.Spec.JobTemplate.Spec.Template.Spec.Volumes[0].Projected.Sources[0].ServiceAccountToken
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			Audiences: []string{source.Audience}, ExpirationSeconds: source.ExpirationSeconds,
		}}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: account}}
		Expect(client.IgnoreAlreadyExists(cluster.AdminClient.Create(ctx, sa))).To(Succeed())
		Expect(cluster.AdminClient.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
		return tr.Status.Token
	}

	BeforeAll(func(ctx SpecContext) {
		pluginBinary = thePlugin(ctx)
		Expect(clusterinstall.ApplyIn(ctx, developer(), ns, filepath.Join(samples, "cronjob.yaml"), filepath.Join(samples, "github-actions.yaml"))).To(Succeed())
		raw, err := os.ReadFile(filepath.Join(samples, "cronjob.yaml"))
		Expect(err).NotTo(HaveOccurred())
		docs := strings.Split(string(raw), "\n---\n")
		cronJob = &batchv1.CronJob{}
		Expect(yaml.UnmarshalStrict([]byte(docs[len(docs)-1]), cronJob)).To(Succeed())
	})

	It("runs the sample CronJob's script with its account's projected token: one run per Job, the account named in the run", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			st := endpointStatus(ctx, "nightly-report")
			g.Expect(st.AuthMode).To(Equal(agentsv1alpha1.AuthOIDC))
			g.Expect(conditionStatus(st.Conditions, agentsv1alpha1.ConditionReady)).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		Expect(endpointStatus(ctx, "nightly-report").SecretHash).To(BeEmpty(), "no secret")

		tokenFile := filepath.Join(GinkgoT().TempDir(), "token")
		container := cronJob.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
		const job = "nightly-report-29390000"
		runScript := func(g Gomega, account string) string {
			g.Expect(os.WriteFile(tokenFile, []byte(projectedToken(ctx, account)), 0o600)).To(Succeed())
			cmd := exec.CommandContext(ctx, container.Command[0], container.Command[1:]...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOOKRUN_URL=" + endpointStatus(ctx, "nightly-report").URL,
				"HOOKRUN_TOKEN_FILE=" + tokenFile, "JOB_NAME=" + job}
			out, _ := cmd.CombinedOutput()
			return string(out)
		}
		var first string
		Eventually(func(g Gomega) {
			first = runScript(g, "nightly-report")
			g.Expect(first).To(ContainSubstring(`"status":"accepted"`))
		}).Should(Succeed())
		runID := strings.SplitN(strings.SplitN(first, `"runId":"`, 2)[1], `"`, 2)[0]
		Expect(runScript(Default, "nightly-report")).To(ContainSubstring(`"runId":"`+runID+`"`), "a retried Pod of the same Job is the same delivery")
		r := succeeds(ctx, runID)
		Expect(r.Spec.Sender.TokenSubject).To(Equal("system:serviceaccount:" + ns + ":nightly-report"))

		Expect(runScript(Default, "default")).To(ContainSubstring(`"code":"forbidden"`), "another account of the namespace: the claims refuse it")
	})

	It("says on the card that calls carry tokens, and how to get one for a sample call", func(ctx SpecContext) {
		r := runPlugin(ctx, "--kubeconfig", cluster.DeveloperKubeconfig, "-n", ns, "show", "nightly-report")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(MatchRegexp(`Secret:\s+none: calls carry a token of the cluster's service accounts for audience hookrun-nightly-report`))
		Expect(r.stdout).To(ContainSubstring(`-H "Authorization: Bearer ${TOKEN}"`))
		Expect(r.stdout).To(ContainSubstring("TOKEN=$(kubectl create token SERVICE-ACCOUNT -n " + ns + " --audience hookrun-nightly-report)"))

		r = runPlugin(ctx, "--kubeconfig", cluster.DeveloperKubeconfig, "-n", ns, "secret", "nightly-report")
		Expect(r.code).NotTo(Equal(0))
		Expect(r.stderr).To(ContainSubstring("has no secret: its calls carry a token"))
	})

	It("tests the endpoint with a token the API server issues for the sample's account, and refuses one of another", func(ctx SpecContext) {
		r := runPlugin(ctx, "--kubeconfig", cluster.DeveloperKubeconfig, "-n", ns, "test", "nightly-report", "--token-from", "nightly-report")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("202"))
		Expect(r.stdout).To(ContainSubstring("Demo agent received"))

		r = runPlugin(ctx, "--kubeconfig", cluster.DeveloperKubeconfig, "-n", ns, "test", "nightly-report", "--token-from", "default")
		Expect(r.code).NotTo(Equal(0))
		Expect(r.stdout + r.stderr).To(ContainSubstring("403"))

		r = runPlugin(ctx, "--kubeconfig", cluster.DeveloperKubeconfig, "-n", ns, "test", "nightly-report")
		Expect(r.code).NotTo(Equal(0))
		Expect(r.stderr).To(ContainSubstring("--token-from SERVICE-ACCOUNT"))
	})

	It("keeps the sample GitHub Actions endpoint Ready=False while the receiver does not trust GitHub's issuer", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			ep := &agentsv1alpha1.WebhookEndpoint{}
			g.Expect(cluster.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deploy-review"}, ep)).To(Succeed())
			ready := meta.FindStatusCondition(ep.Status.Conditions, agentsv1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal(agentsv1alpha1.ReasonOIDCIssuerNotAllowed))
		}).Should(Succeed())
		a := callWith(ctx, endpointStatus(ctx, "deploy-review").URL, http.Header{"Authorization": {"Bearer " + projectedToken(ctx, "nightly-report")}}, "{}")
		Expect(a.Status).To(Equal(http.StatusForbidden), a.Body)
	})
})
