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

// Package e2e runs a user's whole journey against hookrun as real processes
// (the same ones `make dev` starts): etcd, kube-apiserver and
// kube-controller-manager (so the garbage collector runs), the demo agent,
// and the operator and the receiver built from this tree, each with its own
// service account. Calls are real HTTP; kubectl is the one built with the
// control plane.
package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/hookrun/hookrun/hack/devcluster"
	"github.com/hookrun/hookrun/test/testenv"
)

const (
	ns = "e2e"
	// Small limits so that the 429 spec reaches them quickly; every spec
	// that is not about rate limits uses its own endpoint.
	rateLimit             = 20
	unauthRateLimit       = 10
	sampleEndpoint        = "github-issues"
	sampleUnauthenticated = "status-page"
	// shutdownDelay is the receiver's --shutdown-delay (drain_test.go).
	shutdownDelay = 2 * time.Second
)

var (
	cluster *devcluster.Cluster
	// workDir holds the processes' logs; kept when the suite fails.
	workDir string
	// otlp receives the spans both processes export.
	otlp *collector
	// demoAgentURL is the demo agent's base URL.
	demoAgentURL string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "end-to-end")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	Expect(assets).NotTo(BeEmpty(), "KUBEBUILDER_ASSETS is not set: run `make test`")
	root := testenv.Root()
	hookrun, demoAgent, err := devcluster.Build(ctx, root, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	addrs, err := devcluster.FreeAddresses(2)
	Expect(err).NotTo(HaveOccurred())
	demoAgentURL = "http://" + addrs[1] + "/"
	// Not a GinkgoT().TempDir(): the logs of a failed run must outlive it
	// (ReportAfterSuite removes them after a run that passed).
	workDir, err = os.MkdirTemp("", "hookrun-e2e-")
	Expect(err).NotTo(HaveOccurred())
	// Both processes export their spans here; it outlives them (their
	// last spans go out as they stop).
	otlp = newCollector()
	DeferCleanup(otlp.srv.Close)
	tracing := "--otlp-endpoint=" + otlp.srv.URL
	cluster, err = devcluster.Start(ctx, devcluster.Options{
		Root: root, Assets: assets,
		Hookrun: hookrun, DemoAgentBinary: demoAgent,
		WorkDir:         filepath.Join(workDir, "cluster"),
		ReceiverAddress: addrs[0], AgentAddress: addrs[1],
		ReceiverArgs: []string{fmt.Sprintf("--rate-limit=%d", rateLimit), fmt.Sprintf("--unauthenticated-rate-limit=%d", unauthRateLimit),
			"--shutdown-delay=" + shutdownDelay.String(), tracing},
		OperatorArgs:    []string{"--owner-recheck-interval=2s", tracing},
		SampleNamespace: ns,
		Log:             GinkgoWriter,
	})
	Expect(err).NotTo(HaveOccurred())
	// make dev's readiness asked the receiver's health port, not its
	// receive route: no call was made, so no refusal is in the samples'
	// history before the user sends anything.
	metrics, err := http.Get(cluster.MetricsURL(devcluster.Receiver))
	Expect(err).NotTo(HaveOccurred())
	exposition, err := io.ReadAll(metrics.Body)
	_ = metrics.Body.Close()
	Expect(err).NotTo(HaveOccurred())
	Expect(string(exposition)).NotTo(ContainSubstring("hookrun_receiver_requests_total{"), "the cluster's readiness called the receive route")
	apiServer, err := url.Parse(cluster.Admin.Host)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		cluster.Stop()
		// Stopping leaves nothing listening (as Ctrl-C on make dev).
		for _, addr := range []string{addrs[0], addrs[1], apiServer.Host} {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				_ = conn.Close()
			}
			Expect(err).To(HaveOccurred(), "%s still answers after the cluster stopped", addr)
		}
	})
}, NodeTimeout(10*time.Minute))

// The processes' logs go with a run that passed, and stay for one that
// failed anywhere (a spec, the suite's setup or its cleanup).
var _ = ReportAfterSuite("the processes' logs", func(r Report) {
	if workDir == "" {
		return
	}
	if !r.SuiteSucceeded {
		fmt.Fprintf(os.Stderr, "the suite failed: the processes' logs are kept in %s\n", filepath.Join(workDir, "cluster", "logs"))
		return
	}
	Expect(os.RemoveAll(workDir)).To(Succeed())
})

var _ = AfterEach(func() {
	Expect(cluster.Exited()).To(Succeed(), "no process of the cluster died during the spec")
})

// kubectl runs the control plane's kubectl as the developer.
func kubectl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, cluster.Kubectl(), append([]string{"--kubeconfig", cluster.DeveloperKubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
