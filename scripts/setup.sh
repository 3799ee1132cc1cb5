#!/bin/sh
# Installs what boardbench's make targets need, and only what is missing:
#   scripts/setup.sh native   cargo and a C compiler (for zstd's C code)
#   scripts/setup.sh cross    + the rustup targets and Debian cross compilers
#   scripts/setup.sh test     + qemu-user-static and file, for the cross-built binaries;
#                             nginx (with its dav module: PUT), for bb-seek's HTTP tests;
#                             busybox, chromium and openssh-server for the suite's tests
#   scripts/setup.sh bench    + the zstd CLI, the reference of scripts/bench-zstd.sh;
#                             nginx, the HTTP server of scripts/bench-seek.sh
# As root it installs; otherwise it prints the exact commands and exits 1.
# Quick and silent when everything is there.
set -eu

level=${1:-native}
targets="armv7-unknown-linux-gnueabihf aarch64-unknown-linux-musl x86_64-unknown-linux-musl"

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo is missing; install Rust with rustup (https://rustup.rs), then rerun" >&2
    exit 1
fi

packages=""
commands=""     # command:package pairs to check
case $level in
    native) commands="cc:gcc" ;;
    cross) commands="cc:gcc arm-linux-gnueabihf-gcc:gcc-arm-linux-gnueabihf aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu musl-gcc:musl-tools" ;;
    test) commands="cc:gcc arm-linux-gnueabihf-gcc:gcc-arm-linux-gnueabihf aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu musl-gcc:musl-tools
                    qemu-arm-static:qemu-user-static qemu-aarch64-static:qemu-user-static file:file
                    /usr/sbin/nginx:nginx
                    busybox:busybox chromium:chromium /usr/sbin/sshd:openssh-server ssh:openssh-client" ;;
    bench) commands="cc:gcc zstd:zstd /usr/sbin/nginx:nginx" ;;
    *) echo "setup: unknown level '$level' (expected native, cross, test or bench)" >&2; exit 2 ;;
esac

for pair in $commands; do
    cmd=${pair%%:*}
    pkg=${pair#*:}
    if ! command -v "$cmd" >/dev/null 2>&1; then
        case " $packages " in *" $pkg "*) ;; *) packages="$packages $pkg" ;; esac
    fi
done

missing_targets=""
if [ "$level" != native ] && [ "$level" != bench ]; then
    installed=$(rustup target list --installed 2>/dev/null || true)
    for t in $targets; do
        echo "$installed" | grep -qx "$t" || missing_targets="$missing_targets $t"
    done
fi

[ -z "$packages" ] && [ -z "$missing_targets" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "setup: missing pieces; run these, then rerun make:" >&2
    [ -n "$packages" ] && echo "  sudo apt-get update && sudo apt-get install -y$packages" >&2
    [ -n "$missing_targets" ] && echo "  rustup target add$missing_targets" >&2
    exit 1
fi

if [ -n "$packages" ]; then
    echo "setup: installing$packages" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
fi
if [ -n "$missing_targets" ]; then
    echo "setup: adding rustup targets$missing_targets" >&2
    rustup target add $missing_targets
fi
