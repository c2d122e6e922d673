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
	"errors"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// dedupe is the SDK's request handler, except that a message sent again
// with a messageId already seen gets the task made for it the first time:
// a client that lost the answer (an operator restarting after a crash)
// resends, and must not start the work twice. Every send comes through
// SendMessage: the SDK refuses streaming sends, as the card lists none.
type dedupe struct {
	a2asrv.RequestHandler
	ledger *ledger
}

// SendMessage implements a2asrv.RequestHandler.
func (d *dedupe) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	if req == nil || req.Message == nil || req.Message.ID == "" {
		return d.RequestHandler.SendMessage(ctx, req) // the SDK says what is missing
	}
	m, first := d.ledger.arrive(req.Message.ID)
	if !first {
		task, err := d.earlier(ctx, m)
		if err != nil {
			return nil, err
		}
		if task != nil {
			return task, nil
		}
	}
	// The first send of m, or a copy whose first made no task still kept.
	res, err := d.RequestHandler.SendMessage(ctx, req)
	var made a2a.TaskID
	if task, ok := res.(*a2a.Task); ok && err == nil {
		made = task.ID
	}
	d.ledger.settle(m, made)
	return res, err
}

// earlier is the task made for m's first send, once that send returned
// (for a blocking send, once the task ended or the client left); nil if it
// made none or the task is forgotten, so this send makes a new one.
func (d *dedupe) earlier(ctx context.Context, m *message) (*a2a.Task, error) {
	select {
	case <-m.known:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	id := d.ledger.taskOf(m)
	if id == "" {
		return nil, nil
	}
	task, err := d.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if errors.Is(err, a2a.ErrTaskNotFound) {
		return nil, nil
	}
	return task, err
}
