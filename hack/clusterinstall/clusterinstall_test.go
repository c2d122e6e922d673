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
	"path/filepath"
	"testing"
)

// The names the callers use (Namespace and the service accounts) are the ones
// config/rbac creates, and InstallAccessControl reads objects, not the
// kustomization.yaml next to them.
func TestAccessControlManifestsCreateTheNamedObjects(t *testing.T) {
	root := filepath.Join("..", "..")
	objs, err := read([]string{filepath.Join(root, "config", "rbac"), filepath.Join(root, "config", "policies")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"Namespace//" + Namespace:                                    false,
		"ServiceAccount/" + Namespace + "/" + OperatorServiceAccount: false,
		"ServiceAccount/" + Namespace + "/" + ReceiverServiceAccount: false,
	}
	for _, o := range objs {
		if o.GetKind() == "Kustomization" {
			t.Errorf("read a kustomization as an object: %s", o.GetName())
		}
		key := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
		if _, ok := want[key]; ok {
			want[key] = true
		}
	}
	for key, found := range want {
		if !found {
			t.Errorf("config/rbac has no %s", key)
		}
	}
}
