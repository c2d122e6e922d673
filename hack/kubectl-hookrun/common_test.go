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
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/send"
)

func TestTarget(t *testing.T) {
	ep := &agentsv1alpha1.WebhookEndpoint{Status: agentsv1alpha1.WebhookEndpointStatus{URL: "https://hooks.example.com/api/webhooks/abc/receive"}}
	e := &cli.Env{}
	if got, err := send.Target(e, ep, ""); err != nil || got != ep.Status.URL {
		t.Errorf("target without --receiver-url = %q, %v", got, err)
	}
	if got, err := send.Target(e, ep, "http://127.0.0.1:8080"); err != nil || got != "http://127.0.0.1:8080/api/webhooks/abc/receive" {
		t.Errorf("target with --receiver-url = %q, %v", got, err)
	}
	if _, err := send.Target(e, ep, "localhost:8080"); err == nil {
		t.Error("a --receiver-url without a scheme is accepted")
	}
	if _, err := send.Target(e, ep, "ftp://127.0.0.1:8080"); err == nil {
		t.Error("a --receiver-url of another scheme than http or https is accepted")
	}
	if _, err := send.Target(e, &agentsv1alpha1.WebhookEndpoint{}, ""); err == nil {
		t.Error("an endpoint without a URL has a target")
	}
	// The UI refuses a bad --receiver-url before it serves.
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"ui", "--no-browser", "--receiver-url", "localhost:8080"}, &out, &errOut); code != exitUsage ||
		!strings.Contains(errOut.String(), "--receiver-url") {
		t.Errorf("ui --receiver-url localhost:8080: exit %d, %q; want %d and a message naming the flag", code, errOut.String(), exitUsage)
	}
}

func TestCallsFollowNoRedirect(t *testing.T) {
	var elsewhere bool
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere = true }))
	defer other.Close()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
	}))
	defer receiver.Close()
	req, err := http.NewRequest(http.MethodPost, receiver.URL, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(agentsv1alpha1.SecretHeader, "the-secret")
	resp, err := cli.NewEnv(io.Discard, io.Discard).HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || elsewhere {
		t.Errorf("answer %d, redirect followed: %v; want the 307 itself, and no call to the other host", resp.StatusCode, elsewhere)
	}
}
