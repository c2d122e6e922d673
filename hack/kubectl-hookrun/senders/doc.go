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

// Package senders makes a call as an endpoint's sender would (DESIGN.md
// section 8): the body, and the headers that carry the credential (the
// secret, a signature made with it, or an OIDC token), the event type and
// the delivery ID; and says in words what a sender must be configured with.
// The plugin's card prints a call as a curl command, and `test` and
// `redeliver` send it.
//
// It is pure: it imports api/ of hookrun and libraries only, and reads no
// cluster.
package senders
