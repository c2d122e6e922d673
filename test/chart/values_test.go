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
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hookrun/hookrun/controllers"
	"github.com/hookrun/hookrun/controllers/sharedflags"
	"github.com/hookrun/hookrun/receiver"
	"github.com/hookrun/hookrun/test/testenv"
)

// render is helm template of the chart in the release namespace with a
// publicBaseURL and args, by apiVersion/kind/namespace/name.
func render(t *testing.T, args ...string) map[string]*unstructured.Unstructured {
	t.Helper()
	return objects(t, helm(t, append([]string{"template", "hookrun", filepath.Join(testenv.Root(), "charts", "hookrun"),
		"--namespace", release, "--set", "publicBaseURL=https://hooks.example.com"}, args...)...))
}

// valuesFile writes values to a file for helm -f.
func valuesFile(t *testing.T, values string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func deploymentKey(component string) string {
	return "apps/v1/Deployment/" + release + "/hookrun-" + component
}

// podSpec is a rendered Deployment's pod template spec.
func podSpec(g Gomega, objs map[string]*unstructured.Unstructured, component string) map[string]any {
	g.Expect(objs).To(HaveKey(deploymentKey(component)))
	spec, _, err := unstructured.NestedMap(objs[deploymentKey(component)].Object, "spec", "template", "spec")
	g.Expect(err).NotTo(HaveOccurred())
	return spec
}

// The pod settings of each component: labels, annotations, priority class,
// topology spread, extra flags and environment, security contexts and the
// service account's annotations.
func TestChartPodValues(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, "-f", podValues(t))
	defaults := render(t)
	for _, c := range []string{"operator", "receiver"} {
		checkPodValues(g, objs, defaults, c)
	}

	// extraArgs come after the chart's flags, so one given again wins.
	operatorArgs, _, _ := unstructured.NestedStringSlice(onlyContainer(g, objs[deploymentKey("operator")]), "args")
	g.Expect(operatorArgs[len(operatorArgs)-2:]).To(Equal([]string{"--kube-api-qps=200", "--zap-log-level=debug"}))
	shared := sharedflags.NewOptions()
	parseArgs(g, operatorArgs, controllers.NewOperatorOptions().BindFlags, sharedFlags(shared, "operator"))
	g.Expect(shared.KubeAPIQPS).To(BeNumerically("==", 200))
	receiverArgs, _, _ := unstructured.NestedStringSlice(onlyContainer(g, objs[deploymentKey("receiver")]), "args")
	shared = sharedflags.NewOptions()
	parseArgs(g, receiverArgs, receiver.NewOptions().BindFlags, sharedFlags(shared, "receiver"))
	g.Expect(shared.KubeAPIQPS).To(BeNumerically("==", 200))
	g.Expect(receiverArgs).To(ContainElements("--zap-log-level=info", "--zap-log-level=debug"))
	g.Expect(receiverArgs[len(receiverArgs)-1]).To(Equal("--zap-log-level=debug"))

	// The schema refuses a flag split from its value.
	out, err := helmCommand(t, "template", "hookrun", filepath.Join(testenv.Root(), "charts", "hookrun"),
		"--set", "publicBaseURL=https://hooks.example.com", "--set-json", `operator.extraArgs=["--kube-api-qps","200"]`).CombinedOutput()
	g.Expect(err).To(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("does not match pattern"))
}

