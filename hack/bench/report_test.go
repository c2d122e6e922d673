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

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hookrun/hookrun/hack/chaos"
)

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	writeTable(&b, []row{
		{"baseline: bare net/http handler answering 202", "", "9000 req/s", true},
		{"rejection: unknown ID (401)", ">= 0.8 of baseline", "0.91 (8190 req/s)", true},
		{"10 endpoints: operator brings all to Ready", "< 2 min", "3m0s", false},
		{"requests per endpoint", "", "GET 200 | PATCH 200", false},
	})
	want := "| measurement | goal | result | met |\n|---|---|---|---|\n" +
		"| baseline: bare net/http handler answering 202 |  | 9000 req/s |  |\n" +
		"| rejection: unknown ID (401) | >= 0.8 of baseline | 0.91 (8190 req/s) | yes |\n" +
		"| 10 endpoints: operator brings all to Ready | < 2 min | 3m0s | no |\n" +
		"| requests per endpoint |  | GET 200 / PATCH 200 |  |\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteHeader(t *testing.T) {
	var b bytes.Buffer
	o := options{repeat: 3, workers: 16, duration: 5 * time.Second}
	writeHeader(&b, o, time.Date(2026, 12, 7, 23, 59, 0, 0, time.UTC), machine{cpus: 2, cpu: "Some CPU @ 2.00GHz", goVersion: "go1.26.8", os: "linux", arch: "amd64"})
	for _, want := range []string{
		"# Benchmarks\n\n",
		"on 2026-12-07. Each figure is the median of 3 runs",
		"(`hack/loadgen`: 16 closed-loop workers, 5s per run, keep-alive).",
		"Machine: 2 CPUs (Some CPU @ 2.00GHz), go1.26.8, linux/amd64.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("header lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.HasSuffix(b.String(), ".\n\n") {
		t.Errorf("header does not end with a blank line before the table:\n%q", b.String())
	}
}

func TestCPUModel(t *testing.T) {
	for _, tc := range []struct{ name, cpuinfo, want string }{
		{"first of several", "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n", "AMD EPYC 7B13"},
		{"none", "processor\t: 0\nFeatures\t: fp asimd\n", "unknown"},
		{"no file", "", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cpuModel([]byte(tc.cpuinfo)); got != tc.want {
				t.Errorf("cpuModel = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCommandLine(t *testing.T) {
	got := commandLine(options{workers: 16, duration: 5 * time.Second, repeat: 3, endpoints: 10000})
	want := "Command: `make bench` (`bin/hookrun-bench --workers 16 --duration 5s --repeat 3 --endpoints 10000`).\n"
	if got != want {
		t.Errorf("commandLine = %q, want %q", got, want)
	}
}

// TestWithKeptSections: the report replaces what make bench wrote before and
// keeps what make chaos and people wrote after it.
func TestWithKeptSections(t *testing.T) {
	const (
		oldBench = "# Benchmarks\n\nold table\n"
		newBench = "# Benchmarks\n\nnew table\n"
		sect     = chaos.ReportHeading + "\n\nkills\n"
		hand     = chaos.HandHeading + "\n\n- a figure, `its command`\n"
	)
	for _, tc := range []struct{ name, old, want string }{
		{"no report yet", "", newBench},
		{"bench only", oldBench, newBench},
		{"all three", oldBench + "\n" + sect + "\n" + hand, newBench + "\n" + sect + "\n" + hand},
		{"bench and hand", oldBench + "\n" + hand, newBench + "\n" + hand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := withKeptSections([]byte(newBench), []byte(tc.old)); string(got) != tc.want {
				t.Errorf("report:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
