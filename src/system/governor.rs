//! `--governor`: every cpufreq policy set to one governor (`performance`) for the run and
//! set back to what it was on every way out: the run's end, a failed run (the guard's
//! drop), and a signal or timeout (an exit hook). Where boardbench may not write the
//! policies (not root), nothing is changed and the caller says so once.

use super::exit::{add_exit_hook, remove_exit_hook};
use super::sysfs::read;
use std::path::{Path, PathBuf};

/// The governors set for a run, to be set back; dropping it sets them back.
#[derive(Debug)]
pub struct GovernorSet {
    /// Each policy's `scaling_governor` file and the governor it had.
    saved: Vec<(PathBuf, String)>,
    hook: Option<u64>,
}

impl GovernorSet {
    /// What each policy was set back to on the way out: `policy0 ondemand`.
    pub fn before(&self) -> Vec<String> {
        self.saved
            .iter()
            .map(|(path, g)| format!("{} {g}", policy_name(path)))
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
/// first). No policies: nothing to set, an empty set.
pub fn set(root: &Path, governor: &str) -> Result<GovernorSet, Refusal> {
    let dir = root.join("sys/devices/system/cpu/cpufreq");
    let mut policies: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("policy"))
        .map(|e| e.path())
        .take(4096)
        .collect();
    policies.sort();
    let mut saved: Vec<(PathBuf, String)> = Vec::new();
    for policy in policies {
        let file = policy.join("scaling_governor");
        let rel = |name: &str| {
            let p = policy.join(name);
            p.strip_prefix(root).map(|r| r.display().to_string()).ok()
        };
        let Some(was) = rel("scaling_governor").and_then(|r| read(root, &r)) else {
            continue;
        };
        let offered = rel("scaling_available_governors").and_then(|r| read(root, &r));
        if offered
            .as_deref()
            .is_some_and(|o| !o.split_whitespace().any(|g| g == governor))
        {
            restore(&saved);
            return Err(Refusal {
                why: format!(
                    "{} does not offer it ({})",
                    policy_name(&file),
                    crate::util::format::printable(&offered.unwrap_or_default())
                ),
                permission: false,
            });
        }
        if was == governor {
            continue;
        }
        if let Err(e) = std::fs::write(&file, governor) {
            restore(&saved);
            return Err(Refusal {
                why: format!("{}: {e}", policy_name(&file)),
                permission: e.kind() == std::io::ErrorKind::PermissionDenied,
            });
        }
        saved.push((file, was));
    }
    let hook = (!saved.is_empty()).then(|| {
        let on_exit = saved.clone();
        add_exit_hook(move || restore(&on_exit))
    });
    Ok(GovernorSet { saved, hook })
}

/// Writes each saved governor back, the latest first; a write that fails is left (the
/// run is ending, and there is no one to tell but stderr).
fn restore(saved: &[(PathBuf, String)]) {
    for (file, governor) in saved.iter().rev() {
        if let Err(e) = std::fs::write(file, governor) {
            crate::stderr!(
                "{}: could not set {} back to {governor}: {e}",
                crate::util::terminal::program_name(),
                policy_name(file)
            );
        }
    }
}

/// `policy4` for `…/cpufreq/policy4/scaling_governor`.
fn policy_name(file: &Path) -> String {
    file.parent()
        .and_then(|p| p.file_name())
        .map_or_else(|| "a policy".into(), |n| n.to_string_lossy().into_owned())
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
}