// checkPodValues checks a component's pod and service account rendered with
// podValues against the defaults.
func checkPodValues(g Gomega, objs, defaults map[string]*unstructured.Unstructured, c string) {
	meta, _, _ := unstructured.NestedMap(objs[deploymentKey(c)].Object, "spec", "template", "metadata")
	g.Expect(meta["labels"]).To(Equal(map[string]any{"team": "platform", "app.kubernetes.io/component": c,
		"app.kubernetes.io/name": "hookrun", "app.kubernetes.io/instance": "hookrun"}), "podLabels cannot change the selector labels")
	g.Expect(meta["annotations"]).To(Equal(map[string]any{"example.com/scrape": "yes"}))

	spec := podSpec(g, objs, c)
	g.Expect(spec["priorityClassName"]).To(Equal("system-cluster-critical"))
	g.Expect(podSpec(g, defaults, c)).NotTo(HaveKey("priorityClassName"))
	g.Expect(podSpec(g, defaults, c)).NotTo(HaveKey("topologySpreadConstraints"))
	selector := map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "hookrun",
		"app.kubernetes.io/instance": "hookrun", "app.kubernetes.io/component": c}}
	g.Expect(spec["topologySpreadConstraints"]).To(Equal([]any{
		map[string]any{"maxSkew": int64(1), "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
			"labelSelector": selector},
		map[string]any{"maxSkew": int64(2), "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
			"labelSelector": map[string]any{"matchLabels": map[string]any{"team": "platform"}}},
	}), "a constraint without labelSelector counts the component's pods")

	g.Expect(spec["securityContext"]).To(Equal(map[string]any{"runAsNonRoot": true, "runAsUser": int64(1000),
		"fsGroup": int64(2000), "seccompProfile": map[string]any{"type": "RuntimeDefault"}}), "merged into the defaults; null drops a key")
	g.Expect(podSpec(g, defaults, c)["securityContext"]).To(Equal(map[string]any{"runAsNonRoot": true, "runAsUser": int64(65532),
		"runAsGroup": int64(65532), "seccompProfile": map[string]any{"type": "RuntimeDefault"}}))
	container := onlyContainer(g, objs[deploymentKey(c)])
	g.Expect(container["securityContext"]).To(Equal(map[string]any{"allowPrivilegeEscalation": false,
		"readOnlyRootFilesystem": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}))
	g.Expect(container["env"]).To(ContainElement(Equal(map[string]any{"name": "HTTPS_PROXY", "value": "http://proxy.example.com:3128"})))
	g.Expect(container["env"]).To(ContainElement(HaveKeyWithValue("name", "POD_NAMESPACE")), "after the chart's own")

	sa := objs["v1/ServiceAccount/"+release+"/hookrun-"+c]
	g.Expect(sa).NotTo(BeNil())
	g.Expect(sa.GetAnnotations()).To(Equal(map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/hookrun"}))
	g.Expect(defaults["v1/ServiceAccount/"+release+"/hookrun-"+c].GetAnnotations()).To(BeEmpty())
}

// podValues writes a values file that sets every pod value of both
// components.
func podValues(t *testing.T) string {
	t.Helper()
	var values strings.Builder
	for _, c := range []string{"operator", "receiver"} {
		values.WriteString(c + `:
  podLabels: {team: platform, app.kubernetes.io/component: not-the-selector}
  podAnnotations: {example.com/scrape: "yes"}
  priorityClassName: system-cluster-critical
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
  - {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {team: platform}}}
  extraArgs: ["--kube-api-qps=200", "--zap-log-level=debug"]
  extraEnv:
  - {name: HTTPS_PROXY, value: "http://proxy.example.com:3128"}
  securityContext: {runAsUser: 1000, runAsGroup: null, fsGroup: 2000}
  containerSecurityContext: {readOnlyRootFilesystem: false}
  serviceAccount:
    annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::111122223333:role/hookrun"}
`)
	}
	return valuesFile(t, values.String())
}

// sharedFlags binds o's flags as main does for component's subcommand.
func sharedFlags(o *sharedflags.Options, component string) func(*pflag.FlagSet) {
	return func(fs *pflag.FlagSet) { o.BindFlags(fs, component, "") }
}

// parseArgs parses a rendered container's args (after the subcommand) with
// the component's flags (its own and the shared ones), as it would at start.
func parseArgs(g Gomega, args []string, binds ...func(*pflag.FlagSet)) {
	fs := pflag.NewFlagSet("component", pflag.ContinueOnError)
	for _, bind := range binds {
		bind(fs)
	}
	fs.ParseErrorsAllowlist.UnknownFlags = true // --zap-log-level is bound by main
	g.Expect(fs.Parse(args[1:])).To(Succeed())
}

// fullnameOverride renames the objects of the operator and the receiver,
// and everything that refers to them follows; hookrun's API (the roles for
// people, the policies, the CRDs) keeps its names.
func TestChartFullnameOverride(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, "--set", "fullnameOverride=acme", "--set", "receiver.ingress.enabled=true",
		"--set", "receiver.autoscaling.enabled=true", "--set", "receiver.networkPolicy.enabled=true",
		"--set", "operator.networkPolicy.enabled=true", "--set", "serviceMonitor.enabled=true",
		"--set", "prometheusRule.enabled=true", "--set", "grafanaDashboard.enabled=true")
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
		g.Expect(o.GetName()).NotTo(HavePrefix("hookrun-operator"), o.GetKind())
		g.Expect(o.GetName()).NotTo(HavePrefix("hookrun-receiver"), o.GetKind())
	}
	g.Expect(names).To(ContainElements("Deployment/acme-operator", "Deployment/acme-receiver", "ServiceAccount/acme-operator",
		"ServiceAccount/acme-receiver", "Service/acme-receiver", "Service/acme-receiver-metrics", "Service/acme-operator-metrics",
		"ClusterRole/acme-operator", "Role/acme-receiver", "ClusterRoleBinding/acme-receiver", "Ingress/acme-receiver",
		"HorizontalPodAutoscaler/acme-receiver", "NetworkPolicy/acme-operator", "ServiceMonitor/acme-operator",
		"PrometheusRule/acme", "ConfigMap/acme-dashboard",
		"ClusterRole/hookrun-agent-user", "ClusterRole/hookrun-edit", "ValidatingAdmissionPolicy/hookrun-endpoint-ownership",
		"CustomResourceDefinition/webhookendpoints.agents.hookrun.dev"))
	references(g, objs)
	references(g, render(t))
	references(g, render(t, "--set", "admission.ownerDefaulting=Policy"))
}

