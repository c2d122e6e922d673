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

package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/devcluster"
)

// Sizes of what each retained run carries in the measurement of the
// operator's memory: a prompt, an agent's output and a failure message, as
// busy endpoints leave them. The operator's cache keeps none of them.
const (
	retainedPromptBytes  = 1 << 10
	retainedOutputBytes  = 4 << 10
	retainedMessageBytes = 200
)

// measureRetainedRuns stores runs finished runs spread over the n endpoints
// of namespace ns (ep-00001...), fewer per endpoint than the run history
// limit so that retention keeps them all, waits until the operator has
// counted them all in the endpoints' status.runs (its cache holds them
// then), and reports the operator's resident memory.
func measureRetainedRuns(ctx context.Context, c *devcluster.Cluster, o options, ns string, endpoints cache.Cache, logf func(string, ...any)) (row, error) {
	name := fmt.Sprintf("%d endpoints and %d finished runs retained: operator resident memory", o.endpoints, o.runs)
	logf("storing %d finished runs", o.runs)
	start := time.Now()
	prompt := strings.Repeat("p", retainedPromptBytes)
	output := strings.Repeat("o", retainedOutputBytes)
	message := strings.Repeat("m", retainedMessageBytes)
	// An endpoint's runs one after the other: the operator counts them in
	// one status write (--run-count-delay), as it would a burst of calls.
	perEndpoint := (o.runs + o.endpoints - 1) / o.endpoints
	err := inParallel(o.workers, o.runs, func(i int) error {
		ep := fmt.Sprintf("ep-%05d", 1+(i-1)/perEndpoint)
		return storeFinishedRun(ctx, c.AdminClient, ns, ep, fmt.Sprintf("%s-run-%06d", ep, i), prompt, output, message)
	})
	if err != nil {
		return row{}, err
	}
	stored := time.Since(start)
	logf("stored in %s; waiting until the operator counts them", stored.Round(time.Second))
	start = time.Now()
	var counted int64
	for {
		eps := &agentsv1alpha1.WebhookEndpointList{}
		if err := endpoints.List(ctx, eps, client.InNamespace(ns)); err != nil {
			return row{}, err
		}
		counted = 0
		for i := range eps.Items {
			counted += eps.Items[i].Status.Runs.Total
		}
		if counted >= int64(o.runs) {
			break
		}
		if time.Since(start) > 10*time.Minute {
			// Its cache holds them; a count still lagging is no reason to
			// lose the measurement: the row says so.
			logf("the operator counted %d of %d runs 10 minutes after they were stored", counted, o.runs)
			break
		}
		select {
		case <-ctx.Done():
			return row{}, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	runtime.GC()
	rss, err := residentMiB(c.PID(devcluster.Operator))
	if err != nil {
		return row{}, err
	}
	logf("operator resident memory %.1f MiB", rss)
	return row{name, "< 300 MiB", fmt.Sprintf("%.1f MiB once the operator counted %d of the runs (each: a %d-byte prompt, a %d-byte output, a %d-byte message; storing them took %s)",
		rss, counted, retainedPromptBytes, retainedOutputBytes, retainedMessageBytes, stored.Round(time.Second)), rss < 300}, nil
}

// storeFinishedRun stores a run of endpoint ep that ended in error, as the
// receiver and the operator leave one (its payload already expired).
func storeFinishedRun(ctx context.Context, cl client.Client, ns, ep, name, prompt, output, message string) error {
	now := metav1.Now()
	run := &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			agentsv1alpha1.LabelEndpoint: ep, agentsv1alpha1.LabelAgent: "triage",
		}},
		Spec: agentsv1alpha1.AgentRunSpec{
			EndpointRef: agentsv1alpha1.LocalObjectReference{Name: ep}, AgentRef: agentsv1alpha1.LocalObjectReference{Name: "triage"},
			Prompt: prompt, ThreadStrategy: agentsv1alpha1.NewThreadEachRun, Trust: agentsv1alpha1.TrustStandard,
			Owner:      &agentsv1alpha1.Owner{User: "owner@example.com"},
			Payload:    &agentsv1alpha1.PayloadReference{SecretName: name, Bytes: 7, ContentType: "application/json"},
			ReceivedAt: now,
		},
	}
	if err := cl.Create(ctx, run); err != nil {
		return err
	}
	patch := client.MergeFrom(run.DeepCopy())
	run.Status = agentsv1alpha1.AgentRunStatus{
		State: agentsv1alpha1.RunError, StartedAt: &now, CompletedAt: &now, Duration: "0s",
		Message: message, Output: output,
	}
	agentsv1alpha1.SetRunConditions(run)
	return cl.Status().Patch(ctx, run, patch)
}

// The tenant's metadata of the operator's memory measurements: what a
// namespace editor can put on Secrets, which the operator watches (as
// metadata) in every namespace. Each Secret stays under the API server's
// request size.
const (
	labelledSecrets  = 80
	labelsPerSecret  = 6000
	heldSecrets      = 350
	finalizersHeld   = 4000
	stuffedMaxGrowth = 20 // MiB
)

