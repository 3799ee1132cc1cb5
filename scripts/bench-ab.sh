#!/bin/sh
# A/B runs (`--against`, docs/ab.md) against sequential runs, for BENCHMARKS.md. Two
# pairs of builds: A/A (this build against a copy of itself) and A/B (this build against
# OTHER, another build of the same source: by default the x86_64 musl build, whose
# allocator and memcpy differ from glibc's). Each repetition, for each pair and each
# binary of --only, runs
#   sequentially: A, then B, each alone; the ratio of their scores per row, and
#                 bb-compare's verdict of B against A;
#   interleaved:  A --against B, one run; the ratio of its pairs and its verdict.
# Then prints, per pair and way: the spread of each row's ratio over the repetitions
# (max/min of the row's ratio, the worst and the median row) and the share of rows
# called a tie; for A/A every verdict other than a tie is a false one.
# Usage: scripts/bench-ab.sh [--quick | --standard] [--only zstd,rpc,...] [--reps N]
#        [--other DIR] [--pairs aa,ab] [--ways sequential,interleaved]
#   (default --quick, --only zstd, 5 repetitions, OTHER target/x86_64-unknown-linux-musl/
#   release, both pairs, both ways). $AB_FLAGS are added to every run (AB_FLAGS="--forks 5"). The runs are kept
#   in $AB_DIR (default a temporary directory, removed after). Prints markdown.
set -eu

profile=--quick
only=zstd
reps=5
pairs="aa ab"
ways="sequential interleaved"
here=$(cd "$(dirname "$0")" && pwd)
other=$here/../target/x86_64-unknown-linux-musl/release
usage() {
    echo "usage: bench-ab.sh [--quick | --standard] [--only zstd,rpc,...] [--reps N] [--other DIR] [--pairs aa,ab] [--ways sequential,interleaved]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
        --quick | --standard) profile=$1 ;;
        --only) [ $# -ge 2 ] || usage; only=$2; shift ;;
        --reps) [ $# -ge 2 ] || usage; reps=$2; shift ;;
        --other) [ $# -ge 2 ] || usage; other=$2; shift ;;
        --pairs) [ $# -ge 2 ] || usage; pairs=$(echo "$2" | tr ',' ' '); shift ;;
        --ways) [ $# -ge 2 ] || usage; ways=$(echo "$2" | tr ',' ' '); shift ;;
        *) usage ;;
    esac
    shift
done
case $reps in
    '' | *[!0-9]*) echo "bench-ab.sh: --reps '$reps': expected a number, 2 or more" >&2; exit 2 ;;
esac
[ "$reps" -ge 2 ] || { echo "bench-ab.sh: --reps $reps: a spread needs 2 repetitions or more" >&2; exit 2; }
bindir=${BB_BIN_DIR:-$here/../target/release}
command -v python3 >/dev/null || { echo "bench-ab.sh: python3 is needed for the figures" >&2; exit 1; }
binaries=$(echo "$only" | tr ',' ' ')
for b in compare $binaries; do
    [ -x "$bindir/bb-$b" ] || { echo "bench-ab.sh: no bb-$b in $bindir (make build)" >&2; exit 1; }
done
for b in $binaries; do
    [ -x "$other/bb-$b" ] || { echo "bench-ab.sh: --other $other has no bb-$b" >&2; exit 2; }
done
if [ -n "${AB_DIR:-}" ]; then
    dir=$AB_DIR
    mkdir -p "$dir"
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi
# A/A's B: the same bytes at another path.
mkdir -p "$dir/copy"
for b in $binaries; do
    cp "$bindir/bb-$b" "$dir/copy/bb-$b"
done

# run NAME BINARY ARGS...: one run into $dir/NAME.json (its text on NAME.out).
run() {
    name=$1 exe=$2
    shift 2
    # shellcheck disable=SC2086
    "$exe" $profile ${AB_FLAGS:-} --output "$dir/$name.json" "$@" >"$dir/$name.out" 2>"$dir/$name.err" ||
        echo "bench-ab: $name failed: $(tail -n 1 "$dir/$name.err")" >&2
}

