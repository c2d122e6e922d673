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

package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// jsonRPC is the JSON-RPC binding: every call is posted to the agent's URL
// as a JSON-RPC 2.0 request, and answered with HTTP 200 and a JSON-RPC
// response, whose error or result is the call's.
type jsonRPC struct{}

func (jsonRPC) request(c *Client, cl *call) (string, string, any) {
	if c.Tenant != "" {
		cl.params["tenant"] = c.Tenant
	}
	return http.MethodPost, c.URL, rpcRequest{JSONRPC: "2.0", ID: c.ids.Add(1), Method: cl.name, Params: cl.params}
}

func (jsonRPC) result(cl *call, status int, body []byte) (json.RawMessage, error) {
	if status != http.StatusOK {
		return nil, statusError(cl.name, status, body)
	}
	var r rpcResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, &Error{Op: cl.name, Err: fmt.Errorf("the answer is not JSON-RPC: %w", err)}
	}
	if r.Error != nil {
		msg := Sanitize(r.Error.Message)
		if msg == "" {
			msg = "no message"
		}
		refused := r.Error.Code == rpcMethodNotFound || r.Error.Code == rpcVersionNotSupported
		return nil, &Error{Op: cl.name, RPCCode: r.Error.Code, VersionRefused: refused, Err: errors.New(msg)}
	}
	if len(r.Result) == 0 || string(r.Result) == "null" {
		return nil, &Error{Op: cl.name, Err: errors.New("the answer has no result")}
	}
	return r.Result, nil
}
