//! CPU and memory accounting from getrusage and /proc: user and system time of this
//! process and of the children it reaped, and the peak resident set size.

use nix::sys::resource::{getrusage, UsageWho};
use std::ops::{Add, Sub};

/// CPU seconds spent in user and kernel mode.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTime {
    pub user: f64,
    pub sys: f64,
}

impl CpuTime {
    pub fn total(&self) -> f64 {
        self.user + self.sys
    }

    /// CPU time of this process (every thread) so far.
    pub fn of_self() -> CpuTime {
        usage(UsageWho::RUSAGE_SELF)
    }

    /// CPU time of the children this process has waited for.
    pub fn of_children() -> CpuTime {
        usage(UsageWho::RUSAGE_CHILDREN)
    }
}

impl Add for CpuTime {
    type Output = CpuTime;
    fn add(self, o: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user + o.user,
            sys: self.sys + o.sys,
        }
    }
}

impl Sub for CpuTime {
    type Output = CpuTime;
    fn sub(self, o: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user - o.user,
            sys: self.sys - o.sys,
        }
    }
}

fn usage(who: UsageWho) -> CpuTime {
    match getrusage(who) {
        Ok(u) => CpuTime {
            user: seconds(u.user_time()),
            sys: seconds(u.system_time()),
        },
        Err(_) => CpuTime::default(),
    }
}

fn seconds(tv: nix::sys::time::TimeVal) -> f64 {
    tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6
}

/// The CPU a benchmark used over its measured iterations, next to the wall time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuUsage {
    /// Wall-clock seconds of the measured iterations.
    pub wall: f64,
    /// This process, every thread.
    pub process: CpuTime,
    /// Children reaped during the measurement and peers that reported their own usage
    /// (a forked server).
    pub children: CpuTime,
}

impl CpuUsage {
    pub fn user(&self) -> f64 {
        self.process.user + self.children.user
    }

    pub fn sys(&self) -> f64 {
        self.process.sys + self.children.sys
    }

    /// (user + sys) / real, in percent: 100 × the number of cores kept busy.
    pub fn percent(&self) -> f64 {
        if self.wall > 0.0 {
            100.0 * (self.user() + self.sys()) / self.wall
        } else {
            f64::NAN
        }
    }

    /// Sums usage over forks.
    pub fn combine(&self, other: &CpuUsage) -> CpuUsage {
        CpuUsage {
            wall: self.wall + other.wall,
            process: self.process + other.process,
            children: self.children + other.children,
        }
    }
}

/// CPU use against wall time over the spans it runs: paused around untimed work (checks
/// between iterations), so it counts only what is timed.
pub struct CpuMeter {
    /// Where the running span started: wall clock, this process, its children.
    running: Option<(std::time::Instant, CpuTime, CpuTime)>,
    /// The spans that ended.
    wall: f64,
    process: CpuTime,
    children: CpuTime,
}

impl CpuMeter {
    /// A meter that counts nothing until resumed.
    pub fn paused() -> CpuMeter {
        CpuMeter {
            running: None,
            wall: 0.0,
            process: CpuTime::default(),
            children: CpuTime::default(),
        }
    }

    pub fn resume(&mut self) {
        if self.running.is_none() {
            let now = std::time::Instant::now();
            self.running = Some((now, CpuTime::of_self(), CpuTime::of_children()));
        }
    }

    pub fn pause(&mut self) {
        if let Some((start, process, children)) = self.running.take() {
            self.wall += start.elapsed().as_secs_f64();
            self.process = self.process + (CpuTime::of_self() - process);
            self.children = self.children + (CpuTime::of_children() - children);
        }
    }

    /// Usage over the spans so far; `peers` is CPU time used meanwhile by processes this
    /// one does not reap (a server that reported its own getrusage).
    pub fn stop(&mut self, peers: CpuTime) -> CpuUsage {
        self.pause();
        CpuUsage {
            wall: self.wall,
            process: self.process,
            children: self.children + peers,
        }
    }
}

/// Resets the peak resident set size of this process (Linux 4.0+), so the next
/// [`peak_rss_kib`] covers only what ran since. Returns false where that is not possible.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The memory this machine can give a new run now, in bytes: /proc/meminfo's
/// MemAvailable (None where the kernel does not say).
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    Some(kib_field(&meminfo, "MemAvailable:")? * 1024)
}

