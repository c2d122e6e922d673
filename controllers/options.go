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
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/hookrun/hookrun/controllers/accounting"
	"github.com/hookrun/hookrun/controllers/endpoint"

	"github.com/spf13/pflag"

	"github.com/hookrun/hookrun/controllers/a2a"
	"github.com/hookrun/hookrun/controllers/run"
)

// Defaults of the operator's flags.
const (
	DefaultRunHistoryLimit = 100
	DefaultRunTTL          = 168 * time.Hour
	DefaultPayloadTTL      = 24 * time.Hour
	DefaultDispatchWorkers = 8
	// DefaultA2ACallTimeout bounds one A2A HTTP call (a send, a poll or a cancel).
	DefaultA2ACallTimeout = run.DefaultCallTimeout
	// DefaultNamespace is the receiver's namespace when neither --namespace
	// nor $POD_NAMESPACE says otherwise.
	DefaultNamespace = "hookrun-system"
)

// OperatorOptions are the settings of `hookrun operator` but those it shares
// with the receiver (controllers/sharedflags.Options).
type OperatorOptions struct {
	// PublicBaseURL is the externally reachable base of the receiver, for
	// example https://hooks.example.com; endpoint URLs are
	// PublicBaseURL + "/api/webhooks/{endpointID}/receive".
	PublicBaseURL string
	// LeaderElect makes replicas elect one active operator.
	LeaderElect bool
	// LeaderElectionNamespace holds the leader election Lease; empty means the pod's namespace.
	LeaderElectionNamespace string
	// RunHistoryLimit is how many finished runs are kept per endpoint.
	RunHistoryLimit int
	// RunTTL is how long a finished run is kept after completion.
	RunTTL time.Duration
	// PayloadTTL is how long a finished run's payload Secret is kept after completion.
	PayloadTTL time.Duration
	// RunCountDelay batches AgentRun events into one status.runs update per endpoint.
	RunCountDelay time.Duration
	// OwnerRecheckInterval is how often an OwnerNotMember pause re-checks membership.
	OwnerRecheckInterval time.Duration
	// DispatchWorkers is how many AgentRuns are sent or looked at in parallel.
	// All the Agents of one namespace hold at most half of them
	// (NamespaceShare), one Agent at most a quarter (AgentShare).
	DispatchWorkers int
	// A2ACallTimeout bounds every A2A HTTP call; a call cut off by it is
	// retried like a failed connection.
	A2ACallTimeout time.Duration
	// Namespace is the receiver's namespace, where the operator keeps the
	// signing keys of signed senders (the only Secrets the receiver reads).
	Namespace string
	// AgentAllowedHosts and AgentAllowedCIDRs limit where runs are sent:
	// when either is set, the operator connects only to an agent whose URL
	// host is listed by name (exact, or "*.example.com" for every
	// subdomain) or, checked on the address it dials, whose address is in
	// one of the CIDRs. Both empty: every agent (see a2a.AllowList).
	AgentAllowedHosts []string
	AgentAllowedCIDRs []string
	// OIDCIssuers are the issuers besides the cluster's that OIDC senders
	// may name: sharedflags.Options' --oidc-issuers, which the receiver shares.
	OIDCIssuers []string
}

// NewOperatorOptions returns the options with their defaults; the namespace
// defaults to $POD_NAMESPACE, else hookrun-system.
func NewOperatorOptions() *OperatorOptions {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = DefaultNamespace
	}
	return &OperatorOptions{
		Namespace:            ns,
		RunHistoryLimit:      DefaultRunHistoryLimit,
		RunTTL:               DefaultRunTTL,
		PayloadTTL:           DefaultPayloadTTL,
		RunCountDelay:        accounting.DefaultRunCountDelay,
		OwnerRecheckInterval: endpoint.DefaultOwnerRecheckInterval,
		DispatchWorkers:      DefaultDispatchWorkers,
		A2ACallTimeout:       DefaultA2ACallTimeout,
	}
}

