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

package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// httpJSON is A2A 1.0's HTTP+JSON binding: each operation has its own
// method and path under the agent's URL (and its tenant), the body is the
// result itself, and an error is an HTTP status with a google.rpc.Status
// body: {"error": {"code", "status", "message", "details": [ErrorInfo]}}.
type httpJSON struct{}

func (httpJSON) request(c *Client, cl *call) (string, string, any) {
	base := strings.TrimSuffix(c.URL, "/") + tenantPath(c.Tenant)
	switch cl.kind {
	case opGet:
		return http.MethodGet, base + "/tasks/" + url.PathEscape(cl.taskID), nil
	case opCancel:
		return http.MethodPost, base + "/tasks/" + url.PathEscape(cl.taskID) + ":cancel", struct{}{}
	}
	return http.MethodPost, base + "/message:send", cl.params
}

// tenantPath is the path prefix of a tenant: each of its segments escaped,
// its slashes kept (a tenant may be "projects/p/locations/l").
func tenantPath(tenant string) string {
	if tenant == "" {
		return ""
	}
	segments := strings.Split(tenant, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return "/" + strings.Join(segments, "/")
}

func (httpJSON) result(cl *call, status int, body []byte) (json.RawMessage, error) {
	if !success(status) {
		return nil, restError(cl, status, body)
	}
	if b := bytes.TrimSpace(body); len(b) == 0 || string(b) == "null" {
		return nil, &Error{Op: cl.name, StatusCode: status, Err: errors.New("the answer has no result")}
	}
	return body, nil
}

// restStatus is the google.rpc.Status of an HTTP+JSON error.
type restStatus struct {
	Error *struct {
		Status  string            `json:"status"`
		Message string            `json:"message"`
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

// errorInfoType ends the @type of a google.rpc.ErrorInfo detail.
const errorInfoType = "google.rpc.ErrorInfo"

// restError is the error of an HTTP+JSON answer with a status that is not
// a success: its message and reason when the body is a google.rpc.Status,
// else the start of the body.
func restError(cl *call, status int, body []byte) *Error {
	e := statusError(cl.name, status, body)
	var s restStatus
	if json.Unmarshal(body, &s) == nil && s.Error != nil {
		e.Reason = Sanitize(errorReason(s.Error.Details))
		msg := Sanitize(s.Error.Message)
		if msg == "" {
			msg = "no message"
		}
		e.Err = errors.New(msg)
	}
	// A server without the binding (or this version of it) has no such
	// path or method: its 404, 405 or 501 to a send says so. Not to a get
	// or a cancel, where 404 is a task it does not know.
	noSend := cl.kind == opSend && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented)
	if noSend || e.Reason == reasonVersionNotSupported {
		// Final, whatever the status (501): the agent will not change its
		// version by being asked again.
		e.VersionRefused, e.Retryable = true, false
	}
	return e
}

// errorReason is the reason of the first ErrorInfo among details.
func errorReason(details []json.RawMessage) string {
	for _, raw := range details {
		var info struct {
			Type   string `json:"@type"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(raw, &info) == nil && strings.HasSuffix(info.Type, errorInfoType) {
			return info.Reason
		}
	}
	return ""
}
