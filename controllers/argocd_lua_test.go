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

package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/test/testenv"
)

// The Argo CD health check (charts/hookrun/argocd) run as Argo CD runs a
// script from argocd-cm: gopher-lua without the standard libraries but
// base, package and table, the object converted to a Lua table as Argo CD's
// util/lua decodeValue does, one second to finish. health_test.go runs it
// against objects read from the API server; the tests here cover what the
// operator cannot be made to show there.

// argoCDKinds are the kinds the health check is installed for.
var argoCDKinds = []string{"Agent", "WebhookEndpoint", "AgentThread", "AgentRun"}

// argoCDHealthScripts reads the argocd-cm patch users apply and returns its
// health script per kind.
func argoCDHealthScripts() (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(testenv.Root(), "charts", "hookrun", "argocd", "argocd-cm-patch.yaml"))
	if err != nil {
		return nil, err
	}
	var patch struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(b, &patch); err != nil {
		return nil, err
	}
	scripts := map[string]string{}
	for _, kind := range argoCDKinds {
		key := "resource.customizations.health." + agentsv1alpha1.GroupVersion.Group + "_" + kind
		if patch.Data[key] == "" {
			return nil, fmt.Errorf("argocd-cm-patch.yaml has no %s", key)
		}
		scripts[kind] = patch.Data[key]
	}
	return scripts, nil
}

// argoCDHealth runs script on obj as Argo CD does and returns the health
// status and message it gives. A status Argo CD does not know is Unknown,
// as in Argo CD.
func argoCDHealth(obj *unstructured.Unstructured, script string) (status, message string, err error) {
	l, err := argoCDRun(obj, script)
	if err != nil {
		return "", "", err
	}
	defer l.Close()
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("the script returned %s, not a table", l.Get(-1).Type())
	}
	status, message = lua.LVAsString(ret.RawGetString("status")), lua.LVAsString(ret.RawGetString("message"))
	switch status {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
		return status, message, nil
	}
	return "Unknown", "Lua returned an invalid health status", nil
}

// argoCDRun runs script on obj as Argo CD runs a script from argocd-cm and
// returns the Lua state, its result on top: gopher-lua without the standard
// libraries but base, package and table, and of os only time and date (the
// "safe" os Argo CD gives scripts, its copy of gopher-lua's), the object
// converted to a Lua table as Argo CD's util/lua decodeValue does, one
// second to finish. The caller closes the state.
func argoCDRun(obj *unstructured.Unstructured, script string) (*lua.LState, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable}, {lua.OsLibName, lua.OpenOs},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			l.Close()
			return nil, err
		}
	}
	full, ok := l.GetGlobal(lua.OsLibName).(*lua.LTable)
	if !ok {
		l.Close()
		return nil, fmt.Errorf("gopher-lua opened no os table")
	}
	safe := l.NewTable()
	for _, name := range []string{"time", "date"} {
		safe.RawSetString(name, full.RawGetString(name))
	}
	l.SetGlobal(lua.OsLibName, safe)
	l.PreloadModule(lua.OsLibName, func(l *lua.LState) int { l.Push(safe); return 1 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, obj.Object))
	err := l.DoString(script)
	cancel()
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// luaValue converts a value of an unstructured object as Argo CD's
// decodeValue does (numbers of every Go type to Lua numbers, maps to
// tables keyed by string, slices to array tables).
func luaValue(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(luaValue(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetH(lua.LString(k), luaValue(l, item))
		}
		return t
	}
	return lua.LNil
}

// TestArgoCDPatchHoldsHealthScript: every kind's entry in the argocd-cm
// patch is health.lua, the script shipped for other ways of installing it.
func TestArgoCDPatchHoldsHealthScript(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(testenv.Root(), "charts", "hookrun", "argocd", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := argoCDHealthScripts()
	if err != nil {
		t.Fatal(err)
	}
	for kind, got := range scripts {
		if got != string(want) {
			t.Errorf("the argocd-cm patch's script for %s differs from health.lua", kind)
		}
	}
}

// TestArgoCDHealthOfStatesNotShownInEnvtest runs the health check on
// objects in states the suite's operator is not made to show: a spec change
// not yet observed, a transient error, a refused agent URL, an operator of
// an older version without Reconciling and Stalled.
func TestArgoCDHealthOfStatesNotShownInEnvtest(t *testing.T) {
	scripts, err := argoCDHealthScripts()
	if err != nil {
		t.Fatal(err)
	}
	cond := func(t, s, reason string) map[string]any {
		return map[string]any{"type": t, "status": s, "reason": reason, "message": reason + " message"}
	}
	cases := []struct {
		name       string
		kind       string
		gen, obs   int64
		conditions []any
		want       string
	}{
		{"a spec change not yet observed", "WebhookEndpoint", 2, 1, []any{cond("Ready", "True", "Available")}, "Progressing"},
		{"a transient error", "WebhookEndpoint", 1, 1,
			[]any{cond("Ready", "False", "ReconcileFailed"), cond("Reconciling", "True", "ReconcileFailed")}, "Progressing"},
		{"a refused agent URL", "Agent", 1, 1,
			[]any{cond("Ready", "False", "AgentURLNotAllowed"), cond("Stalled", "True", "AgentURLNotAllowed")}, "Degraded"},
		{"Ready False without Reconciling or Stalled", "Agent", 1, 1, []any{cond("Ready", "False", "AgentArchived")}, "Progressing"},
		{"no conditions", "AgentThread", 1, 1, nil, "Progressing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": agentsv1alpha1.GroupVersion.String(), "kind": tc.kind,
				"metadata": map[string]any{"name": "x", "generation": tc.gen},
				"status":   map[string]any{"observedGeneration": tc.obs, "conditions": tc.conditions},
			}}
			got, msg, err := argoCDHealth(obj, scripts[tc.kind])
			if err != nil || got != tc.want || msg == "" {
				t.Errorf("health %s (%q), %v; want %s with a message", got, msg, err, tc.want)
			}
		})
	}
}
