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

// Package clusterinstall applies hookrun's manifests to an API server:
// config/rbac and config/policies (the namespace, service accounts, roles and
// admission policies) in the owner-defaulting mode the API server supports,
// or any directory of YAML such as config/samples. hack/devcluster installs
// the local cluster with it, and the tests their API servers.
package clusterinstall

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespace is where hookrun's service accounts live.
const Namespace = "hookrun-system"

// Service account names of the operator and the receiver.
const (
	OperatorServiceAccount = "hookrun-operator"
	ReceiverServiceAccount = "hookrun-receiver"
)

// InstallAccessControl applies config/rbac and the admission policies of
// the repository at root: the namespace, service accounts and roles of the
// operator and the receiver, the roles for people, and the admission
// policies with their bindings, in the mode DetectOwnerDefaulting finds.
func InstallAccessControl(ctx context.Context, c client.Client, root string) error {
	mode, err := DetectOwnerDefaulting(c)
	if err != nil {
		return err
	}
	return InstallAccessControlIn(ctx, c, root, mode)
}

// InstallAccessControlIn is InstallAccessControl in the given mode.
func InstallAccessControlIn(ctx context.Context, c client.Client, root string, mode OwnerDefaulting) error {
	policies, err := PolicyFiles(root, mode)
	if err != nil {
		return err
	}
	return Apply(ctx, c, append([]string{filepath.Join(root, "config", "rbac")}, policies...)...)
}

// Apply creates or updates every object in the YAML files under paths
// (files, or directories read non-recursively). Namespaces go first.
func Apply(ctx context.Context, c client.Client, paths ...string) error {
	return ApplyIn(ctx, c, "", paths...)
}

// ApplyIn is Apply, putting namespaced objects that name no namespace into ns.
func ApplyIn(ctx context.Context, c client.Client, ns string, paths ...string) error {
	return applyIn(ctx, c, ns, nil, paths)
}

// ApplyInOwned is ApplyIn, setting spec.owner.user of the WebhookEndpoints
// that name no owner to owner: what their creator writes in the
// owner-required mode, where nothing fills it in.
func ApplyInOwned(ctx context.Context, c client.Client, ns, owner string, paths ...string) error {
	return applyIn(ctx, c, ns, func(o *unstructured.Unstructured) error {
		if o.GetKind() != "WebhookEndpoint" {
			return nil
		}
		if user, _, _ := unstructured.NestedString(o.Object, "spec", "owner", "user"); user != "" {
			return nil
		}
		return unstructured.SetNestedField(o.Object, owner, "spec", "owner", "user")
	}, paths)
}

func applyIn(ctx context.Context, c client.Client, ns string, mutate func(*unstructured.Unstructured) error, paths []string) error {
	objs, err := read(paths)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if mutate == nil {
			break
		}
		if err := mutate(o); err != nil {
			return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	for _, o := range objs {
		if o.GetNamespace() != "" || ns == "" {
			continue
		}
		namespaced, err := c.IsObjectNamespaced(o)
		if err != nil {
			return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if namespaced {
			o.SetNamespace(ns)
		}
	}
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return boolInt(b.GetKind() == "Namespace") - boolInt(a.GetKind() == "Namespace")
	})
	for _, o := range objs {
		if err := createOrUpdate(ctx, c, o); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// createOrUpdate creates o, or replaces the one that exists. The replace is
// retried on a conflict: the operator may write an object's status (an
// Agent's card, an endpoint's URL) between the read and the write.
func createOrUpdate(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	err := c.Create(ctx, o.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			return err
		}
		next := o.DeepCopy()
		next.SetResourceVersion(cur.GetResourceVersion())
		return c.Update(ctx, next)
	})
}

func read(paths []string) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.yaml"))
		if err != nil {
			return nil, err
		}
		slices.Sort(matches)
		for _, m := range matches {
			if filepath.Base(m) != "kustomization.yaml" {
				files = append(files, m)
			}
		}
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(strings.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if u.GetKind() == "" {
				continue // a kustomization.yaml, not an object
			}
			objs = append(objs, u)
		}
	}
	return objs, nil
}

func stripComments(doc []byte) string {
	var b strings.Builder
	for line := range strings.SplitSeq(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
