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
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// ledger counts the messages that arrived, by messageId, and the tasks made
// for them, so a message sent again gets its first task back and tests can
// check how often each was sent.
type ledger struct {
	mu    sync.Mutex
	limit int
	made  int
	byID  map[string]*message
	// order holds message ids oldest first: past limit the oldest is forgotten.
	order []string
}

// message is what the ledger knows of one messageId.
type message struct {
	count  int
	taskID a2a.TaskID
	// known is closed once the first send of the message returned, with
	// the task it made stored: a copy sent meanwhile waits on it.
	known   chan struct{}
	settled bool
}

func newLedger(limit int) *ledger {
	return &ledger{limit: limit, byID: map[string]*message{}}
}

// arrive counts one arrival of id and tells whether it is the first the
// ledger remembers.
func (l *ledger) arrive(id string) (m *message, first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.byID[id]
	if !ok {
		m = &message{known: make(chan struct{})}
		l.byID[id] = m
		remember(l.byID, &l.order, id, l.limit)
	}
	m.count++
	return m, !ok
}

// madeTask counts a task made.
func (l *ledger) madeTask() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.made++
}

// settle records the task a send of m made, if it made one, and releases
// the copies of m waiting for the first send. A later send makes a task
// only when the first made none or its task is forgotten: then its task is
// the one later copies get.
func (l *ledger) settle(m *message, taskID a2a.TaskID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if taskID != "" {
		m.taskID = taskID
	}
	if !m.settled {
		m.settled = true
		close(m.known)
	}
}

// taskOf is the task made for m, empty if none was.
func (l *ledger) taskOf(m *message) a2a.TaskID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return m.taskID
}

func (l *ledger) seen(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m, ok := l.byID[id]; ok {
		return m.count
	}
	return 0
}

func (l *ledger) tasks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.made
}

// remember appends key to order and drops the oldest key from m beyond limit.
func remember[V any](m map[string]V, order *[]string, key string, limit int) {
	*order = append(*order, key)
	if len(*order) > limit {
		delete(m, (*order)[0])
		*order = (*order)[1:]
	}
}
