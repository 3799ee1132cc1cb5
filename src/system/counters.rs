//! Hardware counters through perf_event_open(2): the cycles, instructions and cache misses
//! a workload took, which a time alone cannot tell apart (a slower run at the same cycle
//! count is a slower clock; more instructions is more work).
//!
//! The counters are this process's user space only (`exclude_kernel` and `exclude_hv`
//! always): that is what a benchmark's own code spends, it is all that
//! `perf_event_paranoid` 2 (most distributions' default) lets an ordinary user count, so
//! the figures mean the same as root and as a user. One set of counters per thread alive
//! at [`Counters::open`], each inherited by the threads and children it starts after.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// What the counters counted between [`Counters::start`] and [`Counters::stop`], summed
/// over the threads.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Counts {
    pub cycles: u64,
    pub instructions: u64,
    /// None where the PMU has no cache-miss event.
    pub cache_misses: Option<u64>,
}

/// The open counters of this process's threads, disabled until [`Counters::start`];
/// their file descriptors close when it drops.
pub struct Counters {
    cycles: Vec<Counter>,
    instructions: Vec<Counter>,
    /// Empty where the PMU has no cache-miss event for some thread.
    cache_misses: Vec<Counter>,
}

/// One thread's counter of one event, and its reading at the last start.
struct Counter {
    fd: OwnedFd,
    at_start: Reading,
}

/// What a counter reads (read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING): its value,
/// how long it was enabled and how long it was on the PMU. The two times differ when the
/// kernel multiplexed more events than the PMU has counters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Reading {
    value: u64,
    enabled: u64,
    running: u64,
}

/// perf_event_attr as far as PERF_ATTR_SIZE_VER0 (64 bytes), which every kernel with perf
/// events accepts; the later fields are all left zero anyway.
#[repr(C)]
#[derive(Debug, Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// The bit fields: `disabled`, `inherit`, ... (see [`DISABLED`]).
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// Which events a [`Counters`] counts as its cycles, instructions and cache misses.
#[derive(Debug, Clone, Copy)]
struct Events {
    kind: u32,
    cycles: u64,
    instructions: u64,
    cache_misses: u64,
}

/// The PMU's cycles, instructions and cache misses: what `--counters` counts.
const HARDWARE: Events = Events {
    kind: 0,
    cycles: 0,
    instructions: 1,
    cache_misses: 3,
};

/// The kernel's own software events in their place: the task clock (nanoseconds on a
/// CPU) as cycles, the CPU clock as instructions, page faults as cache misses. Every
/// kernel with perf events has them, PMU or not, so the tests count through the same
/// path on a VM without one, against a known answer (the threads' CPU time).
#[cfg(any(test, feature = "fault-injection"))]
const SOFTWARE: Events = Events {
    kind: 1,
    cycles: 1,
    instructions: 0,
    cache_misses: 2,
};
const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
/// perf_event_attr's bit fields: created disabled, inherited by new threads and children,
/// not counting the kernel nor the hypervisor.
const DISABLED: u64 = 1 << 0;
const INHERIT: u64 = 1 << 1;
/// Inherited by the threads a counted thread starts, not by the processes it forks
/// (Linux 5.13).
const INHERIT_THREAD: u64 = 1 << 35;
/// Removed from a process that execs (Linux 5.13): a server started after the counters
/// opened is not counted.
const REMOVE_ON_EXEC: u64 = 1 << 36;
const EXCLUDE_KERNEL: u64 = 1 << 5;
const EXCLUDE_HV: u64 = 1 << 6;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// The ioctls `_IO('$', n)`.
const PERF_EVENT_IOC_ENABLE: u32 = 0x2400;
const PERF_EVENT_IOC_DISABLE: u32 = 0x2401;
const PERF_EVENT_IOC_RESET: u32 = 0x2403;

/// With the `fault-injection` feature, set to anything: the counters are refused as if
/// not permitted, so tests can see how a run goes without them.
#[cfg(feature = "fault-injection")]
const REFUSE_ENV: &str = "BB_FAULT_NO_COUNTERS";

/// With the `fault-injection` feature, set to anything: the kernel's software events
/// count in place of the PMU's ([`SOFTWARE`]), so tests see a counted run on a machine
/// without a PMU.
#[cfg(feature = "fault-injection")]
const SOFTWARE_ENV: &str = "BB_FAULT_SOFTWARE_COUNTERS";

