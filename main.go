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

// Command hookrun is the hookrun operator and webhook receiver in one binary.
package main

import (
	"flag"
	"fmt"
	"os"
	goruntime "runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers"
	"github.com/hookrun/hookrun/receiver"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func init() {
	metrics.Registry.MustRegister(newBuildInfo(version, goruntime.Version()))
}

// newBuildInfo is hookrun_build_info, on the operator's and the receiver's
// /metrics: always 1, labelled with what was built.
func newBuildInfo(version, goVersion string) prometheus.Gauge {
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "hookrun_build_info",
		Help:        "Always 1; labelled with the hookrun version and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": goVersion},
	})
	info.Set(1)
	return info
}

func main() {
	if err := newRootCommand().ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	zapOpts := zap.Options{}
	root := &cobra.Command{
		Use:           "hookrun",
		Short:         "Trigger AI agents from webhooks, the Kubernetes way",
		SilenceUsage:  true,
		SilenceErrors: false,
		PersistentPreRun: func(*cobra.Command, []string) {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
		},
	}
	logFlags := flag.NewFlagSet("log", flag.ContinueOnError)
	zapOpts.BindFlags(logFlags)
	root.PersistentFlags().AddGoFlagSet(logFlags)
	root.AddCommand(newOperatorCommand(), newReceiverCommand(), newVersionCommand())
	return root
}

func newOperatorCommand() *cobra.Command {
	opts := controllers.NewOperatorOptions()
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run the operator: reconcile endpoints, agents and threads, and dispatch runs over A2A",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			return runOperator(cmd, opts)
		},
	}
	opts.BindFlags(cmd.Flags())
	return cmd
}

func runOperator(cmd *cobra.Command, opts *controllers.OperatorOptions) error {
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  newScheme(),
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsBindAddress},
		HealthProbeBindAddress:  opts.HealthProbeBindAddress,
		PprofBindAddress:        opts.PprofBindAddress,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        "hookrun-operator.agents.hookrun.dev",
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		Client:                  client.Options{Cache: controllers.ClientCacheOptions()},
		Cache:                   controllers.CacheOptions(opts.Namespace),
	})
	if err != nil {
		return fmt.Errorf("creating the operator's manager: %w", err)
	}
	if err := addProbes(mgr); err != nil {
		return err
	}
	if err := controllers.SetupOperator(cmd.Context(), mgr, opts, controllers.Dependencies{}); err != nil {
		return err
	}
	return mgr.Start(cmd.Context())
}

func newReceiverCommand() *cobra.Command {
	opts := receiver.NewOptions()
	cmd := &cobra.Command{
		Use:   "receiver",
		Short: "Run the webhook receiver: POST /api/webhooks/{endpointId}/receive",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			return runReceiver(cmd, opts)
		},
	}
	opts.BindFlags(cmd.Flags())
	return cmd
}

func runReceiver(cmd *cobra.Command, opts *receiver.Options) error {
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 newScheme(),
		Metrics:                metricsserver.Options{BindAddress: opts.MetricsBindAddress},
		HealthProbeBindAddress: opts.HealthProbeBindAddress,
		PprofBindAddress:       opts.PprofBindAddress,
		Cache:                  receiver.CacheOptions(opts),
	})
	if err != nil {
		return fmt.Errorf("creating the receiver's manager: %w", err)
	}
	if err := addProbes(mgr); err != nil {
		return err
	}
	if _, err := receiver.Setup(cmd.Context(), mgr, opts, receiver.Dependencies{}); err != nil {
		return err
	}
	return mgr.Start(cmd.Context())
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the hookrun version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "hookrun %s (%s, %s/%s)\n", version, goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
		},
	}
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(agentsv1alpha1.AddToScheme(s))
	return s
}

// restConfig loads the kubeconfig at path, or when path is empty the usual
// chain: $KUBECONFIG, in-cluster configuration, ~/.kube/config.
func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("loading the Kubernetes client configuration: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

func addProbes(mgr ctrl.Manager) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	return nil
}
