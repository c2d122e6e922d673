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

// Package agent holds the Agent controller: it reports whether an Agent can
// take runs, reads its agent card, and keeps its cleanup finalizer.
//
//   - watches: Agents; Secrets named by spec.a2a.authSecretRef (metadata
//     only, through the agent-by-auth-secret index); the endpoints and
//     threads of an Agent being deleted; card refresh requests from
//     execution (CardRefreshes, a channel source);
//   - writes: Agent status (status.a2a, the interface runs are sent to;
//     Ready, Reconciling, Stalled), one patch per reconcile; the cleanup
//     finalizer; deletes a deleted Agent's WebhookEndpoints and AgentThreads
//     (objects applied by GitOps carry no owner references, so garbage
//     collection cannot).
//
// Files:
//   - controller.go: Reconciler, Reconcile, the auth Secret check and
//     agentSummary (the Ready condition);
//   - card.go: when and how an Agent's card is read (CardReader,
//     CardRefreshes: execution's requests to read it again, the retry
//     back-off) and what it gave (cardState, cardSummary);
//   - cleanup.go: the finalizer's steps (add, delete dependents, wait,
//     confirm live, release) and the watches on dependents.
//
// Tests: a table test of each pure function beside its file, and an envtest
// suite of this controller alone (suite_envtest_test.go) with the specs that
// need no other controller (controller_envtest_test.go: Ready, archived, a
// token Secret missing or not labelled). Specs of cards, TLS and deletion
// also run the AgentRun or WebhookEndpoint controllers: they stay in
// package controllers.
package agent
