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

package endpoints

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
	"github.com/hookrun/hookrun/controllers/filter"
	"github.com/hookrun/hookrun/receiver/internal/store"
)

// An endpoint's expressions (spec.filter, spec.fields,
// spec.sender.oidc.claims) are compiled when a call first needs them, and
// kept among the filterCacheEntries compiled last: a compiled program of a
// 4,096-character expression holds far more than its text, and every
// replica holds every endpoint, so compiling each at its table update made
// the cost of an endpoint's spec a multiple of its size on every replica.
// An expression changed since it was compiled is compiled again.

// filterCacheEntries bounds the compiled filters, fields and claims a
// replica keeps of the endpoints called last: an endpoint with two takes
// two entries.
const filterCacheEntries = 128

// Filter is an endpoint's spec.filter compiled: the program, or why it
// does not compile.
type Filter struct {
	expr    string
	Program *filter.Program
	Err     error
}

// Claims is an endpoint's spec.sender.oidc.claims compiled.
type Claims struct {
	expr    string
	Program *filter.Claims
	Err     error
}

// Fields is an endpoint's spec.fields compiled at Generation, or why they
// do not compile, and its spec.payload at that generation.
type Fields struct {
	Generation int64
	Compiled   *filter.Fields
	Err        error
	Payload    agentsv1alpha1.PayloadMode
}

// fieldsKey and claimsKey are the keys of an endpoint's compiled fields and
// claims among its compiled filter (keyed by the UID itself).
type (
	fieldsKey types.UID
	claimsKey types.UID
)

// FilterOf returns e's filter compiled, nil without one.
func (t *Table) FilterOf(e *Endpoint) *Filter {
	expr := e.Obj.Spec.Filter
	if expr == "" {
		return nil
	}
	if v, ok := t.filters.Get(e.Obj.UID); ok {
		if f := v.(*Filter); f.expr == expr { //nolint:errcheck // only *Filter is stored under a UID
			return f
		}
	}
	p, err := filter.Compile(expr)
	f := &Filter{expr: expr, Program: p, Err: err}
	t.filters.Add(e.Obj.UID, f)
	return f
}

// ClaimsOf returns e's claims compiled. Only a call whose token verified
// gets here.
func (t *Table) ClaimsOf(e *Endpoint) *Claims {
	expr := e.Sender.OIDC.Claims
	if v, ok := t.filters.Get(claimsKey(e.Obj.UID)); ok {
		if f := v.(*Claims); f.expr == expr { //nolint:errcheck // only *Claims is stored under a claimsKey
			return f
		}
	}
	p, err := filter.CompileClaims(expr)
	f := &Claims{expr: expr, Program: p, Err: err}
	t.filters.Add(claimsKey(e.Obj.UID), f)
	return f
}

// FieldsOf returns e's fields compiled at its generation or later. The
// informer keeps none (StripToUse): on a miss they are read with read (the
// store's read, which also gives the prompt) and compiled.
func (t *Table) FieldsOf(ctx context.Context, e *Endpoint, read func(context.Context, *agentsv1alpha1.WebhookEndpoint) (store.FieldsSpec, error)) (*Fields, error) {
	if v, ok := t.filters.Get(fieldsKey(e.Obj.UID)); ok {
		if f := v.(*Fields); f.Generation >= e.Obj.Generation { //nolint:errcheck // only *Fields is stored under a fieldsKey
			return f, nil
		}
	}
	spec, err := read(ctx, e.Obj)
	if err != nil {
		return nil, err
	}
	compiled, err := filter.CompileFields(spec.Fields)
	f := &Fields{Generation: spec.Generation, Compiled: compiled, Err: err, Payload: spec.Payload}
	t.filters.Add(fieldsKey(e.Obj.UID), f)
	return f, nil
}

// Forget drops a deleted endpoint's compiled filter, fields and claims.
func (t *Table) Forget(uid types.UID) {
	t.filters.Remove(uid)
	t.filters.Remove(fieldsKey(uid))
	t.filters.Remove(claimsKey(uid))
}

// Compiled tells which of the endpoint's expressions are compiled and kept
// now (for tests; it counts as a use of each).
func (t *Table) Compiled(uid types.UID) (filter, fields, claims bool) {
	_, filter = t.filters.Get(uid)
	_, fields = t.filters.Get(fieldsKey(uid))
	_, claims = t.filters.Get(claimsKey(uid))
	return filter, fields, claims
}
