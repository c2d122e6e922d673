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

// Package a2a is hookrun's small A2A client. It speaks protocol 0.3
// (message/send, tasks/get, tasks/cancel over JSON-RPC) and 1.0 (SendMessage,
// GetTask, CancelTask with header A2A-Version: 1.0) over either of 1.0's
// bindings, JSON-RPC or HTTP+JSON, and reads agent cards to find which one an
// agent speaks. It covers what the run dispatcher needs: send one message
// without blocking, follow its task, and cancel it. Errors say whether a retry
// may help, whether the agent refused the version, and whether any answer
// came at all.
package a2a
