//! scripts/setup.sh against registries that fail: its steps run against stand-ins for
//! apt-get, python3 (-m pip, -m venv, and a venv's pip), rustup, cargo and id (root, or
//! the uid in $SHIM_UID),
//! first and alone on PATH with the few tools setup.sh uses, in a copy of the checkout,
//! so that nothing is installed and every step has something to do. Each stand-in fails
//! its first call of each kind, as a mirror mid-sync does (exit 100), and works the
//! second; BB_SETUP_RETRY_DELAYS="0 0 0" keeps the waits between tries out of the test.

use crate::support::boards::REPO;
use crate::support::{run_bounded, Run, TempDir};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The stand-in, one script under each name; every call is appended to $SHIM_LOG.
const SHIM: &str = r#"#!/bin/sh
me=${0##*/}
echo "$me $*" >>"$SHIM_LOG"
case "$me $*" in
    "id -u") echo "${SHIM_UID:-0}"; exit 0 ;;
    cargo*) exit 0 ;;
    "python3 -c import msgpack") exit 1 ;;
    "python3 -c "*) exit 0 ;;
    "python3 -m venv "*) mkdir -p "$3/bin" && cp "$0" "$3/bin/pip"; exit ;;
    "rustup target list "* | "rustup component list "*) exit 0 ;;
esac
# A registry step: the first call of each kind fails; apt-get update every time where
# SHIM_INDEX_GONE is set (an index that stays broken).
key=$(printf '%s' "$me $1 $2" | tr -c 'A-Za-z0-9' _)
if [ "$me $1" = "apt-get update" ] && [ -n "${SHIM_INDEX_GONE:-}" ]; then
    :
elif [ -e "$SHIM_STATE/$key" ]; then
    exit 0
fi
: >"$SHIM_STATE/$key"
case "$me $1" in
    "apt-get update")
        echo "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-armhf/Packages.xz  File has unexpected size (41016 != 40916). Mirror sync in progress? [IP: 192.0.2.1 80]" >&2
        echo "E: Some index files failed to download. They have been ignored, or old ones used instead." >&2 ;;
    *) echo "$me: a temporary failure (Mirror sync in progress?)" >&2 ;;
esac
exit 100
"#;

/// The tools setup.sh uses besides the stand-ins, linked into a folder of their own: with
/// no `cc`, `qemu-arm-static` and the rest on PATH, every package is missing.
const TOOLS: &[&str] = &[
    "sh", "sed", "dirname", "cat", "grep", "tr", "sort", "rm", "mkdir", "sleep", "cp",
];

struct Setup {
    dir: TempDir,
    path: String,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let dir = TempDir::new(name);
        let shims = dir.join("shims");
        std::fs::create_dir_all(&shims).unwrap();
        for name in ["apt-get", "python3", "rustup", "cargo", "id"] {
            let p = shims.join(name);
            std::fs::write(&p, SHIM).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let tools = dir.join("tools");
        std::fs::create_dir_all(&tools).unwrap();
        for tool in TOOLS {
            let found = std::process::Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .unwrap();
            let found = String::from_utf8(found.stdout).unwrap();
            let found = found.trim();
            assert!(found.starts_with('/'), "no {tool} on PATH");
            std::os::unix::fs::symlink(found, tools.join(tool)).unwrap();
        }
        // A copy of the checkout's setup.sh and Makefile (its NIGHTLY): what it writes (the
        // venvs' pins) goes under this copy's target/.
        let repo = dir.join("repo");
        std::fs::create_dir_all(repo.join("scripts")).unwrap();
        std::fs::copy(
            Path::new(REPO).join("scripts/setup.sh"),
            repo.join("scripts/setup.sh"),
        )
        .unwrap();
        std::fs::copy(Path::new(REPO).join("Makefile"), repo.join("Makefile")).unwrap();
        std::fs::create_dir_all(dir.join("state")).unwrap();
        let path = format!("{}:{}", shims.display(), tools.display());
        Setup { dir, path }
    }

    fn repo(&self) -> PathBuf {
        self.dir.join("repo")
    }

