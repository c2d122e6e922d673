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

// Package controllers is the hookrun operator's composition: its options
// (options.go, the flags of `hookrun operator`), its RBAC (rbac.go) and its
// wiring (setup.go: SetupOperator registers the field indexes and every
// controller with a manager, giving each its dependencies). The controllers
// themselves are one package each, and this package is the only one that
// imports them all:
//
//   - endpoint: the WebhookEndpoint controller (ID, URL, secret, signing
//     keys, filter, phase and conditions);
//   - accounting: the run accounting of every endpoint (status.runs,
//     retention of finished runs, status.rejections, the expiry of the
//     receiver replicas' rejection reports);
//   - run: AgentRun admission per Agent and execution per run (the call
//     queue, the A2A message, outcome, traces, run metrics);
//   - agent: the Agent controller (readiness, agent cards, the cleanup
//     finalizer);
//   - thread: the AgentThread controller (status derived from its runs).
//
// What they share is internal/, which only the operator imports:
// internal/status (the readiness summary, the status patch),
// internal/cached (reads through the cache, field indexes and their map
// functions) and internal/secretref (Secrets named by reference). The pure
// facts of runs are in api/v1alpha1. The leaf packages import nothing of
// controllers/, and some are shared with the receiver: docs/operator.md
// lists them ("Leaf packages"). Arrows run from this package to the
// controllers, from them to internal/ and the leaf packages, and from all
// to api/, never back up (depguard rules in .golangci.yml).
//
// The envtest suites here run every controller together, in a real manager
// against a real API server, through SetupOperator; a spec of one
// controller alone lives in that controller's package (the suites of
// controllers/endpoint, run, agent and thread). All start their API server with
// test/testenv, and their agents are test/a2apeers.
//
// docs/operator.md has the map of packages.
package controllers
