#!/bin/sh
# The checks an emulated board runs (scripts/board.sh copies this to its /checks.sh):
# run-all.sh --quick from the dist layout (every binary's quick profile, text and JSON),
# bb-compare on two of the board's results, every binary's --help and --dry-run, a
# smaller matrix in CSV, bm and text, and SIGINT and SIGTERM against a run with a server.
# Each check's output goes to the console between markers:
#   ==BB== begin ID
#   ... what the command printed (stdout; its stderr is the section ID.err) ...
#   ==BB== end ID rc=N
# and tests/it/boards.rs asserts on it on the host. Timings mean nothing here: the flags
# shorten every run and change nothing else (as tests/it/support/boards.rs's).
# POSIX sh for busybox.
set -u
dist=/opt/boardbench
export BB_BIN_DIR=$dist/bin
short="--warmup 0 --iterations 1 --time 100ms --forks 1 --precision off"
zstd_small="--size 64k --jobs 2 --threads 1,2 --warmup-time 50ms --iterations 2 --time 100ms"
board=$(hostname)
work=/tmp/checks
mkdir -p "$work"

# section ID COMMAND...: runs it, prints its stdout and then its stderr in sections.
section() {
    id=$1
    shift
    started=$(date +%s)
    "$@" >"$work/$id.out" 2>"$work/$id.err"
    rc=$?
    emit "$id" "$work/$id.out" "$rc"
    emit "$id.err" "$work/$id.err" "$rc"
    # Outside any section, for a person reading the console: the board's own seconds.
    echo "==BB== took $id $(($(date +%s) - started))s"
    return 0
}

# emit ID FILE RC: one file between markers (a last newline added where it lacks one).
emit() {
    echo "==BB== begin $1"
    cat "$2"
    [ -s "$2" ] && [ "$(tail -c 1 "$2" | od -An -c | tr -d ' ')" != '\n' ] && echo
    echo "==BB== end $1 rc=$3"
}

# The facts the host checks the board by.
{
    tr -d '\0' </proc/device-tree/model
    echo
    uname -m
    grep -c '^processor' /proc/cpuinfo
    sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo
} >"$work/board"
emit board "$work/board" 0

# run-all.sh --quick from the dist layout: every binary's quick profile whole (the
# timing shortened), its text table (summary.txt) and its JSON report from one run.
export BB_FLAGS="$short"
export BB_FLAGS_zstd="$zstd_small"
section run-all "$dist/scripts/run-all.sh" --quick --out "$work/results"
first=$(sed -n 's/^results: //p' "$work/run-all.out")
if [ -n "$first" ]; then
    (cd "$first" && ls -1) >"$work/files"
    emit run-all.files "$work/files" 0
    emit run-all.env "$first/env.json" 0
    emit run-all.summary "$first/summary.txt" 0
    for f in "$first"/bb-*.json; do
        emit "run-all.$(basename "$f")" "$f" 0
    done
fi
# Again, bb-zstd alone, and bb-compare on the two results directories.
section run-all-zstd "$dist/scripts/run-all.sh" --quick --only zstd --out "$work/results"
second=$(sed -n 's/^results: //p' "$work/run-all-zstd.out")
section compare "$dist/bin/bb-compare" "$first" "$second"
section compare.json "$dist/bin/bb-compare" --format json "$first" "$second"
unset BB_FLAGS BB_FLAGS_zstd

# Per binary: its help; the plans of the quick profile (with run-all's flags: the host
# matches it with run-all's report), of the standard one, and of a smaller matrix run
# in CSV, in bm, and in text with its answer block (one run each).
per_binary() {
    name=$1
    small=$2
    shift 2
    exe=$dist/bin/$name
    section "$name.help" "$exe" --help
    section "$name.dry-run" "$exe" --quick "$@" --dry-run
    section "$name.dry-run-standard" "$exe" --dry-run
    section "$name.dry-run-small" "$exe" --quick $small --dry-run
    section "$name.csv" "$exe" --quick $short $small --format csv
    section "$name.bm" "$exe" --quick $short $small --format bm
    section "$name.text" "$exe" --quick $short $small
}
per_binary bb-zstd "$zstd_small --threads 1" $zstd_small
per_binary bb-ipc "--transport unix --calls method_no_args,method_block"
per_binary bb-rpc "--transport unix --codec raw --payload 16 --depth 1"
per_binary bb-seek "--sizes 1m --client plain,stream --pattern sequential,backward"
section bb-compare.help "$dist/bin/bb-compare" --help

# --against another build: on the Pi 3, its armv7 build beside the aarch64 one (the
# 64-bit kernel runs both); elsewhere, the board's own build at another path.
other=/opt/boardbench/armv7/bb-zstd
if [ ! -x "$other" ]; then
    other=$work/old-bb-zstd
    cp "$dist/bin/bb-zstd" "$other"
fi
section against "$dist/bin/bb-zstd" --quick $short $zstd_small --threads 1 --lock none \
    --forks 2 --against "$other"

# SIGINT and SIGTERM: a run with a server child (bb-ipc's, bb-rpc's) is stopped once
# its processes run (the parent, its fork, and bb-rpc's server under the fork); its
# exit code, then every bb- process and socket file left. The count must hold for a
# second: the parent first starts a copy of itself that ends at once (the probe of
# whether the kernel runs it, harness/exec.rs), which would otherwise count as the fork
# (CI signalled bb-rpc between the two).
signal_check() {
    sig=$1
    name=$2
    want=$3
    shift 3
    tmp=$work/sig-$sig
    mkdir -p "$tmp"
    TMPDIR=$tmp "$dist/bin/$name" "$@" >"$tmp.out" 2>"$tmp.err" &
    pid=$!
    all_up() { [ "$(ps -o comm | grep -c "^$name")" -ge "$want" ]; }
    n=0
    while [ $n -lt 600 ]; do
        if all_up; then
            sleep 1
            all_up && break
        fi
        sleep 0.2
        n=$((n + 1))
    done
    ps -o pid,ppid,comm | grep " $name" >"$tmp.before"
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    emit "signal.$sig.before" "$tmp.before" 0
    ps -o pid,ppid,comm | grep ' bb-' >"$tmp.after"
    emit "signal.$sig.after" "$tmp.after" 0
    find "$tmp" -mindepth 1 >"$tmp.left"
    emit "signal.$sig.left" "$tmp.left" 0
    emit "signal.$sig.err" "$tmp.err" "$rc"
}
# No wait for an idle board first (the standard profile's): an emulated board is seldom
# idle, and the server must be running within the loop's two minutes.
signal_check INT bb-ipc 2 --transport unix --warmup 0 --iterations 1000 --time 1s --forks 1 \
    --idle-wait 0
signal_check TERM bb-rpc 3 --transport unix --client sync --codec raw --payload 16 \
    --warmup 0 --iterations 1000 --time 1s --forks 1 --idle-wait 0
echo "== $board: checks done =="
