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

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// patchStatusIfChanged writes obj's status when it differs from what was
// read, as a merge patch against before with an optimistic lock: a status
// computed from a stale read fails with a conflict and is recomputed.
func patchStatusIfChanged(ctx context.Context, c client.Client, before, obj client.Object, beforeStatus, status any) error {
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

// isRunIn tells whether o is an AgentRun in state: the predicate of
// admission (a run queued) and of execution (running runs only).
func isRunIn(o client.Object, state agentsv1alpha1.RunState) bool {
	run, ok := o.(*agentsv1alpha1.AgentRun)
	return ok && run.EffectiveState() == state
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
