//! The monitor (`--monitor 1s`): a thread in the parent, never in a measured fork, that
//! reads the board's sensors every interval through the run, as sbc-bench's monitor
//! does: every thermal zone's temperature, each cluster's clock, a Pi's throttle bits,
//! swap in and out, and the memory available. Bounded: past [`MOST_READINGS`] every other
//! reading is dropped and the interval doubles, so a long run keeps its whole span.

use super::sysfs::read;
use super::topology::{current_mhz, Cluster};
use super::validity::VmCounts;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The most readings a run keeps.
pub const MOST_READINGS: usize = 4096;

/// What the sensors said at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// Since the monitor started.
    pub at: Duration,
    /// Each zone of [`Series::zones`], in °C.
    pub temps_c: Vec<Option<f64>>,
    /// Each cluster of [`Series::policies`], in MHz.
    pub clocks_mhz: Vec<Option<u64>>,
    /// `vcgencmd get_throttled`, on a Pi.
    pub throttled_bits: Option<u32>,
    pub vm: Option<VmCounts>,
    pub mem_available_kib: Option<u64>,
}

/// The readings of a run, with what their columns are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub interval: Duration,
    /// The thermal zones' types (`cpu-thermal`), in the readings' order.
    pub zones: Vec<String>,
    /// The clusters' policies, in the readings' order.
    pub policies: Vec<Option<usize>>,
    pub readings: Vec<Reading>,
}

impl Series {
    /// Adds `reading`; at [`MOST_READINGS`], every other one is dropped first and the
    /// interval doubles. Returns the interval to wait next.
    fn push(&mut self, reading: Reading) -> Duration {
        if self.readings.len() >= MOST_READINGS {
            let kept: Vec<Reading> = self.readings.iter().step_by(2).cloned().collect();
            self.readings = kept;
            self.interval = self.interval.saturating_mul(2);
        }
        self.readings.push(reading);
        self.interval
    }

    /// The readings taken within any of `spans` (since the monitor started).
    pub fn within(&self, spans: &[(Duration, Duration)]) -> Vec<Reading> {
        self.readings
            .iter()
            .filter(|r| spans.iter().any(|&(from, to)| r.at >= from && r.at <= to))
            .cloned()
            .collect()
    }
}

