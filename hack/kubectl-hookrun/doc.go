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

// Command kubectl-hookrun is the kubectl plugin of hookrun: `kubectl hookrun
// show NAME` prints an endpoint's card (its URL and a sample curl that works
// as printed), and one command each lists endpoints and runs, shows and
// rotates the secret, pauses and resumes, sends a test call and redelivers a
// run; `kubectl hookrun ui` serves the cards as a web UI (package ui). It
// acts with the user's own credentials, as kubectl does.
//
// Its packages, each importing only those listed before it (and api/ of
// hookrun, and libraries):
//   - terminal: how it prints; every value a user or a sender controls
//     reaches the terminal escaped (terminaltest: hostile values for tests)
//   - senders: a call as an endpoint's sender makes it (pure)
//   - cli: what every command works with (Env: kubeconfig, client, streams,
//     clock, waits), refusals in words, usage errors, completion
//   - runs: the runs command, and runs as the other commands read them
//   - secrets: secret, rotate, add-secret
//   - endpoints: the endpoints list, the card of show, the phase in words
//   - send: test and redeliver, through the receive route
//   - pause: pause and resume
//   - ui: the web UI, which reaches the commands' code through its Plugin
//     interface (ui.go here implements it)
//
// This package wires them: the root command (main.go) and the ui command.
// release/ is a program of its own that packages the plugin for krew.
//
// Its source is under hack/ because the repository's top-level layout is
// fixed (DESIGN.md section 1); `make build` writes bin/kubectl-hookrun.
package main
