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

// Package endpoints shows webhook endpoints: `kubectl hookrun endpoints`
// lists them (agent, sender, phase and why, runs, URL), and `show` prints
// one's card: its URL, what the sender must be configured with, a sample
// curl that works as printed (SampleCurl, which the UI shows too), its
// payload and fields, conditions, run counts and recent invocations.
// PhaseOf is an endpoint's phase in words, as every command prints it.
//
// It imports api/ of hookrun and the plugin's cli, runs, secrets, senders
// and terminal.
package endpoints
