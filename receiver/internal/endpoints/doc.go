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

// Package endpoints is what the receiver knows of the cluster, in memory:
// the Table its informers keep of WebhookEndpoints (by endpoint ID, with
// their secrets' digests, signing keys and sender types), Agents and
// AgentThreads, read by every call without an API request; the cache
// transform that keeps of each object only what the receiver reads
// (StripToUse); and each endpoint's expressions (spec.filter, spec.fields,
// spec.sender.oidc.claims) compiled when a call first needs them, the last
// filterCacheEntries kept.
//
// The table is fed by the receiver's root (its informers) and never calls
// back into it but through OnUpsert and OnDelete.
package endpoints
