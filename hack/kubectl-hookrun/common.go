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
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The roles docs/access.md describes, named in refusals.
const (
	roleRead    = "read access to hookrun's kinds (the hookrun-view role; the built-in view, edit and admin roles include it)"
	roleMember  = "the hookrun-agent-user role (included in the built-in edit and admin roles), and to be the endpoint's owner"
	roleSecrets = "get on secrets in the namespace (the built-in edit and admin roles have it; hookrun's own roles do not)"
	roleTokens  = "create on serviceaccounts/token in the namespace (the built-in edit and admin roles have it)"
)

// rbacRefusal matches the API server's words for an RBAC refusal
// (`User "bob" cannot get resource "secrets" ...`); an admission policy's
// refusal says "denied request" instead.
var rbacRefusal = regexp.MustCompile(`cannot \S+ resource `)

// refused explains an error of the API server: what the user tried, and for
// an RBAC refusal, which role would allow it. Admission policy refusals
// (only the owner may...) say it themselves.
func refused(err error, action, role string) error {
	if apierrors.IsForbidden(err) && role != "" && rbacRefusal.MatchString(err.Error()) {
		return fmt.Errorf("you may not %s: it needs %s.\nThe API server said: %w", action, role, err)
	}
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
		return fmt.Errorf("you may not %s.\nThe API server said: %w", action, err)
	}
	return fmt.Errorf("%s: %w", action, err)
}

// endpoint reads the endpoint name in ns.
func (e *env) endpoint(ctx context.Context, ns, name string) (*agentsv1alpha1.WebhookEndpoint, error) {
	if err := e.connect(); err != nil {
		return nil, err
	}
	ep := &agentsv1alpha1.WebhookEndpoint{}
	err := e.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("webhook endpoint %q not found in namespace %s (kubectl hookrun endpoints lists them)", name, ns)
	}
	if err != nil {
		return nil, refused(err, fmt.Sprintf("read webhook endpoint %s/%s", ns, name), roleRead)
	}
	return ep, nil
}

// whoAmI asks the API server who the user is.
func (e *env) whoAmI(ctx context.Context) (string, error) {
	if err := e.connect(); err != nil {
		return "", err
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := e.client.Create(ctx, review); err != nil {
		return "", fmt.Errorf("asking the API server who you are: %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

// outputFlag adds -o/--output for commands whose output is data.
func outputFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", "", "Output format: json or yaml (default: text for people).")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
}

func checkOutput(format string) error {
	switch format {
	case "", "json", "yaml":
		return nil
	}
	return usageError{fmt.Errorf("--output must be json or yaml, not %q", format)}
}

// printData prints v as JSON or YAML. Objects are printed without their
// managedFields, as kubectl does.
func printData(out io.Writer, format string, v any) error {
	hideManagedFields(v)
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		y, err := yaml.JSONToYAML(b)
		if err == nil && printable(string(y)) == string(y) {
			_, err = out.Write(y)
			return err
		}
		// YAML's plain scalars cannot escape, and its emitter writes some
		// of these runes as they are (or fails on C1 controls): the same
		// data in JSON's form, which YAML reads, with them escaped.
		_, err = fmt.Fprintf(out, "%s\n", escapedJSON(b, true))
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", escapedJSON(b, false))
	return err
}

// escapedJSON is the JSON text b with every rune that is not printable
// text (escaped's) written as a \u escape, so it reaches a terminal inert
// and still decodes to the same value (encoding/json escapes the C0
// controls itself, not C1 or bidirectional controls). Outside strings JSON
// text holds only ASCII punctuation, spaces and newlines, which stay. A rune
// beyond U+FFFF becomes a UTF-16 surrogate pair, or for YAML \U........
func escapedJSON(b []byte, forYAML bool) []byte {
	s := string(b)
	keep := func(r rune) bool { return r == '\n' }
	if escaped(s, keep) == s {
		return b
	}
	var out strings.Builder
	for _, r := range s {
		switch {
		case r != utf8.RuneError && (unicode.IsPrint(r) || keep(r)):
			out.WriteRune(r)
		case r > 0xffff && forYAML:
			fmt.Fprintf(&out, "\\U%08x", r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&out, "\\u%04x", r)
		}
	}
	return []byte(out.String())
}

func hideManagedFields(v any) {
	if list, ok := v.(client.ObjectList); ok {
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			hideManagedFields(o)
			return nil
		})
	}
	if o, ok := v.(client.Object); ok {
		o.SetManagedFields(nil)
	}
}

// age is how long ago t was, as kubectl prints ages ("-" for never).
func age(t *metav1.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t.Time)) + " ago"
}

