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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hookrun/hookrun/hack/chaos"
)

// report prints the table and, after a full run, writes it into
// docs/benchmarks.md (o.out), keeping the sections make chaos and people
// wrote there.
func report(o options, rows []row) error {
	var b bytes.Buffer
	writeHeader(&b, o, time.Now().UTC(), thisMachine())
	writeTable(&b, rows)
	b.WriteString(howMeasured)
	b.WriteString(commandLine(o))
	fmt.Print("\n" + b.String())
	if len(o.only) > 0 {
		return nil // a partial run does not replace the report
	}
	out := o.out
	if !filepath.IsAbs(out) {
		out = filepath.Join(o.root, out)
	}
	old, _ := os.ReadFile(out)
	return os.WriteFile(out, withKeptSections(b.Bytes(), old), 0o644)
}

// machine is what the report says of the machine it ran on.
type machine struct {
	cpus                     int
	cpu, goVersion, os, arch string
}

func thisMachine() machine {
	info, _ := os.ReadFile("/proc/cpuinfo")
	return machine{cpus: runtime.NumCPU(), cpu: cpuModel(info), goVersion: runtime.Version(), os: runtime.GOOS, arch: runtime.GOARCH}
}

// cpuModel is the first model name in /proc/cpuinfo, or "unknown".
func cpuModel(cpuinfo []byte) string {
	if m := regexp.MustCompile(`model name\s*:\s*(.+)`).FindSubmatch(cpuinfo); m != nil {
		return string(m[1])
	}
	return "unknown"
}

// writeHeader writes the report's title and how its figures were made.
func writeHeader(b *bytes.Buffer, o options, date time.Time, m machine) {
	fmt.Fprintf(b, "# Benchmarks\n\nWritten by `make bench` (`hack/bench`) on %s. Each figure is the median of %d runs; ratios compare\n", date.Format("2006-01-02"), o.repeat)
	fmt.Fprintf(b, "with a baseline measured in the same run on the same machine with the same load generator\n(`hack/loadgen`: %d closed-loop workers, %s per run, keep-alive).\n\n", o.workers, o.duration)
	fmt.Fprintf(b, "Machine: %d CPUs (%s), %s, %s/%s. Control plane: etcd, kube-apiserver and kube-controller-manager\nv1.37.0 built from the module proxy, on loopback; hookrun's operator and receiver run as their own\nprocesses with their service accounts' tokens (`hack/devcluster`, as `make dev`).\n\n",
		m.cpus, m.cpu, m.goVersion, m.os, m.arch)
}

// writeTable writes the rows as a Markdown table: a row without a goal has
// nothing under "met"; a "|" in a figure would end its cell, and reads "/".
func writeTable(b *bytes.Buffer, rows []row) {
	b.WriteString("| measurement | goal | result | met |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", r.what, r.goal, strings.ReplaceAll(r.figure, "|", "/"), r.met())
	}
}

// met is the table's "met" cell of r.
func (r row) met() string {
	switch {
	case r.goal == "":
		return ""
	case r.ok:
		return "yes"
	}
	return "no"
}

// commandLine is the report's last line: the command that wrote it.
func commandLine(o options) string {
	return "Command: `make bench` (`bin/hookrun-bench --workers " + strconv.Itoa(o.workers) + " --duration " + o.duration.String() +
		" --repeat " + strconv.Itoa(o.repeat) + " --endpoints " + strconv.Itoa(o.endpoints) + "`).\n"
}

// withKeptSections is the report bench followed by the sections of the
// report it replaces (old) that make chaos and people wrote.
func withKeptSections(bench, old []byte) []byte {
	_, section, hand := chaos.SplitDoc(old)
	for _, kept := range [][]byte{section, hand} {
		if kept != nil {
			bench = append(bench, '\n')
			bench = append(bench, kept...)
		}
	}
	return bench
}

