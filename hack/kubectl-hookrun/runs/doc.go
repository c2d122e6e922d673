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

// Package runs is `kubectl hookrun runs`: an endpoint's invocations
// (AgentRuns), newest first, as a table or -o json|yaml, and kept up to date
// with --watch. Its Filter, Recent, Count, Table and ThreadOf also serve the
// card of `show`, `redeliver --endpoint` and the UI; Completion completes
// the names of runs that have a payload to send again.
//
// It imports api/ of hookrun and the plugin's cli and terminal.
package runs
