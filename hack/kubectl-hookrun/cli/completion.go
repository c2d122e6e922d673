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

package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Completion of endpoint and run names, from the API server with the
// user's credentials (`kubectl hookrun completion bash|zsh|fish`, and
// kubectl's own completion through the kubectl_complete-hookrun script).

// RegisterFlagCompletion completes the values of -n (namespaces the user
// may list) and --context (the kubeconfig's contexts).
func (e *Env) RegisterFlagCompletion(root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if e.Connect() != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		list := &corev1.NamespaceList{}
		if err := e.Client.List(cmd.Context(), list); err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names := make([]string, 0, len(list.Items))
		for _, ns := range list.Items {
			names = append(names, ns.Name)
		}
		return withPrefix(names, prefix), cobra.ShellCompDirectiveNoFileComp
	})
	_ = root.RegisterFlagCompletionFunc("context", func(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := e.Flags.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names := make([]string, 0, len(cfg.Contexts))
		for name := range cfg.Contexts {
			names = append(names, name)
		}
		slices.Sort(names)
		return withPrefix(names, prefix), cobra.ShellCompDirectiveNoFileComp
	})
}

func withPrefix(names []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

func (e *Env) CompleteEndpoints(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list := &agentsv1alpha1.WebhookEndpointList{}
	return e.CompleteNames(cmd, list, prefix, func() []string {
		names := make([]string, 0, len(list.Items))
		for _, ep := range list.Items {
			names = append(names, ep.Name)
		}
		return names
	})
}

func (e *Env) CompleteNames(cmd *cobra.Command, list client.ObjectList, prefix string, names func() []string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ns, err := e.Namespace()
	if err != nil || e.Connect() != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	if err := e.Client.List(cmd.Context(), list, client.InNamespace(ns)); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return withPrefix(names(), prefix), cobra.ShellCompDirectiveNoFileComp
}
