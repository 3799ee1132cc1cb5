#!/bin/sh
# Runs every boardbench measurement binary present with one profile and collects the
# results in DIR/<hostname>-<UTC date-time>/: one JSON report per binary (JMH's layout),
# env.json (the machine), summary.txt (the text tables) and each binary's stderr (.log),
# which is on the screen too as it comes (its progress lines, its warnings).
# POSIX sh, so it runs on a board that has only busybox.
#
#   scripts/run-all.sh [--quick | --standard | --full] [--dry-run] [--out DIR] [--only zstd,ipc,...]
#                      [--against DIR] [--calibrate [N]]
#
# The profile: --quick (a smoke run), --standard (the default: minutes), --full (hours,
# JMH's habits). It first prints the suite's estimated duration; --dry-run prints each
# binary's plan and that sum, and measures nothing. Binaries are found in $BB_BIN_DIR when
# set, else next to this script in a dist tarball (../bin), else in the repository's
# target/release. bb-compare is a tool, not a measurement: it writes env.json. Extra
# flags for every binary: $BB_FLAGS; for one binary: $BB_FLAGS_<name>
# (BB_FLAGS_zstd="--threads 1,2"). They come after the profile, so a flag there overrides
# the profile's value (BB_FLAGS="--iterations 1 --time 100ms" shortens any profile). A
# binary that fails (an exit code other than 0, or no JSON report) is reported and the
# others still run. --only runs each binary it names once, in its order. Exit 0 when every
# binary succeeded, 1 when one failed or a file of the results could not be written (a
# full file system: each is named), 2 for bad arguments. Before its summary it shows each
# binary's answer block (the last lines of its text report). The last line on stdout is
# "results: <directory>".
# --against DIR: DIR holds another build's bb-* binaries (an older dist's bin/, another
# checkout's target/release); each binary runs with --against DIR/<its name>, that build
# interleaved with this one fork by fork, and its answer block ends with the A/B lines
# ("this build against DIR/bb-zstd:"). A DIR that is no directory, or that lacks one of
# the binaries to run, is refused (exit 2) before anything runs.
# --calibrate [N]: measures this board's own noise, once per board: N runs (default 3)
# back to back, each a results directory under --out, then bb-compare --calibrate over
# them writes the noise profile ($BB_NOISE, else $XDG_CONFIG_HOME/boardbench/noise.json,
# else ~/.config/boardbench/noise.json), which every later run here reads: each ± then
# includes what whole runs differ by on this board. It ends with what each binary's
# noise came to; the last line is "noise profile: <file>".
set -u
set -f    # BB_FLAGS are split into words, never globbed

usage() {
    echo "usage: run-all.sh [--quick | --standard | --full] [--dry-run] [--out DIR] [--only zstd,ipc,...] [--against DIR] [--calibrate [N]]" >&2
    exit 2
}

profile=--standard
dry_run=no
out=results
only=
only_given=no
against=
against_given=no
calibrate=0
while [ $# -gt 0 ]; do
    case $1 in
        --quick | --standard | --full) profile=$1 ;;
        --dry-run) dry_run=yes ;;
        --out) [ $# -ge 2 ] || usage; out=$2; shift ;;
        --out=*) out=${1#--out=} ;;
        --only) [ $# -ge 2 ] || usage; only=$2; only_given=yes; shift ;;
        --only=*) only=${1#--only=}; only_given=yes ;;
        --against) [ $# -ge 2 ] || usage; against=$2; against_given=yes; shift ;;
        --against=*) against=${1#--against=}; against_given=yes ;;
        --calibrate)
            calibrate=3
            case ${2:-} in [0-9]*) calibrate=$2; shift ;; esac ;;
        --calibrate=*) calibrate=${1#--calibrate=} ;;
        -h | --help) sed -n '2,35s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "run-all.sh: unknown argument '$1'" >&2; usage ;;
    esac
    shift
done
# A missing value (`--out --quick`) or an empty one would reach mkdir as an option or
# nothing: one line, exit 2, before anything runs. A directory named -x is ./-x.
case $out in
    '') echo "run-all.sh: --out '': expected a directory" >&2; exit 2 ;;
    -*) echo "run-all.sh: --out '$out': expected a directory (one named so is ./$out)" >&2; exit 2 ;;
