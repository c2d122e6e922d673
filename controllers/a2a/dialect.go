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
	"net/http"
)

// dialect is what one A2A protocol version changes on the wire: the names
// of the operations, the headers every request carries, how a send's
// parameters are encoded and how its result is wrapped. A Client picks its
// dialect once, from Version, and otherwise knows nothing of versions; how
// the calls travel is its binding's business (see binding).
//
// Tasks (the result of get and cancel) are read the same way in both: the
// wire shapes in wire.go accept either version's spelling.
type dialect interface {
	// methods names the operations (JSON-RPC's method names).
	methods() methods
	// setHeaders sets the headers the version requires on every request.
	setHeaders(h http.Header)
	// sendParams encodes msg as the params of a send that does not block
	// for the task's end (the body of an HTTP+JSON send).
	sendParams(msg Message) map[string]any
	// decodeSendResult reads a send's result: the task the agent created,
	// or, when it answered with a message, a completed task with that
	// message as output. Its errors are the cause only; the caller names
	// the method.
	decodeSendResult(raw json.RawMessage) (*Task, error)
}

// methods are a dialect's JSON-RPC method names.
type methods struct {
	send, get, cancel string
}

// of is the name of an operation.
func (m methods) of(kind opKind) string {
	switch kind {
	case opGet:
		return m.get
	case opCancel:
		return m.cancel
	}
	return m.send
}

// dialectFor is the dialect of version v. Anything but 1.0 speaks 0.3, as
// the client always has (the API allows only "0.3" and "1.0").
func dialectFor(v Version) dialect {
	if v == V10 {
		return dialectV10{}
	}
	return dialectV03{}
}
