#!/usr/bin/env bash
# make fuzz: runs each fuzz target of the module (every `func FuzzXxx` of a
# _test.go file) with mutation for FUZZ_TIME, one after the other. make test
# runs the same targets' seed corpora (f.Add and testdata/fuzz) as ordinary
# tests; this is the search for new inputs. FUZZ_TIME is an execution count
# (30000x) rather than a duration: with a duration, Go 1.26's fuzz coordinator
# can fail at the deadline with a bare "context deadline exceeded" on a loaded
# machine (golang/go#75804).
set -euo pipefail
: "${FUZZ_TIME:?}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$(date +%s)
targets=0
while IFS= read -r file; do
  for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
    echo "fuzz: $name in $(dirname "$file") for $FUZZ_TIME"
    go test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZ_TIME" "$(dirname "$file")"
    targets=$((targets + 1))
  done
done < <(grep -rl --include='*_test.go' --exclude-dir=bin --exclude-dir=.git '^func Fuzz' . | LC_ALL=C sort)
[ "$targets" -gt 0 ] || { echo "fuzz: no fuzz target found" >&2; exit 1; }
echo "fuzz: $targets targets passed in $(($(date +%s) - start))s"
