//! Other processes' activity just before a run: the CPU time that everything but this
//! process used over a short window, from /proc/stat less /proc/self/stat, as sbc-bench
//! looks at background activity before it benchmarks: the busy warning.
//!
//! The load average cannot say this: it counts runnable tasks over the last minute, so
//! the suite's own previous binary (bb-zstd keeping four cores busy a second ago) still
//! weighs on it long after it exited, on an idle board. CPU time over the window counts
//! only what ran during it.

use std::path::Path;
use std::time::{Duration, Instant};

/// How long the activity is watched for: short, since every run waits it out, and long
/// enough for a few clock ticks (USER_HZ, 100 a second) on each core.
pub const WINDOW: Duration = Duration::from_millis(250);

/// What other processes used over a window, in cores kept busy on average
/// (1.0: one core the whole window).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Background {
    pub cores: f64,
    /// How long it was watched.
    pub window: Duration,
}

/// The `cpu` line of /proc/stat: busy and all clock ticks summed over the CPUs, and
/// how many CPUs it sums (the `cpuN` lines).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    pub busy: u64,
    pub total: u64,
    pub cpus: usize,
}

/// Parses /proc/stat. Busy is user, nice, system, irq, softirq and steal; idle and
/// iowait are not (guest time is already in user).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|t| t.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| ticks.get(i).copied().unwrap_or(0);
    // Saturating: a counter near 2^64 is no reading, and busy stays within the total.
    let busy = [0, 1, 2, 5, 6, 7]
        .into_iter()
        .fold(0u64, |sum, i| sum.saturating_add(at(i)));
    let total = busy.saturating_add(at(3)).saturating_add(at(4));
    let cpus = text
        .lines()
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count();
    (ticks.len() >= 4 && cpus > 0).then_some(Stat { busy, total, cpus })
}

/// This process's clock ticks from /proc/self/stat: its own user and system time and its
/// reaped children's (fields 14 to 17, counted after the `)` that ends its name).
pub fn own_ticks(text: &str) -> Option<u64> {
    let after_name = &text[text.rfind(')')? + 1..];
    // Field 3 (the state) is the first after the name.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    (11..15).try_fold(0u64, |sum, i| sum.checked_add(fields.get(i)?.parse().ok()?))
}

/// Other processes' CPU between two readings of /proc/stat (`before`, `after`) and of
/// this process's own ticks: the busy ticks less this process's, as a share of all
/// ticks, times the CPUs. None when no tick passed.
pub fn between(before: Stat, after: Stat, own: u64) -> Option<f64> {
    let total = after.total.checked_sub(before.total).filter(|&t| t > 0)?;
    // At most every tick: idle and iowait may go back (proc(5)), the total with them.
    let busy = after
        .busy
        .saturating_sub(before.busy)
        .saturating_sub(own)
        .min(total);
    Some(busy as f64 / total as f64 * after.cpus as f64)
}

/// Watches other processes' CPU time under `root` for `window`; None at once where
/// /proc/stat cannot be read, and where no tick passed (a made-up board's fixed file).
pub fn measure(root: &Path, window: Duration) -> Option<Background> {
    let read = |path: &str| super::sysfs::read_file(&root.join(path));
    let stat = || read("proc/stat").and_then(|s| parse_stat(&s));
    let own = || {
        read("proc/self/stat")
            .and_then(|s| own_ticks(&s))
            .unwrap_or(0)
    };
    let (before, own_before, started) = (stat()?, own(), Instant::now());
    std::thread::sleep(window);
    let (after, own_after) = (stat()?, own());
    Some(Background {
        cores: between(before, after, own_after.saturating_sub(own_before))?,
        window: started.elapsed(),
    })
}

/// How many CPUs /proc/stat under `root` counts: what other processes' CPU is summed over.
pub fn cpus(root: &Path) -> Option<usize> {
    let text = super::sysfs::read_file(&root.join("proc/stat"))?;
    parse_stat(&text).map(|s| s.cpus)
}

/// The most other processes may use of a board of `cores` for it to count as idle:
/// 2.5% of its cores, as sbc-bench allows, and never under a tenth of one core (the
/// clock ticks of a short window cannot tell less).
pub fn idle_limit(cores: usize) -> f64 {
    (0.025 * cores as f64).max(0.1)
}

/// How many windows in a row must be quiet: a lull between two bursts is no idle board.
const QUIET_WINDOWS: u32 = 3;

/// What waiting for an idle board came to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdleWait {
    /// Whether the board went idle within the wait.
    pub idle: bool,
    pub waited: Duration,
    /// Other processes' CPU in the last window watched, in cores.
    pub background: f64,
    pub limit: f64,
}

