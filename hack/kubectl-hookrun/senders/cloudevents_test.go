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

package senders

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// readCloudEvent reads c as the CloudEvents Go SDK's HTTP binding reads a
// request.
func readCloudEvent(t *testing.T, c Call) *event.Event {
	t.Helper()
	h := requestHeader(t, c)
	if c.ContentType != "" {
		h.Set("Content-Type", c.ContentType)
	}
	msg := cehttp.NewMessage(h, nopCloser{bytes.NewReader(c.Body)})
	e, err := binding.ToEvent(context.Background(), msg)
	if err != nil {
		t.Fatalf("the SDK reads no event from headers %q, body %s: %v", c.Headers, c.Body, err)
	}
	if err := e.Validate(); err != nil {
		t.Fatalf("the SDK finds the event invalid: %v", err)
	}
	return e
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func TestBuildCallCloudEvents(t *testing.T) {
	spec := senderSpec(agentsv1alpha1.Sender{Type: agentsv1alpha1.SenderCloudEvents})
	const secret = "a-cloudevents-token-of-32-bytes!!"
	body := SampleBody(agentsv1alpha1.SenderCloudEvents, "", "")

	t.Run("binary mode", func(t *testing.T) {
		for _, d := range []Delivery{
			{Event: "com.example.order.refunded", ID: "hookrun-test-1"},
			{Event: "com.example.order.refunded", ID: "hookrun-redeliver-2", Source: "/apis/v1/namespaces/shop"},
		} {
			c, err := BuildCall(spec, secret, body, "application/json", d, time.Now())
			if err != nil {
				t.Fatalf("buildCall: %v", err)
			}
			if got := requestHeader(t, c).Get("Authorization"); got != "Bearer "+secret {
				t.Errorf("Authorization %q, want the Bearer token", got)
			}
			e := readCloudEvent(t, c)
			wantSource := d.Source
			if wantSource == "" {
				wantSource = DefaultCloudEventSource
			}
			if e.SpecVersion() != "1.0" || e.ID() != d.ID || e.Type() != d.Event || e.Source() != wantSource {
				t.Errorf("the SDK reads specversion %q, id %q, type %q, source %q; want 1.0, %q, %q, %q",
					e.SpecVersion(), e.ID(), e.Type(), e.Source(), d.ID, d.Event, wantSource)
			}
			if !bytes.Equal(e.Data(), body) || e.DataContentType() != "application/json" {
				t.Errorf("the SDK reads data %s (%s), want the body %s", e.Data(), e.DataContentType(), body)
			}
		}
		if _, err := BuildCall(spec, secret, body, "application/json", Delivery{Event: "t"}, time.Now()); err == nil ||
			!strings.Contains(err.Error(), "needs an event type and an id") {
			t.Errorf("buildCall without an id: %v, want a refusal", err)
		}
	})

	t.Run("structured mode: the body is the event, sent as it is", func(t *testing.T) {
		envelope := []byte(`{"specversion":"1.0","id":"A-1001-1","source":"/shop/orders","type":"com.example.order.refunded","subject":"orders/A-1001","data":{"order":"A-1001"}}`)
		c, err := BuildCall(spec, secret, envelope, "application/cloudevents+json; charset=utf-8", Delivery{Event: "ignored", ID: "ignored"}, time.Now())
		if err != nil {
			t.Fatalf("buildCall: %v", err)
		}
		if len(c.Headers) != 1 || c.Headers[0].Name != "Authorization" {
			t.Errorf("headers %q, want only Authorization: the envelope carries the attributes", c.Headers)
		}
		e := readCloudEvent(t, c)
		if e.ID() != "A-1001-1" || e.Source() != "/shop/orders" || e.Type() != "com.example.order.refunded" || e.Subject() != "orders/A-1001" {
			t.Errorf("the SDK reads %s", e)
		}
	})
}
