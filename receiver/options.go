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
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/receiver/internal/limits"
	"github.com/hookrun/hookrun/receiver/internal/store"
)

// Defaults of the receiver's flags.
const (
	DefaultListenAddress            = ":8443"
	DefaultRateLimit                = 60
	DefaultUnauthenticatedRateLimit = 60
	DefaultNamespace                = "hookrun-system"
	DefaultMaxQueuedRunsPerEndpoint = 100
	DefaultMaxQueuedRunsPerAgent    = 1000
	// DefaultMaxInflightBodyBytes lets 32 calls of 1 MiB be read at once;
	// each is held about three times over while it is stored (the body,
	// its base64 in the request to the API server, buffers; an estimate).
	DefaultMaxInflightBodyBytes = 32 << 20
	// DefaultRejectionReportInterval is how often, at most, a replica
	// writes its rejection report.
	DefaultRejectionReportInterval = time.Minute
	// DefaultShutdownDelay is how long a replica keeps serving the receive
	// route after SIGTERM while Services and load balancers stop sending it
	// new connections.
	DefaultShutdownDelay = 5 * time.Second
	// DefaultOIDCMaxTokenLifetime is the longest an OIDC sender's token
	// may live by default: kubectl create token's default, and a projected
	// service account token's.
	DefaultOIDCMaxTokenLifetime = time.Hour
)

// StorePasswordEnv names the environment variable with the store's password
// (the chart sets it from receiver.rateLimit.existingSecret); a password in
// the URL is used when it is unset.
const StorePasswordEnv = "HOOKRUN_RATE_LIMIT_STORE_PASSWORD"

// Bounds and timeouts of the receiver, in one place.
const (
	// MaxBodyBytes is the largest body accepted (1 MiB); larger answers 413.
	MaxBodyBytes = agentsv1alpha1.MaxPayloadBytes
	// MaxHeaderBytes bounds request headers; net/http answers 431 beyond it.
	MaxHeaderBytes = 32 << 10
	// ReadHeaderTimeout bounds how long a client may take to send its headers.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds reading a whole request, body included, from its
	// first byte.
	ReadTimeout = 30 * time.Second
	// BodyReadTimeout bounds reading a body once the checks before it let
	// the call in: a slow upload holds what arrived of it this long at most, however fast its headers
	// came. 1 MiB in 10 s is 100 KiB/s.
	BodyReadTimeout = 10 * time.Second
	// WriteTimeout bounds one request from the end of its headers to the end of the answer.
	WriteTimeout = 40 * time.Second
	// IdleTimeout closes keep-alive connections idle this long.
	IdleTimeout = 90 * time.Second
	// ShutdownTimeout is how long in-flight calls may finish after SIGTERM.
	ShutdownTimeout = 25 * time.Second
	// MaxContentTypeLength is how much of Content-Type a run records.
	MaxContentTypeLength = 256
	// pauseRecordInterval is how long after recording a call skipped
	// because the owner is not a member further such calls are answered
	// without recording again (the operator pauses the endpoint for that
	// record, and the informer shows the pause well before).
	pauseRecordInterval = 10 * time.Second
)

// Options are the settings of `hookrun receiver` but those it shares with
// the operator (controllers/sharedflags.Options).
type Options struct {
	// ListenAddress serves the receive route.
	ListenAddress string
	// RateLimit is the invocation limit: calls per minute per endpoint (sliding window).
	RateLimit int
	// UnauthenticatedRateLimit is the pre-parse limit of unauthenticated
	// endpoints: calls per minute per endpoint, checked before the body is read.
	UnauthenticatedRateLimit int
	// RateLimitStore is the redis:// or rediss:// URL of a Redis or Valkey
	// that keeps both limits' windows for all replicas; empty: each replica
	// counts alone.
	RateLimitStore string
	// RateLimitStorePassword is the store's password ($HOOKRUN_RATE_LIMIT_STORE_PASSWORD);
	// when empty, the URL's is used.
	RateLimitStorePassword string
	// MaxQueuedRunsPerEndpoint and MaxQueuedRunsPerAgent cap the runs
	// waiting to start; beyond either a call is answered 429 backlog_full.
	MaxQueuedRunsPerEndpoint int
	MaxQueuedRunsPerAgent    int
	// MaxInflightBodyBytes bounds the request bodies held at once, half of
	// it those of one namespace's endpoints and a quarter those of one
	// endpoint; beyond any a call is answered 503 with Retry-After.
	MaxInflightBodyBytes int64
	// DisableTriggering answers every call with 503 triggering_disabled.
	DisableTriggering bool
	// Namespace is the receiver's own namespace, where ConfigMap
	// hookrun-receiver may switch triggering off at run time.
	Namespace string
	// WatchNamespaces limits the endpoints served to these namespaces; empty means all.
	WatchNamespaces []string
	// PodName names this replica's rejection report,
	// agentsv1alpha1.RejectionReportPrefix + PodName, in Namespace.
	PodName string
	// RejectionReportInterval is how often, at most, the report is written
	// (only when a count changed).
	RejectionReportInterval time.Duration
	// OIDCIssuers are the issuers besides the cluster's whose tokens OIDC
	// senders may use (spec.sender.oidc.issuer): sharedflags.Options'
	// --oidc-issuers, which the operator shares.
	OIDCIssuers []string
	// OIDCMaxTokenLifetime is the longest an OIDC sender's token may live
	// (exp − iat); a token that lives longer is refused 403.
	OIDCMaxTokenLifetime time.Duration
	// ShutdownDelay is how long, after SIGTERM, the replica keeps accepting
	// calls (its /readyz failing, keep-alives off) before it stops
	// accepting and drains the calls in flight (ShutdownTimeout).
	ShutdownDelay time.Duration
}

