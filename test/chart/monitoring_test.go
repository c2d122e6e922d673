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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const (
	prometheusRuleKey = "monitoring.coreos.com/v1/PrometheusRule/" + release + "/hookrun"
	dashboardKey      = "v1/ConfigMap/" + release + "/hookrun-dashboard"
)

// promtool runs the pinned promtool (make test sets PROMTOOL) and returns
// its output.
func promtool(t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv("PROMTOOL")
	if bin == "" {
		t.Fatal("PROMTOOL is not set: run `make test`, which installs the pinned promtool into bin/")
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// writeRules writes the groups of a rendered PrometheusRule as a Prometheus
// rule file (JSON is YAML) in dir.
func writeRules(t *testing.T, rule *unstructured.Unstructured, dir string) string {
	t.Helper()
	if rule == nil {
		t.Fatal("no PrometheusRule rendered")
	}
	data, err := json.Marshal(rule.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// The alerts pass promtool's checks and unit tests (testdata/alerts_test.yaml),
// which have, for every alert, a case where it fires and one where it does
// not.
func TestChartAlerts(t *testing.T) {
	g := NewWithT(t)
	g.Expect(render(t)).NotTo(HaveKey(prometheusRuleKey), "off by default")
	dir := t.TempDir()
	rules := writeRules(t, render(t, "--set", "prometheusRule.enabled=true")[prometheusRuleKey], dir)
	promtool(t, "check", "rules", "--lint=all", "--lint-fatal", rules)
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts_test.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o600)).To(Succeed())
	promtool(t, "test", "rules", filepath.Join(dir, "alerts_test.yaml"))

	fires, quiet := testedAlerts(t, tests)
	for _, alert := range alertNames(t, rules) {
		g.Expect(fires).To(HaveKey(alert), "no test where %s fires", alert)
		g.Expect(quiet).To(HaveKey(alert), "no test where %s does not fire", alert)
	}
}

// alertNames are the alerts of a rule file.
func alertNames(t *testing.T, file string) []string {
	t.Helper()
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
			} `json:"rules"`
		} `json:"groups"`
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rules); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				names = append(names, r.Alert)
			}
		}
	}
	if len(names) < 8 {
		t.Fatalf("only %d alerts in %s", len(names), file)
	}
	return names
}

