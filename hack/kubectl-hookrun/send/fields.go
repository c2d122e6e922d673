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

package send

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/cli"
	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// The fields of a call (spec.fields), as test and redeliver print them:
// what its agent gets.

// runFields are the fields the receiver stored with a run (in its payload
// Secret), and the names of those that failed.
type runFields struct {
	Fields json.RawMessage `json:"fields"`
	Errors []string        `json:"fieldErrors"`
}

// fieldsOf reads the fields of the run named runID from its payload Secret.
func fieldsOf(ctx context.Context, e *cli.Env, ns, runID string) (*runFields, error) {
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
