//! Hostile other builds of an A/B run (`--against`, round five): a build whose forks
//! linger after their report or say `alive` for ever, whose description leaves a
//! process behind, that is a bash wrapper, or that is removed or replaced mid-run. Each
//! ends in a clear line and an exit code within a bound, leaving nothing running.

use crate::support::{run_bounded, TempDir, ZSTD_ONE_ROW, ZSTD_SMALL};
use std::time::Duration;

const ZSTD: &str = env!("CARGO_BIN_EXE_bb-zstd");

/// A bash script in `dir` standing for another build: asked to describe itself, it is
/// bb-zstd; as a fork it runs `fork`, with `$fd` its report pipe.
fn other_build(dir: &TempDir, name: &str, fork: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    let text = format!(
        "#!/bin/bash\n\
         if [ -n \"${{BB_FORK_DESCRIBE+set}}\" ]; then exec '{ZSTD}' \"$@\"; fi\n\
         fd=${{BB_FORK_CHILD#*:}}; fd=${{fd%%:*}}\n\
         {fork}\n"
    );
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

/// bb-zstd small and short, one row, one pair against `other`, with `extra`.
fn against(other: &str, extra: &[&str]) -> crate::support::Run {
    let mut args = [ZSTD_SMALL, ZSTD_ONE_ROW].concat();
    args.extend(["--forks", "1", "--against", other]);
    args.extend(extra);
    run_bounded(ZSTD, &args, &[], Duration::from_secs(120))
}

#[test]
fn a_fork_that_does_not_exit_after_its_report_is_killed_after_a_grace() {
    let d = TempDir::new("ab-lingers");
    let report = "printf 'score 1\\ncpu 0 0 0 0 0\\nops 1\\nend\\n' >&$fd";
    for (name, fork) in [
        ("reports", format!("{report}; exec sleep 300")),
        ("closes", "eval \"exec $fd>&-\"; exec sleep 300".to_string()),
    ] {
        let other = other_build(&d, name, &fork);
        let run = against(&other, &[]);
        assert_eq!(run.code, 1, "{name}: {}", run.stderr);
        let expected = "fork 1 did not exit within 5s of its report's end; it was killed";
        assert!(run.stderr.contains(expected), "{name}: {}", run.stderr);
    }
}

#[test]
fn a_fork_that_says_alive_for_ever_is_stopped_at_its_limit() {
    let d = TempDir::new("ab-alive");
    let other = other_build(&d, "alive", "while :; do echo alive >&$fd; sleep 0.5; done");
    let run = against(&other, &["--timeout", "1s"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("fork 1 ran past its limit of ")
            && run
                .stderr
                .contains("though it said it was alive; it was killed"),
        "{}",
        run.stderr
    );
}