// measureTenantMetadata measures the operator's memory against two
// tenants' Secrets: labelledSecrets with labelsPerSecret labels under
// agents.hookrun.dev/ each (none of them a key hookrun defines), and
// heldSecrets with finalizersHeld foreign finalizers and owner references.
func measureTenantMetadata(ctx context.Context, c *devcluster.Cluster, logf func(string, ...any)) ([]row, error) {
	value := strings.Repeat("v", 63)
	labels, err := measureStuffedSecrets(ctx, c, logf, "labels",
		fmt.Sprintf("operator resident memory after %d Secrets of %d agents.hookrun.dev/ labels each", labelledSecrets, labelsPerSecret),
		labelledSecrets, func(_ int, m *metav1.ObjectMeta) {
			m.Labels = make(map[string]string, labelsPerSecret)
			for j := range labelsPerSecret {
				m.Labels[fmt.Sprintf("agents.hookrun.dev/ballast-%05d", j)] = value
			}
		})
	if err != nil {
		return nil, err
	}
	held, err := measureStuffedSecrets(ctx, c, logf, "held",
		fmt.Sprintf("operator resident memory after %d Secrets of %d foreign finalizers and %d owner references each", heldSecrets, finalizersHeld, finalizersHeld/4),
		heldSecrets, func(i int, m *metav1.ObjectMeta) {
			for j := range finalizersHeld {
				m.Finalizers = append(m.Finalizers, fmt.Sprintf("tenant.example.com/hold-%05d", j))
			}
			for j := range finalizersHeld / 4 {
				m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap",
					Name: fmt.Sprintf("owner-%05d", j), UID: types.UID(fmt.Sprintf("0b7c5b1e-%04d-4000-8000-%012d", i, j))})
			}
		})
	if err != nil {
		return nil, err
	}
	return []row{labels, held}, nil
}

// measureStuffedSecrets reads the operator's resident memory, stores n
// Secrets in namespace ns with what stuff gives each one's metadata, waits
// until the operator has seen them all, and reads it again: its cache
// keeps only what hookrun reads of them, so the memory must not grow with
// what was stuffed. The operator has seen them once it has acted on a
// Secret stored after them (the watch delivers a kind's events in order):
// a sentinel Secret that an endpoint's spec.secretRef names.
func measureStuffedSecrets(ctx context.Context, c *devcluster.Cluster, logf func(string, ...any), ns, name string, n int, stuff func(int, *metav1.ObjectMeta)) (row, error) {
	cl := c.AdminClient
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return row{}, err
	}
	if err := cl.Create(ctx, &agentsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "triage"},
		Spec:       agentsv1alpha1.AgentSpec{A2A: agentsv1alpha1.A2AEndpoint{URL: "http://127.0.0.1:1/", ProtocolVersion: agentsv1alpha1.A2AProtocolV10}},
	}); err != nil {
		return row{}, err
	}
	sentinel := &agentsv1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sentinel"},
		Spec: agentsv1alpha1.WebhookEndpointSpec{
			AgentRef:       agentsv1alpha1.LocalObjectReference{Name: "triage"},
			Prompt:         "Sentinel of a tenant-metadata measurement.",
			ThreadStrategy: agentsv1alpha1.NewThreadEachRun,
			SecretRef:      &agentsv1alpha1.SecretKeyReference{Name: "sentinel", Key: agentsv1alpha1.WebhookSecretKey},
		},
	}
	if err := cl.Create(ctx, sentinel); err != nil {
		return row{}, err
	}
	runtime.GC()
	time.Sleep(5 * time.Second) // the operator settles after the endpoint
	before, err := residentMiB(c.PID(devcluster.Operator))
	if err != nil {
		return row{}, err
	}
	logf("operator resident memory %.1f MiB; storing %d Secrets in %s", before, n, ns)
	err = inParallel(4, n, func(i int) error {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("stuffed-%03d", i)}}
		stuff(i, &secret.ObjectMeta)
		return cl.Create(ctx, secret)
	})
	if err != nil {
		return row{}, err
	}
	if err := cl.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sentinel", Labels: map[string]string{agentsv1alpha1.LabelAllowReference: agentsv1alpha1.AllowReferenceTrue}},
		Data:       map[string][]byte{agentsv1alpha1.WebhookSecretKey: []byte(strings.Repeat("s", agentsv1alpha1.MinSecretBytes))},
	}); err != nil {
		return row{}, err
	}
	for start := time.Now(); ; {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(sentinel), sentinel); err != nil {
			return row{}, err
		}
		if sentinel.Status.SecretHash != "" {
			break
		}
		if time.Since(start) > 5*time.Minute {
			return row{}, fmt.Errorf("the operator did not use the sentinel Secret within 5 minutes")
		}
		select {
		case <-ctx.Done():
			return row{}, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	after, err := residentMiB(c.PID(devcluster.Operator))
	if err != nil {
		return row{}, err
	}
	grew := after - before
	logf("operator resident memory %.1f MiB (%+.1f MiB)", after, grew)
	return row{name, fmt.Sprintf("unchanged within %d MiB", stuffedMaxGrowth),
		fmt.Sprintf("%+.1f MiB (%.1f MiB before, %.1f MiB after)", grew, before, after), grew < stuffedMaxGrowth}, nil
}
