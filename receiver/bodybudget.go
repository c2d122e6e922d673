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

package receiver

import "sync/atomic"

// bodyBudget bounds the bytes of request bodies one replica holds at once:
// a call reserves its Content-Length (MaxBodyBytes when the length is not
// known, as with chunked bodies) before its body is read, and gives it back
// when it is answered. Without it, a thousand slow 1 MiB uploads hold a
// gigabyte, whatever the rate limits.
type bodyBudget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes if they fit.
func (b *bodyBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// give returns n bytes taken before.
func (b *bodyBudget) give(n int64) {
	if n != 0 {
		b.used.Add(-n)
	}
}

// reservation is how much of the budget a body of contentLength needs.
func reservation(contentLength int64) int64 {
	if contentLength < 0 || contentLength > MaxBodyBytes {
		return MaxBodyBytes
	}
	return contentLength
}
