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
// (status.rejections), and when a rejection report no longer counts.
//
// Each receiver replica keeps its recent refusals (wrong secret, paused,
// filtered out, …) in a ConfigMap of the receiver's namespace, labelled
// agents.hookrun.dev/rejection-report, which Reconciler sums into
// status.rejections. A replica that is gone (a rollout names its pods anew)
// leaves its report behind: ReportReconciler deletes it once the period
// after the one it was written in has passed (preconditioned on the version
// read, so one its replica has just written again stays). It watches the
// labelled ConfigMaps of the receiver's namespace, the only ConfigMaps the
// operator caches (cached.Options).
//
// Reconciler is a controller of its own, beside the WebhookEndpoint
// controller (package endpoint), so that the endpoint's status writes do not wake it:
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
//     --run-ttl, and payload Secrets past --payload-ttl; ReportReconciler
//     deletes expired rejection reports.
//
// Files:
//   - controller.go: Reconciler, Reconcile, SetupWithManager;
//   - retention.go: counting and retention (planRetention, a pure function
//     with a table test);
//   - rejections.go: status.rejections from the reports (sumRejections),
//     and the report watch;
//   - report_expiry.go: ReportReconciler, reportExpiry (when nothing in a
//     report counts any more).
package accounting
