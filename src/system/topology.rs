//! The board's CPU clusters: each cpufreq policy (a cluster of cores that share one clock)
//! with its cores, their type (from /proc/cpuinfo's `CPU part`), capacity, frequencies and
//! governor, as sbc-bench lists them; and which cluster `--cluster big|little|N` names. A big.LITTLE
//! board (an RK3588's 4 × Cortex-A55 and 4 × Cortex-A76) is several machines in one: the
//! record keeps every cluster, never cpu0's alone.
//!
//! Read under the root [`super::sysfs::sysroot`] gives, as every /sys read is; a board
//! without cpufreq (a VM) is one cluster of its online cores with no frequencies.

use super::sysfs::{read, read_num};
use crate::util::format::printable;
use std::collections::BTreeMap;
use std::path::Path;

/// The most CPUs a kernel list is read for: more is no board's, and a made-up
/// `0-4294967295` is no reason to allocate.
const MOST_CPUS: usize = 4096;

/// One cluster: the cores of one cpufreq policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cluster {
    /// cpufreq's `policyN` (N is its first CPU); None on a board without cpufreq.
    pub policy: Option<usize>,
    pub cpus: Vec<usize>,
    /// The cores' type (`Cortex-A76`, or x86's model name); the first core's where they
    /// differ.
    pub core: Option<String>,
    /// The scheduler's capacity of its cores (1024 for the biggest), where the kernel
    /// has it (arm64 with `capacity-dmips-mhz` in the device tree).
    pub capacity: Option<u64>,
    pub min_mhz: Option<u64>,
    pub max_mhz: Option<u64>,
    pub cur_mhz: Option<u64>,
    pub governor: Option<String>,
}

impl Cluster {
    /// `cpu4-7`, `cpu0`, `cpu0,2`.
    pub fn cpu_names(&self) -> String {
        format!("cpu{}", cpu_ranges(&self.cpus))
    }

    /// `4 × Cortex-A76 (cpu4-7, 408-2352 MHz)`: how a line names it.
    pub fn describe(&self) -> String {
        let core = self.core.as_deref().unwrap_or("cores of an unknown type");
        let clocks = match (self.min_mhz, self.max_mhz) {
            (Some(min), Some(max)) if min != max => format!(", {min}-{max} MHz"),
            (_, Some(max)) => format!(", {max} MHz"),
            _ => String::new(),
        };
        format!(
            "{} × {core} ({}{clocks})",
            self.cpus.len(),
            self.cpu_names()
        )
    }

    /// How fast its cores are, for ordering: capacity first (the kernel's own ranking),
    /// then the highest clock.
    fn rank(&self) -> (u64, u64) {
        (self.capacity.unwrap_or(0), self.max_mhz.unwrap_or(0))
    }
}

/// Which cluster `--cluster` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterChoice {
    /// The fastest cores (highest capacity, then clock).
    Big,
    /// The slowest.
    Little,
    /// cpufreq's `policyN`.
    Policy(usize),
}

/// `--cluster`'s value: `big`, `little` or a policy's number.
pub fn parse_cluster(s: &str) -> Result<ClusterChoice, String> {
    match s.trim() {
        "big" => Ok(ClusterChoice::Big),
        "little" => Ok(ClusterChoice::Little),
        n => n.parse().map(ClusterChoice::Policy).map_err(|_| {
            format!("invalid cluster '{s}' (expected big, little or a cpufreq policy's number, such as 4 for policy4)")
        }),
    }
}

/// The board's clusters, slowest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Topology {
    pub clusters: Vec<Cluster>,
}

impl Topology {
    pub fn read(root: &Path) -> Topology {
        let cpu = "sys/devices/system/cpu";
        let online = read(root, &format!("{cpu}/online")).and_then(|l| cpu_list(&l));
        let cores = read(root, "proc/cpuinfo")
            .map(|c| core_names(&c))
            .unwrap_or_default();
        let mut clusters = policies(root);
        if clusters.is_empty() {
            clusters = without_cpufreq(root, online.as_deref(), &cores);
        }
        for cluster in &mut clusters {
            cluster.core = cluster.cpus.iter().find_map(|c| cores.get(c).cloned());
            cluster.capacity = cluster
                .cpus
                .iter()
                .find_map(|c| read_num(root, &format!("{cpu}/cpu{c}/cpu_capacity")));
        }
        clusters.sort_by_key(|c| (c.rank(), c.cpus.first().copied()));
        Topology { clusters }
    }

