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
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers"
	"github.com/hookrun/hookrun/controllers/sharedflags"
	"github.com/hookrun/hookrun/controllers/tracing"
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

// role is what a subcommand running a manager adds to the shared settings.
type role struct {
	// name is the subcommand, and the component the API budget flags name.
	name, short string
	// apiUse says in --kube-api-qps's help what the role's requests are.
	apiUse string
	// options are the role's own flags.
	options interface {
		BindFlags(*pflag.FlagSet)
		Validate() error
	}
	// configure adds the role's cache and leader election to the manager's options.
	configure func(*ctrl.Options)
	// setup adds the role's controllers and servers to the manager, their
	// spans made by tp.
	setup func(ctx context.Context, mgr ctrl.Manager, tp trace.TracerProvider, shared *sharedflags.Options) error
	// service is the role's service.name in its traces.
	service string
}

func newOperatorCommand() *cobra.Command { return newRoleCommand(operatorRole()) }

func operatorRole() role {
	opts := controllers.NewOperatorOptions()
	return role{
		name:    "operator",
		short:   "Run the operator: reconcile endpoints, agents and threads, and dispatch runs over A2A",
		options: opts,
		configure: func(o *ctrl.Options) {
			o.LeaderElection = opts.LeaderElect
			o.LeaderElectionID = "hookrun-operator.agents.hookrun.dev"
			o.LeaderElectionNamespace = opts.LeaderElectionNamespace
			// A stopping operator (SIGTERM: an upgrade, a drained node)
			// gives its Lease up once its controllers have stopped, so the
			// next one leads at once instead of after the lease duration.
			// Safe because nothing of the operator runs outside its
			// manager, and the process ends once the manager has stopped
			// (run exports the last spans, nothing more).
			o.LeaderElectionReleaseOnCancel = true
			o.Client = client.Options{Cache: controllers.ClientCacheOptions()}
			o.Cache = controllers.CacheOptions(opts.Namespace)
		},
		setup: func(ctx context.Context, mgr ctrl.Manager, tp trace.TracerProvider, shared *sharedflags.Options) error {
			opts.OIDCIssuers = shared.OIDCIssuers
			return controllers.SetupOperator(ctx, mgr, opts, controllers.Dependencies{TracerProvider: tp})
		},
		service: controllers.ServiceName,
	}
}

func newReceiverCommand() *cobra.Command { return newRoleCommand(receiverRole()) }

func receiverRole() role {
	opts := receiver.NewOptions()
	return role{
		name:    "receiver",
		short:   "Run the webhook receiver: POST /api/webhooks/{endpointId}/receive",
		apiUse:  "two per accepted call",
		options: opts,
		configure: func(o *ctrl.Options) {
			o.Cache = receiver.CacheOptions(opts)
			// The manager waits for the shutdown delay and the drain
			// (its default of 30 s would cut them short).
			o.GracefulShutdownTimeout = ptr.To(opts.StopTimeout())
		},
		setup: func(ctx context.Context, mgr ctrl.Manager, tp trace.TracerProvider, shared *sharedflags.Options) error {
			opts.OIDCIssuers = shared.OIDCIssuers
			_, err := receiver.Setup(ctx, mgr, opts, receiver.Dependencies{TracerProvider: tp})
			return err
		},
		service: receiver.ServiceName,
	}
}

// newRoleCommand is the subcommand of r, with the shared flags and r's own.
func newRoleCommand(r role) *cobra.Command {
	shared := sharedflags.NewOptions()
	cmd := &cobra.Command{
		Use:   r.name,
		Short: r.short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(r.options.Validate(), shared.Validate()); err != nil {
				return err
			}
			return run(cmd.Context(), r, shared)
		},
	}
	shared.BindFlags(cmd.Flags(), r.name, r.apiUse)
	r.options.BindFlags(cmd.Flags())
	return cmd
}

// run starts r's manager and serves until ctx ends.
func run(ctx context.Context, r role, shared *sharedflags.Options) error {
	cfg, err := shared.RESTConfig()
	if err != nil {
		return err
	}
	opts := shared.ManagerOptions()
	opts.Scheme = newScheme()
	r.configure(&opts)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("creating the %s's manager: %w", r.name, err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	tp, err := tracing.NewProvider(ctx, shared.OTLPEndpoint, r.service)
	if err != nil {
		return err
	}
	otel.SetLogger(ctrl.Log.WithName("otel"))
	if err := r.setup(ctx, mgr, tp, shared); err != nil {
		return err
	}
	err = mgr.Start(ctx)
	// The spans not exported yet go out before the process ends.
	flushCtx, cancel := context.WithTimeout(context.Background(), tracing.FlushTimeout)
	defer cancel()
	if ferr := tp.Shutdown(flushCtx); ferr != nil {
		ctrl.Log.Error(ferr, "exporting the last spans")
	}
	return err
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
