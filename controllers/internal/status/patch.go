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

package status

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner names the operator in managedFields, and is the name its
// events are reported by.
const FieldOwner = "hookrun-operator"

// PatchIfChanged writes obj's status when it differs from what was
// read, as a merge patch against before with an optimistic lock: a status
// computed from a stale read fails with a conflict and is recomputed.
func PatchIfChanged(ctx context.Context, c client.Client, before, obj client.Object, beforeStatus, status any) error {
	if equality.Semantic.DeepEqual(beforeStatus, status) {
		return nil
	}
	// Our own metadata writes (the Agent's finalizer) moved the resourceVersion.
	before.SetResourceVersion(obj.GetResourceVersion())
	if err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("patching status of %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// Result returns res only when err is nil: controller-runtime ignores a
// result returned with an error.
func Result(res ctrl.Result, err error) (ctrl.Result, error) {
	if err != nil {
		return ctrl.Result{}, err
	}
	return res, nil
}
