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
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/hack/clusterinstall"
)

// The one way the operator's envtest suites start an API server: envtest's
// kube-apiserver and etcd (KUBEBUILDER_ASSETS) with hookrun's CRDs, and
// hookrun's access control installed as a cluster install has it.

// Scheme is a scheme with client-go's kinds and hookrun's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	err := errors.Join(clientgoscheme.AddToScheme(s), agentsv1alpha1.AddToScheme(s))
	if err != nil {
		panic(err) // static registrations: a programming error
	}
	return s
}

// Environment is an envtest environment with hookrun's CRDs (config/crd/bases),
// not started; flags are added to envtest's kube-apiserver flags.
func Environment(flags map[string]string) *envtest.Environment {
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(Root(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	for flag, value := range flags {
		env.ControlPlane.GetAPIServer().Configure().Append(flag, value)
	}
	return env
}

// Cluster is a started API server and what a suite talks to it with.
type Cluster struct {
	// Config is the API server's admin configuration.
	Config *rest.Config
	// Client reads and writes without a cache; Watch can also watch.
	Client client.Client
	Watch  client.WithWatch
	// OwnerDefaulting is the mode of the owner policies installed.
	OwnerDefaulting clusterinstall.OwnerDefaulting
	env             *envtest.Environment
}

// StartCluster starts Environment(flags), installs hookrun's RBAC, service
// accounts and admission policies in the mode the API server supports
// (hack/clusterinstall), and returns the cluster; Stop stops it.
func StartCluster(ctx context.Context, scheme *runtime.Scheme, flags map[string]string) (*Cluster, error) {
	env := Environment(flags)
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	c := &Cluster{Config: cfg, env: env}
	if err := c.connect(ctx, scheme); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return c, nil
}

func (c *Cluster) connect(ctx context.Context, scheme *runtime.Scheme) error {
	var err error
	if c.Client, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if c.Watch, err = client.NewWithWatch(c.Config, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if c.OwnerDefaulting, err = clusterinstall.DetectOwnerDefaulting(c.Client); err != nil {
		return err
	}
	return clusterinstall.InstallAccessControlIn(ctx, c.Client, Root(), c.OwnerDefaulting)
}

// Stop stops the API server and etcd.
func (c *Cluster) Stop() error { return c.env.Stop() }
