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
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// samplesDir holds the samples `make dev` applies (`kubectl apply -f` does
// not descend into subdirectories); senderSamplesDir one endpoint per
// sender type, applied by hand.
const (
	samplesDir       = "../../config/samples"
	senderSamplesDir = "../../config/samples/senders"
)

func validAgent(ns string) *agentsv1alpha1.Agent {
	return &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: "triage", Namespace: ns},
		Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://triage.team-a.svc:8080/"}},
	}
}

func validEndpoint(ns string) *agentsv1alpha1.WebhookEndpoint {
	return &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Name: "github-issues", Namespace: ns},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef:       agentsv1alpha1.LocalObjectReference{Name: "triage"},
			Prompt:         "Triage this issue.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
		},
	}
}

func validThread(ns string) *agentsv1alpha1.AgentThread {
	return &agentsv1alpha1.AgentThread{
		ObjectMeta: metav1.ObjectMeta{Name: "ops", Namespace: ns},
		Spec:       agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}},
	}
}

func validRun(ns string) *agentsv1alpha1.AgentRun {
	return &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Name: "github-issues-01jd5x0000000000000000000", Namespace: ns},
		Spec: agentsv1alpha1.AgentRunSpec{
			EndpointRef:    agentsv1alpha1.LocalObjectReference{Name: "github-issues"},
			AgentRef:       agentsv1alpha1.LocalObjectReference{Name: "triage"},
			Prompt:         "Triage this issue.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			Owner:          &agentsv1alpha1.Owner{User: "alice@example.com"},
			Payload:        &agentsv1alpha1.PayloadReference{SecretName: "github-issues-01jd5x0000000000000000000", Bytes: 12, ContentType: "application/json"},
			ReceivedAt:     metav1.NewTime(time.Now().Truncate(time.Second)),
		},
	}
}

// expectInvalid asserts that the API server refused a write as invalid with
// a message containing each of msgs.
func expectInvalid(err error, msgs ...string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred(), "the API server accepted an invalid object")
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	for _, m := range msgs {
		Expect(err.Error()).To(ContainSubstring(m))
	}
}

// readSamples decodes every object in the YAML files directly in dir, not
// in its subdirectories, as `kubectl apply -f dir` reads them.
func readSamples(dir string) []*unstructured.Unstructured {
	GinkgoHelper()
	var objs []*unstructured.Unstructured
	for _, f := range sampleFiles(dir) {
		objs = append(objs, readSampleFile(f)...)
	}
	return objs
}

// sampleFiles lists the YAML files directly in dir.
func sampleFiles(dir string) []string {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty())
	return files
}

