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
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
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
	// inputs are bounded, the estimate bounds the work of each step of an
	// evaluation; their number is counted while it runs (MaxSteps, steps.go).
	CostLimit = 20_000_000
	// MaxInputBytes is the largest body, header block and header value the
	// cost estimate assumes (the receiver refuses bodies over 1 MiB).
	MaxInputBytes = 1 << 20
	// EvalTimeout bounds one evaluation's time: a backstop for a machine
	// so busy that MaxSteps take longer. An evaluation it stops was not
	// decided (ErrTimeout): the receiver answers 503, never ignores it.
	EvalTimeout = 100 * time.Millisecond
	// interruptEvery is how many steps of a comprehension run between two
	// looks at whether the evaluation was stopped.
	interruptEvery = 64
)

// evalTimeout is EvalTimeout; tests shorten it to play a busy machine.
var evalTimeout = EvalTimeout

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
	prg, err := compileBool(env, expr)
	if err != nil {
		return nil, err
	}
	return &Program{prg: prg}, nil
}

// compileBool compiles a bool expression of at most MaxLength characters
// in e, within CostLimit.
func compileBool(e *cel.Env, expr string) (cel.Program, error) {
	ast, err := check(e, expr, MaxLength)
	if err != nil {
		return nil, err
	}
	if !ast.OutputType().IsExactType(types.BoolType) {
		return nil, fmt.Errorf("the expression is of type %s, not bool", ast.OutputType())
	}
	cost, err := estimate(e, ast)
	if err != nil {
		return nil, err
	}
	if cost > CostLimit {
		return nil, fmt.Errorf("the expression may cost up to %s units on a large call, more than the limit of %d: "+
			"avoid comprehensions over rawBody, nested comprehensions and repeated scans of large values", costString(cost), CostLimit)
	}
	return program(e, ast)
}

// check parses and type-checks expr in e, at most maxLength characters,
// and refuses patterns it cannot price (checkPatterns).
func check(e *cel.Env, expr string, maxLength int) (*cel.Ast, error) {
	if n := utf8.RuneCountInString(expr); n > maxLength {
		return nil, fmt.Errorf("the expression has %d characters, more than %d", n, maxLength)
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, errors.New(firstIssue(iss.Err().Error()))
	}
	if err := checkPatterns(ast.NativeRep().Expr()); err != nil {
		return nil, err
	}
	return ast, nil
}

// estimate is the most cost units ast may take, every input at its largest.
func estimate(e *cel.Env, ast *cel.Ast) (uint64, error) {
	est, err := e.EstimateCost(ast, sizeEstimator{})
	if err != nil {
		return 0, fmt.Errorf("estimating the cost: %w", err)
	}
	return est.Max, nil
}

// program builds a checked expression's program. OptOptimize compiles each
// pattern of matches() once, here, rather than at every call, and builds
// lists and maps of constants: a map literal with a bytes key
// ({dyn(b"a"): 1}) panics in cel-go as it does (an evaluation's panic is
// an error; this one happens before), so a panic is an error here too.
func program(e *cel.Env, ast *cel.Ast) (prg cel.Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			prg, err = nil, fmt.Errorf("building the program: %v", r)
		}
	}()
	prg, err = e.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(interruptEvery),
		cel.CustomDecoratorV2(countSteps))
	if err != nil {
		return nil, fmt.Errorf("building the program: %w", err)
	}
	return prg, nil
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
	return cut(report, MaxIssueBytes)
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

// The causes of a stopped evaluation.
var (
	// ErrTimeout stops an evaluation that ran for EvalTimeout.
	ErrTimeout = fmt.Errorf("the evaluation took more than %s", EvalTimeout)
	// ErrTooLarge stops an evaluation whose values would take more than its
	// budget (newBudget).
	ErrTooLarge = errors.New("the values the evaluation holds would take more than 4 times the body's size (at least 128 KiB)")
)

