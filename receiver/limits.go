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
	"time"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

// Bounds and timeouts of the receiver, in one place.
const (
	// MaxBodyBytes is the largest body accepted (1 MiB); larger answers 413.
	MaxBodyBytes = agentsv1alpha1.MaxPayloadBytes
	// MaxHeaderBytes bounds request headers; net/http answers 431 beyond it.
	MaxHeaderBytes = 32 << 10
	// ReadHeaderTimeout bounds how long a client may take to send its headers.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds reading a whole request, body included, from its
	// first byte.
	ReadTimeout = 30 * time.Second
	// BodyReadTimeout bounds reading a body once the checks before it let
	// the call in: a slow upload holds what arrived of it this long at most, however fast its headers
	// came. 1 MiB in 10 s is 100 KiB/s.
	BodyReadTimeout = 10 * time.Second
	// WriteTimeout bounds one request from the end of its headers to the end of the answer.
	WriteTimeout = 40 * time.Second
	// IdleTimeout closes keep-alive connections idle this long.
	IdleTimeout = 90 * time.Second
	// ShutdownTimeout is how long in-flight calls may finish after SIGTERM.
	ShutdownTimeout = 25 * time.Second
	// StoreRetryAfter is the Retry-After of a 503 when a run could not be stored.
	StoreRetryAfter = 5
	// BacklogRetryAfter is the Retry-After of a 429 backlog_full: about how
	// long a backlog takes to be counted again after runs start.
	BacklogRetryAfter = 30
	// MaxContentTypeLength is how much of Content-Type a run records.
	MaxContentTypeLength = 256
	// pauseRecordInterval is how long after recording a call skipped
	// because the owner is not a member further such calls are answered
	// without recording again (the operator pauses the endpoint for that
	// record, and the informer shows the pause well before).
	pauseRecordInterval = 10 * time.Second
)
