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

package demoagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// Interface is one way to reach the agent: an A2A protocol binding and version.
type Interface int

const (
	// JSONRPC is A2A 1.0 over JSON-RPC, at the base URL.
	JSONRPC Interface = iota
	// HTTPJSON is A2A 1.0's HTTP+JSON binding, under {base}rest.
	HTTPJSON
	// JSONRPC03 is A2A 0.3 over JSON-RPC, at the base URL too: the
	// JSON-RPC method's name tells the versions apart.
	JSONRPC03
)

func (i Interface) String() string {
	switch i {
	case JSONRPC:
		return "JSON-RPC 1.0"
	case HTTPJSON:
		return "HTTP+JSON 1.0"
	case JSONRPC03:
		return "JSON-RPC 0.3"
	}
	return fmt.Sprintf("Interface(%d)", int(i))
}

// allInterfaces are the interfaces in the order the card lists them.
var allInterfaces = []Interface{JSONRPC, HTTPJSON, JSONRPC03}

// restPath is where the HTTP+JSON binding is served, below the base URL.
const restPath = "rest"

// endpoint is the interface's entry in the card, with base the agent's
// absolute URL ending in "/".
func (i Interface) endpoint(base string) *a2a.AgentInterface {
	switch i {
	case HTTPJSON:
		return a2a.NewAgentInterface(base+restPath, a2a.TransportProtocolHTTPJSON)
	case JSONRPC03:
		return &a2a.AgentInterface{URL: base, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version}
	default:
		return a2a.NewAgentInterface(base, a2a.TransportProtocolJSONRPC)
	}
}

// baseKey carries the agent's base URL, as the request asking for the card
// named it, to the card producer.
type baseKey struct{}

// card is the agent card listing the served interfaces at the base URL in ctx.
func (a *Agent) card(ctx context.Context) (*a2a.AgentCard, error) {
	base, ok := ctx.Value(baseKey{}).(string)
	if !ok {
		return nil, errors.New("demo agent: no base URL for the card (serve it through Agent.ServeHTTP)")
	}
	var ifaces []*a2a.AgentInterface
	for _, i := range allInterfaces {
		if a.serves[i] {
			ifaces = append(ifaces, i.endpoint(base))
		}
	}
	return &a2a.AgentCard{
		Name:                "hookrun demo agent",
		Description:         "A deterministic A2A agent for trying hookrun (make dev) and testing it.",
		Version:             "1.0.0",
		SupportedInterfaces: ifaces,
		Capabilities:        capabilities,
		DefaultInputModes:   []string{"text/plain", "application/octet-stream"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              []a2a.AgentSkill{skill},
	}, nil
}

// capabilities are none of the optional ones: hookrun sends, then polls.
var capabilities = a2a.AgentCapabilities{}

var skill = a2a.AgentSkill{
	ID:   "describe-payload",
	Name: "Describe a webhook payload",
	Description: "Answers with the size, content type and first line of the text between " +
		"<webhook-payload> tags, or of a file part. A first line of demo:fail fails the task, " +
		"demo:hang works until the task is canceled, demo:input asks for input.",
	Tags:     []string{"demo", "webhook"},
	Examples: []string{"Triage this.\n\n<webhook-payload>\n{\"action\":\"opened\"}\n</webhook-payload>"},
}
