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

package filter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
)

// spec.fields: named CEL expressions over the filter's variables, evaluated
// once when a call is accepted; their values go to the agent instead of, or
// beside, the body.

const (
	// MaxFields is the most fields an endpoint may name.
	MaxFields = 32
	// MaxFieldLength is the most characters a field's expression may have.
	MaxFieldLength = 1024
	// MaxFieldBytes is the most bytes a field's value may take as JSON: a
	// larger one is null, and its name is in the errors.
	MaxFieldBytes = 4 << 10
)

// fieldName is what a field's name must match: an identifier, at most 63
// characters.
var fieldName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,62}$`)

// Fields is an endpoint's spec.fields, compiled.
type Fields struct {
	// names in byte order, and the program of each.
	names []string
	progs []cel.Program
}

// CompileFields checks spec.fields: at most MaxFields names, each an
// identifier, each expression of MaxFieldLength characters at most that
// compiles as a filter does (the same variables and patterns, of any type),
// and all of them together within CostLimit: the fields of one call cost
// at most what its filter may. The error names the first field that fails,
// in byte order, for the endpoint's Ready condition.
func CompileFields[E ~string](fields map[string]E) (*Fields, error) {
	if len(fields) > MaxFields {
		return nil, fmt.Errorf("%d fields, more than %d", len(fields), MaxFields)
	}
	f := &Fields{names: make([]string, 0, len(fields))}
	for name := range fields {
		f.names = append(f.names, name)
	}
	slices.Sort(f.names)
	var total uint64
	for _, name := range f.names {
		if !fieldName.MatchString(name) {
			return nil, fmt.Errorf("field name %q is not an identifier of at most 63 characters (letters, digits, _)", cut(name, 80))
		}
		ast, err := check(env, string(fields[name]), MaxFieldLength)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		cost, err := estimate(env, ast)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		if total += cost; total > CostLimit || cost > CostLimit {
			return nil, fmt.Errorf("the fields up to %s may cost %s units on a large call, more than the limit of %d for all of them: "+
				"avoid comprehensions over rawBody, nested comprehensions and repeated scans of large values", name, costString(max(total, cost)), CostLimit)
		}
		prg, err := program(env, ast)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		f.progs = append(f.progs, prg)
	}
	return f, nil
}

// Names are the fields' names, in byte order.
func (f *Fields) Names() []string { return f.names }

// Values are the fields of one call.
type Values struct {
	// Object is the fields as one JSON object (EncodeJSON's form), a
	// field that failed null.
	Object []byte
	// Errors are the names of the fields that failed, in byte order, and
	// FirstError the first one's name and error.
	Errors     []string
	FirstError string
	// TimedOut: the evaluation was stopped by EvalTimeout (a machine too
	// busy to decide it), not by anything of the call: the fields are not
	// what they would be, and the call is answered 503.
	TimedOut bool
}

// Eval evaluates every field on call, as one evaluation: the body is parsed
// once, and the fields together may take EvalTimeout and allocate 4 times
// the body, as one filter may. A field whose expression fails, whose
// value is not JSON, or whose JSON exceeds MaxFieldBytes is null, and its
// name is in Errors; once the evaluation is stopped, so is every field
// after.
func (f *Fields) Eval(ctx context.Context, call Call) Values {
	ev := startEvaluation(ctx, &call)
	defer ev.end()
	out := Values{Object: append(make([]byte, 0, 256), '{')}
	for i, name := range f.names {
		if i > 0 {
			out.Object = append(out.Object, ',')
		}
		out.Object, _ = appendString(out.Object, name, math.MaxInt) // an identifier
		out.Object = append(out.Object, ':')
		// cel-go looks at the deadline only within comprehensions: once
		// it has passed, no field is evaluated any more.
		err := context.Cause(ev.ctx)
		var v ref.Val
		if err == nil {
			v, err = ev.eval(f.progs[i])
		}
		if err == nil {
			start := len(out.Object)
			if out.Object, err = appendJSON(out.Object, v, start+MaxFieldBytes); err != nil || ev.act.budget.over {
				out.Object = out.Object[:start]
			}
		}
		if err != nil || ev.act.budget.over {
			out.Object = append(out.Object, "null"...)
			out.Errors = append(out.Errors, name)
			if err == nil {
				err = ErrTooLarge
			}
			if out.FirstError == "" {
				out.FirstError = name + ": " + err.Error()
			}
		}
	}
	out.Object = append(out.Object, '}')
	out.Object = slices.Clip(out.Object)
	out.TimedOut = errors.Is(context.Cause(ev.ctx), ErrTimeout)
	return out
}

// cut is s, cut to at most n bytes at a character's start, and " …" after
// it when anything was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " …"
}
