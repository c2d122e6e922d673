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

// Package lookup is what the operator's controllers share, and all they
// share: how they find and read the objects they work on, and how they
// write back what they decided. Nothing in it decides anything for a
// controller; a controller package imports lookup and the leaf packages
// (a2a, filter, membership, tracing), never another controller (a depguard
// rule in .golangci.yml).
//
// It is named for its largest part, reading through the operator's cache:
// the cache holds stripped copies, lags our own writes, and holds Secrets
// as metadata only, and every controller must read around that the same way.
//
//   - cache_transform.go: what the cache keeps of each object (CacheOptions,
//     StripForCache) and how a write is compared with it (CachedStatus,
//     StatusChanged).
//   - cache_reads.go: reads that the cache alone cannot answer: an object
//     not cached yet (GetCachedOrLive), our own writes the cache must show
//     before the next decision (UnconfirmedWrites), Secrets as metadata
//     (SecretMetadata).
//   - indexes.go: the field indexes on the cache (SetupIndexes), the map
//     functions that turn a change of a referenced object into requests for
//     the objects naming it (MapByIndex), and the signing-key Secret to
//     endpoint mapping (SigningKeyEndpoint).
//   - secret_reference.go: Secrets a user names by reference, read only when
//     labelled for hookrun (GetReferableSecret).
//   - runs.go: what watches tell off a cached object: its owners (OwnedBy),
//     a run's state (IsRunIn). The pure facts of runs (ThreadKey,
//     QueuedBefore, AppendedAfter, ContextOf, ThreadFromRuns) are in
//     api/v1alpha1.
//   - thread_runs.go: the runs appended to a thread (RunsOfThread), for
//     admission and the thread controller alike.
//   - scrape_gauge.go: gauges computed from the leader's cache when scraped
//     (ScrapeGauge), for the metrics of the run and endpoint controllers.
//
// How status is written (the readiness summary, the status patch) is in
// controllers/internal/status.
package lookup
