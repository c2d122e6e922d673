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
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hookrun/hookrun/controllers"
	"github.com/hookrun/hookrun/controllers/sharedflags"
	"github.com/hookrun/hookrun/controllers/tracing"
	"github.com/hookrun/hookrun/receiver"
	"github.com/hookrun/hookrun/test/testenv"
)

// The receiver's bounds reach it as flags it accepts, and the Go runtime
// knows the container's memory limit.
func TestChartReceiverBounds(t *testing.T) {
	g := NewWithT(t)
	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	objs := objects(t, helm(t, "template", "hookrun", chart, "--namespace", release,
		"--set", "publicBaseURL=https://hooks.example.com",
		"--set", "receiver.maxQueuedRunsPerEndpoint=7", "--set", "receiver.maxInflightBodyBytes=67108864"))
	container := onlyContainer(g, objs["apps/v1/Deployment/"+release+"/hookrun-receiver"])

	env, _, err := unstructured.NestedSlice(container, "env")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env).To(ContainElement(Equal(map[string]any{
		"name": "GOMEMLIMIT", "valueFrom": map[string]any{"resourceFieldRef": map[string]any{"resource": "limits.memory"}},
	})))

	args, _, err := unstructured.NestedStringSlice(container, "args")
	g.Expect(err).NotTo(HaveOccurred())
	opts, shared := receiver.NewOptions(), sharedflags.NewOptions()
	parseArgs(g, args, opts.BindFlags, sharedFlags(shared, "receiver"))
	g.Expect(opts.Validate()).To(Succeed())
	g.Expect(shared.Validate()).To(Succeed())
	g.Expect(opts.MaxQueuedRunsPerEndpoint).To(Equal(7))
	g.Expect(opts.MaxQueuedRunsPerAgent).To(Equal(receiver.DefaultMaxQueuedRunsPerAgent))
	g.Expect(opts.MaxInflightBodyBytes).To(Equal(int64(64 << 20)))
}

// receiver.oidcIssuers reaches the receiver and the operator as the same
// --oidc-issuers, which both accept; the schema refuses what they would.
func TestChartOIDCIssuers(t *testing.T) {
	g := NewWithT(t)
	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	const issuers = "https://token.actions.githubusercontent.com,https://accounts.google.com"
	objs := objects(t, helm(t, "template", "hookrun", chart, "--namespace", release,
		"--set", "publicBaseURL=https://hooks.example.com", "--set", "receiver.oidcIssuers={"+issuers+"}"))
	argsOf := func(name string) []string {
		args, _, err := unstructured.NestedStringSlice(onlyContainer(g, objs["apps/v1/Deployment/"+release+"/"+name]), "args")
		g.Expect(err).NotTo(HaveOccurred())
		return args
	}
	rcv, shared := receiver.NewOptions(), sharedflags.NewOptions()
	parseArgs(g, argsOf("hookrun-receiver"), rcv.BindFlags, sharedFlags(shared, "receiver"))
	g.Expect(rcv.Validate()).To(Succeed())
	op, opShared := controllers.NewOperatorOptions(), sharedflags.NewOptions()
	parseArgs(g, argsOf("hookrun-operator"), op.BindFlags, sharedFlags(opShared, "operator"))
	g.Expect(op.Validate()).To(Succeed())
	g.Expect(shared.Validate()).To(Succeed())
	g.Expect(shared.OIDCIssuers).To(Equal(strings.Split(issuers, ",")))
	g.Expect(opShared.OIDCIssuers).To(Equal(shared.OIDCIssuers))
	g.Expect(rcv.OIDCMaxTokenLifetime).To(Equal(time.Hour), "receiver.oidcMaxTokenLifetime's default")

	objs = objects(t, helm(t, "template", "hookrun", chart, "--namespace", release,
		"--set", "publicBaseURL=https://hooks.example.com", "--set", "receiver.oidcMaxTokenLifetime=90m"))
	rcv = receiver.NewOptions()
	parseArgs(g, argsOf("hookrun-receiver"), rcv.BindFlags, sharedFlags(sharedflags.NewOptions(), "receiver"))
	g.Expect(rcv.Validate()).To(Succeed())
	g.Expect(rcv.OIDCMaxTokenLifetime).To(Equal(90 * time.Minute))

	out, err := helmCommand(t, "template", "hookrun", chart, "--set", "publicBaseURL=https://hooks.example.com",
		"--set", "receiver.oidcIssuers={http://issuer.example}").CombinedOutput()
	g.Expect(err).To(HaveOccurred(), "an issuer that is not https:\n%s", out)
	g.Expect(string(out)).To(ContainSubstring("does not match pattern"))
}

// onlyContainer is the one container of a rendered Deployment.
func onlyContainer(g Gomega, d *unstructured.Unstructured) map[string]any {
	g.Expect(d).NotTo(BeNil())
	containers, _, err := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(containers).To(HaveLen(1))
	container, ok := containers[0].(map[string]any)
	g.Expect(ok).To(BeTrue())
	return container
}

