#!/bin/sh
# Installs what boardbench's make targets need, and only what is missing:
#   scripts/setup.sh native   cargo and a C compiler (for zstd's C code)
#   scripts/setup.sh debian   + the rustup targets and Debian cross compilers
#   scripts/setup.sh zig      + zig and cargo-zigbuild from PyPI (make cross-* CROSS=zig,
#                             on any Linux or macOS) and the rustup targets
#   scripts/setup.sh zig-std  zig, cargo-zigbuild and the Makefile's NIGHTLY with rust-src,
#                             for the -Zbuild-std builds (armv6, and armv7 through zig)
#   scripts/setup.sh cross    all three: everything make cross builds with
#   scripts/setup.sh test     + rustup's clippy component, for make test-clippy;
#                             qemu-user-static, file and readelf, for the cross-built binaries;
#                             nginx (with its dav module: PUT, and ssl), for bb-seek's HTTP
#                             and HTTPS tests; the openssl CLI, for their certificates;
#                             busybox, chromium and openssh-server for the suite's tests;
#                             ruby, whose Benchmark.bm the bm format is checked against;
#                             Python's msgpack, for bb-rpc's interop test;
#                             ansible-core, ansible-lint and moto's S3 server, for the
#                             fleet playbook's tests and tests/it/s3.rs
#   scripts/setup.sh bench    + the zstd CLI, the reference of scripts/bench-zstd.sh;
#                             nginx, the HTTP server of scripts/bench-seek.sh
#   scripts/setup.sh fuzz     a C++ compiler, the nightly and cargo-fuzz
#   scripts/setup.sh boards   + qemu-system-arm (raspi0, raspi2b; its qemu-system-aarch64:
#                             raspi3b) and cpio, for make test-boards; then Debian's own
#                             kernels and busybox-static for armhf (Pi 2), arm64 (Pi 3) and
#                             armel (Pi Zero), fetched with apt-get download (the foreign
#                             architectures added to dpkg) and unpacked with dpkg-deb into
#                             target/boards/<arch>/ (vmlinuz, the board's .dtb, busybox),
#                             never installed; cached there, fetched again when missing;
#                             and for the networked board (board.sh virt) dropbear-bin:armhf,
#                             its libraries and the kernel's virtio-net modules
# PyPI tools go in venvs of their own under target/ (Debian's python3 refuses pip
# installs), pinned: target/zig-venv (zig, cargo-zigbuild; the Makefile puts its bin/ on
# PATH) and target/tools-venv (ansible, moto; the tests look there).
# As root it installs; otherwise it prints the exact commands and exits 1.
# Quick and silent when everything is there.
# Every registry step (apt-get update, install and download, pip, rustup) is tried again
# 5, 15 and 30 s apart (BB_SETUP_RETRY_DELAYS, the seconds apart: the tests make them
# "0 0 0"); an apt index that still fails is left out and named again at the end.
set -eu

level=${1:-native}
repo=$(cd "$(dirname "$0")/.." && pwd)
targets="armv7-unknown-linux-gnueabihf aarch64-unknown-linux-musl x86_64-unknown-linux-musl"
nightly=$(sed -n 's/^NIGHTLY *:= *//p' "$repo/Makefile")
# Pinned like the nightly: a new zig or cargo-zigbuild could change what gets linked.
zig_venv=$repo/target/zig-venv
zig_pins="ziglang==0.17.1 cargo-zigbuild==0.24.1"
# ansible-core 2.19 runs on Python 3.11 to 3.13.
tools_venv=$repo/target/tools-venv
tools_pins="ansible-core==2.19.14 ansible-lint==26.10.1 moto[server]==5.2.1"

retry_delays=${BB_SETUP_RETRY_DELAYS:-5 15 30}
if [ -n "$(printf '%s' "$retry_delays" | tr -d '0-9 ')" ]; then
    echo "setup: BB_SETUP_RETRY_DELAYS '$retry_delays': expected the seconds between tries, such as '5 15 30'" >&2
    exit 2
fi

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
                    /usr/sbin/nginx:nginx openssl:openssl
                    busybox:busybox chromium:chromium /usr/sbin/sshd:openssh-server ssh:openssh-client
                    ruby:ruby" ;;
    bench) commands="cc:gcc zstd:zstd /usr/sbin/nginx:nginx" ;;
    fuzz) commands="cc:gcc c++:g++" ;;
    boards) commands="qemu-system-arm:qemu-system-arm qemu-system-aarch64:qemu-system-arm cpio:cpio" ;;
    *) echo "setup: unknown level '$level' (expected native, debian, zig, zig-std, cross, test, bench, fuzz or boards)" >&2; exit 2 ;;
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