    /// Whether the clusters differ in their cores (type, capacity or top clock): a
    /// big.LITTLE board, where which cluster a benchmark ran on decides its figure.
    pub fn heterogeneous(&self) -> bool {
        self.clusters
            .windows(2)
            .any(|w| (w[0].rank(), &w[0].core) != (w[1].rank(), &w[1].core))
    }

    /// The cluster `choice` names; an error naming the board's clusters where none is.
    /// `big` is every cluster of the fastest cores together (an RK3588's two A76 pairs).
    pub fn pick(&self, choice: ClusterChoice) -> Result<Cluster, String> {
        let found = match choice {
            ClusterChoice::Big => self.big(),
            ClusterChoice::Little => self.clusters.first().cloned(),
            ClusterChoice::Policy(n) => self.clusters.iter().find(|c| c.policy == Some(n)).cloned(),
        };
        found.ok_or_else(|| {
            let policies: Vec<String> = self
                .clusters
                .iter()
                .filter_map(|c| c.policy.map(|p| format!("{p} ({})", c.cpu_names())))
                .collect();
            match (choice, policies.is_empty()) {
                (_, true) => "this machine has no cpufreq policies to choose from".to_string(),
                (ClusterChoice::Policy(n), false) => format!(
                    "this board has no policy{n}; its clusters are {}",
                    policies.join(", ")
                ),
                _ => "this machine's clusters could not be read".to_string(),
            }
        })
    }

    /// The fastest cores, where an unpinned benchmark mostly runs: every cluster of the
    /// highest rank as one (an RK3588's policy4 and policy6, cpu4-7), named by the first.
    pub fn big(&self) -> Option<Cluster> {
        let top = self.clusters.last()?.rank();
        let mut tops = self.clusters.iter().filter(|c| c.rank() == top);
        let mut big = tops.next()?.clone();
        for other in tops {
            big.cpus.extend(&other.cpus);
        }
        big.cpus.sort_unstable();
        Some(big)
    }

    /// What `cluster` is on this board, for an answer: `the big cluster` (the fastest
    /// cores), `the little cluster` (the slowest), `a middle cluster` (a board of three
    /// kinds), or `one cluster` where the clusters rank alike.
    pub fn role(&self, cluster: &Cluster) -> &'static str {
        let (Some(little), Some(big)) = (self.clusters.first(), self.clusters.last()) else {
            return "one cluster";
        };
        match cluster.rank() {
            _ if little.rank() == big.rank() => "one cluster",
            r if r == big.rank() => "the big cluster",
            r if r == little.rank() => "the little cluster",
            _ => "a middle cluster",
        }
    }

    /// The cluster `cpu` belongs to.
    pub fn of_cpu(&self, cpu: usize) -> Option<&Cluster> {
        self.clusters.iter().find(|c| c.cpus.contains(&cpu))
    }
}

/// `cluster`'s clock now, in MHz: its policy's `scaling_cur_freq` (an older kernel's
/// cpu0's where it has no policy).
pub fn current_mhz(root: &Path, cluster: &Cluster) -> Option<u64> {
    let path = match cluster.policy {
        Some(n) => format!("sys/devices/system/cpu/cpufreq/policy{n}/scaling_cur_freq"),
        None => "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq".into(),
    };
    read_num(root, &path).map(|k| k / 1000)
}

/// Every `policyN` under cpufreq, with its CPUs, clocks and governor.
fn policies(root: &Path) -> Vec<Cluster> {
    let dir = root.join("sys/devices/system/cpu/cpufreq");
    let mut numbers: Vec<usize> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix("policy")?
                .parse()
                .ok()
        })
        .take(MOST_CPUS)
        .collect();
    numbers.sort_unstable();
    numbers
        .into_iter()
        .filter_map(|n| {
            let at = |file: &str| format!("sys/devices/system/cpu/cpufreq/policy{n}/{file}");
            let cpus = read(root, &at("related_cpus"))
                .or_else(|| read(root, &at("affected_cpus")))
                .and_then(|l| cpu_list(&l.split_whitespace().collect::<Vec<_>>().join(",")))
                .filter(|c| !c.is_empty())?;
            let mhz = |file: &str| read_num(root, &at(file)).map(|k| k / 1000);
            Some(Cluster {
                policy: Some(n),
                cpus,
                min_mhz: mhz("cpuinfo_min_freq"),
                max_mhz: mhz("cpuinfo_max_freq"),
                cur_mhz: mhz("scaling_cur_freq"),
                governor: read(root, &at("scaling_governor")).map(|g| shown(&g)),
                ..Cluster::default()
            })
        })
        .collect()
}

