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

// Package secrets is the owner's work on an endpoint's secret: `kubectl
// hookrun secret` prints it (the plain value, read from its Secret, only
// once its hash is the one the receiver accepts), `rotate` replaces a
// generated one and `add-secret` gives one to an endpoint that allows
// unauthenticated calls; both wait for the operator and show the new secret
// once, with the warning to save it. Of serves the card's sample call and
// the calls that test and redeliver send.
//
// It imports api/ of hookrun and the plugin's cli and senders.
package secrets
