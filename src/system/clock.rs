//! The CPU clock as measured, not as reported: sbc-bench's `mhz` idea. cpufreq says what
//! the kernel asked for, and on many boards the firmware grants less (a Raspberry Pi
//! under-volted or hot, a vendor kernel whose OPP table lies), so a result taken at
//! "1800 MHz" may have run at 1440. A timed chain of dependent adds, each of which costs
//! one cycle on every core boardbench runs on, says what the clock really was.
//!
//! Each add needs the one before it, so however wide the core, the chain runs one add a
//! cycle: Cortex-A7, A53, A55, A72 and A76, ARM1176 and x86-64 all give a register add a
//! latency of one cycle. The adds take a register operand, not an immediate, since some
//! x86 cores fold a chain of small immediate adds at rename and run several a cycle.

use std::time::{Duration, Instant};

/// The clock measured on one CPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredClock {
    pub cpu: usize,
    pub mhz: f64,
}

/// Dependent adds per turn of the loop. The loop's own decrement and branch are not
/// counted: a superscalar or out-of-order core runs them beside the chain, and a
/// single-issue one (ARM1176) spends at most a couple of cycles on them, under 1% of a
/// turn this long, which would read the clock that much low, never high.
const ADDS_PER_TURN: u64 = 256;

/// A trial at least this long: the clock's resolution (a microsecond on the oldest boards)
/// is then under 0.1% of it.
const SHORTEST_TRIAL: Duration = Duration::from_millis(1);

/// How many trials the budget is shared among: the best of them misses the interrupts
/// and the cpufreq governor's ramp that slow the others.
const TRIALS: u32 = 8;

/// With the `fault-injection` feature, the test-only factor on every measured clock:
/// `BB_FAULT_CLOCK_SCALE=0.8` plays a board whose clock is 20% below what it reports.
#[cfg(feature = "fault-injection")]
const SCALE_ENV: &str = "BB_FAULT_CLOCK_SCALE";

/// Measures the clock of `cpu` on a thread of its own pinned to it (the caller's
/// affinity stays as it was): the best of several short trials within about `budget`
/// (100-200 ms is plenty). None where the thread cannot run on `cpu` (offline, past the
/// machine's CPUs, outside this process's cpuset), where the timing is unusable, and on
/// architectures without the loop in assembly (a compiled chain's cost per add is not
/// known, and a wrong clock is worse than none).
pub fn measure(cpu: usize, budget: Duration) -> Option<MeasuredClock> {
    measure_scaled(cpu, budget, fault_scale())
}

/// Whether a measured clock and the reported one (both MHz) differ by more than
/// `tolerance` (0.05: 5%): Some(measured / reported - 1, signed: -0.2 is a clock 20%
/// below what is reported) when they do, None when within it or when there is no
/// reported clock to compare with.
pub fn mismatch(measured_mhz: f64, reported_mhz: f64, tolerance: f64) -> Option<f64> {
    if !(reported_mhz > 0.0 && measured_mhz.is_finite()) {
        return None;
    }
    let difference = measured_mhz / reported_mhz - 1.0;
    (difference.is_finite() && difference.abs() > tolerance).then_some(difference)
}

/// [`measure`] with the measured clock multiplied by `scale` (1.0 but in fault tests).
fn measure_scaled(cpu: usize, budget: Duration, scale: f64) -> Option<MeasuredClock> {
    measure_with(cpu, budget, scale, best_mhz)
}

/// [`measure_scaled`] with the trials `best` runs on the pinned thread (the real loop,
/// or a known figure in tests).
fn measure_with(
    cpu: usize,
    budget: Duration,
    scale: f64,
    best: fn(Duration) -> Option<f64>,
) -> Option<MeasuredClock> {
    let mhz = std::thread::Builder::new()
        .name(format!("bb-clock-{cpu}"))
        .spawn(move || pin_this_thread(cpu).then(|| best(budget)).flatten())
        .ok()?
        .join()
        .ok()??;
    Some(MeasuredClock {
        cpu,
        mhz: mhz * scale,
    })
}

