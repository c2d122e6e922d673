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

// Package operatortest starts what a controller package's envtest suite
// runs: a manager as the operator runs it (its service account, client and
// cache options, field indexes) with only that package's controllers.
// Only test files import it.
package operatortest

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hookrun/hookrun/controllers/internal/cached"
	"github.com/hookrun/hookrun/hack/clusterinstall"
	"github.com/hookrun/hookrun/test/testenv"
)

// StartManager starts a manager on cfg as the operator's service account,
// with the operator's client and cache options and field indexes, and the
// controllers setup registers; it returns a function that stops it and
// waits until it has stopped.
func StartManager(cfg *rest.Config, scheme *runtime.Scheme, setup func(context.Context, ctrl.Manager) error) func() {
	asOperator := testenv.AsServiceAccount(cfg, clusterinstall.Namespace, clusterinstall.OperatorServiceAccount)
	return testenv.StartManager(asOperator, ctrl.Options{
		Scheme: scheme,
		Client: client.Options{Cache: cached.ClientOptions()},
		Cache:  cached.Options(clusterinstall.Namespace),
	}, func(ctx context.Context, mgr ctrl.Manager) error {
		if err := cached.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		return setup(ctx, mgr)
	})
}
