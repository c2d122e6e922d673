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

// Package report holds the rejection report controller: it deletes the
// rejection report of a receiver replica once nothing in it counts any more.
//
// Each receiver replica keeps its recent refusals (wrong secret, paused,
// filtered out, …) in a ConfigMap of the receiver's namespace, labelled
// agents.hookrun.dev/rejection-report; the endpoint controller sums them
// into status.rejections. A replica that is gone (a rollout names its pods
// anew) leaves its report behind; this controller deletes it once the period
// after the one it was written in has passed.
//
//   - watches: the labelled ConfigMaps of the receiver's namespace (the only
//     ConfigMaps the operator caches, cached.Options);
//   - writes: deletes an expired report (preconditioned on the version read,
//     so one its replica has just written again stays);
//   - controller.go: Reconciler, reportExpiry (when nothing in a report
//     counts any more).
package report
