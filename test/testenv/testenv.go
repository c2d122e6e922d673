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

package testenv

import (
	"path/filepath"
	"runtime"
	"slices"

	"k8s.io/client-go/rest"
)

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// AsServiceAccount is cfg impersonating service account name of namespace
// ns, with the groups the API server gives service accounts.
func AsServiceAccount(cfg *rest.Config, ns, name string) *rest.Config {
	return AsUser(cfg, "system:serviceaccount:"+ns+":"+name, "system:serviceaccounts", "system:serviceaccounts:"+ns)
}

// AsUser is cfg impersonating user with groups (and system:authenticated,
// which the API server adds to every authenticated user).
func AsUser(cfg *rest.Config, user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(slices.Clone(groups), "system:authenticated")}
	return c
}