echo "bench-ab: $reps repetitions of $only, $profile ${AB_FLAGS:-}, into $dir" >&2
start=$(date +%s)
for rep in $(seq 1 "$reps"); do
    for pair in $pairs; do
        case $pair in aa) b_dir=$dir/copy ;; ab) b_dir=$other ;; *) usage ;; esac
        for b in $binaries; do
            case " $ways " in *" sequential "*)
                run "$pair-seq-a-$rep-$b" "$bindir/bb-$b"
                run "$pair-seq-b-$rep-$b" "$b_dir/bb-$b"
                "$bindir/bb-compare" --format json "$dir/$pair-seq-a-$rep-$b.json" "$dir/$pair-seq-b-$rep-$b.json" \
                    >"$dir/$pair-seq-compare-$rep-$b.json" 2>/dev/null || true ;;
            esac
            case " $ways " in *" interleaved "*)
                run "$pair-int-$rep-$b" "$bindir/bb-$b" --against "$b_dir/bb-$b" ;;
            esac
        done
    done
    echo "bench-ab: repetition $rep of $reps after $(($(date +%s) - start)) s" >&2
done

python3 - "$dir" "$reps" "$only" "$profile ${AB_FLAGS:-}" "$other" "$(($(date +%s) - start))" <<'EOF'
import json, math, os, statistics, sys

root, reps, only, flags, other, took = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
binaries = only.split(",")

def load(name):
    try:
        return json.load(open(os.path.join(root, name + ".json")))
    except (OSError, ValueError):
        return None

def key(e):
    return (e["benchmark"], json.dumps(e.get("params", {}), sort_keys=True))

def speed(e):
    s = float(e["primaryMetric"]["score"])
    return s if e["mode"] == "thrpt" else 1.0 / s

def sequential(pair, rep, b):
    """Per row: A's speed over B's, and bb-compare's verdict of B against A."""
    a, bb = load(f"{pair}-seq-a-{rep}-{b}"), load(f"{pair}-seq-b-{rep}-{b}")
    if a is None or bb is None:
        return {}
    theirs = {key(e): e for e in bb}
    verdicts = {}
    compared = load(f"{pair}-seq-compare-{rep}-{b}") or {}
    for row in compared.get("rows", []):
        cell = row["results"][1] if len(row["results"]) > 1 else None
        if cell:
            verdicts[row["benchmark"] + json.dumps(row.get("params", {}), sort_keys=True)] = cell.get("verdict")
    out = {}
    for e in a:
        k = key(e)
        if k in theirs:
            v = verdicts.get(k[0] + k[1])
            tie = v not in ("faster", "slower") if v else None
            out[k] = (speed(e) / speed(theirs[k]), tie)
    return out

def interleaved(pair, rep, b):
    """Per row: the pairs' ratio and whether it is a tie."""
    doc = load(f"{pair}-int-{rep}-{b}")
    out = {}
    for e in doc or []:
        ab = e.get("boardbench", {}).get("against")
        if ab:
            out[key(e)] = (ab["ratio"], ab["verdict"] == "tie")
    return out

print(f"### A/B: `{flags.strip()}`, {reps} repetitions each, {', '.join('bb-' + b for b in binaries)}\n")
print(f"A/B's other build: {other}. The spread is a row's ratio's max/min over the repetitions.\n")
print("| pair | way | rows | spread: worst, median | ties | median ratio |")
print("| --- | --- | --- | --- | --- | --- |")
for pair, way, read in [("aa", "sequential", sequential), ("aa", "interleaved", interleaved),
                        ("ab", "sequential", sequential), ("ab", "interleaved", interleaved)]:
    rows = {}
    kind = "seq-a" if way == "sequential" else "int"
    if not any(os.path.exists(os.path.join(root, f"{pair}-{kind}-1-{b}.json")) for b in binaries):
        continue
    for rep in range(1, reps + 1):
        for b in binaries:
            for k, v in read(pair, rep, b).items():
                rows.setdefault(k, []).append(v)
    spreads = [max(r for r, _ in v) / min(r for r, _ in v) for v in rows.values() if len(v) >= 2]
    judged = [t for v in rows.values() for _, t in v if t is not None]
    ratios = [r for v in rows.values() for r, _ in v]
    spread = f"x{max(spreads):.3f}, x{statistics.median(spreads):.3f}" if spreads else "-"
    ties = f"{100 * sum(judged) / len(judged):.1f}% ({sum(judged)}/{len(judged)})" if judged else "-"
    median = f"{statistics.median(ratios):.3f}" if ratios else "-"
    name = {"aa": "A/A", "ab": "A/B"}[pair]
    print(f"| {name} | {way} | {len(rows)} | {spread} | {ties} | {median} |")
print(f"\n{took} s in all.")
EOF
