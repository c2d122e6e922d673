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
	"fmt"

	"github.com/spf13/cobra"
)

// OnNamed is the RunE of a command about one named object in the
// namespace of -n (or the kubeconfig's): it checks -o (when the command has
// it) and the namespace, then runs do.
func (e *Env) OnNamed(format *string, do func(cmd *cobra.Command, ns, name string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if format != nil {
			if err := CheckOutput(*format); err != nil {
				return err
			}
		}
		ns, err := e.Namespace()
		if err != nil {
			return err
		}
		return do(cmd, ns, args[0])
	}
}

// ExactlyOne is cobra.ExactArgs(1) with a usage error naming what is missing.
func ExactlyOne(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return UsageError{fmt.Errorf("expected one argument, the %s; got %d", what, len(args))}
		}
		return nil
	}
}

// OutputFlag adds -o/--output for commands whose output is data.
func OutputFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", "", "Output format: json or yaml (default: text for people).")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
}

func CheckOutput(format string) error {
	switch format {
	case "", "json", "yaml":
		return nil
	}
	return UsageError{fmt.Errorf("--output must be json or yaml, not %q", format)}
}
