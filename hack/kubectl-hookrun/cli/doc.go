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

// Package cli is what every command of the plugin works with (Env): the
// user's kubeconfig flags and API client, the output streams, the clock, an
// HTTP client for calls to the receiver and --wait-timeout; reading an
// endpoint, asking who the user is, waiting for hookrun; an error of the API
// server in words, naming the role that would allow the action (Refused);
// errors in the command line (exit status 2), -o and argument checks; and
// the completion of namespaces, contexts and endpoint names.
//
// It imports api/ of hookrun and libraries only; the plugin's commands
// import it.
package cli
