#!/bin/sh
# The power of `--against` (docs/ab.md), for BENCHMARKS.md: how often an A/B run calls a
# known slowdown, and how often it calls a byte copy different. The slower "build" is
# this very binary with the fault-injection feature's BB_FAULT_SLOWER=P (every
# invocation spins for P% of its own time), run through a wrapper script: the same
# compile, so the same code layout, and a difference of exactly P%. For each P of
# --slowdowns (0 is a byte copy of the binary) and each repetition, one run of
#   bb-zstd --threads 1 --lock none --op compress --against OTHER
# at the profile given; then, per P: the runs that called the other build slower (the
# right call for P > 0, a false one for 0), the median ratio measured, the median
# smallest change a run could see (`this run could see N% or more`), and the median
# seconds a run took.
# Usage: scripts/bench-ab-power.sh [--quick | --standard] [--reps N] [--slowdowns 0,2,5,10]
#   (default --standard, 7 repetitions, 0,2,5,10). The binary: $BB_FAULT_BIN, else
#   target/fault/release/bb-zstd, built (release, with fault-injection) where it is
#   missing; one without the fault is refused, since its table would show no slowdown.
#   $AB_FLAGS are added to every run. Prints markdown.
set -eu

profile=--standard
reps=7
slowdowns="0 2 5 10"
usage() {
    echo "usage: bench-ab-power.sh [--quick | --standard] [--reps N] [--slowdowns 0,2,5,10]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
        --quick | --standard) profile=$1 ;;
        --reps) [ $# -ge 2 ] || usage; reps=$2; shift ;;
        --slowdowns) [ $# -ge 2 ] || usage; slowdowns=$(echo "$2" | tr ',' ' '); shift ;;
        *) usage ;;
    esac
    shift
done
case $reps in
    '' | *[!0-9]*) echo "bench-ab-power.sh: --reps '$reps': expected a number, 1 or more" >&2; exit 2 ;;
esac
for p in $slowdowns; do
    case $p in
        '' | *[!0-9]*) echo "bench-ab-power.sh: --slowdowns '$p': expected whole percents" >&2; exit 2 ;;
    esac
done
command -v python3 >/dev/null || { echo "bench-ab-power.sh: python3 is needed for the figures" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
root=$here/..
bin=${BB_FAULT_BIN:-$root/target/fault/release/bb-zstd}
if [ -z "${BB_FAULT_BIN:-}" ] && [ ! -x "$bin" ]; then
    (cd "$root" && CARGO_TARGET_DIR=target/fault cargo build --release --features fault-injection --bin bb-zstd) >&2
fi
[ -x "$bin" ] || { echo "bench-ab-power.sh: $bin: not an executable" >&2; exit 2; }
grep -q BB_FAULT_SLOWER "$bin" || {
    echo "bench-ab-power.sh: $bin is not a fault-injection build (BB_FAULT_SLOWER unknown to it)" >&2
    exit 2
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
cp "$bin" "$dir/copy-bb-zstd"
for p in $slowdowns; do
    other=$dir/copy-bb-zstd
    if [ "$p" -gt 0 ]; then
        other=$dir/slower-$p
        printf '#!/bin/sh\nBB_FAULT_SLOWER=%s exec "%s" "$@"\n' "$p" "$bin" > "$other"
        chmod +x "$other"
    fi
    i=1
    while [ "$i" -le "$reps" ]; do
        echo "bench-ab-power.sh: $p%, repetition $i of $reps" >&2
        start=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$bin" $profile --threads 1 --lock none --op compress --against "$other" \
            ${AB_FLAGS:-} --format json --output "$dir/p$p-r$i.json" 2>/dev/null >/dev/null
        end=$(date +%s.%N)
        echo "$p $i $start $end" >> "$dir/times"
        i=$((i + 1))
    done
done
python3 - "$dir" "$profile" $slowdowns <<'PY'
import json, sys, statistics as st
d, profile, slowdowns = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]
times = {}
for line in open(f"{d}/times"):
    p, i, a, b = line.split()
    times.setdefault(int(p), []).append(float(b) - float(a))
print(f"| built-in slowdown | called slower | called faster | median ratio | median could see | median s a run |")
print("| --- | --- | --- | --- | --- | --- |")
for p in slowdowns:
    rows = []
    for i in range(1, len(times[p]) + 1):
        entry = json.load(open(f"{d}/p{p}-r{i}.json"))[0]
        rows.append(entry["boardbench"]["against"])
    slower = sum(r["verdict"] == "faster" for r in rows)  # this build faster: the other slower
    faster = sum(r["verdict"] == "slower" for r in rows)
    what = "0 (a byte copy)" if p == 0 else f"{p}%"
    print(f"| {what} | {slower} of {len(rows)} | {faster} of {len(rows)} | "
          f"{st.median(r['ratio'] for r in rows):.3f} | "
          f"{100 * st.median(r['smallestChange'] for r in rows):.1f}% | "
          f"{st.median(times[p]):.0f} |")
print(f"\n({profile}, bb-zstd --threads 1 --lock none --op compress; ratio = this "
      f"build's speed over the slower one's)")
PY