// readSampleFile decodes every object in one YAML file.
func readSampleFile(f string) []*unstructured.Unstructured {
	GinkgoHelper()
	raw, err := os.Open(f)
	Expect(err).NotTo(HaveOccurred())
	defer func() { Expect(raw.Close()).To(Succeed()) }()
	dec := yaml.NewYAMLOrJSONDecoder(raw, 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else {
			Expect(err).NotTo(HaveOccurred(), f)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

// dryRunApply runs `kubectl apply --dry-run=server -f path` into a new
// namespace as an admin and returns its output.
func dryRunApply(ctx SpecContext, path string) string {
	GinkgoHelper()
	ns := newNamespace(ctx)
	kubectl, err := admin.Kubectl()
	Expect(err).NotTo(HaveOccurred())
	stdout, stderr, err := kubectl.Run("apply", "--dry-run=server", "-n", ns, "-f", path)
	out, _ := io.ReadAll(stdout)
	errOut, _ := io.ReadAll(stderr)
	Expect(err).NotTo(HaveOccurred(), "kubectl apply: %s", errOut)
	return string(out)
}

var _ = Describe("config/samples", func() {
	It("has an Agent, an AgentThread, an authenticated NewThreadEachRun endpoint and an unauthenticated ContinueExisting endpoint", func() {
		kinds := map[string]int{}
		var authNew, unauthContinue bool
		for _, u := range readSamples(samplesDir) {
			kinds[u.GetKind()]++
			if u.GetKind() != "WebhookEndpoint" {
				continue
			}
			strategy, _, _ := unstructured.NestedString(u.Object, "spec", "threadStrategy")
			unauth, _, _ := unstructured.NestedBool(u.Object, "spec", "allowUnauthenticated")
			authNew = authNew || (!unauth && strategy == "NewThreadEachRun")
			unauthContinue = unauthContinue || (unauth && strategy == "ContinueExisting")
		}
		Expect(kinds).To(HaveKeyWithValue("Agent", BeNumerically(">=", 1)))
		Expect(kinds).To(HaveKeyWithValue("AgentThread", BeNumerically(">=", 1)))
		Expect(authNew).To(BeTrue(), "no authenticated NewThreadEachRun endpoint")
		Expect(unauthContinue).To(BeTrue(), "no unauthenticated ContinueExisting endpoint")
	})

	It("are accepted by `kubectl apply --dry-run=server`, which leaves senders/ out", func(ctx SpecContext) {
		out := dryRunApply(ctx, samplesDir)
		Expect(out).To(ContainSubstring("webhookendpoint.agents.hookrun.dev/github-issues created (server dry run)"))
		Expect(out).To(ContainSubstring("webhookendpoint.agents.hookrun.dev/status-page created (server dry run)"))
		// `make dev` and the quick start apply the directory: the sender
		// samples (which need provider secrets) must stay out of it.
		for _, u := range readSamples(senderSamplesDir) {
			Expect(out).NotTo(ContainSubstring("/"+u.GetName()+" "), "a sample of senders/ was applied with config/samples")
		}
	})

	It("are stored with their defaults applied", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		for _, u := range readSamples(samplesDir) {
			u.SetNamespace(ns)
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
		}
		ep := &agentsv1alpha1.WebhookEndpoint{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "github-issues"}, ep)).To(Succeed())
		Expect(ep.Spec.AllowUnauthenticated).To(BeFalse())
		Expect(ep.Spec.ThreadStrategy).To(Equal(agentsv1alpha1.NewThreadEachRun))
	})
})

var _ = Describe("config/samples/fields", func() {
	It("are accepted by `kubectl apply --dry-run=server`", func(ctx SpecContext) {
		out := dryRunApply(ctx, filepath.Join(samplesDir, "fields"))
		Expect(out).To(ContainSubstring("webhookendpoint.agents.hookrun.dev/github-issue-fields created (server dry run)"))
	})
})

