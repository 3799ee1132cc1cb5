//! The repository itself: generated data (bb-seek's objects, results, dist tarballs)
//! is never committed, and no tracked file is larger than 1 MiB.

use std::process::Command;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const LIMIT: u64 = 1 << 20;

/// The tracked files, or None outside a git checkout (a dist tarball, say).
fn tracked_files() -> Option<Vec<String>> {
    let out = Command::new("git")
        .args(["-C", REPO, "ls-files", "-z"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).unwrap();
    Some(
        text.split('\0')
            .filter(|f| !f.is_empty())
            .map(String::from)
            .collect(),
    )
}

#[test]
fn no_tracked_file_is_larger_than_one_mib_and_no_generated_data_is_tracked() {
    let Some(files) = tracked_files() else {
        eprintln!("not a git checkout: nothing to check");
        return;
    };
    assert!(files.iter().any(|f| f == "Cargo.toml"), "{files:?}");
    let mut too_large = Vec::new();
    for f in &files {
        let path = std::path::Path::new(REPO).join(f);
        // A file deleted in the work tree but still tracked is git's business, not ours.
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            if meta.is_file() && meta.len() > LIMIT {
                too_large.push(format!("{f} ({} bytes)", meta.len()));
            }
        }
    }
    assert!(
        too_large.is_empty(),
        "tracked files over 1 MiB: {too_large:?}"
    );
    let generated: Vec<&String> = files
        .iter()
        .filter(|f| {
            ["data/", "results/", "dist/", "target/"]
                .iter()
                .any(|dir| f.starts_with(dir))
        })
        .collect();
    assert!(
        generated.is_empty(),
        "generated files are tracked: {generated:?}"
    );
}

/// `make test` runs the ignored tests with `cargo test --release --test it -- --ignored`,
/// which leaves the library's and the binaries' unit tests out: an ignored one there
/// would never run. The one exception is a test's child process (a test that must die
/// by a signal, run by its parent in a process of its own): its reason says
/// `a child process of PARENT`, and PARENT must be a test of the same file that runs.
#[test]
fn only_the_integration_tests_have_ignored_tests() {
    fn visit(dir: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = match path.extension().is_some_and(|e| e == "rs") {
                true => std::fs::read_to_string(&path).unwrap(),
                false => String::new(),
            };
            if path.is_dir() {
                visit(&path, found);
            } else if text.lines().any(|l| ignored_unrun(l, &text)) {
                found.push(path.display().to_string());
            }
        }
    }
    /// Whether `line` ignores a test that nothing in `file` runs.
    fn ignored_unrun(line: &str, file: &str) -> bool {
        let Some(at) = line.find("#[ignore") else {
            return false;
        };
        let parent = line[at..]
            .split_once("a child process of ")
            .map(|(_, rest)| rest.trim_end_matches(['"', ']', ' ']));
        match parent {
            Some(parent) => !file.contains(&format!("fn {parent}()")),
            None => true,
        }
    }
    let mut found = Vec::new();
    visit(&std::path::Path::new(REPO).join("src"), &mut found);
    assert!(
        found.is_empty(),
        "ignored tests outside tests/it, which make test would not run: {found:?}"
    );
}
