#!/bin/sh
# Deploys boardbench to many boards at once and runs the suite on each (scripts/deploy.sh
# per board, in parallel with xargs -P), then compares them in one bb-compare table.
#
#   scripts/fleet.sh HOSTS_FILE [--parallel N] [--quick | --standard | --full]
#                    [--only zstd,...] [--no-build] [--results DIR] [--against DIR]
#
# HOSTS_FILE: a board per line, `HOST [TARGET] [dir=REMOTE_DIR] [ssh options...]`, where
# HOST is user@host or a Host of your ssh config, TARGET armv7, aarch64, x86 or armv6 (default:
# from the board's uname -m), dir= where on the board (default ~/boardbench), and the
# ssh options (-i KEY, -o Port=2222, -J JUMP) apply to that board only; # starts a comment.
# Words are split as the shell splits them, nothing expanded: quote a dir= with a blank
# (dir='/srv/bench dir'); a line that does not parse is refused with its line number
# (exit 2, before anything runs), as is an ssh option with a blank (SSH_OPTS cannot
# carry one: put it in ~/.ssh/config).
# The profile defaults to run-all's (standard). SSH_OPTS apply to every board; BB_FLAGS
# and BB_FLAGS_<name> go to run-all.sh, after the profile;
# COMPARE_FLAGS to bb-compare (--ignore-params threads, for boards with other core counts).
# Writes DIR/fleet-<UTC date-time>/ (DIR defaults to results): <board>/ with its results,
# <board>.log, compare.txt (the table across boards) and compare.svg; it prints the
# boards' answer (which is faster at what, beyond noise or not). A board that fails
# is reported and the others go on. Exit 0 when every board ran everything, 1 otherwise.
# --against DIR goes to each board's deploy.sh: another build's bb-* binaries, copied
# beside the first, each binary run against them (its answer block ends with the A/B
# lines); one build, so boards of one target (a fleet of several: a run per target).
set -eu
set -f

usage() {
    echo "usage: fleet.sh HOSTS_FILE [--parallel N] [--quick | --standard | --full] [--only LIST] [--no-build] [--results DIR] [--against DIR]" >&2
    exit 2
}

repo=$(cd "$(dirname "$0")/.." && pwd)
hosts_file=
parallel=4
profile=
only=
build=yes
results=results
against=
against_given=no
while [ $# -gt 0 ]; do
    case $1 in
        --parallel) [ $# -ge 2 ] || usage; parallel=$2; shift ;;
        --quick | --standard | --full) profile=$1 ;;
        --only) [ $# -ge 2 ] || usage; only=$2; shift ;;
        --no-build) build=no ;;
        --results) [ $# -ge 2 ] || usage; results=$2; shift ;;
        --against) [ $# -ge 2 ] || usage; against=$2; against_given=yes; shift ;;
        -h | --help) sed -n '2,27s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) echo "fleet.sh: unknown option '$1'" >&2; usage ;;
        *) [ -z "$hosts_file" ] || usage; hosts_file=$1 ;;
    esac
    shift
done
[ -n "$hosts_file" ] || usage
[ -r "$hosts_file" ] || { echo "fleet.sh: cannot read hosts file $hosts_file" >&2; exit 2; }
case $parallel in
    '' | *[!0-9]* | 0) echo "fleet.sh: --parallel '$parallel': expected a number of at least 1" >&2; exit 2 ;;
esac
# The jobs read it from their environment, as the tarballs (below): never parsed again.
if [ $against_given = yes ]; then
    [ -d "$against" ] || { echo "fleet.sh: --against '$against': not a directory (expected another build's bb-* binaries)" >&2; exit 2; }
    BB_AGAINST=$against
    export BB_AGAINST
fi

. "$repo/scripts/lib.sh"

