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

// Package sharedflags holds the flags the operator and the receiver share
// (Options): how each reaches the API server (--kubeconfig, --kube-api-qps,
// --kube-api-burst), where its controller-runtime manager serves /metrics,
// the probes and pprof, where its spans go (--otlp-endpoint) and which OIDC
// issuers senders may name (--oidc-issuers). main binds them for both
// subcommands; the role-specific flags stay in controllers.OperatorOptions
// and receiver.Options. It is a leaf package: it imports api/, libraries
// and the other leaf packages only.
package sharedflags
