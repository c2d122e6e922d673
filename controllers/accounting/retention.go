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
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/internal/cached"
)

// reconcileRuns counts ep's AgentRuns into status.runs and applies
// retention: at most RunHistoryLimit finished runs, each kept RunTTL after
// it finished, its payload Secret PayloadTTL after it finished. Unfinished
// runs are never touched. It returns when the next TTL expires (0: none
// pending).
func (r *Reconciler) reconcileRuns(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) (time.Duration, error) {
	runs := &agentsv1alpha1.AgentRunList{}
	if err := r.List(ctx, runs, client.InNamespace(ep.Namespace), client.MatchingFields{cached.IndexRunEndpoint: ep.Name}); err != nil {
		return 0, fmt.Errorf("listing AgentRuns: %w", err)
	}
	plan := planRetention(runs.Items, ep.Spec.AgentRef.Name, r.Clock.Now(), retentionPolicy{
		historyLimit: r.RunHistoryLimit, runTTL: r.RunTTL, payloadTTL: r.PayloadTTL,
	})

	var errs []error
	for _, run := range plan.deleteRuns {
		if err := r.Delete(ctx, run, client.Preconditions{UID: &run.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting AgentRun %s: %w", run.Name, err))
		}
	}
	for _, run := range plan.expirePayloads {
		obj := cached.SecretMetadata(run.Namespace, run.Spec.Payload.SecretName)
		if err := r.MetadataReader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			if client.IgnoreNotFound(err) != nil {
				errs = append(errs, err)
			}
			continue // already gone
		}
		if !cached.OwnedBy(obj.OwnerReferences, run.UID) {
			// Not the run's payload (the metadata cache has no type; a
			// Secret the run owns goes with it anyway): left alone.
			continue
		}
		if err := r.Delete(ctx, obj, client.Preconditions{UID: &obj.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting payload Secret %s: %w", obj.Name, err))
		}
	}
	// One write per reconcile, and one reconcile per RunCountDelay of run
	// events (the AgentRun watch): the endpoint's status writes, this
	// controller's own included, do not start another.
	ep.Status.Runs = plan.counts
	if err := errors.Join(errs...); err != nil {
		return plan.nextExpiry, fmt.Errorf("applying run retention: %w", err)
	}
	return plan.nextExpiry, nil
}

type retentionPolicy struct {
	historyLimit int           // finished runs kept; 0: no limit
	runTTL       time.Duration // 0: kept until the history limit drops them
	payloadTTL   time.Duration // 0: payloads kept as long as their run
}

type retentionPlan struct {
	deleteRuns     []*agentsv1alpha1.AgentRun
	expirePayloads []*agentsv1alpha1.AgentRun
	counts         agentsv1alpha1.RunCounts
	nextExpiry     time.Duration // until the next TTL expires; 0: none pending
}

// finishedAt is when a run finished, or zero while it has not.
func finishedAt(run *agentsv1alpha1.AgentRun) time.Time {
	switch {
	case !run.EffectiveState().IsFinished():
		return time.Time{}
	case run.Status.CompletedAt != nil:
		return run.Status.CompletedAt.Time
	default: // skipped runs may finish without ever starting
		return run.Spec.ReceivedAt.Time
	}
}

// planRetention decides which runs and payloads go and counts what stays;
// queued counts only the runs queued for agent, the endpoint's Agent.
func planRetention(runs []agentsv1alpha1.AgentRun, agent string, now time.Time, p retentionPolicy) retentionPlan {
	var plan retentionPlan
	var finished []*agentsv1alpha1.AgentRun
	var kept []*agentsv1alpha1.AgentRun
	for i := range runs {
		if finishedAt(&runs[i]).IsZero() {
			kept = append(kept, &runs[i])
		} else {
			finished = append(finished, &runs[i])
		}
	}
	// Newest first; the history limit keeps the head.
	sort.SliceStable(finished, func(i, j int) bool {
		a, b := finishedAt(finished[i]), finishedAt(finished[j])
		if !a.Equal(b) {
			return a.After(b)
		}
		return finished[i].Name > finished[j].Name
	})
	soonest := func(at time.Time) {
		if d := at.Sub(now); d > 0 && (plan.nextExpiry == 0 || d < plan.nextExpiry) {
			plan.nextExpiry = d
		}
	}
	for i, run := range finished {
		done := finishedAt(run)
		if (p.historyLimit > 0 && i >= p.historyLimit) || (p.runTTL > 0 && !now.Before(done.Add(p.runTTL))) {
			plan.deleteRuns = append(plan.deleteRuns, run)
			continue
		}
		kept = append(kept, run)
		if p.runTTL > 0 {
			soonest(done.Add(p.runTTL))
		}
		if run.Spec.Payload != nil && p.payloadTTL > 0 {
			if !now.Before(done.Add(p.payloadTTL)) {
				plan.expirePayloads = append(plan.expirePayloads, run)
			} else {
				soonest(done.Add(p.payloadTTL))
			}
		}
	}

	for _, run := range kept {
		plan.counts.Total++
		switch state := run.EffectiveState(); {
		case state == agentsv1alpha1.RunQueued && run.Spec.AgentRef.Name == agent:
			// The receiver adds these up per Agent: a run queued for the
			// Agent the endpoint named before is that Agent's, not this one's.
			plan.counts.Queued++
			plan.counts.Running++
		case !state.IsFinished():
			plan.counts.Running++
		}
		if t := run.Spec.ReceivedAt; plan.counts.LastRunTime == nil || t.After(plan.counts.LastRunTime.Time) {
			plan.counts.LastRunTime = &metav1.Time{Time: t.Time}
		}
	}
	return plan
}
