//! bb-compare's flags checked: the result files (at least one, each there) and how they
//! are judged. A bad flag is a usage error (exit 2) that names it; argh's parsers
//! ([`super::args`]) refuse a bad `--alpha`, `--threshold`, `--format`, `--output`,
//! `--svg`, `--ignore-params` or `--max-input` value themselves. An output is never one
//! of the inputs, nor the other output.

use super::args::Args;
use super::table::TableFormat;
use super::Criteria;
use crate::util::error::{Error, Result};
use std::path::{Path, PathBuf};

/// A comparison, checked.
pub struct Options {
    /// `--env`: print this machine's environment record instead; nothing else is read.
    pub env: bool,
    /// The result files or results directories; the first is the base (the other build
    /// of an A/B run's file).
    pub files: Vec<PathBuf>,
    pub criteria: Criteria,
    pub format: Option<TableFormat>,
    pub output: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    /// The secondary metric compared instead of the primary score.
    pub metric: Option<String>,
    /// The largest result file read, in bytes.
    pub max_input: u64,
    /// `--calibrate`: where this board's noise profile is written, from the runs.
    pub calibrate: Option<PathBuf>,
    /// `--noise`, else `BB_NOISE`: a noise profile for the rows without their own.
    pub noise: Option<PathBuf>,
}

impl Options {
    pub fn from_args(args: &Args) -> Result<Options> {
        if !args.env {
            if args.files.is_empty() {
                return Err(Error::usage(
                    "no result files given (bb-compare BASE.json NEW.json ...; see --help)",
                ));
            }
            // A missing file is a run that failed to make it (exit 1); a symlink to
            // nothing is bad input (exit 2), as the loader says.
            if let Some(path) = args
                .files
                .iter()
                .find(|p| !p.exists() && std::fs::read_link(p).is_err())
            {
                return Err(Error::failed(format!("{}: no such file", path.display())));
            }
            check_outputs(&args.files, args.output.as_deref(), args.svg.as_deref())?;
            if let Some(path) = &args.calibrate {
                check_outputs(&args.files, Some(path), None)?;
            }
        }
        Ok(Options {
            env: args.env,
            files: args.files.clone(),
            criteria: Criteria {
                alpha: args.alpha,
                threshold: args.threshold,
                ignore_params: args.ignore_params.clone().unwrap_or_default(),
                accept_invalid: args.accept_invalid,
            },
            format: args.format,
            output: args.output.clone(),
            svg: args.svg.clone(),
            metric: args.metric.clone(),
            max_input: args.max_input,
            calibrate: args.calibrate.clone(),
            noise: args.noise.clone().or_else(|| {
                std::env::var_os(crate::harness::noise::VARIABLE)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            }),
        })
    }
}

/// Refuses an output that is one of the inputs (the same device and inode, or a `*.json`
/// inside a results directory given), or that both outputs name (one would overwrite the
/// other). A stream written in place (a FIFO, `/dev/stdout`) replaces nothing, and
/// neither does stdout, even where it is a file (`> log`).
fn check_outputs(inputs: &[PathBuf], output: Option<&Path>, svg: Option<&Path>) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let id = |m: &std::fs::Metadata| (m.dev(), m.ino());
    let output = output.filter(|p| !crate::util::file::is_stdout(p));
    let svg = svg.filter(|p| !crate::util::file::is_stdout(p));
    let given = [("--output", output), ("--svg", svg)];
    for (flag, path) in given.into_iter().filter_map(|(f, p)| Some((f, p?))) {
        // Only a file there already can be an input.
        let Some(out) = std::fs::metadata(path).ok().filter(|m| m.is_file()) else {
            continue;
        };
        let replaces = |input: &&PathBuf| match std::fs::metadata(input) {
            Ok(i) if i.is_dir() => {
                path.extension() == Some("json".as_ref())
                    && std::fs::canonicalize(path)
                        .ok()
                        .zip(std::fs::canonicalize(input).ok())
                        .is_some_and(|(o, i)| o.starts_with(i))
            }
            Ok(i) => id(&i) == id(&out),
            Err(_) => false,
        };
        if let Some(input) = inputs.iter().find(replaces) {
            return Err(Error::usage(format!(
                "{flag} {}: is the input {}, which it would write over",
                path.display(),
                input.display()
            )));
        }
    }
    if let (Some(o), Some(s)) = (output, svg) {
        let same = match (std::fs::metadata(o), std::fs::metadata(s)) {
            (Ok(a), Ok(b)) => a.is_file() && id(&a) == id(&b),
            _ => where_written(o).is_some() && where_written(o) == where_written(s),
        };
        if same {
            return Err(Error::usage(format!(
                "--svg {}: the same file as --output {}: give each its own",
                s.display(),
                o.display()
            )));
        }
    }
    Ok(())
}