// Terminal output (DESIGN section 10): every value a user or a sender
// controls (names, owner, prefix, messages, outputs, answers, the API
// server's errors that quote them) reaches the terminal through escaped.
// Each command escapes the values it prints (printable, printableLine, and
// the -o json|yaml and curl forms that stay valid), and the plugin's output
// streams pass everything through printable once more (terminalWriter), so
// a value a command forgot is still inert.

// escaped is s with every rune that is not printable text written as a Go
// escape (\u001b, \u202e, \U000e0041); an invalid byte becomes \ufffd.
// Printable text is unicode.IsPrint's, as strconv.Quote's: letters, marks,
// numbers, punctuation, symbols and the ASCII space, in any script. So the
// C0 and C1 controls (ESC, BEL, CSI...), DEL, the bidirectional controls
// that reorder what a reader sees, zero-width characters and line
// separators are escaped, and ordinary UTF-8 text is left readable. keep
// names runes left as they are.
func escaped(s string, keep func(rune) bool) string {
	unsafe := func(r rune) bool { return r == utf8.RuneError || !unicode.IsPrint(r) && (keep == nil || !keep(r)) }
	if !strings.ContainsFunc(s, unsafe) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unsafe(r):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, "\\U%08x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// printable is multi-line text (a run's message or output, an answer, an
// error) escaped for a terminal: newlines and tabs stay.
func printable(s string) string {
	return escaped(s, func(r rune) bool { return r == '\n' || r == '\t' })
}

// printableLine is a value printed on one line or in a table cell (a name,
// an owner, a URL, a reason) escaped for a terminal: newlines and tabs are
// escaped too, so a value cannot fake lines or columns.
func printableLine(s string) string {
	return escaped(s, nil)
}

// terminalWriter writes what passes through it as printable: the plugin's
// last line of defence for its standard output and error. A UTF-8 sequence
// cut between two writes is held until it is whole (or Flush).
type terminalWriter struct {
	w       io.Writer
	pending []byte
}

func (t *terminalWriter) Write(p []byte) (int, error) {
	buf := append(t.pending, p...)
	whole := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				whole = i
			}
			break
		}
	}
	t.pending = append([]byte(nil), buf[whole:]...)
	if _, err := io.WriteString(t.w, printable(string(buf[:whole]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back.
func (t *terminalWriter) Flush() error {
	rest := t.pending
	t.pending = nil
	_, err := io.WriteString(t.w, printable(string(rest)))
	return err
}

// onNamed is the RunE of a command about one named object in the
// namespace of -n (or the kubeconfig's): it checks -o (when the command has
// it) and the namespace, then runs do.
func (e *env) onNamed(format *string, do func(cmd *cobra.Command, ns, name string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if format != nil {
			if err := checkOutput(*format); err != nil {
				return err
			}
		}
		ns, err := e.namespace()
		if err != nil {
			return err
		}
		return do(cmd, ns, args[0])
	}
}

// exactlyOne is cobra.ExactArgs(1) with a usage error naming what is missing.
func exactlyOne(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError{fmt.Errorf("expected one argument, the %s; got %d", what, len(args))}
		}
		return nil
	}
}
