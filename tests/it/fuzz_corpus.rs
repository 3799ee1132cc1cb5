//! The fuzz targets' corpora replayed on stable Rust, no fuzzing: every input a fuzzer
//! once kept (the seeds from real traffic and anything it found) goes through the same
//! invariants again, so a crash found once stays fixed.

#[path = "../../fuzz/checks.rs"]
mod checks;

use std::path::Path;

/// Runs `check` over every file of fuzz/corpus/`target`; returns how many there were and
/// the paths of those that fail.
fn replay(target: &str, check: fn(&[u8])) -> (usize, Vec<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let (mut n, mut failed) = (0, Vec::new());
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            // Under the panic it caused, so that each message has its input.
            eprintln!("^ {target}: {}", path.display());
            failed.push(path.display().to_string());
        }
        n += 1;
    }
    (n, failed)
}

// One test: the counting allocator counts per thread, and the targets run one by one.
#[test]
fn every_corpus_input_keeps_its_targets_invariants() {
    let mut failures = Vec::new();
    for (target, check) in [
        ("frames", checks::frames as fn(&[u8])),
        ("messagepack", checks::messagepack),
        ("compare_json", checks::compare_json),
        ("http_response", checks::http_response),
        ("pattern_file", checks::pattern_file),
        ("aws_ini", checks::aws_ini),
        ("s3_xml", checks::s3_xml),
        ("credential_process", checks::credential_process),
        ("fork_report", checks::fork_report),
        ("sysfs", checks::sysfs),
        ("sts", checks::sts),
        ("object_spec", checks::object_spec),
        ("description", checks::description),
        ("monitor", checks::monitor),
    ] {
        let (n, failed) = replay(target, check);
        assert!(n >= 3, "{target}: its seed corpus is missing");
        failures.extend(failed.into_iter().map(|path| format!("{target}: {path}")));
    }
    // Every failing input named, not only the first.
    assert!(
        failures.is_empty(),
        "inputs that fail their target's invariants (each under its panic above):\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_counting_allocator_sees_what_a_check_holds() {
    let (v, held) = checks::peak_during(|| vec![1u8; 100_000]);
    assert!(held >= 100_000, "{held}");
    drop(v);
    let (_, held) = checks::peak_during(|| ());
    assert_eq!(held, 0);
}
