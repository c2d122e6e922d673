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

// Package send sends calls to an endpoint as its sender would, through the
// receive route: `kubectl hookrun test` with a sample body or one of the
// user's, `redeliver` with a run's stored payload (one run, or with
// --endpoint the runs of an outage, oldest first), then follows the run
// each starts and prints its outcome, and the fields its agent gets. An
// OIDC sender's endpoint is called with the user's token or one the API
// server issues (--token-from).
//
// It imports api/ of hookrun and the plugin's cli, endpoints, runs,
// secrets, senders and terminal.
package send
