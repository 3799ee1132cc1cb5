//! The environment a result was taken in (the machine, its CPU, board, kernel, governor,
//! clocks, temperature, load, and what other processes used just before the run), as
//! sbc-bench records it, read from /proc and /sys.
//! Anything missing (a VM, a container, a board without cpufreq) is simply absent, never
//! an error.
//!
//! Every path is read under a root directory, `/` normally, so tests can point the
//! harness at a made-up board with `BB_SYSROOT`.

use super::activity::{self, Background};
use super::sysfs::read_file;
use crate::util::format::printable;
use std::path::{Path, PathBuf};

/// Where /proc and /sys are read from; `BB_SYSROOT` overrides `/` for tests (set and
/// empty is unset, as the AWS variables are).
pub fn sysroot() -> PathBuf {
    std::env::var_os("BB_SYSROOT")
        .filter(|root| !root.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

pub(super) fn read(root: &Path, path: &str) -> Option<String> {
    let text = read_file(&root.join(path.trim_start_matches('/')))?;
    let text = text
        .trim_matches(|c: char| c.is_whitespace() || c == '\0')
        .to_string();
    (!text.is_empty()).then_some(text)
}

pub(super) fn read_num(root: &Path, path: &str) -> Option<u64> {
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
    /// Other processes' CPU over [`activity::WINDOW`] as the record was taken.
    pub background: Option<Background>,
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
            background: activity::measure(root, activity::WINDOW),
            boardbench_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// The CPU's name from /proc/cpuinfo: `model name` on x86, the core type from
/// `CPU part` on ARM (where `model name` only says "ARMv7 Processor rev 4").
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    let value = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key && !v.trim().is_empty()).then(|| printable(v.trim()))
        })
    };
    let arm_core = value("CPU part").map(|part| {
        let part = part.to_ascii_lowercase();
        match ARM_PARTS.iter().find(|(p, _)| *p == part) {
            Some((_, name)) => name.to_string(),
            None => format!("ARM part {part}"),
        }
    });
    arm_core
        .or_else(|| value("model name"))
        .or_else(|| value("Hardware"))
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

/// Counts CPUs in a kernel CPU list such as `0-3,6`.
pub fn count_cpu_list(list: &str) -> Option<usize> {
    let mut n: usize = 0;
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                // A range high to low, or past usize, is no list: none, never a wrap.
                let span = b
                    .trim()
                    .parse::<usize>()
                    .ok()?
                    .checked_sub(a.trim().parse().ok()?)?;
                n = n.checked_add(span)?.checked_add(1)?
            }
            None => {
                part.trim().parse::<usize>().ok()?;
                n = n.checked_add(1)?
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

    pub(crate) fn temp_dir(name: &str) -> PathBuf {
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
    fn missing_sysfs_is_absent_not_an_error() {
        let d = temp_dir("empty");
        let env = Environment::capture_at(&d);
        assert_eq!(env.governor, None);
        assert_eq!(env.temperature_c, None);
        assert!(env.cores_online >= 1);
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
}
