#!/bin/sh
# bb-rpc's latency against throughput on this machine: `--rate sweep` (a closed-loop
# probe of the pipelined client at depth 64, then the open loop at 10% to 100% of it),
# 16-byte echoes, raw codec, over a Unix socket and TCP, ROUNDS times (each round probes
# its own maximum). Prints Markdown for BENCHMARKS.md: per transport and share, the
# medians over the rounds of the offered and achieved rates, and of the corrected p50,
# p99 and p99.9 over the rounds that held the load. Needs a release build (make build)
# and python3 (standard library only).
#   scripts/bench-rpc-sweep.sh [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-3}
bin=target/release/bb-rpc
[ -x "$bin" ] || { echo "bench-rpc-sweep: $bin is missing: run make build" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
i=1
while [ "$i" -le "$rounds" ]; do
    echo "bench-rpc-sweep: round $i of $rounds" >&2
    $bin --rate sweep --transport unix,tcp --codec raw --payload 16 \
        --format json --output "$out/sweep-$i.json" >/dev/null
    i=$((i + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$out" "$rounds" "$load_before" "$load_after" <<'PY'
import json, statistics, sys
out, rounds, before, after = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rows = {}
for i in range(1, rounds + 1):
    for e in json.load(open(f"{out}/sweep-{i}.json")):
        key = (e["params"]["transport"], e["params"]["load"])
        rows.setdefault(key, []).append(e)

def median(values, fmt):
    return fmt.format(statistics.median(values)) if values else "-"

print(f"{rounds} rounds, load average {before} before and {after} after "
      "(2 cores); latencies in µs, corrected (from each call's due time).")
print()
print("| transport | load | offered calls/s | achieved calls/s | held | p50 | p99 | p99.9 |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for (transport, load), entries in rows.items():
    loads = [e["boardbench"]["offeredLoad"] for e in entries]
    held = [e for e, l in zip(entries, loads) if not l["saturated"]]
    pct = lambda p: [e["primaryMetric"]["scorePercentiles"][p] for e in held]
    print(f"| {transport} | {load} "
          f"| {median([l['targetRate'] for l in loads], '{:.0f}')} "
          f"| {median([l['achievedRate'] for l in loads], '{:.0f}')} "
          f"| {len(held)}/{len(entries)} "
          f"| {median(pct('50.0'), '{:.1f}')} | {median(pct('99.0'), '{:.1f}')} "
          f"| {median(pct('99.9'), '{:.1f}')} |")
PY
