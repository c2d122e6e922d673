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

// Package endpoint holds the WebhookEndpoint controller: it gives every
// endpoint its ID, URL and secret, and keeps its phase and conditions
// honest. Its run accounting (status.runs, status.rejections, retention) is
// package accounting's.
//
// Reconcile reads like its table of contents: an ordered list of phases
// (identity, filter, agent, thread, secret, signing key, phase), each
// writing into one endpointScope, and one status patch at the end
// (writeStatus).
//
//   - watches: WebhookEndpoints; Agents and AgentThreads they name (through
//     the field indexes); Secrets (metadata only: a referenced secretRef or
//     endpointIDSecretRef, the generated Secret, the signing keys); AgentRuns
//     (batched by --run-count-delay: the skipped ones move the
//     OwnerNotMember pause); other endpoints sharing or waiting for an ID;
//   - writes: WebhookEndpoint status (endpointID, url, secret hash, phase,
//     Ready, SecretReady, AgentReady, ThreadReady); the generated Secret;
//     the signing-key Secrets of signed senders in the receiver's
//     namespace; events (paused, resumed, secret rotated, ID conflicts).
//
// Files:
//   - controller.go: Reconciler, Reconcile and its phases, endpointScope,
//     SetupWithManager;
//   - identity.go: the endpoint ID, generated once or pinned by
//     spec.endpointIDSecretRef, and the URL (EndpointURL); id_waiters.go:
//     the hand-over of an ID from a deleted endpoint to the one waiting for
//     it (IDHandoverReserve);
//   - secret.go: the generated or referenced secret, its rotation and hash;
//     signing_key.go: the key Secrets the receiver verifies signed senders
//     with;
//   - filter.go: the compiled spec.filter's verdict (a bad filter is
//     Stalled), cached per generation;
//   - status.go: the pure condition and summary functions (AgentReady,
//     ThreadReady, SecretReady, phase, the OwnerNotMember pause, Ready);
//   - events.go: the pause and resume events;
//   - watches.go: the map functions of the watches;
//   - metrics.go: the endpoints-by-readiness gauge.
//
// Tests: a table test of each pure function beside its file, and an envtest
// suite of this controller alone (suite_envtest_test.go: a real API server
// with hookrun's access control, the controller in a manager as the
// operator's service account) with the specs that need no other controller
// (*_envtest_test.go: IDs, secrets, rotation and pauses, ID conflicts,
// pinned IDs, filters, OIDC senders, signing keys). Specs of the whole
// operator stay in package controllers.
package endpoint
