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

package a2apeers

import "strings"

// The status messages of the echo agent's failed and input-required tasks.
const (
	FailText  = "the echo agent failed, as the payload asked"
	InputText = "the echo agent needs input, as the payload asked"
)

// outcomeKind is how the echo agent ends a task.
type outcomeKind int

const (
	complete outcomeKind = iota
	fail
	hang
	input
	slow
)

// outcome is what the echo agent does with a message: how it ends the task,
// and the text of its artifact or status message.
type outcome struct {
	kind outcomeKind
	text string
}

// echo is the echo agent's outcome for a message's text: the first word of
// the payload's first line tells.
func echo(text string) outcome {
	line, _, _ := strings.Cut(payload(text), "\n")
	word, _, _ := strings.Cut(line, " ")
	switch word {
	case "fail":
		return outcome{kind: fail, text: FailText}
	case "hang":
		return outcome{kind: hang}
	case "input":
		return outcome{kind: input, text: InputText}
	case "slow":
		return outcome{kind: slow, text: "echo: " + line}
	}
	return outcome{kind: complete, text: "echo: " + line}
}

// payload is the text inside the webhook-payload wrapper, or all of text
// when it has none.
func payload(text string) string {
	const open, closing = "<webhook-payload>\n", "\n</webhook-payload>"
	start := strings.Index(text, open)
	end := strings.LastIndex(text, closing)
	if start < 0 || end < start+len(open) {
		return text
	}
	return text[start+len(open) : end]
}
