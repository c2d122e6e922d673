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
	"strings"
	"testing"
)

func TestEndpointIDFromPath(t *testing.T) {
	id := strings.Repeat("A", 43)
	cases := map[string]string{
		"/api/webhooks/" + id + "/receive":  id,
		"/api/webhooks/x/receive":           "x",
		"/api/webhooks//receive":            "",
		"/api/webhooks/" + id + "/receive/": "",
		"/api/webhooks/a/b/receive":         "",
		"//api/webhooks/" + id + "/receive": "",
		"/api/webhooks/" + id:               "",
		"/API/webhooks/" + id + "/receive":  "",
		"/":                                 "",
	}
	for path, want := range cases {
		got, ok := endpointIDFromPath(path)
		if got != want || ok != (want != "") {
			t.Errorf("endpointIDFromPath(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
}

func FuzzEndpointIDFromPath(f *testing.F) {
	f.Add("/api/webhooks/abc/receive")
	f.Add("/api/webhooks//receive")
	f.Add("/api/webhooks/a/b/receive")
	f.Fuzz(func(t *testing.T, path string) {
		id, ok := endpointIDFromPath(path)
		if !ok {
			return
		}
		if id == "" || strings.Contains(id, "/") || routePrefix+id+routeSuffix != path {
			t.Fatalf("endpointIDFromPath(%q) = %q", path, id)
		}
	})
}
