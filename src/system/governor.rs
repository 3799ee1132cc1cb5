//! `--governor`: every cpufreq policy set to one governor (`performance`) for the run and
//! set back to what it was on every way out: the run's end, a failed run (the guard's
//! drop), and a signal or timeout (an exit hook). Where boardbench may not write the
//! policies (not root), nothing is changed and the caller says so once.

use super::exit::{add_exit_hook, remove_exit_hook};
use super::sysfs::read;
use crate::util::format::printable;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The governors set for a run, to be set back; dropping it sets them back.
#[derive(Debug)]
pub struct GovernorSet {
    saved: Arc<Mutex<Saved>>,
    hook: Option<u64>,
}

/// What was written so far, shared with the exit hook: each policy's name and the
/// governor it had. A write and its record are made under the lock, and once set back
/// (`done`) nothing more is written, so a signal mid-way leaves nothing at `performance`.
#[derive(Debug)]
struct Saved {
    /// `…/sys/devices/system/cpu`, under the sysroot.
    cpu: PathBuf,
    policies: Vec<(String, String)>,
    done: bool,
}

impl GovernorSet {
    /// What each policy was set back to on the way out: `policy0 ondemand`.
    pub fn before(&self) -> Vec<String> {
        let saved = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        saved
            .policies
            .iter()
            .map(|(policy, g)| format!("{policy} {g}"))
            .collect()
    }
}

impl Drop for GovernorSet {
    fn drop(&mut self) {
        restore(&self.saved);
        if let Some(hook) = self.hook.take() {
            remove_exit_hook(hook);
        }
    }
}

/// `--governor`'s value: a governor's name as the kernel spells them.
pub fn parse_governor(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 32
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit());
    match ok {
        true => Ok(s.to_string()),
        false => Err(format!(
            "invalid governor '{}' (expected a cpufreq governor's name, such as performance)",
            crate::util::format::printable(s)
        )),
    }
}

/// Why a governor could not be set: a phrase, and whether it was for want of permission
/// (where root could).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub why: String,
    pub permission: bool,
}

