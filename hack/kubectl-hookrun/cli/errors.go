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

package cli

import (
	"fmt"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// UsageError is an error in the command line.
type UsageError struct{ error }

// Usage marks err as an error in the command line (exit status 2).
func Usage(err error) error { return UsageError{err} }

// The roles docs/access.md describes, named in refusals.
const (
	RoleRead    = "read access to hookrun's kinds (the hookrun-view role; the built-in view, edit and admin roles include it)"
	RoleMember  = "the hookrun-agent-user role (included in the built-in edit and admin roles), and to be the endpoint's owner"
	RoleSecrets = "get on secrets in the namespace (the built-in edit and admin roles have it; hookrun's own roles do not)"
	RoleTokens  = "create on serviceaccounts/token in the namespace (the built-in edit and admin roles have it)"
)

// rbacRefusal matches the API server's words for an RBAC refusal
// (`User "bob" cannot get resource "secrets" ...`); an admission policy's
// refusal says "denied request" instead.
var rbacRefusal = regexp.MustCompile(`cannot \S+ resource `)

// Refused explains an error of the API server: what the user tried, and for
// an RBAC refusal, which role would allow it. Admission policy refusals
// (only the owner may...) say it themselves.
func Refused(err error, action, role string) error {
	if apierrors.IsForbidden(err) && role != "" && rbacRefusal.MatchString(err.Error()) {
		return fmt.Errorf("you may not %s: it needs %s.\nThe API server said: %w", action, role, err)
	}
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
		return fmt.Errorf("you may not %s.\nThe API server said: %w", action, err)
	}
	return fmt.Errorf("%s: %w", action, err)
}
