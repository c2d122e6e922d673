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
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal/terminaltest"
)

const uiTestSecret = "4f1c9e0b7d2a4c55a1e3b6d8f0c2e4a6"

// In a real browser: the printed address signs in and leaves no token in
// the address or to scripts; the card and its invocations; a run's page;
// hostile text stays text and inline script does not run; pause and resume
// change the endpoint as the user; a refusal of the admission policy is
// shown as the API server wrote it; a new run and the operator's pause
// arrive without a reload.
func TestUIInABrowser(t *testing.T) {
	chromium := chromiumOrSkip(t)
	u := startUICluster(t)
	g := gomega.NewWithT(t)
	ctx := t.Context()
	ns := u.ns
	u.seed(t)
	address := u.serveUI(t, "alice")
	base := address[:strings.Index(address, "/?token=")]
	b := newBrowser(t, chromium)

	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	// The text of an element, read at once: live updates replace the cards.
	text := func(sel string) string {
		return value(t, b, "the text of "+sel, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).innerText`, sel)))
	}
	eval := func(js string) bool { return value(t, b, js, chromedp.Evaluate[bool](js)) }
	// click clicks the element as it is now (live updates replace the
	// cards, so a node found earlier may be gone) and waits for the page it
	// leads to.
	click := func(sel string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(b, 2*time.Minute)
		defer cancel()
		loaded := chromedp.Events(ctx, page.LoadEventFired)
		do(t, ctx, "click "+sel, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).click()`, sel)))
		for _, err := range loaded {
			if err != nil {
				t.Fatalf("after a click on %s: %v", sel, err)
			}
			break
		}
	}

	do(t, b, "the UI without the token", chromedp.Navigate(base+"/namespaces/"+ns+"/agents"))
	g.Expect(text("body")).To(gomega.ContainSubstring("Not signed in"))

	do(t, b, "the printed address", chromedp.Navigate(address), chromedp.WaitVisible(css("table.list")))
	g.Expect(value(t, b, "the address", chromedp.Location())).To(gomega.Equal(base+"/namespaces/"+ns+"/agents"), "the token is dropped from the address")
	g.Expect(value(t, b, "cookies", chromedp.Evaluate[string](`document.cookie`))).To(gomega.BeEmpty(), "the token's cookie is HttpOnly")

	click(`a[href$="/agents/triage"]`)
	do(t, b, "the Agent's Invocations tab", chromedp.WaitVisible(css("#endpoint-hooks")),
		waitFor(`document.getElementById("live").dataset.state === "live"`))
	card := text("#endpoint-hooks .facts")
	for _, want := range []string{"https://hooks.example.com/api/webhooks/", "Secret header", "12 total, 1 queued or running"} {
		g.Expect(card).To(gomega.ContainSubstring(want))
	}
	runs := value(t, b, "the runs", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#endpoint-hooks tr[data-run]")).map(r => r.dataset.run).join(",")`))
	g.Expect(runs).To(gomega.HavePrefix("hooks-12,hooks-11,hooks-10"), "newest first")
	g.Expect(text("#curl-hooks")).To(gomega.ContainSubstring(uiTestSecret))
	g.Expect(text("#endpoint-deploys .facts")).To(gomega.ContainSubstring("no such key: environment"))
	screenshot(t, b, "invocations")

	// The copy button puts the sample call on the clipboard (allowed to
	// this origin, in a page that has the focus as a visible one would).
	for _, perm := range []string{"clipboard-read", "clipboard-write"} {
		do(t, b, "allow "+perm, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: perm}, Setting: browser.PermissionSettingGranted, Origin: base})
			return err
		}))
	}
	do(t, b, "focus", chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	}))
	// The card is replaced right after the click, as a live refresh landing
	// before the clipboard answers does: the new card's button says so. A
	// live refresh may replace that card too (the runs above still stream
	// in), so the page records the button's answer as it is written.
	do(t, b, "copy the sample call", chromedp.Evaluate[chromedp.Void](`(() => {
		const s = document.getElementById("endpoints");
		window.copyAnswer = null;
		new MutationObserver(() => {
			const b = document.querySelector('#endpoint-hooks button[data-copy]');
			if (!window.copyAnswer && b && ["Copied", "Copy failed"].includes(b.textContent)) window.copyAnswer = { text: b.textContent, why: b.title };
		}).observe(s, { subtree: true, childList: true, characterData: true });
		document.querySelector('#endpoint-hooks button[data-copy]').click();
		s.innerHTML = s.innerHTML })()`),
		waitFor(`window.copyAnswer !== null`))
	g.Expect(value(t, b, "the copy button's answer", chromedp.Evaluate[string](`window.copyAnswer.text`))).To(gomega.Equal("Copied"),
		"the clipboard refused: %s", value(t, b, "why", chromedp.Evaluate[string](`window.copyAnswer.why`)))
	g.Expect(value(t, b, "the clipboard", chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))).
		To(gomega.Equal(text("#curl-hooks")))

	// Inline script does not run, even put in by a script of the page.
	g.Expect(eval(`(() => { const s = document.createElement("script");
		s.textContent = "window.inlineRan = true"; document.body.appendChild(s); return window.inlineRan === true })()`)).
		To(gomega.BeFalse(), "the Content-Security-Policy lets inline script run")

	// Live: a new run and the operator's pause arrive without a reload.
	g.Expect(eval(`window.notReloaded = true`)).To(gomega.BeTrue())
	u.addRun(t, 13, "hooks", agentsv1alpha1.RunRunning, time.Now())
	do(t, b, "a new run, live", waitFor(`document.querySelector('#endpoint-hooks tr[data-run="hooks-13"]') !== null && window.notReloaded`))

	// Pause, as alice (the owner): the endpoint's spec changes, and the
	// operator's answer arrives live.
	click(`#endpoint-hooks button[data-action="pause"]`)
	g.Expect(text("#notice")).To(gomega.ContainSubstring("Asked to pause endpoint " + ns + "/hooks"))
	ep := &agentsv1alpha1.WebhookEndpoint{}
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hooks"}, ep)).To(gomega.Succeed())
	g.Expect(ep.Spec.Paused).To(gomega.BeTrue())
	do(t, b, "live again", waitFor(`document.getElementById("live").dataset.state === "live"`))
	g.Expect(eval(`window.notReloaded = true`)).To(gomega.BeTrue())
	ep.Status.Phase, ep.Status.PauseReason = agentsv1alpha1.EndpointPaused, agentsv1alpha1.PauseReasonPaused
	g.Expect(u.admin.Status().Update(ctx, ep)).To(gomega.Succeed())
	do(t, b, "the operator's pause, live", waitFor(`document.querySelector("#endpoint-hooks [data-phase]").textContent === "Paused (by owner)" && window.notReloaded`))
	click(`#endpoint-hooks button[data-action="resume"]`)
	g.Expect(text("#notice")).To(gomega.ContainSubstring("Asked to resume endpoint " + ns + "/hooks"))
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hooks"}, ep)).To(gomega.Succeed())
	g.Expect(ep.Spec.Paused).To(gomega.BeFalse())
	g.Expect(text("#endpoint-hooks [data-phase]")).To(gomega.Equal("Resuming…"), "the badge says what the button did")
	g.Expect(eval(`document.querySelector("#endpoint-hooks button[data-action]").dataset.action === "pause"`)).To(gomega.BeTrue())
	ep.Status.Phase, ep.Status.PauseReason = agentsv1alpha1.EndpointActive, ""
	g.Expect(u.admin.Status().Update(ctx, ep)).To(gomega.Succeed())
	do(t, b, "the operator's resume, live", waitFor(`document.querySelector("#endpoint-hooks [data-phase]").textContent === "Active"`))

	// Refused: alice may not pause carol's endpoint; the page says what the
	// API server said, and nothing changed.
	u.waitForOwnershipPolicy(t, "alice", "deploys")
	click(`#endpoint-deploys button[data-action="pause"]`)
	notice := text("#notice")
	g.Expect(notice).To(gomega.ContainSubstring("you may not pause endpoint " + ns + "/deploys"))
	g.Expect(notice).To(gomega.MatchRegexp(`The API server said: .*denied request: .*owner`))
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deploys"}, ep)).To(gomega.Succeed())
	g.Expect(ep.Spec.Paused).To(gomega.BeFalse())
	screenshot(t, b, "refused")

	// Delete, confirmed in the page's dialog: alice's endpoint goes, carol's
	// is refused by the ownership policy.
	g.Expect(u.admin.Create(ctx, &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scratch"},
		Spec: agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Try.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun, Owner: &agentsv1alpha1.Owner{User: "alice"}}})).To(gomega.Succeed())
	do(t, b, "a new endpoint, live", waitFor(`document.getElementById("endpoint-scratch") !== null`))
	// Cancelled in the dialog, the form is not sent.
	g.Expect(eval(`(() => { window.confirm = () => { window.asked = true; return false };
		window.addEventListener("submit", ev => { window.submitPrevented = ev.defaultPrevented });
		document.querySelector('#endpoint-scratch button[data-action="delete"]').click();
		return window.asked === true && window.submitPrevented === true })()`)).To(gomega.BeTrue(), "a delete cancelled in the dialog was sent")
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "scratch"}, ep)).To(gomega.Succeed())
	confirmYes := func() { g.Expect(eval(`(window.confirm = () => true) && true`)).To(gomega.BeTrue()) }
	confirmYes()
	click(`#endpoint-scratch button[data-action="delete"]`)
	g.Expect(text("#notice")).To(gomega.ContainSubstring("Deleted endpoint " + ns + "/scratch"))
	g.Expect(apierrors.IsNotFound(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "scratch"}, ep))).To(gomega.BeTrue())
	g.Expect(eval(`document.getElementById("endpoint-scratch") === null`)).To(gomega.BeTrue())
	confirmYes()
	click(`#endpoint-deploys button[data-action="delete"]`)
	g.Expect(text("#notice")).To(gomega.MatchRegexp(`you may not delete endpoint ` + ns + `/deploys(.|\n)*The API server said: .*denied request`))
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deploys"}, ep)).To(gomega.Succeed())

	// Rotate, confirmed: the page waits for the new secret (the test plays
	// the operator) and shows it once, with the warning to save it.
	const rotated = "0d7e3a9c51b24f6e8a0c2d4f6b8e1a3c"
	operated := make(chan error, 1)
	go func() { operated <- u.playRotation(ctx, "hooks", rotated) }()
	confirmYes()
	click(`#endpoint-hooks button[data-action="rotate"]`)
	g.Expect(<-operated).To(gomega.Succeed())
	g.Expect(text("#new-secret")).To(gomega.Equal(rotated))
	g.Expect(text("#notice")).To(gomega.And(gomega.ContainSubstring("New secret of endpoint "+ns+"/hooks"), gomega.ContainSubstring("Save this secret now")))
	g.Expect(value(t, b, "the address", chromedp.Location())).To(gomega.Equal(base + "/namespaces/" + ns + "/endpoints/hooks/rotate"))
	screenshot(t, b, "rotated", "#notice")
	do(t, b, "the Agent's page again", chromedp.Navigate(base+"/namespaces/"+ns+"/agents/triage"), chromedp.WaitVisible(css("#endpoint-hooks")))
	g.Expect(eval(`document.getElementById("new-secret") === null`)).To(gomega.BeTrue(), "the new secret is shown more than once")

	// Send a test call: as the endpoint's sender would, with the new
	// secret, to the endpoint's URL (here a stand-in receiver); the page
	// shows what was sent and the answer.
	type call struct {
		header http.Header
		body   string
	}
	calls := make(chan call, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		calls <- call{r.Header.Clone(), string(body)}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"runId":"hooks-14"}`))
	}))
	t.Cleanup(receiver.Close)
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hooks"}, ep)).To(gomega.Succeed())
	ep.Status.URL = receiver.URL + "/api/webhooks/hooks-7Qx2Lw9PaK4mZr8VbN3c/receive"
	g.Expect(u.admin.Status().Update(ctx, ep)).To(gomega.Succeed())
	do(t, b, "the new URL, live", waitFor(fmt.Sprintf(`document.querySelector("#endpoint-hooks [data-url]").textContent === %q`, ep.Status.URL)))
	click(`#endpoint-hooks button[data-action="send"]`)
	g.Expect(text("#notice")).To(gomega.And(gomega.ContainSubstring("POST "+ep.Status.URL), gomega.ContainSubstring(`202 Accepted {"runId":"hooks-14"}`)))
	g.Expect(slices.ContainsFunc(slices.Collect(maps.Values((<-calls).header)), func(v []string) bool { return slices.Contains(v, rotated) })).
		To(gomega.BeTrue(), "the test call did not carry the endpoint's secret")

	// Redeliver a run: its stored payload, again, through the endpoint.
	click(`#endpoint-hooks tr[data-run="hooks-11"] button[data-action="redeliver"]`)
	g.Expect(text("#notice")).To(gomega.And(gomega.ContainSubstring("Redelivering the payload of run hooks-11"),
		gomega.ContainSubstring(`202 Accepted {"runId":"hooks-14"}`)))
	g.Expect((<-calls).body).To(gomega.ContainSubstring(`"number":111`), "not the run's stored payload")

	// Create an endpoint: the form offers the threads of this Agent only;
	// refused (alice may not trigger the Agent yet) it comes back filled
	// in with the API server's words; allowed, the endpoint is alice's.
	for _, th := range []*agentsv1alpha1.AgentThread{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "triage-main"}, Spec: agentsv1alpha1.AgentThreadSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Title: "Main triage"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other-thread"}, Spec: agentsv1alpha1.AgentThreadSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "other"}}},
	} {
		g.Expect(u.admin.Create(ctx, th)).To(gomega.Succeed())
	}
	do(t, b, "the Agent's page", chromedp.Navigate(base+"/namespaces/"+ns+"/agents/triage"), chromedp.WaitVisible(css("#create summary")))
	g.Expect(value(t, b, "the threads offered", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#new-thread option")).map(o => o.value).join(",")`))).
		To(gomega.Equal(",triage-main"))
	fill := `(() => { document.getElementById("create").open = true; document.querySelector("#create details.advanced").open = true;
		const set = (id, v) => document.getElementById(id).value = v;
		set("new-name", "alerts"); set("new-prompt", "Summarize the alert."); set("new-strategy", "ContinueExisting");
		set("new-thread", "triage-main"); set("new-model", "gpt-4.1-mini");
		document.querySelector('#create input[name="allowUnauthenticated"]').checked = true; return true })()`
	g.Expect(eval(fill)).To(gomega.BeTrue())
	screenshot(t, b, "create", "#create")
	click(`#create button[data-action="create"]`)
	g.Expect(text("#notice")).To(gomega.MatchRegexp(`you may not create endpoint ` + ns + `/alerts(.|\n)*The API server said: .*you may not trigger Agent triage`))
	g.Expect(eval(`document.getElementById("create").open && document.getElementById("new-name").value === "alerts" &&
		document.getElementById("new-thread").value === "triage-main" && document.getElementById("new-model").value === "gpt-4.1-mini"`)).
		To(gomega.BeTrue(), "the refused form is not kept as it was")
	u.grantTrigger(t, "alice")
	click(`#create button[data-action="create"]`)
	g.Expect(text("#notice")).To(gomega.ContainSubstring("Created endpoint " + ns + "/alerts"))
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alerts"}, ep)).To(gomega.Succeed())
	g.Expect(ep.Spec).To(gomega.Equal(agentsv1alpha1.WebhookEndpointSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
		Prompt: "Summarize the alert.", ThreadStrategy: agentsv1alpha1.ContinueExisting, TargetThreadRef: &agentsv1alpha1.LocalObjectReference{Name: "triage-main"},
		AllowUnauthenticated: true, Model: "gpt-4.1-mini", Payload: agentsv1alpha1.PayloadBody, Owner: ep.Spec.Owner}))
	g.Expect(ep.Spec.Owner).To(gomega.HaveField("User", "alice"), "the creator is the owner (owner-default.yaml)")
	g.Expect(eval(`document.getElementById("endpoint-alerts") !== null && !document.getElementById("create").open`)).To(gomega.BeTrue())

	// Add a secret, confirmed: the endpoint stops allowing unauthenticated
	// calls, and the page waits for its secret (the test plays the
	// operator) and shows it once.
	const added = "7e0a5c3b9d1f4e2a8c6b0d4f2a9e7c5b"
	go func() { operated <- u.playAddedSecret(ctx, "alerts", added) }()
	confirmYes()
	click(`#endpoint-alerts button[data-action="add-secret"]`)
	g.Expect(<-operated).To(gomega.Succeed())
	g.Expect(text("#new-secret")).To(gomega.Equal(added))
	g.Expect(text("#notice")).To(gomega.And(gomega.ContainSubstring("Secret of endpoint "+ns+"/alerts"),
		gomega.ContainSubstring("Calls without it are now refused"), gomega.ContainSubstring("Save this secret now")))
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alerts"}, ep)).To(gomega.Succeed())
	g.Expect(ep.Spec.AllowUnauthenticated).To(gomega.BeFalse())
	g.Expect(eval(`document.querySelector('#endpoint-alerts button[data-action="add-secret"]') === null &&
		document.querySelector('#endpoint-alerts button[data-action="rotate"]') !== null`)).To(gomega.BeTrue(), "the card offers rotation now")

	// Edit, on a page of its own (live updates do not touch it): alice's
	// endpoint changes; carol's is refused and the form stays as sent.
	click(`#endpoint-hooks a[data-action="edit"]`)
	g.Expect(text("#new-name")).To(gomega.Equal("hooks"))
	g.Expect(eval(`(() => { document.querySelector("#edit details.advanced").open = true;
		document.getElementById("new-prompt").value = "Triage this issue, then label it.";
		document.getElementById("new-model").value = "gpt-4.1"; return true })()`)).To(gomega.BeTrue())
	click(`#edit button[data-action="save"]`)
	g.Expect(text("#notice")).To(gomega.ContainSubstring("Saved endpoint " + ns + "/hooks"))
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hooks"}, ep)).To(gomega.Succeed())
	g.Expect([]any{ep.Spec.Prompt, ep.Spec.Model, ep.Spec.ThreadStrategy, ep.Spec.TargetThreadRef}).
		To(gomega.Equal([]any{"Triage this issue, then label it.", "gpt-4.1", agentsv1alpha1.NewThreadEachRun, (*agentsv1alpha1.LocalObjectReference)(nil)}))
	click(`#endpoint-deploys a[data-action="edit"]`)
	g.Expect(eval(`(document.getElementById("new-prompt").value = "Mine now.") && true`)).To(gomega.BeTrue())
	click(`#edit button[data-action="save"]`)
	g.Expect(text("#notice")).To(gomega.MatchRegexp(`you may not edit endpoint ` + ns + `/deploys(.|\n)*only the owner \(carol\)`))
	g.Expect(eval(`document.getElementById("new-prompt").value === "Mine now."`)).To(gomega.BeTrue(), "the refused form is not kept")
	screenshot(t, b, "edit-refused")

	// Carol left: hookrun paused her endpoint, and alice (a member of the
	// Agent now) takes it over, confirmed.
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deploys"}, ep)).To(gomega.Succeed())
	ep.Status.Phase, ep.Status.PauseReason = agentsv1alpha1.EndpointPaused, agentsv1alpha1.PauseReasonOwnerNotMember
	g.Expect(u.admin.Status().Update(ctx, ep)).To(gomega.Succeed())
	do(t, b, "the Agent's page", chromedp.Navigate(base+"/namespaces/"+ns+"/agents/triage"),
		waitFor(`document.querySelector('#endpoint-deploys button[data-action="take-ownership"]') !== null`))
	g.Expect(text("#endpoint-deploys [data-phase]")).To(gomega.Equal("Paused (OwnerNotMember)"))
	confirmYes()
	click(`#endpoint-deploys button[data-action="take-ownership"]`)
	g.Expect(text("#notice")).To(gomega.ContainSubstring("you own it now"))
	g.Expect(u.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deploys"}, ep)).To(gomega.Succeed())
	g.Expect([]any{ep.Spec.Owner.User, ep.Spec.Paused}).To(gomega.Equal([]any{"alice", false}))

	// A run's page: its output and payload, hostile text as text.
	do(t, b, "a run's page", chromedp.Navigate(base+"/namespaces/"+ns+"/runs/hooks-12"), chromedp.WaitVisible(css("#output")))
	g.Expect(text("#output")).To(gomega.ContainSubstring(`<script>window.injected = true</script>\u001b]52;c;`))
	g.Expect(text("#payload")).To(gomega.ContainSubstring(`"action": "opened"`))
	g.Expect(eval(`window.injected === true || document.querySelector("main img, main script") !== null`)).
		To(gomega.BeFalse(), "markup in the output or the prompt was run")
	screenshot(t, b, "run")
}

// seed makes Agent triage with endpoint hooks (alice's, with a secret and
// 12 runs over the last hours) and endpoint deploys (carol's, open to
// anyone, with a filter error).
func (u *uiCluster) seed(t *testing.T) {
	t.Helper()
	ctx, c, ns := t.Context(), u.admin, u.ns
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create(ctx, &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "triage"},
		Spec: agentsv1alpha1.AgentSpec{DisplayName: "Issue triage", A2A: agentsv1alpha1.A2AEndpoint{URL: "http://triage.agents.svc/a2a"}}}))
	must(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName("hooks")},
		Data: map[string][]byte{agentsv1alpha1.WebhookSecretKey: []byte(uiTestSecret)}}))
	ready := []metav1.Condition{{Type: agentsv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: agentsv1alpha1.ReasonAvailable,
		Message: "accepting calls", LastTransitionTime: metav1.Now()}}
	for _, ep := range []*agentsv1alpha1.WebhookEndpoint{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hooks"}, Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Triage this issue.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun, Owner: &agentsv1alpha1.Owner{User: "alice"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deploys"}, Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "Summarize the deployment.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun, AllowUnauthenticated: true, Owner: &agentsv1alpha1.Owner{User: "carol"}}},
	} {
		must(c.Create(ctx, ep))
		ep.Status = agentsv1alpha1.WebhookEndpointStatus{Phase: agentsv1alpha1.EndpointActive, Conditions: ready,
			URL: "https://hooks.example.com/api/webhooks/" + ep.Name + "-7Qx2Lw9PaK4mZr8VbN3c/receive"}
		if ep.Name == "hooks" {
			ep.Status.AuthMode, ep.Status.SecretHash = agentsv1alpha1.AuthSecret, agentsv1alpha1.SecretHash([]byte(uiTestSecret))
			ep.Status.Runs = agentsv1alpha1.RunCounts{Total: 12, Running: 1}
		} else {
			ep.Status.AuthMode = agentsv1alpha1.AuthNone
			ep.Status.Rejections = &agentsv1alpha1.EndpointRejections{Since: metav1.NewTime(time.Now().Truncate(time.Hour)),
				Counts: []agentsv1alpha1.RejectionCount{{Code: "filter_error", Count: 2}},
				LastEvaluationError: &agentsv1alpha1.EvaluationError{Expression: agentsv1alpha1.ExpressionFilter,
					Message: "no such key: environment", Time: metav1.NewTime(time.Now().Add(-5 * time.Minute).Truncate(time.Second))}}
		}
		must(c.Status().Update(ctx, ep))
	}
	now := time.Now()
	states := []agentsv1alpha1.RunState{agentsv1alpha1.RunSuccess, agentsv1alpha1.RunSuccess, agentsv1alpha1.RunError, agentsv1alpha1.RunSkipped}
	for i := 1; i <= 12; i++ {
		state := states[i%len(states)]
		if i == 12 {
			state = agentsv1alpha1.RunRunning
		}
		u.addRun(t, i, "hooks", state, now.Add(-time.Duration(13-i)*97*time.Minute))
	}
}

