//! Where the two sides of a measurement (a client and its server) are pinned. Left to the
//! scheduler, the two land on one core in some runs and on two in others, and those are
//! two different machines: a round trip over a Unix socket on a 2-core VM took 5–9 µs on
//! one core and 42–68 µs across two, and which one a run got was chance. So by default
//! each two-sided row runs in named placements, each a row of its own: both sides on one
//! core, and each on its own core (on a big.LITTLE board, cores of the fastest cluster).
//! `--pin none` leaves them unpinned, the only case that may mix placements.

use std::path::Path;

/// Where a client and its server run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pinning {
    /// Both on this CPU: a round trip switches context rather than waking another core.
    OneCore(usize),
    /// The client on the first CPU, the server on the second.
    TwoCores(usize, usize),
    /// As the scheduler places them (`--pin none`).
    Unpinned,
    /// The CPUs `--pin` named: the client's, then the server's (one CPU: both on it).
    Given(Vec<usize>),
}

impl Pinning {
    /// The row's `placement` param: `one-core`, `two-cores`, `none`, or `--pin`'s list.
    pub fn name(&self) -> String {
        match self {
            Pinning::OneCore(_) => "one-core".into(),
            Pinning::TwoCores(..) => "two-cores".into(),
            Pinning::Unpinned => "none".into(),
            Pinning::Given(cpus) => {
                let cpus: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
                cpus.join(",")
            }
        }
    }

    /// The client's CPU and the server's, where pinned.
    pub fn cpus(&self) -> Option<(usize, usize)> {
        match self {
            Pinning::OneCore(c) => Some((*c, *c)),
            Pinning::TwoCores(a, b) => Some((*a, *b)),
            Pinning::Unpinned => None,
            Pinning::Given(cpus) => Some((*cpus.first()?, *cpus.last()?)),
        }
    }

    /// As `--pin` takes it: `client,server`, or None where unpinned.
    pub fn as_list(&self) -> Option<Vec<usize>> {
        self.cpus().map(|(a, b)| vec![a, b])
    }

    /// How an answer says it: `on 1 core`, `on 2 cores`, `unpinned`, `pinned to 0,1`.
    pub fn phrase(name: &str) -> String {
        match name {
            "one-core" => "on 1 core".into(),
            "two-cores" => "on 2 cores".into(),
            "none" => "unpinned".into(),
            other => format!("pinned to {other}"),
        }
    }
}

/// The placements of a run: what `--pin` says (`none`: unpinned; a list: that), or by
/// default [`defaults`] on this process's CPUs, the first of them the run's main one.
pub fn placements(pin: Option<&[usize]>, unpinned: bool) -> Vec<Pinning> {
    match (unpinned, pin) {
        (true, _) => vec![Pinning::Unpinned],
        (false, Some(cpus)) => vec![Pinning::Given(cpus.to_vec())],
        (false, None) => {
            let root = super::sysfs::sysroot();
            defaults(&allowed_cpus(), |cpu| max_freq_khz(&root, cpu))
        }
    }
}

/// The default placements among `allowed` CPUs: across two cores first (the run's main
/// placement, as a client and a server on a multi-core board usually run), then on one
/// core; only one core where there is one. The cores are the fastest by `max_freq`
/// (the big cluster of a big.LITTLE board), the lowest numbered among equals.
pub fn defaults(allowed: &[usize], max_freq: impl Fn(usize) -> Option<u64>) -> Vec<Pinning> {
    let mut fastest: Vec<usize> = allowed.to_vec();
    // Stable: equal clocks keep the CPUs' order.
    fastest.sort_by_key(|&c| std::cmp::Reverse(max_freq(c).unwrap_or(0)));
    match fastest.as_slice() {
        [] => vec![Pinning::Unpinned],
        [one] => vec![Pinning::OneCore(*one)],
        [a, b, ..] => {
            let (a, b) = (*a.min(b), *a.max(b));
            vec![Pinning::TwoCores(a, b), Pinning::OneCore(a)]
        }
    }
}

/// The CPUs this process may run on, in order (every online one, where that cannot be
/// read).
pub fn allowed_cpus() -> Vec<usize> {
    match nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
        Ok(set) => (0..nix::sched::CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

/// Pins this process (and so every fork and thread it starts) to `cpus`; why not, as a
/// phrase, where it cannot.
pub fn pin_process(cpus: &[usize]) -> Result<(), String> {
    let mut set = nix::sched::CpuSet::new();
    for &cpu in cpus {
        set.set(cpu)
            .map_err(|_| format!("CPU {cpu} does not exist"))?;
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
        .map_err(|e| format!("cannot pin to these CPUs: {e}"))
}

/// CPU `cpu`'s highest clock, in kHz, from sysfs under `root` (`BB_SYSROOT`).
fn max_freq_khz(root: &Path, cpu: usize) -> Option<u64> {
    let path = format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq");
    super::sysfs::read_num(root, &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cores_first_then_one_core_on_the_fastest_cluster() {
        let flat = |_| None;
        assert_eq!(
            defaults(&[0, 1, 2, 3], flat),
            [Pinning::TwoCores(0, 1), Pinning::OneCore(0)]
        );
        assert_eq!(defaults(&[3], flat), [Pinning::OneCore(3)]);
        assert_eq!(defaults(&[], flat), [Pinning::Unpinned]);
        // An RK3588: four Cortex-A55 at 1.8 GHz (0-3), four A76 at 2.352 GHz (4-7).
        let rk3588 = |c: usize| Some(if c < 4 { 1_800_000 } else { 2_352_000 });
        let all: Vec<usize> = (0..8).collect();
        assert_eq!(
            defaults(&all, rk3588),
            [Pinning::TwoCores(4, 5), Pinning::OneCore(4)]
        );
        // Only two CPUs allowed, of either cluster.
        assert_eq!(defaults(&[1, 6], rk3588)[0], Pinning::TwoCores(1, 6));
    }

    #[test]
    fn names_cpus_and_phrases() {
        assert_eq!(Pinning::TwoCores(0, 1).name(), "two-cores");
        assert_eq!(Pinning::OneCore(2).cpus(), Some((2, 2)));
        assert_eq!(Pinning::TwoCores(0, 3).as_list(), Some(vec![0, 3]));
        assert_eq!(Pinning::Unpinned.as_list(), None);
        assert_eq!(Pinning::Given(vec![1]).cpus(), Some((1, 1)));
        assert_eq!(Pinning::Given(vec![0, 1]).name(), "0,1");
        assert_eq!(Pinning::phrase("one-core"), "on 1 core");
        assert_eq!(Pinning::phrase("0,1"), "pinned to 0,1");
        assert_eq!(placements(None, true), [Pinning::Unpinned]);
        assert_eq!(placements(Some(&[0]), false), [Pinning::Given(vec![0])]);
        let defaults = placements(None, false);
        assert!(!defaults.is_empty() && defaults.iter().all(|p| *p != Pinning::Unpinned));
    }

    #[test]
    fn the_clock_is_read_from_sysfs() {
        let dir = crate::util::temp::TempDir::new("pinning");
        let cpu1 = dir.join("sys/devices/system/cpu/cpu1/cpufreq");
        std::fs::create_dir_all(&cpu1).unwrap();
        std::fs::write(cpu1.join("cpuinfo_max_freq"), "2352000\n").unwrap();
        assert_eq!(max_freq_khz(&dir, 1), Some(2_352_000));
        assert_eq!(max_freq_khz(&dir, 0), None);
    }
}