// howMeasured is the report's text after the table.
const howMeasured = `
How each is measured:

- Rejections: the receiver answers from memory (no API request) for an unknown endpoint ID, a wrong
  secret, a Content-Length over 1 MiB and a full rate-limit window (an unauthenticated endpoint with
  ` + "`--unauthenticated-rate-limit=1`" + `). The baseline is a bare ` + "`net/http`" + ` server in its own process
  that answers every request with the same 202 body, leaving the body to net/http as the receiver
  does. The 413 calls announce 1 MiB + 1 byte with ` + "`Expect: 100-continue`" + ` and send it only if
  asked (the receiver never asks): no server can keep such a connection, as the unread body would
  come next on it, so each call opens a new connection, and the 413 is compared with the bare server
  given the same request (it closes the connection too). The table also gives the ratio to the
  keep-alive baseline: the difference is the cost of a TCP connection per call, not of the receiver.
- Senders: a GitHub endpoint (created by the bench). A wrong ` + "`X-Hub-Signature-256`" + ` on a 1 KiB body
  is compared with the bare server reading the same body before it answers (the receiver must read
  a body to verify its signature). With the operator stopped, correctly signed calls with a new
  ` + "`X-GitHub-Delivery`" + ` each (the receiver reads the run name first, then stores the run and its
  payload) are compared with calls that all repeat one delivery ID (one read, nothing stored).
- Accepted calls: valid calls to an authenticated endpoint (rate limit and backlog cap lifted), with the operator
  stopped so that dispatch does not compete; the receiver stores an AgentRun and a payload Secret for
  each. The baseline creates the same two objects with controller-runtime's client, as the receiver's
  service account, at the same concurrency. The runs both stored are deleted before the operator
  starts again, so that it does not dispatch them during the measurements that follow.
- Rate limits in a store (` + "`--only store`" + `): the same accepted calls with the receiver's windows kept in a
  redis-server on loopback (` + "`--rate-limit-store`" + `, one script per call) against the receiver counting
  alone, the receiver restarted between the two and the two alternating in each of the runs; the
  figure is the ratio of their medians and what the store adds to a call's p50 and p99.
- Largest endpoints (` + "`" + `--only largest` + "`" + `; last in a full run, after the scale measurement's endpoints):
  2,000 WebhookEndpoints of CloudEvents type, each with a prompt of 32,768 two-byte characters
  (65,536 bytes), 64 event names of 256 characters, a 4,096-character filter that compiles (` + "`" + `event in
  [...]` + "`" + ` of some 300 names), 32 fields of 1,024 characters and an OIDC sender (` + "`" + `spec.sender.oidc` + "`" + `: a
  256-character issuer and audience, 4,096-character claims), created with the bench's workers in a
  namespace of their own; the
  receiver's resident memory (VmRSS) is read once it serves the last ten. No call is made, so the
  receiver holds no prompt and no compiled filter then: those caches are bounded apart (256 prompts,
  at most 16 MiB; 128 compiled filters).
- Scale: endpoints created with 16 workers while the operator works; "Ready" means condition Ready
  and a secret hash, counted from an informer (listing 10,000 endpoints every second, as the first
  version of this benchmark did, took more of the API server than the operator: 8 minutes instead
  of about 2); the receiver's resident memory (VmRSS) is read once it serves the last endpoint. CPU
  time is what each process used from the first create until all were Ready: everything shares the
  machine's cores, and the API server is what runs out.
- Where kube-apiserver's time goes at scale (` + "`--only scale --pprof`" + ` records a CPU profile of its first
  two minutes; read it with ` + "`go tool pprof -top`" + `). On 2026-11-26, with the operator at one live
  read, one Secret, one event and one status patch per new endpoint, 10,000 endpoints cost the API
  server 175 CPU-seconds (252 when the operator wrote status twice). Of the 145 s profiled: creates
  31.5 s (the bench's 10,000 endpoints, the operator's Secrets and events), the endpoints' status
  patches 28.7 s (2.9 ms each: decoding the stored object, applying the merge patch, schema and CEL
  validation), Go's garbage collector 20 s, CRD schema coercion when decoding 12 s, managed fields
  9.9 s, serving watches 7.7 s, lists 6.9 s, the admission policies' CEL 6.5 s, authentication's
  TLS 6.4 s, GETs 3.9 s. No one part dominates: the API server's cost per object write bounds the
  time. With the API server, the operator (38 s), the receiver (9 s), etcd and the bench's own
  client sharing two cores, about 2m20s is what this machine gives; fewer writes per endpoint is
  what would bring it under 2 minutes (the ` + "`SecretGenerated`" + ` event is one of the two creates).
- Tenant labels: 80 Secrets in one namespace with 6,000 labels under ` + "`agents.hookrun.dev/`" + ` each
  (none a key hookrun defines; 63-byte values, about 560 KB of labels per Secret), created as an
  admin; the operator watches Secrets' metadata in every namespace. Its resident memory is read
  before, and after it used a Secret stored after them (the sentinel an endpoint's ` + "`secretRef`" + `
  names): its cache keeps only the keys hookrun defines. Then 350 Secrets in another namespace with
  4,000 finalizers and 1,000 owner references to ConfigMaps each (about 190 KB of metadata per
  Secret), measured the same way: its cache keeps of a Secret only what hookrun reads, no finalizer
  and no owner reference but to hookrun's kinds (200 such Secrets of 3,000 finalizers grew it by
  72 MiB before).
- 202 to agent: ` + "`BenchmarkQueueToSend`" + ` in ` + "`controllers`" + ` (200 sequential runs with free capacity, a
  real API server and the real operator, an in-process A2A agent), medians of its runs.
- 202 to agent beside a tarpit: ` + "`BenchmarkQueueToSendBesideTarpit`" + ` in ` + "`controllers`" + `, one API server and operator
  (default flags: 8 dispatch workers, a 30 s call deadline): 200 sequential runs of one Agent alone, then
  200 more while four Agents of another namespace, whose server holds every request open, have 20
  runs running each (their four Agent shares, 2 calls each, would be all 8 workers; their namespace
  holds its share, 4 calls, throughout); the p99 beside them and the ratio of the two p99s; then 200
  more while a second namespace's four tarpits do the same (the two namespaces' shares would be all
  8 workers: the reserve keeps 2 for a namespace with no call in flight, and they hold 6), the p99 of
  the third namespace; medians of its runs.
- Verdicts under a flood: ` + "`--only verdicts`" + `, the receiver as a process (2 cores, its own ` + "`GOMAXPROCS`" + `
  turns): another namespace's GitHub endpoint whose filter takes about a third of the step limit and
  matches gets 60 calls one after another, alone and then while namespace ` + "`flood`" + ` calls two endpoints whose
  filter runs to the limit over 16 connections; the answers that are not 202 (200 ignored is a
  delivery GitHub never retries) and the 202s' p99.
- Filters: in the bench's own process, before anything else runs, one evaluation at a time as the
  receiver makes them: each documented filter of the user guide and each hostile expression that
  compiles (comprehensions within each other, the costliest regular expression, a copy of every
  element, the body compared with itself) on 1 MiB bodies built to make it work hardest (arrays of
  ` + "`{}`, `[]`, `0`, `\"\"`" + ` and nested objects, an object of many keys); the worst body's median time and the
  most heap one call held at once (the live heap, collected between its steps: ` + "`filter.HeldBy`" + `), as a
  multiple of the body. An evaluation is stopped after 500,000 steps, or when what it holds would take
  more than 4 times the body: the call is then ignored (200, ` + "`filter_error`" + `). Alone: ` + "`bin/hookrun-bench --only filters`" + `.
- Fields: in the bench's own process, on three real GitHub deliveries (octokit/webhooks' examples of
  ` + "`issues` opened, `pull_request` opened and `push`, in `controllers/filter/testdata/github`" + `), four
  fields a triage agent needs of each: the bytes of the message text with prompt ` + "`Triage this.`" + ` and
  the fields in the wrapper (` + "`spec.payload: Fields`" + `) against the same message with the body; and the
  median time of one evaluation of the four fields (1000 calls a run) against one of the documented
  filter of that event on the same body. Alone: ` + "`bin/hookrun-bench --only fields`" + `.
- OIDC: two Bearer endpoints of the bench namespace, one with its generated secret, one with
  ` + "`spec.sender.oidc`" + ` (the cluster's service account tokens, audience ` + "`hookrun-bench`" + `, a ` + "`claims`" + `
  expression on the account's name), called with the same 1 KiB body: accepted calls with the secret
  against accepted calls with a one-hour TokenRequest token of service account ` + "`bench-sender`" + ` (each
  stores a run and its payload; the operator is stopped meanwhile), and a wrong secret against a
  forged token (the token's claims signed with another RSA key under the cluster's key ID, which
  costs a signature check). Alone: ` + "`bin/hookrun-bench --only oidc`" + `. The per-call cost of verifying
  one token in process: ` + "`BenchmarkVerify`" + ` in ` + "`controllers/oidc`" + `.

`
