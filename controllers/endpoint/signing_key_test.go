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

package endpoint

import (
	"encoding/base64"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

func TestTrackPreviousSecret(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }
	for _, tc := range []struct {
		name             string
		status           agentsv1alpha1.WebhookEndpointStatus
		oldHash          string
		overlap          time.Duration
		wantPrev         string
		wantUntil        *metav1.Time
		wantRequeueAfter time.Duration
	}{
		{"no overlap: nothing kept", agentsv1alpha1.WebhookEndpointStatus{SecretHash: "new", AuthMode: agentsv1alpha1.AuthSecret}, "old", 0, "", nil, 0},
		{"rotation with overlap", agentsv1alpha1.WebhookEndpointStatus{SecretHash: "new", AuthMode: agentsv1alpha1.AuthSecret}, "old", time.Hour, "old", at(time.Hour), time.Hour},
		{"unchanged secret keeps a pending previous", agentsv1alpha1.WebhookEndpointStatus{SecretHash: "new", AuthMode: agentsv1alpha1.AuthSecret, PreviousSecretHash: "old", PreviousSecretExpiresAt: at(10 * time.Minute)}, "new", time.Hour, "old", at(10 * time.Minute), 10 * time.Minute},
		{"expired previous is dropped", agentsv1alpha1.WebhookEndpointStatus{SecretHash: "new", AuthMode: agentsv1alpha1.AuthSecret, PreviousSecretHash: "old", PreviousSecretExpiresAt: at(0)}, "new", time.Hour, "", nil, 0},
		{"overlap set to 0 drops a pending previous", agentsv1alpha1.WebhookEndpointStatus{SecretHash: "new", AuthMode: agentsv1alpha1.AuthSecret, PreviousSecretHash: "old", PreviousSecretExpiresAt: at(time.Minute)}, "new", 0, "", nil, 0},
		{"first secret: no previous", agentsv1alpha1.WebhookEndpointStatus{SecretHash: "new", AuthMode: agentsv1alpha1.AuthSecret}, "", time.Hour, "", nil, 0},
		{"secret gone: no previous recorded", agentsv1alpha1.WebhookEndpointStatus{AuthMode: agentsv1alpha1.AuthSecret}, "old", time.Hour, "", nil, 0},
		{"unauthenticated: nothing kept", agentsv1alpha1.WebhookEndpointStatus{AuthMode: agentsv1alpha1.AuthNone, PreviousSecretHash: "old", PreviousSecretExpiresAt: at(time.Minute)}, "old", time.Hour, "", nil, 0},
		{"rotated back to the previous value", agentsv1alpha1.WebhookEndpointStatus{SecretHash: "old", AuthMode: agentsv1alpha1.AuthSecret, PreviousSecretHash: "old", PreviousSecretExpiresAt: at(time.Minute)}, "old", time.Hour, "", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.status
			requeue := trackPreviousSecret(&st, tc.oldHash, tc.overlap, now)
			if st.PreviousSecretHash != tc.wantPrev || requeue != tc.wantRequeueAfter {
				t.Errorf("previous %q, requeue %s; want %q, %s", st.PreviousSecretHash, requeue, tc.wantPrev, tc.wantRequeueAfter)
			}
			if (st.PreviousSecretExpiresAt == nil) != (tc.wantUntil == nil) ||
				(tc.wantUntil != nil && !st.PreviousSecretExpiresAt.Equal(tc.wantUntil)) {
				t.Errorf("expires %v, want %v", st.PreviousSecretExpiresAt, tc.wantUntil)
			}
		})
	}
}

func TestSigningKey(t *testing.T) {
	key, err := agentsv1alpha1.SigningKey(agentsv1alpha1.SenderStandardWebhooks, []byte("whsec_"+base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))))
	if err != nil || string(key) != "0123456789abcdef" {
		t.Errorf("whsec_ secret: %q, %v", key, err)
	}
	for _, bad := range []string{"0123456789abcdef0123456789abcdef", "whsec_", "whsec_!!!!"} {
		if _, err := agentsv1alpha1.SigningKey(agentsv1alpha1.SenderStandardWebhooks, []byte(bad)); err == nil {
			t.Errorf("%q taken for a Standard Webhooks secret", bad)
		}
	}
	if key, _ := agentsv1alpha1.SigningKey(agentsv1alpha1.SenderStripe, []byte("whsec_abc")); string(key) != "whsec_abc" {
		t.Errorf("Stripe signs with the whole secret, got key %q", key)
	}
}
