#!/bin/sh
# bb-ipc for BENCHMARKS.md: every call and its transport's floor (a 1-byte ping-pong on
# the same transport, measured in the same run), unpinned, pinned to one core (client and
# server on CPU 0) and pinned to two cores (client on 0, server on 1). Prints per call and
# transport the µs/call (avgt) and the ratio to the floor, the medians of ROUNDS runs; and
# the local calls in ns. The aims: method_no_args over the Unix stream socket within 1.2×
# of its floor, and over shm within 1.5× of its.
# Pinned, each round first runs the C reference: a futex ping-pong over an anonymous
# shared mapping made before the fork (a word each way, its waiter always woken), the
# bound under the shm floor; the aim: shm's floor within 1.2× of it (the median of the
# per-round ratios).
# Usage: scripts/bench-ipc.sh [TRANSPORTS] (default unix,seqpacket,socketpair,pipes,tcp,shm).
# CALLS=method_no_args,… measures only those calls; CC builds the reference (default cc).
set -eu

TRANSPORTS=${1:-unix,seqpacket,socketpair,pipes,tcp,shm}
CALLS=${CALLS:-}
ROUND_TRIPS=${ROUND_TRIPS:-20000}
BIN=${BIN:-target/release/bb-ipc}
ROUNDS=${ROUNDS:-3}
FLAGS=${FLAGS:---mode avgt --warmup 1 --warmup-time 200ms --iterations 5 --time 300ms --forks 1}
[ -x "$BIN" ] || { echo "bench-ipc: $BIN is missing; run make build" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The C reference: ROUND_TRIPS futex round trips, client on CPU $2, server on CPU $3;
# prints the µs per round trip.
cat >"$tmp/futex-pingpong.c" <<'EOF'
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); exit(1); }
}
static void wait_while(atomic_uint *w, unsigned v) {
    while (atomic_load(w) == v) syscall(SYS_futex, w, FUTEX_WAIT, v, NULL, NULL, 0);
}
static void wake(atomic_uint *w) { syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0); }

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: futex-pingpong ROUND_TRIPS CLIENT_CPU SERVER_CPU\n"); return 2; }
    long n = atol(argv[1]);
    /* ping and pong, each on a cache line of its own, in a mapping made before the fork */
    atomic_uint *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { perror("mmap"); return 1; }
    atomic_uint *ping = m, *pong = m + 16;
    pid_t child = fork();
    if (child == 0) {
        pin(atoi(argv[3]));
        for (unsigned i = 1; i <= n + 1000; i++) {
            wait_while(ping, i - 1);
            atomic_store(pong, i);
            wake(pong);
        }
        _exit(0);
    }
    pin(atoi(argv[2]));
    struct timespec t0, t1;
    for (unsigned i = 1; i <= n + 1000; i++) {
        if (i == 1001) clock_gettime(CLOCK_MONOTONIC, &t0); /* after 1000 to warm up */
        atomic_store(ping, i);
        wake(ping);
        wait_while(pong, i - 1);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    waitpid(child, NULL, 0);
    printf("%.3f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / n);
    return 0;
}
EOF
"${CC:-cc}" -O2 -o "$tmp/futex-pingpong" "$tmp/futex-pingpong.c"
calls_flag=
[ -z "$CALLS" ] || calls_flag="--calls $CALLS"

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
        if [ -n "$pin" ]; then
            pair=${pin#--pin }
            "$tmp/futex-pingpong" "$ROUND_TRIPS" "${pair%,*}" "${pair#*,}" |
                sed "s/^/$r reference - - /" >>"$tmp/all.rows"
        fi
        # shellcheck disable=SC2086
        "$BIN" --transport "$TRANSPORTS" $pin $FLAGS $calls_flag --format csv >"$tmp/run.csv" 2>/dev/null
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
    if [ -n "$pin" ] && echo ",$TRANSPORTS," | grep -q ',shm,'; then
        c=$(awk '$2 == "reference" { print $5 }' "$tmp/all.rows" | median)
        ratio=$(for r in $(seq 1 "$ROUNDS"); do
            awk -v r="$r" '$1 == r && $2 == "reference" { c = $5 }
                $1 == r && $2 == "bb.ipc.floor" && $4 == "shm" { f = $5 }
                END { print f / c }' "$tmp/all.rows"
        done | median)
        echo "C futex ping-pong (the reference): $(printf '%.2f' "$c") µs per round trip; shm's floor ×$(printf '%.2f' "$ratio") of it (median of per-round ratios)"
        echo
    fi
    rm -f "$tmp"/*.rows
done
