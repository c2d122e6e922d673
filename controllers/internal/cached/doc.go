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

// Package cached is how the operator's controllers read through its cache:
// the cache holds stripped copies, lags the operator's own writes, and holds
// Secrets as metadata only, and every controller reads around that the same
// way. It is internal: only the operator's packages import it.
//
//   - transform.go: what the cache keeps of each object (Options, Strip) and
//     how a write is compared with it (Status, StatusChanged).
//   - reads.go: reads that the cache alone cannot answer: an object not
//     cached yet (GetOrLive), the operator's own writes the cache must show
//     before the next decision (UnconfirmedWrites), Secrets as metadata
//     (SecretMetadata).
//   - indexes.go: the field indexes on the cache (SetupIndexes), the map
//     functions that turn a change of a referenced object into requests for
//     the objects naming it (MapByIndex, RunEndpointAfter), and the
//     signing-key Secret to endpoint mapping (SigningKeyEndpoint).
//   - runs.go: what watches tell off a cached object: its owners (OwnedBy),
//     a run's state (IsRunIn).
//   - thread_runs.go: the runs appended to a thread (RunsOfThread), for
//     admission and the thread controller alike.
//   - scrape_gauge.go: gauges computed from the leader's cache when scraped
//     (ScrapeGauge), for the metrics of the run and endpoint controllers.
//
// The pure facts of runs (ThreadKey, QueuedBefore, ThreadFromRuns, …) are
// in api/v1alpha1; Secrets named by reference are read by
// controllers/internal/secretref.
package cached
