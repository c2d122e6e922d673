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
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/status"
)

// DefaultRunCountDelay batches AgentRun events into one status update per
// endpoint, so a burst of calls does not become a burst of writes.
const DefaultRunCountDelay = 2 * time.Second

// Reconciler keeps the accounting of every WebhookEndpoint: status.runs
// counted from its AgentRuns, retention of its finished runs and their
// payloads, and status.rejections summed from the receiver replicas'
// rejection reports. The WebhookEndpoint reconciler writes the rest of the
// status; each writes only its own fields, with a patch locked to what it
// read.
type Reconciler struct {
	client.Client
	// MetadataReader reads object metadata from the cache (payload Secrets
	// are cached as metadata only).
	MetadataReader client.Reader
	// Clock is the clock of retention and of the rejection periods.
	Clock clock.PassiveClock

	RunHistoryLimit int
	RunTTL          time.Duration
	PayloadTTL      time.Duration
	// RunCountDelay batches the run and report events of an endpoint into
	// one reconcile.
	RunCountDelay time.Duration
	// Namespace is the receiver's, where its replicas keep their rejection
	// reports.
	Namespace string
}

// Reconcile counts the endpoint's runs, applies retention and sums its
// refusals, and writes status.runs and status.rejections once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ep := &agentsv1alpha1.WebhookEndpoint{}
	if err := r.Get(ctx, req.NamespacedName, ep); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ep.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the garbage collector removes its runs
	}
	before := ep.DeepCopy()
	nextExpiry, runsErr := r.reconcileRuns(ctx, ep)
	periodEnd, rejectionsErr := r.reconcileRejections(ctx, ep)
	err := errors.Join(runsErr, rejectionsErr,
		status.PatchIfChanged(ctx, r.Client, before, ep, &before.Status, &ep.Status))
	return status.Result(ctrl.Result{RequeueAfter: minPositive(nextExpiry, periodEnd)}, err)
}

// minPositive is the smaller of a and b that is positive, or 0.
func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// SetupWithManager registers the reconciler. It is woken by an endpoint's
// creation and every change of it but its status writes (its own or the
// WebhookEndpoint reconciler's, notAStatusWrite): its runs and its entries
// in the rejection reports are what it counts, and their events come after
// RunCountDelay.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&agentsv1alpha1.WebhookEndpoint{}, builder.WithPredicates(notAStatusWrite)).
		Named("endpointruns").
		// Endpoints are independent, and retention deletes one object per
		// API call: as many workers as the WebhookEndpoint reconciler had
		// when it did this work.
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Watches(&agentsv1alpha1.AgentRun{}, cached.RunEndpointAfter(r.RunCountDelay)).
		// The receiver replicas' rejection reports (the cache holds no other ConfigMaps).
		Watches(&corev1.ConfigMap{}, rejectionReportHandler(r.RunCountDelay)).
		Complete(r)
}

// workers is how many endpoints are counted in parallel.
const workers = 8

// notAStatusWrite passes an endpoint's creation, deletion and every update
// of it but a status write: one that changes its status and not its
// generation. A metadata change alone (an annotation the cache does not
// keep, too) passes, as for the other controllers.
var notAStatusWrite = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*agentsv1alpha1.WebhookEndpoint)
		ep, ok2 := e.ObjectNew.(*agentsv1alpha1.WebhookEndpoint)
		return !ok1 || !ok2 || old.Generation != ep.Generation || equality.Semantic.DeepEqual(old.Status, ep.Status)
	},
}
