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

package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	lua "github.com/yuin/gopher-lua"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	luajson "layeh.com/gopher-json"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/testenv"
)

// The Argo CD resource actions for WebhookEndpoint (charts/hookrun/argocd),
// run as Argo CD runs them: discovery.lua says which actions the UI offers;
// an action's script returns the changed object, which Argo CD encodes with
// gopher-json (the library it uses), turns into a JSON merge patch against
// the live object, and sends to the API server under its own identity.

// argoCDActions is the actions entry of the argocd-cm patch for
// WebhookEndpoint: the discovery script and each action's script by name.
type argoCDActions struct {
	discovery string
	actions   map[string]string
}

func argoCDActionScripts() (argoCDActions, error) {
	b, err := os.ReadFile(filepath.Join(testenv.Root(), "charts", "hookrun", "argocd", "argocd-cm-patch.yaml"))
	if err != nil {
		return argoCDActions{}, err
	}
	var patch struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(b, &patch); err != nil {
		return argoCDActions{}, err
	}
	key := "resource.customizations.actions." + agentsv1alpha1.GroupVersion.Group + "_WebhookEndpoint"
	// The value is itself YAML, as Argo CD's ResourceOverride.GetActions reads it.
	var value struct {
		Discovery   string `json:"discovery.lua"`
		Definitions []struct {
			Name   string `json:"name"`
			Action string `json:"action.lua"`
		} `json:"definitions"`
	}
	if err := yaml.UnmarshalStrict([]byte(patch.Data[key]), &value); err != nil {
		return argoCDActions{}, fmt.Errorf("%s: %w", key, err)
	}
	out := argoCDActions{discovery: value.Discovery, actions: map[string]string{}}
	for _, d := range value.Definitions {
		out.actions[d.Name] = d.Action
	}
	return out, nil
}

// argoCDDiscover runs the discovery script on obj and returns each action's
// disabled flag, as Argo CD reads them.
func argoCDDiscover(obj *unstructured.Unstructured, script string) (map[string]bool, error) {
	l, err := argoCDRun(obj, script)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	b, err := luajson.Encode(l.Get(-1))
	if err != nil {
		return nil, err
	}
	var found map[string]struct {
		Disabled    bool   `json:"disabled"`
		DisplayName string `json:"displayName"`
	}
	if err := json.Unmarshal(b, &found); err != nil {
		return nil, fmt.Errorf("discovery returned %s: %w", b, err)
	}
	disabled := map[string]bool{}
	for name, a := range found {
		if a.DisplayName == "" {
			return nil, fmt.Errorf("action %s has no displayName", name)
		}
		disabled[name] = a.Disabled
	}
	return disabled, nil
}

// argoCDActionPatch runs an action's script on live and returns the JSON
// merge patch Argo CD sends for it (an action that returns the object is a
// patch action).
func argoCDActionPatch(live *unstructured.Unstructured, script string) ([]byte, error) {
	l, err := argoCDRun(live, script)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if l.Get(-1).Type() != lua.LTTable {
		return nil, fmt.Errorf("the action returned %s, not a table", l.Get(-1).Type())
	}
	b, err := luajson.Encode(l.Get(-1))
	if err != nil {
		return nil, err
	}
	var changed map[string]any
	if err := json.Unmarshal(b, &changed); err != nil {
		return nil, fmt.Errorf("the action returned %s, not an object: %w", b, err)
	}
	// gopher-json writes an empty table as []; Argo CD puts back the empty
	// object the live object had there.
	emptyTablesAsObjects(changed, live.Object)
	newBytes, err := json.Marshal(changed)
	if err != nil {
		return nil, err
	}
	liveBytes, err := json.Marshal(live.Object)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(liveBytes, newBytes)
}

func emptyTablesAsObjects(changed, live map[string]any) {
	for k, v := range changed {
		switch v := v.(type) {
		case []any:
			if m, ok := live[k].(map[string]any); ok && len(v) == 0 {
				changed[k] = m
			}
		case map[string]any:
			if m, ok := live[k].(map[string]any); ok {
				emptyTablesAsObjects(v, m)
			}
		}
	}
}