/// Pins the calling thread, and only it, to `cpu`: sched_setaffinity with pid 0 acts on
/// the calling thread, not the process. True once it runs there.
fn pin_this_thread(cpu: usize) -> bool {
    let mut set = nix::sched::CpuSet::new();
    if set.set(cpu).is_err() {
        return false;
    }
    let pinned = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).is_ok();
    pinned && nix::sched::sched_getcpu().ok() == Some(cpu)
}

/// The fewest trials a measurement takes, past its budget if it must: one trial during
/// which the thread lost its CPU (an emulated Pi Zero measured 0.3 MHz) is outrun by the
/// next.
const FEWEST_TRIALS: u32 = 3;

/// The most trials a measurement takes: a clock that never held still in them is not
/// measured.
const MOST_TRIALS: u32 = 64;

/// A trial counts only where its thread ran on the core for at least this share of it:
/// one that waited for the core (another thread, the emulator's host) timed the wait too.
const ON_CPU: f64 = 0.95;

/// The best two trials that count agree within this, or the clock is not measured.
const AGREEMENT: f64 = 0.02;

/// The slowest clock taken for one, in MHz: below it, the core was not the trial's.
const SLOWEST_MHZ: f64 = 1.0;

/// One trial's time: on the wall, and on this thread's CPU clock.
#[derive(Debug, Clone, Copy)]
struct Timed {
    wall: Duration,
    on_cpu: Duration,
}

/// The highest clock, in MHz, of the trials that fit in `budget` (at least
/// [`FEWEST_TRIALS`] after the calibration), on the CPU this thread runs on; None where
/// no two trials that had the core to themselves agree (see [`stable`]).
fn best_mhz(budget: Duration) -> Option<f64> {
    best_mhz_timed(budget, time)
}

/// [`best_mhz`] with `time` timing the turns of the chain (the real loop, or a known
/// figure in tests). Past the budget, trials go on until two agree, up to three budgets
/// and [`MOST_TRIALS`].
fn best_mhz_timed(budget: Duration, mut time: impl FnMut(u64) -> Option<Timed>) -> Option<f64> {
    let started = Instant::now();
    let (shortest, took) = calibrate(&mut time)?;
    let trial = (budget / TRIALS).max(SHORTEST_TRIAL);
    let mut turns = turns_for(shortest, took, trial);
    let mut counted: Vec<f64> = Vec::new();
    for done in 1..=MOST_TRIALS {
        let timed = time(turns)?;
        if timed.on_cpu.as_secs_f64() >= ON_CPU * timed.wall.as_secs_f64() {
            counted.push(mhz(turns, timed.wall));
        } else {
            // The core is shared: shorter trials, down to the shortest, fit between the
            // others' turns on it.
            turns = (turns / 2).max(shortest);
        }
        let spent = started.elapsed() + trial;
        let enough = stable(&counted).is_some() || spent > budget * 3;
        if done >= FEWEST_TRIALS && spent > budget && enough {
            break;
        }
    }
    stable(&counted)
}

/// The best of `mhz` where the next best agrees with it within [`AGREEMENT`] and it is
/// a clock at all ([`SLOWEST_MHZ`]): one lucky or unlucky trial is not the clock.
fn stable(mhz: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = mhz.iter().copied().filter(|m| m.is_finite()).collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    match sorted[..] {
        [best, next, ..] if next >= best * (1.0 - AGREEMENT) && best >= SLOWEST_MHZ => Some(best),
        _ => None,
    }
}

/// A number of turns that takes at least [`SHORTEST_TRIAL`], and how long it took,
/// doubled from a few; None where even a huge count reads no time.
fn calibrate(time: &mut impl FnMut(u64) -> Option<Timed>) -> Option<(u64, Duration)> {
    let mut turns = 16u64;
    loop {
        let took = time(turns)?.wall;
        if took >= SHORTEST_TRIAL {
            return Some((turns, took));
        }
        turns = turns.checked_mul(2).filter(|&t| t < 1 << 40)?;
    }
}

