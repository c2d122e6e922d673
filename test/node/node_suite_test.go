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

// Package node tests the release on a real node (DESIGN section 12):
// hack/test-node.sh starts the node, makes the release and hands it over in
// NODE_TEST_* variables; these specs install it as a user would and call it
// through its Services. Run by make test-node, never by make test.
package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The release's names on the node.
const (
	releaseNamespace = "hookrun-system"
	releaseName      = "hookrun"
	receiverService  = "hookrun-receiver"
	// publicBaseURL is the receiver's Service by its cluster DNS name: the
	// senders of these specs resolve it through the node's CoreDNS.
	publicBaseURL = "http://hookrun-receiver.hookrun-system.svc.cluster.local"
)

// node is what hack/test-node.sh hands the specs.
var node struct {
	registry, version, next, key, dist, kubeconfig, clusterDNS, logs, work string
	cosign, helm, kubectl                                                  string
}

var admin client.Client

func TestNode(t *testing.T) {
	if os.Getenv("NODE_TEST_KUBECONFIG") == "" {
		t.Skip("test/node runs on the node make test-node starts (hack/test-node.sh)")
	}
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(500 * time.Millisecond)
	RunSpecs(t, "node")
}

var _ = BeforeSuite(func() {
	for dst, env := range map[*string]string{
		&node.registry: "NODE_TEST_REGISTRY", &node.version: "NODE_TEST_VERSION", &node.next: "NODE_TEST_NEXT_VERSION",
		&node.key: "NODE_TEST_KEY", &node.dist: "NODE_TEST_DIST", &node.kubeconfig: "NODE_TEST_KUBECONFIG",
		&node.clusterDNS: "NODE_TEST_CLUSTER_DNS", &node.logs: "NODE_TEST_LOGS", &node.work: "NODE_TEST_WORK",
		&node.cosign: "COSIGN", &node.helm: "HELM", &node.kubectl: "KUBECTL",
	} {
		*dst = os.Getenv(env)
		Expect(*dst).NotTo(BeEmpty(), "%s is not set: run make test-node", env)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", node.kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cfg.QPS, cfg.Burst = 100, 200
	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(agentsv1alpha1.AddToScheme(scheme)).To(Succeed())
	admin, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
})

// command runs a tool against the node (KUBECONFIG is the admin's) and
// returns its output; it fails the spec when the tool fails.
func command(ctx context.Context, name string, args ...string) string {
	GinkgoHelper()
	out, err := commandErr(ctx, name, args...)
	Expect(err).NotTo(HaveOccurred(), "%s %s:\n%s", name, strings.Join(args, " "), out)
	return out
}

func commandErr(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+node.kubeconfig, "COSIGN_PASSWORD=")
	out, err := cmd.CombinedOutput()
	fmt.Fprintf(GinkgoWriter, "$ %s %s\n%s", name, strings.Join(args, " "), out)
	return string(out), err
}

// figure records one measured figure: printed, and appended to the figures
// file make test-node prints at its end.
func figure(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	AddReportEntry("figure", line)
	f, err := os.OpenFile(node.work+"/figures.txt", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	_, err = fmt.Fprintln(f, line)
	Expect(err).NotTo(HaveOccurred())
}

// podsOf lists the pods of a release component.
func podsOf(ctx context.Context, component string) []corev1.Pod {
	GinkgoHelper()
	pods := &corev1.PodList{}
	Expect(admin.List(ctx, pods, client.InNamespace(releaseNamespace),
		client.MatchingLabels{"app.kubernetes.io/component": component})).To(Succeed())
	return pods.Items
}

func ready(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
