#!/bin/sh
# A/A runs: the same build, nothing changed between runs, N times back to back; how often
# what one run prints holds for the next. For BENCHMARKS.md (docs/method.md, "The honest
# uncertainty"). Per binary and overall:
#  (a) coverage: of every row and ordered pair of runs (i, j), how often run j's score
#      lies inside run i's printed interval: boardbench's honest one (boardbench.error)
#      and, beside it, JMH's (scoreError), for comparison;
#  (b) false verdicts: bb-compare of each run against the next, the rows it calls
#      `faster` or `slower` (every row is A/A: each is one);
#  (c) each answer figure's max/min over the runs: an answer line's numbers (not its
#      ± nor the precision line) where the line reads the same in every run but for
#      them (the worst, and the median);
#  (d) the time each run took, beside JMH's default for the same rows (5 forks of 5
#      warm-up and 5 measured iterations of 10 s: 500 s a row).
# Usage: scripts/bench-aa.sh [--quick | --standard] [--only zstd,ipc,...] N
#   (N >= 2; default --standard). The runs are kept in $AA_DIR (default a temporary
#   directory, removed after); AA_REUSE=1 reads the N runs already kept there instead
#   of running them (to compare again with another bb-compare). Prints markdown.
set -eu

profile=--standard
only=
while [ $# -gt 1 ]; do
    case $1 in
        --quick | --standard) profile=$1 ;;
        --only) only=$2; shift ;;
        *) break ;;
    esac
    shift
done
[ $# -eq 1 ] || { echo "usage: bench-aa.sh [--quick | --standard] [--only zstd,ipc,...] N" >&2; exit 2; }
runs=$1
case $runs in
    '' | *[!0-9]*) echo "bench-aa.sh: N '$runs': expected a number of runs, 2 or more" >&2; exit 2 ;;