var _ = Describe("config/samples/senders", func() {
	// Each file is named after the one sender type its endpoint uses.
	fileTypes := map[string]agentsv1alpha1.SenderType{
		"bearer.yaml":           agentsv1alpha1.SenderBearer,
		"github.yaml":           agentsv1alpha1.SenderGitHub,
		"gitlab.yaml":           agentsv1alpha1.SenderGitLab,
		"hmac.yaml":             agentsv1alpha1.SenderHMAC,
		"slack.yaml":            agentsv1alpha1.SenderSlack,
		"standardwebhooks.yaml": agentsv1alpha1.SenderStandardWebhooks,
		"stripe.yaml":           agentsv1alpha1.SenderStripe,
		"cloudevents.yaml":      agentsv1alpha1.SenderCloudEvents,
	}

	It("has one endpoint for Agent triage per sender type, and the Secret each secretRef names", func() {
		files := sampleFiles(senderSamplesDir)
		names := make([]string, 0, len(files))
		for _, f := range files {
			names = append(names, filepath.Base(f))
		}
		Expect(names).To(ConsistOf(slices.Collect(maps.Keys(fileTypes))))
		for _, f := range files {
			objs := readSampleFile(f)
			secrets := map[string]*unstructured.Unstructured{}
			var endpoints []*agentsv1alpha1.WebhookEndpoint
			for _, u := range objs {
				switch u.GetKind() {
				case "Secret":
					secrets[u.GetName()] = u
				case "WebhookEndpoint":
					ep := &agentsv1alpha1.WebhookEndpoint{}
					Expect(runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, ep, true)).To(Succeed(), f)
					endpoints = append(endpoints, ep)
				default:
					Fail(f + ": unexpected kind " + u.GetKind())
				}
			}
			Expect(endpoints).To(HaveLen(1), f)
			ep := endpoints[0]
			Expect(ep.Spec.AgentRef.Name).To(Equal("triage"), f)
			Expect(ep.Spec.SenderOf()).To(Equal(fileTypes[filepath.Base(f)]), f)
			if ep.Spec.SecretRef == nil {
				Expect(secrets).To(BeEmpty(), f)
				continue
			}
			// A Secret the endpoint may read (DESIGN section 9), with a
			// value long enough to be accepted once a real one replaces it.
			sec, ok := secrets[ep.Spec.SecretRef.Name]
			Expect(ok).To(BeTrue(), "%s: no Secret %q in the file", f, ep.Spec.SecretRef.Name)
			Expect(sec.GetLabels()).To(HaveKeyWithValue("agents.hookrun.dev/allow-reference", "true"), f)
			typ, _, _ := unstructured.NestedString(sec.Object, "type")
			Expect(typ).To(Equal("Opaque"), f)
			value, _, _ := unstructured.NestedString(sec.Object, "stringData", ep.Spec.SecretRef.Key)
			Expect(len(value)).To(BeNumerically(">=", agentsv1alpha1.MinSecretBytes), f)
			Expect(strings.ToUpper(value)).To(ContainSubstring("PLACEHOLDER"), "%s: the sample's secret must be an obvious placeholder", f)
		}
	})

	It("are accepted by `kubectl apply --dry-run=server`", func(ctx SpecContext) {
		out := dryRunApply(ctx, senderSamplesDir)
		for _, u := range readSamples(senderSamplesDir) {
			kind := strings.ToLower(u.GetKind())
			if u.GetAPIVersion() == agentsv1alpha1.GroupVersion.String() {
				kind += "." + agentsv1alpha1.GroupVersion.Group
			}
			Expect(out).To(ContainSubstring(kind + "/" + u.GetName() + " created (server dry run)"))
		}
	})

	It("are stored with their defaults applied", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		for _, u := range readSamples(senderSamplesDir) {
			u.SetNamespace(ns)
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
		}
		list := &agentsv1alpha1.WebhookEndpointList{}
		Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		types := map[agentsv1alpha1.SenderType]bool{}
		for _, ep := range list.Items {
			types[ep.Spec.SenderOf()] = true
			Expect(ep.Spec.AllowUnauthenticated).To(BeFalse(), ep.Name)
			if ep.Spec.SenderOf() == agentsv1alpha1.SenderHMAC {
				Expect(ep.Spec.Sender.HMAC.Algorithm).NotTo(BeEmpty())
				Expect(ep.Spec.Sender.HMAC.Encoding).NotTo(BeEmpty())
			}
		}
		Expect(types).To(HaveLen(len(fileTypes)))
	})

	It("need their secretRef for Stripe and Slack", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		for _, f := range []string{"stripe.yaml", "slack.yaml"} {
			for _, u := range readSampleFile(filepath.Join(senderSamplesDir, f)) {
				if u.GetKind() != "WebhookEndpoint" {
					continue
				}
				u.SetNamespace(ns)
				unstructured.RemoveNestedField(u.Object, "spec", "secretRef")
				expectInvalid(k8sClient.Create(ctx, u), "spec.secretRef is required when sender.type is Stripe or Slack")
			}
		}
	})
})

