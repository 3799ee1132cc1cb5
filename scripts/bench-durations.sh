#!/bin/sh
# How long the suite takes, for BENCHMARKS.md: for each profile, run-all's estimate
# (its --dry-run, summed over the binaries) against the wall time of a real run-all with
# that profile, in one run on this machine, and their ratio. The full profile takes
# hours: it runs only when named.
# Usage: scripts/bench-durations.sh [PROFILE...] (default: quick standard). Prints markdown.
set -eu

profiles=${*:-quick standard}
run_all=$(cd "$(dirname "$0")" && pwd)/run-all.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| profile | estimate (s) | measured wall (s) | measured / estimate |"
echo "| --- | --- | --- | --- |"
for p in $profiles; do
    estimate=$(sh "$run_all" --"$p" --dry-run | sed -n 's/^run-all: .*(\([0-9]*\) s)$/\1/p')
    start=$(date +%s)
    # bb-seek generates its objects in the working directory, as on a board.
    (cd "$tmp" && sh "$run_all" --"$p" --out "$tmp/results" >"$tmp/$p.out" 2>&1) \
        || { echo "bench-durations: run-all --$p failed:" >&2; tail -n 20 "$tmp/$p.out" >&2; exit 1; }
    wall=$(($(date +%s) - start))
    echo "| $p | $estimate | $wall | $(awk -v w="$wall" -v e="$estimate" 'BEGIN { printf "%.2f", w / e }') |"
done
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
