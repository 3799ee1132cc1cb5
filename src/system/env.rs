//! The environment a result was taken in (the machine, its CPU, board, kernel, governor,
//! clocks, temperature, load, and what other processes used just before the run), as
//! sbc-bench records it, read from /proc and /sys.
//! Anything missing (a VM, a container, a board without cpufreq) is simply absent, never
//! an error.
//!
//! Every path is read under a root directory, `/` normally, so tests can point the
//! harness at a made-up board with `BB_SYSROOT`.

use super::activity::{self, Background};
use super::sysfs::{meminfo_kib, read, read_file, sysroot};
use super::topology::{cpu_model, shown, Cluster, Topology};
use crate::util::format::printable;
use std::path::Path;

/// A description of the machine, taken once at start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    pub hostname: Option<String>,
    pub arch: String,
    pub cpu_model: Option<String>,
    pub cores_online: usize,
    pub board_model: Option<String>,
    pub kernel: Option<String>,
    pub governor: Option<String>,
    pub cur_freq_mhz: Option<u64>,
    pub max_freq_mhz: Option<u64>,
    pub temperature_c: Option<f64>,
    pub load_avg: Option<[f64; 3]>,
    /// Other processes' CPU over [`activity::WINDOW`] as the record was taken.
    pub background: Option<Background>,
    /// Every cluster (cpufreq policy), slowest first; the fields above that name one
    /// core type, governor or clock are the fastest cluster's.
    pub clusters: Vec<Cluster>,
    pub mem_total_kib: Option<u64>,
    pub swap_total_kib: Option<u64>,
    /// os-release's `PRETTY_NAME` (`Debian GNU/Linux 12 (bookworm)`).
    pub distribution: Option<String>,
    /// The kernel's page size in bytes (16384 on a Pi 5's 16K kernel).
    pub page_size: Option<u64>,
    /// The kernel's preemption model: `none or voluntary`, `full`, `dynamic`, `rt`, or
    /// `dynamic (full)` where debugfs says which.
    pub preemption: Option<String>,
    /// The cluster the run was pinned to (`--cluster`'s, or the big one by default on a
    /// big.LITTLE board), and whether the default chose it; set by the harness.
    pub run_cluster: Option<(Cluster, bool)>,
    /// What waiting for an idle board came to (`--idle-wait`); set by the harness.
    pub idle_wait: Option<activity::IdleWait>,
    /// `--governor`'s governor and what each policy had before (`policy0 ondemand`),
    /// set back after the run; set by the harness.
    pub governor_set: Option<(String, Vec<String>)>,
    /// The monitor's columns and interval (`--monitor`); each row carries its readings.
    pub monitor: Option<super::monitor::Series>,
    /// Each cluster's clock measured at the start and end of the run; set by the harness.
    pub clocks: Vec<super::clock::ClusterClock>,
    pub boardbench_version: String,
}

impl Environment {
    pub fn capture() -> Environment {
        Environment::capture_at(&sysroot())
    }

