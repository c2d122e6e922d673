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

package agent

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Table tests of the Agent finalizer's decisions.

var agentRef = metav1.OwnerReference{APIVersion: "agents.hookrun.dev/v1alpha1", Kind: "Agent", Name: "triage", UID: "a-1"}

func TestCleanupStepFor(t *testing.T) {
	now := metav1.NewTime(time.Now())
	agent := func(deleting bool, finalizers ...string) *agentsv1alpha1.Agent {
		a := &agentsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "triage", Finalizers: finalizers}}
		if deleting {
			a.DeletionTimestamp = &now
		}
		return a
	}
	endpoint := func(deleting bool, refs ...metav1.OwnerReference) client.Object {
		ep := &agentsv1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "hooks", OwnerReferences: refs}}
		if deleting {
			ep.DeletionTimestamp = &now
		}
		return ep
	}
	thread := func(deleting bool) client.Object {
		th := &agentsv1alpha1.AgentThread{ObjectMeta: metav1.ObjectMeta{Name: "ops"}}
		if deleting {
			th.DeletionTimestamp = &now
		}
		return th
	}
	ours := agentsv1alpha1.FinalizerCleanup
	cases := []struct {
		name       string
		agent      *agentsv1alpha1.Agent
		dependents []client.Object
		want       cleanupStep
	}{
		{"new Agent", agent(false), nil, cleanupAddFinalizer},
		{"new Agent with a user's finalizer", agent(false, "example.com/keep"), []client.Object{endpoint(false)}, cleanupAddFinalizer},
		{"live, nothing to do", agent(false, ours), []client.Object{endpoint(false), thread(false)}, cleanupNone},
		{"live, an endpoint with an earlier version's owner reference", agent(false, ours), []client.Object{endpoint(false), endpoint(false, agentRef)}, cleanupRelease},
		{"live, a user's own owner reference is not ours to remove", agent(false, ours),
			[]client.Object{endpoint(false, metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Agent", Name: "x", UID: "x"})}, cleanupNone},
		{"deleted before it had the finalizer (earlier version)", agent(true, "example.com/keep"), []client.Object{endpoint(false, agentRef)}, cleanupNone},
		{"deleted, dependents alive", agent(true, ours), []client.Object{endpoint(true), thread(false)}, cleanupDelete},
		{"deleted, dependents going", agent(true, ours), []client.Object{endpoint(true), thread(true)}, cleanupWait},
		{"deleted, none left in the cache", agent(true, ours), nil, cleanupConfirm},
		{"deleted with propagation Orphan: deleted all the same", agent(true, metav1.FinalizerOrphanDependents, ours), []client.Object{endpoint(false)}, cleanupDelete},
		{"deleted with propagation Foreground", agent(true, metav1.FinalizerDeleteDependents, ours), []client.Object{endpoint(false)}, cleanupDelete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := cleanupStepFor(tc.agent, tc.dependents); got != tc.want {
				t.Errorf("cleanupStepFor = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestWithoutAgentOwnerReferences(t *testing.T) {
	users := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "d-1"}
	otherGroupsAgent := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Agent", Name: "x", UID: "x-1"}
	oldVersion := metav1.OwnerReference{APIVersion: "agents.hookrun.dev/v1beta9", Kind: "Agent", Name: "old", UID: "a-0"}
	cases := []struct {
		name string
		in   []metav1.OwnerReference
		want []metav1.OwnerReference
	}{
		{"none", nil, nil},
		{"only the Agent's", []metav1.OwnerReference{agentRef}, nil},
		{"Agents of any hookrun version", []metav1.OwnerReference{oldVersion, agentRef}, nil},
		{"a user's own stay", []metav1.OwnerReference{users, agentRef, otherGroupsAgent}, []metav1.OwnerReference{users, otherGroupsAgent}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			got := withoutAgentOwnerReferences(in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("the input was changed: %v", in)
			}
		})
	}
}
