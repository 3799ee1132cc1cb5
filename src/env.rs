//! The environment a result was taken in, and the throttling watch and health (CPU
//! clock, SoC temperature) around each benchmark: what sbc-bench checks, read from /proc
//! and /sys. Anything missing (a VM, a
//! container, a board without cpufreq) is simply absent, never an error.
//!
//! Every path is read under a root directory, `/` normally, so tests can point the
//! harness at a made-up board with `BB_SYSROOT`.

use std::path::{Path, PathBuf};

/// Where /proc and /sys are read from; `BB_SYSROOT` overrides `/` for tests.
pub fn sysroot() -> PathBuf {
    std::env::var_os("BB_SYSROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn read(root: &Path, path: &str) -> Option<String> {
    let text = std::fs::read_to_string(root.join(path.trim_start_matches('/'))).ok()?;
    let text = text
        .trim_matches(|c: char| c.is_whitespace() || c == '\0')
        .to_string();
    (!text.is_empty()).then_some(text)
}

fn read_num(root: &Path, path: &str) -> Option<u64> {
    read(root, path)?.parse().ok()
}

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
        Environment {
            hostname: field(|u| u.nodename()),
            arch: field(|u| u.machine()).unwrap_or_else(|| std::env::consts::ARCH.to_string()),
            cpu_model: read(root, "proc/cpuinfo").and_then(|c| cpu_model(&c)),
            cores_online: read(root, "sys/devices/system/cpu/online")
                .and_then(|s| count_cpu_list(&s))
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            board_model: read(root, "proc/device-tree/model"),
            kernel: field(|u| u.release()),
            governor: read(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            cur_freq_mhz: read_num(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
                .map(|k| k / 1000),
            max_freq_mhz: read_num(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
                .map(|k| k / 1000),
            temperature_c: max_temperature(root),
            load_avg: read(root, "proc/loadavg").and_then(|s| {
                let v: Vec<f64> = s
                    .split_whitespace()
                    .take(3)
                    .filter_map(|x| x.parse().ok())
                    .collect();
                (v.len() == 3).then(|| [v[0], v[1], v[2]])
            }),
            boardbench_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// The CPU's name from /proc/cpuinfo: `model name` on x86, the core type from
/// `CPU part` on ARM (where `model name` only says "ARMv7 Processor rev 4").
fn cpu_model(cpuinfo: &str) -> Option<String> {
    let value = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let arm_core = value("CPU part").map(|part| {
        let name = match part.to_ascii_lowercase().as_str() {
            "0xc07" => "Cortex-A7",
            "0xc08" => "Cortex-A8",
            "0xc09" => "Cortex-A9",
            "0xc0f" => "Cortex-A15",
            "0xd03" => "Cortex-A53",
            "0xd04" => "Cortex-A35",
            "0xd05" => "Cortex-A55",
            "0xd07" => "Cortex-A57",
            "0xd08" => "Cortex-A72",
            "0xd09" => "Cortex-A73",
            "0xd0a" => "Cortex-A75",
            "0xd0b" => "Cortex-A76",
            "0xd0d" => "Cortex-A77",
            "0xd41" => "Cortex-A78",
            "0xd46" => "Cortex-A510",
            "0xd47" => "Cortex-A710",
            "0xd4d" => "Cortex-A715",
            "0xd0c" => "Neoverse-N1",
            _ => return format!("ARM part {part}"),
        };
        name.to_string()
    });
    arm_core
        .or_else(|| value("model name"))
        .or_else(|| value("Hardware"))
}

/// Counts CPUs in a kernel CPU list such as `0-3,6`.
fn count_cpu_list(list: &str) -> Option<usize> {
    let mut n = 0;
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                n += b.trim().parse::<usize>().ok()? - a.trim().parse::<usize>().ok()? + 1
            }
            None => {
                part.trim().parse::<usize>().ok()?;
                n += 1
            }
        }
    }
    Some(n)
}

/// The SoC temperature now, in °C: the hottest thermal zone under [`sysroot`].
pub fn soc_temperature() -> Option<f64> {
    max_temperature(&sysroot())
}

/// The highest temperature over all thermal zones, in °C.
fn max_temperature(root: &Path) -> Option<f64> {
    let dir = std::fs::read_dir(root.join("sys/class/thermal")).ok()?;
    dir.filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("thermal_zone"))
        .filter_map(|e| std::fs::read_to_string(e.path().join("temp")).ok())
        .filter_map(|t| t.trim().parse::<f64>().ok())
        .map(|milli| milli / 1000.0)
        .reduce(f64::max)
}

/// What the throttling watch reads before and after each benchmark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub max_temp_c: Option<f64>,
    /// cpufreq time_in_state of cpu0: (kHz, time in 10 ms units).
    pub time_in_state: Vec<(u64, u64)>,
    /// `vcgencmd get_throttled` bits, on a Raspberry Pi.
    pub throttled_bits: Option<u32>,
    pub governor: Option<String>,
    /// cpu0's `cpuinfo_max_freq`, in kHz.
    pub max_freq_khz: Option<u64>,
    /// `vcgencmd measure_clock arm` in MHz, on a Raspberry Pi; read only where cpufreq
    /// keeps no time_in_state, which tells more.
    pub arm_clock_mhz: Option<f64>,
}