    pub fn capture_at(root: &Path) -> Environment {
        let uname = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            uname.as_ref().map(|u| f(u).to_string_lossy().into_owned())
        };
        let topology = Topology::read(root);
        let big = topology.big();
        let big = big.as_ref();
        let meminfo = read(root, "proc/meminfo").unwrap_or_default();
        let board = Board::at(root, &topology);
        Environment {
            hostname: board.hostname,
            arch: board.arch,
            cpu_model: board.cpu_model,
            cores_online: board.cores_online,
            board_model: board.model,
            kernel: field(|u| u.release()),
            governor: big.and_then(|c| c.governor.clone()),
            cur_freq_mhz: big.and_then(|c| c.cur_mhz),
            max_freq_mhz: big.and_then(|c| c.max_mhz),
            temperature_c: max_temperature(root),
            load_avg: read(root, "proc/loadavg").and_then(|s| {
                let v: Vec<f64> = s
                    .split_whitespace()
                    .take(3)
                    .filter_map(|x| x.parse().ok())
                    .collect();
                (v.len() == 3).then(|| [v[0], v[1], v[2]])
            }),
            background: activity::measure(root, activity::WINDOW),
            mem_total_kib: meminfo_kib(&meminfo, "MemTotal"),
            swap_total_kib: meminfo_kib(&meminfo, "SwapTotal"),
            distribution: read(root, "etc/os-release").and_then(|t| os_release_name(&t)),
            page_size: nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
                .ok()
                .flatten()
                .and_then(|p| u64::try_from(p).ok()),
            preemption: preemption(
                read(root, "proc/sys/kernel/version")
                    .or_else(|| field(|u| u.version()))
                    .as_deref(),
                read(root, "sys/kernel/debug/sched/preempt").as_deref(),
            ),
            clusters: topology.clusters,
            run_cluster: None,
            idle_wait: None,
            clocks: vec![],
            governor_set: None,
            monitor: None,
            boardbench_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// What tells one board from another: its name, model, cores and architecture.
struct Board {
    hostname: Option<String>,
    arch: String,
    cpu_model: Option<String>,
    cores_online: usize,
    model: Option<String>,
}

impl Board {
    fn at(root: &Path, topology: &Topology) -> Board {
        let uname = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            uname.as_ref().map(|u| f(u).to_string_lossy().into_owned())
        };
        Board {
            hostname: field(|u| u.nodename()),
            arch: field(|u| u.machine()).unwrap_or_else(|| std::env::consts::ARCH.to_string()),
            cpu_model: cpu_models(topology)
                .or_else(|| read(root, "proc/cpuinfo").and_then(|c| cpu_model(&c))),
            cores_online: read(root, "sys/devices/system/cpu/online")
                .and_then(|s| super::topology::cpu_list(&s))
                .map(|cpus| cpus.len())
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            model: read(root, "proc/device-tree/model").map(|m| shown(&m)),
        }
    }

    /// `pi4: Raspberry Pi 4 Model B Rev 1.4, 4 cores, aarch64`.
    fn identity(&self) -> String {
        format!(
            "{}: {}, {} cores, {}",
            self.hostname.as_deref().unwrap_or("?"),
            self.model
                .as_deref()
                .or(self.cpu_model.as_deref())
                .unwrap_or("?"),
            self.cores_online,
            self.arch
        )
    }
}

/// This board as a noise profile names it ([`crate::model::noise::NoiseProfile::board`]):
/// a profile measured on another board is not this one's.
pub fn board_identity() -> String {
    let root = sysroot();
    Board::at(&root, &Topology::read(&root)).identity()
}

/// The core types of every cluster, the fastest first: `Cortex-A76 + Cortex-A55` on a
/// big.LITTLE board, `Cortex-A72` on a Pi 4; None where no cluster's type is known.
fn cpu_models(topology: &Topology) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for cluster in topology.clusters.iter().rev() {
        if let Some(core) = cluster.core.as_deref().filter(|c| !names.contains(c)) {
            names.push(core);
        }
    }
    (!names.is_empty()).then(|| names.join(" + "))
}

/// os-release's `PRETTY_NAME`, else `NAME VERSION`, unquoted and printable.
fn os_release_name(text: &str) -> Option<String> {
    let value = |key: &str| {
        text.lines().find_map(|l| {
            let v = l.strip_prefix(key)?.strip_prefix('=')?.trim();
            let v = v.trim_matches('"').trim_matches('\'');
            (!v.is_empty()).then(|| printable(&v.chars().take(120).collect::<String>()))
        })
    };
    value("PRETTY_NAME").or_else(|| match (value("NAME"), value("VERSION")) {
        (Some(n), Some(v)) => Some(format!("{n} {v}")),
        (n, _) => n,
    })
}

/// The preemption model from the kernel's version string (`#1 SMP PREEMPT_DYNAMIC …`,
/// what `uname -v` prints) and, on a dynamic kernel, debugfs's `sched/preempt`
/// (`none voluntary (full)`), readable by root only.
fn preemption(version: Option<&str>, debugfs: Option<&str>) -> Option<String> {
    let words: Vec<&str> = version?.split_whitespace().collect();
    let chosen = debugfs.and_then(|d| {
        d.split_whitespace()
            .find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
    });
    Some(if words.contains(&"PREEMPT_RT") {
        "rt".into()
    } else if words.contains(&"PREEMPT_DYNAMIC") {
        match chosen {
            Some(mode) => format!("dynamic ({})", printable(mode)),
            None => "dynamic".into(),
        }
    } else if words.contains(&"PREEMPT") {
        "full".into()
    } else {
        "none or voluntary".into()
    })
}

/// The SoC temperature now, in °C: the hottest thermal zone under [`sysroot`].
pub fn soc_temperature() -> Option<f64> {
    max_temperature(&sysroot())
}