var _ = Describe("defaults", func() {
	It("fills an Agent's runTimeout and maxConcurrentRuns, and leaves protocolVersion unset so the card is read", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, validAgent(ns))).To(Succeed())
		got := &agentsv1alpha1.Agent{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "triage"}, got)).To(Succeed())
		Expect(got.Spec.A2A.ProtocolVersion).To(BeEmpty())
		Expect(got.Spec.RunTimeout).To(Equal(&metav1.Duration{Duration: 15 * time.Minute}))
		Expect(got.Spec.MaxConcurrentRuns).To(Equal(int32(4)))
		Expect(got.Spec.Archived).To(BeFalse())
	})

	It("fills a run's trust with Standard", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, validRun(ns))).To(Succeed())
		got := &agentsv1alpha1.AgentRun{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(validRun(ns)), got)).To(Succeed())
		Expect(got.Spec.Trust).To(Equal(agentsv1alpha1.TrustStandard))
	})

	It("keeps the fields a user sets", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		a := validAgent(ns)
		a.Spec.A2A.ProtocolVersion = agentsv1alpha1.A2AProtocolV03
		a.Spec.RunTimeout = &metav1.Duration{Duration: 90 * time.Second}
		a.Spec.MaxConcurrentRuns = 1
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		got := &agentsv1alpha1.Agent{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(a), got)).To(Succeed())
		Expect(got.Spec.A2A.ProtocolVersion).To(Equal(agentsv1alpha1.A2AProtocolV03))
		Expect(got.Spec.RunTimeout.Duration).To(Equal(90 * time.Second))
		Expect(got.Spec.MaxConcurrentRuns).To(Equal(int32(1)))
	})
})

