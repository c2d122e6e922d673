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

package controllers

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ensureOwner makes owner the only owner of its kind on obj (a
// non-controller reference, so the garbage collector deletes obj with
// owner) and drops references to earlier owners of that kind, which would
// otherwise keep obj alive. It patches metadata only, with an optimistic
// lock, and updates obj's owner references and resourceVersion.
func ensureOwner(ctx context.Context, c client.Client, obj, owner client.Object) error {
	gvk, err := apiutil.GVKForObject(owner, c.Scheme())
	if err != nil {
		return err
	}
	refs := obj.GetOwnerReferences()
	kept := slices.DeleteFunc(slices.Clone(refs), func(ref metav1.OwnerReference) bool {
		gv, _ := schema.ParseGroupVersion(ref.APIVersion)
		return gv.Group == gvk.Group && ref.Kind == gvk.Kind && ref.UID != owner.GetUID()
	})
	if len(kept) == len(refs) && slices.ContainsFunc(refs, func(ref metav1.OwnerReference) bool { return ref.UID == owner.GetUID() }) {
		return nil
	}
	patched, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", obj)
	}
	patched.SetOwnerReferences(kept)
	if err := controllerutil.SetOwnerReference(owner, patched, c.Scheme()); err != nil {
		return err
	}
	if err := c.Patch(ctx, patched, client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("making %s %s the owner of %s: %w", gvk.Kind, owner.GetName(), obj.GetName(), err)
	}
	obj.SetOwnerReferences(patched.GetOwnerReferences())
	obj.SetResourceVersion(patched.GetResourceVersion())
	return nil
}

// patchStatusIfChanged writes obj's status when it differs from what was
// read, as a merge patch against before with an optimistic lock: a status
// computed from a stale read fails with a conflict and is recomputed.
func patchStatusIfChanged(ctx context.Context, c client.Client, before, obj client.Object, beforeStatus, status any) error {
	if equality.Semantic.DeepEqual(beforeStatus, status) {
		return nil
	}
	// Our own metadata writes (owner references) moved the resourceVersion.
	before.SetResourceVersion(obj.GetResourceVersion())
	if err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("patching status of %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// result returns res only when err is nil: controller-runtime ignores a
// result returned with an error.
func result(res ctrl.Result, err error) (ctrl.Result, error) {
	if err != nil {
		return ctrl.Result{}, err
	}
	return res, nil
}

// mapByIndex returns a map function that enqueues the objects of list's kind
// in the event object's namespace whose index field equals its name.
func mapByIndex(c client.Client, list client.ObjectList, field string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		l, ok := list.DeepCopyObject().(client.ObjectList)
		if !ok {
			return nil
		}
		if err := c.List(ctx, l, client.InNamespace(o.GetNamespace()), client.MatchingFields{field: o.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing objects that reference a changed object", "index", field, "name", o.GetName())
			return nil
		}
		var reqs []reconcile.Request
		_ = meta.EachListItem(l, func(item runtime.Object) error {
			if obj, ok := item.(client.Object); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
			}
			return nil
		})
		return reqs
	}
}