// BindFlags registers the options as flags, with the current values as defaults.
func (o *OperatorOptions) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.PublicBaseURL, "public-base-url", o.PublicBaseURL, "Externally reachable base URL of the receiver, for example https://hooks.example.com. Required.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader so only one operator replica is active.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader election Lease. Empty: the pod's namespace.")
	fs.IntVar(&o.RunHistoryLimit, "run-history-limit", o.RunHistoryLimit, "Finished AgentRuns kept per endpoint; older ones are deleted. 0: no limit.")
	fs.DurationVar(&o.RunTTL, "run-ttl", o.RunTTL, "How long a finished AgentRun is kept after it completed. 0: until the history limit drops it.")
	fs.DurationVar(&o.PayloadTTL, "payload-ttl", o.PayloadTTL, "How long a finished run's payload Secret is kept after it completed; the run record stays. 0: as long as the run.")
	fs.DurationVar(&o.RunCountDelay, "run-count-delay", o.RunCountDelay, "Batch AgentRun changes for this long before updating an endpoint's status.runs.")
	fs.DurationVar(&o.OwnerRecheckInterval, "owner-recheck-interval", o.OwnerRecheckInterval, "How often an endpoint paused with OwnerNotMember re-checks whether its owner is a member again.")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "The receiver's namespace: the operator keeps the signing keys of signed senders (GitHub, HMAC, StandardWebhooks, Stripe, Slack) there, as Secrets only the receiver reads.")
	fs.StringSliceVar(&o.AgentAllowedHosts, "agent-allowed-hosts", o.AgentAllowedHosts, "Agent host names runs may be sent to, comma-separated: exact names, or *.example.com for every subdomain of example.com. A listed name is connected to at any address it resolves to. With this or --agent-allowed-cidrs set, any other agent is refused. Empty (with --agent-allowed-cidrs empty): every agent.")
	fs.StringSliceVar(&o.AgentAllowedCIDRs, "agent-allowed-cidrs", o.AgentAllowedCIDRs, "Addresses runs may be sent to, as comma-separated CIDRs (a bare IP address stands for itself), checked on the address the operator connects to. With this or --agent-allowed-hosts set, any other agent is refused and no HTTP proxy is used. Empty (with --agent-allowed-hosts empty): every agent.")
	fs.IntVar(&o.DispatchWorkers, "dispatch-workers", o.DispatchWorkers, "How many A2A calls (sends, polls, cancels) are made in parallel; all the Agents of one namespace hold at most half of them, one Agent at most a quarter (each at least one); their other runs wait their turn without holding a worker.")
	fs.DurationVar(&o.A2ACallTimeout, "a2a-call-timeout", o.A2ACallTimeout, "Deadline of every A2A HTTP call to an agent (also cut by the run's remaining time); a call cut off is retried like a failed connection until the run's timeout.")
}

// Validate reports every invalid option at once.
func (o *OperatorOptions) Validate() error {
	var errs []error
	if err := validateBaseURL(o.PublicBaseURL); err != nil {
		errs = append(errs, fmt.Errorf("--public-base-url: %w", err))
	}
	if o.RunHistoryLimit < 0 {
		errs = append(errs, fmt.Errorf("--run-history-limit must be 0 or more, got %d", o.RunHistoryLimit))
	}
	if o.RunTTL < 0 {
		errs = append(errs, fmt.Errorf("--run-ttl must not be negative, got %s", o.RunTTL))
	}
	if o.PayloadTTL < 0 {
		errs = append(errs, fmt.Errorf("--payload-ttl must not be negative, got %s", o.PayloadTTL))
	}
	if o.RunCountDelay < 0 {
		errs = append(errs, fmt.Errorf("--run-count-delay must not be negative, got %s", o.RunCountDelay))
	}
	if o.OwnerRecheckInterval <= 0 {
		errs = append(errs, fmt.Errorf("--owner-recheck-interval must be positive, got %s", o.OwnerRecheckInterval))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace must not be empty"))
	}
	if o.DispatchWorkers < 1 {
		errs = append(errs, fmt.Errorf("--dispatch-workers must be at least 1, got %d", o.DispatchWorkers))
	}
	if o.A2ACallTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--a2a-call-timeout must be positive, got %s", o.A2ACallTimeout))
	}
	if _, err := o.AgentAllowList(); err != nil {
		errs = append(errs, err)
	}

	return errors.Join(errs...)
}

// AgentAllowList is the allow list of agents the flags give; nil allows
// every agent.
func (o *OperatorOptions) AgentAllowList() (*a2a.AllowList, error) {
	allow, err := a2a.NewAllowList(o.AgentAllowedHosts, o.AgentAllowedCIDRs)
	if err != nil {
		return nil, fmt.Errorf("--agent-allowed-hosts, --agent-allowed-cidrs: %w", err)
	}
	return allow, nil
}

func validateBaseURL(raw string) error {
	if raw == "" {
		return errors.New("is required, for example https://hooks.example.com")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q must be an absolute http:// or https:// URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must not have a query or fragment", raw)
	}
	return nil
}