var _ = Describe("WebhookEndpoint validation", func() {
	DescribeTable("refuses an invalid endpoint with a clear message",
		func(ctx SpecContext, mutate func(*agentsv1alpha1.WebhookEndpoint), msgs ...string) {
			ep := validEndpoint(newNamespace(ctx))
			mutate(ep)
			expectInvalid(k8sClient.Create(ctx, ep), msgs...)
		},
		Entry("ContinueExisting without targetThreadRef", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
		}, "spec.targetThreadRef is required when threadStrategy is ContinueExisting: name an AgentThread of the same Agent"),
		Entry("NewThreadEachRun with targetThreadRef", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
		}, "spec.targetThreadRef is only allowed when threadStrategy is ContinueExisting"),
		Entry("threadNamingHint with ContinueExisting", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
			ep.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
			ep.Spec.ThreadNamingHint = "use the issue number"
		}, "spec.threadNamingHint is only allowed when threadStrategy is NewThreadEachRun"),
		Entry("secretRef on an unauthenticated endpoint", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.AllowUnauthenticated = true
			ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "mine", Key: "secret"}
		}, "spec.secretRef cannot be set when allowUnauthenticated is true: remove one of them"),
		Entry("unknown threadStrategy", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.ThreadStrategy = "Sometimes"
		}, "spec.threadStrategy", `supported values: "NewThreadEachRun", "ContinueExisting"`),
		Entry("missing threadStrategy", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.ThreadStrategy = ""
		}, "spec.threadStrategy"),
		Entry("empty prompt", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Prompt = ""
		}, "spec.prompt", "at least 1 chars long"),
		Entry("prompt of 32769 characters", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Prompt = strings.Repeat("x", 32769)
		}, "spec.prompt", "may not be more than 32768"),
		Entry("prompt of 16385 four-byte characters (65540 bytes)", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Prompt = strings.Repeat("😀", 16385)
		}, "spec.prompt", "at most 65536 bytes"),
		Entry("agentRef that is not an object name", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.AgentRef.Name = "Triage_Bot"
		}, "spec.agentRef.name", "should match"),
		Entry("agentRef name longer than 63 characters", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.AgentRef.Name = strings.Repeat("a", 64)
		}, "spec.agentRef.name", "may not be more than 63"),
		Entry("name longer than 63 characters", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Name = strings.Repeat("e", 64)
		}, "metadata.name must be at most 63 characters: it is used as a label value on runs"),
		Entry("owner without a user", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Owner = &agentsv1alpha1.Owner{Groups: []string{"team-a"}}
		}, "spec.owner.user"),
		Entry("owner with a repeated group", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Owner = &agentsv1alpha1.Owner{User: "alice", Groups: []string{"team-a", "team-a"}}
		}, "spec.owner.groups", "Duplicate value"),
		Entry("secretRef without a key", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.SecretRef = &agentsv1alpha1.SecretKeyReference{Name: "mine"}
		}, "spec.secretRef.key"),
		Entry("filter of 4097 characters", func(ep *agentsv1alpha1.WebhookEndpoint) {
			ep.Spec.Filter = `event == "` + strings.Repeat("x", 4086) + `"`
		}, "spec.filter", "may not be more than 4096"),
	)

	It("accepts a filter of 4096 characters", func(ctx SpecContext) {
		ep := validEndpoint(newNamespace(ctx))
		ep.Spec.Filter = `event == "` + strings.Repeat("x", 4085) + `"`
		Expect(ep.Spec.Filter).To(HaveLen(4096))
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
	})

	It("accepts a prompt of 32768 two-byte characters, and of 16384 four-byte ones (65536 bytes)", func(ctx SpecContext) {
		ep := validEndpoint(newNamespace(ctx))
		ep.Spec.Prompt = strings.Repeat("é", 32768)
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		ep = validEndpoint(newNamespace(ctx))
		ep.Spec.Prompt = strings.Repeat("😀", 16384)
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
	})

	It("accepts a ContinueExisting endpoint with a thread and an unauthenticated one", func(ctx SpecContext) {
		ep := validEndpoint(newNamespace(ctx))
		ep.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
		ep.Spec.TargetThreadRef = &agentsv1alpha1.LocalObjectReference{Name: "ops"}
		ep.Spec.AllowUnauthenticated = true
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
	})

	It("refuses a switch to ContinueExisting that forgets the thread", func(ctx SpecContext) {
		ep := validEndpoint(newNamespace(ctx))
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		patch := client.MergeFrom(ep.DeepCopy())
		ep.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
		expectInvalid(k8sClient.Patch(ctx, ep, patch), "spec.targetThreadRef is required when threadStrategy is ContinueExisting")
	})

	It("takes spec.endpointIDSecretRef only while the endpoint has no ID, and lets it go at any time", func(ctx SpecContext) {
		ref := &agentsv1alpha1.SecretKeyReference{Name: "hook-id", Key: "id"}
		ep := validEndpoint(newNamespace(ctx))
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		patch := client.MergeFrom(ep.DeepCopy())
		ep.Spec.EndpointIDSecretRef = ref
		Expect(k8sClient.Patch(ctx, ep, patch)).To(Succeed(), "no ID yet: the pinned one can still be chosen")
		patch = client.MergeFrom(ep.DeepCopy())
		ep.Spec.EndpointIDSecretRef = &agentsv1alpha1.SecretKeyReference{Name: "other-id", Key: "id"}
		Expect(k8sClient.Patch(ctx, ep, patch)).To(Succeed(), "nor is it read yet")

		ep.Status.EndpointID = strings.Repeat("A", 43)
		Expect(k8sClient.Status().Update(ctx, ep)).To(Succeed(), "the operator writes the ID it read")
		patch = client.MergeFrom(ep.DeepCopy())
		ep.Spec.EndpointIDSecretRef = ref
		expectInvalid(k8sClient.Patch(ctx, ep, patch), "spec.endpointIDSecretRef can be set only when the endpoint is created, or while it has no endpoint ID yet")
		patch = client.MergeFrom(ep.DeepCopy())
		ep.Spec.EndpointIDSecretRef = nil
		Expect(k8sClient.Patch(ctx, ep, patch)).To(Succeed(), "removing it keeps the ID")
		patch = client.MergeFrom(ep.DeepCopy())
		ep.Spec.EndpointIDSecretRef = ref
		expectInvalid(k8sClient.Patch(ctx, ep, patch), "spec.endpointIDSecretRef can be set only when the endpoint is created")

		unpinned := validEndpoint(newNamespace(ctx))
		Expect(k8sClient.Create(ctx, unpinned)).To(Succeed())
		unpinned.Status.EndpointID = strings.Repeat("B", 43)
		Expect(k8sClient.Status().Update(ctx, unpinned)).To(Succeed())
		patch = client.MergeFrom(unpinned.DeepCopy())
		unpinned.Spec.EndpointIDSecretRef = ref
		expectInvalid(k8sClient.Patch(ctx, unpinned, patch), "store its status.endpointID in a Secret and create an endpoint that names it")
	})

	DescribeTable("refuses invalid status values",
		func(ctx SpecContext, mutate func(*agentsv1alpha1.WebhookEndpointStatus), msgs ...string) {
			ep := validEndpoint(newNamespace(ctx))
			Expect(k8sClient.Create(ctx, ep)).To(Succeed())
			mutate(&ep.Status)
			expectInvalid(k8sClient.Status().Update(ctx, ep), msgs...)
		},
		Entry("unknown phase", func(s *agentsv1alpha1.WebhookEndpointStatus) { s.Phase = "Sleeping" },
			"status.phase", `supported values: "Active", "Paused"`),
		Entry("unknown pause reason", func(s *agentsv1alpha1.WebhookEndpointStatus) { s.PauseReason = "Tired" },
			"status.pauseReason", `supported values: "Paused", "OwnerNotMember", ""`),
		Entry("secret hash not in sha256:<hex> form", func(s *agentsv1alpha1.WebhookEndpointStatus) { s.SecretHash = "plain-secret" },
			"status.secretHash", "should match"),
		Entry("endpoint ID that is not 43 base64url characters", func(s *agentsv1alpha1.WebhookEndpointStatus) { s.EndpointID = "short" },
			"status.endpointID", "should match"),
	)

	It("stores a status written through the status subresource and leaves the spec alone", func(ctx SpecContext) {
		ep := validEndpoint(newNamespace(ctx))
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		ep.Status.Phase = agentsv1alpha1.EndpointPaused
		ep.Status.PauseReason = agentsv1alpha1.PauseReasonOwnerNotMember
		ep.Status.SecretHash = agentsv1alpha1.SecretHash([]byte(strings.Repeat("s", 32)))
		ep.Status.EndpointID = strings.Repeat("A", 43)
		ep.Spec.Prompt = "changed through status"
		Expect(k8sClient.Status().Update(ctx, ep)).To(Succeed())
		got := &agentsv1alpha1.WebhookEndpoint{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ep), got)).To(Succeed())
		Expect(got.Status.PauseReason).To(Equal(agentsv1alpha1.PauseReasonOwnerNotMember))
		Expect(got.Status.SecretHash).To(Equal(ep.Status.SecretHash))
		Expect(got.Spec.Prompt).To(Equal("Triage this issue."))
	})
})