// references checks that what the rendered objects name exists among them:
// the bindings' roles and service accounts, the Deployments' service
// accounts, the backends of Ingress and HPA, and the service accounts the
// admission policies exempt.
func references(g Gomega, objs map[string]*unstructured.Unstructured) {
	has := func(kind, ns, name string) bool {
		for _, o := range objs {
			if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
				return true
			}
		}
		return false
	}
	for _, o := range objs {
		var refs struct {
			RoleRef  rbacv1.RoleRef   `json:"roleRef"`
			Subjects []rbacv1.Subject `json:"subjects"`
			Spec     struct {
				Template       corev1.PodTemplateSpec                    `json:"template"`
				ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`
				Rules          []networkingv1.IngressRule                `json:"rules"`
				Variables      []admissionregistrationv1.Variable        `json:"variables"`
			} `json:"spec"`
		}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &refs)).To(Succeed())
		switch o.GetKind() {
		case "RoleBinding", "ClusterRoleBinding":
			ns := ""
			if refs.RoleRef.Kind == "Role" {
				ns = o.GetNamespace()
			}
			g.Expect(has(refs.RoleRef.Kind, ns, refs.RoleRef.Name)).To(BeTrue(), "%s %s binds %v", o.GetKind(), o.GetName(), refs.RoleRef)
			for _, s := range refs.Subjects {
				if s.Kind == rbacv1.ServiceAccountKind {
					g.Expect(has("ServiceAccount", s.Namespace, s.Name)).To(BeTrue(), "%s %s: %v", o.GetKind(), o.GetName(), s)
				}
			}
		case "Deployment":
			sa := refs.Spec.Template.Spec.ServiceAccountName
			g.Expect(has("ServiceAccount", o.GetNamespace(), sa)).To(BeTrue(), "Deployment %s runs as %s", o.GetName(), sa)
		case "HorizontalPodAutoscaler":
			g.Expect(has("Deployment", o.GetNamespace(), refs.Spec.ScaleTargetRef.Name)).To(BeTrue())
		case "Ingress":
			backend := refs.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name
			g.Expect(has("Service", o.GetNamespace(), backend)).To(BeTrue())
		case "ValidatingAdmissionPolicy", "MutatingAdmissionPolicy":
			for _, v := range refs.Spec.Variables {
				for _, sa := range serviceAccountsIn(v.Expression) {
					parts := strings.Split(sa, ":") // system:serviceaccount:NS:NAME
					g.Expect(has("ServiceAccount", parts[2], parts[3])).To(BeTrue(), "%s %s names %s", o.GetKind(), o.GetName(), sa)
				}
			}
		}
	}
}

// serviceAccountsIn finds system:serviceaccount:NS:NAME in a CEL expression.
func serviceAccountsIn(expr string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(expr, func(r rune) bool { return strings.ContainsRune(`"', []`, r) }) {
		if strings.HasPrefix(f, "system:serviceaccount:") && strings.Count(f, ":") == 3 {
			out = append(out, f)
		}
	}
	return out
}