impl Counters {
    /// Opens cycles and instructions (and cache misses where the PMU offers them) for
    /// every thread of this process alive now (/proc/self/task), each inherited by the
    /// threads and children it starts after; disabled until [`Counters::start`]. Err: one
    /// line saying why (not permitted, no PMU, or the errno).
    pub fn open() -> Result<Counters, String> {
        open_refused(fault_refused(), events())
    }

    /// Counts from now: the counters reset and enabled.
    pub fn start(&mut self) {
        for counter in self.all_mut() {
            ioctl(&counter.fd, PERF_EVENT_IOC_RESET);
            // The threads already gone keep their counts in their parent's after a reset:
            // what counts is the difference from here.
            counter.at_start = read_counter(&counter.fd);
            ioctl(&counter.fd, PERF_EVENT_IOC_ENABLE);
        }
    }

    /// Stops counting: the counters disabled, their counts kept for [`Counters::read`].
    pub fn stop(&mut self) {
        for counter in self.all_mut() {
            ioctl(&counter.fd, PERF_EVENT_IOC_DISABLE);
        }
    }

    /// The counts between start and stop, summed over the threads, each scaled by its
    /// time enabled over its time running where the kernel multiplexed it.
    pub fn read(&self) -> Counts {
        Counts {
            cycles: total(&self.cycles),
            instructions: total(&self.instructions),
            cache_misses: (!self.cache_misses.is_empty()).then(|| total(&self.cache_misses)),
        }
    }

    fn all_mut(&mut self) -> impl Iterator<Item = &mut Counter> {
        self.cycles
            .iter_mut()
            .chain(self.instructions.iter_mut())
            .chain(self.cache_misses.iter_mut())
    }
}

/// Whether counters can be opened here, without keeping them: the calling thread's
/// cycles and instructions opened and closed. Err: the same one line as
/// [`Counters::open`].
pub fn check() -> Result<(), String> {
    check_refused(fault_refused(), events())
}

/// [`check`] of `events`, refused as if not permitted where `refused`.
fn check_refused(refused: bool, events: Events) -> Result<(), String> {
    if refused {
        return Err(explain(nix::errno::Errno::EACCES));
    }
    let tid = nix::unistd::gettid().as_raw();
    open_pair(tid, events).map_err(explain)?;
    Ok(())
}

/// [`Counters::open`] of `events`, refused as if not permitted where `refused`.
fn open_refused(refused: bool, events: Events) -> Result<Counters, String> {
    if refused {
        return Err(explain(nix::errno::Errno::EACCES));
    }
    let own = nix::unistd::gettid().as_raw();
    // This thread first: its error is the one that says why, not a vanished thread's.
    let mut tids = vec![own];
    tids.extend(threads().into_iter().filter(|&t| t != own));
    open_threads(&tids, events)
}

/// Counters of `events` on threads `tids` of this process, the first of them the calling
/// thread, whose error is the one returned; the others may have ended since they were
/// listed.
fn open_threads(tids: &[libc::pid_t], events: Events) -> Result<Counters, String> {
    let mut counters = Counters {
        cycles: Vec::new(),
        instructions: Vec::new(),
        cache_misses: Vec::new(),
    };
    let mut cache_misses = true;
    for (i, &tid) in tids.iter().enumerate() {
        let (cycles, instructions) = match open_pair(tid, events) {
            Ok(pair) => pair,
            // A thread that ended since /proc/self/task was read has nothing to count.
            Err(nix::errno::Errno::ESRCH) if i > 0 => continue,
            Err(e) => return Err(explain(e)),
        };
        counters.cycles.push(counter(cycles));
        counters.instructions.push(counter(instructions));
        match open_event(tid, events.kind, events.cache_misses) {
            Ok(fd) if cache_misses => counters.cache_misses.push(counter(fd)),
            _ => cache_misses = false,
        }
    }
    if !cache_misses {
        // Some threads' misses only would be no total: none.
        counters.cache_misses.clear();
    }
    Ok(counters)
}

