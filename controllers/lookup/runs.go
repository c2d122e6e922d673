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

package lookup

import (
	"strings"
	"time"

	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// What every controller reads the same way off an AgentRun: the thread it
// holds, the order runs queue and are appended to their thread in, its A2A
// context and its owners. The field indexes (indexes.go) and the thread
// derivation (thread_runs.go) are built on these.

// ThreadKey names the thread a run must hold alone, or "" for a new thread each run.
func ThreadKey(run *agentsv1alpha1.AgentRun) string {
	if run.Spec.ThreadStrategy == agentsv1alpha1.ContinueExisting && run.Spec.TargetThreadRef != nil {
		return run.Spec.TargetThreadRef.Name
	}
	return ""
}

// QueuedBefore orders queued runs oldest first: by receipt (stored to the
// second), then by the ULID the receiver ends run names with (to the
// millisecond), then by name.
func QueuedBefore(a, b *agentsv1alpha1.AgentRun) bool {
	ta, tb := a.Spec.ReceivedAt.Time, b.Spec.ReceivedAt.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if ka, kb := receiptKey(a.Name), receiptKey(b.Name); ka != kb {
		return ka < kb
	}
	return a.Name < b.Name
}

// AppendedAfter reports whether run a was appended to its thread after run
// b. A thread's runs start one at a time, oldest first, so the later start
// is the later append; startedAt is stored to the second, and within one
// second the queue order tells. A run with no start recorded counts as
// earlier.
func AppendedAfter(a, b *agentsv1alpha1.AgentRun) bool {
	if b.Status.StartedAt == nil {
		return true
	}
	if a.Status.StartedAt == nil {
		return false
	}
	ta, tb := a.Status.StartedAt.Truncate(time.Second), b.Status.StartedAt.Truncate(time.Second)
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return QueuedBefore(b, a)
}

// ulidLen is the length of a ULID in Crockford base32.
const ulidLen = 26

// receiptKey is the ULID ending a run name "<endpoint>-<ULID>", or the name.
func receiptKey(name string) string {
	if i := strings.LastIndexByte(name, '-'); i >= 0 && len(name)-i-1 == ulidLen {
		return name[i+1:]
	}
	return name
}

// ContextOf is the A2A context a run's status names, or "".
func ContextOf(st *agentsv1alpha1.AgentRunStatus) string {
	if st.Thread == nil {
		return ""
	}
	return st.Thread.ContextID
}

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
