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

package cached

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// What the controllers' watches and reads tell off a cached object: its
// owners and, for an AgentRun, its state. The pure facts of runs (thread,
// order, context) are in api/v1alpha1 (agentrun_facts.go).

// OwnedBy tells whether owners name the object with uid.
func OwnedBy(owners []metav1.OwnerReference, uid types.UID) bool {
	return slices.ContainsFunc(owners, func(o metav1.OwnerReference) bool { return o.UID == uid })
}

// IsRunIn tells whether o is an AgentRun in state: the predicate of
// admission (a run queued) and of execution (running runs only).
func IsRunIn(o client.Object, state agentsv1alpha1.RunState) bool {
	run, ok := o.(*agentsv1alpha1.AgentRun)
	return ok && run.EffectiveState() == state
}
