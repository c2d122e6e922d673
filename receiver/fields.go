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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/receiver/internal/answer"
	"github.com/hookrun/hookrun/receiver/internal/senders"
)

// spec.fields: values taken from a call once it is accepted (CEL, as the
// filter), stored beside its body in the payload Secret.

var answerFieldsInvalid = answer.New(http.StatusUnprocessableEntity, answer.CodeFieldsInvalid,
	"The endpoint's spec.fields do not compile; see the endpoint's Ready condition")

var answerFieldsBusy = answer.New(http.StatusServiceUnavailable, answer.CodeUnavailable,
	"The receiver is evaluating as many calls of this endpoint's spec.filter or spec.fields as one endpoint may; retry after the number of seconds in Retry-After")

var answerNoRoomForFields = answer.New(http.StatusRequestEntityTooLarge, answer.CodePayloadTooLarge,
	"The body and the endpoint's spec.fields of it together are larger than a payload may be (1 MiB, 1048576 bytes)")

const (
	reasonFieldsInvalid = "fields do not compile"
	reasonFieldsBusy    = "field evaluations of the endpoint busy"
	reasonNoRoom        = "body and fields over the payload's size"
)

// secretHeaders carry the secrets of the sender types (signatures are not
// secrets): no field sees them, since a field's value is stored in the
// payload Secret and sent to the agent (the filter, whose value goes
// nowhere, does).
var secretHeaders = []string{senders.SecretHeader, senders.HeaderAuthorization, senders.HeaderGitLabToken, "Proxy-Authorization", "Cookie"}

// withoutCredentials is h without secretHeaders (h itself when it has none
// of them).
func withoutCredentials(h http.Header) http.Header {
	for _, k := range secretHeaders {
		if _, ok := h[k]; ok {
			out := h.Clone()
			for _, k := range secretHeaders {
				delete(out, k)
			}
			return out
		}
	}
	return h
}

// evaluateFieldsOf evaluates compiled fields; tests replace it with one
// that blocks.
var evaluateFieldsOf = func(ctx context.Context, f *filter.Fields, call filter.Call) filter.Values {
	return f.Eval(ctx, call)
}

// evaluateFields is the step before the duplicate check for an endpoint
// with spec.fields: fields that do not compile answer 422 fields_invalid;
// otherwise they are evaluated once, within the endpoint's evaluation
// slots (as its filter is: a call that finds none within filterWait is
// answered 503 with Retry-After), on the call's headers without its
// credentials, and kept for the payload Secret. A field that fails is
// null, and the call is counted in hookrun_receiver_field_errors_total. A
// body that leaves its fields no room in the payload Secret (1 MiB for
// all of its values) is answered 413.
func (h *Handler) evaluateFields(c *callState) int {
	if len(c.ep.Spec.Fields) == 0 {
		return notAnswered
	}
	if !h.filterGate.Enter(c.r.Context(), c.ep.Namespace, c.ep.UID) {
		c.w.Header()["Retry-After"] = answer.BusyRetryAfter
		return c.reject(answerFieldsBusy, reasonFieldsBusy)
	}
	defer h.filterGate.Leave(c.ep.Namespace, c.ep.UID)
	f, err := h.table.FieldsOf(c.r.Context(), c.e, h.store.Fields)
	if err != nil {
		h.log.Error(err, "reading an endpoint's fields", "endpoint", c.ep.Namespace+"/"+c.ep.Name)
		return h.unavailable(c, reasonStoreFailed)
	}
	if f.Err != nil {
		return c.reject(answerFieldsInvalid, reasonFieldsInvalid)
	}
	// Not stopped when the caller hangs up: the run is stored anyway (the
	// store's writes outlive the call), so its fields must be whole.
	v := evaluateFieldsOf(context.WithoutCancel(c.r.Context()), f.Compiled,
		filter.Call{Header: withoutCredentials(c.r.Header), Event: c.d.Event, Body: c.body})
	if v.TimedOut {
		return h.evaluationTimedOut(c)
	}
	var errs []byte
	if len(v.Errors) > 0 {
		errs, _ = json.Marshal(v.Errors) // names: identifiers
	}
	if len(c.body)+len(v.Object)+len(errs) > agentsv1alpha1.MaxPayloadBytes {
		return c.reject(answerNoRoomForFields, reasonNoRoom)
	}
	if errs != nil {
		h.metrics.fieldErrors.Inc()
		h.rejections.AddError(c.ep, slotFieldError, c.now, agentsv1alpha1.ExpressionFields,
			fmt.Sprintf("%d of %d fields failed (%s); %s", len(v.Errors), len(f.Compiled.Names()), strings.Join(v.Errors, ", "), v.FirstError))
	}
	c.fields, c.fieldErrors, c.send = v.Object, errs, f.Payload
	return notAnswered
}

// payloadData is what the payload Secret of the call holds: its body, and
// its fields when the endpoint names some. It is made once, for the
// duplicate check and the run's store alike.
func (c *callState) payloadData() map[string][]byte {
	if c.data != nil {
		return c.data
	}
	c.data = map[string][]byte{agentsv1alpha1.PayloadBodyKey: c.body}
	if c.fields != nil {
		c.data[agentsv1alpha1.PayloadFieldsKey] = c.fields
	}
	if c.fieldErrors != nil {
		c.data[agentsv1alpha1.PayloadFieldErrorsKey] = c.fieldErrors
	}
	return c.data
}
