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
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/controllers/oidc/oidctest"
)

const audience = "https://hooks.example.com/deploys"

// oracle is go-oidc's verifier of iss's tokens for audience at now: a
// second, well-kept implementation each verdict is checked against.
func oracle(t *testing.T, iss *oidctest.Issuer, now time.Time) *gooidc.IDTokenVerifier {
	t.Helper()
	ctx := gooidc.ClientContext(t.Context(), iss.Client())
	p, err := gooidc.NewProvider(ctx, iss.URL)
	if err != nil {
		t.Fatal(err)
	}
	return p.VerifierContext(ctx, &gooidc.Config{ClientID: audience, Now: func() time.Time { return now }})
}

func TestAGitHubActionsTokenIsVerified(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
	tok, err := v.Verify(t.Context(), iss.URL, audience, iss.Sign(iss.GitHubActions("octo-org/deploys", "refs/heads/main", audience, now)), now)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Subject != "repo:octo-org/deploys:ref:refs/heads/main" || !strings.Contains(string(tok.Payload), `"repository":"octo-org/deploys"`) {
		t.Errorf("got subject %q, payload %s", tok.Subject, tok.Payload)
	}
}

// TestRefusalsAgreeWithGoOIDC: every token go-oidc refuses, Verify refuses
// with the error that names why; the one it accepts, Verify accepts.
func TestRefusalsAgreeWithGoOIDC(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	claims := func(change func(map[string]any)) map[string]any {
		c := iss.GitHubActions("octo-org/deploys", "refs/heads/main", audience, now)
		change(c)
		return c
	}
	forged := oidctest.NewKey(iss.KeyID()) // the issuer's key ID, another key
	none := strings.Join([]string{b64(`{"alg":"none","typ":"JWT"}`), b64(`{"iss":"` + iss.URL + `","aud":"` + audience + `"}`), ""}, ".")
	hs256 := signHS256(t, iss, claims(func(map[string]any) {}))
	for _, tc := range []struct {
		name  string
		token string
		want  error // nil: accepted
	}{
		{"valid", iss.Sign(claims(func(map[string]any) {})), nil},
		{"another audience", iss.Sign(claims(func(c map[string]any) { c["aud"] = "https://other.example.com" })), oidc.ErrClaims},
		{"audience among several", iss.Sign(claims(func(c map[string]any) { c["aud"] = []string{"x", audience} })), nil},
		{"expired", iss.Sign(claims(func(c map[string]any) { c["exp"] = now.Add(-10 * time.Minute).Unix() })), oidc.ErrClaims},
		{"not valid yet", iss.Sign(claims(func(c map[string]any) { c["nbf"] = now.Add(10 * time.Minute).Unix() })), oidc.ErrClaims},
		{"no exp", iss.Sign(claims(func(c map[string]any) { delete(c, "exp") })), oidc.ErrClaims},
		{"another issuer's name", iss.Sign(claims(func(c map[string]any) { c["iss"] = "https://token.actions.githubusercontent.com" })), oidc.ErrClaims},
		{"forged with the issuer's key ID", oidctest.Sign(forged, claims(func(map[string]any) {})), oidc.ErrSignature},
		{"alg none", none, oidc.ErrMalformed},
		{"HS256 with the public key as secret", hs256, oidc.ErrMalformed},
		{"not a JWT", "secret-shared-by-everyone", oidc.ErrMalformed},
		{"too long", iss.Sign(claims(func(c map[string]any) { c["pad"] = strings.Repeat("x", oidc.MaxTokenBytes) })), oidc.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
			_, err := v.Verify(t.Context(), iss.URL, audience, tc.token, now)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("Verify: %v, want %v", err, tc.want)
			}
			if tc.name == "too long" || tc.name == "no exp" {
				return // go-oidc has no length bound, and takes a token without exp
			}
			_, oerr := oracle(t, iss, now).Verify(t.Context(), tc.token)
			if (oerr == nil) != (err == nil) {
				t.Errorf("go-oidc says %v, Verify %v", oerr, err)
			}
		})
	}
}

func TestAnIssuerNotListedIsNeverContacted(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	v := newVerifier(nil, nil, iss.Client(), nil)
	_, err := v.Verify(t.Context(), iss.URL, audience, iss.Sign(iss.GitHubActions("o/r", "refs/heads/main", audience, now)), now)
	if !errors.Is(err, oidc.ErrIssuerNotAllowed) || iss.Requests.Load() != 0 {
		t.Errorf("Verify: %v, %d requests to the issuer; want ErrIssuerNotAllowed and none", err, iss.Requests.Load())
	}
}