var _ = Describe("Agent validation", func() {
	DescribeTable("refuses an invalid agent with a clear message",
		func(ctx SpecContext, mutate func(*agentsv1alpha1.Agent), msgs ...string) {
			a := validAgent(newNamespace(ctx))
			mutate(a)
			expectInvalid(k8sClient.Create(ctx, a), msgs...)
		},
		Entry("a2a.url with another scheme", func(a *agentsv1alpha1.Agent) { a.Spec.A2A.URL = "ftp://triage.example.com/" },
			"a2a.url must be an absolute http:// or https:// URL, for example http://triage.team-a.svc:8080/"),
		Entry("a2a.url that is not a URL", func(a *agentsv1alpha1.Agent) { a.Spec.A2A.URL = "triage bot" },
			"a2a.url must be an absolute http:// or https:// URL"),
		Entry("a2a.url without a host", func(a *agentsv1alpha1.Agent) { a.Spec.A2A.URL = "http:///rpc" },
			"a2a.url must be an absolute http:// or https:// URL"),
		Entry("missing a2a.url", func(a *agentsv1alpha1.Agent) { a.Spec.A2A.URL = "" },
			"spec.a2a.url"),
		Entry("unknown protocolVersion", func(a *agentsv1alpha1.Agent) { a.Spec.A2A.ProtocolVersion = "2.0" },
			"spec.a2a.protocolVersion", `supported values: "0.3", "1.0"`),
		Entry("negative maxConcurrentRuns", func(a *agentsv1alpha1.Agent) { a.Spec.MaxConcurrentRuns = -1 },
			"spec.maxConcurrentRuns", "should be greater than or equal to 1"),
		Entry("runTimeout shorter than 1s", func(a *agentsv1alpha1.Agent) { a.Spec.RunTimeout = &metav1.Duration{Duration: 500 * time.Millisecond} },
			"runTimeout must be between 1s and 24h, for example 15m"),
		Entry("runTimeout longer than 24h", func(a *agentsv1alpha1.Agent) { a.Spec.RunTimeout = &metav1.Duration{Duration: 25 * time.Hour} },
			"runTimeout must be between 1s and 24h, for example 15m"),
		Entry("authSecretRef without a name", func(a *agentsv1alpha1.Agent) {
			a.Spec.A2A.AuthSecretRef = &agentsv1alpha1.SecretKeyReference{Key: "token"}
		}, "spec.a2a.authSecretRef.name"),
		Entry("name longer than 63 characters", func(a *agentsv1alpha1.Agent) { a.Name = strings.Repeat("a", 64) },
			"metadata.name must be at most 63 characters"),
		Entry("a2a.tls at an http:// url", func(a *agentsv1alpha1.Agent) {
			a.Spec.A2A.TLS = &agentsv1alpha1.A2ATLS{CASecretRef: &agentsv1alpha1.SecretKeyReference{Name: "ca", Key: "ca.crt"}}
		}, "a2a.tls needs an https:// a2a.url"),
		Entry("a2a.tls naming no Secret", func(a *agentsv1alpha1.Agent) {
			a.Spec.A2A.URL = "https://triage.team-a.svc/"
			a.Spec.A2A.TLS = &agentsv1alpha1.A2ATLS{}
		}, "a2a.tls names caSecretRef, clientCertSecretRef or both"),
		Entry("a2a.tls.clientCertSecretRef without a name", func(a *agentsv1alpha1.Agent) {
			a.Spec.A2A.URL = "https://triage.team-a.svc/"
			a.Spec.A2A.TLS = &agentsv1alpha1.A2ATLS{ClientCertSecretRef: &agentsv1alpha1.SecretReference{}}
		}, "spec.a2a.tls.clientCertSecretRef.name"),
	)

	// Written as YAML would be: the typed client omits zero values.
	DescribeTable("refuses raw values the Go types cannot express",
		func(ctx SpecContext, value any, field string, msgs ...string) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(agentsv1alpha1.GroupVersion.WithKind("Agent"))
			u.SetNamespace(newNamespace(ctx))
			u.SetName("triage")
			Expect(unstructured.SetNestedField(u.Object, "http://triage:8080/", "spec", "a2a", "url")).To(Succeed())
			Expect(unstructured.SetNestedField(u.Object, value, "spec", field)).To(Succeed())
			expectInvalid(k8sClient.Create(ctx, u), msgs...)
		},
		Entry("runTimeout that is not a duration", "soon", "runTimeout", "spec.runTimeout", "should match"),
		Entry("maxConcurrentRuns of 0", int64(0), "maxConcurrentRuns", "spec.maxConcurrentRuns", "should be greater than or equal to 1"),
	)

	It("accepts https URLs with a port and a path", func(ctx SpecContext) {
		a := validAgent(newNamespace(ctx))
		a.Spec.A2A.URL = "https://agents.example.com:8443/a2a/triage"
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
	})
})