# The venvs to make (again when their pins change): "zig", "tools" or both.
venvs=""
stale() { [ "$(cat "$1/pins" 2>/dev/null)" != "$2" ]; }
case $level in
    zig | zig-std | cross) stale "$zig_venv" "$zig_pins" && venvs="$venvs zig" ;;
    test) stale "$tools_venv" "$tools_pins" && venvs="$venvs tools" ;;
esac
# A venv needs Python's venv module, which Debian's python3 has in python3-venv.
if [ -n "$venvs" ] && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    case $(command -v python3 || true) in
        ""|/usr/bin/python3) packages="$packages python3 python3-venv" ;;
    esac
fi

# The pinned nightly with rust-src, for -Zbuild-std.
missing_nightly=""
case $level in
    zig-std | cross)
        rustup component list --toolchain "$nightly" --installed 2>/dev/null | grep -qx rust-src \
            || missing_nightly=$nightly ;;
esac

# make fuzz (and make test's fuzzing pass): libFuzzer needs the nightly; cargo-fuzz,
# pinned like it (a new one may change how targets are built), is built from crates.io
# once. Neither needs root.
cargo_fuzz=0.13.2
if [ "$level" = fuzz ]; then
    rustup run "$nightly" rustc --version >/dev/null 2>&1 \
        || rustup toolchain install --profile minimal "$nightly"
    [ "$(cargo fuzz --version 2>/dev/null)" = "cargo-fuzz $cargo_fuzz" ] \
        || cargo install --locked --version "$cargo_fuzz" cargo-fuzz
fi

missing_targets=""
case $level in
    debian | zig | cross | test)
        installed=$(rustup target list --installed 2>/dev/null || true)
        for t in $targets; do
            echo "$installed" | grep -qx "$t" || missing_targets="$missing_targets $t"
        done ;;
esac

# make test-clippy: the toolchain's clippy (rustup lists it as clippy-<host>).
missing_components=""
if [ "$level" = test ]; then
    rustup component list --installed 2>/dev/null | grep -q '^clippy' \
        || missing_components="clippy"
fi

# make test-boards: per Debian architecture, the kernel's meta-package, the device tree
# the board's qemu machine wants (a path in the kernel package's /usr/lib/linux-image-*/)
# and busybox-static; unpacked in target/boards/<arch>/, kept there.
boards_dir=$repo/target/boards
board_specs="armhf:linux-image-armmp-lpae:bcm2836-rpi-2-b.dtb
             arm64:linux-image-arm64:broadcom/bcm2837-rpi-3-b.dtb
             armel:linux-image-rpi:bcm2835-rpi-zero.dtb"
missing_boards=""
missing_archs=""
# The networked board (scripts/board.sh virt): dropbear and the libraries it links,
# and the kernel's virtio network modules, unpacked in target/boards/armhf-net/root.
net_debs="dropbear-bin libc6 libcrypt1 libtomcrypt1 libtommath1 libgmp10 zlib1g"
missing_net=""
if [ "$level" = boards ] && [ ! -x "$boards_dir/armhf-net/root/usr/sbin/dropbear" ]; then
    missing_net=yes
    dpkg --print-foreign-architectures | grep -qx armhf || missing_archs="$missing_archs armhf"
