#!/bin/sh
# The board's own noise against a known truth, for BENCHMARKS.md (docs/method.md, "Runs
# apart"): a synthetic row (the fault-injection feature's BB_FAULT_NOISE: every
# invocation spins for US microseconds × e^(run + fork + iteration noise)) run through
# the real harness as bb-zstd's one row, five forks a run. For each run-level noise of
# --levels (with a tenth of it between forks and between iterations) and each
# repetition: a calibration of three runs (bb-compare --calibrate), then --next runs with
# their own run-level draws, each twice: without the profile (an uncalibrated board) and
# with it. Per level and way: how often a run's printed interval holds the truth and the
# next run's score (the aim is 95%; the truth is the spin's cost alone, which the
# harness's own overhead per call biases by a percent or two), how often bb-compare
# calls two consecutive runs different (the aim is at most 1%), and the median printed ±
# beside the 95th percentile of how far the next run moved (the aim: no wider than 1.5
# times it).
# Usage: scripts/bench-noise.sh [--reps N] [--next N] [--levels 0.01,0.05,0.3]
#   (default 5 repetitions of 4 next runs at 0.01, 0.05 and 0.3). The binary:
#   $BB_FAULT_BIN, else target/fault/release/bb-zstd, built (release, with
#   fault-injection) where missing; bb-compare: target/release/bb-compare. Prints markdown.
set -eu

reps=5
next=4
levels="0.01 0.05 0.3"
usage() {
    echo "usage: bench-noise.sh [--reps N] [--next N] [--levels 0.01,0.05,0.3]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
        --reps) [ $# -ge 2 ] || usage; reps=$2; shift ;;
        --next) [ $# -ge 2 ] || usage; next=$2; shift ;;
        --levels) [ $# -ge 2 ] || usage; levels=$(echo "$2" | tr ',' ' '); shift ;;
        *) usage ;;
    esac
    shift
done
for n in "$reps" "$next"; do
    case $n in
        '' | *[!0-9]* | 0) echo "bench-noise.sh: '$n': expected a number, 1 or more" >&2; exit 2 ;;
    esac
done
[ "$next" -ge 2 ] || { echo "bench-noise.sh: --next $next: two runs at least, to compare" >&2; exit 2; }
for l in $levels; do
    case $l in
        '' | *[!0-9.]*) echo "bench-noise.sh: --levels '$l': expected a fraction (0.05)" >&2; exit 2 ;;
    esac
done
command -v python3 >/dev/null || { echo "bench-noise.sh: python3 is needed for the figures" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
root=$here/..
bin=${BB_FAULT_BIN:-$root/target/fault/release/bb-zstd}
if [ -z "${BB_FAULT_BIN:-}" ]; then
    (cd "$root" && CARGO_TARGET_DIR=target/fault cargo build --release --features fault-injection --bin bb-zstd) >&2
fi
grep -q BB_FAULT_NOISE "$bin" || {
    echo "bench-noise.sh: $bin is not a fault-injection build with BB_FAULT_NOISE" >&2
    exit 2
}
compare=$root/target/release/bb-compare
[ -x "$compare" ] || { echo "bench-noise.sh: no $compare (make build)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
us=2000
seed=1000

one_run() { # LEVEL SEED OUT [PROFILE]
    noise="$us,$1,$(python3 -c "print($1 / 10)"),$(python3 -c "print($1 / 10)")"
    BB_FAULT_NOISE=$noise BB_FAULT_RUN=$2 BB_NOISE=${4:-} XDG_CONFIG_HOME=$dir/none \
        "$bin" --size 16k --op compress --threads 1 --lock none --forks 5 --warmup 0 \
        --iterations 2 --time 40ms --precision off --idle-wait 0 --format json \
        --output "$3" >/dev/null 2>&1
}

start=$(date +%s)
for level in $levels; do
    rep=1
    while [ "$rep" -le "$reps" ]; do
        d=$dir/$level-$rep
        mkdir -p "$d"
        for i in 1 2 3; do
            seed=$((seed + 1))
            one_run "$level" "$seed" "$d/cal$i.json"
        done
        "$compare" --calibrate "$d/noise.json" "$d/cal1.json" "$d/cal2.json" "$d/cal3.json" >/dev/null
        i=1
        while [ "$i" -le "$next" ]; do
            seed=$((seed + 1))
            one_run "$level" "$seed" "$d/without$i.json"
            one_run "$level" "$seed" "$d/with$i.json" "$d/noise.json"
            i=$((i + 1))
        done
        for way in without with; do
            i=1
            while [ "$i" -lt "$next" ]; do
                "$compare" --format json "$d/$way$i.json" "$d/$way$((i + 1)).json" \
                    >"$d/compare-$way$i.json" 2>/dev/null || true
                i=$((i + 1))
            done
        done
        rep=$((rep + 1))
    done
done
echo "bench-noise: $(($(date +%s) - start)) s" >&2

python3 - "$dir" "$us" <<'EOF'
import glob, json, os, statistics, sys

root, us = sys.argv[1], float(sys.argv[2])
truth = 1e6 / us
print("| run-level noise | way | holds the truth | holds the next run | false verdicts | median ± | p95 moved (next run) | ± / p95 | run floor measured |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
levels = sorted({os.path.basename(d).split("-")[0] for d in glob.glob(f"{root}/*-*")}, key=float)
def runs_of(d, way):
    files = sorted(glob.glob(f"{d}/{way}[0-9]*.json"), key=lambda f: int(f[len(f"{d}/{way}"):-5]))
    out = []
    for f in files:
        e = json.load(open(f))[0]
        out.append((e["primaryMetric"]["score"], e["boardbench"]["error"]))
    return out
for level in levels:
    for way in ("without", "with"):
        held = runs = called = compared = held_next = pairs = 0
        errors, moved, floors = [], [], []
        for d in glob.glob(f"{root}/{level}-*"):
            scores = runs_of(d, way)
            for score, error in scores:
                runs += 1
                held += abs(score - truth) <= error
                errors.append(error / score)
            for (a, ea), (b, _) in zip(scores, scores[1:]):
                pairs += 1
                held_next += abs(b - a) <= ea
                moved.append(abs(b - a) / a)
            for f in glob.glob(f"{d}/compare-{way}[0-9]*.json"):
                text = open(f).read()
                compared += 1
                called += text.count('"verdict" : "slower"') + text.count('"verdict" : "faster"')
            if way == "with":
                floors.append(json.load(open(f"{d}/noise.json"))["binaries"]["bb-zstd"]["runFloor"])
        if not runs:
            continue
        p95 = sorted(moved)[min(len(moved) - 1, int(0.95 * len(moved)))]
        med = statistics.median(errors)
        floor = f"{100 * statistics.median(floors):.1f}% (median)" if floors else "none"
        print(f"| {100 * float(level):g}% | {way} calibration | {100 * held / runs:.0f}% ({held}/{runs}) "
              f"| {100 * held_next / pairs:.0f}% ({held_next}/{pairs}) | {called}/{compared} "
              f"| ±{100 * med:.1f}% | {100 * p95:.1f}% | {med / p95 if p95 else float('nan'):.2f} | {floor} |")
EOF
