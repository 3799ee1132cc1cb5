#!/bin/sh
# What a 512 MB Pi 2 runs (scripts/board.sh pi2 --mem 512M): run-all.sh in the standard
# profile, its matrices whole, the timing shortened (BB_FLAGS, as the suite's tests do:
# tests/it/support/boards.rs; the wait for an idle board to 10 s); then the results directory's every file between markers
# (as tests/boards/checks.sh prints them), for tests/it/boards.rs to check on the host.
set -u
dist=/opt/boardbench
work=/tmp/checks
mkdir -p "$work"

emit() {
    echo "==BB== begin $1"
    cat "$2"
    [ -s "$2" ] && [ "$(tail -c 1 "$2" | od -An -c | tr -d ' ')" != '\n' ] && echo
    echo "==BB== end $1 rc=$3"
}

{
    tr -d '\0' </proc/device-tree/model
    echo
    uname -m
    grep -c '^processor' /proc/cpuinfo
    sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo
} >"$work/board"
emit board "$work/board" 0

BB_FLAGS="--warmup 0 --iterations 1 --time 100ms --forks 1 --precision off --idle-wait 10s" \
    "$dist/scripts/run-all.sh" --out "$work/results" >"$work/run-all" 2>"$work/run-all.err"
rc=$?
emit run-all "$work/run-all" $rc
emit run-all.err "$work/run-all.err" $rc
res=$(sed -n 's/^results: //p' "$work/run-all")
if [ -n "$res" ]; then
    (cd "$res" && ls -1) >"$work/files"
    emit files "$work/files" 0
    for f in "$res"/*; do
        emit "file:$(basename "$f")" "$f" 0
    done
fi
echo "== $(hostname): checks done =="
