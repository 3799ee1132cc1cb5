//! The fuzz targets' corpora replayed on stable Rust, no fuzzing: every input a fuzzer
//! once kept (the seeds from real traffic and anything it found) goes through the same
//! invariants again, so a crash found once stays fixed.

#[path = "../../fuzz/checks.rs"]
mod checks;

use std::path::Path;

/// Runs `check` over every file of fuzz/corpus/`target`; returns how many there were.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let result = std::panic::catch_unwind(|| check(&data));
        assert!(
            result.is_ok(),
            "{target}: {} fails its invariants",
            path.display()
        );
        n += 1;
    }
    n
}

// One test: the counting allocator counts per thread, and the targets run one by one.
#[test]
fn every_corpus_input_keeps_its_targets_invariants() {
    for (target, check) in [
        ("frames", checks::frames as fn(&[u8])),
        ("messagepack", checks::messagepack),
        ("compare_json", checks::compare_json),
        ("http_response", checks::http_response),
        ("pattern_file", checks::pattern_file),
        ("aws_ini", checks::aws_ini),
        ("s3_xml", checks::s3_xml),
        ("credential_process", checks::credential_process),
    ] {
        assert!(
            replay(target, check) >= 3,
            "{target}: its seed corpus is missing"
        );
    }
}

#[test]
fn the_counting_allocator_sees_what_a_check_holds() {
    let (v, held) = checks::peak_during(|| vec![1u8; 100_000]);
    assert!(held >= 100_000, "{held}");
    drop(v);
    let (_, held) = checks::peak_during(|| ());
    assert_eq!(held, 0);
}