// TestKeysAreReadAgainAtMostOncePerMinute: a rotation at the issuer is
// followed at once when the last read is a minute old, else a minute
// later; tokens with made-up key IDs never cost more than one read a
// minute; a token of a retired key is refused.
func TestKeysAreReadAgainAtMostOncePerMinute(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
	verify := func(token string, at time.Time) error {
		_, err := v.Verify(t.Context(), iss.URL, audience, token, at)
		return err
	}
	old := iss.Sign(iss.GitHubActions("o/r", "refs/heads/main", audience, now))
	if err := verify(old, now); err != nil || iss.Requests.Load() != 2 {
		t.Fatalf("first token: %v after %d requests; want accepted after 2 (discovery, keys)", err, iss.Requests.Load())
	}
	forger := oidctest.NewKey("")
	for i := range 100 {
		forger.KeyID = fmt.Sprintf("made-up-%d", i)
		forged := oidctest.Sign(forger, iss.GitHubActions("o/r", "refs/heads/main", audience, now))
		if err := verify(forged, now.Add(time.Second)); !errors.Is(err, oidc.ErrUnknownKey) {
			t.Fatalf("a made-up key ID: %v, want ErrUnknownKey", err)
		}
	}
	if iss.Requests.Load() != 2 {
		t.Errorf("100 tokens of made-up key IDs cost %d requests to the issuer; want none", iss.Requests.Load()-2)
	}
	iss.Rotate(false)
	rotated := iss.Sign(iss.GitHubActions("o/r", "refs/heads/main", audience, now))
	if err := verify(rotated, now.Add(30*time.Second)); !errors.Is(err, oidc.ErrUnknownKey) || iss.Requests.Load() != 2 {
		t.Errorf("the new key within the minute: %v after %d requests; want ErrUnknownKey, no read", err, iss.Requests.Load())
	}
	// The minute counts from the end of the last read.
	if err := verify(rotated, now.Add(oidc.RefreshInterval+time.Second)); err != nil || iss.Requests.Load() != 4 {
		t.Errorf("the new key a minute later: %v after %d requests; want accepted after one more read", err, iss.Requests.Load())
	}
	if err := verify(old, now.Add(oidc.RefreshInterval+2*time.Second)); !errors.Is(err, oidc.ErrUnknownKey) || iss.Requests.Load() != 4 {
		t.Errorf("the retired key: %v after %d requests; want ErrUnknownKey, no read", err, iss.Requests.Load())
	}
}

// TestKeysAreReadAgainWhenOld: keys older than MaxKeyAge serve the call
// while a read starts behind it, so a key the issuer dropped stops
// verifying also for tokens without a key ID.
func TestKeysAreReadAgainWhenOld(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
	withoutKeyID := func(at time.Time) string {
		k := iss.SigningKey()
		k.KeyID = ""
		return oidctest.Sign(k, iss.GitHubActions("o/r", "refs/heads/main", audience, at))
	}
	if _, err := v.Verify(t.Context(), iss.URL, audience, withoutKeyID(now), now); err != nil {
		t.Fatalf("a token without a key ID: %v", err)
	}
	old := iss.SigningKey()
	iss.Rotate(false)
	later := now.Add(oidc.MaxKeyAge)
	if _, err := v.Verify(t.Context(), iss.URL, audience, oidctest.Sign(withKeyID(old, ""), iss.GitHubActions("o/r", "refs/heads/main", audience, later)), later); err != nil {
		t.Fatalf("the old key, MaxKeyAge after the read: %v; want it to serve while the keys are read again", err)
	}
	dropped := oidctest.Sign(withKeyID(old, ""), iss.GitHubActions("o/r", "refs/heads/main", audience, later))
	waitFor(t, func() bool {
		_, err := v.Verify(t.Context(), iss.URL, audience, dropped, later)
		return errors.Is(err, oidc.ErrSignature)
	})
	if n := iss.Requests.Load(); n != 4 {
		t.Errorf("%d requests to the issuer, want 4: one read behind the call", n)
	}
}