/// Waits up to `most` for other processes under `root` to use less than
/// [`idle_limit`] of `cores` over [`QUIET_WINDOWS`] windows in a row, watching one window
/// (a second, or what is left) at a time; None at once where /proc/stat cannot tell.
pub fn wait_for_idle(root: &Path, most: Duration, cores: usize) -> Option<IdleWait> {
    let started = Instant::now();
    let limit = idle_limit(cores);
    // A wait too short for three seconds asks for one quiet window.
    let needed = match most >= Duration::from_secs(u64::from(QUIET_WINDOWS)) {
        true => QUIET_WINDOWS,
        false => 1,
    };
    let mut quiet = 0;
    loop {
        let left = most.saturating_sub(started.elapsed());
        let window = left.clamp(WINDOW, Duration::from_secs(1));
        let background = measure(root, window)?.cores;
        quiet = if background < limit { quiet + 1 } else { 0 };
        let waited = started.elapsed();
        if quiet >= needed || waited >= most {
            return Some(IdleWait {
                idle: quiet >= needed,
                waited,
                background,
                limit,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// /proc/stat of a 4-core board with `busy` user ticks and `idle` idle ticks.
    fn proc_stat(busy: u64, idle: u64) -> String {
        format!(
            "cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n\
             cpu1 0 0 0 0 0 0 0 0 0 0\ncpu2 0 0 0 0 0 0 0 0 0 0\n\
             cpu3 0 0 0 0 0 0 0 0 0 0\nintr 1 2 3\nctxt 99\n"
        )
    }

    #[test]
    fn other_processes_are_the_busy_ticks_less_this_processs() {
        let stat = |busy, idle| parse_stat(&proc_stat(busy, idle)).unwrap();
        // 25 ticks a core over 250 ms: 100 ticks in all, 40 of them busy, 8 our own.
        let cores = between(stat(1000, 5000), stat(1040, 5060), 8).unwrap();
        assert!((cores - 1.28).abs() < 1e-9, "{cores}");
        // An idle board right after a binary that kept every core busy: its past does
        // not count, only the window does.
        let cores = between(stat(90_000, 100), stat(90_001, 199), 0).unwrap();
        assert!(cores < 0.05, "{cores}");
        // Our own ticks only: nothing else ran.
        assert_eq!(between(stat(10, 90), stat(30, 170), 20), Some(0.0));
        assert_eq!(
            between(stat(10, 90), stat(10, 90), 0),
            None,
            "no tick passed"
        );
    }

    #[test]
    fn proc_files_parse_as_the_kernel_writes_them() {
        let s = parse_stat("cpu  10 1 5 100 4 2 3 7 0 0\ncpu0 10 1 5 100 4 2 3 7 0 0\nintr 0\n")
            .unwrap();
        assert_eq!(
            s,
            Stat {
                busy: 28,
                total: 132,
                cpus: 1
            }
        );
        assert_eq!(parse_stat("intr 0\n"), None);
        // A name with spaces and parentheses; utime 5, stime 6, cutime 7, cstime 8.
        let own = "42 (bb (x) y) S 1 42 42 0 -1 4194560 100 0 0 0 5 6 7 8 20 0 1 0 9 10 11";
        assert_eq!(own_ticks(own), Some(26));
        assert_eq!(own_ticks("42 (bb) S 1"), None);
    }

    #[test]
    fn a_fixed_or_missing_proc_stat_is_unknown_at_once() {
        let d = crate::util::temp::TempDir::new("activity");
        let started = Instant::now();
        assert_eq!(measure(&d, WINDOW), None, "no /proc/stat: no wait");
        assert!(started.elapsed() < WINDOW);
        std::fs::create_dir_all(d.join("proc")).unwrap();
        std::fs::write(d.join("proc/stat"), proc_stat(10, 90)).unwrap();
        assert_eq!(measure(&d, Duration::from_millis(1)), None);
    }

    #[test]
    fn this_machine_is_measured() {
        let b = measure(Path::new("/"), Duration::from_millis(50)).unwrap();
        assert!(
            b.cores >= 0.0 && b.window >= Duration::from_millis(50),
            "{b:?}"
        );
    }

    #[test]
    fn an_idle_wait_ends_quiet_or_at_its_bound() {
        assert_eq!(idle_limit(1), 0.1);
        assert_eq!(idle_limit(8), 0.2);
        // A busy thread of this process is not other processes': this test sees the
        // machine's own load, so it asserts the bound and the outcome's consistency.
        let w = wait_for_idle(Path::new("/"), Duration::from_millis(600), 2).unwrap();
        assert!(w.waited < Duration::from_secs(3), "{w:?}");
        assert!(!w.idle || w.background < w.limit, "{w:?}");
        let d = crate::util::temp::TempDir::new("idle");
        assert_eq!(
            wait_for_idle(&d, Duration::from_secs(60), 2),
            None,
            "cannot tell"
        );
    }
}
