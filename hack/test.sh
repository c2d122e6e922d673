#!/usr/bin/env bash
# make test: every package once, under the race detector, in three phases.
#
# A fresh machine spends most of make test compiling, on two cores; what it
# builds is built once and shared where it can be, and the builds that share
# nothing take the time the suites spend waiting on their API servers:
#
#   1. the binaries of make test-binaries, with -race, while krew (make
#      test-tools-alone: it cannot share the module's dependencies) builds
#      at the lowest priority;
#   2. every package but those that need the tools and the process suites,
#      under -race; meanwhile helm, kustomize and promtool (make
#      test-tools-shared: tools of go.mod built with -race too, so that they
#      compile only what the binaries do not share with them) build, and
#      the test binaries of phase 3 compile at the lowest priority;
#   3. NO_RACE_PACKAGES without -race (the allocation bounds of the build the
#      receiver ships), then the process suites (PROCESS_SUITES: each starts
#      a dev cluster of its own), one at a time, on the binaries in
#      HOOKRUN_TEST_BIN; beside them, at the lowest priority so that they
#      take only the cores the suites leave idle, the packages that run the
#      tools (TOOL_PACKAGES) under -race.
#
# Environment (the Makefile sets it): TOOL_PACKAGES, PROCESS_SUITES,
# NO_RACE_PACKAGES, GO_TEST_TIMEOUT, GO_TEST_FLAGS, and the tools' paths for
# the tests (HELM, KUSTOMIZE, PROMTOOL, KREW, ...).
set -euo pipefail
: "${TOOL_PACKAGES:?}" "${PROCESS_SUITES:?}" "${NO_RACE_PACKAGES:?}" "${GO_TEST_TIMEOUT:?}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
module=$(go list -m)
start=$(date +%s)
say() { echo "make test: $* ($(($(date +%s) - start))s)"; }
command -v redis-server >/dev/null ||
  say "redis-server is not on PATH: the rate-limit store's specs do not run (hack/install-test-packages.sh installs it)"
command -v chromium >/dev/null ||
  say "chromium is not on PATH: the browser specs of kubectl hookrun ui do not run (hack/install-test-packages.sh installs it)"
# envtest's control planes may start while the cores are busy compiling, and
# phase 3's at the lowest priority: give them longer than envtest's 20 s.
export KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=${KUBEBUILDER_CONTROLPLANE_START_TIMEOUT:-2m}
# A race-built program sleeps a second at its exit by default (so that a race
# in another goroutine can still be reported): every run of the race-built
# helm, promtool, kustomize and kubectl plugin the tests make, and every
# test binary, would pay it (helm alone is run some 50 times). A race found
# before the exit still fails the program.
export GORACE="atexit_sleep_ms=0${GORACE:+ $GORACE}"
# Every package compiled without DWARF (debuggers' tables; stack traces and
# race reports read the Go symbol table, which stays): a cold race build of
# the standard library took 15% less of the cores, the manager's graph 7%.
# Through GOFLAGS, so that every go command of make test (the binaries, the
# tools, the tests, and those the tests run) builds with the same flags and
# shares what it compiles.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-gcflags=all=-dwarf=false"
# Test binaries without DWARF: they link faster (a make test links some 30).
# Without go test's own vet run: it analyses every dependency of every test
# package for its facts, 218 s of the cores' time in a cold run (measured
# with -debug-actiongraph), and make lint runs govet over the module with
# more of its analyzers.
test_flags=(-timeout "$GO_TEST_TIMEOUT" -ldflags=-w -vet=off)

# Background jobs, each in a process group of its own (job control on for
# its start), so that a failed run stops the go builds it started too; wait
# still sees their end. Their output goes to a log, printed when they end.
declare -A logs=() pids=()
# Where phase 3's test binaries are compiled ahead (phase 2), thrown away.
compiled=$(mktemp -d)
jobs_started=()
background() { # NAME COMMAND...: start COMMAND as the background job NAME
  local name=$1
  shift
  logs[$name]=$(mktemp)
  set -m
  "$@" >"${logs[$name]}" 2>&1 &
  set +m
  pids[$name]=$!
  jobs_started+=("$!")
}
finish() { # NAME WHAT: wait for the job NAME; fail the run with its log if it failed
  local rc=0 pid=${pids[$1]}
  wait "$pid" || rc=$?
  # Its group is ended: what it left running goes, and cleanup forgets it
  # (a later group could take its ID).
  kill -- -"$pid" 2>/dev/null || true
  local kept=() job
  for job in "${jobs_started[@]}"; do [[ $job == "$pid" ]] || kept+=("$job"); done
  jobs_started=("${kept[@]}")
  cat "${logs[$1]}"
  if ((rc != 0)); then
    echo "make test: $2 failed" >&2
    exit 1
  fi
}
cleanup() {
  for pid in "${jobs_started[@]}"; do [[ -z $pid ]] || kill -- -"$pid" 2>/dev/null || true; done
  for log in "${logs[@]}"; do rm -f "$log"; done
  rm -rf "$compiled"
}
trap cleanup EXIT

# Phase 2's background compilation, at the lowest priority: the process
# suites' test binaries, and NO_RACE_PACKAGES' without -race.
# shellcheck disable=SC2086 # package lists are words
compile_ahead() {
  nice -n 19 go test -race -c "${test_flags[@]}" -o "$compiled/" $suites
  mkdir -p "$compiled/norace"
  nice -n 19 go test -c "${test_flags[@]}" -o "$compiled/norace/" $NO_RACE_PACKAGES
}

background alone nice -n 19 make --no-print-directory test-tools-alone

# shellcheck disable=SC2086 # flags and package lists are words
{
  exclude=()
  for p in $TOOL_PACKAGES $PROCESS_SUITES; do exclude+=(-e "$module/$p"); done
  suites=$(printf './%s ' $PROCESS_SUITES)
  say "phase 1: the binaries the process suites run (krew builds meanwhile)"
  make --no-print-directory test-binaries

  say "phase 2: every package but the tools' and the process suites', under -race (helm, kustomize and promtool build meanwhile, and the process suites compile)"
  background shared make --no-print-directory test-tools-shared
  # Compiled only: go test in phase 3 finds their packages compiled.
  background compile compile_ahead
  # Listed first, so that a package go list cannot load fails the run
  # (a command substitution in go test's arguments would hide its status).
  packages=$(go list ./... | grep -v -x "${exclude[@]}")
  go test -race "${test_flags[@]}" ${GO_TEST_FLAGS:-} $packages
  finish compile "compiling phase 3's test binaries"
  say "waiting for the tools"
  finish shared "building helm, kustomize and promtool"
  finish alone "building krew"

  say "phase 3: $NO_RACE_PACKAGES without -race, then the process suites, one at a time (and, at the lowest priority, $TOOL_PACKAGES under -race)"
  background tools nice -n 19 go test -race "${test_flags[@]}" ${GO_TEST_FLAGS:-} $(printf './%s ' $TOOL_PACKAGES)
  # In the foreground, not beside the suites: the filter's evaluations stop
  # after 100 ms, and a cold run, at the lowest priority beside the suites,
  # once ran into it. (The tool tests beside it are at the lowest priority.)
  go test "${test_flags[@]}" ${GO_TEST_FLAGS:-} $NO_RACE_PACKAGES
  go test -race -p 1 "${test_flags[@]}" ${GO_TEST_FLAGS:-} $suites
  finish tools "the packages that run the tools"
}
say "passed"
