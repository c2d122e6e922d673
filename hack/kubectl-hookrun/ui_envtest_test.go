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
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
)

// The browser specs of `kubectl hookrun ui`: Debian's Chromium driven by
// chromedp against the UI served by the command itself, run as a user with
// RBAC against envtest's API server with hookrun's ownership policy.

// uiCluster is an API server with hookrun's CRDs, the ownership admission
// policy and a namespace whose users may work with hookrun's kinds.
type uiCluster struct {
	admin client.Client
	env   *envtest.Environment
	ns    string
}

// chromiumOrSkip is Chromium's path; without it the specs are skipped with
// one line.
func chromiumOrSkip(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("chromium is not on PATH: the UI's browser specs do not run (hack/install-test-packages.sh installs it)")
	return ""
}

func startUICluster(t *testing.T) *uiCluster {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, or `make control-plane` and export KUBEBUILDER_ASSETS=$PWD/bin/k8s/<version>")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: cli.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	// The ownership rules, and spec.owner filled in from the creator (the
	// API servers this project tests on serve MutatingAdmissionPolicy).
	for _, policy := range []string{"ownership.yaml", "owner-default.yaml"} {
		if err := applyYAML(ctx, c, filepath.Join("..", "..", "config", "policies", policy)); err != nil {
			t.Fatal(err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ui-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// What the built-in edit role gives with hookrun's roles aggregated.
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{GenerateName: "ui-user-"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"agents.hookrun.dev"}, Resources: []string{"agents", "webhookendpoints", "agentruns", "agentthreads"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	}}
	if err := c.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "ui-users"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "alice"}},
	}
	if err := c.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	return &uiCluster{admin: c, env: env, ns: ns.Name}
}