// receiver.shutdownDelay reaches the receiver as --shutdown-delay, and the
// pod's grace period covers everything the receiver does after SIGTERM:
// the delay, the drain, the last rejection report (StopTimeout) and the last
// spans. The schema refuses a delay the chart could not add up.
func TestChartReceiverDrains(t *testing.T) {
	g := NewWithT(t)
	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	for value, want := range map[string]time.Duration{"": receiver.DefaultShutdownDelay, "0s": 0, "45s": 45 * time.Second, "1m30s": 90 * time.Second, "2m": 2 * time.Minute} {
		args := []string{"template", "hookrun", chart, "--namespace", release, "--set", "publicBaseURL=https://hooks.example.com"}
		if value != "" {
			args = append(args, "--set", "receiver.shutdownDelay="+value)
		}
		deployment := objects(t, helm(t, args...))["apps/v1/Deployment/"+release+"/hookrun-receiver"]
		flags, _, err := unstructured.NestedStringSlice(onlyContainer(g, deployment), "args")
		g.Expect(err).NotTo(HaveOccurred())
		opts, shared := receiver.NewOptions(), sharedflags.NewOptions()
		parseArgs(g, flags, opts.BindFlags, sharedFlags(shared, "receiver"))
		g.Expect(opts.Validate()).To(Succeed())
		g.Expect(opts.ShutdownDelay).To(Equal(want), "receiver.shutdownDelay=%q", value)

		grace, found, err := unstructured.NestedInt64(deployment.Object, "spec", "template", "spec", "terminationGracePeriodSeconds")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(BeTrue())
		g.Expect(time.Duration(grace)*time.Second).To(BeNumerically(">", opts.StopTimeout()+tracing.FlushTimeout),
			"receiver.shutdownDelay=%q: the pod would be killed while it drains", value)
	}

	out, err := helmCommand(t, "template", "hookrun", chart, "--set", "publicBaseURL=https://hooks.example.com",
		"--set", "receiver.shutdownDelay=500ms").CombinedOutput()
	g.Expect(err).To(HaveOccurred(), "a delay in milliseconds:\n%s", out)
	g.Expect(string(out)).To(ContainSubstring("does not match pattern"))
}

// receiver.rateLimit.store reaches the receiver as --rate-limit-store, its
// password from existingSecret as the variable the receiver reads; an
// integer receiver.rateLimit (earlier releases' form) is still the limit;
// the schema refuses a URL the receiver would refuse, or one with a
// password, which would be in the Deployment for everyone who reads it.
func TestChartRateLimitStore(t *testing.T) {
	g := NewWithT(t)
	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	render := func(values ...string) (*receiver.Options, []any) {
		args := []string{"template", "hookrun", chart, "--namespace", release, "--set", "publicBaseURL=https://hooks.example.com"}
		for _, v := range values {
			args = append(args, "--set", v)
		}
		// Standard output only: an integer receiver.rateLimit makes helm
		// warn (on standard error) that it replaces the default's table.
		out, err := helmCommand(t, args...).Output()
		g.Expect(err).NotTo(HaveOccurred())
		container := onlyContainer(g, objects(t, string(out))["apps/v1/Deployment/"+release+"/hookrun-receiver"])
		flags, _, err := unstructured.NestedStringSlice(container, "args")
		g.Expect(err).NotTo(HaveOccurred())
		env, _, err := unstructured.NestedSlice(container, "env")
		g.Expect(err).NotTo(HaveOccurred())
		opts := receiver.NewOptions()
		parseArgs(g, flags, opts.BindFlags, sharedFlags(sharedflags.NewOptions(), "receiver"))
		g.Expect(opts.Validate()).To(Succeed())
		return opts, env
	}
	passwordVar := HaveKeyWithValue("name", receiver.StorePasswordEnv)

	opts, env := render()
	g.Expect(opts.RateLimit).To(Equal(receiver.DefaultRateLimit))
	g.Expect(opts.RateLimitStore).To(BeEmpty(), "each replica counts alone by default")
	g.Expect(env).NotTo(ContainElement(passwordVar))

	opts, env = render("receiver.rateLimit.perMinute=90", "receiver.rateLimit.store=rediss://valkey.cache.svc:6380/2",
		"receiver.rateLimit.existingSecret=valkey-auth", "receiver.rateLimit.existingSecretKey=valkey-password")
	g.Expect(opts.RateLimit).To(Equal(90))
	g.Expect(opts.RateLimitStore).To(Equal("rediss://valkey.cache.svc:6380/2"))
	g.Expect(env).To(ContainElement(Equal(map[string]any{"name": receiver.StorePasswordEnv, "valueFrom": map[string]any{
		"secretKeyRef": map[string]any{"name": "valkey-auth", "key": "valkey-password"}}})))

	opts, _ = render("receiver.rateLimit=100")
	g.Expect(opts.RateLimit).To(Equal(100), "an integer receiver.rateLimit is the limit")

	for _, bad := range []string{"receiver.rateLimit.store=redis://:hunter2@valkey:6379", "receiver.rateLimit.store=http://valkey:6379",
		"receiver.rateLimit.perMinute=0", "receiver.rateLimit=0"} {
		out, err := helmCommand(t, "template", "hookrun", chart, "--set", "publicBaseURL=https://hooks.example.com", "--set", bad).CombinedOutput()
		g.Expect(err).To(HaveOccurred(), "%s:\n%s", bad, out)
		g.Expect(string(out)).To(ContainSubstring("/receiver/rateLimit"), bad)
	}
}
