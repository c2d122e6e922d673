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

// Package secretref reads the Secrets a user names by reference
// (WebhookEndpoint.spec.secretRef and spec.endpointIDSecretRef,
// Agent.spec.a2a.authSecretRef and spec.a2a.tls), straight from the API
// server and only when they are labelled for hookrun. It is internal: only
// the operator's packages import it.
//
//   - secret_reference.go: Get (metadata first, data only when labelled),
//     ErrNotReferable, NotReferableMessage.
//   - agent_tls.go: an Agent's CA bundle and client certificate (ReadAgentTLS,
//     AgentTLS, TLSSecretError), with their bounds.
package secretref
