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
	"encoding/json"
	"net/http"
	"strconv"
)

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
)

// answer is a precomputed error response: status and body are fixed, so
// rejections allocate nothing to encode.
type answer struct {
	status        int
	code          string
	slot          codeSlot
	body          []byte
	contentLength []string
}

func newAnswer(status int, code, message string) answer {
	b, err := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": message}})
	if err != nil {
		panic(err)
	}
	b = append(b, '\n')
	return answer{status: status, code: code, slot: slotOf(code), body: b, contentLength: []string{strconv.Itoa(len(b))}}
}

// answerCounted is a with its rejections counted under code rather than
// its own (an answer of a common code whose cause has a count of its own).
func answerCounted(a answer, code string) answer {
	a.slot = slotOf(code)
	return a
}

var (
	answerDisabled      = newAnswer(http.StatusServiceUnavailable, CodeTriggeringDisabled, "Webhook triggering is disabled for this deployment")
	answerUnauthorized  = newAnswer(http.StatusUnauthorized, CodeUnauthorized, "A credential is required: the X-Service-Webhook-Secret header, or the token or signature header of the endpoint's sender type")
	answerForbidden     = newAnswer(http.StatusForbidden, CodeForbidden, "The secret is wrong or has not been generated yet")
	answerBadSignature  = newAnswer(http.StatusForbidden, CodeForbidden, "The signature does not match the body, its timestamp is outside the tolerance, or the signing key is not available yet")
	answerNotFound      = newAnswer(http.StatusNotFound, CodeNotFound, "No webhook endpoint has this ID")
	answerNoRoute       = newAnswer(http.StatusNotFound, CodeNotFound, "Not found: POST /api/webhooks/{endpointId}/receive")
	answerMethod        = newAnswer(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "Only POST is allowed")
	answerPaused        = newAnswer(http.StatusUnprocessableEntity, CodeEndpointPaused, "Endpoint is paused")
	answerNoAgent       = newAnswer(http.StatusUnprocessableEntity, CodeAgentUnavailable, "The endpoint's agent is archived or unavailable")
	answerNoThread      = newAnswer(http.StatusUnprocessableEntity, CodeThreadUnavailable, "The endpoint's target thread is unavailable")
	answerTooLarge      = newAnswer(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "The payload is larger than 1 MiB (1048576 bytes)")
	answerRateLimited   = newAnswer(http.StatusTooManyRequests, CodeRateLimited, "Rate limit exceeded; retry after the number of seconds in Retry-After")
	answerBacklogFull   = newAnswer(http.StatusTooManyRequests, CodeBacklogFull, "Too many runs of this endpoint or its agent are waiting to start; retry after the number of seconds in Retry-After")
	answerNotMember     = newAnswer(http.StatusUnprocessableEntity, CodeOwnerNotMember, "The endpoint's owner may no longer trigger its agent; the endpoint is paused")
	answerBadBody       = newAnswer(http.StatusBadRequest, CodeBadRequest, "The request body could not be read")
	answerBusy          = newAnswer(http.StatusServiceUnavailable, CodeUnavailable, "The receiver is reading as many request bodies as it may hold; retry after the number of seconds in Retry-After")
	answerEndpointBusy  = newAnswer(http.StatusServiceUnavailable, CodeUnavailable, "The receiver is reading as many request bodies for this endpoint as one endpoint may hold; retry after the number of seconds in Retry-After")
	answerNamespaceBusy = newAnswer(http.StatusServiceUnavailable, CodeUnavailable, "The receiver is reading as many request bodies for this namespace's endpoints as one namespace may hold; retry after the number of seconds in Retry-After")
	answerUnavailable   = newAnswer(http.StatusServiceUnavailable, CodeUnavailable, "The run could not be stored; retry after the number of seconds in Retry-After")
)

var jsonContentType = []string{"application/json"}

func (a answer) write(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = a.contentLength
	h["Cache-Control"] = noStore
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

var noStore = []string{"no-store"}

// busyRetryAfter is the Retry-After header of a 503 for a spent body budget.
var busyRetryAfter = []string{"1"}

// backlogRetryAfter is the Retry-After header of a 429 backlog_full.
var backlogRetryAfter = []string{strconv.Itoa(BacklogRetryAfter)}

// accepted is the body of a 202.
type accepted struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
}
