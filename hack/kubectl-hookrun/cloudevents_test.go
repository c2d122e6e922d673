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
func readCloudEvent(t *testing.T, c call) *event.Event {
	t.Helper()
	h := requestHeader(t, c)
	if c.contentType != "" {
		h.Set("Content-Type", c.contentType)
	}
	msg := cehttp.NewMessage(h, nopCloser{bytes.NewReader(c.body)})
	e, err := binding.ToEvent(context.Background(), msg)
	if err != nil {
		t.Fatalf("the SDK reads no event from headers %q, body %s: %v", c.headers, c.body, err)
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
	body := sampleBody(agentsv1alpha1.SenderCloudEvents, "", "")

	t.Run("binary mode", func(t *testing.T) {
		for _, d := range []delivery{
			{event: "com.example.order.refunded", id: "hookrun-test-1"},
			{event: "com.example.order.refunded", id: "hookrun-redeliver-2", source: "/apis/v1/namespaces/shop"},
		} {
			c, err := buildCall(spec, secret, body, "application/json", d, time.Now())
			if err != nil {
				t.Fatalf("buildCall: %v", err)
			}
			if got := requestHeader(t, c).Get("Authorization"); got != "Bearer "+secret {
				t.Errorf("Authorization %q, want the Bearer token", got)
			}
			e := readCloudEvent(t, c)
			wantSource := d.source
			if wantSource == "" {
				wantSource = defaultCloudEventSource
			}
			if e.SpecVersion() != "1.0" || e.ID() != d.id || e.Type() != d.event || e.Source() != wantSource {
				t.Errorf("the SDK reads specversion %q, id %q, type %q, source %q; want 1.0, %q, %q, %q",
					e.SpecVersion(), e.ID(), e.Type(), e.Source(), d.id, d.event, wantSource)
			}
			if !bytes.Equal(e.Data(), body) || e.DataContentType() != "application/json" {
				t.Errorf("the SDK reads data %s (%s), want the body %s", e.Data(), e.DataContentType(), body)
			}
		}
		if _, err := buildCall(spec, secret, body, "application/json", delivery{event: "t"}, time.Now()); err == nil ||
			!strings.Contains(err.Error(), "needs an event type and an id") {
			t.Errorf("buildCall without an id: %v, want a refusal", err)
		}
	})

	t.Run("structured mode: the body is the event, sent as it is", func(t *testing.T) {
		envelope := []byte(`{"specversion":"1.0","id":"A-1001-1","source":"/shop/orders","type":"com.example.order.refunded","subject":"orders/A-1001","data":{"order":"A-1001"}}`)
		c, err := buildCall(spec, secret, envelope, "application/cloudevents+json; charset=utf-8", delivery{event: "ignored", id: "ignored"}, time.Now())
		if err != nil {
			t.Fatalf("buildCall: %v", err)
		}
		if len(c.headers) != 1 || c.headers[0].name != "Authorization" {
			t.Errorf("headers %q, want only Authorization: the envelope carries the attributes", c.headers)
		}
		e := readCloudEvent(t, c)
		if e.ID() != "A-1001-1" || e.Source() != "/shop/orders" || e.Type() != "com.example.order.refunded" || e.Subject() != "orders/A-1001" {
			t.Errorf("the SDK reads %s", e)
		}
	})
}
