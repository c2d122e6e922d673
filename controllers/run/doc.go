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

// Package run holds the two controllers that take an AgentRun from queued to
// finished, and what they share: admission per Agent, execution per run.
//
// How a run reaches its agent: the receiver creates the AgentRun (queued)
// and its payload Secret. Admission, keyed by Agent, starts the runs whose
// turn has come within the Agent's maxConcurrentRuns and one run at a time
// per thread, and marks them running with their thread and context.
// Execution, keyed by run, sends each running run over A2A and polls its
// task until it ends, each A2A call waiting for a slot of its Agent's and its
// namespace's share of the dispatch workers (the call queue).
//
// AdmissionReconciler (admission.go, admission_plan.go):
//   - watches: Agents (generation changes), AgentRuns queued or finishing
//     (mapped to their Agent), payload Secrets (metadata only) of queued runs;
//   - writes: AgentRun status (queued to running, or to error/skipped when
//     a run can never start), one write per run, each awaited in the cache
//     (cached.UnconfirmedWrites); events on the run.
//
// ExecutionReconciler (execution.go, call_queue.go, call_context.go):
//   - watches: running AgentRuns; the call queue's wake-ups (a channel source);
//   - writes: AgentRun status (taskId, thread context, output, final state,
//     Ready and Succeeded), one write per step; events on the run; asks the
//     Agent controller to read a card again (CardRefresher).
//
// Files:
//   - admission.go: the admission reconciler, one pass per Agent;
//   - admission_plan.go: the pure planning of a pass (planAdmission: which
//     queued runs start, which wait for their payload), with table tests;
//   - execution.go: the execution reconciler, one step per run (send, poll,
//     cancel), and the A2A client it is given (A2AClientFactory);
//   - call_queue.go: the per-Agent and per-namespace share of the dispatch
//     workers (callQueue: take, release, settle, wake-ups);
//   - call_context.go: the deadline of one A2A call (--a2a-call-timeout,
//     cut by the run's remaining time);
//   - target.go: where a run is sent and with which token (a2aTarget,
//     tokenWithheld), and what a failed send tells;
//   - message.go: the A2A message a run becomes (prompt, payload, metadata);
//   - payload.go: reading a run's payload Secret, only if it is the run's;
//   - outcome.go: a task's state as a run's (outcome), and Finish;
//   - tracing.go: the spans of admission and of each A2A call (RunTracer);
//   - metrics.go: the run metrics by Agent, the queued-runs gauge, and the
//     series of deleted Agents (FollowAgent).
//
// Tests: a table test of each pure function beside its file, and an envtest
// suite of admission and execution alone (suite_envtest_test.go: a real API
// server with hookrun's access control, the two controllers in a manager as
// the operator's service account, agents of test/a2apeers) with the specs
// that need no other controller (*_envtest_test.go: dispatch, retries,
// fields, traces, what an agent says). Specs that need the Agent or
// AgentThread controller too stay in package controllers.
package run
