//! Where the two sides of a measurement ran, and whether a benchmark's iteration ran placed
//! as its paired baseline's did (see `PairedBaseline` in the harness): the measuring
//! thread's CPU from sched_getcpu, sampled as an iteration starts and as it ends, and a
//! peer's (a server's serving threads) from the `processor` field of
//! `/proc/PID/task/TID/stat`, the CPU each last ran on, read after the iteration.
//! These are samples, not a trace: a migration between two samples goes unseen; where the
//! sides are pinned to one CPU each, the samples are exact.

use std::fmt;

/// The CPU this thread runs on now, where the kernel tells.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only reports the calling thread's CPU.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// The CPUs that the threads of process `pid` picked by `select` (given the thread id and
/// name) last ran on, sorted, without repeats; empty where `/proc` cannot tell (a peer on
/// another machine, a process that is gone).
pub fn last_cpus(pid: u32, select: impl Fn(u32, &str) -> bool) -> Vec<usize> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut cpus = Vec::new();
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        if let Some((name, cpu)) = parse_stat(&stat) {
            if select(tid, name) {
                cpus.push(cpu);
            }
        }
    }
    sorted(cpus)
}

/// The name and the last CPU (field 39, `processor`) of a `stat` line. The name is the
/// one field in parentheses and may itself hold spaces and parentheses.
fn parse_stat(stat: &str) -> Option<(&str, usize)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?;
    // The fields after the name start at field 3 (state): processor is the 37th.
    let cpu = stat[close + 1..].split_whitespace().nth(36)?.parse().ok()?;
    Some((name, cpu))
}

fn sorted(mut cpus: Vec<usize>) -> Vec<usize> {
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// Where one iteration ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// The measuring thread's CPUs as the iteration started and as it ended.
    pub client: Vec<usize>,
    /// The CPUs the peer's serving threads last ran on, read after the iteration; empty
    /// where that is unknown (no peer, or one this machine cannot see).
    pub server: Vec<usize>,
}

/// How the two sides of an iteration shared the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Both on one CPU: a round trip switches context instead of waking another core.
    SameCore,
    /// Never on the same CPU.
    CrossCore,
    /// On one CPU in some samples and apart in others.
    Mixed,
    /// The peer's CPU is unknown.
    Unknown,
}

impl Placement {
    /// The placement from the client's CPU samples (any of which may be missing) and the
    /// peer's CPUs.
    pub fn new(client: impl IntoIterator<Item = Option<usize>>, server: Vec<usize>) -> Placement {
        Placement {
            client: sorted(client.into_iter().flatten().collect()),
            server: sorted(server),
        }
    }

    pub fn relation(&self) -> Relation {
        if self.server.is_empty() || self.client.is_empty() {
            Relation::Unknown
        } else if self.client == self.server && self.client.len() == 1 {
            Relation::SameCore
        } else if self.client.iter().all(|c| !self.server.contains(c)) {
            Relation::CrossCore
        } else {
            Relation::Mixed
        }
    }
}

fn cpu_list(cpus: &[usize]) -> String {
    if cpus.is_empty() {
        return "?".into();
    }
    let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
    list.join(",")
}

impl fmt::Display for Placement {
    /// `client 0, server 1 (cross-core)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "client {}, server {}",
            cpu_list(&self.client),
            cpu_list(&self.server)
        )?;
        match self.relation() {
            Relation::SameCore => f.write_str(" (same core)"),
            Relation::CrossCore => f.write_str(" (cross-core)"),
            Relation::Mixed => f.write_str(" (same core and cross-core)"),
            Relation::Unknown => Ok(()),
        }
    }
}

/// Where a baseline iteration and the measured iteration after it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairPlacement {
    pub baseline: Placement,
    pub measured: Placement,
}

impl PairPlacement {
    /// Whether the two ran placed differently: the client on other CPUs, or the peers on
    /// other CPUs where both are known (which includes one pair on one core and the other
    /// across two).
    pub fn differs(&self) -> bool {
        let (b, m) = (&self.baseline, &self.measured);
        let servers_known = !b.server.is_empty() && !m.server.is_empty();
        b.client != m.client || (servers_known && b.server != m.server)
    }

