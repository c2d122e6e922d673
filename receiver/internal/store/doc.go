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

// Package store is what a call leaves behind in the API server: its
// AgentRun and payload Secret (Kube.CreateRun), a refused call's skipped
// run (RecordSkipped), and the earlier delivery a repeated one names
// (Duplicate). It reads there what the informers do not keep: an
// endpoint's prompt and spec.fields, of the endpoints called last
// (promptCache, bounded by promptCacheEntries). Runs are named by a ULID
// (RunName) or after their delivery (DeliveryRunName), and built from the
// endpoint they snapshot (NewRun).
//
// Nothing here answers a call: the receiver's root does, and imports this
// package (never the other way round).
package store