// StopTimeout bounds how long the receiver takes to stop after SIGTERM: the
// shutdown delay, the drain of the calls in flight and the write of the last
// rejection report. The receiver's manager waits that long for it
// (GracefulShutdownTimeout).
func (o *Options) StopTimeout() time.Duration {
	return o.ShutdownDelay + ShutdownTimeout + store.CleanupTimeout
}

// NewOptions returns the options with their defaults; the namespace defaults
// to $POD_NAMESPACE, else hookrun-system, and the pod name to $POD_NAME, else
// the host name (a pod's host name is its name).
func NewOptions() *Options {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = DefaultNamespace
	}
	pod := os.Getenv("POD_NAME")
	if pod == "" {
		host, _ := os.Hostname()
		pod = nameOf(host)
	}
	return &Options{
		ListenAddress:            DefaultListenAddress,
		RateLimit:                DefaultRateLimit,
		UnauthenticatedRateLimit: DefaultUnauthenticatedRateLimit,
		MaxQueuedRunsPerEndpoint: DefaultMaxQueuedRunsPerEndpoint,
		MaxQueuedRunsPerAgent:    DefaultMaxQueuedRunsPerAgent,
		MaxInflightBodyBytes:     DefaultMaxInflightBodyBytes,
		Namespace:                ns,
		PodName:                  pod,
		RejectionReportInterval:  DefaultRejectionReportInterval,
		ShutdownDelay:            DefaultShutdownDelay,
		OIDCMaxTokenLifetime:     DefaultOIDCMaxTokenLifetime,
		RateLimitStorePassword:   os.Getenv(StorePasswordEnv),
	}
}