/// Sets every policy under `root` to `governor`: the set to undo, or why not (a policy
/// that does not offer it, a file boardbench may not write: those written are set back
/// first). No policies: nothing to set, an empty set. Every policy is checked before
/// the first write, and the exit hook that sets them back is registered before it too.
pub fn set(root: &Path, governor: &str) -> Result<GovernorSet, Refusal> {
    let cpu = root.join("sys/devices/system/cpu");
    let mut names: Vec<String> = std::fs::read_dir(cpu.join("cpufreq"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("policy"))
        .take(4096)
        .collect();
    names.sort();
    let mut to_set: Vec<(String, String)> = Vec::new();
    for policy in names {
        let rel = |name: &str| format!("sys/devices/system/cpu/cpufreq/{policy}/{name}");
        let Some(was) = read(root, &rel("scaling_governor")) else {
            continue;
        };
        let offered = read(root, &rel("scaling_available_governors"));
        if offered
            .as_deref()
            .is_some_and(|o| !o.split_whitespace().any(|g| g == governor))
        {
            return Err(Refusal {
                why: format!(
                    "{} does not offer it ({})",
                    printable(&policy),
                    printable(&offered.unwrap_or_default())
                ),
                permission: false,
            });
        }
        if was != governor {
            to_set.push((policy, was));
        }
    }
    let saved = Arc::new(Mutex::new(Saved {
        cpu,
        policies: Vec::new(),
        done: false,
    }));
    let hook = (!to_set.is_empty()).then(|| {
        let on_exit = saved.clone();
        add_exit_hook(move || restore(&on_exit))
    });
    let set = GovernorSet { saved, hook };
    for (policy, was) in to_set {
        let mut saved = set.saved.lock().unwrap_or_else(|e| e.into_inner());
        if saved.done {
            break;
        }
        if let Err(e) = write_governor(&saved.cpu, &policy, governor) {
            drop(saved);
            // Dropping the set writes back those written so far.
            return Err(Refusal {
                why: format!("{}: {e}", printable(&policy)),
                permission: e.kind() == std::io::ErrorKind::PermissionDenied,
            });
        }
        saved.policies.push((policy, was));
    }
    Ok(set)
}

/// Writes each saved governor back, the latest first, once; a write that fails is left
/// (the run is ending, and there is no one to tell but stderr).
fn restore(saved: &Mutex<Saved>) {
    let mut saved = saved.lock().unwrap_or_else(|e| e.into_inner());
    if std::mem::replace(&mut saved.done, true) {
        return;
    }
    for (policy, governor) in saved.policies.iter().rev() {
        if let Err(e) = write_governor(&saved.cpu, policy, governor) {
            crate::stderr!(
                "{}: could not set {} back to {}: {e}",
                crate::util::terminal::program_name(),
                printable(policy),
                printable(governor)
            );
        }
    }
}

/// Writes `governor` to `cpufreq/<policy>/scaling_governor` under `cpu`, opening every
/// component below `cpu` without following a link and writing only a regular file: a
/// crafted tree (or a hostile sysroot) cannot point the write, and its truncation,
/// anywhere else.
fn write_governor(cpu: &Path, policy: &str, governor: &str) -> std::io::Result<()> {
    use nix::fcntl::{openat, AtFlags, OFlag};
    use nix::sys::stat::Mode;
    use std::io::Write;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let open = |dir: Option<&OwnedFd>, name: &Path, flags: OFlag| -> std::io::Result<OwnedFd> {
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let fd = openat(dir.map(|d| d.as_raw_fd()), name, flags, Mode::empty())?;
        // SAFETY: openat just returned this descriptor, owned by nothing else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let dir = OFlag::O_RDONLY | OFlag::O_DIRECTORY;
    let cpu = open(None, cpu, dir)?;
    let cpufreq = open(Some(&cpu), Path::new("cpufreq"), dir)?;
    let policy = open(Some(&cpufreq), Path::new(policy), dir)?;
    let name = Path::new("scaling_governor");
    // Looked at before it is opened: opening a device or a FIFO for writing may do
    // something already (a watchdog starts); and after, in case it was swapped meanwhile.
    let not_regular = || std::io::Error::other("not a regular file");
    let kind =
        nix::sys::stat::fstatat(Some(policy.as_raw_fd()), name, AtFlags::AT_SYMLINK_NOFOLLOW)?;
    if kind.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(not_regular());
    }
    let mut file = std::fs::File::from(open(Some(&policy), name, OFlag::O_WRONLY)?);
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    // sysfs takes the write whole and ignores the length; a made-up board's file needs
    // the old text gone.
    let _ = file.set_len(0);
    file.write_all(governor.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(name: &str, governors: &[(&str, &str)]) -> crate::util::temp::TempDir {
        let d = crate::util::temp::TempDir::new(name);
        for (i, (g, offered)) in governors.iter().enumerate() {
            let p = d
                .path()
                .join(format!("sys/devices/system/cpu/cpufreq/policy{}", i * 4));
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("scaling_governor"), format!("{g}\n")).unwrap();
            std::fs::write(p.join("scaling_available_governors"), offered).unwrap();
        }
        d
    }

    fn governors(d: &Path) -> Vec<String> {
        (0..2)
            .filter_map(|i| {
                let f = d.join(format!(
                    "sys/devices/system/cpu/cpufreq/policy{}/scaling_governor",
                    i * 4
                ));
                std::fs::read_to_string(f)
                    .ok()
                    .map(|g| g.trim().to_string())
            })
            .collect()
    }

    #[test]
    fn every_policy_is_set_and_set_back_when_the_set_is_dropped() {
        let all = "ondemand performance schedutil\n";
        let d = board("governor-set", &[("ondemand", all), ("schedutil", all)]);
        let set = set(d.path(), "performance").unwrap();
        assert_eq!(governors(d.path()), ["performance", "performance"]);
        assert_eq!(set.before(), ["policy0 ondemand", "policy4 schedutil"]);
        drop(set);
        assert_eq!(governors(d.path()), ["ondemand", "schedutil"]);
    }

    #[test]
    fn a_governor_not_offered_changes_nothing() {
        let d = board(
            "governor-refused",
            &[
                ("ondemand", "ondemand performance\n"),
                ("ondemand", "ondemand\n"),
            ],
        );
        let refusal = set(d.path(), "performance").unwrap_err();
        assert_eq!(refusal.why, "policy4 does not offer it (ondemand)");
        assert!(!refusal.permission);
        assert_eq!(
            governors(d.path()),
            ["ondemand", "ondemand"],
            "policy0 set back"
        );
        assert!(parse_governor("performance").is_ok());
        assert!(parse_governor("perf ormance").is_err());
        assert!(parse_governor("").is_err());
    }

    #[test]
    fn no_policies_is_nothing_to_set() {
        let d = crate::util::temp::TempDir::new("governor-none");
        assert!(set(d.path(), "performance").unwrap().before().is_empty());
    }

    #[test]
    fn a_link_out_of_the_tree_is_never_written_through() {
        let all = "ondemand performance\n";
        let d = board("governor-links", &[("ondemand", all)]);
        let outside = d.path().join("outside");
        std::fs::write(&outside, "ondemand\n").unwrap();
        let policy = d.path().join("sys/devices/system/cpu/cpufreq/policy0");
        let file = policy.join("scaling_governor");
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&outside, &file).unwrap();
        let refusal = set(d.path(), "performance").unwrap_err();
        assert!(refusal.why.starts_with("policy0: "), "{}", refusal.why);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "ondemand\n");

        // A policy that is itself a link to a folder elsewhere.
        std::fs::remove_file(&file).unwrap();
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("scaling_governor"), "ondemand\n").unwrap();
        std::fs::remove_dir_all(&policy).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &policy).unwrap();
        assert!(set(d.path(), "performance").is_err());
        let kept = std::fs::read_to_string(elsewhere.join("scaling_governor")).unwrap();
        assert_eq!(kept, "ondemand\n");

        // A FIFO is not a policy's file: skipped, never opened for writing.
        std::fs::remove_file(&policy).unwrap();
        std::fs::create_dir(&policy).unwrap();
        nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(set(d.path(), "performance").unwrap().before().is_empty());
        let cpu = d.path().join("sys/devices/system/cpu");
        let refused = write_governor(&cpu, "policy0", "performance").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "not a regular file",
            "looked at, not opened"
        );
    }
}
