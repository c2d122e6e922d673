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

package demoagent

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// The first lines of a payload that change what the agent does.
const (
	commandFail  = "demo:fail"
	commandHang  = "demo:hang"
	commandInput = "demo:input"
)

// executor is the agent's a2asrv.AgentExecutor. Every task starts
// submitted: a client that asked not to block gets it at once and polls.
// The rest follows within a millisecond, sometimes before that answer.
type executor struct {
	ledger *ledger
}

var _ a2asrv.AgentExecutor = (*executor)(nil)

// Execute implements a2asrv.AgentExecutor.
func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil { // else a reply to a task that asked for input
			e.ledger.madeTask()
			if !yield(submitted(ec), nil) {
				return
			}
		}
		p := readPayload(ec.Message)
		switch p.command() {
		case commandFail:
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentText(ec, p.answer())), nil)
		case commandInput:
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, agentText(ec, askForInput)), nil)
		case commandHang:
			if yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
				<-ctx.Done() // the SDK cancels ctx once the task is canceled
			}
		default:
			yield(completed(ec, p.answer()), nil)
		}
	}
}

// Cancel implements a2asrv.AgentExecutor: every task can be canceled.
func (e *executor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// askForInput is the status message of a task that needs input.
const askForInput = "Demo agent needs input: send a message to this task (its taskId) with the payload to answer."

// submitted is the new task, without the message in its history (unlike
// a2a.NewSubmittedTask): the agent keeps up to Remember tasks, and their
// memory should not grow with the payloads' size.
func submitted(ec *a2asrv.ExecutorContext) *a2a.Task {
	return &a2a.Task{ID: ec.TaskID, ContextID: ec.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
}

// completed is the task done, with the answer as its artifact: one event
// rather than an artifact and then a status, as each event costs the SDK a
// store update and deep copies of the task.
func completed(ec *a2asrv.ExecutorContext, answer string) *a2a.Task {
	// A copy: the SDK still holds the stored task, and must see the change.
	task := submitted(ec)
	if ec.StoredTask != nil {
		*task = *ec.StoredTask
	}
	now := time.Now()
	artifact := &a2a.Artifact{ID: a2a.NewArtifactID(), Parts: a2a.ContentParts{a2a.NewTextPart(answer)}}
	task.Artifacts = append(slices.Clip(task.Artifacts), artifact)
	task.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &now}
	return task
}

func agentText(ec *a2asrv.ExecutorContext, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
}

// payload is what a message carries: the text between the webhook-payload
// tags of its text part, or the bytes of its file part (the last wins).
type payload struct {
	body string
	kind string // "text" or "<mediaType> file"
}

func readPayload(m *a2a.Message) payload {
	p := payload{kind: "text"}
	for _, part := range m.Parts {
		switch c := part.Content.(type) {
		case a2a.Text:
			if c != "" {
				p = payload{body: between(string(c), "<webhook-payload>\n", "\n</webhook-payload>"), kind: "text"}
			}
		case a2a.Raw:
			p = payload{body: string(c), kind: part.MediaType + " file"}
		}
	}
	return p
}

func (p payload) firstLine() string {
	first, _, _ := strings.Cut(p.body, "\n")
	return first
}

func (p payload) command() string { return strings.TrimSpace(p.firstLine()) }

// answer is the agent's output; tests and docs match its exact text.
func (p payload) answer() string {
	return fmt.Sprintf("Demo agent received %d bytes (%s). First line: %s", len(p.body), p.kind, p.firstLine())
}

// between is the text of s between open and the last close, or all of s
// without the wrapper.
func between(s, open, close string) string {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return s
	}
	if i := strings.LastIndex(rest, close); i >= 0 {
		return rest[:i]
	}
	return rest
}