/// The highest temperature over all thermal zones, in °C.
pub(super) fn max_temperature(root: &Path) -> Option<f64> {
    let dir = std::fs::read_dir(root.join("sys/class/thermal")).ok()?;
    dir.filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("thermal_zone"))
        .filter_map(|e| read_file(&e.path().join("temp")))
        .filter_map(|t| t.trim().parse::<f64>().ok())
        .map(|milli| milli / 1000.0)
        .reduce(f64::max)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn fake_board(dir: &Path, governor: &str, states: &str, temp: &str) {
        let cpufreq = dir.join("sys/devices/system/cpu/cpu0/cpufreq");
        std::fs::create_dir_all(cpufreq.join("stats")).unwrap();
        std::fs::create_dir_all(dir.join("sys/class/thermal/thermal_zone0")).unwrap();
        std::fs::create_dir_all(dir.join("proc/device-tree")).unwrap();
        std::fs::write(cpufreq.join("scaling_governor"), governor).unwrap();
        std::fs::write(cpufreq.join("scaling_cur_freq"), "1500000\n").unwrap();
        std::fs::write(cpufreq.join("cpuinfo_max_freq"), "1800000\n").unwrap();
        std::fs::write(cpufreq.join("stats/time_in_state"), states).unwrap();
        std::fs::write(dir.join("sys/class/thermal/thermal_zone0/temp"), temp).unwrap();
        std::fs::write(
            dir.join("proc/device-tree/model"),
            "Raspberry Pi 4 Model B Rev 1.4\0",
        )
        .unwrap();
        std::fs::write(
            dir.join("proc/cpuinfo"),
            "processor\t: 0\nmodel name\t: ARMv7 Processor rev 3 (v7l)\nCPU part\t: 0xd08\n",
        )
        .unwrap();
        std::fs::write(dir.join("proc/loadavg"), "0.50 0.25 0.10 1/100 42\n").unwrap();
        std::fs::create_dir_all(dir.join("sys/devices/system/cpu")).unwrap();
        std::fs::write(dir.join("sys/devices/system/cpu/online"), "0-3\n").unwrap();
    }

    pub(crate) fn temp_dir(name: &str) -> crate::util::temp::TempDir {
        crate::util::temp::TempDir::new(&format!("env-{name}"))
    }

    #[test]
    fn reads_a_raspberry_pi() {
        let d = temp_dir("pi");
        fake_board(&d, "ondemand\n", "600000 100\n1800000 50\n", "61234\n");
        let env = Environment::capture_at(&d);
        assert_eq!(
            env.board_model.as_deref(),
            Some("Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(env.cpu_model.as_deref(), Some("Cortex-A72"));
        assert_eq!(env.cores_online, 4);
        assert_eq!(env.governor.as_deref(), Some("ondemand"));
        assert_eq!(
            (env.cur_freq_mhz, env.max_freq_mhz),
            (Some(1500), Some(1800))
        );
        assert_eq!(env.temperature_c, Some(61.234));
        assert_eq!(env.load_avg, Some([0.5, 0.25, 0.1]));
    }

    #[test]
    fn missing_sysfs_is_absent_not_an_error() {
        let d = temp_dir("empty");
        let env = Environment::capture_at(&d);
        assert_eq!(env.governor, None);
        assert_eq!(env.temperature_c, None);
        assert!(env.cores_online >= 1);
    }

    #[test]
    fn temperature_is_the_hottest_readable_zone() {
        let d = temp_dir("temp");
        let zone = |n: u32, temp: &str| {
            let z = d.join(format!("sys/class/thermal/thermal_zone{n}"));
            std::fs::create_dir_all(&z).unwrap();
            std::fs::write(z.join("temp"), temp).unwrap();
        };
        zone(0, "61234\n");
        zone(1, "garbage\n");
        zone(2, "");
        std::fs::create_dir_all(d.join("sys/class/thermal/cooling_device0")).unwrap();
        assert_eq!(max_temperature(&d), Some(61.234));
        zone(0, "-");
        assert_eq!(max_temperature(&d), None, "no readable zone: unknown");
    }

    #[test]
    fn the_record_has_memory_distribution_and_preemption() {
        let meminfo =
            "MemTotal:        3884096 kB\nMemFree:  100 kB\nSwapTotal:        102396 kB\n";
        assert_eq!(meminfo_kib(meminfo, "MemTotal"), Some(3_884_096));
        assert_eq!(meminfo_kib(meminfo, "SwapTotal"), Some(102_396));
        assert_eq!(meminfo_kib(meminfo, "Swap"), None);
        let os = "NAME=\"Debian GNU/Linux\"\nVERSION=\"12 (bookworm)\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            os_release_name(os).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            os_release_name("NAME=Armbian\nVERSION=24.5\n").as_deref(),
            Some("Armbian 24.5")
        );
        assert_eq!(
            os_release_name("PRETTY_NAME=\"x\u{1b}[2Jy\"\n").as_deref(),
            Some("x\\u{1b}[2Jy"),
            "escaped"
        );
        let p = |v: &str, d: Option<&str>| preemption(Some(v), d);
        assert_eq!(
            p("#1 SMP PREEMPT Debian 1:6.6.51-1+rpt3", None).as_deref(),
            Some("full")
        );
        assert_eq!(
            p("#1 SMP PREEMPT_DYNAMIC Debian 6.1", None).as_deref(),
            Some("dynamic")
        );
        assert_eq!(
            p("#1 SMP PREEMPT_DYNAMIC", Some("none voluntary (full) lazy")).as_deref(),
            Some("dynamic (full)")
        );
        assert_eq!(p("#1 SMP PREEMPT_RT", None).as_deref(), Some("rt"));
        assert_eq!(
            p("#1 SMP Tue Jan 2", None).as_deref(),
            Some("none or voluntary")
        );
        assert_eq!(preemption(None, None), None);
    }
}
