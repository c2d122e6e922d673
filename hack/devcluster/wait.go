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

package devcluster

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Waiting on progress. A machine that builds and tests other packages beside
// the cluster can make every step slow; a fixed short deadline then fails a
// healthy start. A wait here gives up only when what it waits for has stopped
// changing for a while (or after a generous limit), and then says what it
// last saw.

// Wait bounds. Slow is fine while something moves.
const (
	// pollInterval is how often a wait looks again.
	pollInterval = 200 * time.Millisecond
	// stallTimeout is how long a wait goes on with nothing changing.
	stallTimeout = 90 * time.Second
	// waitLimit bounds a wait however much it moves.
	waitLimit = 4 * time.Minute
	// lookTimeout bounds one look (a list, a probe, applying the samples),
	// so a hung request cannot use up a wait; a look that runs out is one
	// more thing seen, and the wait goes on.
	lookTimeout = 30 * time.Second
)

// errStopWaiting wraps an error that makes waiting pointless (a process
// exited, an input is refused for good).
type errStopWaiting struct{ err error }

func (e errStopWaiting) Error() string { return e.err.Error() }
func (e errStopWaiting) Unwrap() error { return e.err }

// stopWaiting ends a wait with err at once.
func stopWaiting(err error) error { return errStopWaiting{err} }

// WaitFor calls look every pollInterval until it reports nothing missing.
// look returns what is still missing, in words ("" when done), or an error;
// an error is one more thing seen (the next look may succeed) unless made
// with stopWaiting, and so is a look that outlasts lookTimeout (its error
// is then not believed, stopWaiting or not). The wait fails when the words and error have not changed
// for stallTimeout, after waitLimit, or when ctx ends, with an error that
// names what it waited for and what it last saw.
func WaitFor(ctx context.Context, what string, look func(context.Context) (missing string, err error)) error {
	return waitWith(ctx, what, waitBounds{pollInterval, lookTimeout, stallTimeout, waitLimit}, look)
}

// waitBounds are WaitFor's bounds, in the order of its constants.
type waitBounds struct{ interval, look, stall, limit time.Duration }

func waitWith(ctx context.Context, what string, b waitBounds, look func(context.Context) (string, error)) error {
	start := time.Now()
	lastChange := start
	last := ""
	tick := time.NewTicker(b.interval)
	defer tick.Stop()
	for {
		lookCtx, cancel := context.WithTimeout(ctx, b.look)
		missing, err := look(lookCtx)
		timedOut := lookCtx.Err() != nil
		cancel()
		var stop errStopWaiting
		switch {
		case ctx.Err() != nil:
			// The look was cut short: what it saw says nothing, keep the last.
		case err == nil && missing == "":
			return nil
		case timedOut:
			// Slow, not refused: its error is not believed.
		case errors.As(err, &stop):
			return fmt.Errorf("waiting for %s: %w", what, stop.err)
		}
		seen := missing
		switch {
		case timedOut:
			seen = fmt.Sprintf("no answer within %s", b.look)
		case err != nil:
			seen = "error: " + err.Error()
		}
		now := time.Now()
		if seen != last && ctx.Err() == nil {
			last, lastChange = seen, now
		}
		var why string
		switch {
		case ctx.Err() != nil:
			why = ctx.Err().Error()
		case now.Sub(lastChange) >= b.stall:
			why = fmt.Sprintf("nothing changed for %s", b.stall)
		case now.Sub(start) >= b.limit:
			why = fmt.Sprintf("still not there after %s", b.limit)
		}
		if why != "" {
			return fmt.Errorf("waited %s for %s (%s); last seen: %s", now.Sub(start).Round(time.Second), what, why, last)
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// waitFor is WaitFor that writes to the cluster's log how long the wait took
// and, when that was more than slowWait, what was missing from when: the
// record of a slow start on a loaded machine.
func (c *Cluster) waitFor(ctx context.Context, what string, look func(context.Context) (string, error)) error {
	start := time.Now()
	var changes []string
	last := ""
	err := WaitFor(ctx, what, func(ctx context.Context) (string, error) {
		missing, err := look(ctx)
		seen := missing
		if err != nil {
			seen = "error: " + err.Error()
		}
		if seen != last && seen != "" && len(changes) < maxLoggedChanges {
			changes = append(changes, fmt.Sprintf("%6.1fs %s", time.Since(start).Seconds(), seen))
		}
		last = seen
		return missing, err
	})
	took := time.Since(start)
	c.logf("waited %s for %s", took.Round(time.Millisecond), what)
	if took > slowWait {
		for _, ch := range changes {
			c.logf("  %s", ch)
		}
	}
	return err
}

const (
	// slowWait is how long a wait may take before its log line says what
	// was missing meanwhile.
	slowWait = 5 * time.Second
	// maxLoggedChanges bounds that record.
	maxLoggedChanges = 50
)
