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

package devcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
)

// The samples of config/samples, applied as the developer, and how to call them.

// applySamples makes Developer an editor of the sample namespace (hookrun's
// roles aggregate into "edit") and applies config/samples as Developer, so
// the admission policy makes Developer the owner (in the owner-required
// mode the endpoints name Developer as their owner, as a creator must there).
func (c *Cluster) applySamples(ctx context.Context) error {
	ns := c.opts.SampleNamespace
	if err := client.IgnoreAlreadyExists(c.AdminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})); err != nil {
		return err
	}
	if err := client.IgnoreAlreadyExists(c.AdminClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "developer-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: Developer}},
	})); err != nil {
		return err
	}
	dev, err := c.env.AddUser(envtest.User{Name: Developer, Groups: []string{"hookrun-developers"}}, nil)
	if err != nil {
		return err
	}
	if err := c.writeKubeconfig("developer", dev.Config()); err != nil {
		return err
	}
	c.DeveloperKubeconfig = c.Kubeconfig("developer")
	devClient, err := client.New(dev.Config(), client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	c.logf("applying config/samples to namespace %s as %s", ns, Developer)
	// Aggregation into "edit" and the policies' view of the CRDs settle
	// asynchronously: retry until the samples apply.
	samples := filepath.Join(c.opts.Root, "config", "samples")
	err = c.waitFor(ctx, "config/samples to apply as "+Developer, func(ctx context.Context) (string, error) {
		apply := clusterinstall.ApplyIn
		if c.OwnerDefaulting == clusterinstall.OwnerDefaultingRequired {
			apply = func(ctx context.Context, c client.Client, ns string, paths ...string) error {
				return clusterinstall.ApplyInOwned(ctx, c, ns, Developer, paths...)
			}
		}
		err := apply(ctx, devClient, ns, samples)
		switch {
		case err == nil:
			return "", nil
		case apierrors.IsForbidden(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsNotFound(err):
			return "refused for now: " + err.Error(), nil
		default:
			return "", stopWaiting(err)
		}
	})
	if err != nil {
		return err
	}
	if err := c.pointAgentsAtDemoAgent(ctx, devClient, ns); err != nil {
		return err
	}
	return c.waitReady(ctx, ns)
}

// sampleAgentURL is where config/samples expects the demo agent.
const sampleAgentURL = "http://127.0.0.1:18090/"

// pointAgentsAtDemoAgent moves the sample Agents to the demo agent's address
// when it is not the one the samples name (the end-to-end suite picks a free port).
func (c *Cluster) pointAgentsAtDemoAgent(ctx context.Context, dev client.Client, ns string) error {
	url := "http://" + c.opts.AgentAddress + "/"
	if url == sampleAgentURL {
		return nil
	}
	agents := &agentsv1alpha1.AgentList{}
	if err := dev.List(ctx, agents, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range agents.Items {
		a := &agents.Items[i]
		if a.Spec.A2A.URL != sampleAgentURL {
			continue
		}
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.A2A.URL = url
		if err := dev.Patch(ctx, a, patch); err != nil {
			return fmt.Errorf("pointing Agent %s at the demo agent: %w", a.Name, err)
		}
	}
	return nil
}

// waitReady waits until every endpoint of ns is Ready, the receiver serves
// it, and its owner may trigger its Agent: the operator's Ready comes before
// the receiver's informer has the endpoint (a call in between gets 404), and
// before kube-controller-manager has aggregated hookrun's trigger verb into
// the edit role the samples' owner holds (a call in between gets 422
// owner_not_member). It waits on progress (waitFor) and, when it gives up,
// names each endpoint that is not there yet and why.
func (c *Cluster) waitReady(ctx context.Context, ns string) error {
	// An endpoint found usable is not probed again: a probe of an
	// unauthenticated endpoint spends one of its pre-parse rate limit.
	usable := map[string]bool{}
	return c.waitFor(ctx, "the sample endpoints of namespace "+ns+" to be Ready, served and triggerable", func(ctx context.Context) (string, error) {
		eps := &agentsv1alpha1.WebhookEndpointList{}
		if err := c.AdminClient.List(ctx, eps, client.InNamespace(ns)); err != nil {
			return "", fmt.Errorf("listing endpoints: %w", err)
		}
		if len(eps.Items) == 0 {
			return "no endpoints yet", nil
		}
		var missing []string
		for i := range eps.Items {
			ep := &eps.Items[i]
			if usable[ep.Name] {
				continue
			}
			if why := c.notUsable(ctx, ep); why != "" {
				missing = append(missing, ep.Name+": "+why)
				continue
			}
			usable[ep.Name] = true
		}
		return strings.Join(missing, "; "), nil
	})
}

// notUsable says why a call to ep would not start a run yet, or "".
func (c *Cluster) notUsable(ctx context.Context, ep *agentsv1alpha1.WebhookEndpoint) string {
	if r := meta.FindStatusCondition(ep.Status.Conditions, agentsv1alpha1.ConditionReady); r == nil || r.Status != metav1.ConditionTrue {
		if r == nil {
			return "no Ready condition yet"
		}
		return fmt.Sprintf("Ready=%s (%s: %s)", r.Status, r.Reason, r.Message)
	}
	if ep.Status.URL == "" {
		return "Ready but no URL in status"
	}
	if served, err := c.ReceiverServes(ctx, ep.Status.EndpointID); err != nil || !served {
		return fmt.Sprintf("not served by the receiver yet (its /readyz/endpoint check: served=%t, error %v)", served, err)
	}
	if member, err := c.ownerMayTrigger(ctx, ep); err != nil || !member {
		return fmt.Sprintf("owner %s may not trigger Agent %s yet (SubjectAccessReview: allowed=%t, error %v)",
			ep.Spec.Owner.UserName(), ep.Spec.AgentRef.Name, member, err)
	}
	return ""
}

// Endpoint is what a caller needs to call an endpoint.
type Endpoint struct {
	Namespace, Name, URL, Secret string
}

// EndpointFor reads an endpoint's URL and, if it has one, its generated secret.
func (c *Cluster) EndpointFor(ctx context.Context, ns, name string) (Endpoint, error) {
	ep := &agentsv1alpha1.WebhookEndpoint{}
	if err := c.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep); err != nil {
		return Endpoint{}, err
	}
	out := Endpoint{Namespace: ns, Name: name, URL: ep.Status.URL}
	if ep.Status.SecretHash == "" {
		return out, nil
	}
	secret := &corev1.Secret{}
	if err := c.AdminClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentsv1alpha1.GeneratedSecretName(name)}, secret); err != nil {
		return Endpoint{}, fmt.Errorf("reading the secret of endpoint %s: %w", name, err)
	}
	out.Secret = string(secret.Data[agentsv1alpha1.WebhookSecretKey])
	return out, nil
}