// TestArgoCDPatchHoldsActionScripts: the argocd-cm patch's actions entry is
// the scripts of charts/hookrun/argocd/actions, shipped for other ways of
// installing them.
func TestArgoCDPatchHoldsActionScripts(t *testing.T) {
	got, err := argoCDActionScripts()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(testenv.Root(), "charts", "hookrun", "argocd", "actions")
	want := map[string]*string{"discovery": &got.discovery}
	for _, name := range []string{"pause", "resume", "rotate"} {
		s := got.actions[name]
		want[name] = &s
	}
	if len(got.actions) != 3 {
		t.Errorf("the patch defines actions %v, want pause, resume and rotate", got.actions)
	}
	for name, script := range want {
		file, err := os.ReadFile(filepath.Join(dir, name+".lua"))
		if err != nil {
			t.Fatal(err)
		}
		if *script != string(file) {
			t.Errorf("the argocd-cm patch's %s script differs from actions/%s.lua", name, name)
		}
	}
}

// TestArgoCDActionDiscovery: which actions the Argo CD UI offers for an
// endpoint in each state.
func TestArgoCDActionDiscovery(t *testing.T) {
	scripts, err := argoCDActionScripts()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		spec map[string]any
		want map[string]bool // action → disabled
	}{
		{"an active endpoint", map[string]any{}, map[string]bool{"pause": false, "resume": true, "rotate": false}},
		{"a paused endpoint", map[string]any{"paused": true}, map[string]bool{"pause": true, "resume": false, "rotate": false}},
		{"an endpoint with its own Secret", map[string]any{"secretRef": map[string]any{"name": "mine"}},
			map[string]bool{"pause": false, "resume": true, "rotate": true}},
		{"an unauthenticated endpoint", map[string]any{"allowUnauthenticated": true, "paused": false},
			map[string]bool{"pause": false, "resume": true, "rotate": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": agentsv1alpha1.GroupVersion.String(), "kind": "WebhookEndpoint",
				"metadata": map[string]any{"name": "hook", "namespace": "team-a"}, "spec": tc.spec,
			}}
			got, err := argoCDDiscover(obj, scripts.discovery)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("disabled %v, want %v", got, tc.want)
			}
		})
	}
}

// TestArgoCDRotateAnnotationIsATime: the rotate action writes the time now,
// in UTC to the second, and keeps the other annotations.
func TestArgoCDRotateAnnotationIsATime(t *testing.T) {
	scripts, err := argoCDActionScripts()
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": agentsv1alpha1.GroupVersion.String(), "kind": "WebhookEndpoint",
		"metadata": map[string]any{"name": "hook", "annotations": map[string]any{"team": "a"}},
		"spec":     map[string]any{},
	}}
	before := time.Now().UTC().Truncate(time.Second)
	patch, err := argoCDActionPatch(obj, scripts.actions["rotate"])
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Metadata.Annotations) != 1 {
		t.Fatalf("patch %s, want only the rotate-secret annotation", patch)
	}
	at, err := time.Parse(time.RFC3339, got.Metadata.Annotations[agentsv1alpha1.AnnotationRotateSecret])
	if err != nil || at.Before(before) || at.After(time.Now()) || !regexp.MustCompile(`Z$`).MatchString(got.Metadata.Annotations[agentsv1alpha1.AnnotationRotateSecret]) {
		t.Errorf("rotate-secret %q (%v), want the time now in UTC", got.Metadata.Annotations[agentsv1alpha1.AnnotationRotateSecret], err)
	}
}

