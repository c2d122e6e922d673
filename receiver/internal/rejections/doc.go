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

// Package rejections is what a receiver replica keeps of the calls it
// refuses: a count per endpoint and error code over two periods (with a
// filter's last evaluation error), and the writer that hands the counts to
// the operator at most once a minute, in the replica's own report
// ConfigMap, shared between namespaces when there are more endpoints than
// lines. Counting a refusal allocates nothing and costs no API request.
//
// It imports only api/ and receiver/answer of hookrun.
package rejections
