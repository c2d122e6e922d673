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

package endpoints

import (
	"fmt"
	"io"
	"slices"
	"strings"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"

	"github.com/hookrun/hookrun/hack/kubectl-hookrun/terminal"
)

// An endpoint's spec.fields and spec.payload on its card: what its agent
// gets.

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
