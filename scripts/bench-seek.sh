#!/bin/sh
# bb-seek against its references, in one run on the same objects, for BENCHMARKS.md:
#  1. hot cache: sequential 16 MiB in 4 KiB reads, `stream` against `plain` against
#     `dd if=FILE of=/dev/null bs=1M` (and bs=4k, what `plain` does), ROUNDS rounds of
#     SHOTS shots each, mean time per read of the object, medians of rounds and ratios;
#  2. over HTTP from an nginx this script starts on 127.0.0.1: per size and pattern,
#     requests and bytes fetched per op and time per op for `plain` and `stream`;
#  3. cold cache (posix_fadvise DONTNEED before every shot; dd with iflag=nocache),
#     labelled with the storage the objects are on.
# Usage: scripts/bench-seek.sh [DATA_DIR] (default target/bench-seek: on the build disk).
# BASE=OTHER_BB_SEEK adds that binary's `stream` to every hot-cache round, run in turn with
# this one's (before/after a change, in the same minutes). Prints markdown.
set -eu
. "$(dirname "$0")/bench-seek-lib.sh"

DATA=${1:-target/bench-seek}
BIN=${BIN:-target/release/bb-seek}
ROUNDS=${ROUNDS:-5}
SHOTS=${SHOTS:-15}
NGINX=${NGINX:-/usr/sbin/nginx}
BASE=${BASE:-}
[ -x "$BIN" ] || { echo "bench-seek: $BIN is missing; run make build" >&2; exit 1; }
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "bench-seek: BASE=$BASE is not an executable" >&2; exit 1; }
[ -x "$NGINX" ] || { echo "bench-seek: nginx is missing (scripts/setup.sh bench)" >&2; exit 1; }
mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd)
tmp=$(mktemp -d)
chmod 755 "$tmp"
nginx_pid=""
trap '[ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$BIN" gen --dir "$DATA" >/dev/null
OBJ=$DATA/random-16mb.txt
BYTES=$(stat -c %s "$OBJ")

# Mean ms of SHOTS runs of dd with block size $1 (after $2 before each run: a cache drop).
dd_ms() {
    i=0
    while [ $i -lt "$SHOTS" ]; do
        [ "${2:-}" = cold ] && dd if="$OBJ" iflag=nocache count=0 status=none
        dd if="$OBJ" of=/dev/null bs="$1" 2>&1 | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") print $(i - 1) * 1000 }'
        i=$((i + 1))
    done | awk '{ s += $1 } END { printf "%.3f", s / NR }'
}
mbs() { awk -v ms="$1" -v b="$BYTES" 'BEGIN { printf "%.0f", b / (ms / 1000) / 1e6 }'; }

storage="$(df --output=source "$DATA" | tail -n 1) ($(stat -f -c %T "$DATA"))"

echo "Load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
echo
echo "### Hot cache: sequential 16 MiB in 4 KiB reads, against dd"
echo
echo "Object: \`$OBJ\` on $storage, read once before. $ROUNDS rounds; each runs \`dd if=FILE of=/dev/null bs=1M\`"
echo "and \`bs=4k\` $SHOTS times (the mean of the copy times dd reports), then"
echo "\`bb-seek --sizes 16m --pattern sequential --read-size 4k --forks 0 --warmup 2 --iterations $SHOTS\` (mean ms/op)."
echo "MB/s is 16 MiB over the mean time; ratios are dd bs=1M's time over the client's (higher is faster)."
[ -z "$BASE" ] || echo "\"base\" is \`$BASE\`'s stream, run the same way right after this one's in each round."
echo
if [ -n "$BASE" ]; then
    echo "| round | dd bs=1M MB/s | dd bs=4k MB/s | plain MB/s | stream MB/s | base stream MB/s | plain / dd | **stream / dd** | base stream / dd |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
else
    echo "| round | dd bs=1M MB/s | dd bs=4k MB/s | plain MB/s | stream MB/s | plain / dd | **stream / dd** |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
fi
cat "$OBJ" >/dev/null
for r in $(seq 1 "$ROUNDS"); do
    dd1m=$(dd_ms 1M)
    dd4k=$(dd_ms 4k)
    "$BIN" --source "file:$DATA" --sizes 16m --pattern sequential --read-size 4k --forks 0 --warmup 2 \
        --iterations "$SHOTS" --format csv >"$tmp/hot.csv" 2>/dev/null
    plain=$(score "$tmp/hot.csv" bb.seek.sequential plain)
    stream=$(score "$tmp/hot.csv" bb.seek.sequential stream)
    if [ -n "$BASE" ]; then
        "$BASE" --source "file:$DATA" --sizes 16m --pattern sequential --read-size 4k --client stream --forks 0 \
            --warmup 2 --iterations "$SHOTS" --format csv >"$tmp/base.csv" 2>/dev/null
        base=$(score "$tmp/base.csv" bb.seek.sequential stream)
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$r" "$(mbs "$dd1m")" "$(mbs "$dd4k")" "$(mbs "$plain")" \
            "$(mbs "$stream")" "$(mbs "$base")" "$(ratio "$dd1m" "$plain")" "$(ratio "$dd1m" "$stream")" "$(ratio "$dd1m" "$base")"
    else
        base=0
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$r" "$(mbs "$dd1m")" "$(mbs "$dd4k")" "$(mbs "$plain")" "$(mbs "$stream")" \
            "$(ratio "$dd1m" "$plain")" "$(ratio "$dd1m" "$stream")"
    fi
    echo "$dd1m $dd4k $plain $stream $base" >>"$tmp/rounds"