esac
[ "$runs" -ge 2 ] || { echo "bench-aa.sh: N $runs: A/A needs 2 runs or more" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
bindir=${BB_BIN_DIR:-$here/../target/release}
[ -x "$bindir/bb-compare" ] || { echo "bench-aa.sh: no bb-compare in $bindir (make build)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench-aa.sh: python3 is needed for the figures" >&2; exit 1; }
if [ -n "${AA_DIR:-}" ]; then
    dir=$AA_DIR
    mkdir -p "$dir"
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi

load() { cut -d' ' -f1 /proc/loadavg; }
if [ -n "${AA_REUSE:-}" ]; then
    [ -s "$dir/runs.txt" ] || { echo "bench-aa.sh: AA_REUSE: no runs kept in $dir" >&2; exit 2; }
    runs=$(wc -l <"$dir/runs.txt")
else
echo "bench-aa: $runs runs of run-all.sh $profile${only:+ --only $only}, into $dir" >&2
: >"$dir/runs.txt"
for i in $(seq 1 "$runs"); do
    start=$(date +%s)
    before=$(load)
    # shellcheck disable=SC2086
    BB_BIN_DIR=$bindir "$here/run-all.sh" $profile ${only:+--only "$only"} --out "$dir/run$i" \
        >"$dir/run$i.out" 2>"$dir/run$i.err" || echo "bench-aa: run $i: run-all failed (its results are used as they are)" >&2
    res=$(sed -n 's/^results: //p' "$dir/run$i.out" | tail -n 1)
    echo "$i $res $(($(date +%s) - start)) $before $(load)" >>"$dir/runs.txt"
    echo "bench-aa: run $i of $runs in $(($(date +%s) - start)) s (load $before -> $(load))" >&2
done
fi
# bb-compare of each run against the next, every binary's file.
i=1
while [ $i -lt "$runs" ]; do
    a=$(awk -v i=$i '$1 == i { print $2 }' "$dir/runs.txt")
    b=$(awk -v i=$((i + 1)) '$1 == i { print $2 }' "$dir/runs.txt")
    "$bindir/bb-compare" --format json "$a" "$b" >"$dir/compare$i.json" 2>/dev/null || true
    i=$((i + 1))
done

python3 - "$dir" "$profile" <<'EOF'
import glob, json, os, re, statistics, sys

root, profile = sys.argv[1], sys.argv[2].lstrip("-")
runs = []
for line in open(os.path.join(root, "runs.txt")):
    i, res, took, before, after = line.split()
    runs.append({"dir": res, "took": int(took), "load": (before, after)})

def entries(res):
    out = {}
    for path in glob.glob(os.path.join(res, "bb-*.json")):
        binary = os.path.basename(path)[:-5]
        try:
            doc = json.load(open(path))
        except ValueError:
            continue
        for e in doc:
            key = (e["benchmark"], e["mode"], json.dumps(e.get("params", {}), sort_keys=True))
            pm, ours = e["primaryMetric"], e.get("boardbench", {})
            num = lambda v: float(v) if v not in (None, "NaN") else float("nan")
            out[key] = (binary, num(pm["score"]), num(pm["scoreError"]), num(ours.get("error")))
    return out

def answers(res):
    """Each binary's answer lines, from its log-free summary (the text after the marker)."""
    out = {}
    text = open(os.path.join(res, "summary.txt")).read() if os.path.exists(os.path.join(res, "summary.txt")) else ""
    for block in re.split(r"\n(?=== bb-[a-z]+: the answer ==)", text):
        m = re.match(r"== (bb-[a-z]+): the answer ==\n", block)
        if m:
            lines = block[m.end():].split("\n\n")[0].splitlines()
            out[m.group(1)] = [l for l in lines if l.strip() and not l.startswith("==")]
    return out

data = [entries(r["dir"]) for r in runs]
binaries = sorted({b for d in data for (b, *_ ) in d.values()})
def share(hits, total):
    return f"{100.0 * hits / total:.1f}% ({hits}/{total})" if total else "-"

print(f"### A/A: {len(runs)} runs of `scripts/run-all.sh --{profile}`, the same build\n")
print("| binary | rows | coverage, honest ± | coverage, JMH's ± | false verdicts | answer figures max/min: worst, median | answer lines changed |")
print("| --- | --- | --- | --- | --- | --- | --- |")
total = {"rows": 0, "honest": [0, 0], "jmh": [0, 0], "false": [0, 0], "spread": [], "changed": 0}

# False verdicts per binary, from bb-compare's JSON (rows named bb.<binary>.*).
verdicts = {}
for path in sorted(glob.glob(os.path.join(root, "compare*.json"))):
    try:
        doc = json.load(open(path))
    except ValueError:
        continue
    for row in doc.get("rows", []):
        binary = "bb-" + row["benchmark"].split(".")[1]
        for cell in row["results"][1:]:
            if cell and cell.get("verdict"):
                v = verdicts.setdefault(binary, [0, 0])
                v[0] += cell["verdict"] in ("faster", "slower")
                v[1] += 1

answer_runs = [answers(r["dir"]) for r in runs]
for binary in binaries:
    keys = sorted({k for d in data for k, v in d.items() if v[0] == binary})
    honest, jmh = [0, 0], [0, 0]
    for k in keys:
        for i, di in enumerate(data):
            for j, dj in enumerate(data):
                if i == j or k not in di or k not in dj:
                    continue
                _, si, ji, hi = di[k]
                sj = dj[k][1]
                for tally, err in ((honest, hi), (jmh, ji)):
                    if err == err:  # not NaN
                        tally[0] += abs(sj - si) <= err
                        tally[1] += 1
    # Answer figures: lines that read the same but for their numbers, in every run; a
    # line that reads otherwise in some run (a verdict turned, a line come or gone) is
    # counted as changed.
    spreads, changed = [], 0
    # An uncertainty (`±4.1%`) is no answer figure, nor is the precision line.
    per_run = [[re.sub(r"±[0-9.]+%", "±", l) for l in a.get(binary, []) if not l.startswith("precision:")]
               for a in answer_runs]
    number = re.compile(r"[0-9]+(?:\.[0-9]+)?")
    shape = lambda line: number.sub("#", line)
    shapes = [[shape(l) for l in lines] for lines in per_run]
    seen = []
    for lines in shapes:
        for s in lines:
            if s not in seen:
                seen.append(s)
    for s in seen:
        found = [next((l for l in lines if shape(l) == s), None) for lines in per_run]
        if any(f is None for f in found):
            changed += 1
            continue
        for figure in zip(*[[float(x) for x in number.findall(l)] for l in found]):
            if min(figure) > 0:
                spreads.append(max(figure) / min(figure))
    v = verdicts.get(binary, [0, 0])
    worst = f"{max(spreads):.2f}, {statistics.median(spreads):.2f}" if spreads else "-"
    print(f"| {binary} | {len(keys)} | {share(*honest)} | {share(*jmh)} | {share(*v)} | {worst} | {changed} |")
    total["changed"] += changed
    total["rows"] += len(keys)
    for name, t in (("honest", honest), ("jmh", jmh), ("false", v)):
        total[name][0] += t[0]
        total[name][1] += t[1]
    total["spread"] += spreads
worst = f"{max(total['spread']):.2f}, {statistics.median(total['spread']):.2f}" if total["spread"] else "-"
print(f"| **all** | {total['rows']} | {share(*total['honest'])} | {share(*total['jmh'])} | {share(*total['false'])} | {worst} | {total['changed']} |")
# How far a row's score moved between runs: what a one-fork noise band must cover. The
# band judges two one-fork sides in quadrature (√2 its width), so the band that holds
# 99% of A/A pairs is the 99th percentile of |ln(s_j / s_i)| over √2.
import math
moves = sorted(
    abs(math.log(dj[k][1] / di[k][1]))
    for i, di in enumerate(data) for j, dj in enumerate(data) if i < j
    for k in di if k in dj and di[k][1] > 0 and dj[k][1] > 0
)
if moves:
    q = lambda p: moves[min(len(moves) - 1, int(p * len(moves)))]
    print()
    print(f"A row's score between two runs moved by a median ×{math.exp(q(0.5)):.3f}, p90 ×{math.exp(q(0.9)):.3f}, "
          f"p99 ×{math.exp(q(0.99)):.3f}, max ×{math.exp(moves[-1]):.3f} ({len(moves)} pairs); a one-fork band "
          f"holding 99% of them: ±{100 * q(0.99) / math.sqrt(2):.0f}%.")
took = [r["took"] for r in runs]
jmh_default = 500 * max(len(d) for d in data)
print()
print(f"Each run took {min(took)}-{max(took)} s (median {statistics.median(took):.0f} s); "
      f"JMH's default (5 forks × (5 + 5) × 10 s) for the same {max(len(d) for d in data)} rows: "
      f"{jmh_default} s ({jmh_default / 3600:.1f} h). Load before and after each run: "
      + ", ".join(f"{r['load'][0]}->{r['load'][1]}" for r in runs) + ".")
EOF
