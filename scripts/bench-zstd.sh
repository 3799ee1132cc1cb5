#!/bin/sh
# bb-zstd against its reference, in one run on the same input, for BENCHMARKS.md:
#  1. single thread, level 3: `zstd -b3` (the zstd CLI's in-memory benchmark) against
#     `bb-zstd --threads 1 --level 3`, compress and decompress MB/s, ROUNDS rounds
#     alternating the two, medians and the median of the per-round ratios. The same
#     bytes on both sides: a compress job feeds the encoder the input twice, so the CLI
#     compresses the input concatenated with itself; a decompress job decodes the
#     input's frame twice, so the CLI decompresses the input's frame;
#  2. the thread sweep 1..cores with speedup and efficiency;
#  3. the original's shape: THREADS=2 GUESSES=1000, one cold shot, wall/user/sys/cpu%,
#     with no lock and with the global lock (--lock none,global);
#  4. startup time of `bb-zstd --help` against `true`.
# Usage: scripts/bench-zstd.sh [INPUT] (default ../shared/data/city.json). Prints markdown.
set -eu

INPUT=${1:-../shared/data/city.json}
BIN=${BIN:-target/release/bb-zstd}
ROUNDS=${ROUNDS:-5}
CORES=$(nproc)
[ -x "$BIN" ] || { echo "bench-zstd: $BIN is missing; run make build" >&2; exit 1; }
[ -r "$INPUT" ] || { echo "bench-zstd: cannot read $INPUT" >&2; exit 1; }
command -v zstd >/dev/null || { echo "bench-zstd: the zstd CLI is missing (scripts/setup.sh bench)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# The value of column 5 (Score) in bb-zstd's CSV for the row named $1.
csv_score() { awk -F, -v name="\"$1\"" '$1 == name { print $5; exit }' "$2"; }

echo "### Single thread, level 3, against \`zstd -b3\`"
echo
cat "$INPUT" "$INPUT" >"$tmp/doubled"
echo "Input: \`$(basename "$INPUT")\` ($(wc -c <"$INPUT") bytes). $ROUNDS rounds, each running \`zstd -b3 -i3\` on the input"
echo "written twice (the bytes a compress job feeds its encoder: write, flush, write, finish) for compression,"
echo "\`zstd -b3 -i3\` on the input for decompression (a decompress job decodes that frame twice), then"
echo "\`bb-zstd --threads 1 --level 3 --jobs 20 --forks 0 --warmup 1 --warmup-time 1s --iterations 3 --time 1s\`."
echo "MB/s counts uncompressed bytes on both sides."
echo
echo "| round | zstd -b3 compress MB/s (input ×2) | bb-zstd compress MB/s | ratio | zstd -b3 decompress MB/s | bb-zstd decompress MB/s | ratio |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for r in $(seq 1 "$ROUNDS"); do
    # The zstd CLI's result line: "3#name : in -> out (xR), C MB/s, D MB/s".
    cli_speed() { zstd -b3 -i3 "$1" 2>&1 | tr '\r' '\n' | grep 'MB/s,' | tail -n 1 |
        awk -v n="$2" '{ k = 0; for (i = 2; i <= NF; i++) if ($i ~ /^MB\/s/ && ++k == n) { print $(i - 1); exit } }'; }
    c_cli=$(cli_speed "$tmp/doubled" 1)
    d_cli=$(cli_speed "$INPUT" 2)
    "$BIN" --input "$INPUT" --threads 1 --level 3 --jobs 20 --forks 0 --warmup 1 --warmup-time 1s \
        --iterations 3 --time 1s --format csv >"$tmp/bb.csv" 2>/dev/null
    c_bb=$(csv_score "bb.zstd.compress:MB/s" "$tmp/bb.csv")
    d_bb=$(csv_score "bb.zstd.decompress:MB/s" "$tmp/bb.csv")
    c_ratio=$(awk -v a="$c_bb" -v b="$c_cli" 'BEGIN { printf "%.3f", a / b }')
    d_ratio=$(awk -v a="$d_bb" -v b="$d_cli" 'BEGIN { printf "%.3f", a / b }')
    printf '| %s | %s | %.1f | %s | %s | %.1f | %s |\n' "$r" "$c_cli" "$c_bb" "$c_ratio" "$d_cli" "$d_bb" "$d_ratio"
    echo "$c_cli $c_bb $c_ratio $d_cli $d_bb $d_ratio" >>"$tmp/rounds"
done
col() { awk -v c="$1" '{ print $c }' "$tmp/rounds" | median; }
printf '| **median** | %s | %.1f | **%s** | %s | %.1f | **%s** |\n' "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)"
echo

echo "### Thread sweep 1..$CORES (level 3, input \`$(basename "$INPUT")\`)"
echo
threads=$(seq -s, 1 "$CORES")
"$BIN" --input "$INPUT" --threads "$threads" --level 3 --jobs 20 --forks 1 --warmup 1 --warmup-time 1s \
    --iterations 5 --time 1s --format csv >"$tmp/sweep.csv" 2>/dev/null
echo "| op | threads | jobs/s | MB/s | speedup | efficiency |"
echo "| --- | --- | --- | --- | --- | --- |"
for op in compress decompress; do
    for t in $(seq 1 "$CORES"); do
        awk -F, -v op="$op" -v t="$t" '
            NR == 1 { for (i = 1; i <= NF; i++) if ($i == "\"Param: threads\"") c = i }
            $c == "\"" t "\"" && $1 == "\"bb.zstd." op "\""            { jobs = $5 }
            $c == "\"" t "\"" && $1 == "\"bb.zstd." op ":MB/s\""       { mbs = $5 }
            $c == "\"" t "\"" && $1 == "\"bb.zstd." op ":speedup\""    { sp = $5 }
            $c == "\"" t "\"" && $1 == "\"bb.zstd." op ":efficiency\"" { ef = $5 }
            END { if (sp == "") { sp = 1; ef = 1 }
                  printf "| %s | %s | %.1f | %.1f | %.2f | %.2f |\n", op, t, jobs, mbs, sp, ef }' "$tmp/sweep.csv"
    done
done
echo

echo "### The original's shape: \`THREADS=2 GUESSES=1000 bb-zstd --input $(basename "$INPUT") --lock none,global\`, one cold shot"
echo
echo "Its two sides: no lock, and one global lock around each streaming call (Ruby's GVL before the patch)."
echo
echo '```'
THREADS=2 GUESSES=1000 "$BIN" --input "$INPUT" --mode ss --warmup 0 --iterations 1 --forks 0 --lock none,global 2>/dev/null |
    grep '^bb.zstd.*): user'
echo '```'
echo

echo "### Startup: \`bb-zstd --help\` against \`true\`, 200 runs each, median of 5 batches"
echo
per_run() {
    for b in 1 2 3 4 5; do
        start=$(date +%s%N)
        i=0
        while [ $i -lt 200 ]; do "$@" >/dev/null; i=$((i + 1)); done
        end=$(date +%s%N)
        echo $(((end - start) / 200000))
    done | median
}
t_bb=$(per_run "$BIN" --help)
t_true=$(per_run /bin/true)
echo "| command | µs per run (median) |"
echo "| --- | --- |"
echo "| \`bb-zstd --help\` | $t_bb |"
echo "| \`/bin/true\` | $t_true |"