/// The turns that last about `trial`, given that `turns` took `took`.
fn turns_for(turns: u64, took: Duration, trial: Duration) -> u64 {
    let scaled = turns as f64 * trial.as_secs_f64() / took.as_secs_f64();
    (scaled as u64).max(turns)
}

/// How long `turns` turns of the chain take, on the wall and on this thread's CPU
/// clock; None on an architecture without it.
fn time(turns: u64) -> Option<Timed> {
    let cpu_started = thread_cpu_time();
    let started = Instant::now();
    chain(turns)?;
    let wall = started.elapsed();
    // Where the thread's CPU clock cannot be read, whether it had the core is unknown:
    // the trials' agreement is left to tell.
    let on_cpu = thread_cpu_time()
        .zip(cpu_started)
        .map_or(wall, |(end, start)| end.saturating_sub(start));
    Some(Timed { wall, on_cpu })
}

/// This thread's CPU time so far.
fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only the timespec it is handed, which lives here.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
    ok.then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// The clock, in MHz, at which `turns` turns took `took`.
fn mhz(turns: u64, took: Duration) -> f64 {
    (turns * ADDS_PER_TURN) as f64 / took.as_secs_f64() / 1e6
}

/// `line` written out 256 times: an assembler's `.rept` would say the same, but LLVM
/// sizes inline assembly by its lines, and on ARM a constant pool it placed by that size
/// fell out of a load's reach ("out of range pc-relative fixup value").
macro_rules! written_256 {
    ($line:literal) => {
        concat!(
            written_256!(@64 $line),
            written_256!(@64 $line),
            written_256!(@64 $line),
            written_256!(@64 $line)
        )
    };
    (@64 $line:literal) => {
        concat!(
            written_256!(@16 $line),
            written_256!(@16 $line),
            written_256!(@16 $line),
            written_256!(@16 $line)
        )
    };
    (@16 $line:literal) => {
        concat!(
            written_256!(@4 $line),
            written_256!(@4 $line),
            written_256!(@4 $line),
            written_256!(@4 $line)
        )
    };
    (@4 $line:literal) => {
        concat!($line, $line, $line, $line)
    };
}

/// `turns` turns of [`ADDS_PER_TURN`] dependent register adds, written out.
#[cfg(target_arch = "x86_64")]
fn chain(turns: u64) -> Option<()> {
    let (mut x, one) = (0u64, 1u64);
    // SAFETY: the loop touches only the registers named here, no memory and no stack.
    unsafe {
        core::arch::asm!(
            "2:",
            written_256!("add {x}, {one}\n"),
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            one = in(reg) one,
            n = inout(reg) turns.max(1) => _,
            options(nomem, nostack),
        );
    }
    std::hint::black_box(x);
    Some(())
}

/// `turns` turns of [`ADDS_PER_TURN`] dependent register adds.
#[cfg(target_arch = "aarch64")]
fn chain(turns: u64) -> Option<()> {
    let (mut x, one) = (0u64, 1u64);
    // SAFETY: the loop touches only the registers named here (and the flags), no memory.
    unsafe {
        core::arch::asm!(
            "2:",
            written_256!("add {x}, {x}, {one}\n"),
            "subs {n}, {n}, #1",
            "b.ne 2b",
            x = inout(reg) x,
            one = in(reg) one,
            n = inout(reg) turns.max(1) => _,
            options(nomem, nostack),
        );
    }
    std::hint::black_box(x);
    Some(())
}

