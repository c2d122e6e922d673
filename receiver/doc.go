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

// Package receiver serves POST /api/webhooks/{endpointId}/receive: every
// call is answered by the checks of the design contract, in its order, and
// an accepted one becomes an AgentRun with its payload Secret.
//
// The root is the handler and what wires it:
//
//   - handler.go: Handler, serve (the checks, one a line, in order), a
//     call's state, and what is kept of a refused call;
//   - checks.go: the checks up to the body (route, switch, endpoint,
//     limits before the body, the sender's credential, availability, the
//     body read within its budgets);
//   - admit.go: the checks once the body is read (event, filter, backlog,
//     invocation limit, fields, duplicates, membership) and the run stored;
//   - setup.go, options.go, server.go: Setup and its informers, the flags,
//     the HTTP server, its drain, readiness checks and metrics.
//
// Its parts are packages under internal/, which never import the root:
// answer (codes, answers, reasons), senders (sender types, signatures,
// CloudEvents), limits (rate limits, backlog cap, body budget, evaluation
// turns), endpoints (the in-memory table, the cache transform, compiled
// expressions), store (runs and payloads written, prompts read) and
// rejections (refusal counts and the report). docs/receiver.md draws them.
package receiver
