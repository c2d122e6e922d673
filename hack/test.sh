#!/usr/bin/env bash
# make test: every package once, under the race detector, in three phases.
#
# A fresh machine spends most of make test compiling, on two cores; what it
# builds is built once and shared where it can be, and the builds that share
# nothing take the time the suites spend waiting on their API servers:
#
#   - the tools with dependencies of their own (promtool, krew:
#     make test-tools-alone) build from the start, in the background, at the
#     lowest priority: they take the cores only when the tests leave them;
#   - the binaries of make test-binaries are built first, with -race; then
#     helm and kustomize (make test-tools-shared), which are tools of go.mod
#     built with -race too, so that they compile only what the binaries do
#     not share with them, in the background;
#
#   1. every package but those that need the tools and the process suites,
#      under -race; then the process suites (PROCESS_SUITES: each starts a
#      dev cluster of its own), one at a time, on the binaries in
#      HOOKRUN_TEST_BIN, while NO_RACE_PACKAGES build and run without -race
#      in the background at the lowest priority (the allocation bounds of
#      the build the receiver ships);
#   2. once the tools are built: the packages that run them (TOOL_PACKAGES),
#      under -race.
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
# Test binaries without DWARF: they link faster (a make test links some 40).
test_flags=(-timeout "$GO_TEST_TIMEOUT" -ldflags=-w)

# Background jobs, each in a process group of its own (job control on for
# its start), so that a failed run stops the go builds it started too; wait
# still sees their end. Their output goes to a log, printed when they end.
declare -A logs=() pids=()
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
  jobs_started=("${jobs_started[@]/$pid/}")
  cat "${logs[$1]}"
  if ((rc != 0)); then
    echo "make test: $2 failed" >&2
    exit 1
  fi
}
cleanup() {
  for pid in "${jobs_started[@]}"; do [[ -z $pid ]] || kill -- -"$pid" 2>/dev/null || true; done
  for log in "${logs[@]}"; do rm -f "$log"; done
}
trap cleanup EXIT

background alone nice -n 19 make --no-print-directory test-tools-alone

# shellcheck disable=SC2086 # flags and package lists are words
{
  exclude=()
  for p in $TOOL_PACKAGES $PROCESS_SUITES; do exclude+=(-e "$module/$p"); done
  say "phase 1: the binaries the process suites run (promtool and krew build meanwhile)"
  make --no-print-directory test-binaries
  background shared make --no-print-directory test-tools-shared
  say "phase 1: every package but the tools' and the process suites', under -race (helm and kustomize build meanwhile)"
  # Listed first, so that a package go list cannot load fails the run
  # (a command substitution in go test's arguments would hide its status).
  packages=$(go list ./... | grep -v -x "${exclude[@]}")
  go test -race "${test_flags[@]}" ${GO_TEST_FLAGS:-} $packages
  say "phase 1: the process suites, one at a time (and $NO_RACE_PACKAGES without -race meanwhile)"
  background norace nice -n 19 go test "${test_flags[@]}" ${GO_TEST_FLAGS:-} $NO_RACE_PACKAGES
  go test -race -p 1 "${test_flags[@]}" ${GO_TEST_FLAGS:-} $(printf './%s ' $PROCESS_SUITES)
  finish norace "go test without -race"

  say "waiting for the tools"
  finish shared "building helm and kustomize"
  finish alone "building promtool and krew"
  say "phase 2: the packages that run the tools, under -race"
  go test -race "${test_flags[@]}" ${GO_TEST_FLAGS:-} $(printf './%s ' $TOOL_PACKAGES)
}
say "passed"