// TestKeysOutliveTheIssuer: once read, keys keep verifying while the
// issuer is down; an issuer never read answers ErrKeysUnavailable, is
// tried again RetryInterval after the failed read, and reports each failed
// read once.
func TestKeysOutliveTheIssuer(t *testing.T) {
	iss := oidctest.NewIssuer()
	now := time.Now()
	v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
	token := iss.Sign(iss.GitHubActions("o/r", "refs/heads/main", audience, now))
	if _, err := v.Verify(t.Context(), iss.URL, audience, token, now); err != nil {
		t.Fatal(err)
	}
	client := iss.Client()
	iss.Close()
	if _, err := v.Verify(t.Context(), iss.URL, audience, token, now.Add(oidc.MaxKeyAge)); err != nil {
		t.Errorf("the issuer down, keys read before: %v", err)
	}

	down := oidctest.NewIssuer()
	downURL := down.URL
	token = down.Sign(down.GitHubActions("o/r", "refs/heads/main", audience, now))
	down.Close()
	// Reported from the read's goroutine, before the calls waiting on it
	// go on: the slice is read after them.
	var failures []string
	v = newVerifier(nil, oidc.Issuers{downURL}, client, func(issuer string, err error) { failures = append(failures, issuer) })
	for range 10 {
		if _, err := v.Verify(t.Context(), downURL, audience, token, now); !errors.Is(err, oidc.ErrKeysUnavailable) {
			t.Fatalf("an issuer never read: %v, want ErrKeysUnavailable", err)
		}
	}
	if len(failures) != 1 || failures[0] != downURL {
		t.Errorf("10 calls to an issuer down reported %v; want one failed read of %s", failures, downURL)
	}
	_, _ = v.Verify(t.Context(), downURL, audience, token, now.Add(oidc.RetryInterval+oidc.FetchTimeout))
	if len(failures) != 2 {
		t.Errorf("after RetryInterval: %d failed reads reported, want 2", len(failures))
	}
}