var _ = Describe("AgentThread validation", func() {
	It("refuses moving a thread to another agent", func(ctx SpecContext) {
		th := validThread(newNamespace(ctx))
		Expect(k8sClient.Create(ctx, th)).To(Succeed())
		patch := client.MergeFrom(th.DeepCopy())
		th.Spec.AgentRef.Name = "other"
		expectInvalid(k8sClient.Patch(ctx, th, patch), "spec.agentRef is immutable: a thread cannot move to another Agent")
	})

	It("lets the title change", func(ctx SpecContext) {
		th := validThread(newNamespace(ctx))
		Expect(k8sClient.Create(ctx, th)).To(Succeed())
		patch := client.MergeFrom(th.DeepCopy())
		th.Spec.Title = "Renamed"
		Expect(k8sClient.Patch(ctx, th, patch)).To(Succeed())
	})

	It("refuses a thread without an agent", func(ctx SpecContext) {
		th := validThread(newNamespace(ctx))
		th.Spec.AgentRef.Name = ""
		expectInvalid(k8sClient.Create(ctx, th), "spec.agentRef.name")
	})
})

var _ = Describe("AgentRun validation", func() {
	It("refuses any change to the spec", func(ctx SpecContext) {
		run := validRun(newNamespace(ctx))
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		patch := client.MergeFrom(run.DeepCopy())
		run.Spec.Prompt = "something else"
		expectInvalid(k8sClient.Patch(ctx, run, patch), "AgentRun spec is immutable: it records a call as it was received")
	})

	It("lets the status change", func(ctx SpecContext) {
		run := validRun(newNamespace(ctx))
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		patch := client.MergeFrom(run.DeepCopy())
		run.Status.State = agentsv1alpha1.RunSkipped
		run.Status.Message = "rate limit of 60 calls per minute exceeded"
		Expect(k8sClient.Status().Patch(ctx, run, patch)).To(Succeed())
	})

	DescribeTable("refuses an invalid run",
		func(ctx SpecContext, mutate func(*agentsv1alpha1.AgentRun), msgs ...string) {
			run := validRun(newNamespace(ctx))
			mutate(run)
			expectInvalid(k8sClient.Create(ctx, run), msgs...)
		},
		Entry("unknown trust", func(r *agentsv1alpha1.AgentRun) { r.Spec.Trust = "High" },
			"spec.trust", `supported values: "Standard", "Low"`),
		Entry("payload over 1 MiB", func(r *agentsv1alpha1.AgentRun) { r.Spec.Payload.Bytes = 1<<20 + 1 },
			"spec.payload.bytes", "should be less than or equal to 1048576"),
		Entry("ContinueExisting without a thread", func(r *agentsv1alpha1.AgentRun) {
			r.Spec.ThreadStrategy = agentsv1alpha1.ContinueExisting
		}, "spec.targetThreadRef is required when threadStrategy is ContinueExisting"),
		Entry("empty prompt", func(r *agentsv1alpha1.AgentRun) { r.Spec.Prompt = "" },
			"spec.prompt", "at least 1 chars long"),
	)

	It("refuses an unknown state", func(ctx SpecContext) {
		run := validRun(newNamespace(ctx))
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		run.Status.State = "done"
		expectInvalid(k8sClient.Status().Update(ctx, run), "status.state",
			`supported values: "queued", "running", "success", "error", "skipped"`)
	})

	It("keeps runs listable by endpoint label", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		run := validRun(ns)
		run.Labels = map[string]string{agentsv1alpha1.LabelEndpoint: "github-issues", agentsv1alpha1.LabelAgent: "triage"}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		other := validRun(ns)
		other.Name = "other-01jd5x0000000000000000000"
		other.Labels = map[string]string{agentsv1alpha1.LabelEndpoint: "other"}
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		list := &agentsv1alpha1.AgentRunList{}
		Expect(k8sClient.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{agentsv1alpha1.LabelEndpoint: "github-issues"})).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		Expect(list.Items[0].Name).To(Equal(run.Name))
	})
})
