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

package filter

import (
	"strings"
	"testing"
)

func TestClaims(t *testing.T) {
	const token = `{"iss":"https://token.actions.githubusercontent.com","sub":"repo:octo-org/deploys:ref:refs/heads/main",` +
		`"repository":"octo-org/deploys","ref":"refs/heads/main","workflow":"deploy","run_id":"4242","groups":["a","b"]}`
	for _, tc := range []struct {
		expr    string
		allowed bool
		evalErr bool
	}{
		{`claims.repository == "octo-org/deploys" && claims.ref == "refs/heads/main"`, true, false},
		{`claims.repository == "octo-org/deploys" && claims.ref == "refs/heads/feature"`, false, false},
		{`claims.sub.startsWith("repo:octo-org/")`, true, false},
		{`"b" in claims.groups`, true, false},
		{`claims.environment == "production"`, false, true}, // no such claim: an error, refused
		{`has(claims.environment) && claims.environment == "production"`, false, false},
	} {
		c, err := CompileClaims(tc.expr)
		if err != nil {
			t.Fatalf("CompileClaims(%q): %v", tc.expr, err)
		}
		allowed, err := c.Allow(t.Context(), []byte(token))
		if allowed != tc.allowed || (err != nil) != tc.evalErr {
			t.Errorf("%q: %v, %v; want %v (error %v)", tc.expr, allowed, err, tc.allowed, tc.evalErr)
		}
	}
}

func TestClaimsThatDoNotCompile(t *testing.T) {
	for expr, want := range map[string]string{
		`claims.repository`:      "not bool",
		`body.repository == "x"`: "undeclared reference",
		`claims.repository ==`:   "Syntax error",
		`claims.groups.exists(a, claims.groups.exists(b, claims.groups.exists(c, a + b + c == "x")))`: "more than the limit",
		strings.Repeat("!", MaxLength+1) + "true":                                                     "characters",
	} {
		if _, err := CompileClaims(expr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CompileClaims(%.40q): %v, want an error naming %q", expr, err, want)
		}
	}
}
