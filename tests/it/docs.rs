//! The commands the documentation shows still work: every `bb-*` invocation and every
//! `scripts/run-all.sh` line in README.md's and docs/'s `sh` blocks, and the examples of
//! README's table of binaries, is run with `--dry-run` (its flags parsed and checked, its
//! plan made, nothing measured). Invocations that need a peer (a server to `--connect`
//! to, `serve`, `gen --dest`) or result files (bb-compare) are parsed by `--help`-free
//! means elsewhere: tests/it/rpc.rs, tests/it/seek.rs and tests/it/compare.rs run them for real.

use crate::support::{run_in, TempDir};
use std::path::Path;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The lines of every fenced `sh` block of `text`.
fn sh_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("```") {
            inside = !inside && line.trim() == "```sh";
            continue;
        }
        if inside {
            out.push(line.to_string());
        }
    }
    out
}

/// The examples in README's table of binaries: its third column's code.
fn table_examples(readme: &str) -> Vec<String> {
    readme
        .lines()
        .filter(|l| l.starts_with("| [`bb-"))
        .filter_map(|l| l.split('|').nth(3))
        .map(|cell| cell.trim().trim_matches('`').to_string())
        .collect()
}

/// The commands of a shell line: `#` comments dropped, split at `&&`, an `ssh HOST`
/// prefix and a leading `./` dropped.
fn commands(line: &str) -> Vec<Vec<String>> {
    let line = line.split("  #").next().unwrap_or("").trim();
    line.split("&&")
        .map(|c| {
            let mut words: Vec<String> = c.split_whitespace().map(String::from).collect();
            if words.first().map(String::as_str) == Some("ssh") {
                words.drain(..2.min(words.len()));
            }
            if let Some(first) = words.first_mut() {
                *first = first.trim_start_matches("./").to_string();
            }
            words
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether a bb-* invocation needs something this test does not set up.
fn needs_a_peer(words: &[String]) -> bool {
    words[0] == "bb-compare"
        || words
            .iter()
            .any(|w| w == "serve" || w == "gen" || w == "--connect")
}

#[test]
fn every_command_the_docs_show_parses_and_plans() {
    let mut docs = vec![Path::new(REPO).join("README.md")];
    for entry in std::fs::read_dir(Path::new(REPO).join("docs")).unwrap() {
        docs.push(entry.unwrap().path());
    }
    let readme = std::fs::read_to_string(&docs[0]).unwrap();
    let mut lines = table_examples(&readme);
    assert_eq!(lines.len(), 5, "README's table has an example per binary");
    for doc in &docs {
        lines.extend(sh_lines(&std::fs::read_to_string(doc).unwrap()));
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_bb-zstd")).parent().unwrap();
    let dir = TempDir::new("docs");
    // The inputs the examples name.
    std::fs::write(
        dir.join("city.json"),
        "{\"name\": \"Sapporo\"}\n".repeat(1000),
    )
    .unwrap();
    // The other build `--against` names (docs/ab.md): the same binaries, copied.
    std::fs::create_dir(dir.join("old")).unwrap();
    for name in ["bb-zstd", "bb-ipc", "bb-rpc", "bb-seek"] {
        std::fs::copy(bin_dir.join(name), dir.join("old").join(name)).unwrap();
    }
    let mut ran = 0;
    for line in &lines {
        for words in commands(line) {
            let (exe, args): (String, Vec<String>) = if words[0].starts_with("bb-") {
                if needs_a_peer(&words) {
                    continue;
                }
                (
                    bin_dir.join(&words[0]).to_str().unwrap().to_string(),
                    words[1..].to_vec(),
                )
            } else if words.len() >= 2 && words[0] == "sh" && words[1] == "scripts/run-all.sh" {
                let mut args = vec![format!("{REPO}/scripts/run-all.sh")];
                args.extend(words[2..].iter().cloned());
                ("sh".to_string(), args)
            } else {
                continue;
            };
            let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
            if !args.contains(&"--dry-run") {
                args.push("--dry-run");
            }
            let run = run_in(
                dir.path(),
                &exe,
                &args,
                &[("BB_BIN_DIR", bin_dir.to_str().unwrap())],
            );
            assert_eq!(
                run.code, 0,
                "`{line}` no longer works:\n{}\n{}",
                run.stdout, run.stderr
            );
            assert!(
                run.stdout.contains("estimated duration: "),
                "`{line}` made no plan:\n{}",
                run.stdout
            );
            ran += 1;
        }
    }
    assert!(ran >= 10, "only {ran} commands found in the docs");
}
