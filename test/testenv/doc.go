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

// Package testenv holds what only tests need: the root of the repository
// the test was compiled from, the one way envtest suites start an API
// server with hookrun installed (StartCluster, cluster.go), and clients
// that act as hookrun's service accounts or as people, through
// impersonation; runs stored as the receiver stores them, and the agents
// of test/a2apeers they reach (runs.go). Installing hookrun's manifests is
// hack/clusterinstall, which hack/ uses too; hack/ never imports test/.
package testenv
