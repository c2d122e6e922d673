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

package clusterinstall

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OwnerDefaulting is how a WebhookEndpoint gets its spec.owner: the chart's
// value admission.ownerDefaulting, resolved.
type OwnerDefaulting string

const (
	// OwnerDefaultingPolicy: a MutatingAdmissionPolicy fills spec.owner
	// from the creator when it is empty (config/policies/owner-default.yaml).
	OwnerDefaultingPolicy OwnerDefaulting = "Policy"
	// OwnerDefaultingRequired: the creator writes spec.owner, and a
	// ValidatingAdmissionPolicy refuses an endpoint without one
	// (config/policies-owner-required), for API servers that do not serve
	// MutatingAdmissionPolicy.
	OwnerDefaultingRequired OwnerDefaulting = "Required"
)

// mutatingAdmissionPolicy is the kind owner-default.yaml needs, in the
// version it is written in.
var mutatingAdmissionPolicy = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicy"}

// DetectOwnerDefaulting asks the API server c talks to (its discovery,
// through c's RESTMapper) whether it serves MutatingAdmissionPolicy in
// admissionregistration.k8s.io/v1: Policy if it does, else Required, as the
// chart's admission.ownerDefaulting: Auto decides.
func DetectOwnerDefaulting(c client.Client) (OwnerDefaulting, error) {
	_, err := c.RESTMapper().RESTMapping(mutatingAdmissionPolicy.GroupKind(), mutatingAdmissionPolicy.Version)
	switch {
	case err == nil:
		return OwnerDefaultingPolicy, nil
	case meta.IsNoMatchError(err):
		return OwnerDefaultingRequired, nil
	default:
		return "", fmt.Errorf("asking the API server whether it serves %s: %w", mutatingAdmissionPolicy, err)
	}
}

// PolicyFiles lists the admission policy manifests of the repository at
// root for mode: config/policies, and for Required
// config/policies-owner-required in place of config/policies/owner-default.yaml.
func PolicyFiles(root string, mode OwnerDefaulting) ([]string, error) {
	policies := filepath.Join(root, "config", "policies")
	switch mode {
	case OwnerDefaultingPolicy:
		return []string{policies}, nil
	case OwnerDefaultingRequired:
		files, err := filepath.Glob(filepath.Join(policies, "*.yaml"))
		if err != nil {
			return nil, err
		}
		files = slices.DeleteFunc(files, func(f string) bool {
			return filepath.Base(f) == "owner-default.yaml" || filepath.Base(f) == "kustomization.yaml"
		})
		required := filepath.Join(root, "config", "policies-owner-required")
		if _, err := os.Stat(required); err != nil {
			return nil, err
		}
		return append(files, required), nil
	default:
		return nil, fmt.Errorf("owner defaulting %q: want %s or %s", mode, OwnerDefaultingPolicy, OwnerDefaultingRequired)
	}
}
