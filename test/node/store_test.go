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

package node

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hookrun/hookrun/hack/redisserver"
)

// storeSecret holds the password of the node's redis-server, as an
// installer keeps the password of a store they run.
const storeSecret = "hookrun-rate-limit-store"

// deliverMany sends n GitHub deliveries, one after the other, to one new
// endpoint of ns and counts what the sender saw ("202", or the refusal).
func deliverMany(ctx context.Context, ns, prefix string, n int) map[string]int {
	GinkgoHelper()
	ep := githubEndpoints(ctx, ns, []string{demoAgent(ctx, ns)}, 1)[0]
	c := sender(10 * time.Second)
	statuses := map[string]int{}
	for i := range n {
		a := deliver(ctx, c, ep, fmt.Sprintf("%s-%03d", prefix, i))
		if cl := a.class(); cl != "" {
			statuses[cl]++
		} else {
			statuses["202"]++
		}
	}
	return statuses
}

// nodeStore is the redis-server the release's receivers share from
// sharedStore on; it stops with the suite.
var nodeStore *redisserver.Server

var _ = AfterSuite(func() {
	if nodeStore != nil {
		nodeStore.Close()
	}
})

// sharedStore runs a redis-server on the node's address (where its Pods
// reach the host) with a password, and points the release's receivers at it
// as an installer would: a Secret and helm upgrade --reuse-values; it waits
// until both receivers are replaced. The release keeps it: the specs that
// follow (the throughput, the deleted Pod, kill -9, the upgrade) run with
// it, and no second rollout is spent setting it back. It returns the
// store's address.
func sharedStore(ctx context.Context) string {
	GinkgoHelper()
	Expect(redisserver.Available()).To(BeTrue(), "redis-server is not on PATH: hack/install-test-packages.sh installs it")
	cfg, err := clientcmd.BuildConfigFromFlags("", node.kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	api, err := url.Parse(cfg.Host)
	Expect(err).NotTo(HaveOccurred())
	const password = "node-store-password"
	store, err := redisserver.StartOn(api.Hostname(), password)
	Expect(err).NotTo(HaveOccurred())
	nodeStore = store
	Expect(admin.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: storeSecret},
		StringData: map[string]string{"password": password},
	})).To(Succeed())
	host, port, err := net.SplitHostPort(store.Addr)
	Expect(err).NotTo(HaveOccurred())
	upgradeReceivers(ctx, "receiver.rateLimit.store=redis://"+net.JoinHostPort(host, port), "receiver.rateLimit.existingSecret="+storeSecret)
	return store.Addr
}

// upgradeReceivers sets values of the installed release and waits for the
// receivers' rollout.
func upgradeReceivers(ctx context.Context, values ...string) {
	GinkgoHelper()
	args := []string{"upgrade", releaseName, "oci://" + node.registry + "/hookrun/charts/hookrun",
		"--version", strings.TrimPrefix(node.version, "v"), "--plain-http", "-n", releaseNamespace, "--reuse-values"}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	command(ctx, node.helm, args...)
	command(ctx, node.kubectl, "-n", releaseNamespace, "rollout", "status", "deployment/hookrun-receiver", "--timeout=5m")
	// The old Pods gone too: one still draining would count alone.
	Eventually(func(g Gomega) {
		pods := podsOf(ctx, "receiver")
		g.Expect(pods).To(HaveLen(2))
		for _, p := range pods {
			g.Expect(p.DeletionTimestamp).To(BeNil())
			g.Expect(ready(p)).To(BeTrue())
		}
	}).Should(Succeed())
}
