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

package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hookrun/hookrun/controllers/sharedflags"
	"github.com/hookrun/hookrun/receiver"
)

func runRoot(ctx context.Context, args ...string) (string, error) {
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

func TestVersion(t *testing.T) {
	out, err := runRoot(t.Context(), "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "hookrun dev (go") {
		t.Errorf("version printed %q", out)
	}
}

func TestFlagErrorsAreReported(t *testing.T) {
	cases := map[string][]string{
		"--public-base-url: is required":         {"operator"},
		"--rate-limit must be at least 1":        {"receiver", "--rate-limit=0"},
		`unknown flag: --no-such-flag`:           {"operator", "--no-such-flag"},
		"--payload-ttl must not be negative":     {"operator", "--public-base-url=http://x", "--payload-ttl=-1s"},
		"--unauthenticated-rate-limit must be a": {"receiver", "--unauthenticated-rate-limit=-3"},
	}
	for want, args := range cases {
		out, err := runRoot(t.Context(), args...)
		if err == nil || !strings.Contains(err.Error()+out, want) {
			t.Errorf("hookrun %s: err=%v out=%q, want %q", strings.Join(args, " "), err, out, want)
		}
	}
}

// TestSharedFlags: the operator and the receiver each take the flags of
// sharedflags.Options once, with its defaults, and share no other flag but
// --namespace (the receiver's namespace to both, explained in each one's
// terms): a flag both need belongs in sharedflags.Options.
func TestSharedFlags(t *testing.T) {
	shared := pflag.NewFlagSet("shared", pflag.ContinueOnError)
	sharedflags.NewOptions().BindFlags(shared, "component", "")
	roles := map[string]*pflag.FlagSet{"operator": newOperatorCommand().Flags(), "receiver": newReceiverCommand().Flags()}
	for name, flags := range roles {
		shared.VisitAll(func(want *pflag.Flag) {
			got := flags.Lookup(want.Name)
			switch {
			case got == nil:
				t.Errorf("hookrun %s has no --%s", name, want.Name)
			case got.DefValue != want.DefValue || got.Value.Type() != want.Value.Type():
				t.Errorf("hookrun %s --%s: %s defaulting to %q, want %s defaulting to %q",
					name, want.Name, got.Value.Type(), got.DefValue, want.Value.Type(), want.DefValue)
			}
		})
	}
	roles["operator"].VisitAll(func(f *pflag.Flag) {
		if roles["receiver"].Lookup(f.Name) != nil && shared.Lookup(f.Name) == nil && f.Name != "namespace" {
			t.Errorf("--%s is declared by both the operator and the receiver, not in sharedflags.Options", f.Name)
		}
	})
}

// TestReceiverManagerWaitsForTheDrain: the receiver's manager gives its
// runnables the shutdown delay and the drain after SIGTERM, not
// controller-runtime's default of 30 s.
func TestReceiverManagerWaitsForTheDrain(t *testing.T) {
	r := receiverRole()
	fs := pflag.NewFlagSet("receiver", pflag.ContinueOnError)
	r.options.BindFlags(fs)
	if err := fs.Parse([]string{"--shutdown-delay=20s"}); err != nil {
		t.Fatal(err)
	}
	var o ctrl.Options
	r.configure(&o)
	if o.GracefulShutdownTimeout == nil || *o.GracefulShutdownTimeout <= 20*time.Second+receiver.ShutdownTimeout {
		t.Errorf("the receiver's manager waits %v for its runnables to stop, want more than the shutdown delay (20s) and the drain (%s)",
			o.GracefulShutdownTimeout, receiver.ShutdownTimeout)
	}
}

// TestSubcommandsServeProbes starts `hookrun operator` and `hookrun receiver`
// against a real API server and waits for their /readyz, proving the flags
// of DESIGN.md section 6 reach a working controller-runtime manager.
func TestSubcommandsServeProbes(t *testing.T) {
	kubeconfig, _ := startAPIServer(t)

	for _, sub := range [][]string{
		{"operator", "--public-base-url=http://127.0.0.1:8443"},
		{"receiver", "--listen-address=127.0.0.1:0", "--namespace=default"},
	} {
		t.Run(sub[0], func(t *testing.T) {
			probe, metrics := freeAddress(t), freeAddress(t)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := runRoot(ctx, append(sub, "--kubeconfig="+kubeconfig, "--metrics-bind-address="+metrics, "--health-probe-bind-address="+probe)...)
				done <- err
			}()
			waitReady(t, "http://"+probe+"/readyz", done)
			buildInfo := `hookrun_build_info{goversion="` + goruntime.Version() + `",version="dev"} 1`
			if body := get(t, "http://"+metrics+"/metrics"); !strings.Contains(body, buildInfo+"\n") {
				t.Errorf("hookrun %s's /metrics has no %s:\n%s", sub[0], buildInfo, body)
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("hookrun %s returned %v after its context was canceled", sub[0], err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("hookrun %s did not stop within 30s of cancellation", sub[0])
			}
		})
	}
}

// startAPIServer starts envtest's API server with hookrun's CRDs until the
// test ends and returns a system:masters kubeconfig file and client.
func startAPIServer(t *testing.T) (string, client.Client) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(user.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig, c
}

// get is the body of a GET of url.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func waitReady(t *testing.T, url string, done <-chan error) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(30 * time.Second)
	for {
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-done:
			t.Fatalf("command exited before it was ready: %v", err)
		case <-timeout:
			t.Fatalf("%s was not ready within 30s", url)
		case <-tick.C:
		}
	}
}