// testedAlerts are the alerts of promtool tests that expect them to fire,
// and those expected not to at some time.
func testedAlerts(t *testing.T, tests []byte) (fires, quiet map[string]bool) {
	t.Helper()
	var file struct {
		Tests []struct {
			AlertRuleTest []struct {
				AlertName string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := utilyaml.Unmarshal(tests, &file); err != nil {
		t.Fatal(err)
	}
	fires, quiet = map[string]bool{}, map[string]bool{}
	for _, test := range file.Tests {
		for _, c := range test.AlertRuleTest {
			if len(c.ExpAlerts) > 0 {
				fires[c.AlertName] = true
			} else {
				quiet[c.AlertName] = true
			}
		}
	}
	return fires, quiet
}

// The PrometheusRule's values: its labels, labels on every alert, the
// thresholds, and the backlog cap taken from the receiver's.
func TestChartAlertValues(t *testing.T) {
	g := NewWithT(t)
	rule := render(t, "--set", "prometheusRule.enabled=true", "--set", "prometheusRule.labels.release=prometheus",
		"--set", "prometheusRule.alertLabels.team=platform", "--set-json", "prometheusRule.backlogRatio=0.5",
		"--set", "receiver.maxQueuedRunsPerAgent=40", "--set-json", "prometheusRule.runErrorRatio=0.1",
		"--set-json", "prometheusRule.receiverErrorRatio=0.01")[prometheusRuleKey]
	g.Expect(rule).NotTo(BeNil())
	g.Expect(rule.GetLabels()).To(HaveKeyWithValue("release", "prometheus"))
	var prometheusRule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert  string            `json:"alert"`
					Expr   string            `json:"expr"`
					Labels map[string]string `json:"labels"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(rule.Object, &prometheusRule)).To(Succeed())
	spec := prometheusRule.Spec
	g.Expect(spec.Groups).To(HaveLen(1))
	exprs := map[string]string{}
	for _, r := range spec.Groups[0].Rules {
		g.Expect(r.Labels).To(HaveKeyWithValue("team", "platform"), "%s", r.Alert)
		exprs[r.Alert] = r.Expr
	}
	g.Expect(exprs["HookrunBacklogNearCap"]).To(HaveSuffix("> 0.5 * 40"))
	g.Expect(exprs["HookrunRunsFailing"]).To(HaveSuffix("> 0.1"))
	g.Expect(exprs["HookrunReceiverErrors"]).To(HaveSuffix("> 0.01"))
}

// The dashboard is JSON Grafana reads, in a ConfigMap its sidecar loads, and
// every query in it is PromQL that parses.
func TestChartDashboard(t *testing.T) {
	g := NewWithT(t)
	g.Expect(render(t)).NotTo(HaveKey(dashboardKey), "off by default")
	cm := render(t, "--set", "grafanaDashboard.enabled=true", "--set", "grafanaDashboard.annotations.grafana_folder=hookrun")[dashboardKey]
	g.Expect(cm).NotTo(BeNil())
	g.Expect(cm.GetLabels()).To(HaveKeyWithValue("grafana_dashboard", "1"))
	g.Expect(cm.GetAnnotations()).To(Equal(map[string]string{"grafana_folder": "hookrun"}))
	text, _, err := unstructured.NestedString(cm.Object, "data", "hookrun.json")
	g.Expect(err).NotTo(HaveOccurred())
	var dashboard struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	g.Expect(json.Unmarshal([]byte(text), &dashboard)).To(Succeed())
	g.Expect(dashboard.UID).To(Equal("hookrun"))

	// Each query becomes a recording rule, with Grafana's variables
	// replaced, for promtool to parse.
	grafana := strings.NewReplacer("$__rate_interval", "5m", "$operator", "hookrun-operator-metrics",
		"$receiver", "hookrun-receiver-metrics", "$agent_namespace", ".*")
	var recording []map[string]string
	for _, p := range dashboard.Panels {
		for i, target := range p.Targets {
			g.Expect(target.Expr).NotTo(BeEmpty())
			recording = append(recording, map[string]string{
				"record": fmt.Sprintf("dashboard:panel_%d_%d", len(recording), i), "expr": grafana.Replace(target.Expr)})
		}
	}
	g.Expect(len(recording)).To(BeNumerically(">=", 12))
	data, err := json.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": recording}}})
	g.Expect(err).NotTo(HaveOccurred())
	file := filepath.Join(t.TempDir(), "dashboard.yaml")
	g.Expect(os.WriteFile(file, data, 0o600)).To(Succeed())
	promtool(t, "check", "rules", file)
}

// The ServiceMonitors honor the namespace of hookrun's series and select
// one metrics Service each, whose name (Prometheus' job) the alerts select.
func TestChartServiceMonitors(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, "--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true")
	rules, err := json.Marshal(objs[prometheusRuleKey].Object["spec"])
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range []string{"operator", "receiver"} {
		sm := objs["monitoring.coreos.com/v1/ServiceMonitor/"+release+"/hookrun-"+c]
		g.Expect(sm).NotTo(BeNil())
		g.Expect(sm.Object["spec"]).NotTo(HaveKey("jobLabel"), "job is the Service's name")
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		g.Expect(endpoints).To(ConsistOf(HaveKeyWithValue("honorLabels", true)))
		selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		var selected []string
		for _, o := range objs {
			if o.GetKind() == "Service" && matches(selector, o.GetLabels()) {
				selected = append(selected, o.GetName())
			}
		}
		g.Expect(selected).To(Equal([]string{"hookrun-" + c + "-metrics"}))
		g.Expect(string(rules)).To(ContainSubstring(`job=\"hookrun-` + c + `-metrics\"`))
	}
}

// matches tells whether labels has every label of selector.
func matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
