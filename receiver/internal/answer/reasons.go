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

package answer

// Why a call was refused, in a few words: the reason of its log line (at
// the receiver's debug level), never part of an answer's body.
const (
	ReasonNoRoute             = "not the receive route"
	ReasonMethod              = "method not POST"
	ReasonDisabled            = "triggering disabled"
	ReasonUnknownID           = "no endpoint has this ID"
	ReasonPreParseLimit       = "unauthenticated rate limit"
	ReasonMissingCredential   = "missing credential header"
	ReasonRepeatedCredential  = "credential header repeated"
	ReasonNotBearer           = "not a Bearer token"
	ReasonNoSecretYet         = "no secret generated yet"
	ReasonWrongSecret         = "wrong secret"
	ReasonBadSignature        = "signature mismatch"
	ReasonNoSigningKey        = "signing key not available yet"
	ReasonPaused              = "endpoint paused"
	ReasonNoAgent             = "agent missing or archived"
	ReasonNoThread            = "target thread unavailable"
	ReasonTooLarge            = "body larger than 1 MiB"
	ReasonBodyBudget          = "body budget of the replica spent"
	ReasonEndpointBodyBudget  = "body budget share of the endpoint spent"
	ReasonNamespaceBodyBudget = "body budget share of the namespace spent"
	ReasonBadBody             = "body could not be read"
	ReasonBacklog             = "backlog full"
	ReasonInvocationLimit     = "invocation rate limit"
	ReasonNotMember           = "owner not a member"
	ReasonLookupFailed        = "looking up an earlier delivery failed"
	ReasonMembershipFailed    = "membership check failed"
	ReasonStoreFailed         = "storing the run failed"
)

// Why an OIDC sender's call was refused.
const (
	ReasonOIDCIssuerNotAllowed = "token issuer not in --oidc-issuers"
	ReasonOIDCMalformed        = "token not a signed JWT"
	ReasonOIDCUnknownKey       = "token key ID unknown to the issuer"
	ReasonOIDCSignature        = "token signature mismatch"
	ReasonOIDCClaims           = "token iss, aud, exp or nbf wrong"
	ReasonOIDCNamespace        = "service account token of another namespace"
	ReasonOIDCSubject          = "token sub holds control characters"
	ReasonOIDCClaimsRefused    = "token claims refused by spec.sender.oidc.claims"
	ReasonOIDCAPIAudience      = "audience is one the API server accepts"
	ReasonOIDCClaimsInvalid    = "spec.sender.oidc.claims does not compile"
	ReasonOIDCKeysUnavailable  = "issuer keys could not be read"
	ReasonOIDCGone             = "call ended while the issuer's keys were read"
)

// Why a call's spec.filter or spec.fields refused it.
const (
	ReasonFilterInvalid = "filter does not compile"
	ReasonFilterError   = "filter evaluation failed"
	ReasonFilterBusy    = "filter evaluations of the endpoint busy"
	ReasonFilterTimeout = "evaluation stopped by the clock"
	ReasonFieldsInvalid = "fields do not compile"
	ReasonFieldsBusy    = "field evaluations of the endpoint busy"
	ReasonNoRoom        = "body and fields over the payload's size"
)