fi
if [ "$level" = boards ]; then
    for spec in $board_specs; do
        arch=${spec%%:*}
        d=$boards_dir/$arch
        dtb=${spec##*:}
        [ -f "$d/vmlinuz" ] && [ -f "$d/${dtb##*/}" ] && [ -f "$d/busybox" ] && continue
        missing_boards="$missing_boards $spec"
        dpkg --print-foreign-architectures | grep -qx "$arch" || missing_archs="$missing_archs $arch"
    done
fi

[ -z "$packages" ] && [ -z "$missing_targets" ] && [ -z "$missing_components" ] && [ -z "$pip_packages" ] \
    && [ -z "$missing_nightly" ] && [ -z "$venvs" ] && [ -z "$missing_boards" ] \
    && [ -z "$missing_net" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "setup: missing pieces; run these, then rerun make:" >&2
    [ -n "$packages" ] && echo "  sudo apt-get update && sudo apt-get install -y$packages" >&2
    [ -n "$missing_targets" ] && echo "  rustup target add$missing_targets" >&2
    [ -n "$missing_components" ] && echo "  rustup component add $missing_components" >&2
    [ -n "$pip_packages" ] && echo "  python3 -m pip install $pip_packages" >&2
    [ -n "$missing_nightly" ] && echo "  rustup toolchain install $nightly --profile minimal --component rust-src" >&2
    # Each architecture once; none is the empty string (a lone `sudo apt-get update`
    # followed a blank list that tr had turned into one space).
    missing_archs=$(echo $missing_archs | tr ' ' '\n' | sort -u | grep . | tr '\n' ' ' || true)
    for a in $missing_archs; do echo "  sudo dpkg --add-architecture $a" >&2; done
    [ -n "$missing_archs" ] && echo "  sudo apt-get update" >&2
    [ -n "$missing_boards" ] && echo "  scripts/setup.sh boards   (again, as root: it fetches the boards' kernels into target/boards)" >&2
    for v in $venvs; do
        case $v in
            zig) echo "  python3 -m venv $zig_venv && $zig_venv/bin/pip install $zig_pins && echo '$zig_pins' >$zig_venv/pins" >&2 ;;
            tools) echo "  python3 -m venv $tools_venv && $tools_venv/bin/pip install '$tools_pins' && echo '$tools_pins' >$tools_venv/pins" >&2 ;;
        esac
    done
    exit 1
fi

# Runs "$@" up to four times, 5, 15 and 30 s apart (retry_delays): a registry that fails
# for a moment (a mirror mid-sync, a dropped connection) does not fail the setup. The last
# status. $retry_what names the step in its messages where "$@" would not.
retry_what=""
retry() {
    for wait in $retry_delays; do
        "$@" && return 0
        status=$?
        echo "setup: '${retry_what:-$*}' failed ($status); trying again in ${wait}s" >&2
        sleep "$wait"
    done
    "$@"
}
# apt-get update once, what it says on stderr shown and kept ($update_said).
update_said=""
apt_get_update() {
    update_rc=0
    update_said=$( { apt-get update -qq 2>&1 >&3 3>&-; } 3>&2 ) || update_rc=$?
    [ -z "$update_said" ] || printf '%s\n' "$update_said" >&2
    return "$update_rc"
}
# apt-get update, retried; an index that still fails (one boardbench may not even need)
# is named by apt, left out, and named again when setup ends ($unfetched): the steps
# after it say which package they lack.
unfetched=""
apt_update() {
    retry_what="apt-get update -qq"
    if retry apt_get_update; then
        retry_what=""
        return 0
    fi
    retry_what=""
    lines=$(printf '%s\n' "$update_said" | grep 'Failed to fetch' || true)
    [ -n "$lines" ] || lines=$(printf '%s\n' "$update_said" | grep '^[EW]:' || true)
    [ -n "$lines" ] || lines="apt-get update failed ($update_rc)"
    unfetched="${unfetched:+$unfetched
}$lines"
    echo "setup: apt-get update fetched not every index (above); going on with those it has" >&2
}
# At the end, whatever the outcome: what apt-get update left out, named again.
at_exit() {
    status=$?
    if [ -n "$unfetched" ]; then
        if [ "$status" -eq 0 ]; then
            echo "setup: done without what apt-get update could not fetch, which nothing here needed:" >&2
        else
            echo "setup: apt-get update could not fetch these (what failed may have needed them):" >&2
        fi
        printf '%s\n' "$unfetched" | sed 's/^/  /' >&2
    fi
    exit "$status"
}
trap at_exit EXIT

if [ -n "$packages" ]; then
    echo "setup: installing$packages" >&2
    apt_update
    DEBIAN_FRONTEND=noninteractive
    export DEBIAN_FRONTEND
    retry apt-get install -y -qq $packages >/dev/null \
        || { echo "setup: apt-get install$packages failed" >&2; exit 1; }
fi
if [ -n "$pip_packages" ]; then
    echo "setup: installing $pip_packages for $(command -v python3)" >&2
    retry python3 -m pip install -q $pip_packages
fi
if [ -n "$missing_nightly" ]; then
    echo "setup: installing $nightly with rust-src" >&2
    retry rustup toolchain install "$nightly" --profile minimal --component rust-src >/dev/null
fi
if [ -n "$missing_targets" ]; then
    echo "setup: adding rustup targets$missing_targets" >&2
    retry rustup target add $missing_targets
