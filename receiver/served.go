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

package receiver

import (
	"errors"
	"net/http"
)

// servedCheckName names the check of the health probe port that tells
// whether this replica serves an endpoint ID: GET /readyz/endpoint?id=ID.
const servedCheckName = "endpoint"

// errNotServed: the replica's table holds no endpoint of that ID (unknown,
// not yet seen, or not served, as a conflicting ID).
var errNotServed = errors.New("this replica serves no endpoint of that ID")

// servesEndpoint answers /readyz/endpoint?id=ID: nil (200) when the receive
// route would look the endpoint up, an error (500) when it would answer as
// for an unknown ID. It asks without a call on the receive route, which
// would count as a refusal in the endpoint's history (a probe with a wrong
// secret was once the only way, and the first thing a newcomer saw on the
// card after make dev). Without id it is ready, so that the aggregate
// /readyz, which runs every check, is not held by it. Only the table is
// read: the ID says no more here than a call with a wrong secret tells
// anyone (403 or 404), and the health port is not the public one.
func (h *Handler) servesEndpoint(r *http.Request) error {
	id := r.URL.Query().Get("id")
	if id == "" {
		return nil
	}
	if h.table.Lookup(id) == nil {
		return errNotServed
	}
	return nil
}
