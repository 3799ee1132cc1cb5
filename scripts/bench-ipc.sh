#!/bin/sh
# bb-ipc for BENCHMARKS.md: every call and its transport's floor (a 1-byte ping-pong on
# the same transport, measured in the same run), unpinned, pinned to one core (client and
# server on CPU 0) and pinned to two cores (client on 0, server on 1). Prints per call and
# transport the µs/call (avgt) and the ratio to the floor, the medians of ROUNDS runs; and
# the local calls in ns. The aim: method_no_args over the Unix stream socket within 1.2×
# of its floor.
# Usage: scripts/bench-ipc.sh [TRANSPORTS] (default unix,seqpacket,socketpair,pipes,tcp).
set -eu

TRANSPORTS=${1:-unix,seqpacket,socketpair,pipes,tcp}
BIN=${BIN:-target/release/bb-ipc}
ROUNDS=${ROUNDS:-3}
FLAGS=${FLAGS:---mode avgt --warmup 1 --warmup-time 200ms --iterations 5 --time 300ms --forks 1}
[ -x "$BIN" ] || { echo "bench-ipc: $BIN is missing; run make build" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# CSV columns: 1 Benchmark, 5 Score, 8 call, 9 transport; prints "name call transport score"
# with "-" for a parameter the row does not have.
rows() { awk -F, 'NR > 1 { gsub(/"/, ""); print $1, ($8 == "" ? "-" : $8), ($9 == "" ? "-" : $9), $5 }' "$1"; }

cpus=$(nproc)
two_pin="0,1"
[ "$cpus" -ge 2 ] || two_pin="0,0"
for setup in "unpinned:" "one core (0,0):--pin 0,0" "two cores (0,1):--pin $two_pin"; do
    name=${setup%%:*}
    pin=${setup#*:}
    for r in $(seq 1 "$ROUNDS"); do
        # shellcheck disable=SC2086
        "$BIN" --transport "$TRANSPORTS" $pin $FLAGS --format csv >"$tmp/run.csv" 2>/dev/null
        rows "$tmp/run.csv" | sed "s/^/$r /" >>"$tmp/all.rows"
    done
    echo "### $name"
    echo
    echo "| call | $(echo "$TRANSPORTS" | sed 's/,/ | /g') |"
    echo "| --- |$(echo "$TRANSPORTS" | sed 's/[^,]*/ --- |/g; s/,//g')"
    calls=$(awk '$2 == "bb.ipc.remote" { print $3 }' "$tmp/all.rows" | awk '!seen[$0]++')
    for row in floor $calls; do
        line="| $row |"
        for t in $(echo "$TRANSPORTS" | tr , ' '); do
            if [ "$row" = floor ]; then
                v=$(awk -v t="$t" '$2 == "bb.ipc.floor" && $4 == t { print $5 }' "$tmp/all.rows" | median)
                line="$line $(printf '%.2f' "$v") µs |"
            else
                v=$(awk -v c="$row" -v t="$t" '$2 == "bb.ipc.remote" && $3 == c && $4 == t { print $5 }' "$tmp/all.rows" | median)
                # The ratio per round (call and floor of the same run), then the median.
                ratio=$(for r in $(seq 1 "$ROUNDS"); do
                    awk -v r="$r" -v c="$row" -v t="$t" '$1 == r && $2 == "bb.ipc.remote" && $3 == c && $4 == t { call = $5 }
                        $1 == r && $2 == "bb.ipc.floor" && $4 == t { floor = $5 }
                        END { print call / floor }' "$tmp/all.rows"
                done | median)
                line="$line $(printf '%.2f' "$v") µs (×$(printf '%.2f' "$ratio")) |"
            fi
        done
        echo "$line"
    done
    echo
    echo "Local calls (ns/call, median): $(awk '$2 == "bb.ipc.local" { print $3 }' "$tmp/all.rows" | awk '!seen[$0]++' | while read -r c; do
        printf '%s %.2f; ' "$c" "$(awk -v c="$c" '$2 == "bb.ipc.local" && $3 == c { print $5 }' "$tmp/all.rows" | median)"; done)"
    echo
    rm -f "$tmp"/*.rows
done
