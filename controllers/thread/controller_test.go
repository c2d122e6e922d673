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

package thread

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/status/statustest"
)

func TestThreadSummary(t *testing.T) {
	agent := &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "triage"}}
	archived := agent.DeepCopy()
	archived.Spec.Archived = true
	th := &agentsv1alpha1.AgentThread{Spec: agentsv1alpha1.AgentThreadSpec{AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"}}}
	cases := []struct {
		name     string
		agent    *agentsv1alpha1.Agent
		progress agentsv1alpha1.Progress
		reason   string
		message  string
	}{
		{"agent available", agent, agentsv1alpha1.ProgressCurrent, agentsv1alpha1.ReasonAvailable, `Agent "triage"`},
		{"agent archived: as asked", archived, agentsv1alpha1.ProgressCurrent, agentsv1alpha1.ReasonAgentArchived, "archived"},
		{"agent missing", nil, agentsv1alpha1.ProgressStalled, agentsv1alpha1.ReasonAgentNotFound, `Agent "triage" does not exist`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			statustest.CheckSummary(t, threadSummary(th, tc.agent), tc.progress, tc.reason, tc.message)
		})
	}
}
