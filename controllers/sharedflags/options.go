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
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/hookrun/hookrun/controllers/oidc"
	"github.com/hookrun/hookrun/controllers/tracing"
)

// Defaults of the shared flags.
const (
	DefaultMetricsBindAddress     = ":8080"
	DefaultHealthProbeBindAddress = ":8081"
	// DefaultKubeAPIQPS and DefaultKubeAPIBurst bound a component's requests
	// to the API server. client-go's own default (5 per second) would take
	// the operator minutes to bring thousands of endpoints to Ready and cap
	// the receiver (two writes per accepted call) at a few calls per second;
	// API Priority and Fairness protects the API server.
	DefaultKubeAPIQPS   = 500
	DefaultKubeAPIBurst = 1000
)

// Options are the settings of `hookrun operator` and `hookrun receiver`
// that are the same for both.
type Options struct {
	// Kubeconfig is the kubeconfig file to use; empty means $KUBECONFIG,
	// then the in-cluster configuration, then ~/.kube/config.
	Kubeconfig string
	// MetricsBindAddress serves /metrics; "0" disables it.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz.
	HealthProbeBindAddress string
	// PprofBindAddress serves net/http/pprof; "0" (the default) disables it.
	PprofBindAddress string
	// KubeAPIQPS and KubeAPIBurst bound the client's requests to the API server.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// OTLPEndpoint is the OpenTelemetry collector's base URL (OTLP/HTTP)
	// the spans go to; empty: $OTEL_EXPORTER_OTLP_ENDPOINT, else none
	// (traces still propagate).
	OTLPEndpoint string
	// OIDCIssuers are the issuers besides the cluster's that OIDC senders
	// may name (spec.sender.oidc.issuer): the receiver verifies their
	// tokens, the operator refuses endpoints naming another.
	OIDCIssuers []string
}

// NewOptions returns the options with their defaults.
func NewOptions() *Options {
	return &Options{
		MetricsBindAddress:     DefaultMetricsBindAddress,
		HealthProbeBindAddress: DefaultHealthProbeBindAddress,
		PprofBindAddress:       "0",
		KubeAPIQPS:             DefaultKubeAPIQPS,
		KubeAPIBurst:           DefaultKubeAPIBurst,
	}
}

// BindFlags registers the options as flags, with the current values as
// defaults. component ("operator" or "receiver") is named in the help of
// --kube-api-qps and --kube-api-burst; apiUse, when not empty, says there
// what its requests are.
func (o *Options) BindFlags(fs *pflag.FlagSet, component, apiUse string) {
	if apiUse != "" {
		apiUse = " (" + apiUse + ")"
	}
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file. Empty: $KUBECONFIG, the in-cluster configuration, then ~/.kube/config.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address the /metrics endpoint binds to; 0 disables it.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address the /healthz and /readyz endpoints bind to.")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", o.PprofBindAddress, "Address net/http/pprof (/debug/pprof/) binds to, for profiling; 0 disables it. Keep it on loopback.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Requests per second the "+component+" may make to the API server"+apiUse+".")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst of requests the "+component+" may make to the API server.")
	fs.StringSliceVar(&o.OIDCIssuers, "oidc-issuers", o.OIDCIssuers, oidc.IssuersFlagHelp)
	fs.StringVar(&o.OTLPEndpoint, "otlp-endpoint", o.OTLPEndpoint, "Base URL of an OpenTelemetry collector (OTLP/HTTP, for example http://otel-collector:4318) the "+component+"'s spans are exported to. Empty: $OTEL_EXPORTER_OTLP_ENDPOINT, else no export (traceparents still propagate).")
}

// Validate reports every invalid option at once.
func (o *Options) Validate() error {
	var errs []error
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-qps and --kube-api-burst must be positive, got %g and %d", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	if _, err := oidc.ParseIssuers(o.OIDCIssuers); err != nil {
		errs = append(errs, err)
	}
	if o.OTLPEndpoint != "" {
		if _, err := tracing.TracesURL(o.OTLPEndpoint); err != nil {
			errs = append(errs, fmt.Errorf("%w, got %q", err, o.OTLPEndpoint))
		}
	}
	return errors.Join(errs...)
}

// RESTConfig loads the kubeconfig at Kubeconfig, or when it is empty the
// usual chain: $KUBECONFIG, in-cluster configuration, ~/.kube/config; with
// the API budget of KubeAPIQPS and KubeAPIBurst.
func (o *Options) RESTConfig() (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig == "" {
		if cfg, err = ctrl.GetConfig(); err != nil {
			return nil, fmt.Errorf("loading the Kubernetes client configuration: %w", err)
		}
	} else if cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig); err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", o.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	return cfg, nil
}

// ManagerOptions are the controller-runtime manager options these settings
// fill in: the addresses of /metrics, the probes and pprof. The caller adds
// the scheme, the cache and leader election.
func (o *Options) ManagerOptions() ctrl.Options {
	return ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress: o.HealthProbeBindAddress,
		PprofBindAddress:       o.PprofBindAddress,
	}
}
