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
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/interpreter"
)

// spec.sender.oidc.claims: a bool expression over one variable, the
// verified token's claims, with the filter's parser limits and cost rules.

// VarClaims is the token's claims: its payload parsed as JSON.
const VarClaims = "claims"

var claimsEnv = func() *cel.Env {
	e, err := cel.NewEnv(
		cel.ParserRecursionLimit(MaxNesting),
		cel.ParserExpressionSizeLimit(MaxLength),
		cel.Variable(VarClaims, cel.MapType(cel.StringType, cel.DynType)),
	)
	if err != nil {
		panic(err)
	}
	return e
}()

// Claims is a compiled spec.sender.oidc.claims.
type Claims struct {
	prg cel.Program
}

// CompileClaims checks expr as Compile checks a filter, with the one
// variable claims.
func CompileClaims(expr string) (*Claims, error) {
	prg, err := compileBool(claimsEnv, expr)
	if err != nil {
		return nil, err
	}
	return &Claims{prg: prg}, nil
}

// Allow evaluates the expression on a verified token's payload (its JSON
// claims): true accepts the token. An error (a missing claim, a type
// mismatch, a stop) is returned with false. The evaluation is bounded as a
// filter's is: EvalTimeout, and 4 times the payload's size.
func (c *Claims) Allow(ctx context.Context, payload []byte) (bool, error) {
	ev := startEvaluation(ctx, &Call{Body: payload})
	defer ev.end()
	out, _, err := c.prg.ContextEval(ev.ctx, &claimsActivation{&ev.act})
	switch {
	case ev.act.budget.over:
		return false, ErrTooLarge
	case ev.act.steps.over:
		return false, ErrTooManySteps
	case err != nil:
		if cause := context.Cause(ev.ctx); cause != nil {
			return false, cause
		}
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("the expression gave %s, not a bool", out.Type())
	}
	return b, nil
}

// claimsActivation resolves claims as the filter's activation resolves
// body: parsed once, lazily, within the budget.
type claimsActivation struct{ body *activation }

func (a *claimsActivation) ResolveName(name string) (any, bool) {
	if name == stepsName {
		return a.body.steps, true
	}
	if name != VarClaims {
		return nil, false
	}
	return a.body.ResolveName(VarBody)
}

func (a *claimsActivation) Parent() interpreter.Activation { return nil }