done
col() { awk -v c="$1" '{ print $c }' "$tmp/rounds" | median; }
if [ -n "$BASE" ]; then
    printf '| **median** | %s | %s | %s | %s | %s | %s | **%s** | %s |\n' "$(mbs "$(col 1)")" "$(mbs "$(col 2)")" "$(mbs "$(col 3)")" \
        "$(mbs "$(col 4)")" "$(mbs "$(col 5)")" "$(ratio "$(col 1)" "$(col 3)")" "$(ratio "$(col 1)" "$(col 4)")" "$(ratio "$(col 1)" "$(col 5)")"
else
    printf '| **median** | %s | %s | %s | %s | %s | **%s** |\n' "$(mbs "$(col 1)")" "$(mbs "$(col 2)")" "$(mbs "$(col 3)")" "$(mbs "$(col 4)")" \
        "$(ratio "$(col 1)" "$(col 3)")" "$(ratio "$(col 1)" "$(col 4)")"
fi
echo

echo "### Over HTTP: nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///') on 127.0.0.1, keep-alive"
echo
mkdir -p "$tmp/www/objects"
port=18080
while :; do
    cat >"$tmp/nginx.conf" <<CONF
daemon off;
master_process off;
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $tmp/body; proxy_temp_path $tmp/proxy; fastcgi_temp_path $tmp/fastcgi;
  uwsgi_temp_path $tmp/uwsgi; scgi_temp_path $tmp/scgi;
  client_max_body_size 64m;
  server { listen 127.0.0.1:$port; root $tmp/www; location /objects/ { dav_methods PUT; } }
}
CONF
    "$NGINX" -p "$tmp" -c "$tmp/nginx.conf" 2>/dev/null &
    nginx_pid=$!
    sleep 0.5
    kill -0 "$nginx_pid" 2>/dev/null && break
    nginx_pid=""
    port=$((port + 1))
    [ $port -lt 18100 ] || { echo "bench-seek: nginx did not start" >&2; exit 1; }
done
URL=http://127.0.0.1:$port/objects/
"$BIN" gen --dest "$URL" >/dev/null
echo "Objects uploaded with \`bb-seek gen --dest $URL\`; then"
echo "\`bb-seek --source $URL --forks 0 --warmup 2 --iterations $SHOTS\` (every size, pattern, client; nginx and bb-seek share the 2 cores)."
echo "Time is mean ± 99.9% error; the last column is plain's time over stream's (above 1: stream faster)."
echo
"$BIN" --source "$URL" --forks 0 --warmup 2 --iterations "$SHOTS" --format csv >"$tmp/http.csv" 2>/dev/null
pattern_table "$tmp/http.csv"
echo
kill "$nginx_pid"
nginx_pid=""

echo "### Cold cache: 16 MiB on $storage"
echo
echo "\`bb-seek --cold --sizes 16m --forks 0 --warmup 1 --iterations $SHOTS\`: the object's pages dropped (posix_fadvise DONTNEED) before"
echo "every shot. dd the same way: \`dd iflag=nocache count=0\` to drop, then \`dd bs=1M\`, $SHOTS times."
echo
"$BIN" --source "file:$DATA" --cold --sizes 16m --forks 0 --warmup 1 --iterations "$SHOTS" --format csv >"$tmp/cold.csv" 2>"$tmp/cold.err"
if grep -q warning: "$tmp/cold.err"; then
    echo "bb-seek said: \`$(grep warning: "$tmp/cold.err" | head -n 1)\`"
    echo
fi
pattern_table "$tmp/cold.csv"
echo
dd_cold=$(dd_ms 1M cold)
stream_cold=$(score "$tmp/cold.csv" bb.seek.sequential stream 4k | awk '{ printf "%.3f", $1 }')
echo "| cold, sequential 16 MiB | ms | MB/s |"
echo "| --- | --- | --- |"
echo "| dd bs=1M | $dd_cold | $(mbs "$dd_cold") |"
echo "| stream, 4 KiB reads | $stream_cold | $(mbs "$stream_cold") |"
echo "| **stream / dd** | | **$(ratio "$dd_cold" "$stream_cold")** |"
