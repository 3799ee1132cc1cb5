#!/bin/sh
# bb-seek through its S3 source against a real S3 API server (moto's standalone server,
# started here on 127.0.0.1), with the latency of an object store added by
# scripts/latency-proxy.py: for every size and pattern, `stream` against `plain` at 0 ms
# and at DELAY ms (default 20) added per request, in one run on the same objects:
# requests per op, ms per op and plain's time over stream's ("tables"); then, where both
# clients make the same number of requests (sequential 1 MiB reads, forward, backward)
# and only noise tells them apart, ROUNDS rounds at DELAY ms with the median of each
# round's ratio ("rounds"). Prints markdown.
# Usage: scripts/bench-seek-s3.sh   (SIZES=1m,4m,16m DELAY=20 SHOTS=3 ROUNDS=5
#        SECTIONS="tables rounds" to change)
set -eu
. "$(dirname "$0")/bench-seek-lib.sh"

BIN=${BIN:-target/release/bb-seek}
MOTO=${MOTO:-target/tools-venv/bin/moto_server}
SIZES=${SIZES:-1m,4m,16m}
DELAY=${DELAY:-20}
SHOTS=${SHOTS:-3}
ROUNDS=${ROUNDS:-5}
SECTIONS=${SECTIONS:-tables rounds}
[ -x "$BIN" ] || { echo "bench-seek-s3: $BIN is missing; run make build" >&2; exit 1; }
[ -x "$MOTO" ] || { echo "bench-seek-s3: $MOTO is missing; run scripts/setup.sh test" >&2; exit 1; }
tmp=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() {
    for _ in $(seq 1 100); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $1))" 2>/dev/null && return 0
        sleep 0.2
    done
    echo "bench-seek-s3: nothing listens on 127.0.0.1:$1" >&2
    exit 1
}
moto_port=$(free_port)
"$MOTO" -H 127.0.0.1 -p "$moto_port" >"$tmp/moto.log" 2>&1 &
pids="$pids $!"
wait_port "$moto_port"

export AWS_ACCESS_KEY_ID=AKIABENCHMARK AWS_SECRET_ACCESS_KEY=benchmark AWS_REGION=eu-west-1
PLACE=s3://bench/runs/
AWS_ENDPOINT_URL=http://127.0.0.1:$moto_port "$BIN" gen --dest "$PLACE" --sizes "$SIZES" >/dev/null 2>&1

echo "Load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
echo
proxy() {
    proxy_port=$(free_port)
    python3 "$(dirname "$0")/latency-proxy.py" "$proxy_port" "127.0.0.1:$moto_port" "$1" >/dev/null &
    pids="$pids $!"
    wait_port "$proxy_port"
}
# One bb-seek run through the proxy at $proxy_port into CSV $1, with more flags after.
seek() {
    csv=$1
    shift
    AWS_ENDPOINT_URL=http://127.0.0.1:$proxy_port "$BIN" --source "$PLACE" --sizes "$SIZES" --forks 0 \
        --format csv "$@" >"$csv" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
}

echo "moto $("$(dirname "$MOTO")/python" -c 'import moto; print(moto.__version__)') on 127.0.0.1 (signed requests; its"
echo "authentication off here: the timing is the same), objects made with \`bb-seek gen --dest $PLACE --sizes $SIZES\`,"
echo "read through \`scripts/latency-proxy.py\`, which adds the delay before each request."
case " $SECTIONS " in *" tables "*)
    echo "Each table is one \`bb-seek --source $PLACE --sizes $SIZES --forks 0 --warmup 1 --iterations $SHOTS\`."
    echo "Time is mean ± 99.9% error; the last column is plain's time over stream's (above 1: stream faster)."
    for delay in 0 "$DELAY"; do
        proxy "$delay"
        echo
        echo "#### $delay ms added per request"
        echo
        seek "$tmp/$delay.csv" --warmup 1 --iterations "$SHOTS"
        pattern_table "$tmp/$delay.csv"
    done
esac
case " $SECTIONS " in *" rounds "*)
    proxy "$DELAY"
    echo
    echo "#### Where both make the same requests, $DELAY ms added: $ROUNDS rounds"
    echo
    echo "Each round is one \`bb-seek --source $PLACE --sizes $SIZES --pattern sequential,forward,backward --read-size 1m"
    echo "--forks 0 --warmup 1 --iterations 5\` (plain and stream run back to back for each row); the ratio is plain's mean"
    echo "time over stream's in that round, and the table gives the median and the range of the rounds' ratios."
    echo
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        seek "$tmp/round.csv" --pattern sequential,forward,backward --read-size 1m --warmup 1 --iterations 5
        rows "$tmp/round.csv" | awk '$1 !~ /:/ { t[$2 " " $1, $3] = $5; k[$2 " " $1] = 1 }
            END { for (x in k) printf "%s %.4f\n", x, t[x, "plain"] / t[x, "stream"] }' >>"$tmp/ratios"
        r=$((r + 1))
    done
    echo "| object | pattern | requests (both) | median plain / stream | lowest | highest |"
    echo "| --- | --- | --- | --- | --- | --- |"
    for key in $(awk '{ print $1 "/" $2 }' "$tmp/ratios" | sort -u); do
        object=${key%%/*}
        pattern=${key#*/}
        m=$(awk -v o="$object" -v p="$pattern" '$1 == o && $2 == p { print $3 }' "$tmp/ratios" | median)
        lo=$(awk -v o="$object" -v p="$pattern" '$1 == o && $2 == p { print $3 }' "$tmp/ratios" | sort -g | head -n 1)
        hi=$(awk -v o="$object" -v p="$pattern" '$1 == o && $2 == p { print $3 }' "$tmp/ratios" | sort -g | tail -n 1)
        req=$(rows "$tmp/round.csv" | awk -v o="$object" -v p="$pattern:requests" '$2 == o && $1 == p { print $5; exit }')
        printf '| %s | %s | %g | %.3f | %.3f | %.3f |\n' "$object" "${pattern#bb.seek.}" "$req" "$m" "$lo" "$hi"
    done
esac
