//! The board around a run, as sbc-bench watches it: before it, `--governor` set (and set
//! back when the run ends, however it ends), the wait for an idle board, the environment
//! record and each cluster's clock measured; through it, the monitor; after it, the
//! clocks measured again and every row flagged with what held for the whole run.

use super::cli::CommonArgs;
use crate::model::result::BenchResult;
use crate::system::clock::ClusterClock;
use crate::system::env::Environment;
use crate::system::governor::GovernorSet;
use crate::system::monitor::Monitor;
use crate::system::topology::current_mhz;
use crate::system::validity::Flag;
use crate::util::format::{format_duration, printable};
use crate::util::terminal::{program_name, warn};
use std::path::PathBuf;
use std::time::Duration;

/// The board under a run: its record, and what the run set on it.
pub(super) struct Board {
    pub env: Environment,
    /// Set back when the run is over, or when dropped.
    governor: Option<GovernorSet>,
    /// Whether `--governor` was asked for and could not be set (said already).
    governor_refused: bool,
    root: PathBuf,
    /// The CPUs this process may run on: the clusters the run may use.
    allowed: Vec<usize>,
}

impl Board {
    /// The warnings about the board as the run starts; the governor's is left out where
    /// `--governor` already said why it could not set one.
    pub fn warnings(&self) -> Vec<crate::model::warning::Warning> {
        let mut warnings = crate::model::warning::environment_warnings(&self.env);
        if self.governor_refused {
            warnings.retain(|w| !matches!(w, crate::model::warning::Warning::Governor(_)));
        }
        warnings
    }

    /// Sets `--governor`, waits up to `idle_wait` for an idle board, records the
    /// environment and measures each cluster's clock: what happens before the header.
    pub fn before_the_run(flags: &CommonArgs, idle_wait: Duration) -> Board {
        let governor = set_governor(flags.governor.as_deref());
        let waited = wait_for_idle(idle_wait);
        let mut env = Environment::capture();
        env.idle_wait = waited;
        env.governor_set = governor
            .as_ref()
            .zip(flags.governor.as_ref())
            .map(|(set, to)| (to.clone(), set.before()));
        let root = crate::system::sysfs::sysroot();
        let allowed = crate::system::pinning::allowed_cpus();
        env.clocks = ClusterClock::start(&env.clusters, &allowed, |c| current_mhz(&root, c));
        env.run_cluster = flags.cluster.clone().map(|c| (c, flags.cluster_by_default));
        Board {
            env,
            governor_refused: flags.governor.is_some() && governor.is_none(),
            governor,
            root,
            allowed,
        }
    }

    /// The monitor, reading every `every` in this process: none with no forks, where the
    /// measurement runs here and it would run beside it.
    pub fn monitor(
        &self,
        forks: u32,
        every: Duration,
    ) -> crate::util::error::Result<Option<Monitor>> {
        let every = if forks == 0 { Duration::ZERO } else { every };
        Monitor::start(self.root.clone(), every, &self.env.clusters)
    }

    /// The monitor stopped into the record, the clocks measured again, and every row
    /// flagged with what held for the whole run.
    pub fn after_the_run(&mut self, monitor: Option<Monitor>, results: &mut [BenchResult]) {
        self.env.monitor = monitor.map(|m| m.stop());
        // Set back before the report is written: a closed stdout ends the process there.
        drop(self.governor.take());
        let env = &mut self.env;
        for clock in env.clocks.iter_mut() {
            let cluster = env.clusters.iter().find(|c| c.cpus.contains(&clock.cpu));
            clock.end(cluster.and_then(|c| current_mhz(&self.root, c)));
        }
        flag_the_run(results, &self.env, &self.allowed);
    }
}

/// Flags every row with what held for the whole run: a board that never went idle, a
/// cluster it ran on not under the performance governor, a clock measured more than 5%
/// off the reported one (said once on stderr too).
fn flag_the_run(
    results: &mut [crate::model::result::BenchResult],
    env: &Environment,
    allowed: &[usize],
) {
    let mut raised: Vec<(Flag, String)> = Vec::new();
    if let Some(w) = env.idle_wait.filter(|w| !w.idle) {
        raised.push((
            Flag::Busy,
            format!(
                "the board never went idle in {} (other processes used {:.2} cores)",
                format_duration(w.waited),
                w.background
            ),
        ));
    }
    for c in &env.clusters {
        let ran_there = c.cpus.iter().any(|cpu| allowed.contains(cpu));
        if let Some(g) = c
            .governor
            .as_deref()
            .filter(|g| ran_there && *g != "performance")
        {
            raised.push((
                Flag::Governor,
                format!(
                    "governor {} on {}, not performance",
                    printable(g),
                    c.cpu_names()
                ),
            ));
        }
    }
    for reason in env.clocks.iter().filter_map(|c| c.mismatch_reason()) {
        warn(&reason);
        raised.push((Flag::ClockMismatch, reason));
    }
    for r in results.iter_mut() {
        for (flag, reason) in &raised {
            r.throttle.flag(*flag, reason.clone());
        }
    }
}

/// `--governor`'s governor set on every policy for the run; where it cannot be, said
/// once, and the run goes on as the board is.
fn set_governor(governor: Option<&str>) -> Option<crate::system::governor::GovernorSet> {
    let governor = governor?;
    match crate::system::governor::set(&crate::system::sysfs::sysroot(), governor) {
        Ok(set) => Some(set),
        Err(refusal) => {
            let hint = match refusal.permission {
                true => "; run as root to set it",
                false => "",
            };
            crate::stderr!(
                "{}: --governor {governor}: could not set it ({}): measuring under the board's own governor{hint}",
                program_name(),
                refusal.why
            );
            None
        }
    }
}

/// Waits up to `most` for an idle board, saying so first (the header comes after) and
/// after where it never went idle; None where it did not wait or could not tell.
fn wait_for_idle(most: std::time::Duration) -> Option<crate::system::activity::IdleWait> {
    if most.is_zero() {
        return None;
    }
    crate::stderr!(
        "{}: waiting up to {} for the board to go idle (--idle-wait)",
        program_name(),
        format_duration(most)
    );
    // Other processes' CPU is summed over every CPU of the board, whatever this process
    // is pinned to: so is the limit.
    let root = crate::system::sysfs::sysroot();
    let cores = crate::system::activity::cpus(&root)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let waited = crate::system::activity::wait_for_idle(&root, most, cores);
    if let Some(w) = waited.filter(|w| !w.idle) {
        crate::stderr!(
            "{}: the board never went idle in {} (other processes used {:.2} cores, the limit is {:.2}): measuring anyway, every row flagged busy",
            program_name(),
            format_duration(w.waited),
            w.background,
            w.limit
        );
    }
    waited
}