// applyYAML creates the objects of a multi-document YAML file.
func applyYAML(ctx context.Context, c client.Client, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, doc := range strings.Split(string(b), "\n---") {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil {
			return err
		}
		if len(o.Object) == 0 {
			continue
		}
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// serveUI runs `kubectl hookrun ui --no-browser` as user until the test
// ends, and returns the address it printed.
func (u *uiCluster) serveUI(t *testing.T, user string) string {
	t.Helper()
	au, err := u.env.AddUser(envtest.User{Name: user}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := au.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--kubeconfig", path, "-n", u.ns, "ui", "--no-browser"}, out, errOut)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("kubectl hookrun ui ended with %d: %s", code, errOut.String())
		}
		if strings.Contains(errOut.String(), "token=") {
			t.Errorf("kubectl hookrun ui logged its token:\n%s", errOut.String())
		}
	})
	printed := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=\S+`)
	var url string
	gomega.NewWithT(t).Eventually(func() string {
		url = printed.FindString(out.String())
		return url
	}, time.Minute).ShouldNot(gomega.BeEmpty(), "kubectl hookrun ui printed no address: %s %s", out, errOut)
	return url
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newBrowser starts headless Chromium for the test.
func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1200, 1000))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses root otherwise
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser, with no timeout
		t.Fatal(err)
	}
	return ctx
}

// do runs steps in the browser, bounded.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs an action that reads a value in the browser, bounded.
func value[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitFor waits until the JavaScript expression is true.
func waitFor(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Minute))
}

// screenshot writes the page to docs/images/ui-NAME.png when
// UPDATE_SCREENSHOTS=1, so that make test leaves the tree as it was.
// With sel, only the element sel selects.
func screenshot(t *testing.T, ctx context.Context, name string, sel ...string) {
	t.Helper()
	if os.Getenv("UPDATE_SCREENSHOTS") != "1" {
		return
	}
	shot := chromedp.FullScreenshot(100)
	if len(sel) > 0 {
		shot = chromedp.Screenshot(chromedp.CSS(sel[0]))
	}
	png := value(t, ctx, "screenshot "+name, shot)
	dir := filepath.Join("..", "..", "docs", "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ui-"+name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// playRotation does what the operator does for a rotation of endpoint
// name: once the annotation asks for it, a new secret and its hash.
func (u *uiCluster) playRotation(ctx context.Context, name, secret string) error {
	ep := &agentsv1alpha1.WebhookEndpoint{}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := u.admin.Get(ctx, client.ObjectKey{Namespace: u.ns, Name: name}, ep)
		return err == nil && ep.Annotations[agentsv1alpha1.AnnotationRotateSecret] != "", err
	})
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: u.ns, Name: agentsv1alpha1.GeneratedSecretName(name)},
		Data: map[string][]byte{agentsv1alpha1.WebhookSecretKey: []byte(secret)}}
	if err := u.admin.Update(ctx, s); err != nil {
		return err
	}
	ep.Status.SecretHash = agentsv1alpha1.SecretHash([]byte(secret))
	ep.Status.LastHandledRotation = agentsv1alpha1.RotationValue(ep.Annotations[agentsv1alpha1.AnnotationRotateSecret])
	return u.admin.Status().Update(ctx, ep)
}

// playAddedSecret does what the operator does when endpoint name stops
// allowing unauthenticated calls: it makes its secret and publishes the
// hash.
func (u *uiCluster) playAddedSecret(ctx context.Context, name, secret string) error {
	ep := &agentsv1alpha1.WebhookEndpoint{}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := u.admin.Get(ctx, client.ObjectKey{Namespace: u.ns, Name: name}, ep)
		return err == nil && !ep.Spec.AllowUnauthenticated, err
	})
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: u.ns, Name: agentsv1alpha1.GeneratedSecretName(name)},
		Data: map[string][]byte{agentsv1alpha1.WebhookSecretKey: []byte(secret)}}
	if err := u.admin.Create(ctx, s); err != nil {
		return err
	}
	ep.Status.AuthMode, ep.Status.SecretName = agentsv1alpha1.AuthSecret, s.Name
	ep.Status.SecretHash = agentsv1alpha1.SecretHash([]byte(secret))
	ep.Status.Conditions = append(ep.Status.Conditions, metav1.Condition{Type: agentsv1alpha1.ConditionSecretReady, Status: metav1.ConditionTrue,
		Reason: agentsv1alpha1.ReasonSecretGenerated, Message: "generated", ObservedGeneration: ep.Generation, LastTransitionTime: metav1.Now()})
	return u.admin.Status().Update(ctx, ep)
}

// waitForOwnershipPolicy waits until the API server enforces the ownership
// policy (it compiles new policies in the background): a dry-run pause of
// another's endpoint by user is refused.
func (u *uiCluster) waitForOwnershipPolicy(t *testing.T, user, endpoint string) {
	t.Helper()
	c := u.as(t, user)
	ep := &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: u.ns, Name: endpoint}}
	gomega.NewWithT(t).Eventually(func() bool {
		err := c.Patch(t.Context(), ep, client.RawPatch(client.Merge.Type(), []byte(`{"spec":{"paused":true}}`)), client.DryRunAll)
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "denied request")
	}, time.Minute).Should(gomega.BeTrue(), "the ownership policy is not enforced")
}

// grantTrigger makes user a member of the namespace's Agents (the
// "trigger" verb) and waits until the API server lets user create an
// endpoint.
func (u *uiCluster) grantTrigger(t *testing.T, user string) {
	t.Helper()
	ctx := t.Context()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: u.ns, Name: "trigger"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"agents.hookrun.dev"}, Resources: []string{"agents"}, Verbs: []string{"trigger"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: u.ns, Name: "trigger-" + user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}
	for _, o := range []client.Object{role, binding} {
		if err := u.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	c := u.as(t, user)
	gomega.NewWithT(t).Eventually(func() error {
		ep := &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: u.ns, Name: "probe"}, Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}, Prompt: "p", ThreadStrategy: agentsv1alpha1.NewThreadEachRun}}
		return c.Create(ctx, ep, client.DryRunAll)
	}, time.Minute).Should(gomega.Succeed(), "%s may still not create an endpoint", user)
}

// as is a client that acts as user.
func (u *uiCluster) as(t *testing.T, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(u.env.Config)
	cfg.Impersonate.UserName = user
	c, err := client.New(cfg, client.Options{Scheme: cli.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
