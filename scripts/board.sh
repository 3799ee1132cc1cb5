#!/bin/sh
# Boots an emulated Raspberry Pi under qemu-system with Debian's own ARM kernel, runs one
# shell script on it and prints the serial console: the way make test-boards runs the
# cross-built binaries on a real ARM kernel (correctness only, never a timing: docs/boards.md).
#
#   scripts/board.sh pi0|pi2|pi3 [--mem 512M] [--timeout SECONDS] [--bin DIR] [--append ARGS] SCRIPT
#
# (--append: more of the kernel's command line, loglevel=7 to see its messages)
#
#   pi0   qemu-system-arm -M raspi0, 512 MB, 1 core: Debian's rpi kernel (armel), the
#         armv6 build (arm-unknown-linux-musleabihf)
#   pi2   qemu-system-arm -M raspi2b, 1 GB (--mem 512M: mem= on the kernel's command
#         line), 4 cores: Debian's armmp-lpae kernel (armhf), the armv7 build
#   pi3   qemu-system-aarch64 -M raspi3b, 1 GB, 4 cores: Debian's arm64 kernel, the
#         aarch64 build; its console is the mini-UART (ttyS1, qemu's second serial)
#   virt  qemu-system-arm -M virt (no Raspberry Pi: the one with a network), 512 MB,
#         2 cores: the armmp-lpae kernel and the armv7 build as on pi2, virtio-net with
#         qemu's user networking, its port 22 forwarded to 127.0.0.1:$BOARD_SSH_PORT,
#         where dropbear lets in root with the key $BOARD_SSH_KEY (a .pub file); the
#         script runs once dropbear is up, so it can wait for the host to be done
#
# The kernels, device trees and busybox-static come from scripts/setup.sh boards (in
# target/boards/<arch>/). The initramfs (cpio newc, built in a temporary directory)
# holds busybox, the board's bb-* binaries (--bin DIR, default target/<triple>/release)
# and scripts/run-all.sh in the dist layout (/opt/boardbench/bin, /opt/boardbench/scripts),
# SCRIPT as /checks.sh, and an /init that mounts proc, sys, devtmpfs and tmpfs (/tmp),
# brings up lo, runs `sh /checks.sh` in /tmp, prints "== board: done, exit code N ==" and
# powers off. The console goes to stdout once the board is done (or dead: a kernel panic,
# qemu gone, --timeout, default 600 s). Exit 0 when the script ran to its end (whatever
# its exit code, which the console line gives), 1 when the board died first, 124 on the
# timeout, 2 for bad arguments.
set -eu

usage() {
    echo "usage: scripts/board.sh pi0|pi2|pi3 [--mem 512M] [--timeout SECONDS] [--bin DIR] [--append ARGS] SCRIPT" >&2
    exit 2
}

repo=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || usage
board=$1
shift
mem=
limit=600
bin=
append=
script=
while [ $# -gt 0 ]; do
    case $1 in
        --mem) [ $# -ge 2 ] || usage; mem=$2; shift ;;
        --timeout) [ $# -ge 2 ] || usage; limit=$2; shift ;;
        --bin) [ $# -ge 2 ] || usage; bin=$2; shift ;;
        --append) [ $# -ge 2 ] || usage; append=$2; shift ;;
        -*) echo "board.sh: unknown flag '$1'" >&2; usage ;;
        *) [ -z "$script" ] || usage; script=$1 ;;
    esac
    shift
done
[ -n "$script" ] || usage
[ -f "$script" ] || { echo "board.sh: no script $script" >&2; exit 2; }

# Per board: qemu and its machine, memory, the Debian architecture (target/boards/<arch>),
# its device tree, the console and the Rust target whose build it runs.
case $board in
    pi0)
        qemu=qemu-system-arm machine=raspi0 ram=512M arch=armel dtb=bcm2835-rpi-zero.dtb
        triple=arm-unknown-linux-musleabihf console=ttyAMA0 serial=
        # Else the kernel dies in bcm2835_power_probe: qemu has no power domains for it.
        extra="initcall_blacklist=bcm2835_power_driver_init"
        # Its only timer is the BCM2835 system timer, whose compare register qemu
        # matches only going forward: a compare the kernel writes a little too late
        # (a busy host delays the vCPU between reading the counter and writing it) is
        # met when the 32-bit counter wraps, in 71 minutes, and the board stands still
        # until then. With -icount the board's clock follows its instructions, and
        # nothing passes between that read and that write. (The Pi 2 and 3 have the
        # ARM generic timer, which has no such race.)
        accel="-icount shift=auto,sleep=on" ;;
    pi2)
        qemu=qemu-system-arm machine=raspi2b ram=1G arch=armhf dtb=bcm2836-rpi-2-b.dtb
        triple=armv7-unknown-linux-gnueabihf console=ttyAMA0 serial= extra= accel= ;;
    pi3)
        qemu=qemu-system-aarch64 machine=raspi3b ram=1G arch=arm64 dtb=bcm2837-rpi-3-b.dtb
        triple=aarch64-unknown-linux-musl console=ttyS1 serial="-serial null" extra= accel=
        # Its 64-bit kernel runs 32-bit programs too: the armv7 bb-zstd, for --against.
        also=$repo/target/armv7-unknown-linux-gnueabihf/release/bb-zstd ;;
    virt)
        qemu=qemu-system-arm machine=virt ram=512M arch=armhf dtb=
        triple=armv7-unknown-linux-gnueabihf console=ttyAMA0 serial= extra= accel="-smp 2"
        [ -n "${BOARD_SSH_PORT:-}" ] && [ -f "${BOARD_SSH_KEY:-}" ] \
            || { echo "board.sh: virt needs BOARD_SSH_PORT and BOARD_SSH_KEY (a public key file)" >&2; exit 2; }
        net=$repo/target/boards/armhf-net/root
        [ -x "$net/usr/sbin/dropbear" ] || { echo "board.sh: no dropbear in $net: run scripts/setup.sh boards" >&2; exit 1; }
        accel="$accel -netdev user,id=net0,hostfwd=tcp:127.0.0.1:$BOARD_SSH_PORT-:22 -device virtio-net-device,netdev=net0" ;;
    *) echo "board.sh: unknown board '$board' (expected pi0, pi2, pi3 or virt)" >&2; usage ;;
