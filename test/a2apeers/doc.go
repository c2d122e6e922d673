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

// Package a2apeers serves A2A agents built with the official SDKs, for
// tests: V1JSONRPC and V1HTTPJSON (a2a-go/v2, A2A 1.0, each serving only its
// binding), V03 (a2a-go v0.3, A2A 0.3 over JSON-RPC at its URL, the card's
// url naming host and port: what Google ADK's to_a2a serves) and Kagent
// (a2a-go/v2, JSON-RPC 1.0 under kagent's /api/a2a/{namespace}/{name}/).
// Each publishes its own agent card, at /.well-known/agent-card.json or,
// for Kagent, under its path, and records what it was sent (headers,
// messages) for the test to check.
//
// Every peer runs the same echo agent, steered by the first word of the
// payload's first line (the payload is the text between "<webhook-payload>\n"
// and "\n</webhook-payload>", or the whole text when there is no wrapper):
//
//	fail   the task fails, its status message FailText
//	hang   the task stays working until canceled
//	input  the task ends input-required, its status message InputText
//	slow   the task works SlowWork, then completes as "other" does; Overlap
//	       tells the most slow tasks at work at once, of one context and in all
//	other  the task completes with one artifact, "echo: <first line>"
//
// A test can turn a running peer's calls away before its SDK sees them
// (controls.go): TurnAway answers the next calls with a status and
// Retry-After, Stall answers 503 after a wait, RefuseCalls answers 400 from
// then on; Tarpit makes a peer that answers nothing and counts what it holds.
// StrictWire makes a 1.0 JSON-RPC peer refuse a request that strays from the
// 1.0 specification's wire where the SDK would let it pass. Each request is
// recorded with its body, and each message with the header of its call.
//
// A send that does not block (1.0 returnImmediately, 0.3 blocking=false)
// is answered with the submitted task, and the task moves on only once
// that answer is made: the client must poll.
//
// These are the one A2A fake of hookrun's tests. The demo agent
// (hack/demo-agent) is not one of them: it is a program that `make dev`
// and the release ship, serving every interface at one URL, and hack/
// never imports test/.
//
// Only tests import this package.
package a2apeers
