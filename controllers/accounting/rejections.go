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
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// maxRejectionCodes is the most error codes status.rejections lists (its
// CRD bound); the receiver has fewer.
const maxRejectionCodes = 24

// reconcileRejections sums the endpoint's entries in the receiver replicas'
// rejection reports (ConfigMaps in the receiver's namespace, from the cache)
// into status.rejections, written with status.runs. While it
// counts anything the endpoint is looked at again when the counted period
// moves on.
func (r *Reconciler) reconcileRejections(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (time.Duration, error) {
	reports := &corev1.ConfigMapList{}
	if err := r.List(ctx, reports, client.InNamespace(r.Namespace),
		client.MatchingLabels{agentsv1alpha1.LabelRejectionReport: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return 0, fmt.Errorf("listing the receiver's rejection reports: %w", err)
	}
	var entries []agentsv1alpha1.RejectionReportEntry
	for i := range reports.Items {
		v, ok := reports.Items[i].Data[string(ep.UID)]
		if !ok {
			continue
		}
		entry, err := agentsv1alpha1.DecodeRejectionReportEntry(v)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "ignoring an entry of a rejection report", "configMap", reports.Items[i].Name)
			continue
		}
		entries = append(entries, entry)
	}
	now := r.Clock.Now()
	ep.Status.Rejections = sumRejections(entries, now)
	if ep.Status.Rejections != nil {
		return now.Truncate(agentsv1alpha1.RejectionWindow).Add(agentsv1alpha1.RejectionWindow).Sub(now), nil
	}
	return 0, nil
}

// sumRejections adds up one endpoint's entries of all reports: the counts of
// the current period (agentsv1alpha1.RejectionWindow, UTC) and of the one
// before it, by now. Entries of earlier periods count nothing; a replica's
// clock a little ahead counts as the current period. It returns nil when
// nothing counts.
func sumRejections(entries []agentsv1alpha1.RejectionReportEntry, now time.Time) *agentsv1alpha1.EndpointRejections {
	current := now.Truncate(agentsv1alpha1.RejectionWindow)
	since := current.Add(-agentsv1alpha1.RejectionWindow)
	total := map[string]int64{}
	var last time.Time
	var lastError *agentsv1alpha1.ReportedError
	for _, e := range entries {
		switch {
		case !e.Window.Before(current):
			addCounts(total, e.Counts)
			addCounts(total, e.Previous)
		case e.Window.Equal(since):
			addCounts(total, e.Counts)
		default:
			continue
		}
		if e.Last.After(last) {
			last = e.Last
		}
		if le := e.LastError; le != nil && (le.Expression == agentsv1alpha1.ExpressionFilter || le.Expression == agentsv1alpha1.ExpressionFields) &&
			!le.Time.Before(since) && (lastError == nil || le.Time.After(lastError.Time)) {
			lastError = le
		}
	}
	if len(total) == 0 {
		return nil
	}
	out := &agentsv1alpha1.EndpointRejections{Since: metav1.NewTime(since)}
	for _, code := range slices.Sorted(maps.Keys(total))[:min(len(total), maxRejectionCodes)] {
		out.Counts = append(out.Counts, agentsv1alpha1.RejectionCount{Code: code, Count: total[code]})
	}
	if !last.IsZero() {
		// To the second, as the API server keeps it: no write for nanoseconds.
		out.LastRejectionTime = &metav1.Time{Time: last.Truncate(time.Second)}
	}
	if lastError != nil {
		out.LastEvaluationError = &agentsv1alpha1.EvaluationError{Expression: lastError.Expression,
			Message: agentsv1alpha1.EvaluationErrorMessage(lastError.Message), Time: metav1.Time{Time: lastError.Time.Truncate(time.Second)}}
	}
	return out
}

// addCounts adds the positive counts of in to total.
func addCounts(total, in map[string]int64) {
	for code, n := range in {
		if n > 0 && code != "" {
			total[code] += n
		}
	}
}

// rejectionReportHandler enqueues, for a changed rejection report, the
// endpoints whose entries changed, after delay: the replicas write their
// reports at about the same moment, and the work queue keeps one pending
// entry per endpoint, so their writes become one status write. An entry
// names its endpoint, so a report of hundreds of endpoints costs no lookup.
func rejectionReportHandler(delay time.Duration) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	changed := func(before, after client.Object, q queue) {
		old, now := reportData(before), reportData(after)
		for uid, v := range now {
			if old[uid] != v {
				enqueueEntry(v, q, delay)
			}
		}
		for uid, v := range old {
			if _, ok := now[uid]; !ok {
				enqueueEntry(v, q, delay)
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { changed(nil, e.Object, q) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) { changed(e.ObjectOld, e.ObjectNew, q) },
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { changed(e.Object, nil, q) },
	}
}

// reportData is the data of a report; nil for anything else.
func reportData(o client.Object) map[string]string {
	cm, ok := o.(*corev1.ConfigMap)
	if !ok || cm.Labels[agentsv1alpha1.LabelRejectionReport] != "true" {
		return nil
	}
	return cm.Data
}

// enqueueEntry enqueues the endpoint a report entry names.
func enqueueEntry(v string, q workqueue.TypedRateLimitingInterface[reconcile.Request], delay time.Duration) {
	e, err := agentsv1alpha1.DecodeRejectionReportEntry(v)
	if err != nil || e.Namespace == "" || e.Name == "" {
		return
	}
	q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Namespace, Name: e.Name}}, delay)
}
