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
	"fmt"

	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// An evaluation's steps: the verdict of an expression must not depend on
// how busy the machine is, so what ends an evaluation that works too long
// is a count of its steps, not a clock. Every function call the
// interpreter makes (each operator, each function, and the loop condition
// or accumulation of each step of a comprehension) is a step; the work
// that grows with the size of a call's input (a scan, a regular
// expression, a copy) is bounded by the cost estimate at compile time
// (CostLimit). The clock (EvalTimeout) stays as a backstop for a machine
// so busy that MaxSteps take longer: an evaluation it stops was not
// decided, and the receiver answers 503 with Retry-After.
//
// cel-go's own runtime cost tracking (cel.CostLimit) would count the same
// way, but its bookkeeping grows with every value a comprehension has
// made: measured here, body.items.map(i, i.n) over 40,000 items took
// 2.96 s tracked and 55 ms untracked. Counting a call here is a lookup of
// the hidden variable through the comprehension's scopes and a counter add,
// whatever the values made (included in BenchmarkStepRate's ns/step).

// MaxSteps is the most steps an evaluation may take: at 85 to 110 ns a
// step (a comparison within comprehensions over literal lists, on a
// 2-core machine running a node beside: BenchmarkStepRate) 40 to 55 ms of
// a core, within EvalTimeout when the evaluation has a core, which the
// receiver's evaluation turns give it. A comprehension with one
// comparison over the 40,000 items of a 1 MiB body takes about 80,000.
const MaxSteps = 500_000

// ErrTooManySteps ends an evaluation that took more than MaxSteps steps.
var ErrTooManySteps = fmt.Errorf("the evaluation took more than %d steps (function calls and comprehension steps)", MaxSteps)

// stepsName is the hidden variable through which a counted call finds its
// evaluation's step count: a Program is shared by the evaluations of
// every call, the activation is each evaluation's own. No expression can
// name it ("#" is not in CEL's identifiers).
const stepsName = "#hookrun.steps"

// steps counts an evaluation's steps, on its one goroutine, and charges
// what its lists, maps and concatenations build to its budget (built.go).
type steps struct {
	left int
	// over is set once the count passed MaxSteps; the evaluation is then
	// an error whatever it returns, and stop ends it at the next look.
	over   bool
	stop   func()
	budget *allocBudget
	// lastList is the list the evaluation built last, and lastListBytes
	// what was charged for the list itself (not for what it holds).
	lastList      ref.Val
	lastListBytes int
}

func newSteps(budget *allocBudget, stop func()) *steps {
	return &steps{left: MaxSteps, stop: stop, budget: budget}
}

// take counts one step.
func (s *steps) take() { s.takeN(1) }

// onStep and onSpend, when set, are called at every step and before every
// charge: HeldBy measures what an evaluation holds.
var onStep, onSpend func(*allocBudget)

// takeN counts n steps.
func (s *steps) takeN(n int) {
	if onStep != nil {
		onStep(s.budget)
	}
	if s.left -= n; s.left < 0 && !s.over {
		s.over = true
		if s.stop != nil {
			s.stop()
		}
	}
}

// countSteps is the decorator that counts every function call of a
// program (it wraps each call the planner makes), and each element of the
// lists and maps it builds.
func countSteps(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	if _, attr := i.(interpreter.InterpretableAttribute); attr {
		return i, nil
	}
	if c, ok := i.(interpreter.InterpretableConstructor); ok && builds(c) {
		return &builtValue{c}, nil
	}
	if call, ok := i.(interpreter.InterpretableCall); ok {
		if call.Function() == operators.Add && len(call.Args()) == 2 {
			return &countedAdd{call}, nil
		}
		return &countedCall{call}, nil
	}
	return i, nil
}

// countedCall is a function call that counts a step each time it runs.
type countedCall struct {
	interpreter.InterpretableCall
}

func (c *countedCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	stepOf(frame)
	return c.InterpretableCall.Exec(frame)
}

func (c *countedCall) Eval(vars interpreter.Activation) ref.Val {
	stepOf(vars)
	return c.InterpretableCall.Eval(vars)
}

// stepOf counts a step of the evaluation whose variables are vars, and
// returns its count. An activation without a count (a test's, cel-go's
// constant folding) counts nothing: nil.
func stepOf(vars interpreter.Activation) *steps {
	s := meterOf(vars)
	if s != nil {
		s.take()
	}
	return s
}

// meterOf is the step count of the evaluation whose variables are vars.
func meterOf(vars interpreter.Activation) *steps {
	if v, ok := vars.ResolveName(stepsName); ok {
		if s, ok := v.(*steps); ok {
			return s
		}
	}
	return nil
}
