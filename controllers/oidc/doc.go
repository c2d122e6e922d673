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

// Package oidc verifies the bearer tokens of OIDC senders
// (spec.sender.oidc): signed JWTs of the cluster's service account issuer
// or of an issuer the receiver trusts (--oidc-issuers).
//
//   - verify.go: Verifier.Verify, a token's signature, issuer, audience and
//     times, checked locally with the issuer's keys (no request per call).
//   - keys.go: an issuer's keys, fetched on first use and again on an
//     unknown key ID at most once per RefreshInterval.
//   - discovery.go: where keys come from: the API server's
//     /.well-known/openid-configuration and /openid/v1/jwks read with the
//     receiver's client, or another issuer's discovery document and
//     jwks_uri over HTTPS.
//   - issuers.go: the --oidc-issuers list, which the operator reads too
//     (an endpoint naming an issuer not listed is Ready=False).
//
// It imports only api/ and libraries: the receiver and the operator both
// use it.
package oidc
