#!/bin/sh
# bb-seek against S3, as the original benchmark's reviewers asked: given a bucket and a
# prefix, make the bucket if it does not exist, generate the objects that are missing
# (bb-seek gen --dest s3://BUCKET/PREFIX/, which keeps the ones already there), then run
# bb-seek against them and write the results as run-all.sh does.
#
#   scripts/seek-s3.sh [--quick | --standard | --full] [--out DIR] [--sizes LIST] BUCKET [PREFIX]
#
# Credentials, region and endpoint come from the usual AWS settings: AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE with ~/.aws/credentials and
# ~/.aws/config, AWS_REGION, AWS_ENDPOINT_URL (MinIO, Garage, Ceph). --sizes goes to both
# gen and the run (default bb-seek's own, 1m,4m,16m); more bb-seek flags in
# $BB_FLAGS_seek (BB_FLAGS_seek="--pattern parquet --no-sign"), as run-all.sh takes them.
# Exit 0 on success, 1 when gen or the run failed, 2 for bad arguments. The last line on
# stdout is "results: <directory>".
set -u
set -f

usage() {
    echo "usage: seek-s3.sh [--quick | --standard | --full] [--out DIR] [--sizes LIST] BUCKET [PREFIX]" >&2
    exit 2
}

profile=--standard
out=results
sizes=
bucket=
prefix=
while [ $# -gt 0 ]; do
    case $1 in
        --quick | --standard | --full) profile=$1 ;;
        --out) [ $# -ge 2 ] || usage; out=$2; shift ;;
        --out=*) out=${1#--out=} ;;
        --sizes) [ $# -ge 2 ] || usage; sizes=$2; shift ;;
        --sizes=*) sizes=${1#--sizes=} ;;
        -h | --help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) echo "seek-s3.sh: unknown argument '$1'" >&2; usage ;;
        *)
            if [ -z "$bucket" ]; then bucket=$1
            elif [ -z "$prefix" ]; then prefix=$1
            else echo "seek-s3.sh: one BUCKET and one PREFIX at most ('$1')" >&2; usage
            fi ;;
    esac
    shift
done
[ -n "$bucket" ] || { echo "seek-s3.sh: which bucket? (seek-s3.sh BUCKET [PREFIX])" >&2; usage; }

here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${BB_BIN_DIR:-}" ]; then
    bindir=$BB_BIN_DIR
elif [ -d "$here/../bin" ]; then
    bindir=$here/../bin
else
    bindir=$here/../target/release
fi
[ -x "$bindir/bb-seek" ] || { echo "seek-s3.sh: no bb-seek in $bindir (build it: make build, or set BB_BIN_DIR)" >&2; exit 1; }

place="s3://$bucket/${prefix#/}"
case $place in */) ;; *) place="$place/" ;; esac
size_flags=
[ -n "$sizes" ] && size_flags="--sizes $sizes"

# The bucket and the objects, made where missing; every flag that reaches S3 comes
# along from BB_FLAGS_seek, to gen as to the run: --no-sign, --addressing, --ca-file (a
# private CA: without it gen fails with UnknownIssuer) and --request-timeout.
s3_flags=$(printf '%s\n' ${BB_FLAGS_seek:-} | awk '
    take { printf "%s ", $0; take = 0; next }
    /^--no-sign$/ { printf "%s ", $0 }
    /^--(addressing|ca-file|request-timeout)$/ { printf "%s ", $0; take = 1 }
    /^--(addressing|ca-file|request-timeout)=/ { printf "%s ", $0 }')
echo "seek-s3: $place: the bucket and the objects, made where missing"
# shellcheck disable=SC2086  # the flags are meant to split into words
"$bindir/bb-seek" $s3_flags gen --dest "$place" $size_flags || {
    echo "seek-s3.sh: generating the objects at $place failed (above)" >&2
    exit 1
}
BB_FLAGS_seek="--source $place $size_flags ${BB_FLAGS_seek:-}" \
    exec "$here/run-all.sh" "$profile" --out "$out" --only seek
