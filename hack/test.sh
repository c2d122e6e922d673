#!/usr/bin/env bash
# make test: every package once, under the race detector, in three phases.
#
# The tools only the chart's and the krew tests run (helm, kustomize,
# promtool, krew: TEST_TOOLS, a make target) are built from source in the
# background while the other packages compile and run: their suites spend
# most of their time waiting on API servers, and the tools' builds (about
# 12 minutes of two cores on a fresh machine, promtool and helm 6 each) take
# that idle time instead of running first.
#
#   1. the binaries of make test-binaries; every package but those that need
#      the tools and the process suites;
#      then the process suites (PROCESS_SUITES: each starts a dev cluster of
#      its own), one at a time, on the binaries in HOOKRUN_TEST_BIN;
#   2. once the tools are built: the packages that run them (TOOL_PACKAGES);
#   3. NO_RACE_PACKAGES once more without -race (allocation bounds of the
#      build the receiver ships).
#
# Environment (the Makefile sets it): TEST_TOOLS_TARGET, TOOL_PACKAGES,
# PROCESS_SUITES, NO_RACE_PACKAGES, GO_TEST_TIMEOUT, GO_TEST_FLAGS, and the
# tools' paths for the tests (HELM, KUSTOMIZE, PROMTOOL, KREW, ...).
set -euo pipefail
: "${TEST_TOOLS_TARGET:?}" "${TOOL_PACKAGES:?}" "${PROCESS_SUITES:?}" "${NO_RACE_PACKAGES:?}" "${GO_TEST_TIMEOUT:?}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
module=$(go list -m)
start=$(date +%s)
say() { echo "make test: $* ($(($(date +%s) - start))s)"; }

tools_log=$(mktemp)
# In a process group of its own (job control on for this one job), so that
# a failed run stops the go builds it started too; wait still sees its end.
set -m
make --no-print-directory "$TEST_TOOLS_TARGET" >"$tools_log" 2>&1 &
tools=$!
set +m
trap 'kill -- -"$tools" 2>/dev/null || true; rm -f "$tools_log"' EXIT

# shellcheck disable=SC2086 # flags and package lists are words
{
  exclude=()
  for p in $TOOL_PACKAGES $PROCESS_SUITES; do exclude+=(-e "$module/$p"); done
  say "phase 1: the binaries the process suites run (the tools build meanwhile)"
  make --no-print-directory test-binaries
  say "phase 1: every package but the tools' and the process suites', under -race"
  # Listed first, so that a package go list cannot load fails the run
  # (a command substitution in go test's arguments would hide its status).
  packages=$(go list ./... | grep -v -x "${exclude[@]}")
  go test -race -timeout "$GO_TEST_TIMEOUT" ${GO_TEST_FLAGS:-} $packages
  say "phase 1: the process suites, one at a time"
  go test -race -p 1 -timeout "$GO_TEST_TIMEOUT" ${GO_TEST_FLAGS:-} $(printf './%s ' $PROCESS_SUITES)

  say "waiting for the tools"
  if ! wait "$tools"; then
    cat "$tools_log" >&2
    echo "make test: building the tools failed" >&2
    exit 1
  fi
  cat "$tools_log"
  say "phase 2: the packages that run the tools, under -race"
  go test -race -timeout "$GO_TEST_TIMEOUT" ${GO_TEST_FLAGS:-} $(printf './%s ' $TOOL_PACKAGES)
  say "phase 3: without -race: $NO_RACE_PACKAGES"
  go test -timeout "$GO_TEST_TIMEOUT" ${GO_TEST_FLAGS:-} $NO_RACE_PACKAGES
}
say "passed"
