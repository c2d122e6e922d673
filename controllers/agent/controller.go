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

package agent

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/a2a"
	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/controllers/internal/secretref"
	"github.com/hookrun/hookrun/controllers/internal/status"
)

// Reconciler reports whether an Agent can take runs, and keeps its
// cleanup finalizer: deleting the Agent deletes its endpoints and threads
// (cleanup.go).
type Reconciler struct {
	client.Client
	// APIReader reads the bearer token and TLS Secrets around the cache
	// (their metadata, and their data only when labelled for hookrun), and
	// confirms that a deleted Agent's endpoints and threads are gone.
	APIReader client.Reader
	// AllowList is the operator's agent allow-list; nil allows every agent.
	AllowList *a2a.AllowList
	// ReadCard reads agent cards (card.go).
	ReadCard CardReader
	Clock    clock.PassiveClock

	// FollowAgent is told what the reconciler saw of each Agent once its
	// cleanup step is done, so the run metrics drop a deleted Agent's series
	// (run.FollowAgent); nil: nothing is told.
	FollowAgent func(*agentsv1alpha1.Agent)

	// Cards is shared with execution, which asks for cards to be read again
	// (CardRefreshes.Request).
	Cards *CardRefreshes
}

// authSecretState is what the reconciler found for spec.a2a.authSecretRef.
type authSecretState int

const (
	authSecretNotNeeded authSecretState = iota
	authSecretFound
	authSecretMissing
	authSecretKeyMissing
	authSecretNotReferable
)

// agentSummary is the Agent's Ready, Reconciling and Stalled; urlRefused:
// the operator's allow-list refuses the host of spec.a2a.url; card: what its
// agent card gave. A URL or token the operator cannot use is Stalled; an
// archived Agent is as asked: Ready (kstatus Current) with reason
// AgentArchived.
func agentSummary(agent *agentsv1alpha1.Agent, auth authSecretState, tlsBad *secretref.TLSSecretError, urlRefused bool, card cardState) status.Summary {
	ref := agent.Spec.A2A.AuthSecretRef
	switch {
	case urlRefused:
		return status.Stalled(agentsv1alpha1.ReasonAgentURLNotAllowed,
			fmt.Sprintf("The host of spec.a2a.url is not on the operator's agent allow-list (--agent-allowed-hosts, --agent-allowed-cidrs); runs fail unsent. Use an allowed URL or ask the cluster's operators to allow %s",
				a2a.Sanitize(hostOfURL(agent.Spec.A2A.URL))))
	case auth == authSecretMissing:
		return status.Stalled(agentsv1alpha1.ReasonAuthSecretNotFound,
			fmt.Sprintf("Secret %q named in spec.a2a.authSecretRef does not exist; runs cannot authenticate to the agent", ref.Name))
	case auth == authSecretKeyMissing:
		return status.Stalled(agentsv1alpha1.ReasonAuthSecretNotFound,
			fmt.Sprintf("Secret %q has no key %q (spec.a2a.authSecretRef.key); runs cannot authenticate to the agent", ref.Name, ref.Key))
	case auth == authSecretNotReferable:
		return status.Stalled(agentsv1alpha1.ReasonSecretNotReferable,
			secretref.NotReferableMessage("spec.a2a.authSecretRef", ref.Name)+"; runs fail until then")
	case tlsBad != nil:
		return status.Stalled(tlsBad.Reason, tlsBad.Error()+"; runs cannot reach the agent over TLS until then")
	case agent.Spec.Archived:
		return status.Current(agentsv1alpha1.ReasonAgentArchived,
			"Archived, as spec.archived asks: its endpoints answer 422 agent_unavailable until spec.archived is false")
	case card.problem != "" || agent.Status.A2A == nil:
		return cardSummary(card)
	default:
		return status.Current(agentsv1alpha1.ReasonAvailable, sendsTo(agent.Status.A2A))
	}
}

// sendsTo is the Ready message of an Agent that runs are sent to.
func sendsTo(st *agentsv1alpha1.A2AStatus) string {
	msg := fmt.Sprintf("Runs are sent to %s over A2A %s (%s)", st.URL, st.ProtocolVersion, st.ProtocolBinding)
	if st.CardReadAt != nil {
		msg += ", as the agent card lists"
	}
	return msg
}