/// A board without `cpufreq/policyN`: an older kernel's `cpu0/cpufreq` for all its
/// cores, or no cpufreq at all; the online cores grouped by their type either way.
fn without_cpufreq(
    root: &Path,
    online: Option<&[usize]>,
    cores: &BTreeMap<usize, String>,
) -> Vec<Cluster> {
    let cpus = match online {
        Some(cpus) if !cpus.is_empty() => cpus.to_vec(),
        _ => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    };
    let old = "sys/devices/system/cpu/cpu0/cpufreq";
    let mhz = |file: &str| read_num(root, &format!("{old}/{file}")).map(|k| k / 1000);
    let mut by_core: Vec<Cluster> = Vec::new();
    // A core cpuinfo leaves out (a kernel that prints one block) is taken for the one
    // before it.
    let mut last = cores.values().next();
    for cpu in cpus {
        let core = cores.get(&cpu).or(last);
        last = core;
        match by_core.iter_mut().find(|c| c.core.as_ref() == core) {
            Some(cluster) => cluster.cpus.push(cpu),
            None => by_core.push(Cluster {
                cpus: vec![cpu],
                core: core.cloned(),
                ..Cluster::default()
            }),
        }
    }
    if by_core.len() == 1 {
        let one = &mut by_core[0];
        one.min_mhz = mhz("cpuinfo_min_freq");
        one.max_mhz = mhz("cpuinfo_max_freq");
        one.cur_mhz = mhz("scaling_cur_freq");
        one.governor = read(root, &format!("{old}/scaling_governor")).map(|g| shown(&g));
    }
    by_core
}

/// Each processor's core type from /proc/cpuinfo: `CPU part` named on ARM, `model name`
/// on x86, by the `processor` number of its block. A single-core ARMv6's cpuinfo has one
/// block; a block without a number is processor 0's.
pub fn core_names(cpuinfo: &str) -> BTreeMap<usize, String> {
    let mut names = BTreeMap::new();
    for block in cpuinfo.split("\n\n") {
        let value = |key: &str| cpuinfo_value(block, key);
        let Some(name) = core_name(block) else {
            continue;
        };
        let number = value("processor").and_then(|n| n.parse().ok()).unwrap_or(0);
        if names.len() < MOST_CPUS {
            names.entry(number).or_insert(name);
        }
    }
    names
}

/// The CPU's name from /proc/cpuinfo: `model name` on x86, the core type from
/// `CPU part` on ARM (where `model name` only says "ARMv7 Processor rev 4"); the first
/// processor's.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    core_name(cpuinfo)
}

/// The value of `key` in a /proc/cpuinfo text (its first block that has it), printable.
pub fn cpuinfo_value(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key && !v.trim().is_empty()).then(|| shown(v.trim()))
    })
}

/// The core type one /proc/cpuinfo block names: its ARM `CPU part`, else its `model
/// name` (x86), else its `Hardware`.
pub fn core_name(block: &str) -> Option<String> {
    let arm_core = cpuinfo_value(block, "CPU part").map(|part| {
        let part = part.to_ascii_lowercase();
        match ARM_PARTS.iter().find(|(p, _)| *p == part) {
            Some((_, name)) => name.to_string(),
            None => format!("ARM part {part}"),
        }
    });
    arm_core
        .or_else(|| cpuinfo_value(block, "model name"))
        .or_else(|| cpuinfo_value(block, "Hardware"))
}

/// ARM's core types by /proc/cpuinfo's `CPU part` (implementer 0x41), as the kernel's
/// arch/arm64 cputype.h and ARM's TRMs number them: every Raspberry Pi's among them
/// (ARM1176 on the Zero and Pi 1, Cortex-A7 on the Pi 2, A53 on the Pi 3 and Zero 2,
/// A72 on the Pi 4, A76 on the Pi 5).
const ARM_PARTS: &[(&str, &str)] = &[
    ("0xb02", "ARM11 MPCore"),
    ("0xb36", "ARM1136"),
    ("0xb56", "ARM1156"),
    ("0xb76", "ARM1176"),
    ("0xc05", "Cortex-A5"),
    ("0xc07", "Cortex-A7"),
    ("0xc08", "Cortex-A8"),
    ("0xc09", "Cortex-A9"),
    ("0xc0d", "Cortex-A12"),
    ("0xc0e", "Cortex-A17"),
    ("0xc0f", "Cortex-A15"),
    ("0xd03", "Cortex-A53"),
    ("0xd04", "Cortex-A35"),
    ("0xd05", "Cortex-A55"),
    ("0xd07", "Cortex-A57"),
    ("0xd08", "Cortex-A72"),
    ("0xd09", "Cortex-A73"),
    ("0xd0a", "Cortex-A75"),
    ("0xd0b", "Cortex-A76"),
    ("0xd0c", "Neoverse-N1"),
    ("0xd0d", "Cortex-A77"),
    ("0xd41", "Cortex-A78"),
    ("0xd46", "Cortex-A510"),
    ("0xd47", "Cortex-A710"),
    ("0xd4d", "Cortex-A715"),
];

