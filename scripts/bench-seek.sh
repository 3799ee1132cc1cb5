#!/bin/sh
# bb-seek against its references, in one run on the same objects, for BENCHMARKS.md:
#  1. hot cache, 16 MiB, every pattern at 4 KiB reads: `stream` against a C loop copying
#     the same reads out of a mapping (mmap + memcpy), `plain` against a C loop making the
#     same preads (scripts/seek-ref.c, built here with cc), and dd bs=1M as a familiar
#     third; ROUNDS rounds, each running every one of them in turn (mean of SHOTS shots),
#     medians of rounds and of the per-round ratios;
#  2. over HTTP from an nginx this script starts on 127.0.0.1: per size and pattern,
#     requests and bytes fetched per op and time per op for `plain` and `stream`;
#  3. cold cache (posix_fadvise DONTNEED before every shot; dd with iflag=nocache),
#     labelled with the storage the objects are on.
# Usage: scripts/bench-seek.sh [DATA_DIR] (default target/bench-seek: on the build disk).
# BASE=OTHER_BB_SEEK adds that binary's `stream` and `plain` to every hot-cache round, run
# right after this one's (before/after a change, in the same minutes). Prints markdown.
set -eu
. "$(dirname "$0")/bench-seek-lib.sh"

DATA=${1:-target/bench-seek}
BIN=${BIN:-target/release/bb-seek}
ROUNDS=${ROUNDS:-5}
SHOTS=${SHOTS:-15}
NGINX=${NGINX:-/usr/sbin/nginx}
CC=${CC:-cc}
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
"$CC" -O2 -o "$tmp/seek-ref" "$(dirname "$0")/seek-ref.c"
"$BIN" gen --dir "$DATA" >/dev/null
OBJ=$DATA/random-16mb.txt
BYTES=$(stat -c %s "$OBJ")
PATTERNS="sequential forward backward parquet"

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

# Pattern $1's reads of the 16 MiB object at 4 KiB, as offset,length lines (pattern.rs's).
pattern_reads() {
    awk -v p="$1" -v size="$BYTES" 'function pc(x) { return int(size * x / 100) }
        BEGIN { if (p == "sequential") for (o = 0; o < size; o += 4096) print o "," (size - o < 4096 ? size - o : 4096)
                if (p == "forward") for (x = 0; x <= 80; x += 20) print pc(x) "," pc(x + 10) - pc(x)
                if (p == "backward") for (x = 80; x >= 0; x -= 20) print pc(x) "," pc(x + 10) - pc(x)
                if (p == "parquet") { print size - 5 ",4"; print size - 8192 ",8192"; print pc(50) "," pc(80) - pc(50); print "0," pc(20) } }'
}
# The ring bb-seek's reads of pattern file $1 land in (workload.rs's `held`).
ring_of() {
    awk -F, '{ asked += $2; if ($2 > big) big = $2 } END { r = big <= 65536 ? 65536 : 16777216; print (r < asked ? r : asked) }' "$1"
}

storage="$(df --output=source "$DATA" | tail -n 1) ($(stat -f -c %T "$DATA"))"

echo "Load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
echo
echo "### Hot cache: 16 MiB, every pattern at 4 KiB reads, against C loops"
echo
echo "Object: \`$OBJ\` on $storage, read once before. $ROUNDS rounds; each runs, for every pattern,"
echo "\`seek-ref mmap\` and \`seek-ref pread\` (scripts/seek-ref.c, $("$CC" --version | head -n 1)) over the pattern's reads, $SHOTS passes,"
echo "then \`bb-seek --sizes 16m --pattern $(echo $PATTERNS | tr ' ' ,) --read-size 4k --forks 0 --warmup 2 --iterations $SHOTS\`"
echo "(a fresh stream per shot), then \`dd if=FILE of=/dev/null bs=1M\` $SHOTS times. Every time is a mean ms per pass;"
echo "the table gives medians of rounds, and of the per-round ratios (lower is closer)."
[ -z "$BASE" ] || echo "\"base\" is \`$BASE\`, run the same way right after this one in each round."
echo
cat "$OBJ" >/dev/null
for p in $PATTERNS; do
    pattern_reads "$p" >"$tmp/$p.reads"
done
for r in $(seq 1 "$ROUNDS"); do
    for p in $PATTERNS; do
        ring=$(ring_of "$tmp/$p.reads")
        echo "$p mmap $("$tmp/seek-ref" mmap "$OBJ" "$tmp/$p.reads" "$ring" "$SHOTS")" >>"$tmp/round$r"
        echo "$p pread $("$tmp/seek-ref" pread "$OBJ" "$tmp/$p.reads" "$ring" "$SHOTS")" >>"$tmp/round$r"
    done
    for bin in "$BIN" $BASE; do
        name=$([ "$bin" = "$BIN" ] && echo "" || echo base-)
        "$bin" --source "file:$DATA" --sizes 16m --pattern "$(echo $PATTERNS | tr ' ' ,)" --read-size 4k --forks 0 --warmup 2 \
            --iterations "$SHOTS" --format csv >"$tmp/hot.csv" 2>/dev/null
        for p in $PATTERNS; do
            for c in plain stream; do
                echo "$p $name$c $(score "$tmp/hot.csv" "bb.seek.$p" "$c")" >>"$tmp/round$r"
            done
        done
    done
    echo "sequential dd $(dd_ms 1M)" >>"$tmp/round$r"
done
# The median over rounds of column $2 of pattern $1 (or of $2 / $3 with a third argument).
med() {
    for r in $(seq 1 "$ROUNDS"); do
        awk -v p="$1" -v a="$2" -v b="${3:-}" '$1 == p { v[$2] = $3 } END { printf "%.4f\n", b == "" ? v[a] : v[a] / v[b] }' "$tmp/round$r"
    done | median
}
if [ -n "$BASE" ]; then
    echo "| pattern | mmap loop ms | pread loop ms | stream ms | plain ms | base stream ms | base plain ms | **stream / mmap** | **plain / pread** | base stream / mmap | base plain / pread |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
else
    echo "| pattern | mmap loop ms | pread loop ms | stream ms | plain ms | **stream / mmap** | **plain / pread** |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
fi
for p in $PATTERNS; do
    line="| $p | $(med "$p" mmap) | $(med "$p" pread) | $(med "$p" stream) | $(med "$p" plain)"
    [ -z "$BASE" ] || line="$line | $(med "$p" base-stream) | $(med "$p" base-plain)"
    line="$line | **$(med "$p" stream mmap)** | **$(med "$p" plain pread)**"
    [ -z "$BASE" ] || line="$line | $(med "$p" base-stream mmap) | $(med "$p" base-plain pread)"
    echo "$line |"
done
echo
dd1m=$(med sequential dd)
echo "dd bs=1M over the same 16 MiB: $dd1m ms ($(mbs "$dd1m") MB/s); the stream's sequential 4 KiB reads $(med sequential stream dd) of its time."
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
