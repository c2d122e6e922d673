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

package main

import (
	"context"
	"fmt"
	"regexp"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The roles docs/access.md describes, named in refusals.
const (
	roleRead    = "read access to hookrun's kinds (the hookrun-view role; the built-in view, edit and admin roles include it)"
	roleMember  = "the hookrun-agent-user role (included in the built-in edit and admin roles), and to be the endpoint's owner"
	roleSecrets = "get on secrets in the namespace (the built-in edit and admin roles have it; hookrun's own roles do not)"
	roleTokens  = "create on serviceaccounts/token in the namespace (the built-in edit and admin roles have it)"
)

// rbacRefusal matches the API server's words for an RBAC refusal
// (`User "bob" cannot get resource "secrets" ...`); an admission policy's
// refusal says "denied request" instead.
var rbacRefusal = regexp.MustCompile(`cannot \S+ resource `)

// refused explains an error of the API server: what the user tried, and for
// an RBAC refusal, which role would allow it. Admission policy refusals
// (only the owner may...) say it themselves.
func refused(err error, action, role string) error {
	if apierrors.IsForbidden(err) && role != "" && rbacRefusal.MatchString(err.Error()) {
		return fmt.Errorf("you may not %s: it needs %s.\nThe API server said: %w", action, role, err)
	}
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
		return fmt.Errorf("you may not %s.\nThe API server said: %w", action, err)
	}
	return fmt.Errorf("%s: %w", action, err)
}

// endpoint reads the endpoint name in ns.
func (e *env) endpoint(ctx context.Context, ns, name string) (*agentsv1alpha1.WebhookEndpoint, error) {
	if err := e.connect(); err != nil {
		return nil, err
	}
	ep := &agentsv1alpha1.WebhookEndpoint{}
	err := e.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("webhook endpoint %q not found in namespace %s (kubectl hookrun endpoints lists them)", name, ns)
	}
	if err != nil {
		return nil, refused(err, fmt.Sprintf("read webhook endpoint %s/%s", ns, name), roleRead)
	}
	return ep, nil
}

// whoAmI asks the API server who the user is.
func (e *env) whoAmI(ctx context.Context) (string, error) {
	if err := e.connect(); err != nil {
		return "", err
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := e.client.Create(ctx, review); err != nil {
		return "", fmt.Errorf("asking the API server who you are: %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

// outputFlag adds -o/--output for commands whose output is data.
func outputFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", "", "Output format: json or yaml (default: text for people).")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
}

func checkOutput(format string) error {
	switch format {
	case "", "json", "yaml":
		return nil
	}
	return usageError{fmt.Errorf("--output must be json or yaml, not %q", format)}
}

// onNamed is the RunE of a command about one named object in the
// namespace of -n (or the kubeconfig's): it checks -o (when the command has
// it) and the namespace, then runs do.
func (e *env) onNamed(format *string, do func(cmd *cobra.Command, ns, name string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if format != nil {
			if err := checkOutput(*format); err != nil {
				return err
			}
		}
		ns, err := e.namespace()
		if err != nil {
			return err
		}
		return do(cmd, ns, args[0])
	}
}

// exactlyOne is cobra.ExactArgs(1) with a usage error naming what is missing.
func exactlyOne(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError{fmt.Errorf("expected one argument, the %s; got %d", what, len(args))}
		}
		return nil
	}
}