/// Where a new output file at `path` goes: its directory's real path and its name.
fn where_written(path: &Path) -> Option<PathBuf> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(path.file_name()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::cli::{parse_from, ParseExit};

    const THERE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");

    fn options(argv: &[&str]) -> Result<Options> {
        match parse_from::<Args>(argv) {
            Ok(args) => Options::from_args(&args),
            Err(ParseExit::Usage(e)) => Err(e),
            Err(ParseExit::Help(_)) => panic!("{argv:?}: help"),
        }
    }

    #[test]
    fn good_flags_pass() {
        let o = options(&[THERE, THERE, "--alpha", "0.05", "--threshold", "2%"]).unwrap();
        assert_eq!(o.files.len(), 2);
        assert_eq!(
            o.criteria,
            Criteria {
                alpha: 0.05,
                threshold: 0.02,
                ignore_params: vec![],
                accept_invalid: false,
            }
        );
        let o = options(&[
            THERE,
            "--ignore-params",
            "threads,input",
            "--max-input",
            "1k",
        ])
        .unwrap();
        assert_eq!(o.criteria.ignore_params, ["threads", "input"]);
        assert_eq!((o.criteria.alpha, o.criteria.threshold), (0.01, 0.05));
        assert_eq!(o.max_input, 1024);
        // --env reads no file.
        assert!(options(&["--env"]).unwrap().env);
        assert!(options(&["--env", "/nonexistent.json"]).is_ok());
    }

    #[test]
    fn a_bad_flag_is_refused_by_name() {
        for (argv, flag) in [
            (&[THERE, "--alpha", "2"][..], "--alpha"),
            (&[THERE, "--alpha", "0"], "--alpha"),
            (&[THERE, "--threshold", "x"], "--threshold"),
            (&[THERE, "--ignore-params", "a,,b"], "--ignore-params"),
            (&[THERE, "--format", "yaml"], "--format"),
            (&[THERE, "--max-input", "big"], "--max-input"),
        ] {
            let Err(e) = options(argv) else {
                panic!("{argv:?} passed")
            };
            assert_eq!(e.exit_code(), 2, "{argv:?}: {e}");
            assert!(e.to_string().contains(flag), "{argv:?}: {e}");
        }
    }

    #[test]
    fn an_output_over_an_input_or_the_other_output_is_refused() {
        let dir = crate::util::temp::TempDir::new("compare-outputs");
        std::fs::create_dir_all(dir.join("results")).unwrap();
        let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
        for name in ["a.json", "b.json", "results/x.json"] {
            std::fs::write(dir.join(name), "[]").unwrap();
        }
        std::os::unix::fs::symlink(dir.join("a.json"), dir.join("link.json")).unwrap();
        std::fs::hard_link(dir.join("b.json"), dir.join("hard.json")).unwrap();
        let (a, b, results) = (path("a.json"), path("b.json"), path("results"));
        for (argv, want) in [
            (vec![&a, &b, "--svg", &b], "--svg "),
            (vec![&a, &b, "--output", &a], "--output "),
            (
                vec![&a, &b, "--output", &path("link.json")],
                "which it would write over",
            ),
            (
                vec![&a, &results, "--svg", &path("results/x.json")],
                "is the input",
            ),
            (vec![&a, &b, "--output", &path("hard.json")], "is the input"),
            (
                vec![&a, &b, "--svg", &path("c"), "--output", &path("./c")],
                "the same file as --output",
            ),
        ] {
            let Err(e) = options(&argv) else {
                panic!("{argv:?} passed")
            };
            assert_eq!(e.exit_code(), 2, "{argv:?}: {e}");
            assert!(e.to_string().contains(want), "{argv:?}: {e}");
        }
        let fine = [
            &a,
            &results,
            "--svg",
            &path("c.svg"),
            "--output",
            &path("results/y.json"),
        ];
        assert!(options(&fine).is_ok());
        let both = [
            &a,
            &b,
            "--svg",
            &path("a.json.svg"),
            "--output",
            &path("a.json.txt"),
        ];
        assert!(options(&both).is_ok());
        assert!(options(&[&a, &b, "--svg", "/dev/stdout", "--output", "/dev/stdout"]).is_ok());
    }

    #[test]
    fn the_files_must_be_given_and_there() {
        let Err(e) = options(&[]) else {
            panic!("no files passed")
        };
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("no result files given"), "{e}");
        let Err(e) = options(&[THERE, "/nonexistent/new.json"]) else {
            panic!("a missing file passed")
        };
        assert_eq!(e.exit_code(), 1);
        assert_eq!(e.to_string(), "/nonexistent/new.json: no such file");
    }
}