esac
case $calibrate in
    '' | *[!0-9]* | 1) echo "run-all.sh: --calibrate '$calibrate': expected a number of runs, 2 to 20" >&2; exit 2 ;;
esac
if [ "$calibrate" -gt 20 ]; then
    echo "run-all.sh: --calibrate $calibrate: expected a number of runs, 2 to 20" >&2; exit 2
fi
if [ "$calibrate" -gt 0 ] && [ $against_given = yes ]; then
    echo "run-all.sh: --calibrate measures this build against itself: it takes no --against" >&2; exit 2
fi
# The other build's directory, checked here; its binaries once the names are known.
if [ $against_given = yes ]; then
    if [ -z "$against" ]; then
        echo "run-all.sh: --against '': expected a directory of another build's bb-* binaries" >&2; exit 2
    elif [ ! -e "$against" ]; then
        echo "run-all.sh: --against '$against': no such directory" >&2; exit 2
    elif [ ! -d "$against" ]; then
        echo "run-all.sh: --against '$against': not a directory (expected one of another build's bb-* binaries)" >&2; exit 2
    fi
    # DIR/ and DIR name the same binaries; a DIR named -x reaches a binary as ./-x.
    while [ "$against" != / ] && [ "${against%/}" != "$against" ]; do against=${against%/}; done
    case $against in -*) against=./$against ;; esac
fi

here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${BB_BIN_DIR:-}" ]; then
    bindir=$BB_BIN_DIR
elif [ -d "$here/../bin" ]; then
    bindir=$here/../bin
else
    bindir=$here/../target/release
fi

# The measurement binaries: executable bb-* files, not bb-compare, not cargo's bb-x.d.
names=
set +f
for exe in "$bindir"/bb-*; do
    name=${exe##*/}
    case $name in *.* | bb-compare) continue ;; esac
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    names="$names $name"
done
set -f
if [ -z "$names" ]; then
    echo "run-all.sh: no bb-* binaries in $bindir (build them: make build, or set BB_BIN_DIR)" >&2
    exit 1
fi
if [ $only_given = yes ]; then
    # In the order given, each once: `--only zstd,zstd` runs bb-zstd once (a second run
    # would write over the first's report in the same directory).
    chosen=
    for short in $(echo "$only" | tr ',' ' '); do
        case " $names " in
            *" bb-$short "*) ;;
            *) echo "run-all.sh: --only: no binary bb-$short in $bindir (present:$names)" >&2; exit 2 ;;
        esac
        case " $chosen " in *" bb-$short "*) ;; *) chosen="$chosen bb-$short" ;; esac
    done
    if [ -z "$chosen" ]; then
        echo "run-all.sh: --only '$only': names no binary (present:$names)" >&2
        exit 2
    fi
    names=$chosen
fi
if [ -n "$against" ]; then
    missing=
    for name in $names; do
        [ -f "$against/$name" ] && [ -x "$against/$name" ] || missing="${missing:+$missing, }$name"
    done
    if [ -n "$missing" ]; then
        echo "run-all.sh: --against '$against': no $missing there, which this run needs (--only leaves a binary out)" >&2
        exit 2
    fi
fi

