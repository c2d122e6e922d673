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
	"errors"
	"fmt"
	"math"
	"regexp/syntax"

	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
)

// The prices of the functions whose work grows with their input, in cost
// units per byte they read; cel-go prices size() of a string and the
// conversions from strings at one unit whatever the string, and matches()
// by the pattern's length.
const (
	// traversalCost is a unit per ten bytes, cel-go's price of a scan
	// (common.StringTraversalCostFactor).
	traversalCost = 0.1
	// regexStepCost is the price of one instruction of a regular
	// expression's program on one byte of its input: RE2 (Go's regexp)
	// runs in time proportional to their product, and the program, not
	// the pattern, is what counts ("(a*){500}b" is 10 characters and
	// about 1,500 instructions). A match cannot be stopped once it runs,
	// so the limit must bound it to about EvalTimeout: a program of 50
	// instructions over 1 MiB took 120 ms on a busy 2-core machine.
	regexStepCost = 1
	// copyCost is the price of a byte that a concatenation or a conversion
	// between string and bytes copies. What an evaluation reads of the body
	// is charged to its allocation budget as it runs; these copies are
	// bounded at compile time instead: at 8 units a byte, CostLimit admits
	// at most two copies of the largest input, which with rawBody's own
	// copy keeps an evaluation within 4 times the body (cel-go prices them
	// by a tenth of a unit a byte: about 190 copies of a 1 MiB body).
	copyCost = 8
)

// sizeEstimator bounds the inputs for the cost estimate: every string,
// list and map reached through a variable is at most MaxInputBytes long.
type sizeEstimator struct{}

func (sizeEstimator) EstimateSize(element checker.AstNode) *checker.SizeEstimate {
	if t := element.Type(); t != nil && t.Kind() == types.TypeKind {
		return &checker.SizeEstimate{Min: 1, Max: 1} // type(x): compared at unit cost
	}
	if path := element.Path(); len(path) > 0 {
		switch path[0] {
		case VarHeaders, VarEvent, VarBody, VarRawBody, VarClaims:
			return &checker.SizeEstimate{Min: 0, Max: MaxInputBytes}
		}
	}
	return nil
}

// EstimateCallCost prices the functions whose work grows with their input
// and that cel-go prices at a constant: size() of a string counts its runes,
// a conversion from a string parses it (and a failed one copies it into
// its error), and matches() runs the pattern's program over the string;
// and the copies (concatenations, string to bytes and back), which cel-go
// prices as scans, by what they allocate.
// nil leaves a function to cel-go's estimate.
func (e sizeEstimator) EstimateCallCost(_, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	var input checker.AstNode
	switch {
	case target != nil:
		input = *target
	case len(args) > 0:
		input = args[0]
	default:
		return nil
	}
	switch overloadID {
	case overloads.SizeString, overloads.SizeStringInst,
		overloads.StringToInt, overloads.StringToUint, overloads.StringToDouble, overloads.StringToBool,
		overloads.StringToTimestamp, overloads.StringToDuration:
		return &checker.CallEstimate{CostEstimate: e.sizeOf(input).MultiplyByCostFactor(traversalCost)}
	case overloads.StringToBytes, overloads.BytesToString:
		size := e.sizeOf(input)
		return &checker.CallEstimate{CostEstimate: size.MultiplyByCostFactor(copyCost), ResultSize: &size}
	case overloads.AddString, overloads.AddBytes:
		if len(args) != 2 {
			return nil
		}
		size := e.sizeOf(args[0]).Add(e.sizeOf(args[1]))
		return &checker.CallEstimate{CostEstimate: size.MultiplyByCostFactor(copyCost), ResultSize: &size}
	case overloads.Matches, overloads.MatchesString:
		pattern := args[len(args)-1]
		insts, err := patternProgramSize(pattern.Expr())
		if err != nil {
			return nil // checkPatterns refused it before
		}
		size := e.sizeOf(input)
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: uint64(math.Ceil(float64((size.Max+1)*uint64(insts)) * regexStepCost))}}
	}
	return nil
}

// sizeOf is the size of node's value: a literal's own, else what
// EstimateSize says, else MaxInputBytes (any string an expression makes
// is made of its inputs and literals).
func (e sizeEstimator) sizeOf(node checker.AstNode) checker.SizeEstimate {
	if s := node.ComputedSize(); s != nil {
		return *s
	}
	if s := e.EstimateSize(node); s != nil {
		return *s
	}
	return checker.SizeEstimate{Min: 0, Max: MaxInputBytes}
}

// checkPatterns refuses a matches() whose pattern is not a string literal
// (it could not be checked nor priced here) or does not compile.
func checkPatterns(root celast.Expr) error {
	var err error
	celast.PreOrderVisit(root, celast.NewExprVisitor(func(e celast.Expr) {
		if err != nil || e.Kind() != celast.CallKind || e.AsCall().FunctionName() != overloads.Matches {
			return
		}
		args := e.AsCall().Args()
		if len(args) == 0 {
			return
		}
		if _, perr := patternProgramSize(args[len(args)-1]); perr != nil {
			err = perr
		}
	}))
	return err
}

// patternProgramSize is the number of instructions of the program of the
// pattern expr, which must be a string literal, as Go's regexp (RE2, which
// cel-go uses) compiles it.
func patternProgramSize(expr celast.Expr) (int, error) {
	if expr.Kind() != celast.LiteralKind {
		return 0, errors.New("the pattern of matches() must be a string literal")
	}
	pattern, ok := expr.AsLiteral().(types.String)
	if !ok {
		return 0, errors.New("the pattern of matches() must be a string literal")
	}
	re, err := syntax.Parse(string(pattern), syntax.Perl)
	if err != nil {
		return 0, fmt.Errorf("the pattern of matches() does not compile: %w", err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, fmt.Errorf("the pattern of matches() does not compile: %w", err)
	}
	return len(prog.Inst), nil
}
