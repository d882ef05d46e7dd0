#!/usr/bin/env bash
# Runs every fuzz target in pkg/nmstate for a short time each: a smoke run for
# `make test`, not a fuzzing campaign. The seed corpora in
# pkg/nmstate/testdata/fuzz/ also run as plain tests with `go test`.
#
#   FUZZTIME       how long each target runs (default 1500x: executions, about
#                  5 to 20 s here; any -fuzztime value). A count, not a
#                  duration: with a duration, Go 1.26's fuzz coordinator can
#                  report its own deadline as a failure ("context deadline
#                  exceeded", no input written; golang/go#75804, fixed in Go
#                  1.27), which a loaded machine hits.
#   FUZZ_PARALLEL  fuzzing workers per target (default 1: the machine is shared)
#   FUZZ_MINIMIZE  time spent minimizing each new input (default 5s; go's is 60s,
#                  which would eat a short run)
#
# A failing input is written to pkg/nmstate/testdata/fuzz/<Target>/ by go test;
# commit it with the fix, so that it stays in the seed corpus.
set -euo pipefail

cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-1500x}"
parallel="${FUZZ_PARALLEL:-1}"
minimize="${FUZZ_MINIMIZE:-5s}"
pkg=./pkg/nmstate

targets="$(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)"
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets found in $pkg" >&2
	exit 1
fi
for target in $targets; do
	echo "fuzz: $target for $fuzztime"
	go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" -parallel "$parallel" "$pkg"
done
