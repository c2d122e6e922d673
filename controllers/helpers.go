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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ensureOwnerReference adds a (non-controller) owner reference to owner on
// obj, so the garbage collector deletes obj with owner. It patches metadata
// only and leaves obj's status as the caller has it.
func ensureOwnerReference(ctx context.Context, c client.Client, obj, owner client.Object) error {
	if slices.ContainsFunc(obj.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return ref.UID == owner.GetUID() }) {
		return nil
	}
	patched, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", obj)
	}
	if err := controllerutil.SetOwnerReference(owner, patched, c.Scheme()); err != nil {
		return err
	}
	if err := c.Patch(ctx, patched, client.MergeFrom(obj)); err != nil {
		return fmt.Errorf("adding owner reference to %s on %s: %w", owner.GetName(), obj.GetName(), err)
	}
	obj.SetOwnerReferences(patched.GetOwnerReferences())
	return nil
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
