#!/usr/bin/env bash
# Checks that two builds measure the same things in the same shapes: for each binary, its
# --help and --dry-run plans byte for byte, and a tiny real run's JSON with every number
# left out (benchmark names, modes, params, units, metric names and the keys of every
# object). For a change that moves code but must not change what is measured.
#   scripts/compare-shapes.sh OLD_BIN_DIR NEW_BIN_DIR
# IGNORE_KEYS="answer ..." leaves those JSON keys out too (a field one side adds on
# purpose). Booleans are measured flags (throttled, placements that differ): their
# values are left out, their keys kept.
# Exit 0 when every shape matches, 1 (with a diff) when one differs, 2 on bad arguments.
set -euo pipefail

if [ $# -ne 2 ] || [ ! -d "$1" ] || [ ! -d "$2" ]; then
    echo "usage: scripts/compare-shapes.sh OLD_BIN_DIR NEW_BIN_DIR" >&2
    exit 2
fi
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tiny=(--quick --warmup 0 --iterations 2 --time 50ms --forks 1)

# Each case: a binary and its arguments, one case a line.
cases() {
    cat <<'EOF'
bb-zstd --help
bb-zstd --dry-run
bb-zstd --full --dry-run --threads 1,2 --op compress
bb-zstd --quick --size 64k --jobs 2 --format json TINY
bb-ipc --help
bb-ipc --dry-run
bb-ipc --quick --format json --calls method_no_args,method_block --transport unix TINY
bb-rpc --help
bb-rpc --dry-run
bb-rpc --full --dry-run --transport unix --client sync,async,floor --rate sweep
bb-rpc --quick --format json --transport unix --payload 16 --depth 1,8 TINY
bb-seek --help
bb-seek --dry-run --sizes 64k --source DIR
bb-seek --quick --format json --sizes 64k --source DIR TINY
bb-compare --help
EOF
}

# The JSON of a run with its numbers left out: what was measured, not how fast.
shape() {
    python3 - "$1" <<'EOF'
import json, sys
import os
skip = {"environment", "jvm", "rawData", "rawDataHistogram", "scorePercentiles"} | set(os.environ.get("IGNORE_KEYS", "").split())
def walk(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, dict):
        return {k: walk(x) for k, x in sorted(v.items()) if k not in skip}
    if isinstance(v, list):
        kinds = [walk(x) for x in v]
        # Lists of numbers differ in length from run to run; lists of records do not.
        return kinds if any(isinstance(k, (dict, list)) for k in kinds) else "[numbers]"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return "number"
    return v
print(json.dumps(walk(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))
EOF
}

status=0
n=0
while read -r bin rest; do
    n=$((n + 1))
    args=()
    for a in $rest; do
        case $a in
            TINY) args+=("${tiny[@]}") ;;
            DIR) args+=("$work/objects") ;;
            *) args+=("$a") ;;
        esac
    done
    for side in old new; do
        dir=${!side}
        # The program's name is in its messages: run both as the same name.
        mkdir -p "$work/$side"
        ln -sf "$dir/$bin" "$work/$side/$bin"
        "$work/$side/$bin" "${args[@]}" >"$work/$side.$n.out" 2>/dev/null || echo "exit $?" >>"$work/$side.$n.out"
        case " ${args[*]} " in
            *" json "*) shape "$work/$side.$n.out" >"$work/$side.$n.shape" ;;
            *) cp "$work/$side.$n.out" "$work/$side.$n.shape" ;;
        esac
    done
    if diff -u "$work/old.$n.shape" "$work/new.$n.shape" >"$work/diff"; then
        echo "same: $bin $rest"
    else
        echo "DIFFERENT: $bin $rest"
        head -n 40 "$work/diff"
        status=1
    fi
done < <(cases)
exit $status
