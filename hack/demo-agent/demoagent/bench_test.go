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
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/hookrun/hookrun/controllers/a2a"
)

// BenchmarkSendGet is what the dispatch benchmark and the chaos harness ask
// of the agent for each run: one non-blocking send, then gets until the task
// is completed, through hookrun's client over loopback HTTP. Allocations are
// the client's and the agent's together.
func BenchmarkSendGet(b *testing.B) {
	for _, v := range []a2a.Version{a2a.V03, a2a.V10} {
		b.Run(string(v), func(b *testing.B) {
			srv := httptest.NewServer(New())
			defer srv.Close()
			c := &a2a.Client{URL: srv.URL, Version: v}
			msg := a2a.Message{Text: "Triage.\n\n<webhook-payload>\n{\"a\":1}\n</webhook-payload>"}
			gets := 0
			for i := 0; b.Loop(); i++ {
				msg.MessageID = "bench-" + strconv.Itoa(i)
				task, err := c.SendMessage(b.Context(), msg)
				for err == nil && task.State != a2a.StateCompleted {
					gets++
					task, err = c.GetTask(b.Context(), task.ID)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(gets)/float64(b.N), "gets/op")
		})
	}
}
