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

// Package membership answers one question for the operator and the receiver:
// may an endpoint's owner still trigger its Agent? The owner is a member while
// a SubjectAccessReview for the owner (user and groups) allows verb "trigger"
// on agents/<name> in the endpoint's namespace. Answers are cached briefly so
// a burst of calls costs one review.
//
// A denial is believed only when a second review, asked once the API
// server's /readyz passes, denies too: a starting API server denies every
// review until its RBAC caches are filled, and says nothing about it (no
// evaluation error). Pausing endpoints on those answers would turn an API
// server restart into 422s for members.
package membership