    /// Runs `setup.sh LEVEL` with `env` added.
    fn run(&self, level: &str, env: &[(&str, &str)]) -> Run {
        let script = self.repo().join("scripts/setup.sh");
        let log = self.dir.join("calls");
        let state = self.dir.join("state");
        let base = [
            ("PATH", self.path.as_str()),
            ("SHIM_LOG", log.to_str().unwrap()),
            ("SHIM_STATE", state.to_str().unwrap()),
            ("BB_SETUP_RETRY_DELAYS", "0 0 0"),
        ];
        let env: Vec<(&str, &str)> = base.iter().chain(env).copied().collect();
        run_bounded(
            "/bin/sh",
            &[script.to_str().unwrap(), level],
            &env,
            std::time::Duration::from_secs(60),
        )
    }

    /// How many times the stand-ins were called with a line starting with `call`.
    fn calls(&self, call: &str) -> usize {
        std::fs::read_to_string(self.dir.join("calls"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with(call))
            .count()
    }
}

#[test]
fn setup_tries_each_registry_step_again_when_it_fails_for_a_moment() {
    let setup = Setup::new("setup-retry");
    let run = setup.run("test", &[]);
    run.assert_ok();
    for (call, step) in [
        ("apt-get update ", "apt-get update -qq"),
        ("apt-get install ", "apt-get install -y -qq "),
        (
            "python3 -m pip install ",
            "python3 -m pip install -q msgpack",
        ),
        ("rustup target add ", "rustup target add "),
        ("rustup component add ", "rustup component add clippy"),
        ("pip install ", "/bin/pip install -q "),
    ] {
        assert_eq!(
            setup.calls(call),
            2,
            "{call}: failed once, then worked\n{}",
            run.stderr
        );
        assert!(
            run.stderr.lines().any(|l| l.starts_with("setup: '")
                && l.contains(step)
                && l.ends_with("' failed (100); trying again in 0s")),
            "{step}:\n{}",
            run.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(setup.repo().join("target/tools-venv/pins"))
            .unwrap()
            .trim(),
        "ansible-core==2.19.14 ansible-lint==26.10.1 moto[server]==5.2.1"
    );
    assert!(!run.stderr.contains("could not fetch"), "{}", run.stderr);
}

#[test]
fn setup_goes_on_without_an_index_that_keeps_failing_and_names_it_at_the_end() {
    let setup = Setup::new("setup-index");
    let run = setup.run("native", &[("SHIM_INDEX_GONE", "1")]);
    run.assert_ok();
    // Tried four times (three waits), then left out; apt-get install still ran.
    assert_eq!(setup.calls("apt-get update "), 4, "{}", run.stderr);
    assert_eq!(setup.calls("apt-get install "), 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "setup: apt-get update fetched not every index (above); going on with those it has\n"
        ),
        "{}",
        run.stderr
    );
    // Named again at the very end, after every other step's lines.
    let tail: Vec<&str> = run.stderr.lines().rev().take(2).collect();
    assert_eq!(
        tail,
        [
            "  E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-armhf/Packages.xz  File has unexpected size (41016 != 40916). Mirror sync in progress? [IP: 192.0.2.1 80]",
            "setup: done without what apt-get update could not fetch, which nothing here needed:",
        ],
        "{}",
        run.stderr
    );
}

#[test]
fn setup_refuses_retry_delays_that_are_not_seconds() {
    let setup = Setup::new("setup-delays");
    let run = setup.run("native", &[("BB_SETUP_RETRY_DELAYS", "5s 15s")]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "setup: BB_SETUP_RETRY_DELAYS '5s 15s': expected the seconds between tries, such as '5 15 30'\n"
    );
    assert_eq!(setup.calls(""), 0, "nothing ran");
}

#[test]
fn not_root_setup_prints_whole_commands_and_no_lone_apt_get_update() {
    let setup = Setup::new("setup-not-root");
    let run = setup.run("test", &[("SHIM_UID", "1000")]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("  sudo apt-get update && sudo apt-get install -y ")),
        "{}",
        run.stderr
    );
    // No foreign architecture is missing at this level: nothing to update for.
    assert!(
        !run.stderr
            .lines()
            .any(|l| l.trim() == "sudo apt-get update"),
        "{}",
        run.stderr
    );
    assert_eq!(setup.calls("apt-get"), 0, "nothing run as a user");
}
