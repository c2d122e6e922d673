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

package endpoint

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/status"
	"github.com/hookrun/hookrun/controllers/oidc"
)

// filterSummary is the Ready summary of an endpoint whose spec.filter does
// not compile (filter.Compile: syntax, type, cost), or whose spec.fields do
// not (filter.CompileFields), or whose spec.sender.oidc names an audience
// the API server accepts (apiAudiences), an issuer not in issuers or
// claims that do not compile, or nil when all is well. The
// receiver checks them too and answers 422 filter_invalid or
// fields_invalid, or 403 for the OIDC problems; this only tells the owner
// why.
func filterSummary(spec *agentsv1alpha1.WebhookEndpointSpec, issuers oidc.Issuers, apiAudiences []string) *status.Summary {
	if o := spec.OIDCOf(); o != nil {
		if oidc.IsAPIAudience(o.Audience, apiAudiences) {
			s := status.Stalled(agentsv1alpha1.ReasonOIDCAudienceInvalid,
				"spec.sender.oidc.audience "+o.Audience+" is one the Kubernetes API server accepts: a sender's token for it would also be an API credential, "+
					"and every Pod's default token of this namespace would call the endpoint. Every call is refused 403 until another audience is set "+
					"(the endpoint's URL is a good one)")
			return &s
		}
		if !issuers.Allows(o.Issuer) {
			s := status.Stalled(agentsv1alpha1.ReasonOIDCIssuerNotAllowed,
				"spec.sender.oidc.issuer "+o.Issuer+" is not among the issuers the receiver trusts (--oidc-issuers, chart value receiver.oidcIssuers). "+
					"Every call is refused 403 and the issuer is not contacted until an administrator lists it")
			return &s
		}
		if o.Claims != "" {
			if _, err := filter.CompileClaims(o.Claims); err != nil {
				s := status.Stalled(agentsv1alpha1.ReasonOIDCClaimsInvalid,
					"spec.sender.oidc.claims is not a valid expression: "+err.Error()+". Every call is refused 403 until it is fixed")
				return &s
			}
		}
	}
	if spec.Filter != "" {
		if _, err := filter.Compile(spec.Filter); err != nil {
			s := status.Stalled(agentsv1alpha1.ReasonFilterInvalid,
				"spec.filter is not a valid filter: "+err.Error()+". Calls answer 422 filter_invalid until it is fixed")
			return &s
		}
	}
	if len(spec.Fields) > 0 {
		if _, err := filter.CompileFields(spec.Fields); err != nil {
			s := status.Stalled(agentsv1alpha1.ReasonFieldsInvalid,
				"spec.fields are not valid: "+err.Error()+". Calls answer 422 fields_invalid until they are fixed")
			return &s
		}
	}
	return nil
}

// filterVerdicts keeps, per endpoint, the verdict on spec.filter of the
// generation it was compiled for: a filter is compiled once per generation,
// not at every reconcile.
type filterVerdicts struct {
	mu sync.Mutex
	m  map[types.NamespacedName]filterVerdict
}

type filterVerdict struct {
	generation int64
	problem    *status.Summary
}

// of returns the verdict on ep's filter and fields, compiling them if its
// generation has none yet; the fields are read around the cache, which
// keeps none (cached.SpecWithFields): the filter's verdict is then that
// of the spec read, at its generation.
func (f *filterVerdicts) of(ctx context.Context, reader client.Reader, ep *agentsv1alpha1.WebhookEndpoint, issuers oidc.Issuers, apiAudiences []string) (*status.Summary, error) {
	key := client.ObjectKeyFromObject(ep)
	f.mu.Lock()
	v, ok := f.m[key]
	f.mu.Unlock()
	if ok && v.generation >= ep.Generation {
		return v.problem, nil
	}
	spec, generation, err := cached.SpecWithFields(ctx, reader, ep)
	if err != nil {
		return nil, err
	}
	problem := filterSummary(spec, issuers, apiAudiences)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[types.NamespacedName]filterVerdict{}
	}
	f.m[key] = filterVerdict{generation: generation, problem: problem}
	return problem, nil
}

func (f *filterVerdicts) forget(endpoint types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, endpoint)
}

// reconcileFilter compiles spec.filter and spec.fields, once per
// generation. A filter that does not compile makes the endpoint Ready=False
// FilterInvalid, fields that do not FieldsInvalid (before anything but an
// ID problem), with a Warning event of that reason once per generation.
func (r *Reconciler) reconcileFilter(ctx context.Context, s *endpointScope) error {
	problem, err := r.filterVerdicts.of(ctx, r.APIReader, s.ep, r.OIDCIssuers, r.APIAudiences)
	if err != nil {
		return err
	}
	if s.filterProblem = problem; s.filterProblem == nil {
		return nil
	}
	ep, msg, reason := s.ep, s.filterProblem.Ready.Message, s.filterProblem.Ready.Reason
	if was := meta.FindStatusCondition(ep.Status.Conditions, agentsv1alpha1.ConditionReady); was != nil &&
		was.Reason == reason && was.ObservedGeneration == ep.Generation {
		return nil
	}
	s.afterStatusWritten(func() {
		// The event's reason is the condition's: FilterInvalid or FieldsInvalid.
		r.Recorder.Eventf(ep, nil, corev1.EventTypeWarning, reason, "Validate", "%s", msg)
	})
	return nil
}