    /// `0/1 0,1/1`: the baseline's client and server CPUs, then the measured side's, `-`
    /// for an unknown side; the form a fork sends to its parent.
    pub fn encode(&self) -> String {
        let side = |p: &Placement| {
            let list = |cpus: &[usize]| match cpus {
                [] => "-".to_string(),
                _ => cpu_list(cpus),
            };
            format!("{}/{}", list(&p.client), list(&p.server))
        };
        format!("{} {}", side(&self.baseline), side(&self.measured))
    }

    /// The inverse of [`PairPlacement::encode`].
    pub fn decode(s: &str) -> Option<PairPlacement> {
        let side = |s: &str| -> Option<Placement> {
            let list = |l: &str| -> Option<Vec<usize>> {
                match l {
                    "-" => Some(Vec::new()),
                    _ => l.split(',').map(|c| c.parse().ok()).collect(),
                }
            };
            let (client, server) = s.split_once('/')?;
            Some(Placement {
                client: list(client)?,
                server: list(server)?,
            })
        };
        let (baseline, measured) = s.split_once(' ')?;
        Some(PairPlacement {
            baseline: side(baseline)?,
            measured: side(measured)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_cpu_is_read_after_a_name_with_spaces_and_parentheses() {
        let mut fields: Vec<String> = (3..=52).map(|i| i.to_string()).collect();
        fields[0] = "S".into();
        fields[36] = "3".into();
        let stat = format!("4242 (a) b (c) {}", fields.join(" "));
        assert_eq!(parse_stat(&stat), Some(("a) b (c", 3)));
        assert_eq!(parse_stat("4242 (short) S 1 2"), None);
    }

    #[test]
    fn this_process_and_this_thread_have_a_cpu() {
        let pid = std::process::id();
        let main = last_cpus(pid, |tid, _| tid == pid);
        assert_eq!(main.len(), 1, "{main:?}");
        assert!(current_cpu().is_some());
        assert!(last_cpus(pid, |_, _| false).is_empty());
        assert!(last_cpus(u32::MAX, |_, _| true).is_empty());
    }

    #[test]
    fn relations_and_differences_of_placements() {
        let p = |client: &[usize], server: &[usize]| Placement {
            client: client.to_vec(),
            server: server.to_vec(),
        };
        assert_eq!(p(&[0], &[0]).relation(), Relation::SameCore);
        assert_eq!(p(&[0], &[1]).relation(), Relation::CrossCore);
        assert_eq!(p(&[0, 1], &[1]).relation(), Relation::Mixed);
        assert_eq!(p(&[0], &[]).relation(), Relation::Unknown);
        assert_eq!(p(&[0], &[1]).to_string(), "client 0, server 1 (cross-core)");
        assert_eq!(p(&[2, 3], &[]).to_string(), "client 2,3, server ?");
        let pair = |baseline, measured| PairPlacement { baseline, measured };
        assert!(!pair(p(&[0], &[0]), p(&[0], &[0])).differs());
        assert!(
            pair(p(&[0], &[0]), p(&[0], &[1])).differs(),
            "same core against cross-core"
        );
        assert!(pair(p(&[0], &[1]), p(&[1], &[1])).differs());
        assert!(
            !pair(p(&[0], &[]), p(&[0], &[1])).differs(),
            "an unknown peer is no difference"
        );
        assert_eq!(
            Placement::new([Some(1), None, Some(0), Some(1)], vec![3, 2, 3]),
            p(&[0, 1], &[2, 3])
        );
        let both = pair(p(&[0, 1], &[]), p(&[1], &[0]));
        assert_eq!(both.encode(), "0,1/- 1/0");
        assert_eq!(PairPlacement::decode(&both.encode()), Some(both));
        assert_eq!(PairPlacement::decode("0/1"), None);
        assert_eq!(PairPlacement::decode("x/- 1/0"), None);
    }
}
