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

package oidc

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// IssuersFlagHelp is the help of --oidc-issuers, the same for the operator
// and the receiver.
const IssuersFlagHelp = "Issuers besides the cluster's whose tokens OIDC senders may use (spec.sender.oidc.issuer), comma-separated https URLs exactly as their tokens' iss spells them. " +
	"The receiver reads each one's discovery document and keys (again on an unknown key ID, at most once a minute); an endpoint naming an issuer not listed is Ready=False OIDCIssuerNotAllowed and the issuer is never contacted. Give the operator and the receiver the same list."

// MaxIssuerLength is the longest issuer URL (the CRD's bound).
const MaxIssuerLength = 256

// Issuers are the issuers besides the cluster's that endpoints may name,
// exactly as tokens spell them in iss.
type Issuers []string

// ParseIssuers checks --oidc-issuers: each an https URL without query or
// fragment, at most MaxIssuerLength characters. Every bad entry is
// reported at once.
func ParseIssuers(list []string) (Issuers, error) {
	var bad []string
	out := make(Issuers, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if err := checkIssuer(s); err != nil {
			bad = append(bad, fmt.Sprintf("%q: %v", s, err))
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("--oidc-issuers: %s", strings.Join(bad, "; "))
	}
	return out, nil
}

func checkIssuer(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case len(s) > MaxIssuerLength:
		return fmt.Errorf("longer than %d characters", MaxIssuerLength)
	case u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("not an https URL")
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("an issuer has no query, fragment or user")
	}
	return nil
}

// Allows tells whether an endpoint may name issuer: the cluster's (""),
// or one listed.
func (l Issuers) Allows(issuer string) bool {
	return issuer == "" || slices.Contains(l, issuer)
}
