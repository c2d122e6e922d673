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

package store

import "time"

// The store's bounds.
const (
	// storeTimeout bounds storing a run and its payload; the writes do not
	// stop when the caller hangs up. With the undo of a run whose payload
	// failed (CleanupTimeout), it ends well within the operator's grace for
	// a missing payload (agentsv1alpha1.PayloadGrace): the operator never
	// fails or starts a run whose payload is still being written.
	storeTimeout = 15 * time.Second
	// CleanupTimeout bounds writes that must not depend on the caller.
	CleanupTimeout = 10 * time.Second
	// runNamePrefixLength is how much of the endpoint name starts a run name.
	runNamePrefixLength = 30
	// promptCacheEntries bounds the prompts and spec.fields a replica
	// keeps of the endpoints called last (PromptCache): at most 16 MiB of
	// 64 KiB prompts, and 32 MiB of fields (32 of 1,024 characters, up to
	// 4 bytes each).
	promptCacheEntries = 256
)