fi
if [ -n "$missing_components" ]; then
    echo "setup: adding the rustup component $missing_components" >&2
    retry rustup component add $missing_components
fi
# Makes the venv DIR with the packages PINS (a space-separated list), then records them.
make_venv() {
    echo "setup: installing $2 in $1" >&2
    rm -rf "$1"
    python3 -m venv "$1"
    set -f  # moto[server] is a name, not a glob
    retry "$1/bin/pip" install -q $2
    set +f
    echo "$2" >"$1/pins"
}
for v in $venvs; do
    case $v in
        zig) make_venv "$zig_venv" "$zig_pins" ;;
        tools) make_venv "$tools_venv" "$tools_pins" ;;
    esac
done
# The boards' kernels and busybox: downloaded (not installed) into target/boards/debs,
# the three files each board needs unpacked from them.
if [ -n "$missing_boards" ]; then
    if [ -n "$missing_archs" ]; then
        for a in $(echo $missing_archs | tr ' ' '\n' | sort -u); do dpkg --add-architecture "$a"; done
        echo "setup: added the dpkg architectures$missing_archs; apt-get update" >&2
        apt_update
    fi
    mkdir -p "$boards_dir/debs"
    for spec in $missing_boards; do
        arch=${spec%%:*}
        rest=${spec#*:}
        meta=${rest%%:*}
        dtb=${rest#*:}
        # The meta-package names the current kernel package (linux-image-6.1.0-N-...).
        kernel=$(apt-cache depends "$meta:$arch" 2>/dev/null \
            | sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\).*/\1/p' | head -n 1)
        [ -n "$kernel" ] || { echo "setup: apt knows no $meta:$arch (apt-get update?)" >&2; exit 1; }
        echo "setup: fetching $kernel:$arch and busybox-static:$arch into target/boards" >&2
        (cd "$boards_dir/debs" && retry apt-get download -qq "$kernel:$arch" "busybox-static:$arch" 2>/dev/null) \
            || { echo "setup: apt-get download $kernel:$arch busybox-static:$arch failed" >&2; exit 1; }
        d=$boards_dir/$arch
        rm -rf "$d.tmp" && mkdir -p "$d.tmp/x"
        for deb in "$boards_dir/debs/${kernel}_"*"_$arch.deb" "$boards_dir/debs/busybox-static_"*"_$arch.deb"; do
            dpkg-deb --fsys-tarfile "$deb" | tar -C "$d.tmp/x" -x --wildcards \
                './boot/vmlinuz-*' "./usr/lib/linux-image-*/$dtb" ./bin/busybox 2>/dev/null || true
        done
        cp "$d.tmp"/x/boot/vmlinuz-* "$d.tmp/vmlinuz"
        cp "$d.tmp"/x/usr/lib/linux-image-*/"$dtb" "$d.tmp/${dtb##*/}"
        cp "$d.tmp/x/bin/busybox" "$d.tmp/busybox"
        echo "$kernel" >"$d.tmp/kernel"
        rm -rf "$d.tmp/x" "$d"
        mv "$d.tmp" "$d"
    done
fi
if [ -n "$missing_net" ]; then
    d=$boards_dir/armhf-net
    rm -rf "$d.tmp" && mkdir -p "$d.tmp/root" "$boards_dir/debs"
    echo "setup: fetching dropbear-bin:armhf and its libraries into target/boards" >&2
    (cd "$boards_dir/debs" && retry apt-get download -qq $(for p in $net_debs; do echo "$p:armhf"; done) 2>/dev/null) \
        || { echo "setup: apt-get download of $net_debs (armhf) failed" >&2; exit 1; }
    for p in $net_debs; do
        dpkg-deb -x "$(ls "$boards_dir/debs/${p}_"*_armhf.deb | tail -n 1)" "$d.tmp/root"
    done
    kernel=$(cat "$boards_dir/armhf/kernel")
    dpkg-deb --fsys-tarfile "$(ls "$boards_dir/debs/${kernel}_"*_armhf.deb | tail -n 1)" \
        | tar -C "$d.tmp/root" -x --wildcards './lib/modules/*/kernel/net/core/failover.ko' \
            './lib/modules/*/kernel/drivers/net/net_failover.ko' \
            './lib/modules/*/kernel/drivers/net/virtio_net.ko' \
            './lib/modules/*/kernel/drivers/virtio/virtio_mmio.ko'
    rm -rf "$d.tmp/root/usr/share" "$d"
    mv "$d.tmp" "$d"
fi