// BindFlags registers the options as flags, with the current values as defaults.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ListenAddress, "listen-address", o.ListenAddress, "Address the receive route (POST /api/webhooks/{endpointId}/receive) listens on.")
	fs.IntVar(&o.RateLimit, "rate-limit", o.RateLimit, "Invocation rate limit: calls per minute per endpoint, sliding window.")
	fs.IntVar(&o.UnauthenticatedRateLimit, "unauthenticated-rate-limit", o.UnauthenticatedRateLimit, "Pre-parse rate limit of unauthenticated endpoints: calls per minute per endpoint, checked before the body is read.")
	fs.StringVar(&o.RateLimitStore, "rate-limit-store", o.RateLimitStore, "A Redis or Valkey (redis://[user@]host:port[/db], or rediss:// for TLS) that keeps both rate limits' windows for all replicas, so that together they let through exactly the limit; its password from $"+StorePasswordEnv+" (else the URL's). Empty: each replica counts alone. When the store does not answer, a replica counts alone until it does.")
	fs.IntVar(&o.MaxQueuedRunsPerEndpoint, "max-queued-runs-per-endpoint", o.MaxQueuedRunsPerEndpoint, "Runs of one endpoint that may wait to start; further calls are answered 429 backlog_full. Counted across replicas from endpoint status, so it may lag by seconds.")
	fs.IntVar(&o.MaxQueuedRunsPerAgent, "max-queued-runs-per-agent", o.MaxQueuedRunsPerAgent, "Runs of one Agent's endpoints that may wait to start; further calls are answered 429 backlog_full.")
	fs.Int64Var(&o.MaxInflightBodyBytes, "max-inflight-body-bytes", o.MaxInflightBodyBytes, "Bytes of request bodies this replica holds at once (a call takes from it as its body arrives, not what its Content-Length announces); beyond it calls are answered 503 with Retry-After. The calls of one namespace's endpoints hold at most half of it, those of one endpoint at most a quarter (each at least 1 MiB). At least 1 MiB.")
	fs.BoolVar(&o.DisableTriggering, "disable-triggering", o.DisableTriggering, "Answer every call with 503 triggering_disabled.")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "The receiver's namespace, holding ConfigMap hookrun-receiver (key triggering: disabled switches triggering off at run time).")
	fs.StringSliceVar(&o.WatchNamespaces, "watch-namespace", o.WatchNamespaces, "Serve only endpoints in these namespaces (repeat or comma-separate); empty: all namespaces.")
	fs.StringVar(&o.PodName, "pod-name", o.PodName, "This replica's name: its rejection counts go to ConfigMap "+agentsv1alpha1.RejectionReportPrefix+"<pod name> in --namespace. Default: $POD_NAME, else the host name.")
	fs.DurationVar(&o.RejectionReportInterval, "rejection-report-interval", o.RejectionReportInterval, "How often, at most, this replica writes its rejection counts per endpoint for the operator (only when one changed).")
	fs.DurationVar(&o.OIDCMaxTokenLifetime, "oidc-max-token-lifetime", o.OIDCMaxTokenLifetime, "The longest an OIDC sender's token (spec.sender.oidc) may live, from its iat to its exp; a token that lives longer, or has neither iat nor nbf, is answered 403 like any bad token. A token made to outlive its maker's membership would keep starting runs as the endpoint's owner.")
	fs.DurationVar(&o.ShutdownDelay, "shutdown-delay", o.ShutdownDelay, "After SIGTERM, how long this replica keeps accepting calls (its /readyz failing, keep-alives off) while Services and load balancers stop sending it new connections; then it stops accepting and drains the calls in flight (up to "+ShutdownTimeout.String()+"). 0: stop accepting at once.")
}

// Validate reports every invalid option at once.
func (o *Options) Validate() error {
	var errs []error
	if o.ListenAddress == "" {
		errs = append(errs, errors.New("--listen-address is required"))
	}
	if o.RateLimit < 1 {
		errs = append(errs, fmt.Errorf("--rate-limit must be at least 1, got %d", o.RateLimit))
	}
	if o.UnauthenticatedRateLimit < 1 {
		errs = append(errs, fmt.Errorf("--unauthenticated-rate-limit must be at least 1, got %d", o.UnauthenticatedRateLimit))
	}
	if o.RateLimitStore != "" {
		if _, err := limits.ParseStoreURL(o.RateLimitStore); err != nil {
			errs = append(errs, err)
		}
	}
	if o.MaxQueuedRunsPerEndpoint < 1 || o.MaxQueuedRunsPerAgent < 1 {
		errs = append(errs, fmt.Errorf("--max-queued-runs-per-endpoint and --max-queued-runs-per-agent must be at least 1, got %d and %d", o.MaxQueuedRunsPerEndpoint, o.MaxQueuedRunsPerAgent))
	}
	if o.MaxInflightBodyBytes < MaxBodyBytes {
		errs = append(errs, fmt.Errorf("--max-inflight-body-bytes must be at least %d (one largest body), got %d", MaxBodyBytes, o.MaxInflightBodyBytes))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace must not be empty"))
	}
	if errs2 := validation.IsDNS1123Subdomain(agentsv1alpha1.RejectionReportPrefix + o.PodName); o.PodName == "" || len(errs2) > 0 {
		errs = append(errs, fmt.Errorf("--pod-name %q does not make a ConfigMap name: %v", o.PodName, errs2))
	}
	if o.RejectionReportInterval < time.Second {
		errs = append(errs, fmt.Errorf("--rejection-report-interval must be at least 1s, got %s", o.RejectionReportInterval))
	}
	if o.OIDCMaxTokenLifetime < time.Minute {
		errs = append(errs, fmt.Errorf("--oidc-max-token-lifetime must be at least 1m, got %s", o.OIDCMaxTokenLifetime))
	}
	if o.ShutdownDelay < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-delay must not be negative, got %s", o.ShutdownDelay))
	}
	return errors.Join(errs...)
}

// nameOf makes a host name (a developer's machine may say My_Mac.local) fit
// an object name: lower case, other characters than a-z, 0-9, '-' and '.'
// become '-'.
func nameOf(host string) string {
	return strings.Map(func(r rune) rune {
		switch r = unicode.ToLower(r); {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '-'
	}, host)
}
