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

package controllers

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookrun/hookrun/controllers/accounting"
	"github.com/hookrun/hookrun/controllers/endpoint"

	"github.com/spf13/pflag"
)

func TestOperatorOptionsFlags(t *testing.T) {
	o := NewOperatorOptions()
	fs := pflag.NewFlagSet("operator", pflag.ContinueOnError)
	o.BindFlags(fs)
	err := fs.Parse([]string{
		"--public-base-url=https://hooks.example.com", "--leader-elect", "--leader-election-namespace=leases",
		"--run-history-limit=5", "--run-ttl=1h", "--payload-ttl=10m",
		"--namespace=hookrun-receivers", "--dispatch-workers=12", "--a2a-call-timeout=5s",
		"--agent-allowed-hosts=agent.example.com,*.agents.example.com", "--agent-allowed-cidrs=10.20.0.0/16",
		"--agent-allowed-cidrs=192.0.2.7",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := OperatorOptions{
		PublicBaseURL: "https://hooks.example.com", LeaderElect: true, LeaderElectionNamespace: "leases",
		RunHistoryLimit: 5, RunTTL: time.Hour, PayloadTTL: 10 * time.Minute,
		RunCountDelay: accounting.DefaultRunCountDelay, OwnerRecheckInterval: endpoint.DefaultOwnerRecheckInterval,
		DispatchWorkers:   12,
		A2ACallTimeout:    5 * time.Second,
		Namespace:         "hookrun-receivers",
		AgentAllowedHosts: []string{"agent.example.com", "*.agents.example.com"},
		AgentAllowedCIDRs: []string{"10.20.0.0/16", "192.0.2.7"},
	}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("parsed %+v, want %+v", *o, want)
	}
}

func TestOperatorOptionsDefaults(t *testing.T) {
	o := NewOperatorOptions()
	if o.RunHistoryLimit != 100 || o.RunTTL != 168*time.Hour || o.PayloadTTL != 24*time.Hour ||
		o.DispatchWorkers != 8 || o.A2ACallTimeout != 30*time.Second {
		t.Errorf("defaults = %+v, want run-history-limit=100 run-ttl=168h payload-ttl=24h dispatch-workers=8 a2a-call-timeout=30s", *o)
	}
}

func TestOperatorOptionsValidate(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*OperatorOptions)
		wantErr string
	}{
		{"valid", func(*OperatorOptions) {}, ""},
		{"trailing slash is fine", func(o *OperatorOptions) { o.PublicBaseURL = "http://127.0.0.1:8443/" }, ""},
		{"missing base URL", func(o *OperatorOptions) { o.PublicBaseURL = "" }, "--public-base-url: is required"},
		{"relative base URL", func(o *OperatorOptions) { o.PublicBaseURL = "hooks.example.com" }, "must be an absolute http:// or https:// URL"},
		{"base URL with a query", func(o *OperatorOptions) { o.PublicBaseURL = "https://h.example.com/?a=b" }, "must not have a query"},
		{"negative history", func(o *OperatorOptions) { o.RunHistoryLimit = -1 }, "--run-history-limit must be 0 or more"},
		{"negative run TTL", func(o *OperatorOptions) { o.RunTTL = -time.Second }, "--run-ttl must not be negative"},
		{"negative payload TTL", func(o *OperatorOptions) { o.PayloadTTL = -time.Second }, "--payload-ttl must not be negative"},
		{"zero owner recheck", func(o *OperatorOptions) { o.OwnerRecheckInterval = 0 }, "--owner-recheck-interval must be positive"},
		{"no dispatch workers", func(o *OperatorOptions) { o.DispatchWorkers = 0 }, "--dispatch-workers must be at least 1"},
		{"zero A2A call timeout", func(o *OperatorOptions) { o.A2ACallTimeout = 0 }, "--a2a-call-timeout must be positive"},
		{"negative A2A call timeout", func(o *OperatorOptions) { o.A2ACallTimeout = -time.Second }, "--a2a-call-timeout must be positive"},
		{"agent allow list", func(o *OperatorOptions) {
			o.AgentAllowedHosts, o.AgentAllowedCIDRs = []string{"*.agents.example.com"}, []string{"10.0.0.0/8", "fd00::/8"}
		}, ""},
		{"IP address among the allowed hosts", func(o *OperatorOptions) { o.AgentAllowedHosts = []string{"10.0.0.1"} },
			`--agent-allowed-hosts, --agent-allowed-cidrs: host "10.0.0.1" is an IP address: list addresses as CIDRs`},
		{"allowed CIDR that is not one", func(o *OperatorOptions) { o.AgentAllowedCIDRs = []string{"10.0.0.0/40"} },
			`--agent-allowed-hosts, --agent-allowed-cidrs: "10.0.0.0/40" is not a CIDR`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOperatorOptions()
			o.PublicBaseURL = "https://hooks.example.com"
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
