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

// Package status is how the operator's controllers write status: the
// readiness summary each kind's pure function decides (Summary: Current,
// Reconciling, Stalled, ReconcileFailed), written as Ready, Reconciling and
// Stalled by SetSummary (the operator's side of api/v1alpha1/readiness.go,
// which the receiver uses too), and the one way a status is written
// (PatchIfChanged, a merge patch against the object as read, as FieldOwner).
//
//   - readiness.go: Summary and its constructors, SetSummary.
//   - patch.go: PatchIfChanged, FieldOwner, Result.
//
// statustest holds the checks the controllers' unit tests share. It is
// internal: only the operator's packages import it.
package status
