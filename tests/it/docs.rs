//! The commands the documentation shows still work: every `bb-*` invocation and every
//! `scripts/run-all.sh` line in README.md's and docs/'s `sh` blocks, and the examples of
//! README's table of binaries, is run with `--dry-run` (its flags parsed and checked, its
//! plan made, nothing measured). Invocations that need a peer (a server to `--connect`
//! to, `serve`, `gen --dest`) or result files (bb-compare) are parsed by `--help`-free
//! means elsewhere: tests/it/rpc.rs, tests/it/seek.rs and tests/it/compare.rs run them for real.
//!
//! And docs/building.md's ledger of code written here instead of a crate gives each its
//! line count as the tree has it (within 10%), and a reason.

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

/// The lines of a source file that are not its unit tests: those before the line
/// `#[cfg(test)]` that opens them (every line of a file without).
fn code_lines(text: &str) -> usize {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .count()
}

/// The rows of docs/building.md's ledger of code written here instead of a crate: what,
/// the files or folders (each backticked; a folder, ending in `/`, is its `.rs` files),
/// the lines it gives, and why.
fn ledger(building: &str) -> Vec<(String, Vec<String>, usize, String)> {
    let start = building
        .find("### Written here instead of a crate")
        .expect("docs/building.md has its ledger of code written here instead of a crate");
    building[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---") && !l.contains("| files |"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 7, "a ledger row has five cells: {l}");
            let files = cells[2]
                .split('`')
                .skip(1)
                .step_by(2)
                .map(String::from)
                .collect();
            let lines = cells[3]
                .replace(',', "")
                .parse()
                .unwrap_or_else(|_| panic!("a ledger row's lines are a number: {l}"));
            (cells[1].to_string(), files, lines, cells[5].to_string())
        })
        .collect()
}

#[test]
fn the_ledger_of_code_written_here_has_the_trees_line_counts() {
    let building = std::fs::read_to_string(Path::new(REPO).join("docs/building.md")).unwrap();
    let rows = ledger(&building);
    assert!(rows.len() >= 5, "the ledger has only {rows:?}");
    let mut problems = Vec::new();
    for (what, files, said, why) in &rows {
        assert!(!files.is_empty(), "the ledger's {what} names no file");
        assert!(
            why.split_whitespace().count() >= 5,
            "the ledger's {what} says no reason: {why:?}"
        );
        let mut counted = 0;
        for file in files {
            let path = Path::new(REPO).join(file);
            let paths = if file.ends_with('/') {
                let mut in_folder: Vec<_> = std::fs::read_dir(&path)
                    .unwrap_or_else(|e| panic!("the ledger's {what} names {file}: {e}"))
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                    .collect();
                in_folder.sort();
                in_folder
            } else {
                vec![path]
            };
            for p in paths {
                let text = std::fs::read_to_string(&p)
                    .unwrap_or_else(|e| panic!("the ledger's {what} names {file}: {e}"));
                counted += code_lines(&text);
            }
        }
        // Within 10% of what the tree holds.
        if said.abs_diff(counted) * 10 > counted {
            problems.push(format!(
                "docs/building.md's ledger gives {what} {said} lines; the tree has {counted} \
                 in {} (before unit tests): set the figure from the tree",
                files.join(", ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The ledger's check on made-up input: lines counted up to the unit tests, a row read
/// whole, a figure and its files.
#[test]
fn the_ledger_check_counts_lines_before_the_unit_tests_and_reads_each_row() {
    assert_eq!(code_lines("a\nb\n\n#[cfg(test)]\nmod tests {}\n"), 3);
    assert_eq!(code_lines("a\n    #[cfg(test)]\nb\n"), 3);
    let doc = "### Written here instead of a crate\n\ntext\n\n\
        | written here | files | lines | instead of | why |\n| --- | --- | --- | --- | --- |\n\
        | JSON | `src/util/json.rs` | 1,476 | `serde` | small binaries, said in words |\n\
        | XML | `src/a.rs`, `src/b/` | 54 | `quick-xml` | escaping only, and so on |\n\n\
        after\n\n## Next\n| not | a | row | of | it |\n";
    assert_eq!(
        ledger(doc),
        [
            (
                "JSON".to_string(),
                vec!["src/util/json.rs".to_string()],
                1476,
                "small binaries, said in words".to_string()
            ),
            (
                "XML".to_string(),
                vec!["src/a.rs".to_string(), "src/b/".to_string()],
                54,
                "escaping only, and so on".to_string()
            ),
        ]
    );
}
