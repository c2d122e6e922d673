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

package accounting

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// ReportReconciler deletes the rejection report of a receiver
// replica once nothing in it counts any more: a replica that is gone (a
// rollout names its pods anew) leaves its report behind, and its counts
// still count until their period has passed. A live replica writes its
// report again at its next refusal.
type ReportReconciler struct {
	client.Client
	Clock clock.PassiveClock
}

// Reconcile deletes the report when it has expired and otherwise looks at
// it again then.
func (r *ReportReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, req.NamespacedName, cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := r.Clock.Now()
	if expires := reportExpiry(cm); now.Before(expires) {
		return ctrl.Result{RequeueAfter: expires.Sub(now)}, nil
	}
	// Only the version read: one its replica has just written again stays.
	err := r.Delete(ctx, cm, client.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("deleting the expired rejection report %s: %w", cm.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("deleted a receiver replica's rejection report with nothing recent in it", "configMap", cm.Name)
	return ctrl.Result{}, nil
}

// reportExpiry is when nothing in a report counts any more: the end of the
// period after the one it was written in (its entries are of that period or
// earlier). A report without a readable time counts from its creation.
func reportExpiry(cm *corev1.ConfigMap) time.Time {
	at, err := time.Parse(time.RFC3339, cm.Annotations[agentsv1alpha1.AnnotationReportWrittenAt])
	if err != nil {
		at = cm.CreationTimestamp.Time
	}
	return at.Truncate(agentsv1alpha1.RejectionWindow).Add(2 * agentsv1alpha1.RejectionWindow)
}

// SetupWithManager watches the reports; the manager's cache holds only the
// labelled ConfigMaps of the receiver's namespace (cached.Options).
func (r *ReportReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Named("rejectionreport").
		Complete(r)
}
