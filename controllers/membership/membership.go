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

package membership

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

const (
	// Verb is the RBAC verb on agents that makes a user a member of an Agent.
	Verb = "trigger"
	// Resource is the resource the verb applies to.
	Resource = "agents"
	// DefaultTTL is how long an answer is reused; the design allows at most 10 s.
	DefaultTTL = 10 * time.Second
	// maxEntries bounds the cache; expired entries are dropped when it is full.
	maxEntries = 10000
)

// Checker tells whether an owner may trigger an Agent.
type Checker interface {
	// IsMember reports whether owner may trigger Agent agentName in namespace.
	// An endpoint without an owner has no member to run as: it is not a member.
	IsMember(ctx context.Context, namespace, agentName string, owner *agentsv1alpha1.Owner) (bool, error)
}

// SubjectAccessReviewChecker asks the API server with SubjectAccessReviews
// and caches each answer for TTL.
type SubjectAccessReviewChecker struct {
	client client.Client
	ready  func(context.Context) error
	clock  clock.PassiveClock
	ttl    time.Duration

	mu      sync.Mutex
	answers map[string]answer
}

type answer struct {
	member  bool
	expires time.Time
}

// NewSubjectAccessReviewChecker returns a Checker that creates
// SubjectAccessReviews with c and reuses answers for ttl. A denial counts
// only when ready, asked after it, reports the API server ready, and a
// review asked then denies too.
func NewSubjectAccessReviewChecker(c client.Client, ready func(context.Context) error, clk clock.PassiveClock, ttl time.Duration) *SubjectAccessReviewChecker {
	return &SubjectAccessReviewChecker{client: c, ready: ready, clock: clk, ttl: ttl, answers: map[string]answer{}}
}

// NewForAPIServer returns the Checker the operator and the receiver use
// (with DefaultTTL): reviews created with c, denials confirmed by the
// /readyz of the API server that cfg and hc reach.
func NewForAPIServer(c client.Client, cfg *rest.Config, hc *http.Client, clk clock.PassiveClock, ttl time.Duration) (*SubjectAccessReviewChecker, error) {
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("a client for the API server's /readyz: %w", err)
	}
	ready := func(ctx context.Context) error {
		res := dc.RESTClient().Get().AbsPath("/readyz").Do(ctx)
		var code int
		if res.StatusCode(&code); code != 0 && code != http.StatusOK {
			return fmt.Errorf("its /readyz answered %d", code) // the body lists every check
		}
		return res.Error()
	}
	return NewSubjectAccessReviewChecker(c, ready, clk, ttl), nil
}

// IsMember implements Checker.
func (c *SubjectAccessReviewChecker) IsMember(ctx context.Context, namespace, agentName string, owner *agentsv1alpha1.Owner) (bool, error) {
	if owner == nil || owner.User == "" {
		return false, nil
	}
	groups := slices.Clone(owner.Groups)
	slices.Sort(groups)
	key := strings.Join([]string{namespace, agentName, owner.User, strings.Join(groups, "\x00")}, "\x01")

	now := c.clock.Now()
	c.mu.Lock()
	a, ok := c.answers[key]
	c.mu.Unlock()
	if ok && now.Before(a.expires) {
		return a.member, nil
	}

	spec := authorizationv1.SubjectAccessReviewSpec{
		User:   owner.User,
		Groups: groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace,
			Verb:      Verb,
			Group:     agentsv1alpha1.GroupVersion.Group,
			Resource:  Resource,
			Name:      agentName,
		},
	}
	member, err := c.review(ctx, spec)
	if err != nil {
		return false, err
	}
	if !member {
		// Ready now, the API server may still have answered before it
		// was: only a review asked after /readyz passed is believed.
		if err := c.ready(ctx); err != nil {
			return false, fmt.Errorf("%s may not trigger agent %s/%s, says an API server that is not ready: %w", owner.User, namespace, agentName, err)
		}
		if member, err = c.review(ctx, spec); err != nil {
			return false, err
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.answers) >= maxEntries {
		for k, old := range c.answers {
			if !now.Before(old.expires) {
				delete(c.answers, k)
			}
		}
		if len(c.answers) >= maxEntries {
			clear(c.answers)
		}
	}
	c.answers[key] = answer{member: member, expires: now.Add(c.ttl)}
	return member, nil
}

// review asks the API server whether spec is allowed.
func (c *SubjectAccessReviewChecker) review(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: spec}
	if err := c.client.Create(ctx, sar); err != nil {
		a := spec.ResourceAttributes
		return false, fmt.Errorf("checking whether %s may trigger agent %s/%s: %w", spec.User, a.Namespace, a.Name, err)
	}
	return sar.Status.Allowed, nil
}
