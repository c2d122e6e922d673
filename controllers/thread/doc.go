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

// Package thread holds the AgentThread controller: it reports whether a
// thread's Agent exists, and derives the thread's status from its runs.
//
// It is the only writer of thread status. What it shows is computed again
// from the runs at every look (cached.RunsOfThread, agentsv1alpha1.ThreadFromRuns,
// which admission uses too to choose a run's context), so a write that
// fails, or an operator that dies before making it, leaves nothing wrong for
// long. The Agent's cleanup finalizer, not an owner reference, deletes a
// thread with its Agent (package agent).
//
//   - watches: AgentThreads; Agents (through the thread-by-agent index,
//     generation changes only); AgentRuns appended to a thread whose state
//     or context changed, or that were deleted;
//   - writes: AgentThread status (contextId, lastRunName, Ready, Reconciling,
//     Stalled), one patch per reconcile;
//   - controller.go: Reconciler, threadSummary (the Ready condition), the
//     run-to-thread map and predicate.
//
// Tests: a table test of threadSummary, and an envtest suite of this
// controller alone (suite_envtest_test.go, controller_envtest_test.go: an
// attached context, the Agent's readiness). Specs of a thread's runs also
// run the AgentRun controllers: they stay in package controllers
// (threads_of_runs_test.go).
package thread
