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

package limits

import (
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// The bounds of the receiver's limits; the others are in the receiver's
// limits.go.
const (
	// maxBody is the largest body a call may send (1 MiB).
	maxBody = agentsv1alpha1.MaxPayloadBytes
	// endpointBodyShare: the calls of one endpoint hold at most
	// 1/endpointBodyShare of --max-inflight-body-bytes (never less than one
	// maxBody body); beyond it that endpoint's calls get 503.
	endpointBodyShare = 4
	// namespaceBodyShare: the calls of all endpoints of one namespace hold
	// at most 1/namespaceBodyShare of --max-inflight-body-bytes (never less
	// than one maxBody body); beyond it that namespace's calls get 503.
	namespaceBodyShare = 2
	// bodyReserve: a namespace holding more than one maxBody body
	// leaves 1/bodyReserve of --max-inflight-body-bytes free (at least one
	// largest body), for the namespaces holding less.
	bodyReserve = 4
	// Window is the length of both sliding windows.
	Window = time.Minute
	// backlogSelfCount is how long a replica counts a run it stored itself
	// towards the backlog cap before it relies on the operator's count
	// alone: longer than storing a run may take (store.storeTimeout +
	// store.CleanupTimeout) plus the operator's batching of counts.
	backlogSelfCount = time.Minute
)