// Reconcile sets the Agent's Ready, Reconciling and Stalled conditions.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	agent := &agentsv1alpha1.Agent{}
	if err := r.Get(ctx, req.NamespacedName, agent); err != nil {
		if apierrors.IsNotFound(err) {
			r.Cards.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if stop, res, err := r.reconcileCleanup(ctx, agent); stop || err != nil {
		return res, err
	}
	before := agent.DeepCopy()
	auth, err := r.authSecretState(ctx, agent)
	agentTLS, tlsBad, tlsErr := r.tlsState(ctx, agent)
	err = errors.Join(err, tlsErr)
	urlRefused := r.AllowList.Refuses(hostOfURL(agent.Spec.A2A.URL))
	card := cardState{}
	if tlsBad == nil && tlsErr == nil {
		// A card is not read without the TLS the Agent asks for; what was
		// read stays, and runs say why they fail.
		card = r.resolveA2A(ctx, agent, agentTLS, urlRefused, r.Clock.Now())
	}
	sum := agentSummary(agent, auth, tlsBad, urlRefused, card)
	if err != nil {
		sum = status.ReconcileFailed(err)
	} else {
		agent.Status.ObservedGeneration = agent.Generation
	}
	status.SetSummary(&agent.Status.Conditions, sum, agent.Generation)
	return ctrl.Result{RequeueAfter: card.next}, errors.Join(err, status.PatchIfChanged(ctx, r.Client, before, agent, &before.Status, &agent.Status))
}

// hostOfURL is the host of an agent URL (the API validates it as a URL).
func hostOfURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func (r *Reconciler) authSecretState(ctx context.Context, agent *agentsv1alpha1.Agent) (authSecretState, error) {
	ref := agent.Spec.A2A.AuthSecretRef
	if ref == nil {
		return authSecretNotNeeded, nil
	}
	secret, err := secretref.Get(ctx, r.APIReader, agent.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return authSecretMissing, nil
	case errors.Is(err, secretref.ErrNotReferable):
		return authSecretNotReferable, nil
	case err != nil:
		return authSecretNotNeeded, fmt.Errorf("reading Secret %s: %w", ref.Name, err)
	case len(secret.Data[ref.Key]) == 0:
		return authSecretKeyMissing, nil
	}
	return authSecretFound, nil
}

// tlsState reads and parses the Secrets of spec.a2a.tls: nil when the
// Agent has none; a *TLSSecretError (the second result) when one cannot be
// used; any other error is transient.
func (r *Reconciler) tlsState(ctx context.Context, agent *agentsv1alpha1.Agent) (*secretref.AgentTLS, *secretref.TLSSecretError, error) {
	t, err := secretref.ReadAgentTLS(ctx, r.APIReader, agent)
	if err == nil && t != nil {
		_, err = t.Config()
	}
	var bad *secretref.TLSSecretError
	switch {
	case errors.As(err, &bad):
		return nil, bad, nil
	case err != nil:
		return nil, nil, err
	}
	return t, nil, nil
}

// agentWorkers is how many Agents are reconciled at once.
const agentWorkers = 4

// SetupWithManager registers the reconciler; a change to a token or TLS
// Secret re-checks the Agents that use it, and the endpoints and threads its
// cleanup acts on start it too (watchDependents).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&agentsv1alpha1.Agent{}).
		Named("agent").
		// A card read holds a worker up to cardReadTimeout: one Agent whose
		// agent never answers must not hold every other Agent's reconcile.
		WithOptions(controller.Options{MaxConcurrentReconciles: agentWorkers}).
		Watches(&corev1.Secret{},
			handler.EnqueueRequestsFromMapFunc(cached.MapByIndex(r.Client, &agentsv1alpha1.AgentList{}, cached.IndexAgentSecrets)),
			builder.OnlyMetadata).
		WatchesRawSource(r.Cards.source())
	return r.watchDependents(b).Complete(r)
}
