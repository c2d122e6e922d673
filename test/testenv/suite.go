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

package testenv

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// RunSuite runs a package's Ginkgo specs under description with the
// operator suites' waits: Eventually up to 20 s, polling every 50 ms;
// Consistently for 1 s.
func RunSuite(t *testing.T, description string) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	gomega.SetDefaultEventuallyTimeout(20 * time.Second)
	gomega.SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	gomega.SetDefaultConsistentlyDuration(time.Second)
	ginkgo.RunSpecs(t, description)
}

// StartSuiteCluster is a suite's BeforeSuite start: logs to the spec's
// writer, the API server of StartCluster (no extra flags), stopped when the
// suite ends.
func StartSuiteCluster(ctx context.Context, scheme *runtime.Scheme) *Cluster {
	ginkgo.GinkgoHelper()
	logf.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true)))
	gomega.Expect(os.Getenv("KUBEBUILDER_ASSETS")).NotTo(gomega.BeEmpty(), "KUBEBUILDER_ASSETS is not set: run `make test`")
	cluster, err := StartCluster(ctx, scheme, nil)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(cluster.Stop)
	return cluster
}
