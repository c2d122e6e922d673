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

package receiver

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/hookrun/hookrun/receiver/internal/store"
)

func TestOptionsFlags(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	o := NewOptions()
	fs := pflag.NewFlagSet("receiver", pflag.ContinueOnError)
	o.BindFlags(fs)
	err := fs.Parse([]string{
		"--listen-address=127.0.0.1:9443", "--rate-limit=5", "--unauthenticated-rate-limit=2", "--disable-triggering",
		"--namespace=hooks", "--watch-namespace=a,b", "--watch-namespace=c",
		"--pod-name=hookrun-receiver-7d9f-x2", "--rejection-report-interval=15s", "--shutdown-delay=12s",
		"--oidc-max-token-lifetime=90m",
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.ListenAddress != "127.0.0.1:9443" || o.RateLimit != 5 || o.UnauthenticatedRateLimit != 2 ||
		!o.DisableTriggering || o.Namespace != "hooks" || strings.Join(o.WatchNamespaces, ",") != "a,b,c" ||
		o.PodName != "hookrun-receiver-7d9f-x2" || o.RejectionReportInterval != 15*time.Second || o.ShutdownDelay != 12*time.Second ||
		o.OIDCMaxTokenLifetime != 90*time.Minute {
		t.Errorf("parsed %+v", *o)
	}
}

func TestOptionsNamespaceDefault(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	if got := NewOptions().Namespace; got != "hookrun-system" {
		t.Errorf("namespace without POD_NAMESPACE = %q, want hookrun-system", got)
	}
	t.Setenv("POD_NAMESPACE", "hooks-prod")
	if got := NewOptions().Namespace; got != "hooks-prod" {
		t.Errorf("namespace with POD_NAMESPACE = %q, want hooks-prod", got)
	}
	o := NewOptions()
	if o.RateLimit != 60 || o.UnauthenticatedRateLimit != 60 || o.RejectionReportInterval != time.Minute || o.ShutdownDelay != 5*time.Second ||
		o.OIDCMaxTokenLifetime != time.Hour {
		t.Errorf("defaults: rate limits %d/%d, report interval %s, shutdown delay %s, token lifetime %s; want 60/60, 1m, 5s and 1h",
			o.RateLimit, o.UnauthenticatedRateLimit, o.RejectionReportInterval, o.ShutdownDelay, o.OIDCMaxTokenLifetime)
	}
}

func TestOptionsPodNameDefault(t *testing.T) {
	t.Setenv("POD_NAME", "hookrun-receiver-5c7b9-abcde")
	if got := NewOptions().PodName; got != "hookrun-receiver-5c7b9-abcde" {
		t.Errorf("pod name with POD_NAME = %q", got)
	}
	t.Setenv("POD_NAME", "")
	if o := NewOptions(); o.PodName == "" || o.Validate() != nil {
		t.Errorf("pod name from the host name = %q: %v", o.PodName, o.Validate())
	}
	if got := nameOf("My_Mac.local"); got != "my-mac.local" {
		t.Errorf("nameOf(My_Mac.local) = %q, want my-mac.local", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*Options)
		wantErr string
	}{
		{"valid", func(*Options) {}, ""},
		{"no listen address", func(o *Options) { o.ListenAddress = "" }, "--listen-address is required"},
		{"zero rate limit", func(o *Options) { o.RateLimit = 0 }, "--rate-limit must be at least 1"},
		{"zero unauthenticated rate limit", func(o *Options) { o.UnauthenticatedRateLimit = 0 }, "--unauthenticated-rate-limit must be at least 1"},
		{"empty namespace", func(o *Options) { o.Namespace = "" }, "--namespace must not be empty"},
		{"no pod name", func(o *Options) { o.PodName = "" }, "--pod-name"},
		{"pod name not a name", func(o *Options) { o.PodName = "Receiver_1" }, "--pod-name"},
		{"report interval under a second", func(o *Options) { o.RejectionReportInterval = time.Millisecond }, "--rejection-report-interval must be at least 1s"},
		{"no shutdown delay", func(o *Options) { o.ShutdownDelay = 0 }, ""},
		{"negative shutdown delay", func(o *Options) { o.ShutdownDelay = -time.Second }, "--shutdown-delay must not be negative"},
		{"no token lifetime", func(o *Options) { o.OIDCMaxTokenLifetime = 0 }, "--oidc-max-token-lifetime must be at least 1m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			tc.mutate(o)
			err := o.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// The receiver's manager waits for the shutdown delay, the drain and the
// last rejection report, and no less.
func TestOptionsStopTimeout(t *testing.T) {
	o := NewOptions()
	o.ShutdownDelay = 7 * time.Second
	if got, want := o.StopTimeout(), 7*time.Second+ShutdownTimeout+store.CleanupTimeout; got != want {
		t.Errorf("StopTimeout() = %s, want %s", got, want)
	}
}
