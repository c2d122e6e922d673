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

// Error codes of the receive route. Every answer but 202 is
// {"error":{"code":CODE,"message":MESSAGE}} and means no run was started.
const (
	CodeTriggeringDisabled = "triggering_disabled"
	CodeUnauthorized       = "unauthorized"
	CodeForbidden          = "forbidden"
	CodeNotFound           = "not_found"
	CodeMethodNotAllowed   = "method_not_allowed"
	CodeEndpointPaused     = "endpoint_paused"
	CodeAgentUnavailable   = "agent_unavailable"
	CodeThreadUnavailable  = "thread_unavailable"
	CodePayloadTooLarge    = "payload_too_large"
	CodeRateLimited        = "rate_limited"
	CodeBacklogFull        = "backlog_full"
	CodeOwnerNotMember     = "owner_not_member"
	CodeUnavailable        = "unavailable"
	CodeBadRequest         = "bad_request"
	// CodeUnsupportedMediaType answers a CloudEvents batch, or a structured
	// event in a format other than JSON.
	CodeUnsupportedMediaType = "unsupported_media_type"
	// CodeFilterInvalid answers a call to an endpoint whose spec.filter
	// does not compile.
	CodeFilterInvalid = "filter_invalid"
	// CodeFieldsInvalid answers a call to an endpoint whose spec.fields do
	// not compile.
	CodeFieldsInvalid = "fields_invalid"
)

// Codes that are counted in the rejection report but never answered as
// such.
const (
	// CodeFilterError counts the calls whose filter failed to evaluate
	// (answered 200 ignored).
	CodeFilterError = "filter_error"
	// CodeFieldError counts the calls accepted with a field that failed to
	// evaluate.
	CodeFieldError = "field_error"
	// CodeFilterTimeout counts the calls whose evaluation the wall-clock
	// backstop stopped (answered 503 unavailable).
	CodeFilterTimeout = "filter_timeout"
)

// Slot numbers the error codes, so that the counts of an endpoint are an
// array: counting a refusal allocates nothing.
type Slot uint8

// codes are the error codes, in slot order.
var codes = [...]string{
	CodeTriggeringDisabled, CodeUnauthorized, CodeForbidden, CodeNotFound, CodeMethodNotAllowed,
	CodeEndpointPaused, CodeAgentUnavailable, CodeThreadUnavailable, CodePayloadTooLarge,
	CodeRateLimited, CodeBacklogFull, CodeOwnerNotMember, CodeUnavailable, CodeBadRequest,
	CodeUnsupportedMediaType,
	CodeFilterInvalid, CodeFilterError, CodeFieldsInvalid, CodeFilterTimeout, CodeFieldError,
}

// Slots is the number of slots.
const Slots = len(codes)

// SlotOf returns the slot of an error code; every answer's code has one.
func SlotOf(code string) Slot {
	for i, c := range codes {
		if c == code {
			return Slot(i)
		}
	}
	panic("receiver: error code " + code + " has no slot")
}

// Code is the error code of slot s.
func (s Slot) Code() string {
	return codes[s]
}
