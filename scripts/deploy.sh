#!/bin/sh
# Deploys boardbench to a board and runs the suite there: builds the dist for the
# board's target, copies it over ssh to REMOTE_DIR (default ~/boardbench, the board's
# home), runs scripts/run-all.sh there, and copies the results directory back under
# results/. Uses your own ssh configuration (keys, ports, ProxyJump) and nothing else.
#
#   scripts/deploy.sh [--quick | --standard | --full] [--target armv7|aarch64|x86|armv6]
#                     [--only zstd,...] [--no-build | --dist TARBALL] [--results DIR]
#                     [--against DIR] HOST
#   scripts/deploy.sh --print-target [--target T] HOST   (checks the board, prints T)
#   scripts/deploy.sh --dry-run [...] HOST   (run-all.sh --dry-run's plan, from the board)
#
# HOST is user@host or a Host of your ssh config. Without --target, the target follows
# the board's `uname -m` (armv6l, a Pi Zero or 1: armv6); with it, a board of another
# architecture is refused (exit 2), but armv6 runs on an armv7 board too.
# SSH_OPTS: extra options for ssh (-F FILE, -i KEY, -o Port=2222, -J JUMP).
# REMOTE_DIR: where on the board (default ~/boardbench; a leading ~ is the board's home).
# The profile defaults to run-all's (standard); BB_FLAGS and BB_FLAGS_<name> are passed
# on to run-all.sh on the board, after the profile. Exit code: run-all's (0 all ran, 1 a binary
# failed), 1 when the board cannot be reached, 2 for bad arguments. --dry-run unpacks the
# dist in a temporary folder on the board, prints run-all.sh --dry-run's plan and estimate
# from there, and removes it: nothing is left on the board, nothing comes back.
# --against DIR: DIR on this machine holds another build's bb-* binaries for the same
# target (an older dist's bin/, another checkout's target/<triple>/release); they are
# copied beside the dist, into REMOTE_DIR/against/ (replaced at each deploy), and
# run-all.sh runs with --against ../against: each binary against its other build, fork by
# fork, its answer block ending with the A/B lines.
set -eu

usage() {
    echo "usage: deploy.sh [--quick | --standard | --full] [--target armv7|aarch64|x86|armv6] [--only LIST] [--no-build | --dist TARBALL] [--results DIR] [--against DIR] [--dry-run] HOST" >&2
    exit 2
}

repo=$(cd "$(dirname "$0")/.." && pwd)
profile=
target=
only=
build=yes
dist=
results=results
print_target=no
dry_run=no
against=
against_given=no
host=
while [ $# -gt 0 ]; do
    case $1 in
        --quick | --standard | --full) profile=$1 ;;
        --target) [ $# -ge 2 ] || usage; target=$2; shift ;;
        --only) [ $# -ge 2 ] || usage; only=$2; shift ;;
        --no-build) build=no ;;
        --dist) [ $# -ge 2 ] || usage; dist=$2; shift ;;
        --results) [ $# -ge 2 ] || usage; results=$2; shift ;;
        --print-target) print_target=yes ;;
        --dry-run) dry_run=yes ;;
        --against) [ $# -ge 2 ] || usage; against=$2; against_given=yes; shift ;;
        -h | --help) sed -n '2,29s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) echo "deploy.sh: unknown option '$1'" >&2; usage ;;
        *) [ -z "$host" ] || usage; host=$1 ;;
    esac
    shift
done
[ -n "$host" ] || usage
# The other build's binaries: the measurement ones (as run-all.sh finds them: bb-*, not
# bb-compare, not cargo's bb-x.d), checked before the board is asked anything.
against_bins=
if [ $against_given = yes ]; then
    [ -d "$against" ] || { echo "deploy.sh: --against '$against': not a directory (expected another build's bb-* binaries)" >&2; exit 2; }
    for exe in "$against"/bb-*; do
        b=${exe##*/}
        case $b in bb-compare | *[!A-Za-z0-9_-]*) continue ;; esac
        if [ -f "$exe" ] && [ -x "$exe" ]; then against_bins="$against_bins $b"; fi
    done
    [ -n "$against_bins" ] || { echo "deploy.sh: --against '$against': no bb-* binaries there (an unpacked dist has them in its bin/)" >&2; exit 2; }
fi
# Not ${REMOTE_DIR:-~/boardbench}: the shell would expand that ~ here, on the laptop.
remote_dir=${REMOTE_DIR:-}
[ -n "$remote_dir" ] || remote_dir='~/boardbench'
ssh_opts=${SSH_OPTS:-}

say() { echo "deploy $host: $*" >&2; }

. "$repo/scripts/lib.sh"
# REMOTE_DIR as one word for the board's shell, its ~ expanded there.
rdir=$(remote_path "$remote_dir")

# shellcheck disable=SC2086  # SSH_OPTS are meant to split into words
remote() { ssh -n $ssh_opts "$host" "$@"; }

# Which of our targets runs on a machine that reports this `uname -m`.
target_for_arch() {
    case $1 in
        armv6l | armv6*) echo armv6 ;;
        armv7l | armv7* | armv8l) echo armv7 ;;
        aarch64 | arm64) echo aarch64 ;;
        x86_64 | amd64) echo x86 ;;
        *) echo unknown ;;
    esac
}

case $target in
    "" | armv7 | aarch64 | x86 | armv6) ;;
    *) echo "deploy.sh: --target '$target': expected armv7, aarch64, x86 or armv6" >&2; exit 2 ;;
esac