/// The running monitor; [`Monitor::stop`] ends it.
pub struct Monitor {
    started: Instant,
    series: Arc<Mutex<Series>>,
    stop: Option<Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Monitor {
    /// Starts reading every `interval` under `root`, `clusters`' clocks among the rest;
    /// None for an interval of zero (`--monitor 0`).
    pub fn start(
        root: PathBuf,
        interval: Duration,
        clusters: &[Cluster],
    ) -> crate::util::error::Result<Option<Monitor>> {
        if interval.is_zero() {
            return Ok(None);
        }
        let zones = zones(&root);
        let series = Arc::new(Mutex::new(Series {
            interval,
            zones: zones.iter().map(|(name, _)| name.clone()).collect(),
            policies: clusters.iter().map(|c| c.policy).collect(),
            readings: vec![],
        }));
        let (stop, stopped) = channel::<()>();
        let started = Instant::now();
        let clusters = clusters.to_vec();
        let shared = Arc::clone(&series);
        // vcgencmd is a process a reading: asked only where it answered once.
        let vcgencmd = super::vcgencmd::throttled().is_some();
        let thread = crate::util::thread::spawn("monitor", move || loop {
            let reading = Reading {
                at: started.elapsed(),
                temps_c: zones.iter().map(|(_, dir)| zone_temp(dir)).collect(),
                clocks_mhz: clusters.iter().map(|c| current_mhz(&root, c)).collect(),
                throttled_bits: vcgencmd.then(super::vcgencmd::throttled).flatten(),
                vm: read(&root, "proc/vmstat").and_then(|v| VmCounts::parse(&v)),
                mem_available_kib: read(&root, "proc/meminfo")
                    .and_then(|m| super::sysfs::meminfo_kib(&m, "MemAvailable")),
            };
            let wait = shared
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(reading);
            match stopped.recv_timeout(wait) {
                Err(RecvTimeoutError::Timeout) => continue,
                _ => break,
            }
        })?;
        Ok(Some(Monitor {
            started,
            series,
            stop: Some(stop),
            thread: Some(thread),
        }))
    }

    /// When the monitor started: the readings' zero.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The readings so far within `spans` (instants of this process).
    pub fn within(&self, spans: &[(Instant, Instant)]) -> Vec<Reading> {
        let since = |t: Instant| t.saturating_duration_since(self.started);
        let spans: Vec<(Duration, Duration)> =
            spans.iter().map(|&(a, b)| (since(a), since(b))).collect();
        self.series
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .within(&spans)
    }

    /// Ends the thread; the whole series.
    pub fn stop(mut self) -> Series {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        std::mem::take(&mut *self.series.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The most thermal zones the monitor reads.
const MOST_ZONES: usize = 64;

/// The thermal zones under `root`, at most [`MOST_ZONES`]: their type and folder, in
/// the folders' order. Where there are more, the CPU's and the SoC's are kept first:
/// which others read_dir happens to list first says nothing.
fn zones(root: &Path) -> Vec<(String, PathBuf)> {
    let mut zones: Vec<(String, PathBuf)> = std::fs::read_dir(root.join("sys/class/thermal"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .take(4096)
        .filter(|e| e.file_name().to_string_lossy().starts_with("thermal_zone"))
        .map(|e| {
            let dir = e.path();
            let name = super::sysfs::read_file(&dir.join("type"))
                .map(|t| crate::util::format::printable(t.trim()))
                .filter(|t| !t.is_empty() && t.len() <= 64)
                .unwrap_or_else(|| e.file_name().to_string_lossy().into_owned());
            (name, dir)
        })
        .collect();
    let other = |name: &str| {
        let name = name.to_ascii_lowercase();
        !(name.contains("cpu") || name.contains("soc"))
    };
    zones.sort_by(|a, b| (other(&a.0), &a.1).cmp(&(other(&b.0), &b.1)));
    zones.truncate(MOST_ZONES);
    zones.sort_by(|a, b| a.1.cmp(&b.1));
    zones
}

/// A zone's temperature in °C.
fn zone_temp(dir: &Path) -> Option<f64> {
    celsius(&read(dir, "temp")?)
}

/// A thermal zone's `temp` (signed millidegrees: below zero on a cold board) in °C;
/// None for anything else, and for a figure no sensor gives (below absolute zero, above
/// 1000 °C).
pub fn celsius(temp: &str) -> Option<f64> {
    let milli: i64 = temp.trim().parse().ok()?;
    Some(milli as f64 / 1000.0).filter(|c| (-273.15..=1000.0).contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_keeps_its_whole_span_within_its_bound() {
        let mut s = Series {
            interval: Duration::from_secs(1),
            ..Series::default()
        };
        for i in 0..(3 * MOST_READINGS as u64) {
            s.push(Reading {
                at: Duration::from_secs(i),
                ..Reading::default()
            });
        }
        assert!(s.readings.len() <= MOST_READINGS, "{}", s.readings.len());
        assert_eq!(s.readings[0].at, Duration::ZERO, "the start kept");
        assert!(s.readings.last().unwrap().at >= Duration::from_secs(3 * 4096 - 4));
        // Thinned four times: each pushed reading counts, however far apart they are.
        assert_eq!(s.interval, Duration::from_secs(16));
        let spans = [(Duration::from_secs(100), Duration::from_secs(120))];
        assert!(s
            .within(&spans)
            .iter()
            .all(|r| r.at >= spans[0].0 && r.at <= spans[0].1));
        assert!(!s.within(&spans).is_empty());
    }

    #[test]
    fn a_fake_board_is_read_every_interval_until_stopped() {
        let d = crate::util::temp::TempDir::new("monitor");
        let zone = d.path().join("sys/class/thermal/thermal_zone0");
        std::fs::create_dir_all(&zone).unwrap();
        std::fs::write(zone.join("type"), "cpu-thermal\n").unwrap();
        std::fs::write(zone.join("temp"), "45000\n").unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::write(d.path().join("proc/vmstat"), "pswpin 1\npswpout 2\n").unwrap();
        let m = Monitor::start(d.path().to_path_buf(), Duration::from_millis(10), &[])
            .unwrap()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        std::fs::write(zone.join("temp"), "80000\n").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let series = m.stop();
        assert_eq!(series.zones, ["cpu-thermal"]);
        let temps: Vec<Option<f64>> = series.readings.iter().map(|r| r.temps_c[0]).collect();
        assert!(
            temps.contains(&Some(45.0)) && temps.contains(&Some(80.0)),
            "{temps:?}"
        );
        assert_eq!(series.readings[0].vm.unwrap().swapped_out, 2);
        assert!(Monitor::start(d.path().to_path_buf(), Duration::ZERO, &[])
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_cold_zone_reads_below_zero() {
        let d = crate::util::temp::TempDir::new("monitor-cold");
        std::fs::write(d.path().join("temp"), "-5000\n").unwrap();
        assert_eq!(zone_temp(d.path()), Some(-5.0));
        assert_eq!(celsius("9223372036854775807"), None, "no sensor says so");
        assert_eq!(celsius("-300000"), None, "below absolute zero");
    }

    #[test]
    fn past_the_bound_the_cpu_and_soc_zones_are_kept() {
        let d = crate::util::temp::TempDir::new("monitor-zones");
        for n in 0..200 {
            let zone = d.path().join(format!("sys/class/thermal/thermal_zone{n}"));
            std::fs::create_dir_all(&zone).unwrap();
            let name = match n {
                100 => "cpu-thermal".to_string(),
                150 => "soc_thermal".to_string(),
                _ => format!("battery{n}"),
            };
            std::fs::write(zone.join("type"), name).unwrap();
        }
        let zones: Vec<String> = zones(d.path()).into_iter().map(|z| z.0).collect();
        assert_eq!(zones.len(), MOST_ZONES);
        assert!(zones.contains(&"cpu-thermal".to_string()), "{zones:?}");
        assert!(zones.contains(&"soc_thermal".to_string()), "{zones:?}");
    }
}
