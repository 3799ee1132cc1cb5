#!/bin/sh
# bb-seek through its S3 source against a real S3 API server (moto's standalone server,
# started here on 127.0.0.1), with the latency of an object store added by
# scripts/latency-proxy.py: for every size and pattern, `stream` against `plain` at 0 ms
# and at DELAY ms (default 20) added per request, in one run on the same objects:
# requests per op, ms per op and plain's time over stream's. Prints markdown.
# Usage: scripts/bench-seek-s3.sh   (SIZES=1m,4m,16m DELAY=20 SHOTS=3 to change)
set -eu
. "$(dirname "$0")/bench-seek-lib.sh"

BIN=${BIN:-target/release/bb-seek}
MOTO=${MOTO:-target/tools-venv/bin/moto_server}
SIZES=${SIZES:-1m,4m,16m}
DELAY=${DELAY:-20}
SHOTS=${SHOTS:-3}
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
echo "moto $("$(dirname "$MOTO")/python" -c 'import moto; print(moto.__version__)') on 127.0.0.1 (signed requests; its"
echo "authentication off here: the timing is the same), objects made with \`bb-seek gen --dest $PLACE --sizes $SIZES\`;"
echo "each table is one \`bb-seek --source $PLACE --sizes $SIZES --forks 0 --warmup 1 --iterations $SHOTS\`,"
echo "through \`scripts/latency-proxy.py\` adding the delay before each request. Time is mean ± 99.9% error;"
echo "the last column is plain's time over stream's (above 1: stream faster)."
for delay in 0 "$DELAY"; do
    proxy_port=$(free_port)
    python3 "$(dirname "$0")/latency-proxy.py" "$proxy_port" "127.0.0.1:$moto_port" "$delay" >/dev/null &
    pids="$pids $!"
    wait_port "$proxy_port"
    echo
    echo "#### $delay ms added per request"
    echo
    AWS_ENDPOINT_URL=http://127.0.0.1:$proxy_port "$BIN" --source "$PLACE" --sizes "$SIZES" --forks 0 \
        --warmup 1 --iterations "$SHOTS" --format csv >"$tmp/$delay.csv" 2>"$tmp/$delay.err" ||
        { cat "$tmp/$delay.err" >&2; exit 1; }
    pattern_table "$tmp/$delay.csv"
done
