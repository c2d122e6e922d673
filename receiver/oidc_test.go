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
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/controllers/oidc/oidctest"
)

// The receiver's client reads a listed issuer's keys over https only: a
// redirect to plain HTTP is not followed, and neither is a fourth one.
func TestIssuerReadsFollowOnlyHTTPSRedirects(t *testing.T) {
	var plainHits atomic.Int64
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { plainHits.Add(1) }))
	defer plain.Close()
	iss := oidctest.NewIssuer()
	defer iss.Close()
	hops := func(to string) *httptest.Server {
		return httptest.NewTLSServer(http.RedirectHandler(to, http.StatusFound))
	}
	for name, tc := range map[string]struct {
		target string // where the listed issuer redirects its reads (the path kept)
		ok     bool
	}{
		"to https": {iss.URL, true},
		"to http":  {plain.URL, false},
	} {
		t.Run(name, func(t *testing.T) {
			redirecting := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tc.target+r.URL.Path, http.StatusFound)
			}))
			defer redirecting.Close()
			client := oidcClient()
			client.Transport = iss.Client().Transport // httptest's servers share one certificate
			iss.Claims = redirecting.URL              // the document the redirect leads to names the listed issuer
			// and its keys on the listed issuer's host, from where they
			// are redirected too.
			iss.JWKSURI = redirecting.URL + "/keys"
			defer func() { iss.Claims, iss.JWKSURI = "", "" }()
			v := oidc.NewVerifier(oidc.Config{Issuers: oidc.Issuers{redirecting.URL}, Client: client})
			claims := iss.GitHubActions("o/r", "refs/heads/main", "aud", time.Now())
			claims["iss"] = redirecting.URL
			_, err := v.Verify(t.Context(), redirecting.URL, "aud", iss.Sign(claims))
			if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, oidc.ErrKeysUnavailable) {
				t.Errorf("Verify: %v, want accepted %v", err, tc.ok)
			}
		})
	}
	if plainHits.Load() != 0 {
		t.Errorf("the plain HTTP server got %d requests, want none", plainHits.Load())
	}

	// Four redirects in a row: the fourth is not followed.
	last := iss.URL + oidc.DiscoveryPath
	var chain []*httptest.Server
	for range 4 {
		s := hops(last)
		chain = append(chain, s)
		last = s.URL
	}
	defer func() {
		for _, s := range chain {
			s.Close()
		}
	}()
	client := oidcClient()
	client.Transport = iss.Client().Transport
	if _, err := client.Get(last); err == nil {
		t.Error("four redirects were followed")
	}
}
