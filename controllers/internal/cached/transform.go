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

package cached

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Options keeps the operator's memory to what it reads. The leader
// holds every endpoint, Agent, thread and run of the cluster, and what a
// tenant writes into them would otherwise be held once per object: up to
// 256 KiB of labels and annotations each, prompts of up to 32 KiB, run
// outputs of up to 20 KiB. So every cached object keeps only the labels and
// annotations hookrun defines (not every key under agents.hookrun.dev/),
// each annotation value at most 256 bytes or its hash, and no managedFields,
// and runs and endpoints keep no prompt, output or message, also not in
// a condition (stripForCache). Execution reads a run in full from the API server when
// it sends it.
//
// Secrets are watched as metadata only (the only kind that is): their
// other annotations can hold the Secret's data
// (kubectl.kubernetes.io/last-applied-configuration of a Secret applied
// client-side, as Argo CD does by default). The only ConfigMaps cached are
// the receiver replicas' rejection reports in namespace, the receiver's.
func Options(namespace string) cache.Options {
	stripManagedFields := cache.TransformStripManagedFields()
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {
			Namespaces: map[string]cache.Config{namespace: {}},
			Label:      labels.SelectorFromSet(labels.Set{agentsv1alpha1.LabelRejectionReport: "true"}),
		},
	}, DefaultTransform: func(in any) (any, error) {
		out, err := stripManagedFields(in)
		if err != nil {
			return out, err
		}
		Strip(out)
		return out, nil
	}}
}

// Strip cuts obj, an object about to enter the operator's cache, to
// what the operator reads. Its write paths compare a written status with the
// cached one through this same function (cachedStatus).
func Strip(obj any) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetLabels(hookrunLabels(o.GetLabels()))
		o.SetAnnotations(hookrunAnnotations(o.GetAnnotations()))
	}
	switch o := obj.(type) {
	case *metav1.PartialObjectMetadata:
		keepReadMetadata(&o.ObjectMeta)
	case *agentsv1alpha1.AgentRun:
		o.Spec.Prompt = ""
		o.Status.Output, o.Status.Message = "", ""
		if o.EffectiveState().IsFinished() {
			// Nothing writes a finished run again, and of it the operator
			// reads only what retention, the run counts, the
			// OwnerNotMember pause (the owner of a skipped run) and thread
			// contexts need: most retained
			// runs are finished, so they keep no more.
			o.Spec.Sender, o.Spec.Model, o.Spec.ThreadNamingHint = nil, "", ""
			o.Status.Conditions, o.Status.TaskID, o.Status.Duration, o.Status.TraceID = nil, "", "", ""
			dropTraceAnnotations(o)
			break
		}
		if o.Status.Retry != nil {
			o.Status.Retry.Message = "" // Ready repeats it, and execution reads it nowhere
		}
		// Ready and Succeeded repeat the message. Their status, reason and
		// time stay: a write keeps lastTransitionTime from them.
		for i := range o.Status.Conditions {
			o.Status.Conditions[i].Message = ""
		}
	case *agentsv1alpha1.WebhookEndpoint:
		o.Spec.Prompt = "" // the receiver copies it into each run; the operator never reads it
		// spec.fields are compiled once per generation from a read of their
		// own (SpecWithFields).
		o.Spec.StripFields()
	}
}

// SpecWithFields returns ep's spec with its spec.fields, and the
// generation it is of: ep's own when the cache kept them (or there are
// none), else the spec read around the cache, which keeps only the mark
// that there are some (Strip).
func SpecWithFields(ctx context.Context, reader client.Reader, ep *agentsv1alpha1.WebhookEndpoint) (*agentsv1alpha1.WebhookEndpointSpec, int64, error) {
	if !ep.Spec.FieldsStripped() {
		return &ep.Spec, ep.Generation, nil
	}
	fresh := &agentsv1alpha1.WebhookEndpoint{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(ep), fresh); err != nil {
		return nil, 0, fmt.Errorf("reading the spec.fields of WebhookEndpoint %s/%s: %w", ep.Namespace, ep.Name, err)
	}
	if fresh.UID != ep.UID {
		return nil, 0, fmt.Errorf("reading the spec.fields of WebhookEndpoint %s/%s: it was deleted and created again", ep.Namespace, ep.Name)
	}
	return &fresh.Spec, fresh.Generation, nil
}

// Status is run's status as the cache will show it once it has seen
// the write of that status.
func Status(run *agentsv1alpha1.AgentRun) agentsv1alpha1.AgentRunStatus {
	c := run.DeepCopy()
	Strip(c)
	return c.Status
}

// dropTraceAnnotations drops the trace context of a finished run: no span
// of it comes any more.
func dropTraceAnnotations(run *agentsv1alpha1.AgentRun) {
	delete(run.Annotations, agentsv1alpha1.AnnotationTraceparent)
	delete(run.Annotations, agentsv1alpha1.AnnotationTracestate)
	if len(run.Annotations) == 0 {
		run.Annotations = nil
	}
}

// keepReadMetadata cuts the metadata of an object cached by its metadata
// alone (Secrets, in every namespace) to what the operator reads: its
// name, namespace, UID, resourceVersion, generation, timestamps, hookrun's
// labels and annotations (cut before), and the owner references to
// hookrun's kinds. Any namespace editor can give a Secret thousands of
// finalizers or owner references (~1.4 MiB of metadata each): kept, 350 of
// them would hold ~500 MiB in the leader, over its limit, at every
// restart's first list. The operator writes no Secret from this cache (it
// deletes by UID, and applies what it owns server-side), so nothing cut
// here is written back.
func keepReadMetadata(m *metav1.ObjectMeta) {
	*m = metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		Labels: m.Labels, Annotations: m.Annotations, OwnerReferences: hookrunOwners(m.OwnerReferences),
	}
}

// hookrunOwners keeps the owner references to hookrun's kinds.
func hookrunOwners(in []metav1.OwnerReference) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, ref := range in {
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && gv.Group == agentsv1alpha1.GroupVersion.Group {
			out = append(out, ref)
		}
	}
	return out
}

// hookrunLabels keeps the labels hookrun defines (IsHookrunLabel): the
// only ones the operator reads. Not every key under agents.hookrun.dev/:
// any tenant may write those, on Secrets too, which the operator watches in
// every namespace.
func hookrunLabels(in map[string]string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if agentsv1alpha1.IsHookrunLabel(k) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// hookrunAnnotations keeps the annotations hookrun defines
// (IsHookrunAnnotation), a long value as its hash (KeptAnnotationValue), so
// that what one object keeps is bounded whatever a tenant writes.
func hookrunAnnotations(in map[string]string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if agentsv1alpha1.IsHookrunAnnotation(k) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = agentsv1alpha1.KeptAnnotationValue(k, v)
		}
	}
	return out
}

// StatusChanged tells whether run's status differs from before's, a copy
// from the cache: in what the cache keeps, or by an output or message
// written since (the cache keeps none, so before has none). Comparing the
// whole status would find every step changed: SetRunConditions puts back
// the condition messages the cache cut.
func StatusChanged(before, run *agentsv1alpha1.AgentRun) bool {
	return !equality.Semantic.DeepEqual(before.Status, Status(run)) ||
		run.Status.Output != before.Status.Output || run.Status.Message != before.Status.Message
}

// ClientOptions keeps Secret data out of the operator's cache: typed
// Secret reads go to the API server, while watches on Secrets use metadata
// only.
func ClientOptions() *client.CacheOptions {
	return &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}
}
