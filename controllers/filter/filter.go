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

// Package filter compiles and evaluates an endpoint's spec.filter, a CEL
// expression that decides whether a call starts a run. The operator compiles
// it to report FilterInvalid; the receiver compiles it once per endpoint
// change and evaluates it for every call that passed the checks before it.
package filter

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
)

// The variables an expression sees.
const (
	// VarHeaders is the call's headers: lower-case name to its first value.
	VarHeaders = "headers"
	// VarEvent is the call's event type ("" when the sender type gives none).
	VarEvent = "event"
	// VarBody is the body parsed as JSON, or null when it is not JSON.
	VarBody = "body"
	// VarRawBody is the body as a string when it is valid UTF-8, else "".
	VarRawBody = "rawBody"
)

const (
	// MaxLength is the most characters an expression may have (the CRD's bound).
	MaxLength = 4096
	// CostLimit is the most CEL cost units an expression may take in its
	// worst case, as cel-go estimates it with every input at its largest
	// (MaxInputBytes): a comparison or a field selection costs about one
	// unit, a string operation about one unit per ten bytes it reads, and a
	// comprehension its body's cost once per element. An expression whose
	// estimate is higher does not compile: a comprehension within a
	// comprehension over the body, a scan of rawBody per element. Since the
	// inputs are bounded, the estimate bounds every evaluation, and no cost
	// is tracked while evaluating (cel-go's runtime cost tracking grows
	// quadratically with the elements a comprehension visits: minutes for a
	// 1 MiB body of small elements).
	CostLimit = 20_000_000
	// MaxInputBytes is the largest body, header block and header value the
	// cost estimate assumes (the receiver refuses bodies over 1 MiB).
	MaxInputBytes = 1 << 20
)

// env is the CEL environment of every filter: the standard library and the
// four variables.
var env = func() *cel.Env {
	e, err := cel.NewEnv(
		// Nesting is bounded well below cel-go's default (250), at which
		// compiling 500 characters of brackets took seconds.
		cel.ParserRecursionLimit(MaxNesting),
		cel.ParserExpressionSizeLimit(MaxLength),
		cel.Variable(VarHeaders, cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable(VarEvent, cel.StringType),
		cel.Variable(VarBody, cel.DynType),
		cel.Variable(VarRawBody, cel.StringType),
	)
	if err != nil {
		panic(err)
	}
	return e
}()

// Program is a compiled filter.
type Program struct {
	prg cel.Program
}

// Compile checks expr: it must parse, be of type bool, name only the four
// variables, and have a worst-case cost within CostLimit. The error says
// what is wrong, for the endpoint's Ready condition.
func Compile(expr string) (*Program, error) {
	if n := utf8.RuneCountInString(expr); n > MaxLength {
		return nil, fmt.Errorf("the expression has %d characters, more than %d", n, MaxLength)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, errors.New(firstIssue(iss.Err().Error()))
	}
	if !ast.OutputType().IsExactType(types.BoolType) {
		return nil, fmt.Errorf("the expression is of type %s, not bool", ast.OutputType())
	}
	est, err := env.EstimateCost(ast, sizeEstimator{})
	if err != nil {
		return nil, fmt.Errorf("estimating the cost: %w", err)
	}
	if est.Max > CostLimit {
		return nil, fmt.Errorf("the expression may cost up to %s units on a large call, more than the limit of %d: "+
			"avoid comprehensions over rawBody, nested comprehensions and repeated scans of large values", costString(est.Max), CostLimit)
	}
	prg, err := env.Program(ast)
	if err != nil {
		return nil, fmt.Errorf("building the program: %w", err)
	}
	return &Program{prg: prg}, nil
}

// MaxIssueBytes bounds what an error of Compile quotes of cel-go's report:
// an expression of 4096 characters can have a report of hundreds of KiB,
// which would not fit the Ready condition's message.
const MaxIssueBytes = 1024

// MaxNesting is the deepest nesting of an expression the parser takes.
const MaxNesting = 32

// firstIssue is the first issue of cel-go's report (an issue is a line
// "ERROR: ..." and the lines that show where), at most MaxIssueBytes.
func firstIssue(report string) string {
	report = strings.TrimSpace(report)
	if i := strings.Index(report[1:], "\nERROR: "); i >= 0 {
		report = report[:i+1]
	}
	if len(report) > MaxIssueBytes {
		cut := MaxIssueBytes
		for cut > 0 && !utf8.RuneStart(report[cut]) {
			cut--
		}
		report = report[:cut] + " …"
	}
	return report
}

func costString(c uint64) string {
	if c == math.MaxUint64 {
		return "an unbounded number of"
	}
	return strconv.FormatUint(c, 10)
}

// Call is what an expression is evaluated on.
type Call struct {
	Header http.Header
	Event  string
	Body   []byte
}

// Matches evaluates the expression on call: true starts a run. An error (a
// missing key, a type mismatch) is returned with false.
func (p *Program) Matches(call Call) (bool, error) {
	act := activation{call: &call}
	out, _, err := p.prg.Eval(&act)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("the expression gave %s, not a bool", out.Type())
	}
	return b, nil
}

// activation resolves the variables. Each is built the first time the
// evaluation reads it, and kept for the rest of it: an expression that
// never reads body parses no JSON (nor one that reads it only behind a
// false &&), and one that reads it many times parses it once.
type activation struct {
	call     *Call
	resolved [4]any
	done     [4]bool
}

var varNames = [4]string{VarHeaders, VarEvent, VarBody, VarRawBody}

func (a *activation) ResolveName(name string) (any, bool) {
	i := slices.Index(varNames[:], name)
	if i < 0 {
		return nil, false
	}
	if !a.done[i] {
		a.resolved[i], a.done[i] = a.build(name), true
	}
	return a.resolved[i], true
}

func (a *activation) build(name string) any {
	switch name {
	case VarHeaders:
		return lowerHeaders(a.call.Header)
	case VarEvent:
		return a.call.Event
	case VarBody:
		return ParseJSON(a.call.Body)
	default: // VarRawBody
		if !utf8.Valid(a.call.Body) {
			return ""
		}
		return string(a.call.Body)
	}
}

func (a *activation) Parent() interpreter.Activation { return nil }

// lowerHeaders maps each lower-case header name to its first value.
func lowerHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		if len(v) > 0 {
			out[strings.ToLower(k)] = v[0]
		}
	}
	return out
}

// sizeEstimator bounds the inputs for the cost estimate: every string,
// list and map reached through a variable is at most MaxInputBytes long.
type sizeEstimator struct{}

func (sizeEstimator) EstimateSize(element checker.AstNode) *checker.SizeEstimate {
	if t := element.Type(); t != nil && t.Kind() == types.TypeKind {
		return &checker.SizeEstimate{Min: 1, Max: 1} // type(x): compared at unit cost
	}
	if path := element.Path(); len(path) > 0 {
		switch path[0] {
		case VarHeaders, VarEvent, VarBody, VarRawBody:
			return &checker.SizeEstimate{Min: 0, Max: MaxInputBytes}
		}
	}
	return nil
}

func (sizeEstimator) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}
