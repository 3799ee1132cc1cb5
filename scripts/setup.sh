#!/bin/sh
# Installs what boardbench's make targets need, and only what is missing:
#   scripts/setup.sh native   cargo and a C compiler (for zstd's C code)
#   scripts/setup.sh cross    + the rustup targets and Debian cross compilers
#   scripts/setup.sh test     + qemu-user-static and file, for the cross-built binaries;
#                             nginx (with its dav module: PUT), for bb-seek's HTTP tests;
#                             busybox, chromium and openssh-server for the suite's tests;
#                             ruby, whose Benchmark.bm the bm format is checked against;
#                             Python's msgpack, for bb-rpc's interop test;
#                             ansible-core, ansible-lint and moto's S3 server (PyPI,
#                             pinned) in a venv, target/tools-venv, for the fleet
#                             playbook's tests and tests/s3.rs
#   scripts/setup.sh bench    + the zstd CLI, the reference of scripts/bench-zstd.sh;
#                             nginx, the HTTP server of scripts/bench-seek.sh
#   scripts/setup.sh fuzz     a C++ compiler, the nightly toolchain $NIGHTLY and cargo-fuzz
# As root it installs; otherwise it prints the exact commands and exits 1.
# Quick and silent when everything is there.
set -eu

level=${1:-native}
repo=$(cd "$(dirname "$0")/.." && pwd)
# The tests' Python tools, pinned, in a venv (Debian's python3 refuses pip installs):
# ansible-core 2.19 runs on Python 3.11 to 3.13.
tools_venv=$repo/target/tools-venv
tools_pins="ansible-core==2.19.14 ansible-lint==26.10.1 moto[server]==5.2.1"
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
                    busybox:busybox chromium:chromium /usr/sbin/sshd:openssh-server ssh:openssh-client
                    ruby:ruby" ;;
    bench) commands="cc:gcc zstd:zstd /usr/sbin/nginx:nginx" ;;
    fuzz) commands="cc:gcc c++:g++" ;;
    *) echo "setup: unknown level '$level' (expected native, cross, test, bench or fuzz)" >&2; exit 2 ;;
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

# make fuzz: libFuzzer needs a nightly compiler; cargo-fuzz is built from crates.io once.
# Neither needs root.
if [ "$level" = fuzz ]; then
    nightly=${NIGHTLY:?setup: fuzz needs NIGHTLY (make fuzz sets it)}
    rustup run "$nightly" rustc --version >/dev/null 2>&1 \
        || rustup toolchain install --profile minimal "$nightly"
    command -v cargo-fuzz >/dev/null 2>&1 || cargo install --locked cargo-fuzz
fi

# The venv, made again when its pins change, needs Python's venv module, which Debian's
# python3 has in python3-venv.
venv=no
if [ "$level" = test ] && [ "$(cat "$tools_venv/pins" 2>/dev/null)" != "$tools_pins" ]; then
    venv=yes
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        case $(command -v python3 || true) in
            ""|/usr/bin/python3) packages="$packages python3 python3-venv" ;;
        esac
    fi
fi

missing_targets=""
if [ "$level" != native ] && [ "$level" != bench ] && [ "$level" != fuzz ]; then
    installed=$(rustup target list --installed 2>/dev/null || true)
    for t in $targets; do
        echo "$installed" | grep -qx "$t" || missing_targets="$missing_targets $t"
    done
fi

[ -z "$packages" ] && [ -z "$missing_targets" ] && [ -z "$pip_packages" ] && [ $venv = no ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "setup: missing pieces; run these, then rerun make:" >&2
    [ -n "$packages" ] && echo "  sudo apt-get update && sudo apt-get install -y$packages" >&2
    [ -n "$missing_targets" ] && echo "  rustup target add$missing_targets" >&2
    [ -n "$pip_packages" ] && echo "  python3 -m pip install $pip_packages" >&2
    [ $venv = yes ] && echo "  python3 -m venv $tools_venv && $tools_venv/bin/pip install $tools_pins" >&2
    exit 1
fi

if [ -n "$packages" ]; then
    echo "setup: installing$packages" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
fi
if [ -n "$pip_packages" ]; then
    echo "setup: installing $pip_packages for $(command -v python3)" >&2
    python3 -m pip install -q $pip_packages
fi
if [ -n "$missing_targets" ]; then
    echo "setup: adding rustup targets$missing_targets" >&2
    rustup target add $missing_targets
fi
if [ $venv = yes ]; then
    echo "setup: installing $tools_pins in $tools_venv" >&2
    rm -rf "$tools_venv"
    python3 -m venv "$tools_venv"
    set -f  # moto[server] is a name, not a glob
    "$tools_venv/bin/pip" install -q $tools_pins
    set +f
    echo "$tools_pins" >"$tools_venv/pins"
fi