# --calibrate: this script N times, then bb-compare --calibrate over their results.
if [ "$calibrate" -gt 0 ]; then
    noise=${BB_NOISE:-}
    if [ -z "$noise" ]; then
        case ${XDG_CONFIG_HOME:-} in
            /*) noise=$XDG_CONFIG_HOME/boardbench/noise.json ;;
            *) noise=${HOME:?run-all.sh: --calibrate: set HOME or BB_NOISE}/.config/boardbench/noise.json ;;
        esac
    fi
    if [ $dry_run = yes ]; then
        echo "run-all: --calibrate runs this $calibrate times, then writes $noise"
        exec sh "$0" "$profile" --dry-run --out "$out" ${only:+--only "$only"}
    fi
    [ -x "$bindir/bb-compare" ] || { echo "run-all.sh: --calibrate needs bb-compare in $bindir" >&2; exit 1; }
    mkdir -p "$(dirname "$noise")" || { echo "run-all.sh: --calibrate: cannot create the directory of $noise" >&2; exit 1; }
    set --
    i=1
    while [ $i -le "$calibrate" ]; do
        echo "run-all: calibration run $i of $calibrate"
        got=$(sh "$0" "$profile" --out "$out" ${only:+--only "$only"})
        rc=$?
        printf '%s\n' "$got"
        res=$(printf '%s\n' "$got" | sed -n 's/^results: //p' | tail -n 1)
        if [ $rc -ne 0 ] || [ -z "$res" ]; then
            echo "run-all.sh: --calibrate: run $i failed (exit $rc): no profile written" >&2
            exit 1
        fi
        set -- "$@" "$res"
        i=$((i + 1))
    done
    echo
    "$bindir/bb-compare" --calibrate "$noise" "$@" || exit 1
    echo
    echo "noise profile: $noise"
    exit 0
fi

# The flags of one binary: the profile, then $BB_FLAGS, then $BB_FLAGS_<name>.
flags_of() {
    eval "extra=\${BB_FLAGS_$(echo "${1#bb-}" | tr -c 'A-Za-z0-9_\n' '_'):-}"
    echo "$profile ${BB_FLAGS:-} $extra"
}

# Every binary's plan (its --dry-run), and the sum: known before anything runs.
# A binary without a plan is named here, and fails again, reported, when it runs.
total=0
unplanned=
about_word=about    # "at most" where a binary may add forks to reach a precision
for name in $names; do
    # --against DIR/<name> as the positional parameters (the script's own are parsed
    # already): the path reaches the binary as one word, whatever it holds.
    if [ -n "$against" ]; then set -- --against "$against/$name"; else set --; fi
    # shellcheck disable=SC2046  # the flags are meant to split into words
    if ! plan=$("$bindir/$name" $(flags_of "$name") "$@" --dry-run 2>&1); then
        echo "run-all.sh: $name: no plan: $(printf '%s\n' "$plan" | tail -n 1)" >&2
        unplanned="$unplanned $name"
        continue
    fi
    [ $dry_run = yes ] && printf '%s\n\n' "$plan"
    seconds=$(printf '%s\n' "$plan" | sed -n 's/^estimated duration: .*(\([0-9]*\)[.0-9]* s)$/\1/p')
    printf '%s\n' "$plan" | grep -q '^estimated duration: at most ' && about_word="at most"
    total=$((total + ${seconds:-0}))
done
if [ $total -ge 3600 ]; then
    about="$((total / 3600)) h $((total % 3600 / 60)) min"
elif [ $total -ge 60 ]; then
    about="$((total / 60)) min $((total % 60)) s"
else
    about="$total s"
fi
echo "run-all: $(echo $names | wc -w) binaries, profile ${profile#--}, estimated duration: $about_word $about ($total s)"
[ -n "$against" ] && echo "run-all: this build against the one in $against"
if [ $dry_run = yes ]; then
    [ -z "$unplanned" ]
    exit
fi

host=$(uname -n)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out" || { echo "run-all.sh: --out '$out': cannot create it" >&2; exit 1; }
res=$out/$host-$stamp
n=1
while ! mkdir "$res" 2>/dev/null; do    # two runs in the same second get their own
    n=$((n + 1))
    res=$out/$host-$stamp-$n
    [ $n -lt 100 ] || { echo "run-all.sh: cannot create a directory under $out" >&2; exit 1; }
done
res=$(cd "$res" && pwd)

# What could not be written (a full file system): each said at once, all again at the end,
# and the exit code 1. What the run found is kept in memory (shell variables) meanwhile:
# each binary's exit code, text report and answer, and the summary, written once at the end.
unwritten=
cannot_write() {
    unwritten="$unwritten $1"
    echo "run-all.sh: cannot write $res/$1" >&2
}
nl='
'

# env.json: the environment record every report carries, from bb-compare --env; a
# minimal one from uname where bb-compare is missing. Nothing empty is left in its place.
if [ -x "$bindir/bb-compare" ] && "$bindir/bb-compare" --env >"$res/.env.json.tmp" 2>/dev/null; then
    :
else
    printf '{\n  "hostname" : "%s",\n  "arch" : "%s",\n  "kernel" : "%s"\n}\n' \
        "$host" "$(uname -m)" "$(uname -r)" 2>/dev/null >"$res/.env.json.tmp"
fi && mv "$res/.env.json.tmp" "$res/env.json" 2>/dev/null || {
    rm -f "$res/.env.json.tmp"
    cannot_write env.json
}

summary="boardbench run-all ${profile#--} on $host ($(uname -m), Linux $(uname -r)), $stamp"
summary="$summary${nl}binaries:$names"
[ -n "${BB_FLAGS:-}" ] && summary="$summary${nl}BB_FLAGS: $BB_FLAGS"
[ -n "$against" ] && summary="$summary${nl}against: $against"

failed=
answers=
total_start=$(date +%s)
for name in $names; do
    flags=$(flags_of "$name")
    if [ -n "$against" ]; then set -- --against "$against/$name"; else set --; fi
    echo "$name $flags $*" | tr -s ' ' | sed 's/ $//'
    start=$(date +%s)
    # Its stderr (progress lines, warnings) on the screen as it comes and in its .log,
    # through tee; its stdout (the text report) and then its exit code come through fd 3
    # into memory (POSIX sh has no pipefail; a file for them would be lost on a full file
    # system). tee's own status says whether the .log was written.
    log_written=yes
    # shellcheck disable=SC2086  # the flags are meant to split into words
    got=$(
        {
            {
                "$bindir/$name" $flags "$@" --output "$res/$name.json" --format json 2>&1 >&3 3>&-
                printf '\n%s' "$?" >&3
            } | tee "$res/$name.log" >&2 3>&-
        } 3>&1
    ) || log_written=no
    rc=${got##*"$nl"}
    text=$(printf '%s' "${got%"$nl"*}")
    took=$(($(date +%s) - start))
    if [ "$rc" -ne 0 ]; then
        how="FAILED with exit code $rc after ${took}s"
    elif [ ! -s "$res/$name.json" ]; then
        # Exit code 0 but no report (BB_FLAGS=--dry-run or --help, say): nothing measured.
        how="FAILED: exit code 0 but no report ($name.json) after ${took}s"
    else
        how="ok in ${took}s"
    fi
    if [ $log_written = no ]; then
        [ -s "$res/$name.log" ] || rm -f "$res/$name.log"
        cannot_write "$name.log"
    fi
    summary="$summary${nl}${nl}== $name: $how =="
    [ -n "$text" ] && summary="$summary$nl$text"
    # Each binary's answer block (its text report's last lines), shown at the end.
    block=$(printf '%s\n' "$text" | sed -n '/^== .*: the answer ==$/,$p')
    [ -n "$block" ] && answers="${answers:+$answers$nl$nl}$block"
    case $how in
        ok*) echo "$name: $how" ;;
        *)
            failed="$failed $name"
            last=$(tail -n 5 "$res/$name.log" 2>/dev/null | sed 's/^/    /')
            if [ -n "$last" ]; then
                printf '%s\n' "$name: $how:" "$last"
                summary="$summary$nl$last"
            else
                echo "$name: $how"
            fi ;;
    esac
done

took=$(($(date +%s) - total_start))
if [ -n "$answers" ]; then
    echo
    printf '%s\n' "$answers"
fi
if [ -z "$failed" ]; then
    last="every binary succeeded ($(echo $names | wc -w)) in ${took}s"
else
    last="FAILED:$failed (of$names), ${took}s"
fi
echo
echo "$last"
summary="$summary$nl$nl$last"
{ printf '%s\n' "$summary" 2>/dev/null >"$res/.summary.txt.tmp" && mv "$res/.summary.txt.tmp" "$res/summary.txt" 2>/dev/null; } || {
    rm -f "$res/.summary.txt.tmp"
    cannot_write summary.txt
}
[ -z "$unwritten" ] || echo "run-all.sh: these results lack what could not be written in $res:$unwritten (is its file system full?)" >&2
echo "results: $res"
[ -z "$failed" ] && [ -z "$unwritten" ]