// TestTheClusterListedUnderItsNameIsTheCluster: a service account token of
// a listed issuer that is the cluster's own name is the cluster's, so the
// receiver holds it to the endpoint's namespace.
func TestTheClusterListedUnderItsNameIsTheCluster(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	get := func(_ context.Context, path string) ([]byte, error) {
		if path == oidc.DiscoveryPath {
			return []byte(`{"issuer":"` + iss.URL + `"}`), nil
		}
		resp, err := iss.Client().Get(iss.URL + "/keys")
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	v := newVerifier(get, oidc.Issuers{iss.URL}, iss.Client(), nil)
	claims := iss.GitHubActions("o/r", "refs/heads/main", audience, now)
	claims["kubernetes.io"] = map[string]any{"namespace": "team-b"}
	tok, err := v.Verify(t.Context(), iss.URL, audience, iss.Sign(claims), now)
	if err != nil || !tok.Cluster || tok.Namespace != "team-b" {
		t.Errorf("a token of the cluster's issuer, listed: %+v, %v; want the cluster's, of team-b", tok, err)
	}
	delete(claims, "kubernetes.io")
	if tok, err = v.Verify(t.Context(), iss.URL, audience, iss.Sign(claims), now); err != nil || tok.Cluster {
		t.Errorf("a token of the listed issuer without kubernetes.io: %+v, %v; want not the cluster's", tok, err)
	}
}

func TestConcurrentFirstCallsReadTheKeysOnce(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
	token := iss.Sign(iss.GitHubActions("o/r", "refs/heads/main", audience, now))
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() { _, errs[i] = v.Verify(t.Context(), iss.URL, audience, token, now) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil || iss.Requests.Load() != 2 {
		t.Errorf("20 calls at once: %v, %d requests; want all accepted after 2", err, iss.Requests.Load())
	}
}

func TestAnIssuerThatNamesAnotherIsRefused(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	iss.Claims = "https://token.actions.githubusercontent.com" // its document names another issuer than the one listed
	v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
	_, err := v.Verify(t.Context(), iss.URL, audience, iss.Sign(iss.GitHubActions("o/r", "refs/heads/main", audience, now)), now)
	if !errors.Is(err, oidc.ErrKeysUnavailable) || !strings.Contains(err.Error(), "names issuer") {
		t.Errorf("Verify: %v, want ErrKeysUnavailable naming the issuer mismatch", err)
	}
}

func TestTheClusterIssuerIsReadThroughTheGetter(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	var paths []string
	get := func(ctx context.Context, path string) ([]byte, error) {
		paths = append(paths, path)
		switch path {
		case oidc.DiscoveryPath:
			return []byte(`{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"https://unreachable.example/keys"}`), nil
		case oidc.JWKSPath:
			resp, err := iss.Client().Get(iss.URL + "/keys")
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			var set jose.JSONWebKeySet
			if err := jsonDecode(resp, &set); err != nil {
				return nil, err
			}
			return jsonEncode(set)
		}
		return nil, errors.New("unexpected path " + path)
	}
	v := newVerifier(get, nil, nil, nil)
	claims := iss.GitHubActions("o/r", "refs/heads/main", audience, now)
	claims["iss"], claims["sub"] = "https://kubernetes.default.svc.cluster.local", "system:serviceaccount:team-a:nightly"
	tok, err := v.Verify(t.Context(), "", audience, iss.Sign(claims), now)
	if err != nil || tok.Subject != "system:serviceaccount:team-a:nightly" || strings.Join(paths, " ") != oidc.DiscoveryPath+" "+oidc.JWKSPath {
		t.Errorf("Verify: %v, subject %q, paths read %v", err, tok.Subject, paths)
	}
}

func TestParseIssuers(t *testing.T) {
	got, err := oidc.ParseIssuers([]string{"https://token.actions.githubusercontent.com", " https://accounts.google.com ", "https://token.actions.githubusercontent.com"})
	if err != nil || len(got) != 2 || !got.Allows("https://accounts.google.com") || !got.Allows("") || got.Allows("https://evil.example") {
		t.Errorf("ParseIssuers: %v, %v", got, err)
	}
	_, err = oidc.ParseIssuers([]string{"http://plain.example", "https://a.example/?q=1", "https://a.example/#f", "https://" + strings.Repeat("a", 300)})
	for _, want := range []string{"http://plain.example", "?q=1", "#f", "longer than"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseIssuers: %v, want it to name %q", err, want)
		}
	}
}

// signHS256 signs claims with HMAC-SHA256 under the issuer's key ID, with
// the issuer's public key (its JWK, as the issuer serves it) as the secret:
// the algorithm confusion an attacker tries, which must not verify.
func signHS256(t *testing.T, iss *oidctest.Issuer, claims any) string {
	t.Helper()
	resp, err := iss.Client().Get(iss.URL + "/keys")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	public, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	key := jose.JSONWebKey{Key: public, KeyID: iss.KeyID(), Algorithm: string(jose.HS256)}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func withKeyID(k jose.JSONWebKey, kid string) jose.JSONWebKey {
	k.KeyID = kid
	return k
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		runtime.Gosched()
	}
}

// TestATokenThatLivesTooLongIsRefused: with MaxLifetime, a token whose exp
// is further from its iat (else its nbf) than it is refused, at any time
// of its life, and one that says neither when it was issued too; one
// within it verifies. The oracle (go-oidc) checks no lifetime: it verifies
// each of them, so the refusals are ours alone.
func TestATokenThatLivesTooLongIsRefused(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	clk := clocktesting.NewFakeClock(now)
	v := oidc.NewVerifier(oidc.Config{Issuers: oidc.Issuers{iss.URL}, Client: iss.Client(), Clock: clk, MaxLifetime: time.Hour})
	claims := func(edit func(map[string]any)) map[string]any {
		c := iss.GitHubActions("octo-org/deploys", "refs/heads/main", audience, now)
		edit(c)
		return c
	}
	for _, tc := range []struct {
		name   string
		claims map[string]any
		ok     bool
	}{
		{"ten minutes", claims(func(map[string]any) {}), true},
		{"an hour", claims(func(c map[string]any) { c["exp"] = now.Add(time.Hour).Unix() }), true},
		{"a year", claims(func(c map[string]any) { c["exp"] = now.Add(8760 * time.Hour).Unix() }), false},
		{"a year, issued a year ago", claims(func(c map[string]any) {
			c["iat"], c["nbf"] = now.Add(-8759*time.Hour).Unix(), now.Add(-8759*time.Hour).Unix()
			c["exp"] = now.Add(time.Hour).Unix()
		}), false},
		{"no iat, nbf an hour before exp", claims(func(c map[string]any) {
			delete(c, "iat")
			c["nbf"], c["exp"] = now.Unix(), now.Add(time.Hour).Unix()
		}), true},
		{"no iat, nbf two hours before exp", claims(func(c map[string]any) {
			delete(c, "iat")
			c["nbf"], c["exp"] = now.Unix(), now.Add(2*time.Hour).Unix()
		}), false},
		{"neither iat nor nbf", claims(func(c map[string]any) { delete(c, "iat"); delete(c, "nbf") }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := iss.Sign(tc.claims)
			if _, err := oracle(t, iss, now).Verify(t.Context(), raw); err != nil {
				t.Fatalf("go-oidc refuses the token: %v", err)
			}
			_, err := v.Verify(t.Context(), iss.URL, audience, raw)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, oidc.ErrClaims) {
				t.Fatalf("Verify = %v, want %v", err, oidc.ErrClaims)
			}
		})
	}
}

