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
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/endpoints"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/pause"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/runs"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/secrets"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/send"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // refused, failed or timed out; the message says which
	exitUsage   = 2 // bad arguments or flags
	programName = "kubectl hookrun"
)

func main() {
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the plugin with args and returns its exit code. Everything it
// prints passes through a terminalWriter.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out, errOut := terminal.NewWriter(stdout), terminal.NewWriter(stderr)
	defer func() {
		_ = out.Flush()
		_ = errOut.Flush()
	}()
	cmd := newRootCommand(cli.NewEnv(out, errOut))
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(errOut, "error:", err)
	if errors.As(err, new(cli.UsageError)) || strings.HasPrefix(err.Error(), "unknown command") {
		return exitUsage
	}
	return exitFailed
}

func newRootCommand(e *cli.Env) *cobra.Command {
	root := &cobra.Command{
		Use: "kubectl-hookrun",
		Annotations: map[string]string{
			// Help and usage say "kubectl hookrun"; completion scripts
			// are for the binary's own name.
			cobra.CommandDisplayNameAnnotation: programName,
		},
		Short: "Work with hookrun's webhook endpoints and their runs",
		Long: `kubectl hookrun shows hookrun's webhook endpoints as cards (the URL, what the
sender must be configured with, a sample curl that works as printed, the recent
invocations) and does each owner's task in one command: show the secret, rotate
it, add one, pause, resume, send a test call, redeliver a run. "kubectl hookrun ui"
serves the same as a web page on this machine: the Invocations tab.

It uses your kubeconfig and your own rights, as kubectl does; docs/user-guide.md
lists which role each command needs.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if e.Timeout <= 0 {
				return cli.Usage(fmt.Errorf("--wait-timeout must be positive"))
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Usage(err) })
	e.Flags.AddFlags(root.PersistentFlags())
	e.RegisterFlagCompletion(root)
	root.PersistentFlags().DurationVar(&e.Timeout, "wait-timeout", time.Minute,
		"How long commands that wait (rotate, pause, resume, test, redeliver) wait for hookrun before giving up.")
	root.AddCommand(
		endpoints.NewListCommand(e),
		endpoints.NewShowCommand(e),
		secrets.NewShowCommand(e),
		secrets.NewRotateCommand(e),
		secrets.NewAddCommand(e),
		pause.NewCommand(e, true),
		pause.NewCommand(e, false),
		runs.NewCommand(e),
		send.NewTestCommand(e),
		send.NewRedeliverCommand(e),
		newUICommand(e),
	)
	return root
}
