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

package v1alpha1

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EndpointRejections counts the calls to an endpoint that the receiver
// refused (any answer of status 400 or more), by error code, over all
// receiver replicas, from the hour before the current one (UTC) until now.
type EndpointRejections struct {
	// since is the start of the counted period: the start of the previous
	// whole hour (UTC). The counts therefore cover between one and two hours.
	// +required
	Since metav1.Time `json:"since"`

	// counts are the refused calls by the error code of their answer
	// (unauthorized, forbidden, rate_limited, ...; see docs/receiver.md).
	// +optional
	// +listType=map
	// +listMapKey=code
	// +kubebuilder:validation:MaxItems=24
	Counts []RejectionCount `json:"counts,omitempty"`

	// lastRejectionTime is when the newest counted call was refused.
	// +optional
	LastRejectionTime *metav1.Time `json:"lastRejectionTime,omitempty"`

	// lastEvaluationError is the newest error of the endpoint's spec.filter
	// (the call was ignored, counted as filter_error) or spec.fields (the
	// call was accepted with the field null, counted as field_error) in the
	// counted period: why calls are ignored.
	// +optional
	LastEvaluationError *EvaluationError `json:"lastEvaluationError,omitempty"`
}

// EvaluationError is an error of an expression of an endpoint, evaluated on
// a call.
type EvaluationError struct {
	// expression is the field whose expression failed: Filter or Fields.
	// +required
	Expression EvaluatedExpression `json:"expression"`
	// message is the error, at most MaxEvaluationErrorBytes: for fields,
	// the names of the fields that failed and the first one's error.
	// +required
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message"`
	// time is when the call was evaluated.
	// +required
	Time metav1.Time `json:"time"`
}

// EvaluatedExpression names an endpoint's expression evaluated on calls.
// +kubebuilder:validation:Enum=Filter;Fields
type EvaluatedExpression string

const (
	ExpressionFilter EvaluatedExpression = "Filter"
	ExpressionFields EvaluatedExpression = "Fields"
)

// MaxEvaluationErrorBytes bounds an evaluation error's message in status
// and in a rejection report.
const MaxEvaluationErrorBytes = 512

// EvaluationErrorMessage is message within MaxEvaluationErrorBytes, cut at
// a character's start: the receiver cuts what it reports, the operator
// what any writer of the receiver's namespace could have put in a report.
func EvaluationErrorMessage(message string) string {
	n := MaxEvaluationErrorBytes
	if len(message) <= n {
		return message
	}
	for n > 0 && !utf8.RuneStart(message[n]) {
		n--
	}
	return message[:n]
}

// RejectionCount is how many calls were refused with one error code.
type RejectionCount struct {
	// code is the error code of the answers, as in their body.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Code string `json:"code"`
	// count is the number of calls refused with code.
	// +required
	// +kubebuilder:validation:Minimum=1
	Count int64 `json:"count"`
}

// The rejection reports: every receiver replica counts the calls it refused
// per endpoint in memory and, at most once a minute and only when a count
// changed, writes them to a ConfigMap of its own in its namespace, named
// RejectionReportPrefix + its pod name and labelled LabelRejectionReport:
// "true". Each data key is an endpoint's UID, its value the JSON of a
// RejectionReportEntry. The operator adds up the entries of all reports into
// each endpoint's status.rejections (the receiver writes no endpoint status)
// and deletes a report once nothing in it is recent enough to count.
const (
	LabelRejectionReport  = "agents.hookrun.dev/rejection-report"
	RejectionReportPrefix = "hookrun-receiver-report-"
	// AnnotationReportWrittenAt is when the replica last wrote the report (RFC 3339).
	AnnotationReportWrittenAt = "agents.hookrun.dev/written-at"
	// RejectionWindow is the length of the periods rejections are counted in.
	// status.rejections adds up the current period and the one before it.
	RejectionWindow = time.Hour
)

// RejectionReportEntry is one endpoint's counts in one replica's report.
// +kubebuilder:object:generate=false
type RejectionReportEntry struct {
	// Namespace and Name are the endpoint's, so that a report names the
	// endpoints it changes without a lookup by UID.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Window is the start of the period Counts belong to: a multiple of
	// RejectionWindow (UTC).
	Window time.Time `json:"window"`
	// Counts are the refused calls in Window by error code.
	Counts map[string]int64 `json:"counts,omitempty"`
	// Previous are the refused calls by error code in the period before Window.
	Previous map[string]int64 `json:"previous,omitempty"`
	// Last is when the newest of them was refused.
	Last time.Time `json:"last"`
	// LastError is the newest evaluation error counted (filter_error or
	// field_error), if any.
	LastError *ReportedError `json:"lastError,omitempty"`
}

// ReportedError is an evaluation error in a rejection report.
// +kubebuilder:object:generate=false
type ReportedError struct {
	Expression EvaluatedExpression `json:"expression"`
	Message    string              `json:"message"`
	Time       time.Time           `json:"time"`
}

// Encode returns the entry as a report holds it.
func (e *RejectionReportEntry) Encode() (string, error) {
	b, err := json.Marshal(e)
	return string(b), err
}

// DecodeRejectionReportEntry parses an entry of a report.
func DecodeRejectionReportEntry(s string) (RejectionReportEntry, error) {
	var e RejectionReportEntry
	err := json.Unmarshal([]byte(s), &e)
	return e, err
}