// Matches evaluates the expression on call: true starts a run. An error (a
// missing key, a type mismatch, a stop) is returned with false. The
// evaluation stops after MaxSteps (ErrTooManySteps), when what it reads of
// the body would allocate more than 4 times the body (ErrTooLarge), when
// ctx ends (the caller hung up), and after EvalTimeout (ErrTimeout: not
// decided).
func (p *Program) Matches(ctx context.Context, call Call) (bool, error) {
	ev := startEvaluation(ctx, &call)
	defer ev.end()
	out, err := ev.eval(p.prg)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("the expression gave %s, not a bool", out.Type())
	}
	return b, nil
}

// evaluation is what the programs evaluated on one call share: the
// variables (the body is parsed once), the allocation budget and the
// deadline.
type evaluation struct {
	ctx    context.Context
	cancel context.CancelFunc
	stop   context.CancelCauseFunc
	act    activation
}

// startEvaluation starts an evaluation on call: it stops after
// EvalTimeout, when ctx ends (the caller hung up), and when what its
// programs read of the body would allocate more than 4 times the body.
// end releases it.
func startEvaluation(ctx context.Context, call *Call) *evaluation {
	ev := &evaluation{}
	ev.ctx, ev.cancel = context.WithTimeoutCause(ctx, evalTimeout, ErrTimeout)
	ev.ctx, ev.stop = context.WithCancelCause(ev.ctx)
	budget := newBudget(len(call.Body), func() { ev.stop(ErrTooLarge) })
	ev.act = activation{call: call, budget: budget, steps: newSteps(budget, func() { ev.stop(ErrTooManySteps) })}
	return ev
}

func (ev *evaluation) end() {
	ev.stop(nil)
	ev.cancel()
}

// eval evaluates prg. The result of an evaluation that ran out of budget
// may rest on a value cut short: it is ErrTooLarge; an error of one that
// was stopped is the stop's cause.
func (ev *evaluation) eval(prg cel.Program) (ref.Val, error) {
	ev.act.budget.current = ev.act.budget.root
	out, _, err := prg.ContextEval(ev.ctx, &ev.act)
	if ev.act.budget.over {
		return nil, ErrTooLarge
	}
	if ev.act.steps.over {
		return nil, ErrTooManySteps
	}
	if err != nil {
		if cause := context.Cause(ev.ctx); cause != nil {
			return nil, cause
		}
		return nil, err
	}
	return out, nil
}

// activation resolves the variables. Each is built the first time the
// evaluation reads it, and kept for the rest of it: an expression that
// never reads body parses no JSON (nor one that reads it only behind a
// false &&), and one that reads it many times parses it once.
type activation struct {
	call     *Call
	budget   *allocBudget
	steps    *steps
	resolved [4]ref.Val
	done     [4]bool
}

var varNames = [4]string{VarHeaders, VarEvent, VarBody, VarRawBody}

func (a *activation) ResolveName(name string) (any, bool) {
	i := slices.Index(varNames[:], name)
	if i < 0 {
		if name == stepsName {
			return a.steps, true
		}
		return nil, false
	}
	if !a.done[i] {
		a.resolved[i], a.done[i] = a.build(name), true
	}
	return a.resolved[i], true
}

// build returns the variable as a CEL value: a Go string or map would be
// converted again at every read (a comprehension reads a variable once per
// step: 16 bytes a step for a string, before this).
func (a *activation) build(name string) ref.Val {
	switch name {
	case VarHeaders:
		return types.NewStringStringMap(types.DefaultTypeAdapter, lowerHeaders(a.call.Header))
	case VarEvent:
		return types.String(a.call.Event)
	case VarBody:
		return parseJSON(a.call.Body, a.budget)
	default: // VarRawBody
		if !utf8.Valid(a.call.Body) || !a.budget.root.take(len(a.call.Body)) {
			return types.String("")
		}
		return types.String(a.call.Body)
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
