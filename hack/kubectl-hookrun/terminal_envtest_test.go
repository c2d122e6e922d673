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

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal/terminaltest"
)

// The plugin's commands, run against a real API server, print an owner, a
// run's message and output and a condition's message that carry terminal
// escapes (OSC 52 to set the clipboard, CSI to clear the screen, a C1 CSI,
// a bidi override) with every control escaped; -o json|yaml give the values
// back unchanged.
func TestCommandsEscapeWhatUsersAndSendersWrote(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, or `make control-plane` and export KUBEBUILDER_ASSETS=$PWD/bin/k8s/<version>")
	}
	testEnv := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := testEnv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testEnv.Stop() })
	admin, err := testEnv.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: cli.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "plugin-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}

	owner := "mallory" + terminaltest.OSC52 + terminaltest.RTLOverride
	message := "failed " + terminaltest.OSC52 + terminaltest.CSIClear + terminaltest.C1CSI + terminaltest.RTLOverride + "\nsecond line"
	output := "answer\n" + terminaltest.CSIClear + terminaltest.ZeroWidth + "hidden\ttabbed"
	ep := &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "hooks"},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "p",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun, AllowUnauthenticated: true,
			Owner: &agentsv1alpha1.Owner{User: owner},
		},
	}
	if err := c.Create(ctx, ep); err != nil {
		t.Fatal(err)
	}
	ep.Status = agentsv1alpha1.WebhookEndpointStatus{
		Phase: agentsv1alpha1.EndpointPaused, PauseReason: agentsv1alpha1.PauseReasonOwnerNotMember,
		AuthMode: agentsv1alpha1.AuthNone, URL: "https://hooks.example.com/api/webhooks/x/receive",
		Conditions: []metav1.Condition{{
			Type: agentsv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: agentsv1alpha1.ReasonOwnerNotMember,
			Message: "owner " + owner + " left", LastTransitionTime: metav1.Now(),
		}},
		// A filter's error may quote a key the body chose.
		Rejections: &agentsv1alpha1.EndpointRejections{
			Since:  metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Hour)),
			Counts: []agentsv1alpha1.RejectionCount{{Code: "filter_error", Count: 3}},
			LastEvaluationError: &agentsv1alpha1.EvaluationError{Expression: agentsv1alpha1.ExpressionFilter,
				Message: "no such key: " + terminaltest.OSC52, Time: metav1.NewTime(time.Now().Add(-2 * time.Minute).Truncate(time.Second))},
		},
	}
	if err := c.Status().Update(ctx, ep); err != nil {
		t.Fatal(err)
	}
	stored := &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "hooks-1", Labels: map[string]string{
			agentsv1alpha1.LabelEndpoint: "hooks", agentsv1alpha1.LabelAgent: "triage",
		}},
		Spec: agentsv1alpha1.AgentRunSpec{
			EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "hooks"}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
			Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun, Owner: &agentsv1alpha1.Owner{User: owner},
			ReceivedAt: metav1.NewTime(time.Now().Add(-time.Minute)),
		},
	}
	if err := c.Create(ctx, stored); err != nil {
		t.Fatal(err)
	}
	completed := metav1.Now()
	stored.Status = agentsv1alpha1.AgentRunStatus{State: agentsv1alpha1.RunError, Message: message, Output: output, CompletedAt: &completed}
	if err := c.Status().Update(ctx, stored); err != nil {
		t.Fatal(err)
	}

	plugin := func(args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		run(ctx, append([]string{"--kubeconfig", kubeconfigPath, "-n", ns.Name}, args...), &out, &errOut)
		for name, s := range map[string]string{"output": out.String(), "error output": errOut.String()} {
			if c := terminaltest.RawControl(s); c != "" {
				t.Errorf("kubectl hookrun %s: its %s holds a control or bidi character raw: %q\n%s", strings.Join(args, " "), name, c, s)
			}
		}
		return out.String(), errOut.String()
	}
	escapedOSC52 := `\u001b]52;c;cm0gLXJmIH4=\u0007`

	if out, _ := plugin("endpoints"); !strings.Contains(out, "hooks") {
		t.Errorf("endpoints:\n%s", out)
	}
	card, _ := plugin("show", "hooks")
	for _, want := range []string{"Owner:", "mallory" + escapedOSC52 + `\u202e`, "owner mallory" + escapedOSC52, "failed " + escapedOSC52,
		"Refused:", "filter_error 3", "Last filter error:", "no such key: " + escapedOSC52 + " ("} {
		if !strings.Contains(card, want) {
			t.Errorf("show does not print %q:\n%s", want, card)
		}
	}
	if out, _ := plugin("runs"); !strings.Contains(out, "failed "+escapedOSC52+`\u001b[2J`) {
		t.Errorf("runs:\n%s", out)
	}
	if _, errOut := plugin("resume", "hooks"); !strings.Contains(errOut, "its owner (mallory"+escapedOSC52) {
		t.Errorf("resume of an endpoint whose owner left:\n%s", errOut)
	}
	for _, format := range []string{"json", "yaml"} {
		out, _ := plugin("runs", "hooks", "-o", format)
		list := &agentsv1alpha1.AgentRunList{}
		var err error
		if format == "json" {
			err = json.Unmarshal([]byte(out), list)
		} else {
			err = yaml.Unmarshal([]byte(out), list)
		}
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("runs -o %s: %v\n%s", format, err, out)
		}
		if got := list.Items[0]; got.Status.Message != message || got.Status.Output != output || got.Spec.Owner.User != owner {
			t.Errorf("runs -o %s changed the values: %q, %q, %q", format, got.Status.Message, got.Status.Output, got.Spec.Owner.User)
		}
		plugin("show", "hooks", "-o", format)
	}
}
