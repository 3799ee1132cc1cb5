//! The throttling watch and the board's health around each benchmark, as sbc-bench
//! checks them: snapshots of the temperature, cpufreq's time_in_state and (on a
//! Raspberry Pi) `vcgencmd get_throttled` before and after, compared into a report of
//! whether it throttled, the clock it really ran at and the temperature before and after.
//! Every path is read under [`sysroot`], so tests can play a throttling board.

use super::env::max_temperature;
use super::sysfs::read_file;
use super::sysfs::{read, read_num, sysroot};
use super::validity::{sorted, Flag, VmCounts};
use std::path::Path;

/// What the throttling watch reads before and after each benchmark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub max_temp_c: Option<f64>,
    /// cpufreq time_in_state of the run's cluster: (kHz, time in 10 ms units).
    pub time_in_state: Vec<(u64, u64)>,
    /// `vcgencmd get_throttled` bits, on a Raspberry Pi.
    pub throttled_bits: Option<u32>,
    pub governor: Option<String>,
    /// The run's cluster's `cpuinfo_max_freq`, in kHz.
    pub max_freq_khz: Option<u64>,
    /// `vcgencmd measure_clock arm` in MHz, on a Raspberry Pi; read only where cpufreq
    /// keeps no time_in_state, which tells more.
    pub arm_clock_mhz: Option<f64>,
    /// /proc/vmstat's swap and OOM counters.
    pub vm: Option<VmCounts>,
    /// How many CPUs are online.
    pub online: Option<usize>,
    /// The Pi's `rpi_volt` hwmon under-voltage alarm (`in0_lcrit_alarm`), where the
    /// kernel has it.
    pub under_voltage_alarm: Option<bool>,
}

impl Snapshot {
    pub fn take() -> Snapshot {
        Snapshot::take_at(&sysroot())
    }

    pub fn take_at(root: &Path) -> Snapshot {
        let cpufreq = run_cpufreq(root);
        let at = |file: &str| format!("{cpufreq}/{file}");
        let mut snapshot = Snapshot {
            max_temp_c: max_temperature(root),
            time_in_state: read(root, &at("stats/time_in_state"))
                .map(|s| {
                    s.lines()
                        .filter_map(|l| {
                            let mut it = l.split_whitespace();
                            Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
                        })
                        .collect()
                })
                .unwrap_or_default(),
            throttled_bits: super::vcgencmd::throttled(),
            governor: read(root, &at("scaling_governor")),
            max_freq_khz: read_num(root, &at("cpuinfo_max_freq")),
            arm_clock_mhz: None,
            vm: read(root, "proc/vmstat").and_then(|v| VmCounts::parse(&v)),
            online: read(root, "sys/devices/system/cpu/online")
                .and_then(|l| super::topology::cpu_list(&l))
                .map(|cpus| cpus.len()),
            under_voltage_alarm: under_voltage_alarm(root),
        };
        if snapshot.time_in_state.is_empty() {
            snapshot.arm_clock_mhz = super::vcgencmd::arm_clock_mhz();
        }
        snapshot
    }
}

/// The cpufreq folder of the cluster this run is on: its first allowed CPU's (on a
/// big.LITTLE board pinned to its big cluster, not cpu0's little one), else cpu0's.
fn run_cpufreq(root: &Path) -> String {
    let cpu = super::pinning::allowed_cpus().first().copied().unwrap_or(0);
    let dir = format!("sys/devices/system/cpu/cpu{cpu}/cpufreq");
    match cpu != 0 && root.join(&dir).exists() {
        true => dir,
        false => "sys/devices/system/cpu/cpu0/cpufreq".into(),
    }
}

/// The `rpi_volt` hwmon device's `in0_lcrit_alarm` (1: the supply is below its limit
/// now); None where no hwmon is that device.
fn under_voltage_alarm(root: &Path) -> Option<bool> {
    let dir = std::fs::read_dir(root.join("sys/class/hwmon")).ok()?;
    dir.filter_map(|e| e.ok())
        .take(64)
        .map(|e| e.path())
        .find(|p| read_file(&p.join("name")).is_some_and(|n| n.trim() == "rpi_volt"))
        .and_then(|p| read_file(&p.join("in0_lcrit_alarm")))
        .map(|v| v.trim() == "1")
}

