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

package receiver

import (
	"github.com/go-logr/logr"

	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/senders"
)

// What the receiver keeps of the calls it refuses: one log line each, at
// rejectionLogLevel, and a count per endpoint and error code that the
// report writer (report.go) hands to the operator.

// rejectionLogLevel is the verbosity of the line logged for every refused
// call: off by default, on with --zap-log-level=debug (or 1).
const rejectionLogLevel = 1

// Why a call was refused, in a few words: the reason of its log line.
const (
	reasonNoRoute             = "not the receive route"
	reasonMethod              = "method not POST"
	reasonDisabled            = "triggering disabled"
	reasonUnknownID           = "no endpoint has this ID"
	reasonPreParseLimit       = "unauthenticated rate limit"
	reasonMissingCredential   = "missing credential header"
	reasonRepeatedCredential  = "credential header repeated"
	reasonNotBearer           = "not a Bearer token"
	reasonNoSecretYet         = "no secret generated yet"
	reasonWrongSecret         = "wrong secret"
	reasonBadSignature        = "signature mismatch"
	reasonNoSigningKey        = "signing key not available yet"
	reasonPaused              = "endpoint paused"
	reasonNoAgent             = "agent missing or archived"
	reasonNoThread            = "target thread unavailable"
	reasonTooLarge            = "body larger than 1 MiB"
	reasonBodyBudget          = "body budget of the replica spent"
	reasonEndpointBodyBudget  = "body budget share of the endpoint spent"
	reasonNamespaceBodyBudget = "body budget share of the namespace spent"
	reasonBadBody             = "body could not be read"
	reasonBacklog             = "backlog full"
	reasonInvocationLimit     = "invocation rate limit"
	reasonNotMember           = "owner not a member"
	reasonLookupFailed        = "looking up an earlier delivery failed"
	reasonMembershipFailed    = "membership check failed"
	reasonStoreFailed         = "storing the run failed"
)

// idPrefixLength is how much of an unknown endpoint ID a log line shows.
const idPrefixLength = 6

// rejection is what refused a call: its answer's code and slot, and why.
type rejection struct {
	code   string
	slot   answer.Slot
	reason string
}

// reject answers the call with a, noting why for its count and log line.
func (c *callState) reject(a answer.Answer, reason string) int {
	c.rejection = rejection{code: a.Code(), slot: a.Slot(), reason: reason}
	return reject(c.w, a)
}

// rejected counts a refused call against its endpoint, if it has one, and
// logs it when rejectionLogLevel is on. With the level off nothing is
// allocated: a flood of refusals costs one map lookup each.
func (h *Handler) rejected(c *callState, status int) {
	if c.ep != nil && c.rejection.code != "" {
		h.rejections.Add(c.ep, c.rejection.slot, c.now)
	}
	if log := h.log.V(rejectionLogLevel); log.Enabled() {
		h.logRejection(log, c, status)
	}
}

// logRejection writes the line of a refused call: its endpoint (an unknown
// ID only by its first characters), status, code and reason. Never the
// credential, the signature or the body.
func (h *Handler) logRejection(log logr.Logger, c *callState, status int) {
	reason := c.rejection.reason
	if reason == reasonBadSignature {
		reason = h.signatureFailure(c)
	}
	kv := []any{"status", status, "code", c.rejection.code, "reason", reason}
	switch {
	case c.ep != nil:
		kv = append(kv, "endpoint", c.ep.Namespace+"/"+c.ep.Name, "sender", c.snd.Kind)
	case c.id != "":
		kv = append(kv, "endpointIDPrefix", cut(c.id, idPrefixLength))
	}
	log.Info("refused a call", kv...)
}

// signatureFailure tells, for a signed call that failed verification, why:
// no signing key yet, a timestamp outside the tolerance, or else a
// signature that does not match. Only the log line needs it.
func (h *Handler) signatureFailure(c *callState) string {
	if len(h.table.KeysFor(c.e, c.now)) == 0 {
		return reasonNoSigningKey
	}
	values := c.snd.CredentialValues(c.r.Header)
	if len(values) == 1 && !c.snd.InTolerance(c.r.Header, values[0], h.clock.Now()) {
		return senders.ReasonStaleTimestamp
	}
	return reasonBadSignature
}