arch=$(remote uname -m) || { say "cannot run ssh $host uname -m (check ssh $host by hand)"; exit 1; }
fits=$(target_for_arch "$arch")
if [ -z "$target" ]; then
    [ "$fits" != unknown ] || { say "the board reports '$arch', which no boardbench target serves"; exit 2; }
    target=$fits
elif [ "$fits" != "$target" ] && ! { [ "$target" = armv6 ] && [ "$fits" = armv7 ]; }; then
    hint=
    [ "$fits" != unknown ] && hint=" (TARGET=$fits would)"
    say "the board reports '$arch' (uname -m), which the $target build does not run on$hint"
    exit 2
fi
if [ $print_target = yes ]; then
    echo "$target"
    exit 0
fi

if [ -z "$dist" ]; then
    if [ $build = yes ]; then
        say "building for $target"
        make -s -C "$repo" "cross-$target" >&2
    fi
    dist=$repo/$("$repo/scripts/pack.sh" "$target")
fi
[ -f "$dist" ] || { say "no dist tarball at $dist"; exit 1; }
name=$(basename "$dist" .tar.gz)

# run-all on the board, with BB_FLAGS and BB_FLAGS_<name> passed on.
vars=
for v in $(env | sed -n 's/^\(BB_FLAGS[A-Za-z0-9_]*\)=.*/\1/p'); do
    eval "value=\${$v}"
    vars="$vars $v=$(quote "$value")"
done
only_arg=
[ -n "$only" ] && only_arg="--only $(quote "$only")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP    # the EXIT trap then runs too

# What goes to the board: the dist, or with --against the dist and against/ beside it
# (the other build's binaries), in one tarball made here.
payload=$dist
against_arg=
if [ -n "$against" ]; then
    mkdir "$work/payload" "$work/payload/against"
    tar -C "$work/payload" -xzf "$dist"
    for b in $against_bins; do cp "$against/$b" "$work/payload/against/$b"; done
    tar -C "$work/payload" -czf "$work/payload.tar.gz" "$name" against
    payload=$work/payload.tar.gz
    against_arg="--against ../against"
    say "the other build:$against_bins from $against"
fi

if [ $dry_run = yes ]; then
    say "run-all.sh --dry-run for $name, in a temporary folder on the board"
    # shellcheck disable=SC2086
    ssh $ssh_opts "$host" "t=\$(mktemp -d) && trap 'rm -rf \"\$t\"' EXIT && cd \"\$t\" && tar -xzf - \
        && cd $(quote "$name") &&$vars sh scripts/run-all.sh --dry-run $profile $only_arg $against_arg" <"$payload"
    exit
fi

# Copied through ssh itself rather than scp, whose remote paths each scp version
# quotes and expands its own way. An earlier deploy's against/ goes, with or without.
say "copying $name${against:+ and against/} to $remote_dir ($arch)"
# shellcheck disable=SC2086
ssh $ssh_opts "$host" "mkdir -p $rdir && cd $rdir && rm -rf $(quote "$name") against && tar -xzf -" <"$payload" \
    || { say "copying $dist to $remote_dir failed"; exit 1; }

say "running run-all.sh ${profile:-(standard profile)}${against:+ against the other build}"
{
    rc=0
    remote "cd $rdir/$(quote "$name") &&$vars sh scripts/run-all.sh $profile $only_arg $against_arg --out ../results" || rc=$?
    echo $rc >"$work/rc"
} | tee "$work/out"
rc=$(cat "$work/rc")
remote_results=$(sed -n 's/^results: //p' "$work/out" | tail -n 1)
if [ -z "$remote_results" ]; then
    say "run-all.sh did not finish (exit code $rc): no results to fetch"
    [ "$rc" -ne 0 ] && exit "$rc"
    exit 1
fi

fetched=$(basename "$remote_results")
case $fetched in
    '' | . | .. | / | -*) say "run-all.sh named no results directory to fetch ('$remote_results')"; exit 1 ;;
esac
mkdir -p "$results" || { say "cannot create $results"; exit 1; }
[ ! -e "$results/$fetched" ] || { say "$results/$fetched exists already: not fetched again"; exit 1; }
# Into a temporary directory beside it, moved into place only when whole: a copy cut
# short (a full file system, a dropped connection) leaves nothing behind, rather than
# empty or cut files that bb-compare would read later. ssh's status and tar's, both.
incoming=$(mktemp -d "$results/.fetching.XXXXXX") || { say "cannot write in $results"; exit 1; }
trap 'rm -rf "$work" "$incoming"' EXIT
statuses=$(
    {
        { s=0; remote "cd $(quote "$(dirname "$remote_results")") && tar -cf - $(quote "$fetched")" 3>&- || s=$?; echo "ssh $s" >&3; } \
            | { s=0; (cd "$incoming" && tar -xf -) >&2 3>&- || s=$?; echo "tar $s" >&3; }
    } 3>&1
)
if [ "$(printf '%s\n' "$statuses" | sort | tr '\n' ' ')" = "ssh 0 tar 0 " ] && [ -d "$incoming/$fetched" ] \
    && mv "$incoming/$fetched" "$results/$fetched"; then
    rm -rf "$incoming"
else
    say "fetching $remote_results failed ($(printf '%s\n' "$statuses" | sort | tr '\n' ' ' | sed 's/ $//; s/ \([a-z]\)/, \1/g')): nothing of it kept in $results"
    exit 1
fi
echo "results: $(cd "$results" && pwd)/$fetched"
exit "$rc"
