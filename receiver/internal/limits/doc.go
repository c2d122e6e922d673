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

// Package limits is what bounds one tenant's cost to the others on a
// receiver replica: the sliding-window rate limits (each replica's own, or
// kept for all replicas in Redis or Valkey), the backlog cap of runs
// waiting to start per endpoint and per Agent, the budget of request
// bodies held at once with the shares of an endpoint and a namespace, and
// the turns of CEL evaluations. Each is safe for concurrent use and takes
// the time it is given; none answers a call itself.
//
// It imports only api/ and libraries.
package limits