// TestAPIAudiencesOfTheProcessToken: a Pod's own token (its aud is the API
// server's audiences) answers without asking the API server, and Verify
// refuses every token of an endpoint whose audience is among them.
func TestAPIAudiencesOfTheProcessToken(t *testing.T) {
	iss := oidctest.NewIssuer()
	defer iss.Close()
	now := time.Now()
	podToken := iss.Sign(map[string]any{"iss": iss.URL, "aud": []string{"https://kubernetes.default.svc.cluster.local", "k3s"},
		"sub": "system:serviceaccount:hookrun-system:hookrun-receiver", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	// No host: any request to the API server would fail.
	aud, err := oidc.APIAudiences(t.Context(), &rest.Config{BearerToken: podToken}, "hookrun-system")
	if err != nil || strings.Join(aud, ",") != "https://kubernetes.default.svc.cluster.local,k3s" {
		t.Fatalf("APIAudiences = %v, %v", aud, err)
	}
	v := oidc.NewVerifier(oidc.Config{Issuers: oidc.Issuers{iss.URL}, Client: iss.Client(), APIAudiences: aud})
	raw := iss.Sign(iss.GitHubActions("octo-org/deploys", "refs/heads/main", "k3s", now))
	if _, err := v.Verify(t.Context(), iss.URL, "k3s", raw); !errors.Is(err, oidc.ErrAPIAudience) {
		t.Fatalf("Verify for the API server's audience = %v, want %v", err, oidc.ErrAPIAudience)
	}
	if _, err := v.Verify(t.Context(), iss.URL, audience, iss.Sign(iss.GitHubActions("octo-org/deploys", "refs/heads/main", audience, now))); err != nil {
		t.Fatalf("Verify for another audience: %v", err)
	}
}

// TestAnIssuerKeepsItsKeysOnItsHost: a listed issuer whose document names
// a jwks_uri on another host (in the cluster, link-local, another port)
// is never read there: its tokens answer ErrKeysUnavailable, and the other
// host sees no request.
func TestAnIssuerKeepsItsKeysOnItsHost(t *testing.T) {
	elsewhere := oidctest.NewIssuer()
	defer elsewhere.Close()
	iss := oidctest.NewIssuer()
	defer iss.Close()
	iss.JWKSURI = elsewhere.URL + "/keys" // 127.0.0.1, another port
	now := time.Now()
	v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
	_, err := v.Verify(t.Context(), iss.URL, audience, iss.Sign(iss.GitHubActions("octo-org/deploys", "refs/heads/main", audience, now)), now)
	if !errors.Is(err, oidc.ErrKeysUnavailable) {
		t.Fatalf("Verify = %v, want %v", err, oidc.ErrKeysUnavailable)
	}
	if n := elsewhere.Requests.Load(); n != 0 {
		t.Fatalf("the other host served %d requests", n)
	}
}

// TestRSAKeysOver4096BitsAreDropped: a key set's RSA keys over MaxRSABits
// are not kept (a token without a key ID is tried against every key, and
// an RSA verification's cost grows with the key): a token naming such a
// key's ID finds no key, where a kept key of that ID would fail the
// signature.
func TestRSAKeysOver4096BitsAreDropped(t *testing.T) {
	huge := func(bits int, kid string) jose.JSONWebKey {
		// A public key needs no private key to be served: an odd modulus
		// of the size, which no token is signed with.
		n := new(big.Int).Lsh(big.NewInt(1), uint(bits-1))
		n.Or(n, big.NewInt(1))
		return jose.JSONWebKey{Key: &rsa.PublicKey{N: n, E: 65537}, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig"}
	}
	iss := oidctest.NewIssuer()
	defer iss.Close()
	iss.Extra = []jose.JSONWebKey{huge(8192, "huge"), huge(4096, "large")}
	now := time.Now()
	v := newVerifier(nil, oidc.Issuers{iss.URL}, iss.Client(), nil)
	signedAs := func(kid string) string {
		k := withKeyID(iss.SigningKey(), kid)
		return oidctest.Sign(k, iss.GitHubActions("octo-org/deploys", "refs/heads/main", audience, now))
	}
	if _, err := v.Verify(t.Context(), iss.URL, audience, signedAs("huge"), now); !errors.Is(err, oidc.ErrUnknownKey) {
		t.Fatalf("a token of the 8,192-bit key's ID: %v, want %v (the key dropped)", err, oidc.ErrUnknownKey)
	}
	if _, err := v.Verify(t.Context(), iss.URL, audience, signedAs("large"), now); !errors.Is(err, oidc.ErrSignature) {
		t.Fatalf("a token of the 4,096-bit key's ID: %v, want %v (the key kept)", err, oidc.ErrSignature)
	}
}
