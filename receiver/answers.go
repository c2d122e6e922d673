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

import "strconv"

// backlogRetryAfter is the Retry-After header of a 429 backlog_full.
var backlogRetryAfter = []string{strconv.Itoa(BacklogRetryAfter)}

// answerIgnored is the body of a call answered 200 without a run (its
// event is not allowed, or its filter did not match).
var answerIgnored = []byte(`{"status":"ignored"}` + "\n")

// accepted is the body of a 202.
type accepted struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
}
