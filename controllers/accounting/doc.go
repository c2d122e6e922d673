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

// Package accounting holds the run accounting of WebhookEndpoints: how
// many runs an endpoint has (status.runs), which finished runs and payloads
// it keeps (retention), and what the receiver refused for it
// (status.rejections).
//
// It is a controller of its own, beside the WebhookEndpoint controller
// (package endpoint), so that the endpoint's status writes do not wake it:
// it watches every change of the endpoint but a status write, and the runs
// and reports it counts after --run-count-delay, which batches a burst of
// runs into one write. Each of the two writes only its own status
// fields, with a merge patch locked to what it read.
//
//   - watches: WebhookEndpoints (every change but a status write); AgentRuns
//     (by their endpoint label, after --run-count-delay); the receiver
//     replicas' rejection reports (the endpoints whose entries changed,
//     after --run-count-delay);
//   - writes: WebhookEndpoint status.runs and status.rejections, one patch
//     per reconcile; deletes finished AgentRuns past --run-history-limit or
//     --run-ttl, and payload Secrets past --payload-ttl.
//
// Files:
//   - controller.go: Reconciler, Reconcile, SetupWithManager;
//   - retention.go: counting and retention (planRetention, a pure function
//     with a table test);
//   - rejections.go: status.rejections from the reports (sumRejections),
//     and the report watch.
package accounting
