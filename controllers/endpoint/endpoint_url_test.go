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

package endpoint

import "testing"

func TestEndpointURL(t *testing.T) {
	for base, want := range map[string]string{
		"https://hooks.example.com":       "https://hooks.example.com/api/webhooks/ID/receive",
		"https://hooks.example.com/":      "https://hooks.example.com/api/webhooks/ID/receive",
		"http://127.0.0.1:8443/prefix//":  "http://127.0.0.1:8443/prefix/api/webhooks/ID/receive",
		"https://example.com/hooks/team1": "https://example.com/hooks/team1/api/webhooks/ID/receive",
	} {
		if got := EndpointURL(base, "ID"); got != want {
			t.Errorf("EndpointURL(%q) = %q, want %q", base, got, want)
		}
	}
}
