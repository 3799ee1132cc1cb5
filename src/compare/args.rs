//! bb-compare's flags: [`Args`], as argh parses them (their checks are
//! [`super::options`]'s).

use super::{load, table};
use crate::harness::cli;
use crate::util::file as output_file;
use std::path::PathBuf;

#[derive(argh::FromArgs, Debug)]
/// Compare benchmark results (boardbench JSON, JMH -rf json, or run-all results
/// directories), each against the first: ratio with its honest error (over forks) and a
/// verdict. Exit 1 when a result is slower beyond the threshold and beyond noise.
#[argh(
    example = "bb-compare base.json new.json\nbb-compare results/pi4-*/ results/pi5-*/ --format markdown\nbb-compare a.json b.json c.json --svg chart.svg --ignore-params threads",
    note = "Verdicts: faster or slower (beyond --threshold and beyond noise), same (within --threshold), noise (beyond it but within noise), ? (a ratio that is not a number).\nThe fork is the unit: with 3 forks or more a side, Welch's test over the fork means (p < --alpha); with fewer, p shows 'band': the ratio's interval, from the noise band A/A runs of one fork measured (the file's boardbench.noiseBand, its binary's own; 25% for a file without one) or two forks' spread where wider, must leave out 1. Iterations and samples are never pooled for the test.\nExit codes: 0 no regression, 1 something is slower, 2 bad flags or a malformed file."
)]
pub struct Args {
    /// result files or results directories; the first is the base (an A/B run's file,
    /// from --against, is its two runs: the other build first)
    #[argh(positional)]
    pub files: Vec<PathBuf>,
    /// significance level of Welch's test over fork means (default 0.01)
    #[argh(option, default = "0.01", from_str_fn(parse_alpha))]
    pub alpha: f64,
    /// changes up to this percentage count as no change (default 5%)
    #[argh(
        option,
        default = "0.05",
        from_str_fn(crate::util::parse::parse_percent)
    )]
    pub threshold: f64,
    /// report format: text, csv, json, markdown, or gab-bigger and gab-smaller
    /// (github-action-benchmark's custom JSON, the last file's rows of one direction, each
    /// named by its row alone); default text, or from --output's extension
    #[argh(option, from_str_fn(table::parse_table_format))]
    pub format: Option<table::TableFormat>,
    /// write the report to this file (atomically); the text table still goes to stdout
    #[argh(option, from_str_fn(output_file::parse_output))]
    pub output: Option<PathBuf>,
    /// write a chart to this SVG file (atomically)
    #[argh(option, from_str_fn(output_file::parse_output))]
    pub svg: Option<PathBuf>,
    /// params left out of matching, a list (threads,input): boards with other core counts;
    /// threads covers JMH's top-level threads too
    #[argh(option, from_str_fn(parse_names))]
    pub ignore_params: Option<Vec<String>>,
    /// compare this secondary metric instead of the primary score (MB/s, gc.alloc.rate,
    /// p0.99 or ·p0.99); JMH's · prefixes need not be typed
    #[argh(option)]
    pub metric: Option<String>,
    /// the largest result file to read (default 64m)
    #[argh(
        option,
        default = "load::DEFAULT_MAX_INPUT",
        from_str_fn(crate::harness::cli::parse_size)
    )]
    pub max_input: u64,
    /// write this board's noise profile to this file from the runs given, which are runs
    /// of one build on this board (run-all.sh --calibrate runs three and calls this):
    /// each binary's run floor and band of a lone fork, which the binaries then use
    #[argh(option, from_str_fn(output_file::parse_output))]
    pub calibrate: Option<PathBuf>,
    /// judge with this noise profile's run floors and bands the rows whose files carry
    /// no calibration of their own (default $BB_NOISE; a profile is its board's: give the
    /// one of the board the runs are from)
    #[argh(option)]
    pub noise: Option<PathBuf>,
    /// print this machine's environment record as JSON and exit (run-all's env.json)
    #[argh(switch)]
    pub env: bool,
    /// judge rows flagged as they ran (throttled, swapped, busy, ...) faster or slower all
    /// the same (default: such a row's verdict is flagged, never faster or slower)
    #[argh(switch)]
    pub accept_invalid: bool,
}

fn parse_alpha(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err(format!(
            "invalid alpha '{s}' (expected a number between 0 and 1, such as 0.01)"
        )),
    }
}

fn parse_names(s: &str) -> std::result::Result<Vec<String>, String> {
    cli::parse_list(s, |x| {
        if x.is_empty() {
            Err(format!("empty name in list '{s}'"))
        } else {
            Ok(x.to_string())
        }
    })
}