/// One thread's cycles and instructions.
fn open_pair(tid: libc::pid_t, events: Events) -> Result<(OwnedFd, OwnedFd), nix::errno::Errno> {
    let cycles = open_event(tid, events.kind, events.cycles)?;
    Ok((cycles, open_event(tid, events.kind, events.instructions)?))
}

fn counter(fd: OwnedFd) -> Counter {
    Counter {
        fd,
        at_start: Reading::default(),
    }
}

/// This process's threads now, from /proc/self/task.
fn threads() -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// A disabled, inherited, user-space-only counter of event `config` of type `kind` on
/// thread `tid`, whichever CPU it runs on: inherited by the threads it starts and not by
/// the processes it execs (a bb-ipc or bb-rpc server), where the kernel can say so
/// (5.13); before, by both.
fn open_event(tid: libc::pid_t, kind: u32, config: u64) -> Result<OwnedFd, nix::errno::Errno> {
    let base = DISABLED | INHERIT | EXCLUDE_KERNEL | EXCLUDE_HV;
    match open_with(tid, kind, config, base | INHERIT_THREAD | REMOVE_ON_EXEC) {
        Err(nix::errno::Errno::EINVAL) => open_with(tid, kind, config, base),
        opened => opened,
    }
}

/// [`open_event`] with the attr's `flags`.
fn open_with(
    tid: libc::pid_t,
    kind: u32,
    config: u64,
    flags: u64,
) -> Result<OwnedFd, nix::errno::Errno> {
    let attr = PerfEventAttr {
        kind,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        read_format: PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
        flags,
        ..PerfEventAttr::default()
    };
    let any_cpu: libc::c_int = -1;
    let no_group: libc::c_int = -1;
    // SAFETY: the attr lives through the call and its size field says how much of it the
    // kernel reads; the other arguments are plain numbers.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            tid,
            any_cpu,
            no_group,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(nix::errno::Errno::last());
    }
    // SAFETY: a descriptor perf_event_open just returned, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// The one line that says why the counters could not be opened.
fn explain(errno: nix::errno::Errno) -> String {
    use nix::errno::Errno;
    match errno {
        Errno::EACCES | Errno::EPERM => {
            let paranoid = super::sysfs::read_file(Path::new(PARANOID));
            let level = paranoid.as_deref().map_or("unreadable", str::trim);
            format!(
                "perf events are not permitted here ({PARANOID} is {level}; \
                 run as root or lower it)"
            )
        }
        Errno::ENOENT | Errno::ENODEV => {
            "this machine has no hardware cycle counter (a VM without a PMU?)".into()
        }
        Errno::ENOSYS => "this kernel has no perf events (CONFIG_PERF_EVENTS is off)".into(),
        e => format!("perf_event_open for the cycle counter failed: {e}"),
    }
}

/// Where the kernel says who may count what.
const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

/// Whether `BB_FAULT_NO_COUNTERS` asks for a refusal; never without the feature.
#[cfg(feature = "fault-injection")]
fn fault_refused() -> bool {
    std::env::var_os(REFUSE_ENV).is_some()
}

#[cfg(not(feature = "fault-injection"))]
fn fault_refused() -> bool {
    false
}

/// The events to count: the PMU's, or the software ones where `BB_FAULT_SOFTWARE_COUNTERS`
/// asks (never without the feature).
#[cfg(feature = "fault-injection")]
fn events() -> Events {
    match std::env::var_os(SOFTWARE_ENV) {
        Some(_) => SOFTWARE,
        None => HARDWARE,
    }
}

#[cfg(not(feature = "fault-injection"))]
fn events() -> Events {
    HARDWARE
}

/// Issues a perf ioctl on a counter; a counter that refuses it counts on as it was,
/// which [`read`](Counters::read) shows.
fn ioctl(fd: &OwnedFd, request: u32) {
    // SAFETY: a perf event's descriptor, owned by the caller; these ioctls take no
    // pointer (the argument 0 is their flags).
    unsafe {
        libc::ioctl(fd.as_raw_fd(), request as _, 0);
    }
}

/// A counter's reading now; zeros where it cannot be read.
fn read_counter(fd: &OwnedFd) -> Reading {
    let mut buf = [0u8; 24];
    match nix::unistd::read(fd.as_raw_fd(), &mut buf) {
        Ok(24) => {
            let word = |i: usize| u64::from_ne_bytes(buf[i * 8..i * 8 + 8].try_into().unwrap());
            Reading {
                value: word(0),
                enabled: word(1),
                running: word(2),
            }
        }
        _ => Reading::default(),
    }
}

