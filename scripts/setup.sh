#!/bin/sh
# Installs what boardbench's make targets need, and only what is missing:
#   scripts/setup.sh native   cargo and a C compiler (for zstd's C code)
#   scripts/setup.sh debian   + the rustup targets and Debian cross compilers
#   scripts/setup.sh zig      + zig and cargo-zigbuild from PyPI (make cross-* CROSS=zig,
#                             on any Linux or macOS) and the rustup targets
#   scripts/setup.sh zig-std  zig, cargo-zigbuild and the Makefile's NIGHTLY with rust-src,
#                             for the -Zbuild-std builds (armv6, and armv7 through zig)
#   scripts/setup.sh cross    all three: everything make cross builds with
#   scripts/setup.sh test     + qemu-user-static, file and readelf, for the cross-built binaries;
#                             nginx (with its dav module: PUT), for bb-seek's HTTP tests;
#                             busybox, chromium and openssh-server for the suite's tests;
#                             ruby, whose Benchmark.bm the bm format is checked against;
#                             Python's msgpack, for bb-rpc's interop test
#   scripts/setup.sh bench    + the zstd CLI, the reference of scripts/bench-zstd.sh;
#                             nginx, the HTTP server of scripts/bench-seek.sh
# As root it installs; otherwise it prints the exact commands and exits 1.
# Quick and silent when everything is there.
set -eu

level=${1:-native}
targets="armv7-unknown-linux-gnueabihf aarch64-unknown-linux-musl x86_64-unknown-linux-musl"
nightly=$(sed -n 's/^NIGHTLY *:= *//p' "$(dirname "$0")/../Makefile")
# Pinned like the nightly: a new zig or cargo-zigbuild could change what gets linked.
zig_pip="ziglang==0.17.1 cargo-zigbuild==0.24.1"

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo is missing; install Rust with rustup (https://rustup.rs), then rerun" >&2
    exit 1
fi

packages=""
commands=""     # command:package pairs to check
debian="arm-linux-gnueabihf-gcc:gcc-arm-linux-gnueabihf aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu musl-gcc:musl-tools"
case $level in
    native | zig | zig-std) commands="cc:gcc" ;;
    debian | cross) commands="cc:gcc $debian" ;;
    test) commands="cc:gcc $debian
                    qemu-arm-static:qemu-user-static qemu-aarch64-static:qemu-user-static file:file readelf:binutils
                    /usr/sbin/nginx:nginx
                    busybox:busybox chromium:chromium /usr/sbin/sshd:openssh-server ssh:openssh-client
                    ruby:ruby" ;;
    bench) commands="cc:gcc zstd:zstd /usr/sbin/nginx:nginx" ;;
    *) echo "setup: unknown level '$level' (expected native, debian, zig, zig-std, cross, test or bench)" >&2; exit 2 ;;
esac

for pair in $commands; do
    cmd=${pair%%:*}
    pkg=${pair#*:}
    if ! command -v "$cmd" >/dev/null 2>&1; then
        case " $packages " in *" $pkg "*) ;; *) packages="$packages $pkg" ;; esac
    fi
done

# bb-rpc's interop test needs Python's msgpack for the python3 on PATH: Debian's package
# serves /usr/bin/python3 (or no python3 yet), pip any other (pyenv's, say).
pip_packages=""
if [ "$level" = test ] && ! python3 -c 'import msgpack' >/dev/null 2>&1; then
    case $(command -v python3 || true) in
        ""|/usr/bin/python3) packages="$packages python3 python3-msgpack" ;;
        *) pip_packages="msgpack" ;;
    esac
fi

# zig and cargo-zigbuild (which finds zig as `python3 -m ziglang` too) from PyPI.
case $level in
    zig | zig-std | cross)
        if ! command -v cargo-zigbuild >/dev/null 2>&1 \
            || ! { command -v zig >/dev/null 2>&1 || python3 -c 'import ziglang' >/dev/null 2>&1; }; then
            pip_packages="$pip_packages $zig_pip"
        fi ;;
esac

# The pinned nightly with rust-src, for -Zbuild-std.
missing_nightly=""
case $level in
    zig-std | cross)
        rustup component list --toolchain "$nightly" --installed 2>/dev/null | grep -qx rust-src \
            || missing_nightly=$nightly ;;
esac

missing_targets=""
if [ "$level" != native ] && [ "$level" != bench ] && [ "$level" != zig-std ]; then
    installed=$(rustup target list --installed 2>/dev/null || true)
    for t in $targets; do
        echo "$installed" | grep -qx "$t" || missing_targets="$missing_targets $t"
    done
fi

[ -z "$packages" ] && [ -z "$missing_targets" ] && [ -z "$pip_packages" ] && [ -z "$missing_nightly" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "setup: missing pieces; run these, then rerun make:" >&2
    [ -n "$packages" ] && echo "  sudo apt-get update && sudo apt-get install -y$packages" >&2
    [ -n "$missing_targets" ] && echo "  rustup target add$missing_targets" >&2
    [ -n "$pip_packages" ] && echo "  python3 -m pip install$pip_packages" >&2
    [ -n "$missing_nightly" ] && echo "  rustup toolchain install $nightly --profile minimal --component rust-src" >&2
    exit 1
fi

if [ -n "$packages" ]; then
    echo "setup: installing$packages" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
fi
if [ -n "$pip_packages" ]; then
    echo "setup: installing$pip_packages for $(command -v python3)" >&2
    python3 -m pip install -q --root-user-action=ignore $pip_packages
    # pyenv's shims learn of a new command (cargo-zigbuild) only on a rehash.
    if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
fi
if [ -n "$missing_nightly" ]; then
    echo "setup: installing $nightly with rust-src" >&2
    rustup toolchain install "$nightly" --profile minimal --component rust-src >/dev/null
fi
if [ -n "$missing_targets" ]; then
    echo "setup: adding rustup targets$missing_targets" >&2
    rustup target add $missing_targets
fi
