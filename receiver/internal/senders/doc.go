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

// Package senders is what the receiver knows of each sender type (DESIGN.md
// section 8): which header carries the credential, how a signature is
// verified (GitHub, HMAC, Standard Webhooks, Stripe, Slack), what a call
// says about itself (event type, delivery ID, a handshake, a CloudEvent's
// attributes), and the refusals of calls that are no delivery of their
// type. Everything here is a pure function of the endpoint's spec, the
// request's headers and body, and the time it is given.
//
// It imports only api/ and receiver/answer of hookrun.
package senders