/// What happened to the machine's clocks and temperature during one benchmark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThrottleReport {
    /// Whether a flag of the clock or the supply is among `flags`.
    pub throttled: bool,
    /// Why each flag was raised, one reason a line.
    pub reasons: Vec<String>,
    /// What makes the figure not the board's own at its best, in order, each once.
    pub flags: Vec<Flag>,
    /// The monitor's readings taken while its forks ran (`--monitor`).
    pub readings: Vec<super::monitor::Reading>,
    /// The highest temperature seen before or after, in °C.
    pub max_temp_c: Option<f64>,
    /// The CPU clock during the benchmark and the temperature around it.
    pub health: Health,
}

/// Where [`Health::clock_mhz`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The time-weighted mean of the run's cluster's time_in_state over the benchmark.
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
        let total = deltas
            .iter()
            .try_fold(0u64, |sum, &(_, d)| sum.checked_add(d))?;
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
    /// One benchmark's report from its forks' (each between the snapshots around one
    /// fork): throttled where any fork was, every reason once, the hottest temperature,
    /// the clock as the mean of the forks' clocks, the temperature before the first fork
    /// and after the last.
    pub fn merge(forks: &[ThrottleReport]) -> ThrottleReport {
        let mut reasons: Vec<String> = Vec::new();
        for r in forks.iter().flat_map(|f| &f.reasons) {
            if !reasons.contains(r) {
                reasons.push(r.clone());
            }
        }
        let max = |v: &mut dyn Iterator<Item = f64>| v.reduce(f64::max);
        let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let health = |f: fn(&Health) -> Option<f64>| {
            forks
                .iter()
                .filter_map(|r| f(&r.health))
                .collect::<Vec<f64>>()
        };
        let flags = sorted(forks.iter().flat_map(|f| f.flags.iter().copied()));
        ThrottleReport {
            throttled: flags.iter().any(|f| f.is_throttling()),
            reasons,
            flags,
            readings: forks.iter().flat_map(|f| f.readings.clone()).collect(),
            max_temp_c: max(&mut forks.iter().filter_map(|f| f.max_temp_c)),
            health: Health {
                clock_mhz: mean(health(|h| h.clock_mhz)),
                clock_max_mhz: max(&mut health(|h| h.clock_max_mhz).into_iter()),
                below_max_percent: mean(health(|h| h.below_max_percent)),
                clock_source: forks.iter().find_map(|f| f.health.clock_source),
                temp_before_c: forks.first().and_then(|f| f.health.temp_before_c),
                temp_after_c: forks.last().and_then(|f| f.health.temp_after_c),
            },
        }
    }

    /// Compares the snapshots taken before and after a benchmark.
    pub fn between(before: &Snapshot, after: &Snapshot) -> ThrottleReport {
        let mut raised: Vec<(Flag, String)> = Vec::new();
        if let Some(bits) = after.throttled_bits {
            // Bits 0-3: under-voltage, frequency capped, throttled, soft temperature limit
            // now; bits 16-19: the same, has occurred since boot.
            const NAMES: [(&str, Flag); 4] = [
                ("under-voltage", Flag::UnderVoltage),
                ("ARM frequency capped", Flag::Throttled),
                ("throttled", Flag::Throttled),
                ("soft temperature limit", Flag::Throttled),
            ];
            let newly_sticky = (bits >> 16) & !(before.throttled_bits.unwrap_or(0) >> 16);
            for (i, (name, flag)) in NAMES.iter().enumerate() {
                if bits & (1 << i) != 0 || newly_sticky & (1 << i) != 0 {
                    raised.push((
                        *flag,
                        format!("vcgencmd get_throttled: {name} (0x{bits:x})"),
                    ));
                }
            }
        }
        if before.under_voltage_alarm == Some(true) || after.under_voltage_alarm == Some(true) {
            raised.push((
                Flag::UnderVoltage,
                "rpi_volt: under-voltage alarm (in0_lcrit_alarm)".into(),
            ));
        }
        let health = Health::between(before, after);
        if after.governor.as_deref() == Some("performance") {
            if let (Some(below), Some(max)) = (health.below_max_percent, health.clock_max_mhz) {
                if below > 1.0 {
                    raised.push((Flag::ClockBelowTarget, format!(
                        "cpufreq below its maximum {max:.0} MHz for {below:.0}% of the time under the performance governor",
                    )));
                }
            }
        }
        if let (Some(b), Some(a)) = (before.vm, after.vm) {
            raised.extend(VmCounts::flags_between(b, a));
        }
        if let (Some(b), Some(a)) = (before.online, after.online) {
            if a < b {
                raised.push((
                    Flag::CoreOffline,
                    format!("{} of {b} cores went offline", b - a),
                ));
            }
        }
        let mut report = ThrottleReport {
            max_temp_c: match (before.max_temp_c, after.max_temp_c) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
            health,
            ..ThrottleReport::default()
        };
        for (flag, reason) in raised {
            report.flag(flag, reason);
        }
        report
    }

    /// Raises `flag` for `reason` (said once).
    pub fn flag(&mut self, flag: Flag, reason: String) {
        self.flags = sorted(self.flags.iter().copied().chain([flag]));
        self.throttled = self.flags.iter().any(|f| f.is_throttling());
        if !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::env::tests::{fake_board, temp_dir};
    use crate::system::vcgencmd::parse_measure_clock;

    #[test]
    fn forks_merge_into_one_report_throttled_where_any_fork_was() {
        let fork = |reason: Option<&str>, temp: f64, clock: f64| ThrottleReport {
            throttled: reason.is_some(),
            reasons: reason.into_iter().map(String::from).collect(),
            flags: reason.iter().map(|_| Flag::Throttled).collect(),
            readings: vec![],
            max_temp_c: Some(temp),
            health: Health {
                clock_mhz: Some(clock),
                clock_max_mhz: Some(1500.0),
                temp_before_c: Some(temp - 1.0),
                temp_after_c: Some(temp),
                ..Health::default()
            },
        };
        let merged = ThrottleReport::merge(&[
            fork(None, 50.0, 1500.0),
            fork(Some("throttled"), 70.0, 1200.0),
            fork(Some("throttled"), 60.0, 1200.0),
        ]);
        assert!(merged.throttled);
        assert_eq!(merged.reasons, ["throttled"]);
        assert_eq!(merged.max_temp_c, Some(70.0));
        assert_eq!(merged.health.clock_mhz, Some(1300.0));
        assert_eq!(
            (merged.health.temp_before_c, merged.health.temp_after_c),
            (Some(49.0), Some(60.0))
        );
        assert_eq!(ThrottleReport::merge(&[]), ThrottleReport::default());
        let calm = ThrottleReport::merge(&[fork(None, 40.0, 1500.0)]);
        assert!(!calm.throttled && calm.reasons.is_empty());
    }

    #[test]
    fn missing_sysfs_is_no_state_and_no_throttling() {
        let d = temp_dir("empty-throttle");
        let snap = Snapshot::take_at(&d);
        assert!(snap.time_in_state.is_empty());
        assert!(!ThrottleReport::between(&snap, &snap).throttled);
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
    fn swap_oom_offline_cores_and_the_volt_alarm_flag_the_fork_they_happen_in() {
        let calm = Snapshot {
            vm: Some(VmCounts {
                swapped_in: 5,
                swapped_out: 5,
                oom_kills: 0,
            }),
            online: Some(4),
            under_voltage_alarm: Some(false),
            ..Snapshot::default()
        };
        assert_eq!(ThrottleReport::between(&calm, &calm).flags, []);
        let mut after = calm.clone();
        after.vm = Some(VmCounts {
            swapped_in: 9,
            swapped_out: 5,
            oom_kills: 1,
        });
        after.online = Some(3);
        after.under_voltage_alarm = Some(true);
        let r = ThrottleReport::between(&calm, &after);
        assert_eq!(
            r.flags,
            [
                Flag::UnderVoltage,
                Flag::Swapped,
                Flag::OomKill,
                Flag::CoreOffline
            ]
        );
        assert!(r.throttled, "under-voltage is the supply's throttling");
        assert_eq!(r.reasons.len(), 4, "{:?}", r.reasons);
        let merged = ThrottleReport::merge(&[ThrottleReport::between(&calm, &calm), r]);
        assert_eq!(merged.flags.len(), 4);
    }
}