/// A name read from /sys or /proc as a line may show it: printable, at most 64 characters.
pub fn shown(text: &str) -> String {
    printable(&text.chars().take(64).collect::<String>())
}

/// The CPUs of a kernel CPU list (`0-3,6`), in order; None where it is no list or
/// names more than [`MOST_CPUS`]. Counted first, then made at its size: a list of many
/// parts never grows its vector past what it holds.
pub fn cpu_list(list: &str) -> Option<Vec<usize>> {
    let range = |part: &str| -> Option<(usize, usize)> {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        (a <= b).then_some((a, b))
    };
    let parts = || list.trim().split(',');
    let count = parts().try_fold(0usize, |n, part| {
        let (a, b) = range(part)?;
        n.checked_add((b - a).checked_add(1)?)
            .filter(|&n| n <= MOST_CPUS)
    })?;
    let mut cpus = Vec::with_capacity(count);
    for (a, b) in parts().filter_map(range) {
        cpus.extend(a..=b);
    }
    Some(cpus)
}

/// `0-3`, `4-7`, `0,2`: CPUs as the kernel lists them.
pub fn cpu_ranges(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(match j > i {
            true => format!("{}-{}", cpus[i], cpus[j]),
            false => cpus[i].to_string(),
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::temp::TempDir;

    /// A made-up board: `policies` as (policy, cpus, core part, capacity, max kHz).
    fn board(name: &str, policies: &[(usize, &str, &str, u64, u64)]) -> TempDir {
        let d = TempDir::new(name);
        let cpu = d.join("sys/devices/system/cpu");
        let mut cpuinfo = String::new();
        for &(policy, cpus, part, capacity, max) in policies {
            let p = cpu.join(format!("cpufreq/policy{policy}"));
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("related_cpus"), format!("{cpus}\n")).unwrap();
            std::fs::write(p.join("cpuinfo_min_freq"), "408000\n").unwrap();
            std::fs::write(p.join("cpuinfo_max_freq"), format!("{max}\n")).unwrap();
            std::fs::write(p.join("scaling_governor"), "schedutil\n").unwrap();
            for c in cpus.split_whitespace() {
                let dir = cpu.join(format!("cpu{c}"));
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("cpu_capacity"), format!("{capacity}\n")).unwrap();
                cpuinfo.push_str(&format!("processor\t: {c}\nCPU part\t: {part}\n\n"));
            }
        }
        std::fs::create_dir_all(d.join("proc")).unwrap();
        std::fs::write(d.join("proc/cpuinfo"), cpuinfo).unwrap();
        d
    }

    #[test]
    fn an_rk3588_is_three_clusters_and_big_is_both_a76_pairs() {
        let d = board(
            "rk3588",
            &[
                (0, "0 1 2 3", "0xd05", 530, 1_800_000),
                (4, "4 5", "0xd0b", 1024, 2_352_000),
                (6, "6 7", "0xd0b", 1024, 2_352_000),
            ],
        );
        let t = Topology::read(&d);
        let names: Vec<String> = t.clusters.iter().map(|c| c.describe()).collect();
        assert_eq!(
            names,
            [
                "4 × Cortex-A55 (cpu0-3, 408-1800 MHz)",
                "2 × Cortex-A76 (cpu4-5, 408-2352 MHz)",
                "2 × Cortex-A76 (cpu6-7, 408-2352 MHz)",
            ]
        );
        assert!(t.heterogeneous());
        let big = t.big().unwrap();
        assert_eq!(
            (big.policy, big.cpus.as_slice()),
            (Some(4), &[4, 5, 6, 7][..])
        );
        assert_eq!(big.describe(), "4 × Cortex-A76 (cpu4-7, 408-2352 MHz)");
        assert_eq!(t.pick(ClusterChoice::Little).unwrap().policy, Some(0));
        assert_eq!(t.pick(ClusterChoice::Policy(6)).unwrap().cpus, [6, 7]);
        let none = t.pick(ClusterChoice::Policy(2)).unwrap_err();
        assert_eq!(
            none,
            "this board has no policy2; its clusters are 0 (cpu0-3), 4 (cpu4-5), 6 (cpu6-7)"
        );
        assert_eq!(t.of_cpu(5).unwrap().policy, Some(4));
        assert_eq!(t.clusters[1].governor.as_deref(), Some("schedutil"));
    }

    #[test]
    fn a_pi_is_one_cluster_and_a_vm_its_online_cores() {
        let d = board("pi3", &[(0, "0 1 2 3", "0xd03", 1024, 1_200_000)]);
        let t = Topology::read(&d);
        assert_eq!(t.clusters.len(), 1);
        assert!(!t.heterogeneous());
        assert_eq!(t.big(), t.pick(ClusterChoice::Little).ok());

        let vm = TempDir::new("vm");
        std::fs::create_dir_all(vm.join("sys/devices/system/cpu")).unwrap();
        std::fs::write(vm.join("sys/devices/system/cpu/online"), "0-1\n").unwrap();
        std::fs::create_dir_all(vm.join("proc")).unwrap();
        let x86 =
            "processor\t: 0\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n";
        std::fs::write(vm.join("proc/cpuinfo"), x86).unwrap();
        let t = Topology::read(&vm);
        assert_eq!(t.clusters.len(), 1);
        assert_eq!(t.clusters[0].cpus, [0, 1]);
        assert_eq!(t.clusters[0].describe(), "2 × AMD EPYC (cpu0-1)");
        assert_eq!(
            t.pick(ClusterChoice::Policy(0)).unwrap_err(),
            "this machine has no cpufreq policies to choose from"
        );
    }

    #[test]
    fn every_raspberry_pi_core_has_its_name() {
        let cpuinfo = |model: &str, part: &str| {
            format!("processor\t: 0\nmodel name\t: {model}\nCPU part\t: {part}\n")
        };
        for (board, model, part, name) in [
            (
                "Zero, 1",
                "ARMv6-compatible processor rev 7 (v6l)",
                "0xb76",
                "ARM1176",
            ),
            ("2", "ARMv7 Processor rev 5 (v7l)", "0xc07", "Cortex-A7"),
            (
                "3, Zero 2",
                "ARMv7 Processor rev 4 (v7l)",
                "0xd03",
                "Cortex-A53",
            ),
            ("4", "ARMv7 Processor rev 3 (v7l)", "0xD08", "Cortex-A72"),
            ("5", "ARMv8 Processor rev 1", "0xd0b", "Cortex-A76"),
        ] {
            let got = cpu_model(&cpuinfo(model, part));
            assert_eq!(got.as_deref(), Some(name), "Pi {board}");
        }
        assert_eq!(
            cpu_model(&cpuinfo("x", "0xfff")).as_deref(),
            Some("ARM part 0xfff")
        );
        // One name a part, each part as cpuinfo writes it: 0x and three hex digits.
        for (i, (part, _)) in ARM_PARTS.iter().enumerate() {
            let digits = part.strip_prefix("0x").unwrap_or("");
            assert!(
                digits.len() == 3 && digits.chars().all(|c| c.is_ascii_hexdigit()),
                "{part}"
            );
            assert_eq!(digits, digits.to_ascii_lowercase(), "{part}");
            assert!(
                !ARM_PARTS[..i].iter().any(|(p, _)| p == part),
                "{part} twice"
            );
        }
    }

    #[test]
    fn cpu_lists_read_as_the_kernel_writes_them_and_within_bounds() {
        assert_eq!(cpu_list("0-3,6"), Some(vec![0, 1, 2, 3, 6]));
        assert_eq!(cpu_list("5"), Some(vec![5]));
        assert_eq!(cpu_list("3-1"), None);
        assert_eq!(cpu_list("0-4294967295"), None);
        assert_eq!(cpu_list("x"), None);
        assert_eq!(cpu_list("0-4095").map(|c| c.len()), Some(4096));
        assert_eq!(cpu_ranges(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(parse_cluster("big"), Ok(ClusterChoice::Big));
        assert_eq!(parse_cluster("4"), Ok(ClusterChoice::Policy(4)));
        assert!(parse_cluster("huge").unwrap_err().contains("big, little"));
    }
}
