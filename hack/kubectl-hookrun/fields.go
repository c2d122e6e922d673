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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// An endpoint's spec.fields and spec.payload, on its card and in what test
// and send print of a call: what its agent gets.

// cardField is one of spec.fields on the card.
type cardField struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// payloadOnCard is what the endpoint's runs wrap (Body or Fields), and its
// fields in byte order of their names.
func payloadOnCard(spec *agentsv1alpha1.WebhookEndpointSpec) (agentsv1alpha1.PayloadMode, []cardField) {
	mode := spec.Payload
	if mode == "" {
		mode = agentsv1alpha1.PayloadBody
	}
	var fields []cardField
	for name, expr := range spec.Fields {
		fields = append(fields, cardField{Name: name, Expression: string(expr)})
	}
	slices.SortFunc(fields, func(a, b cardField) int { return strings.Compare(a.Name, b.Name) })
	return mode, fields
}

// printPayload prints the card's Payload line and the fields under it.
func (c *card) printPayload(w io.Writer) {
	switch {
	case c.Payload == agentsv1alpha1.PayloadFields:
		fmt.Fprintf(w, "Payload:\tthe fields as one JSON object, in place of the body\n")
	case len(c.Fields) > 0:
		fmt.Fprintf(w, "Payload:\tthe body, and the fields in the message's metadata\n")
	default:
		fmt.Fprintf(w, "Payload:\tthe body\n")
	}
	for _, f := range c.Fields {
		fmt.Fprintf(w, "\t  %s = %s\n", terminal.PrintableLine(f.Name), terminal.OneLine(f.Expression, 160))
	}
}

// runFields are the fields the receiver stored with a run (in its payload
// Secret), and the names of those that failed.
type runFields struct {
	Fields json.RawMessage `json:"fields"`
	Errors []string        `json:"fieldErrors"`
}

// fieldsOf reads the fields of the run named runID from its payload Secret.
func fieldsOf(e *cli.Env, ctx context.Context, ns, runID string) (*runFields, error) {
	s := &corev1.Secret{}
	key := client.ObjectKey{Namespace: ns, Name: runID}
	if err := e.Client.Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the run's payload Secret %s is gone", key)
		}
		return nil, cli.Refused(err, fmt.Sprintf("read Secret %s, the run's payload, to show its fields", key), cli.RoleSecrets)
	}
	f := &runFields{Fields: s.Data[agentsv1alpha1.PayloadFieldsKey], Errors: []string{}}
	if !json.Valid(f.Fields) {
		return nil, fmt.Errorf("the payload Secret %s holds no fields", key)
	}
	if names := s.Data[agentsv1alpha1.PayloadFieldErrorsKey]; names != nil {
		if err := json.Unmarshal(names, &f.Errors); err != nil {
			return nil, fmt.Errorf("the payload Secret %s: %s: %w", key, agentsv1alpha1.PayloadFieldErrorsKey, err)
		}
	}
	return f, nil
}

// printFields prints the fields of a call, as the agent gets them.
func printFields(out io.Writer, mode agentsv1alpha1.PayloadMode, f *runFields) {
	if mode == agentsv1alpha1.PayloadFields {
		fmt.Fprintln(out, "The agent gets these fields in place of the body (and in the message's metadata):")
	} else {
		fmt.Fprintln(out, "The agent gets the body, and these fields in the message's metadata:")
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, f.Fields, "  ", "  "); err != nil {
		indented.Write(f.Fields)
	}
	fmt.Fprintln(out, "  "+terminal.Printable(indented.String()))
	if len(f.Errors) > 0 {
		fmt.Fprintf(out, "Fields that failed (null above): %s\n", terminal.PrintableLine(strings.Join(f.Errors, ", ")))
	}
}