/// `turns` turns of [`ADDS_PER_TURN`] dependent register adds: `add` and `subs` are
/// ARMv6's as much as ARMv7's, in ARM and Thumb-2 alike. The count runs in 32-bit turns;
/// a turn's end is two branches (one not taken), a cycle or two in 256.
#[cfg(target_arch = "arm")]
fn chain(turns: u64) -> Option<()> {
    let (mut x, one) = (0u32, 1u32);
    let turns = u32::try_from(turns.max(1)).ok()?;
    // SAFETY: the loop touches only the registers named here (and the flags), no memory.
    unsafe {
        core::arch::asm!(
            "2:",
            written_256!("add {x}, {x}, {one}\n"),
            "subs {n}, {n}, #1",
            // Out over an unconditional branch back: Thumb's conditional branch reaches
            // 256 bytes, less than 256 adds of 2 bytes each; a `b` reaches 2 KiB.
            "beq 3f",
            "b 2b",
            "3:",
            x = inout(reg) x,
            one = in(reg) one,
            n = inout(reg) turns => _,
            options(nomem, nostack),
        );
    }
    std::hint::black_box(x);
    Some(())
}

/// Elsewhere no chain: a compiled one's cycles per add are not known.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "arm")))]
fn chain(_turns: u64) -> Option<()> {
    None
}

/// The fault factor `BB_FAULT_CLOCK_SCALE` asks for, read once per call; 1.0 without it.
#[cfg(feature = "fault-injection")]
fn fault_scale() -> f64 {
    scale_from(std::env::var(SCALE_ENV).ok().as_deref())
}

#[cfg(not(feature = "fault-injection"))]
fn fault_scale() -> f64 {
    1.0
}

/// The factor a `BB_FAULT_CLOCK_SCALE` value asks for: a finite positive number, else 1.0.
#[cfg(feature = "fault-injection")]
fn scale_from(value: Option<&str>) -> f64 {
    value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(1.0)
}

/// How far a measured clock may be from the reported one before the rows are flagged.
pub const TOLERANCE: f64 = 0.05;

/// How long each cluster's clock is measured for, at the start and at the end of a run.
pub const BUDGET: Duration = Duration::from_millis(150);

/// The most CPUs whose clock a run measures: a big.LITTLE board has two or three
/// clusters; a server's per-core policies need not cost a second each.
pub const MOST_CLOCKS: usize = 8;

/// One cluster's clock as measured at the start and the end of a run, beside the one
/// cpufreq reported right after each measurement (the core still busy from it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterClock {
    pub policy: Option<usize>,
    /// The CPU it was measured on: the cluster's first this process may run on.
    pub cpu: usize,
    pub start: Option<(f64, Option<u64>)>,
    pub end: Option<(f64, Option<u64>)>,
}

impl ClusterClock {
    /// Measures every cluster of `topology` that holds one of the `allowed` CPUs, on the
    /// first of those CPUs; `reported` reads the cluster's current clock (MHz) after.
    /// A CPU is measured once, however many policies claim it (a crafted or broken tree
    /// may list a hundred over the same cores), and at most [`MOST_CLOCKS`] in all.
    pub fn start(
        clusters: &[super::topology::Cluster],
        allowed: &[usize],
        reported: impl Fn(&super::topology::Cluster) -> Option<u64>,
    ) -> Vec<ClusterClock> {
        Self::start_with(clusters, allowed, reported, |cpu| measure(cpu, BUDGET))
    }

    /// [`ClusterClock::start`] with `measure` measuring a CPU (the real loop, or a
    /// count of calls in tests).
    fn start_with(
        clusters: &[super::topology::Cluster],
        allowed: &[usize],
        reported: impl Fn(&super::topology::Cluster) -> Option<u64>,
        mut measure: impl FnMut(usize) -> Option<MeasuredClock>,
    ) -> Vec<ClusterClock> {
        let mut cpus: Vec<(usize, &super::topology::Cluster)> = Vec::new();
        for c in clusters {
            let Some(cpu) = c.cpus.iter().copied().find(|cpu| allowed.contains(cpu)) else {
                continue;
            };
            if cpus.len() < MOST_CLOCKS && !cpus.iter().any(|&(seen, _)| seen == cpu) {
                cpus.push((cpu, c));
            }
        }
        // One not measured at the start (its trials never agreed) stays, to be measured
        // at the end: not measured is recorded as such, never as a figure.
        cpus.into_iter()
            .map(|(cpu, c)| ClusterClock {
                policy: c.policy,
                cpu,
                start: measure(cpu).map(|m| (m.mhz, reported(c))),
                end: None,
            })
            .collect()
    }