/// The counts of `counters` since their start, summed.
fn total(counters: &[Counter]) -> u64 {
    counters
        .iter()
        .map(|c| scaled(c.at_start, read_counter(&c.fd)))
        .fold(0u64, u64::saturating_add)
}

/// What a counter counted from `start` to `now`, scaled up to its whole time enabled
/// where it was on the PMU only part of it; 0 where it never ran.
fn scaled(start: Reading, now: Reading) -> u64 {
    let value = now.value.saturating_sub(start.value) as u128;
    let enabled = now.enabled.saturating_sub(start.enabled) as u128;
    let running = now.running.saturating_sub(start.running) as u128;
    match running {
        0 => 0,
        r if r >= enabled => value as u64,
        r => u64::try_from(value * enabled / r).unwrap_or(u64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hint::black_box;

    /// `n` dependent adds, each at least one instruction: black_box keeps the compiler
    /// from folding the chain into one multiply.
    fn adds(n: u64) -> u64 {
        let mut x = 0u64;
        for _ in 0..n {
            x = black_box(x).wrapping_add(1);
        }
        x
    }

    /// The counts of `work` between start and stop: this thread's, and those of the
    /// threads it starts, other tests' threads left out.
    fn count(work: impl FnOnce()) -> Counts {
        let own = nix::unistd::gettid().as_raw();
        let mut counters = open_threads(&[own], HARDWARE).expect("check() said they open");
        counters.start();
        work();
        counters.stop();
        counters.read()
    }

    fn is_one_short_line(message: &str) {
        assert!(
            !message.is_empty() && !message.contains('\n') && message.len() < 120,
            "{message:?}"
        );
    }

    #[test]
    fn counters_count_a_known_loop_or_say_in_one_line_why_not() {
        match check() {
            Ok(()) => {
                const N: u64 = 2_000_000;
                let short = count(|| {
                    black_box(adds(N));
                });
                assert!(short.instructions >= N && short.cycles > 0, "{short:?}");
                let long = count(|| {
                    black_box(adds(10 * N));
                });
                assert!(long.instructions >= 10 * N, "{long:?}");
                assert!(long.instructions > short.instructions, "{long:?} {short:?}");
            }
            Err(why) => {
                is_one_short_line(&why);
                assert_eq!(Counters::open().err(), Some(why));
            }
        }
    }

    #[test]
    fn a_thread_started_after_open_is_counted() {
        if let Err(why) = check() {
            return is_one_short_line(&why);
        }
        const N: u64 = 20_000_000;
        let counts = count(|| {
            std::thread::spawn(|| black_box(adds(N))).join().unwrap();
        });
        // This thread only spawned and joined: the adds are the new thread's.
        assert!(counts.instructions >= N, "{counts:?}");
        // Every thread of the process: this one among them.
        let mut all = Counters::open().unwrap();
        all.start();
        black_box(adds(N));
        all.stop();
        let counts = all.read();
        assert!(counts.instructions >= N && counts.cycles > 0, "{counts:?}");
    }

    #[test]
    fn a_forced_refusal_says_not_permitted() {
        for why in [
            check_refused(true, HARDWARE).err(),
            open_refused(true, HARDWARE).err(),
        ] {
            let why = why.expect("refused");
            is_one_short_line(&why);
            assert!(
                why.starts_with(
                    "perf events are not permitted here (/proc/sys/kernel/perf_event_paranoid is "
                ),
                "{why}"
            );
        }
    }

    #[test]
    fn each_errno_has_its_line() {
        use nix::errno::Errno;
        let no_pmu = "this machine has no hardware cycle counter (a VM without a PMU?)";
        assert_eq!(explain(Errno::ENOENT), no_pmu);
        assert_eq!(explain(Errno::ENODEV), no_pmu);
        assert!(explain(Errno::EPERM).contains("run as root or lower it"));
        let other = explain(Errno::EINVAL);
        assert!(other.contains("EINVAL"), "{other}");
        for e in [Errno::EACCES, Errno::ENOSYS, Errno::EINVAL, Errno::EMFILE] {
            is_one_short_line(&explain(e));
        }
    }

    #[test]
    fn multiplexed_counts_are_scaled_to_the_time_enabled() {
        let at = |value, enabled, running| Reading {
            value,
            enabled,
            running,
        };
        // On the PMU half the time it was enabled: twice what it saw.
        assert_eq!(scaled(at(0, 0, 0), at(100, 200, 100)), 200);
        assert_eq!(scaled(at(0, 0, 0), at(100, 200, 200)), 100);
        // Only what passed since the start counts.
        assert_eq!(scaled(at(50, 100, 100), at(150, 300, 200)), 200);
        assert_eq!(scaled(at(0, 0, 0), at(100, 200, 0)), 0, "never ran");
    }

    /// This thread's CPU time (CLOCK_THREAD_CPUTIME_ID), in nanoseconds.
    fn thread_cpu_ns() -> u64 {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: the timespec outlives the call, which only writes it.
        assert_eq!(
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) },
            0
        );
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    }

    /// Spins on this thread for `ns` of its CPU time; returns the CPU time it took.
    fn spin(ns: u64) -> u64 {
        let start = thread_cpu_ns();
        while thread_cpu_ns() - start < ns {
            black_box(adds(1000));
        }
        thread_cpu_ns() - start
    }

    /// Whether `a` is `b` within 5% and 2 ms (a thread's start and a few syscalls).
    fn near(a: u64, b: u64) -> bool {
        (a as f64 - b as f64).abs() <= 0.05 * b as f64 + 2e6
    }

    /// The counting path (open, inherit, start, stop, read, sum over threads) on the
    /// kernel's software events, which every machine has: the task clock it counts is
    /// the CPU time the threads took, this one's and one it starts; nothing after stop;
    /// a start counts afresh.
    #[test]
    fn the_task_clock_counted_is_the_cpu_time_the_threads_took() {
        let own = nix::unistd::gettid().as_raw();
        let mut counters = match open_threads(&[own], SOFTWARE) {
            Ok(c) => c,
            // No perf events at all (a kernel without them, a seccomp filter).
            Err(why) => return is_one_short_line(&why),
        };
        const MS: u64 = 1_000_000;
        let before = thread_cpu_ns();
        counters.start();
        spin(40 * MS);
        let theirs = std::thread::spawn(|| spin(60 * MS)).join().unwrap();
        counters.stop();
        let mine = thread_cpu_ns() - before;
        let counted = counters.read();
        assert!(
            near(counted.cycles, mine + theirs),
            "{counted:?} {mine} {theirs}"
        );
        assert!(near(counted.instructions, mine + theirs), "{counted:?}");
        assert!(
            counted.cache_misses.is_some(),
            "page faults open everywhere"
        );
        // Stopped: more work changes nothing.
        spin(20 * MS);
        assert_eq!(counters.read(), counted);
        // Started again: only what follows counts.
        counters.start();
        let again = spin(30 * MS);
        counters.stop();
        assert!(
            near(counters.read().cycles, again),
            "{:?} {again}",
            counters.read()
        );
    }

    /// A process the counted thread starts and that execs (a server) is not counted,
    /// where the kernel can say so (5.13).
    #[test]
    fn a_process_that_execs_is_not_counted() {
        let own = nix::unistd::gettid().as_raw();
        let flags = DISABLED | INHERIT | INHERIT_THREAD | REMOVE_ON_EXEC;
        if open_with(own, SOFTWARE.kind, SOFTWARE.cycles, flags).is_err() {
            return;
        }
        let mut counters = open_threads(&[own], SOFTWARE).unwrap();
        let children = || {
            let cpu = crate::system::cpu::CpuTime::of_children();
            (cpu.total() * 1e9) as u64
        };
        let before = children();
        counters.start();
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done"])
            .status()
            .unwrap();
        counters.stop();
        assert!(status.success());
        let child = children() - before;
        let counted = counters.read().cycles;
        assert!(child > 20_000_000, "the child spun {child} ns");
        assert!(
            counted < child / 2,
            "counted {counted} ns of the child's {child}"
        );
    }

    #[test]
    fn the_attr_is_the_kernels_first_version() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 64);
    }
}