# The hosts file, read whole before anything runs. Each line is split into words as the
# shell would split it, without expanding anything: blanks separate words, '...' and "..."
# quote (a dir= with a blank: dir='/srv/bench dir'), a backslash quotes the next
# character, and # outside quotes starts a comment. A line that does not parse (a quote
# left open), or a host or ssh option holding a blank (the options reach ssh through
# SSH_OPTS, split on blanks), is refused, named with its line number: exit 2, nothing
# run. Each board comes out as "L<line number>", then "w<word>" per word, then "E".
# shellcheck disable=SC2016  # awk's $0, not the shell's
boards=$(BB_HOSTS_FILE=$hosts_file awk '
function refuse(why) {
    printf "fleet.sh: %s line %d: %s: %s\n", ENVIRON["BB_HOSTS_FILE"], NR, why, $0 >"/dev/stderr"
    bad = 1
}
{
    n = length($0); i = 1; nw = 0; w = ""; inword = 0; err = ""
    while (i <= n) {
        c = substr($0, i, 1)
        if (c == " " || c == "\t" || c == "\r") {
            if (inword) { words[++nw] = w; w = ""; inword = 0 }
            i++
        } else if (c == "#") {
            break
        } else if (c == "\\") {
            if (i == n) { err = "a backslash at the end of the line"; break }
            w = w substr($0, i + 1, 1); inword = 1; i += 2
        } else if (c == "\047") {
            j = index(substr($0, i + 1), "\047")
            if (j == 0) { err = "a quote (\047) left open"; break }
            w = w substr($0, i + 1, j - 1); inword = 1; i += j + 1
        } else if (c == "\"") {
            i++; closed = 0; inword = 1
            while (i <= n) {
                c = substr($0, i, 1)
                if (c == "\"") { closed = 1; i++; break }
                if (c == "\\" && i < n && index("\"\\$`", substr($0, i + 1, 1)) > 0) {
                    w = w substr($0, i + 1, 1); i += 2
                } else {
                    w = w c; i++
                }
            }
            if (!closed) { err = "a quote (\") left open"; break }
        } else {
            w = w c; inword = 1; i++
        }
    }
    if (err != "") { refuse(err); next }
    if (inword) words[++nw] = w
    if (nw == 0) next
    k = 1
    if (words[1] ~ /[ \t]/) { refuse("a host name holds no blank"); next }
    k = 2
    if (k <= nw && words[k] ~ /^(armv7|aarch64|x86|armv6)$/) k++
    if (k <= nw && words[k] ~ /^dir=/) k++
    for (; k <= nw; k++) {
        if (words[k] ~ /[ \t]/) {
            refuse("the ssh option \047" words[k] "\047 holds a blank, which SSH_OPTS cannot carry (put it in ~/.ssh/config)")
            next
        }
    }
    print "L" NR
    for (k = 1; k <= nw; k++) print "w" words[k]
    print "E"
}
END { exit bad ? 2 : 0 }
' <"$hosts_file") || exit 2

fleet=$results/fleet-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$fleet"
fleet=$(cd "$fleet" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Each board: its label (a directory name), then its deploy arguments, one job file each.
labels=
failed=
while IFS= read -r record; do
    case $record in L*) ;; *) continue ;; esac
    lineno=${record#L}
    set --
    while IFS= read -r word && [ "$word" != E ]; do set -- "$@" "${word#w}"; done
    [ $# -gt 0 ] || continue
    host=$1
    shift
    target=
    case ${1:-} in armv7 | aarch64 | x86 | armv6) target=$1; shift ;; esac
    dir=
    case ${1:-} in dir=*) dir=${1#dir=}; shift ;; esac
    board_ssh="${SSH_OPTS:-} $*"
    label=$(printf '%s' "$host" | tr -c 'A-Za-z0-9._-' '_')
    # `.` and `..` would be the fleet's directory or its parent.
    case $label in . | ..) label=board-$lineno ;; esac
    case " $labels " in *" $label "*) label=$label-$lineno ;; esac
    labels="$labels $label"
    target_arg=
    [ -n "$target" ] && target_arg="--target $target"
    # The board's target, checked against its uname -m (deploy.sh says what is wrong).
    # shellcheck disable=SC2086
    if ! target=$(SSH_OPTS=$board_ssh "$repo/scripts/deploy.sh" --print-target $target_arg "$host" 2>"$fleet/$label.log" </dev/null); then
        echo "$label: FAILED: $(tail -n 1 "$fleet/$label.log")"
        failed="$failed $label"
        continue
    fi
    case $target in armv7 | aarch64 | x86 | armv6) ;; *)
        echo "$label: FAILED: deploy.sh --print-target said '$target'"
        failed="$failed $label"
        continue ;;
    esac
    {
        echo "SSH_OPTS=$(quote "$board_ssh")"
        [ -n "$dir" ] && echo "REMOTE_DIR=$(quote "$dir")"
        echo "export SSH_OPTS REMOTE_DIR"
        # The tarball's path is the job's environment ($BB_DIST_<target>, set below), so
        # that no path passes through sed or the shell's parsing again, whatever it holds.
        printf '%s' "$(quote "$repo/scripts/deploy.sh") $profile --target $target --dist \"\$BB_DIST_$target\" --results $(quote "$fleet/$label")"
        [ -n "$only" ] && printf ' --only %s' "$(quote "$only")"
        # shellcheck disable=SC2016  # expanded by the job, from its environment
        [ $against_given = yes ] && printf ' --against "$BB_AGAINST"'
        echo " $(quote "$host") >>$(quote "$fleet/$label.log") 2>&1"
        echo "echo \$? >$(quote "$work/$label.rc")"
    } >"$work/job.$label"
    echo "$target" >>"$work/targets"
