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

package main

import (
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Completion of endpoint and run names, from the API server with the
// user's credentials (`kubectl hookrun completion bash|zsh|fish`, and
// kubectl's own completion through the kubectl_complete-hookrun script).

func (e *env) completeEndpoints(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list := &agentsv1alpha1.WebhookEndpointList{}
	return e.completeNames(cmd, list, prefix, func() []string {
		names := make([]string, 0, len(list.Items))
		for _, ep := range list.Items {
			names = append(names, ep.Name)
		}
		return names
	})
}

func (e *env) completeRuns(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list := &agentsv1alpha1.AgentRunList{}
	return e.completeNames(cmd, list, prefix, func() []string {
		sortNewestFirst(list.Items)
		names := make([]string, 0, len(list.Items))
		for _, r := range list.Items {
			if r.Spec.Payload != nil {
				names = append(names, r.Name)
			}
		}
		return names
	})
}

func (e *env) completeNames(cmd *cobra.Command, list client.ObjectList, prefix string, names func() []string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ns, err := e.namespace()
	if err != nil || e.connect() != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	if err := e.client.List(cmd.Context(), list, client.InNamespace(ns)); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, n := range names() {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