impl Snapshot {
    pub fn take() -> Snapshot {
        Snapshot::take_at(&sysroot())
    }

    pub fn take_at(root: &Path) -> Snapshot {
        let mut snapshot = Snapshot {
            max_temp_c: max_temperature(root),
            time_in_state: read(
                root,
                "sys/devices/system/cpu/cpu0/cpufreq/stats/time_in_state",
            )
            .map(|s| {
                s.lines()
                    .filter_map(|l| {
                        let mut it = l.split_whitespace();
                        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default(),
            throttled_bits: vcgencmd_throttled(),
            governor: read(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            max_freq_khz: read_num(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"),
            arm_clock_mhz: None,
        };
        if snapshot.time_in_state.is_empty() {
            snapshot.arm_clock_mhz = vcgencmd(&["measure_clock", "arm"])
                .as_deref()
                .and_then(parse_measure_clock);
        }
        snapshot
    }
}

/// Runs `vcgencmd` with `args` when it exists: its output, or None when it does not
/// exist or fails. Killed and reaped if a signal ends the run meanwhile, as every child is.
fn vcgencmd(args: &[&str]) -> Option<String> {
    let mut command = std::process::Command::new("vcgencmd");
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let (child, hook) =
        crate::exit::spawn_with_exit_hook(&mut command, crate::exit::Ending::Kill).ok()?;
    let out = child.wait_with_output();
    crate::exit::remove_exit_hook(hook);
    let out = out.ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `vcgencmd measure_clock arm`'s answer, `frequency(48)=1500345728` (Hz), in MHz.
fn parse_measure_clock(text: &str) -> Option<f64> {
    let (key, hz) = text.trim().split_once('=')?;
    let hz: f64 = hz.trim().parse().ok()?;
    (key.starts_with("frequency(") && hz > 0.0).then_some(hz / 1e6)
}

/// `vcgencmd get_throttled`'s bits; None without vcgencmd.
fn vcgencmd_throttled() -> Option<u32> {
    let text = vcgencmd(&["get_throttled"])?;
    let hex = text
        .trim()
        .strip_prefix("throttled=")?
        .trim_start_matches("0x");
    u32::from_str_radix(hex, 16).ok()
}

/// What happened to the machine's clocks and temperature during one benchmark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThrottleReport {
    pub throttled: bool,
    /// Why it counts as throttled, one reason a line.
    pub reasons: Vec<String>,
    /// The highest temperature seen before or after, in °C.
    pub max_temp_c: Option<f64>,
    /// The CPU clock during the benchmark and the temperature around it.
    pub health: Health,
}

/// Where [`Health::clock_mhz`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The time-weighted mean of cpu0's cpufreq time_in_state over the benchmark.
    TimeInState,
    /// `vcgencmd measure_clock arm`, read as the benchmark ended (a Pi without cpufreq
    /// statistics): one reading, not a mean.
    Vcgencmd,
}

impl ClockSource {
    pub fn name(self) -> &'static str {
        match self {
            ClockSource::TimeInState => "time_in_state",
            ClockSource::Vcgencmd => "vcgencmd",
        }
    }
}

/// The board's health around one benchmark, as sbc-bench reports it: the CPU clock it
/// really ran at, and the SoC temperature (the hottest thermal zone) before and after.
/// Every field is None where the board does not tell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Health {
    /// The CPU clock during the benchmark, in MHz (see [`ClockSource`]).
    pub clock_mhz: Option<f64>,
    /// The highest clock cpufreq offers, in MHz.
    pub clock_max_mhz: Option<f64>,
    /// The share of the benchmark's time spent below `clock_max_mhz`, in percent
    /// (from time_in_state only).
    pub below_max_percent: Option<f64>,
    pub clock_source: Option<ClockSource>,
    pub temp_before_c: Option<f64>,
    pub temp_after_c: Option<f64>,
}

impl Health {
    /// The health between the snapshots taken before and after a benchmark.
    pub fn between(before: &Snapshot, after: &Snapshot) -> Health {
        let table_max = after.time_in_state.iter().map(|&(f, _)| f).max();
        let mut health = Health {
            clock_max_mhz: table_max.or(after.max_freq_khz).map(|k| k as f64 / 1000.0),
            temp_before_c: before.max_temp_c,
            temp_after_c: after.max_temp_c,
            ..Health::default()
        };
        if let Some(clock) =
            ClockStats::from_time_in_state(&before.time_in_state, &after.time_in_state)
        {
            health.clock_mhz = Some(clock.mean_mhz);
            health.below_max_percent = Some(clock.below_max_percent);
            health.clock_source = Some(ClockSource::TimeInState);
        } else if let Some(mhz) = after.arm_clock_mhz {
            health.clock_mhz = Some(mhz);
            health.clock_source = Some(ClockSource::Vcgencmd);
        }
        health
    }
}

/// The clock over an interval, from two readings of cpufreq's time_in_state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockStats {
    /// The time-weighted mean clock, in MHz.
    pub mean_mhz: f64,
    /// The share of the time below the highest frequency in the table, in percent.
    pub below_max_percent: f64,
}

impl ClockStats {
    /// From time_in_state `(kHz, time)` rows read before and after; None when no time
    /// passed between them (the kernel counts in 10 ms units) or the table is empty.
    pub fn from_time_in_state(before: &[(u64, u64)], after: &[(u64, u64)]) -> Option<ClockStats> {
        let max = after.iter().map(|&(f, _)| f).max()?;
        let deltas: Vec<(u64, u64)> = after
            .iter()
            .map(|&(f, t)| {
                let was = before.iter().find(|(g, _)| *g == f).map_or(0, |&(_, t)| t);
                (f, t.saturating_sub(was))
            })
            .collect();
        let total: u64 = deltas.iter().map(|&(_, d)| d).sum();
        if total == 0 {
            return None;
        }
        let weighted: f64 = deltas.iter().map(|&(f, d)| f as f64 * d as f64).sum();
        let below: u64 = deltas
            .iter()
            .filter(|&&(f, _)| f < max)
            .map(|&(_, d)| d)
            .sum();
        Some(ClockStats {
            mean_mhz: weighted / total as f64 / 1000.0,
            below_max_percent: 100.0 * below as f64 / total as f64,
        })
    }
}

impl ThrottleReport {
    /// Compares the snapshots taken before and after a benchmark.
    pub fn between(before: &Snapshot, after: &Snapshot) -> ThrottleReport {
        let mut reasons = Vec::new();
        if let Some(bits) = after.throttled_bits {
            // Bits 0-3: under-voltage, frequency capped, throttled, soft temperature limit
            // now; bits 16-19: the same, has occurred since boot.
            const NAMES: [&str; 4] = [
                "under-voltage",
                "ARM frequency capped",
                "throttled",
                "soft temperature limit",
            ];
            let newly_sticky = (bits >> 16) & !(before.throttled_bits.unwrap_or(0) >> 16);
            for (i, name) in NAMES.iter().enumerate() {
                if bits & (1 << i) != 0 || newly_sticky & (1 << i) != 0 {
                    reasons.push(format!("vcgencmd get_throttled: {name} (0x{bits:x})"));
                }
            }
        }
        let health = Health::between(before, after);
        if after.governor.as_deref() == Some("performance") {
            if let (Some(below), Some(max)) = (health.below_max_percent, health.clock_max_mhz) {
                if below > 1.0 {
                    reasons.push(format!(
                        "cpufreq below its maximum {max:.0} MHz for {below:.0}% of the time under the performance governor",
                    ));
                }
            }
        }
        ThrottleReport {
            throttled: !reasons.is_empty(),
            reasons,
            max_temp_c: match (before.max_temp_c, after.max_temp_c) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
            health,
        }
    }

    /// Combines the reports of several forks of one benchmark.
    pub fn merge(&mut self, other: &ThrottleReport) {
        self.throttled |= other.throttled;
        for r in &other.reasons {
            if !self.reasons.contains(r) {
                self.reasons.push(r.clone());
            }
        }
        self.max_temp_c = match (self.max_temp_c, other.max_temp_c) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.health.merge(&other.health);
    }
}

impl Health {
    /// Combines the health of several forks, `self` the earlier: its temperature before,
    /// the later one's after, the lower clock and the larger share below the maximum.
    pub fn merge(&mut self, later: &Health) {
        let pick = |a: Option<f64>, b: Option<f64>, f: fn(f64, f64) -> f64| match (a, b) {
            (Some(a), Some(b)) => Some(f(a, b)),
            (a, b) => a.or(b),
        };
        if later.clock_mhz.is_some()
            && (self.clock_mhz.is_none() || later.clock_mhz < self.clock_mhz)
        {
            self.clock_source = later.clock_source;
        }
        self.clock_mhz = pick(self.clock_mhz, later.clock_mhz, f64::min);
        self.clock_max_mhz = pick(self.clock_max_mhz, later.clock_max_mhz, f64::max);
        self.below_max_percent = pick(self.below_max_percent, later.below_max_percent, f64::max);
        self.temp_before_c = self.temp_before_c.or(later.temp_before_c);
        self.temp_after_c = later.temp_after_c.or(self.temp_after_c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_board(dir: &Path, governor: &str, states: &str, temp: &str) {
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

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("bb-env-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
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
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn missing_sysfs_is_absent_not_an_error() {
        let d = temp_dir("empty");
        let env = Environment::capture_at(&d);
        assert_eq!(env.governor, None);
        assert_eq!(env.temperature_c, None);
        assert!(env.cores_online >= 1);
        let snap = Snapshot::take_at(&d);
        assert!(snap.time_in_state.is_empty());
        assert!(!ThrottleReport::between(&snap, &snap).throttled);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn time_below_max_under_performance_governor_is_throttling() {
        let before = Snapshot {
            governor: Some("performance".into()),
            time_in_state: vec![(600_000, 10), (1_800_000, 1000)],
            ..Default::default()
        };
        let mut after = before.clone();
        after.time_in_state = vec![(600_000, 60), (1_800_000, 1100)];
        let report = ThrottleReport::between(&before, &after);
        assert!(report.throttled);
        assert!(report.reasons[0].contains("33%"), "{:?}", report.reasons);
        // Only at maximum: not throttled.
        after.time_in_state = vec![(600_000, 10), (1_800_000, 1500)];
        assert!(!ThrottleReport::between(&before, &after).throttled);
        // Under ondemand, lower clocks are the governor's choice, not throttling.
        after.time_in_state = vec![(600_000, 60), (1_800_000, 1100)];
        after.governor = Some("ondemand".into());
        assert!(!ThrottleReport::between(&before, &after).throttled);
    }

    #[test]
    fn vcgencmd_bits_flag_current_and_new_sticky_throttling() {
        let before = Snapshot {
            throttled_bits: Some(0x50000),
            ..Default::default()
        };
        let same = before.clone();
        assert!(
            !ThrottleReport::between(&before, &same).throttled,
            "old sticky bits are not news"
        );
        let after = Snapshot {
            throttled_bits: Some(0x50004),
            ..Default::default()
        };
        let r = ThrottleReport::between(&before, &after);
        assert!(r.throttled);
        assert!(r.reasons.iter().any(|x| x.contains("throttled")));
        let after = Snapshot {
            throttled_bits: Some(0xd0000),
            ..Default::default()
        };
        assert!(ThrottleReport::between(&before, &after).reasons[0].contains("soft temperature"));
    }

    #[test]
    fn clock_is_the_time_weighted_mean_of_time_in_state_deltas() {
        let before = [(600_000, 100), (1_200_000, 50), (1_500_000, 1000)];
        let after = [(600_000, 110), (1_200_000, 50), (1_500_000, 1030)];
        let c = ClockStats::from_time_in_state(&before, &after).unwrap();
        // 100 ms at 600 MHz and 300 ms at 1500 MHz.
        assert!((c.mean_mhz - 1275.0).abs() < 1e-9, "{c:?}");
        assert!((c.below_max_percent - 25.0).abs() < 1e-9, "{c:?}");
        // All of it at the maximum.
        let after = [(600_000, 100), (1_200_000, 50), (1_500_000, 1200)];
        let c = ClockStats::from_time_in_state(&before, &after).unwrap();
        assert_eq!((c.mean_mhz, c.below_max_percent), (1500.0, 0.0));
        // A state missing before counts from zero; a counter that went back counts none.
        let after = [
            (600_000, 90),
            (1_200_000, 50),
            (1_500_000, 1000),
            (1_800_000, 10),
        ];
        let c = ClockStats::from_time_in_state(&before, &after).unwrap();
        assert_eq!((c.mean_mhz, c.below_max_percent), (1800.0, 0.0));
        // No time passed, or no table: unknown, not zero.
        assert_eq!(ClockStats::from_time_in_state(&before, &before), None);
        assert_eq!(ClockStats::from_time_in_state(&[], &[]), None);
    }

    #[test]
    fn health_from_a_fake_board_before_and_after() {
        let d = temp_dir("health");
        fake_board(&d, "performance\n", "600000 100\n1500000 1000\n", "52500\n");
        std::fs::create_dir_all(d.join("sys/class/thermal/thermal_zone1")).unwrap();
        std::fs::write(d.join("sys/class/thermal/thermal_zone1/temp"), "48000\n").unwrap();
        let before = Snapshot::take_at(&d);
        assert_eq!(before.max_temp_c, Some(52.5), "the hottest zone");
        let states = d.join("sys/devices/system/cpu/cpu0/cpufreq/stats/time_in_state");
        std::fs::write(states, "600000 110\n1500000 1030\n").unwrap();
        std::fs::write(d.join("sys/class/thermal/thermal_zone1/temp"), "55250\n").unwrap();
        let after = Snapshot::take_at(&d);
        let report = ThrottleReport::between(&before, &after);
        let h = &report.health;
        assert_eq!((h.temp_before_c, h.temp_after_c), (Some(52.5), Some(55.25)));
        assert_eq!(h.clock_mhz, Some(1275.0));
        assert_eq!(h.clock_max_mhz, Some(1500.0));
        assert_eq!(h.below_max_percent, Some(25.0));
        assert_eq!(h.clock_source, Some(ClockSource::TimeInState));
        assert!(
            report.reasons[0].contains("1500 MHz for 25%"),
            "{:?}",
            report.reasons
        );
        // A static table (no time passed) leaves the clock unknown, the maximum known.
        let h = Health::between(&after, &after);
        assert_eq!((h.clock_mhz, h.clock_source), (None, None));
        assert_eq!(h.clock_max_mhz, Some(1500.0));
        std::fs::remove_dir_all(&d).unwrap();
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
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn vcgencmd_clock_is_the_fallback_without_time_in_state() {
        assert_eq!(
            parse_measure_clock("frequency(48)=1500345728\n"),
            Some(1500.345728)
        );
        assert_eq!(parse_measure_clock("frequency(48)=0"), None);
        assert_eq!(parse_measure_clock("throttled=0x50004"), None);
        assert_eq!(parse_measure_clock(""), None);
        let before = Snapshot {
            max_temp_c: Some(50.0),
            max_freq_khz: Some(1_500_000),
            arm_clock_mhz: Some(1500.0),
            ..Default::default()
        };
        let after = Snapshot {
            max_temp_c: Some(58.5),
            arm_clock_mhz: Some(1200.0),
            ..before.clone()
        };
        let h = Health::between(&before, &after);
        assert_eq!(h.clock_mhz, Some(1200.0), "read as the benchmark ended");
        assert_eq!(h.clock_source, Some(ClockSource::Vcgencmd));
        assert_eq!((h.clock_max_mhz, h.below_max_percent), (Some(1500.0), None));
        assert_eq!((h.temp_before_c, h.temp_after_c), (Some(50.0), Some(58.5)));
    }

    #[test]
    fn merged_health_spans_the_forks_and_keeps_the_worst_clock() {
        let mut first = ThrottleReport {
            health: Health {
                clock_mhz: Some(1500.0),
                clock_max_mhz: Some(1500.0),
                below_max_percent: Some(0.0),
                clock_source: Some(ClockSource::TimeInState),
                temp_before_c: Some(50.0),
                temp_after_c: Some(55.0),
            },
            ..Default::default()
        };
        let second = ThrottleReport {
            health: Health {
                clock_mhz: Some(1200.0),
                below_max_percent: Some(40.0),
                temp_before_c: Some(54.0),
                temp_after_c: Some(60.0),
                ..first.health.clone()
            },
            ..Default::default()
        };
        first.merge(&second);
        let h = &first.health;
        assert_eq!((h.temp_before_c, h.temp_after_c), (Some(50.0), Some(60.0)));
        assert_eq!(
            (h.clock_mhz, h.below_max_percent),
            (Some(1200.0), Some(40.0))
        );
    }
}
