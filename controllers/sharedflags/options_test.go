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

package sharedflags

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestOptionsFlags(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("receiver", pflag.ContinueOnError)
	o.BindFlags(fs, "receiver", "two per accepted call")
	err := fs.Parse([]string{
		"--kubeconfig=testdata-kubeconfig", "--metrics-bind-address=127.0.0.1:9000",
		"--health-probe-bind-address=127.0.0.1:9001", "--pprof-bind-address=127.0.0.1:9002",
		"--kube-api-qps=20.5", "--kube-api-burst=40", "--otlp-endpoint=http://otel-collector:4318",
		"--oidc-issuers=https://token.actions.githubusercontent.com,https://accounts.google.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Kubeconfig: "testdata-kubeconfig", MetricsBindAddress: "127.0.0.1:9000",
		HealthProbeBindAddress: "127.0.0.1:9001", PprofBindAddress: "127.0.0.1:9002", KubeAPIQPS: 20.5, KubeAPIBurst: 40,
		OTLPEndpoint: "http://otel-collector:4318",
		OIDCIssuers:  []string{"https://token.actions.githubusercontent.com", "https://accounts.google.com"}}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("parsed %+v, want %+v", *o, want)
	}
	m := o.ManagerOptions()
	if m.Metrics.BindAddress != "127.0.0.1:9000" || m.HealthProbeBindAddress != "127.0.0.1:9001" || m.PprofBindAddress != "127.0.0.1:9002" {
		t.Errorf("manager options: metrics %q, probes %q, pprof %q", m.Metrics.BindAddress, m.HealthProbeBindAddress, m.PprofBindAddress)
	}
}

func TestOptionsDefaults(t *testing.T) {
	fs := pflag.NewFlagSet("operator", pflag.ContinueOnError)
	NewOptions().BindFlags(fs, "operator", "")
	for name, want := range map[string]string{
		"kubeconfig": "", "metrics-bind-address": ":8080", "health-probe-bind-address": ":8081",
		"pprof-bind-address": "0", "kube-api-qps": "500", "kube-api-burst": "1000", "otlp-endpoint": "", "oidc-issuers": "[]",
	} {
		if f := fs.Lookup(name); f == nil || f.DefValue != want {
			t.Errorf("--%s: %+v, want default %q", name, f, want)
		}
	}
	if got := fs.Lookup("kube-api-qps").Usage; got != "Requests per second the operator may make to the API server." {
		t.Errorf("--kube-api-qps help: %q", got)
	}
	fs = pflag.NewFlagSet("receiver", pflag.ContinueOnError)
	NewOptions().BindFlags(fs, "receiver", "two per accepted call")
	if got := fs.Lookup("kube-api-qps").Usage; got != "Requests per second the receiver may make to the API server (two per accepted call)." {
		t.Errorf("--kube-api-qps help: %q", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate  func(*Options)
		wantErr string
	}{
		"valid":     {func(*Options) {}, ""},
		"no QPS":    {func(o *Options) { o.KubeAPIQPS = 0 }, "--kube-api-qps and --kube-api-burst must be positive"},
		"no burst":  {func(o *Options) { o.KubeAPIBurst = 0 }, "--kube-api-qps and --kube-api-burst must be positive"},
		"collector": {func(o *Options) { o.OTLPEndpoint = "https://otel.example.com/prefix" }, ""},
		"collector without a scheme": {func(o *Options) { o.OTLPEndpoint = "otel-collector:4318" },
			"--otlp-endpoint must be an http or https URL"},
		"an issuer": {func(o *Options) { o.OIDCIssuers = []string{"https://token.actions.githubusercontent.com"} }, ""},
		"an issuer over http": {func(o *Options) { o.OIDCIssuers = []string{"http://issuer.example"} },
			`--oidc-issuers: "http://issuer.example": not an https URL`},
	} {
		o := NewOptions()
		tc.mutate(o)
		err := o.Validate()
		if (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error = %v, want %q", name, err, tc.wantErr)
		}
	}
}

// RESTConfig reads --kubeconfig and applies the API budget.
func TestRESTConfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://203.0.113.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.Kubeconfig, o.KubeAPIQPS, o.KubeAPIBurst = kubeconfig, 7, 9
	cfg, err := o.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://203.0.113.1:6443" || cfg.QPS != 7 || cfg.Burst != 9 {
		t.Errorf("host %q, QPS %g, burst %d; want https://203.0.113.1:6443, 7 and 9", cfg.Host, cfg.QPS, cfg.Burst)
	}
	o.Kubeconfig = filepath.Join(t.TempDir(), "missing")
	if _, err := o.RESTConfig(); err == nil || !strings.Contains(err.Error(), "loading kubeconfig "+o.Kubeconfig) {
		t.Errorf("missing kubeconfig: %v", err)
	}
}
