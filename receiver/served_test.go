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
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// GET /readyz/endpoint?id=ID, served as the manager serves its readiness
// checks, answers 200 for an endpoint the replica serves and 500 for an
// unknown ID, is ready without an ID (the aggregate /readyz), and leaves no
// refusal in the endpoint's history, as a call on the receive route with a
// wrong secret did.
func TestServedCheck(t *testing.T) {
	h, _ := newMemoryHandler(t)
	addEndpoint(h, "team-a", "served-id")
	probes := http.StripPrefix("/readyz", &healthz.Handler{Checks: map[string]healthz.Checker{servedCheckName: servesEndpoint(h.table)}})
	srv := httptest.NewServer(probes)
	t.Cleanup(srv.Close)

	for _, c := range []struct {
		path string
		want int
	}{
		{"/readyz/endpoint?id=served-id", http.StatusOK},
		{"/readyz/endpoint?id=another-id", http.StatusInternalServerError},
		{"/readyz/endpoint?id=served-id%00", http.StatusInternalServerError},
		{"/readyz/endpoint", http.StatusOK},
		{"/readyz", http.StatusOK},
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s: %d %q, want %d", c.path, resp.StatusCode, body, c.want)
		}
		if c.want != http.StatusOK && !strings.Contains(string(body), servedCheckName) {
			t.Errorf("GET %s: %q does not name the check", c.path, body)
		}
	}
	if n := h.rejections.Len(); n != 0 {
		t.Errorf("the checks counted refusals: %d entries", n)
	}
}
