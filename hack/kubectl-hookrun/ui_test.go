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
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal/terminaltest"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/ui"
)

// The UI's pages show what users, senders and agents wrote as text: markup
// is escaped (html/template), and so are the controls, bidirectional and
// invisible characters the commands escape for a terminal.
func TestUIPagesEscapeWhatUsersSendersAndAgentsWrote(t *testing.T) {
	const markup = "<script>alert(1)</script>"
	const img = `<img src=x onerror="alert(2)">`
	now := time.Now()
	c := fake.NewClientBuilder().WithScheme(cli.Scheme).WithObjects(
		&agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "triage"},
			Spec: agentsv1alpha1.AgentSpec{DisplayName: markup + terminaltest.RTLOverride}},
		&agentsv1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hooks"},
			Spec: agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
				Prompt: markup, AllowUnauthenticated: true},
			Status: agentsv1alpha1.WebhookEndpointStatus{
				AuthMode: agentsv1alpha1.AuthNone, URL: "https://hooks.example.com/api/webhooks/x/receive",
				Conditions: []metav1.Condition{{Type: agentsv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
					Reason: agentsv1alpha1.ReasonOwnerNotMember, Message: "owner " + img + terminaltest.OSC52 + " left"}},
				Rejections: &agentsv1alpha1.EndpointRejections{LastEvaluationError: &agentsv1alpha1.EvaluationError{
					Expression: agentsv1alpha1.ExpressionFilter, Message: "no such key: " + markup + terminaltest.OSC52}},
			},
		},
		&agentsv1alpha1.AgentRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hooks-1", Labels: map[string]string{
				agentsv1alpha1.LabelEndpoint: "hooks", agentsv1alpha1.LabelAgent: "triage"}},
			Spec: agentsv1alpha1.AgentRunSpec{EndpointRef: agentsv1alpha1.LocalObjectReference{Name: "hooks"},
				AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "</pre>" + markup,
				ReceivedAt: metav1.NewTime(now.Add(-time.Minute)),
				Payload:    &agentsv1alpha1.PayloadReference{SecretName: "hooks-1-payload", ContentType: "application/json"}},
			Status: agentsv1alpha1.AgentRunStatus{State: agentsv1alpha1.RunError, Message: "failed " + img + terminaltest.OSC52 + terminaltest.C1CSI,
				Output: "answer\n" + markup + terminaltest.CSIClear + terminaltest.ZeroWidth},
		},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hooks-1-payload"},
			Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: []byte(`{"title":"` + markup + `\u001b]52;c;x\u0007"}`)}},
	).WithStatusSubresource(&agentsv1alpha1.WebhookEndpoint{}, &agentsv1alpha1.AgentRun{}).Build()
	page := fakeUI(t, c).page
	for path, wants := range map[string][]string{
		"/namespaces/team/agents": {"&lt;script&gt;alert(1)&lt;/script&gt;\\u202e"},
		"/namespaces/team/agents/triage": {"&lt;script&gt;alert(1)&lt;/script&gt;\\u202e", "failed &lt;img src=x onerror=&#34;alert(2)&#34;&gt;\\u001b]52;",
			"owner &lt;img", "no such key: &lt;script&gt;alert(1)&lt;/script&gt;\\u001b]52;c;"},
		"/namespaces/team/runs/hooks-1": {"answer\n&lt;script&gt;alert(1)&lt;/script&gt;\\u001b[2J", "&lt;/pre&gt;&lt;script&gt;",
			"failed &lt;img", `&#34;title&#34;: &#34;&lt;script&gt;alert(1)&lt;/script&gt;\u001b]52;c;x\u0007&#34;`},
	} {
		body := page(path)
		for _, want := range wants {
			if !strings.Contains(body, want) {
				t.Errorf("%s does not show %q:\n%s", path, want, body)
			}
		}
		for _, raw := range []string{markup, "<img", "onerror=\"", "</pre><script"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s holds %q as markup", path, raw)
			}
		}
		if c := terminaltest.RawControl(body); c != "" {
			t.Errorf("%s holds a control or bidi character raw: %q", path, c)
		}
	}
}

// uiOverFake is the UI served over a fake client as the plugin serves it,
// with a browser signed in.
type uiOverFake struct {
	t       *testing.T
	s       *ui.Server
	browser *http.Client
}

func fakeUI(t *testing.T, c client.WithWatch) *uiOverFake {
	t.Helper()
	e := cli.NewEnv(io.Discard, io.Discard)
	e.Client = c
	ts := httptest.NewUnstartedServer(nil)
	s, err := ui.New(ts.Listener.Addr().String(), ui.Options{Plugin: uiPlugin{e: e}, Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &uiOverFake{t: t, s: s, browser: &http.Client{Jar: jar}}
}

// page GETs path, which must answer 200.
func (u *uiOverFake) page(path string) string {
	u.t.Helper()
	resp, body := u.send(http.MethodGet, path, nil)
	if resp.StatusCode != http.StatusOK {
		u.t.Fatalf("%s: %s\n%s", path, resp.Status, body)
	}
	return body
}

// send sends a request as the UI's own page would.
func (u *uiOverFake) send(method, path string, form url.Values) (*http.Response, string) {
	u.t.Helper()
	target := strings.Replace(u.s.URL(), "/?", path+"?", 1)
	if method != http.MethodGet {
		// Sign in first, then post with the cookie and this Origin.
		u.page("/namespaces/team/agents")
		target = target[:strings.Index(target, "?")]
	}
	req, err := http.NewRequest(method, target, strings.NewReader(form.Encode()))
	if err != nil {
		u.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://"+req.URL.Host)
	resp, err := u.browser.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		u.t.Fatal(err)
	}
	return resp, string(b)
}