// The actions against the real API server: the patches Argo CD sends, under
// the identity it sends them as, and what the operator makes of them.
var _ = Describe("Argo CD actions on a WebhookEndpoint", func() {
	const alice = "alice@example.com"
	// Argo CD's API server runs actions as its own service account.
	const argoCD = "system:serviceaccount:argocd:argocd-server"
	var (
		ns      string
		scripts argoCDActions
		ep      *agentsv1alpha1.WebhookEndpoint
	)
	as := func(user string, groups ...string) client.Client {
		GinkgoHelper()
		c, err := client.New(testenv.AsUser(cfg, user, groups...), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		return c
	}
	bind := func(ctx SpecContext, role, user string) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: role + "-"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		})).To(Succeed())
	}
	// run runs action on the endpoint as the API server has it now and sends
	// the patch as user.
	run := func(ctx SpecContext, action, user string) error {
		GinkgoHelper()
		patch, err := argoCDActionPatch(read(ctx, ep), scripts.actions[action])
		Expect(err).NotTo(HaveOccurred())
		return as(user).Patch(ctx, ep.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
	}
	offered := func(ctx SpecContext) map[string]bool {
		GinkgoHelper()
		disabled, err := argoCDDiscover(read(ctx, ep), scripts.discovery)
		Expect(err).NotTo(HaveOccurred())
		on := map[string]bool{}
		for name, d := range disabled {
			on[name] = !d
		}
		return on
	}

	BeforeEach(func(ctx SpecContext) {
		var err error
		scripts, err = argoCDActionScripts()
		Expect(err).NotTo(HaveOccurred())
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, newAgent(ns, "triage"))).To(Succeed())
		bind(ctx, "hookrun-agent-user", alice)
		bind(ctx, "hookrun-edit", argoCD) // RBAC lets Argo CD write endpoints
		ep = newEndpoint(ns, "hook", "triage")
		ep.Spec.Owner = nil
		awaitOwnerPolicies(ctx, as(alice), ep)
		ep.Spec.Owner = creatorOwner(alice) // the creator
		Expect(as(alice).Create(ctx, ep)).To(Succeed())
		readyEndpoint(ctx, ep)
	})

	It("pauses, resumes and rotates for the owner, as the operator shows", func(ctx SpecContext) {
		Expect(offered(ctx)).To(Equal(map[string]bool{"pause": true, "resume": false, "rotate": true}))

		Expect(run(ctx, "pause", alice)).To(Succeed())
		Eventually(func() agentsv1alpha1.EndpointPhase { return get(ctx, ep).Status.Phase }).Should(Equal(agentsv1alpha1.EndpointPaused))
		Expect(offered(ctx)).To(Equal(map[string]bool{"pause": false, "resume": true, "rotate": true}))

		Expect(run(ctx, "resume", alice)).To(Succeed())
		Eventually(func() agentsv1alpha1.EndpointPhase { return get(ctx, ep).Status.Phase }).Should(Equal(agentsv1alpha1.EndpointActive))

		oldHash := get(ctx, ep).Status.SecretHash
		Expect(oldHash).NotTo(BeEmpty())
		Expect(run(ctx, "rotate", alice)).To(Succeed())
		Eventually(func(g Gomega) {
			cur := get(ctx, ep)
			g.Expect(cur.Status.LastHandledRotation).To(Equal(cur.Annotations[agentsv1alpha1.AnnotationRotateSecret]))
			g.Expect(cur.Status.SecretHash).NotTo(BeEmpty())
			g.Expect(cur.Status.SecretHash).NotTo(Equal(oldHash))
		}).Should(Succeed())
	})

	It("is refused under Argo CD's own identity unless it is one of actionUsers", func(ctx SpecContext) {
		for _, action := range []string{"pause", "rotate"} {
			err := run(ctx, action, argoCD)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", action, err)
			Expect(err.Error()).To(ContainSubstring("hookrun-endpoint-ownership"))
		}
		Expect(get(ctx, ep).Spec.Paused).To(BeFalse())
	})

	// With Argo CD's server in the ownership policy's actionUsers (chart
	// value admission.actionUsers), as docs/argocd.md advises: it pauses,
	// resumes and rotates any endpoint, and is held to every rule for
	// anything else.
	Context("with Argo CD's server in admission.actionUsers", func() {
		// Another Argo CD than the spec above runs as, so that no spec sees
		// the list while the API server is still catching up with a change.
		const actions = "system:serviceaccount:argocd-actions:argocd-server"
		const ownership, references = "hookrun-endpoint-ownership", "hookrun-secret-references"
		refusedBy := func(policy, msg string) OmegaMatcher {
			return And(
				WithTransform(apierrors.IsForbidden, BeTrue()),
				WithTransform(func(err error) string { return err.Error() }, And(ContainSubstring(policy), ContainSubstring(msg))),
			)
		}
		// change patches the endpoint as the API server has it now, mutated,
		// as user.
		change := func(ctx SpecContext, user string, mutate func(*agentsv1alpha1.WebhookEndpoint)) error {
			GinkgoHelper()
			cur := get(ctx, ep.DeepCopy())
			patch := client.MergeFrom(cur.DeepCopy())
			mutate(cur)
			return as(user).Patch(ctx, cur, patch)
		}
		pause := func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Paused = true }

		BeforeEach(func(ctx SpecContext) {
			bind(ctx, "hookrun-edit", actions)
			setActionUsers(ctx, `["`+actions+`"]`)
			// The API server enforces the changed policy once its informers
			// see it.
			Eventually(func() error {
				return as(actions).Patch(ctx, ep.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":true}}`)), client.DryRunAll)
			}).Should(Succeed())
		})

		It("pauses, resumes and rotates an endpoint it does not own, as the operator shows", func(ctx SpecContext) {
			Expect(run(ctx, "pause", actions)).To(Succeed())
			Eventually(func() agentsv1alpha1.EndpointPhase { return get(ctx, ep).Status.Phase }).Should(Equal(agentsv1alpha1.EndpointPaused))
			Expect(run(ctx, "resume", actions)).To(Succeed())
			Eventually(func() agentsv1alpha1.EndpointPhase { return get(ctx, ep).Status.Phase }).Should(Equal(agentsv1alpha1.EndpointActive))

			oldHash := get(ctx, ep).Status.SecretHash
			Expect(run(ctx, "rotate", actions)).To(Succeed())
			Eventually(func(g Gomega) {
				cur := get(ctx, ep)
				g.Expect(cur.Status.LastHandledRotation).To(Equal(cur.Annotations[agentsv1alpha1.AnnotationRotateSecret]))
				g.Expect(cur.Status.SecretHash).NotTo(BeEmpty())
				g.Expect(cur.Status.SecretHash).NotTo(Equal(oldHash))
			}).Should(Succeed())
			Expect(get(ctx, ep).Spec.Owner.User).To(Equal(alice), "the owner stays")

			// A server-side apply of spec.paused alone is an action too.
			Expect(as(actions).Patch(ctx, ep.DeepCopy(), client.RawPatch(types.ApplyPatchType, mustJSON(map[string]any{
				"apiVersion": agentsv1alpha1.GroupVersion.String(), "kind": "WebhookEndpoint",
				"metadata": map[string]any{"name": ep.Name, "namespace": ns}, "spec": map[string]any{"paused": true},
			})), client.FieldOwner("argocd-actions"), client.ForceOwnership)).To(Succeed())
			Expect(get(ctx, ep).Spec.Paused).To(BeTrue())
		})

		It("may change nothing else: it cannot set an owner, open the endpoint or aim an Agent's token", func(ctx SpecContext) {
			const mallory = "mallory@example.com"
			Expect(change(ctx, actions, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Owner = &agentsv1alpha1.Owner{User: mallory} })).
				To(refusedBy(ownership, "spec.owner can only be set to yourself"))
			Expect(change(ctx, actions, func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.Owner = &agentsv1alpha1.Owner{User: actions} })).
				To(refusedBy(ownership, "this endpoint is owned by "+alice))
			open := func(ep *agentsv1alpha1.WebhookEndpoint) { ep.Spec.AllowUnauthenticated = true }
			Expect(change(ctx, actions, open)).To(refusedBy(ownership, "only the owner ("+alice+") can change this endpoint's spec"))
			Expect(change(ctx, actions, func(ep *agentsv1alpha1.WebhookEndpoint) { pause(ep); open(ep) })).
				To(refusedBy(ownership, "only the owner ("+alice+") can change this endpoint's spec"), "an action and more is not an action")
			Expect(change(ctx, actions, func(ep *agentsv1alpha1.WebhookEndpoint) {
				ep.Annotations = map[string]string{agentsv1alpha1.AnnotationRotateSecret: "now", "kubectl.kubernetes.io/last-applied-configuration": "{}"}
			})).To(refusedBy(ownership, "only the owner ("+alice+") can rotate this endpoint's secret"), "a rotation and more is not an action")
			// A server-side apply of spec.paused that also takes a share of
			// another spec field, both values unchanged, would keep that field
			// when the owner's next apply drops it.
			Expect(as(actions).Patch(ctx, ep.DeepCopy(), client.RawPatch(types.ApplyPatchType, mustJSON(map[string]any{
				"apiVersion": agentsv1alpha1.GroupVersion.String(), "kind": "WebhookEndpoint",
				"metadata": map[string]any{"name": ep.Name, "namespace": ns},
				"spec":     map[string]any{"paused": false, "allowUnauthenticated": false},
			})), client.FieldOwner("argocd-actions"), client.ForceOwnership)).To(refusedBy(ownership, "can manage this endpoint's spec fields"))
			Expect(as(actions).Delete(ctx, ep.DeepCopy())).To(refusedBy(ownership, "only the owner ("+alice+") or a hookrun admin can delete"))
			cur := get(ctx, ep.DeepCopy())
			Expect(cur.Spec.Paused).To(BeFalse())
			Expect(cur.Spec.AllowUnauthenticated).To(BeFalse())
			Expect(cur.Spec.Owner.User).To(Equal(alice))

			// An Agent with a token: actions are for endpoints, so its URL and
			// token are the reference policy's, as for anyone.
			Expect(k8sClient.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "triage-token", Labels: referableLabels()},
				Data:       map[string][]byte{"token": []byte("t0ken")},
			})).To(Succeed())
			agent := get(ctx, newAgent(ns, "triage"))
			patch := client.MergeFrom(agent.DeepCopy())
			agent.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "triage-token", Key: "token"}
			Expect(k8sClient.Patch(ctx, agent, patch)).To(Succeed())
			agent = get(ctx, agent)
			patch = client.MergeFrom(agent.DeepCopy())
			agent.Spec.A2A.URL = "https://attacker.example.com/"
			Expect(as(actions).Patch(ctx, agent, patch)).
				To(refusedBy(references, "so you may not change spec.a2a.url, where its token is sent"))
		})
	})
})

// setActionUsers sets the ownership policy's actionUsers (a CEL list
// literal) for the rest of the spec, as the chart's admission.actionUsers
// does.
func setActionUsers(ctx SpecContext, list string) {
	GinkgoHelper()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "hookrun-endpoint-ownership"}, policy)).To(Succeed())
	i := slices.IndexFunc(policy.Spec.Variables, func(v admissionregistrationv1.Variable) bool { return v.Name == "actionUsers" })
	Expect(i).NotTo(Equal(-1), "the ownership policy has no variable actionUsers")
	old := policy.Spec.Variables[i].Expression
	set := func(ctx context.Context, expr string) error {
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: "hookrun-endpoint-ownership"}, policy); err != nil {
			return err
		}
		patch := client.MergeFromWithOptions(policy.DeepCopy(), client.MergeFromWithOptimisticLock{})
		policy.Spec.Variables[i].Expression = expr
		return k8sClient.Patch(ctx, policy, patch)
	}
	Expect(set(ctx, list)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(set(ctx, old)).To(Succeed()) })
}