esac
[ -n "$mem" ] && extra="$extra mem=$mem"
boards=$repo/target/boards/$arch
for f in vmlinuz ${dtb:+"$dtb"} busybox; do
    [ -f "$boards/$f" ] || { echo "board.sh: $boards/$f is missing: run scripts/setup.sh boards" >&2; exit 1; }
done
command -v "$qemu" >/dev/null || { echo "board.sh: no $qemu: run scripts/setup.sh boards" >&2; exit 1; }
bin=${bin:-$repo/target/$triple/release}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/board-$board.XXXXXX")
qemu_pid=
cleanup() {
    [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null && wait "$qemu_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The initramfs.
root=$tmp/root
mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" "$root/proc" "$root/sys" \
    "$root/dev" "$root/tmp" "$root/root" "$root/etc" "$root/opt/boardbench/bin" \
    "$root/opt/boardbench/scripts"
cp "$boards/busybox" "$root/bin/busybox"
set +f
found=0
for exe in "$bin"/bb-*; do
    case ${exe##*/} in *.*) continue ;; esac
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    cp "$exe" "$root/opt/boardbench/bin/"
    found=$((found + 1))
done
[ $found -gt 0 ] || { echo "board.sh: no bb-* binaries in $bin: run make cross-${triple%%-*} first" >&2; exit 1; }
cp "$repo/scripts/run-all.sh" "$root/opt/boardbench/scripts/"
# Another architecture's build the board also runs, in /opt/boardbench/armv7.
if [ -n "${also:-}" ] && [ -x "$also" ]; then
    mkdir -p "$root/opt/boardbench/armv7"
    cp "$also" "$root/opt/boardbench/armv7/"
fi
cp "$script" "$root/checks.sh"
# The networked board: dropbear, its libraries, the virtio modules; root's key.
setup_net=
if [ "$board" = virt ]; then
    cp -R "$net/." "$root/"
    mkdir -p "$root/root/.ssh" "$root/etc/dropbear" "$root/dev/pts"
    cp "$BOARD_SSH_KEY" "$root/root/.ssh/authorized_keys"
    echo /bin/sh >"$root/etc/shells"
    # /dev/pts on the devtmpfs that covers the image's /dev: ssh -tt (Ansible's raw)
    # needs a pty.
    setup_net='mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
m=/lib/modules/$(uname -r)/kernel
for k in net/core/failover drivers/net/net_failover drivers/virtio/virtio_mmio drivers/net/virtio_net; do
    insmod $m/$k.ko
done
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
dropbear -R -s -p 22 && echo "== board: sshd up =="'
fi
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
echo "127.0.0.1 localhost" >"$root/etc/hosts"
# The kernel's own initramfs has /dev/console already; this one too, where mknod may.
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true
cat >"$root/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/opt/boardbench/bin:/bin:/sbin:/usr/bin:/usr/sbin HOME=/root TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
ip link set lo up
hostname $board
$setup_net
echo "== board: up, $board =="
cd /tmp
sh /checks.sh </dev/null
echo "== board: done, exit code \$? =="
sync
poweroff -f
EOF
chmod 755 "$root/init" "$root/checks.sh"
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet) >"$tmp/initramfs.cpio"

# The board: its console in a file, watched until the script's last line, a panic,
# qemu's end or the timeout; quiet, so that the kernel's messages stay out of the way.
log=$tmp/console.log
: >"$log"
# shellcheck disable=SC2086  # $accel and $serial (a first port before the console's) split
"$qemu" -M "$machine" -m "$ram" $accel -kernel "$boards/vmlinuz" ${dtb:+-dtb "$boards/$dtb"} \
    -initrd "$tmp/initramfs.cpio" \
    -append "console=$console,115200 rdinit=/init quiet loglevel=3 panic=-1 $extra $append" \
    -display none -monitor none $serial -serial "file:$log" -no-reboot >"$tmp/qemu.out" 2>&1 &
qemu_pid=$!
start=$(date +%s)
status=
while [ -z "$status" ]; do
    sleep 1
    if grep -q '^== board: done, exit code [0-9]* ==' "$log"; then
        status=0
    elif grep -q 'Kernel panic' "$log"; then
        sleep 2
        status=1
    elif ! kill -0 "$qemu_pid" 2>/dev/null; then
        status=1
    elif [ $(($(date +%s) - start)) -ge "$limit" ]; then
        status=124
    fi
done
# poweroff -f may reach qemu (-no-reboot) or halt the board: either way it is done.
sleep 1
kill "$qemu_pid" 2>/dev/null || true
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=
tr -d '\r' <"$log"
case $status in
    1) echo "board.sh: $board died before the script's end:" >&2; cat "$tmp/qemu.out" >&2 ;;
    124) echo "board.sh: $board: timed out after ${limit}s" >&2 ;;
esac
exit $status
