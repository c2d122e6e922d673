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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hookrun/hookrun/controllers"
	"github.com/hookrun/hookrun/controllers/sharedflags"
	"github.com/hookrun/hookrun/test/testenv"
)

// The dispatch settings reach the operator as flags it accepts, and the
// schema refuses a call timeout the operator would.
func TestChartOperatorDispatch(t *testing.T) {
	g := NewWithT(t)
	operatorOptions := func(args ...string) *controllers.OperatorOptions {
		container := onlyContainer(g, render(t, args...)[deploymentKey("operator")])
		flags, _, err := unstructured.NestedStringSlice(container, "args")
		g.Expect(err).NotTo(HaveOccurred())
		opts, shared := controllers.NewOperatorOptions(), sharedflags.NewOptions()
		parseArgs(g, flags, opts.BindFlags, sharedFlags(shared, "operator"))
		g.Expect(opts.Validate()).To(Succeed())
		return opts
	}
	defaults := operatorOptions()
	g.Expect(defaults.DispatchWorkers).To(Equal(controllers.DefaultDispatchWorkers))
	g.Expect(defaults.A2ACallTimeout).To(Equal(controllers.DefaultA2ACallTimeout))

	set := operatorOptions("--set", "operator.dispatchWorkers=12", "--set", "operator.a2aCallTimeout=1m30s")
	g.Expect(set.DispatchWorkers).To(Equal(12))
	g.Expect(set.A2ACallTimeout).To(Equal(90 * time.Second))

	chart := filepath.Join(testenv.Root(), "charts", "hookrun")
	for _, bad := range []string{"operator.a2aCallTimeout=0", "operator.a2aCallTimeout=-1s", "operator.a2aCallTimeout=soon"} {
		out, err := helmCommand(t, "template", "hookrun", chart, "--set", "publicBaseURL=https://hooks.example.com",
			"--set-string", bad).CombinedOutput()
		g.Expect(err).To(HaveOccurred(), "helm template --set %s:\n%s", bad, out)
		g.Expect(string(out)).To(ContainSubstring("does not match pattern"))
	}
}
