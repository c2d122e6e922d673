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

package store

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/senders"
)

// NewRun is the AgentRun for a call to ep: a snapshot of the endpoint now,
// with prompt (which the informer does not keep), named by ulid (RunName).
// A call with a delivery ID that is stored as a run (not a skipped record)
// is renamed after it by the caller (DeliveryRunName). d may be nil (a call
// refused before its body was read).
func NewRun(ep *agentsv1alpha1.WebhookEndpoint, kind agentsv1alpha1.SenderType, prompt string, d *senders.Delivery, now time.Time, ulid string) *agentsv1alpha1.AgentRun {
	sender := &agentsv1alpha1.RunSender{Type: kind}
	if d != nil {
		sender.Event, sender.DeliveryID = d.Event, senders.Recordable(d.DeliveryID, senders.MaxDeliveryIDBytes)
		sender.Source, sender.Subject = d.Source, d.Subject
	}
	run := &agentsv1alpha1.AgentRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ep.Namespace,
			Name:      RunName(ep.Name, ulid),
			Labels: map[string]string{
				agentsv1alpha1.LabelEndpoint: ep.Name,
				agentsv1alpha1.LabelAgent:    ep.Spec.AgentRef.Name,
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentsv1alpha1.GroupVersion.String(),
				Kind:       "WebhookEndpoint",
				Name:       ep.Name,
				UID:        ep.UID,
			}},
		},
		Spec: agentsv1alpha1.AgentRunSpec{
			EndpointRef:      agentsv1alpha1.LocalObjectReference{Name: ep.Name},
			AgentRef:         ep.Spec.AgentRef,
			Prompt:           prompt,
			ThreadStrategy:   ep.Spec.ThreadStrategy,
			ThreadNamingHint: ep.Spec.ThreadNamingHint,
			Model:            ep.Spec.Model,
			Owner:            ep.Spec.Owner.DeepCopy(),
			Trust:            agentsv1alpha1.TrustStandard,
			Sender:           sender,
			ReceivedAt:       metav1.NewTime(now),
		},
	}
	if ep.Spec.TargetThreadRef != nil {
		ref := *ep.Spec.TargetThreadRef
		run.Spec.TargetThreadRef = &ref
		run.Labels[agentsv1alpha1.LabelThread] = ref.Name
	}
	if ep.Spec.AllowUnauthenticated {
		run.Spec.Trust = agentsv1alpha1.TrustLow
	}
	return run
}