/// The memory a run may take, and whose word that is: MemAvailable, or what the
/// address-space limit leaves this process (the limit less its address space now) where
/// that is lower; None where neither is known.
pub fn memory_room() -> Option<(u64, &'static str)> {
    let available = available_memory();
    let limit = address_space_left();
    match (available, limit) {
        (Some(a), Some(l)) if l < a => Some((l, "the address-space limit (ulimit -v) leaves")),
        (None, Some(l)) => Some((l, "the address-space limit (ulimit -v) leaves")),
        (Some(a), _) => Some((a, "MemAvailable is")),
        (None, None) => None,
    }
}

/// What RLIMIT_AS leaves this process: its soft limit less the address space it has now
/// (VmSize); None where there is no limit.
fn address_space_left() -> Option<u64> {
    use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};
    let (soft, _) = getrlimit(Resource::RLIMIT_AS).ok()?;
    if soft == RLIM_INFINITY {
        return None;
    }
    let status = super::sysfs::read_file(std::path::Path::new("/proc/self/status"));
    let used = status
        .as_deref()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("VmSize:")))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024);
    // rlim_t is 32 bits on armv7: the conversion is useless only on 64-bit targets.
    #[allow(clippy::useless_conversion)]
    let soft = u64::from(soft);
    Some(soft.saturating_sub(used))
}

/// The smallest peak resident set size taken as real, in KiB: no boardbench binary runs
/// in less (a static binary's text alone is larger). The armv7 Debian 6.1 kernel reads
/// `VmHWM: 4 kB` after `clear_refs` (busybox alone, 40 of 40 tries under qemu's raspi2b),
/// where the high-water mark was reset and not yet raised again: such a value is unknown.
pub(crate) const MIN_PEAK_RSS_KIB: u64 = 64;

/// Peak resident set size of this process in KiB (VmHWM, or getrusage's maxrss where
/// there is no /proc); None where it is unknown or impossibly small.
pub fn peak_rss_kib() -> Option<u64> {
    match std::fs::read_to_string("/proc/self/status") {
        Ok(status) => peak_rss_in(&status),
        Err(_) => getrusage(UsageWho::RUSAGE_SELF)
            .ok()
            .map(|u| u.max_rss() as u64)
            .filter(|&kib| kib >= MIN_PEAK_RSS_KIB),
    }
}

/// The peak resident set size a /proc/PID/status gives, in KiB, if it is possible.
fn peak_rss_in(status: &str) -> Option<u64> {
    kib_field(status, "VmHWM:").filter(|&kib| kib >= MIN_PEAK_RSS_KIB)
}

/// The value of a `Key:   123 kB` line of a /proc file, in KiB.
fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find_map(|l| l.strip_prefix(key))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn busy_loop_shows_user_time_and_cpu_percent() {
        let mut meter = CpuMeter::paused();
        meter.resume();
        let mut x = 0u64;
        // Spins for 200 ms and until 60 ms of CPU are spent: on a machine busy with
        // other work, 200 ms of wall time can hold far less CPU time than that.
        let start = CpuTime::of_self().total();
        let until = std::time::Instant::now() + Duration::from_millis(200);
        while std::time::Instant::now() < until || CpuTime::of_self().total() - start < 0.06 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let usage = meter.stop(CpuTime {
            user: 1.0,
            sys: 0.5,
        });
        assert!(usage.wall >= 0.2);
        assert!(usage.process.total() > 0.05, "{usage:?}");
        assert!(usage.children.user >= 1.0 && usage.children.sys >= 0.5);
        assert!(usage.percent() > 100.0, "peer time counts in cpu%");
    }

    #[test]
    fn an_impossibly_small_peak_rss_is_unknown() {
        let status = |hwm: &str| format!("Name:\tbb-ipc\nVmPeak:\t  2048 kB\nVmHWM:\t{hwm}\n");
        assert_eq!(
            peak_rss_in(&status("    4 kB")),
            None,
            "armv7 6.1 after clear_refs"
        );
        assert_eq!(peak_rss_in(&status("   63 kB")), None);
        assert_eq!(peak_rss_in(&status("   64 kB")), Some(64));
        assert_eq!(peak_rss_in(&status(" 10240 kB")), Some(10240));
        assert_eq!(peak_rss_in("Name:\tbb-ipc\n"), None);
    }

    #[test]
    fn peak_rss_is_known_on_linux() {
        reset_peak_rss();
        let kib = peak_rss_kib().unwrap();
        assert!(kib > 100, "{kib}");
    }
}
