#!/bin/sh
# bb-rpc against its floor, in one run on this machine: per transport, a 16-byte echo
# with no RPC layer (bb-rpc's `floor` client: write and read back the same bytes on a
# plain echo server) against `sync` with the raw and msgpack codecs, over ROUNDS rounds;
# then async and future at depth 1, 8, 64 against sync for payloads 16 B, 1 KiB, 64 KiB;
# then the floor and sync pinned to one core and to two. Prints Markdown for
# BENCHMARKS.md. Needs a release build (make build) and python3 (standard library only).
#   scripts/bench-rpc.sh [ROUNDS]
#
# `pipeline` mode: client and server on one CPU (taskset, CPU 1 unless CPU= says), a
# 16-byte echo over a Unix socket, ROUNDS rounds (default 5): sync, async and future at
# depth 64, each against its floor in paired iterations (the raw echo at depth 1, and
# pipelined 64 deep), medians of the per-round ratios. With BASE=path/to/an/older/bb-rpc, each round
# runs that binary first, in the same minutes, for the figures before a change.
#   [BASE=/tmp/bb-rpc-before] [CPU=1] scripts/bench-rpc.sh pipeline [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
bin=target/release/bb-rpc
[ -x "$bin" ] || { echo "bench-rpc: $bin is missing: run make build" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
common="--forks 0 --format json"

if [ "${1:-}" = pipeline ]; then
    rounds=${2:-5}
    cpu=${CPU:-1}
    base=${BASE:-}
    pipeline="--transport unix --codec raw --client floor,sync,async,future --depth 64 --payload 16
        --warmup 1 --warmup-time 300ms --iterations 3 --time 500ms $common"
    load_before=$(uptime)
    i=1
    while [ "$i" -le "$rounds" ]; do
        if [ -n "$base" ]; then
            echo "bench-rpc: pipeline round $i of $rounds: $base on CPU $cpu" >&2
            # shellcheck disable=SC2086
            taskset -c "$cpu" "$base" $pipeline --output "$out/before-$i.json" >/dev/null
        fi
        echo "bench-rpc: pipeline round $i of $rounds: $bin on CPU $cpu" >&2
        # shellcheck disable=SC2086
        taskset -c "$cpu" "$bin" $pipeline --output "$out/after-$i.json" >/dev/null
        i=$((i + 1))
    done
    load_after=$(uptime)
    python3 - "$out" "$rounds" "$base" "$cpu" "$load_before" "$load_after" <<'PY'
import json, os, statistics, sys
out, rounds, base, cpu, load_before, load_after = sys.argv[1:]
rounds = int(rounds)

def load(name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)

def pick(entries, name, **params):
    for e in entries:
        if e["benchmark"] == name and all(e["params"].get(k) == str(v) for k, v in params.items()):
            return e
    raise KeyError((name, params))

def score(e):
    return e["primaryMetric"]["score"]

def of_floor(e):
    # `vs floor` is time per call over the floor's, in paired iterations: as a share of
    # the floor's throughput, its inverse.
    return 1 / e["secondaryMetrics"]["vs floor"]["score"]

def of_floor_or(e, floor):
    # An older build's row without paired floors: against the floor row of the run
    # beside it.
    return of_floor(e) if "vs floor" in e.get("secondaryMetrics", {}) else score(e) / floor

print("### Pipeline against the wire's floor: one CPU (%s), unix, 16 B, %d rounds\n" % (cpu, rounds))
print("Load: `%s` before, `%s` after.\n" % (load_before.strip(), load_after.strip()))
head = ["round"]
if base:
    head += ["before: sync ops/s", "sync/floor", "async d64 ops/s", "async/floor d64",
             "future d64 ops/s", "future/floor d64"]
head += ["floor d1 ops/s", "floor d64 ops/s", "sync ops/s", "sync/floor", "async d64 ops/s", "async/floor d64",
         "future d64 ops/s", "future/floor d64"]
print("| " + " | ".join(head) + " |")
print("| " + " | ".join("---" for _ in head) + " |")
cols = {}
for r in range(1, rounds + 1):
    after = load("after-%d.json" % r)
    f1 = score(pick(after, "bb.rpc.floor", depth=1))
    f64 = score(pick(after, "bb.rpc.floor", depth=64))
    sync, asy = pick(after, "bb.rpc.sync"), pick(after, "bb.rpc.async", depth=64)
    fut = pick(after, "bb.rpc.future", depth=64)
    row = {}
    if base:
        before = load("before-%d.json" % r)
        bsync, basy = pick(before, "bb.rpc.sync"), pick(before, "bb.rpc.async", depth=64)
        bfut = pick(before, "bb.rpc.future", depth=64)
        row.update({"b sync": score(bsync), "b sync/floor": of_floor(bsync),
                    "b async": score(basy), "b async/floor64": of_floor_or(basy, f64),
                    "b future": score(bfut), "b future/floor64": of_floor_or(bfut, f64)})
    row.update({"floor1": f1, "floor64": f64, "sync": score(sync), "sync/floor": of_floor(sync),
                "async": score(asy), "async/floor64": of_floor(asy),
                "future": score(fut), "future/floor64": of_floor(fut)})
    for k, v in row.items():
        cols.setdefault(k, []).append(v)
    print("| %d | " % r + " | ".join(("%.3f" % v) if "/" in k else ("%.0f" % v) for k, v in row.items()) + " |")
med = {k: statistics.median(v) for k, v in cols.items()}
print("| **median** | " + " | ".join(("**%.3f**" % v) if "/" in k else ("%.0f" % v) for k, v in med.items()) + " |")
print("\nRatios are shares of the floor's throughput, from iterations paired with their floor")
print("(1 / `vs floor`), both builds; a build from before paired floors against the floor row of the run")
def before(key):
    return (" (before: %.3f)" % med[key]) if base else ""

print("beside it. Aims: async depth 64 at least 0.8 of the pipelined floor: %.3f%s;" % (
    med["async/floor64"], before("b async/floor64")))
print("future depth 64 at least 0.7 of it: %.3f%s; sync at least 0.95 of the sync floor:" % (
    med["future/floor64"], before("b future/floor64")))
print("%.3f%s." % (med["sync/floor"], before("b sync/floor")))
PY
    exit 0
fi

rounds=${1:-3}

i=1
while [ "$i" -le "$rounds" ]; do
    echo "bench-rpc: round $i of $rounds: floor, sync, async 64 at 16 B" >&2
    $bin --client floor,sync,async --codec raw,msgpack --depth 64 --payload 16 \
        --warmup 1 --warmup-time 500ms --iterations 3 --time 1s $common \
        --output "$out/floor-$i.json" >/dev/null
    i=$((i + 1))
done
echo "bench-rpc: sweep: sync, async and future by depth and payload" >&2
$bin --client sync,async,future --codec raw --depth 1,8,64 --payload 16,1k,64k \
    --warmup 1 --warmup-time 300ms --iterations 3 --time 500ms $common \
    --output "$out/sweep.json" >/dev/null
for pin in 0 0,1; do
    echo "bench-rpc: floor and sync pinned to CPUs $pin" >&2
    $bin --client floor,sync --codec raw --payload 16 --pin "$pin" \
        --warmup 1 --warmup-time 300ms --iterations 3 --time 1s $common \
        --output "$out/pin-$pin.json" >/dev/null
done

python3 - "$out" "$rounds" "$bin" <<'PY'
import json, statistics, sys, os
out, rounds, binary = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def load(name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)

def pick(entries, name, **params):
    for e in entries:
        if e["benchmark"] == name and all(e.get("params", {}).get(k) == str(v) for k, v in params.items()):
            return e
    raise KeyError((name, params))

def score(e):
    return e["primaryMetric"]["score"]

def metric(e, m):
    return e["secondaryMetrics"].get(m, {}).get("score", float("nan"))

print("### Floor against sync and async, 16-byte echo (%d rounds, medians of per-round ratios)\n" % rounds)
print("| transport | round | floor ops/s | sync raw ops/s | raw/floor | sync msgpack ops/s | msgpack/floor | async raw d64 ops/s | async/sync | async msgpack d64 ops/s |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
summary = {}
for t in ("unix", "tcp"):
    ratios = {"raw": [], "msgpack": [], "async": []}
    for r in range(1, rounds + 1):
        es = load("floor-%d.json" % r)
        floor = score(pick(es, "bb.rpc.floor", transport=t, depth=1))
        raw = score(pick(es, "bb.rpc.sync", transport=t, codec="raw"))
        mp = score(pick(es, "bb.rpc.sync", transport=t, codec="msgpack"))
        araw = score(pick(es, "bb.rpc.async", transport=t, codec="raw"))
        amp = score(pick(es, "bb.rpc.async", transport=t, codec="msgpack"))
        ratios["raw"].append(raw / floor)
        ratios["msgpack"].append(mp / floor)
        ratios["async"].append(araw / raw)
        print("| %s | %d | %.0f | %.0f | %.3f | %.0f | %.3f | %.0f | %.2f | %.0f |" % (t, r, floor, raw, raw / floor, mp, mp / floor, araw, araw / raw, amp))
    m = {k: statistics.median(v) for k, v in ratios.items()}
    summary[t] = m
    print("| %s | **median** | | | **%.3f** | | **%.3f** | | **%.2f** | |" % (t, m["raw"], m["msgpack"], m["async"]))

print("\n### Sync, async and future by depth and payload (raw codec, one run)\n")
es = load("sweep.json")
print("| transport | payload | sync ops/s | async d1 | async d8 | async d64 | future d1 | future d8 | future d64 | async d64 / sync | server CPU µs/call sync / async d64 | client CPU µs/call sync / async d64 |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for t in ("unix", "tcp"):
    for p in (16, 1024, 65536):
        s = pick(es, "bb.rpc.sync", transport=t, payload=p)
        row = [score(s)]
        for style in ("async", "future"):
            for d in (1, 8, 64):
                row.append(score(pick(es, "bb.rpc." + style, transport=t, payload=p, depth=d)))
        a64 = pick(es, "bb.rpc.async", transport=t, payload=p, depth=64)
        print("| %s | %d | %s | %.2f | %.2f / %.2f | %.2f / %.2f |" % (
            t, p, " | ".join("%.0f" % x for x in row), score(a64) / score(s),
            metric(s, "server-cpu"), metric(a64, "server-cpu"), metric(s, "client-cpu"), metric(a64, "client-cpu")))

print("\n### Same core against two cores (16-byte echo, raw, `--pin 0`: client and server on CPU 0; `--pin 0,1`: client on 0, server on 1)\n")
print("| transport | pin | floor ops/s | sync ops/s | sync/floor | floor µs/round trip |")
print("| --- | --- | --- | --- | --- | --- |")
for t in ("unix", "tcp"):
    for pin in ("0", "0,1"):
        es = load("pin-%s.json" % pin)
        f, s = score(pick(es, "bb.rpc.floor", transport=t, depth=1)), score(pick(es, "bb.rpc.sync", transport=t))
        print("| %s | %s | %.0f | %.0f | %.3f | %.1f |" % (t, pin, f, s, s / f, 1e6 / f))

print("\nAims: sync raw at least 0.85 of the floor: unix %.3f, tcp %.3f; async depth 64 at least 8x sync: unix %.2f, tcp %.2f (16 B)." % (
    summary["unix"]["raw"], summary["tcp"]["raw"], summary["unix"]["async"], summary["tcp"]["async"]))
PY
