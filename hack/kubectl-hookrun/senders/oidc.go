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

package senders

import (
	"fmt"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// What the plugin says of an endpoint whose calls carry tokens
// (spec.sender.oidc) instead of a secret.

// TokenPlaceholder stands for the token in a sample call: the shell fills
// it in from $TOKEN.
const TokenPlaceholder = "${TOKEN}"

// TokenOf says whose tokens, for which audience, an OIDC sender's calls
// carry; "" for any other endpoint.
func TokenOf(spec *agentsv1alpha1.WebhookEndpointSpec) string {
	o := spec.OIDCOf()
	if o == nil {
		return ""
	}
	return fmt.Sprintf("a token of %s for audience %s", issuerName(o), o.Audience)
}

func issuerName(o *agentsv1alpha1.OIDCSender) string {
	if o.Issuer == "" {
		return "the cluster's service accounts"
	}
	return o.Issuer
}

// TokenHowTo says how to get a token for a sample call.
func TokenHowTo(ep *agentsv1alpha1.WebhookEndpoint) string {
	o := ep.Spec.OIDCOf()
	if o.Issuer == "" {
		return fmt.Sprintf("Set TOKEN first, for example TOKEN=$(kubectl create token SERVICE-ACCOUNT -n %s --audience %s)", ep.Namespace, o.Audience) +
			" (any account the claims let through; a CronJob mounts one as a projected token)."
	}
	how := ""
	if o.Issuer == "https://token.actions.githubusercontent.com" {
		how = " (in a workflow with id-token: write, from $ACTIONS_ID_TOKEN_REQUEST_URL&audience=" + o.Audience + ")"
	}
	return fmt.Sprintf("Set TOKEN first to a token %s issued for audience %s%s.", o.Issuer, o.Audience, how)
}

// NoSecretError is why an OIDC sender's endpoint has no secret to show or
// send with.
func NoSecretError(ep *agentsv1alpha1.WebhookEndpoint) error {
	return fmt.Errorf("endpoint %s/%s has no secret: its calls carry %s (spec.sender.oidc). %s",
		ep.Namespace, ep.Name, TokenOf(&ep.Spec), TokenHowTo(ep))
}
