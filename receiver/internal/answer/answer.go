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

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Answer is a precomputed error response: status and body are fixed, so
// rejections allocate nothing to encode.
type Answer struct {
	status        int
	code          string
	slot          Slot
	body          []byte
	contentLength []string
}

// New encodes the answer of status with code and message.
func New(status int, code, message string) Answer {
	b, err := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": message}})
	if err != nil {
		panic(err)
	}
	b = append(b, '\n')
	return Answer{status: status, code: code, slot: SlotOf(code), body: b, contentLength: []string{strconv.Itoa(len(b))}}
}

// Counted is a with its rejections counted under code rather than its own
// (an answer of a common code whose cause has a count of its own).
func Counted(a Answer, code string) Answer {
	a.slot = SlotOf(code)
	return a
}

// Status is the answer's HTTP status.
func (a Answer) Status() int { return a.status }

// Code is the answer's error code.
func (a Answer) Code() string { return a.code }

// Slot is the slot its refusals are counted in.
func (a Answer) Slot() Slot { return a.slot }

// Body is the encoded body (shared: never change it).
func (a Answer) Body() []byte { return a.body }

// Write writes the answer, not to be stored by any cache.
func (a Answer) Write(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = JSONContentType
	h["Content-Length"] = a.contentLength
	h["Cache-Control"] = NoStore
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// Header values, allocated once (a header map takes them as they are).
var (
	JSONContentType = []string{"application/json"}
	NoStore         = []string{"no-store"}
	// BusyRetryAfter is the Retry-After of a 503 for a spent body budget
	// or evaluation turn.
	BusyRetryAfter = []string{"1"}
	// BacklogRetryAfter is the Retry-After of a 429 backlog_full: about how
	// long a backlog takes to be counted again after runs start.
	BacklogRetryAfter = []string{"30"}
	// StoreRetryAfter is the Retry-After of a 503 when a run could not be
	// stored.
	StoreRetryAfter = []string{"5"}
)

// The answers of the receive route's checks.
var (
	Disabled      = New(http.StatusServiceUnavailable, CodeTriggeringDisabled, "Webhook triggering is disabled for this deployment")
	Unauthorized  = New(http.StatusUnauthorized, CodeUnauthorized, "A credential is required: the X-Service-Webhook-Secret header, or the token or signature header of the endpoint's sender type")
	Forbidden     = New(http.StatusForbidden, CodeForbidden, "The secret is wrong or has not been generated yet")
	BadSignature  = New(http.StatusForbidden, CodeForbidden, "The signature does not match the body, its timestamp is outside the tolerance, or the signing key is not available yet")
	NotFound      = New(http.StatusNotFound, CodeNotFound, "No webhook endpoint has this ID")
	NoRoute       = New(http.StatusNotFound, CodeNotFound, "Not found: POST /api/webhooks/{endpointId}/receive")
	Method        = New(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "Only POST is allowed")
	Paused        = New(http.StatusUnprocessableEntity, CodeEndpointPaused, "Endpoint is paused")
	NoAgent       = New(http.StatusUnprocessableEntity, CodeAgentUnavailable, "The endpoint's agent is archived or unavailable")
	NoThread      = New(http.StatusUnprocessableEntity, CodeThreadUnavailable, "The endpoint's target thread is unavailable")
	TooLarge      = New(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "The payload is larger than 1 MiB (1048576 bytes)")
	RateLimited   = New(http.StatusTooManyRequests, CodeRateLimited, "Rate limit exceeded; retry after the number of seconds in Retry-After")
	BacklogFull   = New(http.StatusTooManyRequests, CodeBacklogFull, "Too many runs of this endpoint or its agent are waiting to start; retry after the number of seconds in Retry-After")
	NotMember     = New(http.StatusUnprocessableEntity, CodeOwnerNotMember, "The endpoint's owner may no longer trigger its agent; the endpoint is paused")
	BadBody       = New(http.StatusBadRequest, CodeBadRequest, "The request body could not be read")
	Busy          = New(http.StatusServiceUnavailable, CodeUnavailable, "The receiver is reading as many request bodies as it may hold; retry after the number of seconds in Retry-After")
	EndpointBusy  = New(http.StatusServiceUnavailable, CodeUnavailable, "The receiver is reading as many request bodies for this endpoint as one endpoint may hold; retry after the number of seconds in Retry-After")
	NamespaceBusy = New(http.StatusServiceUnavailable, CodeUnavailable, "The receiver is reading as many request bodies for this namespace's endpoints as one namespace may hold; retry after the number of seconds in Retry-After")
	Unavailable   = New(http.StatusServiceUnavailable, CodeUnavailable, "The run could not be stored; retry after the number of seconds in Retry-After")
)

// The answers of spec.filter, spec.fields and spec.sender.oidc.claims.
var (
	FilterInvalid = New(http.StatusUnprocessableEntity, CodeFilterInvalid,
		"The endpoint's spec.filter does not compile; see the endpoint's Ready condition")
	FilterBusy = New(http.StatusServiceUnavailable, CodeUnavailable,
		"The receiver is evaluating as many calls of this endpoint's spec.filter as one endpoint may; retry after the number of seconds in Retry-After")
	FilterTimeout = Counted(New(http.StatusServiceUnavailable, CodeUnavailable,
		"The receiver was too busy to finish evaluating the endpoint's spec.filter, spec.fields or claims in time; retry after the number of seconds in Retry-After"),
		CodeFilterTimeout)
	FieldsInvalid = New(http.StatusUnprocessableEntity, CodeFieldsInvalid,
		"The endpoint's spec.fields do not compile; see the endpoint's Ready condition")
	FieldsBusy = New(http.StatusServiceUnavailable, CodeUnavailable,
		"The receiver is evaluating as many calls of this endpoint's spec.filter or spec.fields as one endpoint may; retry after the number of seconds in Retry-After")
	NoRoomForFields = New(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
		"The body and the endpoint's spec.fields of it together are larger than a payload may be (1 MiB, 1048576 bytes)")
)

// SlotFilterError and SlotFieldError are the rejection-report slots of
// CodeFilterError and CodeFieldError (evaluations that failed, counted
// though the call is answered 200 or accepted).
var (
	SlotFilterError = SlotOf(CodeFilterError)
	SlotFieldError  = SlotOf(CodeFieldError)
)

// Ignored is the body of a call answered 200 without a run (its event is
// not allowed, or its filter did not match).
var Ignored = []byte(`{"status":"ignored"}` + "\n")

// Status writes a JSON answer that is not an error, and returns its code.
func Status(w http.ResponseWriter, code int, body []byte) int {
	w.Header()["Content-Type"] = JSONContentType
	w.Header()["Cache-Control"] = NoStore
	w.WriteHeader(code)
	_, _ = w.Write(body)
	return code
}

// Accepted writes 202 {"runId":...,"status":"accepted"}.
func Accepted(w http.ResponseWriter, runID string) int {
	out, _ := json.Marshal(accepted{RunID: runID, Status: "accepted"})
	return Status(w, http.StatusAccepted, append(out, '\n'))
}

// accepted is the body of a 202.
type accepted struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
}
