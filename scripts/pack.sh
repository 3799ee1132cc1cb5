#!/bin/sh
# Packs one target's release binaries with what a board needs (README, ARCHITECTURE, docs/,
# BENCHMARKS, scripts/run-all.sh, scripts/seek-s3.sh) into
# dist/boardbench-<version>-<target>.tar.gz and prints its path; a tarball already there
# with the same contents is kept as it is ("pack: ... unchanged" on stderr).
#   scripts/pack.sh TARGET     (after make cross-TARGET; armv7, aarch64, x86, armv6 or a triple)
# CROSS=zig (as make passes it on) packs the short names' zig builds, from target/zig.
set -eu
cd "$(dirname "$0")/.."
out=target
case ${1:?usage: scripts/pack.sh armv7|aarch64|x86|armv6|TARGET_TRIPLE} in
    armv7) triple=armv7-unknown-linux-gnueabihf ;;
    aarch64) triple=aarch64-unknown-linux-musl ;;
    x86) triple=x86_64-unknown-linux-musl ;;
    armv6) triple=arm-unknown-linux-musleabihf ;;
    *) triple=$1 ;;
esac
case $1 in
    armv7 | aarch64 | x86)
        if [ "${CROSS:-debian}" = zig ]; then
            out=target/zig
            # zig links glibc only dynamically: its static armv7 is musl.
            if [ "$1" = armv7 ]; then triple=armv7-unknown-linux-musleabihf; fi
        fi ;;
esac
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
name=boardbench-$version-$triple
# Staged apart and renamed into place, so two packs at once never mix their files.
stage=dist/.pack-$$
dir=$stage/$name
trap 'rm -rf "$stage"' EXIT
rm -rf "$stage" && mkdir -p "$dir/bin" "$dir/scripts"
for src in src/bin/bb-*.rs; do
    bin=$(basename "$src" .rs)
    exe=$out/$triple/release/$bin
    [ -f "$exe" ] || { echo "pack: $exe is missing: build it first (make cross-$1)" >&2; exit 1; }
    cp "$exe" "$dir/bin/"
done
cp README.md ARCHITECTURE.md BENCHMARKS.md "$dir/"
cp -R docs "$dir/"
cp scripts/run-all.sh scripts/seek-s3.sh "$dir/scripts/"
# The same contents as the tarball already there: that one is kept, byte for byte, so the
# playbook's copy to a board finds the same checksum and copies nothing.
if [ -f "dist/$name.tar.gz" ] && mkdir "$stage/old" \
    && tar -C "$stage/old" -xzf "dist/$name.tar.gz" 2>/dev/null \
    && diff -r "$stage/old/$name" "$dir" >/dev/null 2>&1; then
    echo "pack: dist/$name.tar.gz unchanged" >&2
    echo "dist/$name.tar.gz"
    exit 0
fi
tar -C "$stage" -czf "$stage/$name.tar.gz" "$name"
mv "$stage/$name.tar.gz" "dist/$name.tar.gz"
echo "dist/$name.tar.gz"
