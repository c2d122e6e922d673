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
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hookrun/hookrun/controllers/oidc"
)

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }

func jsonEncode(v any) ([]byte, error) { return json.Marshal(v) }

// verifier is a Verifier on a fake clock: Verify takes the time to verify
// at.
type verifier struct {
	v     *oidc.Verifier
	clock *clocktesting.FakeClock
}

func newVerifier(get oidc.Getter, issuers oidc.Issuers, client *http.Client, failed func(string, error)) *verifier {
	clk := clocktesting.NewFakeClock(time.Now())
	return &verifier{oidc.NewVerifier(oidc.Config{Cluster: get, Issuers: issuers, Client: client, Clock: clk, Failed: failed}), clk}
}

// Verify verifies raw with the clock at at.
func (v *verifier) Verify(ctx context.Context, issuer, audience, raw string, at time.Time) (oidc.Token, error) {
	v.clock.SetTime(at)
	return v.v.Verify(ctx, issuer, audience, raw)
}