// addRun makes run hooks-i of endpoint name, received at.
func (u *uiCluster) addRun(t *testing.T, i int, name string, state agentsv1alpha1.RunState, at time.Time) {
	t.Helper()
	ctx, ns := t.Context(), u.ns
	runName := fmt.Sprintf("%s-%d", name, i)
	payload := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: runName + "-payload"},
		Data: map[string][]byte{agentsv1alpha1.PayloadBodyKey: fmt.Appendf(nil, `{"action":"opened","issue":{"number":%d,"title":"<img src=x onerror=\"window.injected=true\">"}}`, 100+i)}}
	if err := u.admin.Create(ctx, payload); err != nil {
		t.Fatal(err)
	}
	run := &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: runName, Labels: map[string]string{
			agentsv1alpha1.LabelEndpoint: name, agentsv1alpha1.LabelAgent: "triage"}},
		Spec: agentsv1alpha1.AgentRunSpec{
			EndpointRef: agentsv1alpha1.LocalObjectReference{Name: name}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
			Prompt: "Triage this issue. <img src=x onerror=\"window.injected=true\">", ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Owner: &agentsv1alpha1.Owner{User: "alice"}, ReceivedAt: metav1.NewTime(at),
			Payload: &agentsv1alpha1.PayloadReference{SecretName: payload.Name, ContentType: "application/json"},
		},
	}
	if err := u.admin.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	started := metav1.NewTime(at.Add(time.Second))
	run.Status = agentsv1alpha1.AgentRunStatus{State: state, StartedAt: &started,
		Thread: &agentsv1alpha1.RunThread{ContextID: fmt.Sprintf("ctx-%04d-8c1e", 4000+i)}}
	switch state {
	case agentsv1alpha1.RunSuccess:
		done := metav1.NewTime(at.Add(14 * time.Second))
		run.Status.CompletedAt, run.Status.Duration = &done, "13s"
		run.Status.Output = "Labelled the issue bug, area/receiver. <script>window.injected = true</script>" + terminaltest.OSC52
	case agentsv1alpha1.RunError:
		done := metav1.NewTime(at.Add(31 * time.Second))
		run.Status.CompletedAt, run.Status.Duration = &done, "30s"
		run.Status.Message = "the agent answered 503 Service Unavailable after 3 attempts"
	case agentsv1alpha1.RunSkipped:
		run.Status.StartedAt = nil
		run.Status.Thread = nil
		run.Status.Message = "skipped: the filter did not match (action is \"closed\")"
	case agentsv1alpha1.RunRunning:
		run.Status.Output = "Working… <script>window.injected = true</script>" + terminaltest.OSC52
	}
	if err := u.admin.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
}