done <<EOF
$boards
EOF
[ -n "$labels" ] || { echo "fleet.sh: no boards in $hosts_file" >&2; exit 2; }

# One build and one tarball per target, before the boards run in parallel.
for target in $(sort -u "$work/targets" 2>/dev/null); do
    [ $build = yes ] && make -s -C "$repo" "cross-$target" >&2
    dist=$repo/$("$repo/scripts/pack.sh" "$target")
    # The jobs read it from their environment: no eval, no sed replacement text.
    case $target in
        armv7) BB_DIST_armv7=$dist; export BB_DIST_armv7 ;;
        aarch64) BB_DIST_aarch64=$dist; export BB_DIST_aarch64 ;;
        x86) BB_DIST_x86=$dist; export BB_DIST_x86 ;;
        armv6) BB_DIST_armv6=$dist; export BB_DIST_armv6 ;;
    esac
done

set +f
jobs=$(ls "$work"/job.* 2>/dev/null || true)
set -f
echo "fleet: $(echo "$jobs" | grep -c . || true) boards, $parallel at a time, profile ${profile:---standard}; logs in $fleet"
[ -z "$jobs" ] || printf '%s\n' $jobs | xargs -P "$parallel" -n 1 sh

for label in $labels; do
    [ -f "$work/$label.rc" ] || continue
    rc=$(cat "$work/$label.rc")
    if [ "$rc" -eq 0 ]; then
        echo "$label: ok"
    else
        echo "$label: FAILED (exit code $rc): $(tail -n 1 "$fleet/$label.log")"
        failed="$failed $label"
    fi
done

# One table across every board that brought results back.
compare=${BB_COMPARE:-$repo/target/release/bb-compare}
if [ ! -x "$compare" ] && [ $build = yes ]; then
    (cd "$repo" && cargo build --release --quiet --bin bb-compare) >&2
fi
with_results=
for label in $labels; do
    [ -d "$fleet/$label" ] && with_results="$with_results $label"
done
if [ -z "$with_results" ]; then
    echo "fleet: no board brought results back"
elif [ ! -x "$compare" ]; then
    echo "fleet: no bb-compare at $compare (cargo build --release, or set BB_COMPARE)"
    failed="$failed bb-compare"
else
    rc=0
    # shellcheck disable=SC2086
    (cd "$fleet" && "$compare" ${COMPARE_FLAGS:-} --svg compare.svg --output compare.txt $with_results) >"$work/compare.out" || rc=$?
    if [ $rc -ge 2 ]; then
        cat "$work/compare.out"
        echo "fleet: bb-compare failed (exit code $rc)"
        failed="$failed bb-compare"
    else
        # The boards' answer on screen; the table is in compare.txt.
        echo
        sed -n '/^== bb-compare: the answer ==$/,$p' "$work/compare.out"
        echo "table: $fleet/compare.txt"
    fi
fi
[ -z "$failed" ] || echo "fleet: FAILED:$failed"
echo "results: $fleet"
[ -z "$failed" ]