    /// Measures again at the end of the run.
    pub fn end(&mut self, reported: Option<u64>) {
        self.end = measure(self.cpu, BUDGET).map(|m| (m.mhz, reported));
    }

    /// Why the measured clock is not the reported one, where at the start or the end it
    /// is off by more than [`TOLERANCE`].
    pub fn mismatch_reason(&self) -> Option<String> {
        [("start", self.start), ("end", self.end)]
            .into_iter()
            .find_map(|(when, reading)| {
                let (measured, reported) = reading?;
                let reported = reported?;
                let off = mismatch(measured, reported as f64, TOLERANCE)?;
                Some(format!(
                    "cpu{} measured {measured:.0} MHz at the {when} of the run, cpufreq reports {reported} MHz ({:+.0}%)",
                    self.cpu,
                    off * 100.0
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: Duration = Duration::from_millis(150);

    /// Held by every test that measures CPU 0: two at once would share it, each timing
    /// the other's turns as its own.
    static CPU_0: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn cpu_0() -> std::sync::MutexGuard<'static, ()> {
        CPU_0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn affinity() -> nix::sched::CpuSet {
        nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap()
    }

    #[test]
    fn cpu_0_runs_at_a_plausible_clock_and_the_caller_stays_where_it_was() {
        let _cpu_0 = cpu_0();
        let before = affinity();
        let clock = measure(0, BUDGET).expect("CPU 0 is measured");
        assert_eq!(clock.cpu, 0);
        assert!(
            (50.0..10_000.0).contains(&clock.mhz),
            "CPU 0 at {} MHz",
            clock.mhz
        );
        assert_eq!(affinity(), before, "the caller's affinity is untouched");
    }

    #[test]
    fn a_cpu_past_the_machines_is_none_at_once() {
        let started = Instant::now();
        assert_eq!(measure(100_000, BUDGET), None);
        // Within the CpuSet's range but past this machine's CPUs.
        assert_eq!(measure(nix::sched::CpuSet::count() - 1, BUDGET), None);
        assert!(started.elapsed() < BUDGET, "{:?}", started.elapsed());
    }

    #[test]
    fn a_clock_5_percent_off_or_more_is_a_mismatch() {
        let minus = mismatch(1440.0, 1800.0, 0.05).unwrap();
        assert!((minus + 0.2).abs() < 1e-9, "{minus}");
        assert_eq!(mismatch(1790.0, 1800.0, 0.05), None);
        let plus = mismatch(2000.0, 1800.0, 0.05).unwrap();
        assert!((plus - 1.0 / 9.0).abs() < 1e-9, "{plus}");
        assert_eq!(mismatch(1440.0, 0.0, 0.05), None, "nothing reported");
        assert_eq!(mismatch(f64::NAN, 1800.0, 0.05), None);
    }

    /// A trial that had the core all along.
    fn on_cpu(wall: Duration) -> Option<Timed> {
        Some(Timed { wall, on_cpu: wall })
    }

    #[test]
    fn a_trial_that_lost_its_cpu_is_outrun_by_the_next() {
        // A 2 GHz core: 256 adds a turn take 128 ns. The first trial after the
        // calibration stalls for a second (the thread off its CPU), past the budget.
        let mut trials = 0;
        let timed = |turns: u64| {
            let ns = turns * 128;
            if ns >= 1_000_000 {
                trials += 1;
            }
            on_cpu(match trials {
                2 => Duration::from_secs(1),
                _ => Duration::from_nanos(ns),
            })
        };
        let best = best_mhz_timed(Duration::from_millis(1), timed).unwrap();
        assert!((best - 2000.0).abs() < 1.0, "{best}");
        assert_eq!(best_mhz_timed(Duration::ZERO, |_| None), None);
    }

    #[test]
    fn a_core_that_was_not_the_runs_is_not_measured_never_zero() {
        // Every trial stalled a second while its thread waited for the core (an
        // emulated Pi Zero under load read 0 MHz so): not measured, not 0.3 MHz.
        let waited = |_| {
            Some(Timed {
                wall: Duration::from_secs(1),
                on_cpu: Duration::from_millis(1),
            })
        };
        assert_eq!(best_mhz_timed(Duration::ZERO, waited), None);
        // Had the core but never held still: each trial 10% off the one before.
        let mut wall = 1_000_000u64;
        let drifting = move |_| {
            wall = wall * 11 / 10;
            on_cpu(Duration::from_nanos(wall))
        };
        assert_eq!(best_mhz_timed(Duration::ZERO, drifting), None);
        // Consistently below a megahertz is no clock either.
        let crawling = |_| on_cpu(Duration::from_secs(1));
        assert_eq!(best_mhz_timed(Duration::ZERO, crawling), None);
        // The best needs a second trial that agrees with it, and to be a clock at all.
        assert_eq!(stable(&[2000.0, 1990.0]), Some(2000.0));
        assert_eq!(stable(&[2000.0]), None);
        assert_eq!(stable(&[0.3, 0.3]), None);
    }

    #[test]
    fn turns_and_time_make_the_clock() {
        // 1000 turns of 256 adds in 128 µs: 2 GHz.
        let m = mhz(1000, Duration::from_micros(128));
        assert!((m - 2000.0).abs() < 1e-6, "{m}");
        // 100 turns took 1 ms: a 10 ms trial is 1000 turns, never fewer than calibrated.
        let ms = Duration::from_millis;
        assert_eq!(turns_for(100, ms(1), ms(10)), 1000);
        assert_eq!(turns_for(100, ms(5), ms(1)), 100);
    }

    #[cfg(feature = "fault-injection")]
    #[test]
    fn the_fault_scale_plays_a_board_20_percent_slow() {
        assert_eq!(scale_from(Some("0.8")), 0.8);
        for ignored in [
            None,
            Some(""),
            Some("fast"),
            Some("-1"),
            Some("0"),
            Some("inf"),
        ] {
            assert_eq!(scale_from(ignored), 1.0, "{ignored:?}");
        }
        // A board whose loop runs at 1800 MHz, played 20% slow: flagged against the
        // 1800 MHz cpufreq reports, by exactly that.
        let slow = measure_with(0, BUDGET, 0.8, |_| Some(1800.0)).unwrap().mhz;
        let off = mismatch(slow, 1800.0, TOLERANCE).expect("20% below is a mismatch");
        assert!((off + 0.2).abs() < 1e-9, "{slow}: {off}");
        let fair = measure_with(0, BUDGET, 1.0, |_| Some(1800.0)).unwrap().mhz;
        assert_eq!(mismatch(fair, 1800.0, TOLERANCE), None);
    }

    #[test]
    fn a_cpu_is_measured_once_however_many_policies_claim_it() {
        use super::super::topology::Cluster;
        let cluster = |policy: usize, cpus: &[usize]| Cluster {
            policy: Some(policy),
            cpus: cpus.to_vec(),
            ..Cluster::default()
        };
        let mut clusters: Vec<Cluster> = (0..100).map(|p| cluster(p, &[0, 1])).collect();
        clusters.extend((0..100).map(|p| cluster(100 + p, &[2 + p])));
        let allowed: Vec<usize> = (0..200).collect();
        let mut measured = Vec::new();
        let clocks = ClusterClock::start_with(
            &clusters,
            &allowed,
            |_| Some(1800),
            |cpu| {
                measured.push(cpu);
                Some(MeasuredClock { cpu, mhz: 1800.0 })
            },
        );
        assert_eq!(measured.len(), MOST_CLOCKS, "{measured:?}");
        assert_eq!(measured[..3], [0, 2, 3]);
        assert_eq!(clocks.len(), MOST_CLOCKS);
    }
}
