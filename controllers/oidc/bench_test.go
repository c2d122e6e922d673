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

package oidc_test

import (
	"testing"
	"time"

	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/controllers/oidc/oidctest"
)

// BenchmarkVerify: one GitHub Actions token (RS256, 2048-bit key) verified
// with keys already read, and one forged under the issuer's key ID.
func BenchmarkVerify(b *testing.B) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
	claims := iss.GitHubActions("octo-org/deploys", "refs/heads/main", audience, now)
	for name, token := range map[string]string{
		"valid":  iss.Sign(claims),
		"forged": oidctest.Sign(oidctest.NewKey(iss.KeyID()), claims),
	} {
		b.Run(name, func(b *testing.B) {
			_, _ = v.Verify(b.Context(), iss.URL, audience, iss.Sign(claims), now) // keys read
			b.ReportAllocs()
			for b.Loop() {
				_, _ = v.Verify(b.Context(), iss.URL, audience, token, now)
			}
		})
	}
}
