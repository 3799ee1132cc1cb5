//! bb-compare's flags checked: the result files (at least one, each there) and how they
//! are judged. A bad flag is a usage error (exit 2) that names it; argh's parsers
//! ([`super::args`]) refuse a bad `--alpha`, `--threshold`, `--format`, `--output`,
//! `--svg`, `--ignore-params` or `--max-input` value themselves.

use super::args::Args;
use super::table::TableFormat;
use super::Criteria;
use crate::util::error::{Error, Result};
use std::path::PathBuf;

/// A comparison, checked.
pub struct Options {
    /// `--env`: print this machine's environment record instead; nothing else is read.
    pub env: bool,
    /// The result files or results directories; the first is the base.
    pub files: Vec<PathBuf>,
    pub criteria: Criteria,
    pub format: Option<TableFormat>,
    pub output: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    /// The secondary metric compared instead of the primary score.
    pub metric: Option<String>,
    /// The largest result file read, in bytes.
    pub max_input: u64,
}

impl Options {
    pub fn from_args(args: &Args) -> Result<Options> {
        if !args.env {
            if args.files.is_empty() {
                return Err(Error::usage(
                    "no result files given (bb-compare BASE.json NEW.json ...; see --help)",
                ));
            }
            if let Some(path) = args.files.iter().find(|p| !p.exists()) {
                return Err(Error::failed(format!("{}: no such file", path.display())));
            }
        }
        Ok(Options {
            env: args.env,
            files: args.files.clone(),
            criteria: Criteria {
                alpha: args.alpha,
                threshold: args.threshold,
                ignore_params: args.ignore_params.clone().unwrap_or_default(),
            },
            format: args.format,
            output: args.output.clone(),
            svg: args.svg.clone(),
            metric: args.metric.clone(),
            max_input: args.max_input,
        })
    }
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
