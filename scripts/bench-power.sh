#!/bin/sh
# Power: is a real 10% difference seen? N trials, each bb-zstd on its default input and
# on one 10% larger (every job 10% more work, so 10% fewer jobs a second), one after the
# other, compared by bb-compare with --ignore-params input; per trial, how many of its
# rows bb-compare calls `slower`. The other side of scripts/bench-aa.sh (which counts
# what an identical pair is called). For BENCHMARKS.md.
# Usage: scripts/bench-power.sh [--quick | --standard] N (default --standard). Prints
# markdown on stdout.
set -eu

profile=--standard
case ${1:-} in --quick | --standard) profile=$1; shift ;; esac
[ $# -eq 1 ] || { echo "usage: bench-power.sh [--quick | --standard] N" >&2; exit 2; }
trials=$1
case $trials in
    '' | *[!0-9]* | 0) echo "bench-power.sh: N '$trials': expected a number of trials" >&2; exit 2 ;;
esac
bindir=${BB_BIN_DIR:-$(cd "$(dirname "$0")/.." && pwd)/target/release}
[ -x "$bindir/bb-zstd" ] && [ -x "$bindir/bb-compare" ] || { echo "bench-power.sh: no bb-zstd or bb-compare in $bindir (make build)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

size=1779136                                  # city.json's, the default corpus
larger=$((size + size / 10))
echo "### Power: bb-zstd \`$profile\` on ${size} bytes against ${larger} (10% larger), $trials trials"
echo
echo "| trial | rows called slower | faster | same | noise | load before |"
echo "| --- | --- | --- | --- | --- | --- |"
all=0
seen=0
for t in $(seq 1 "$trials"); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$bindir/bb-zstd" $profile --size "$size" --output "$dir/a$t.json" --format json >/dev/null 2>&1
    "$bindir/bb-zstd" $profile --size "$larger" --output "$dir/b$t.json" --format json >/dev/null 2>&1
    "$bindir/bb-compare" --ignore-params input --format json "$dir/a$t.json" "$dir/b$t.json" \
        >"$dir/c$t.json" 2>/dev/null || true
    counts=$(python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
n = {"slower": 0, "faster": 0, "same": 0, "noise": 0}
for row in v["rows"]:
    cell = row["results"][1]
    if cell and cell.get("verdict") in n:
        n[cell["verdict"]] += 1
print(n["slower"], n["faster"], n["same"], n["noise"], len(v["rows"]))
' "$dir/c$t.json")
    set -- $counts
    echo "| $t | $1 of $5 | $2 | $3 | $4 | $load |"
    seen=$((seen + $1))
    all=$((all + $5))
done
echo
echo "A 10% slowdown called \`slower\` in $seen of $all rows ($(awk -v s="$seen" -v a="$all" 'BEGIN { printf "%.1f", a ? 100 * s / a : 0 }')%)."
