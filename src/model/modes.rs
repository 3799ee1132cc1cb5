//! How a run measures and reports, as data: JMH's modes, the three profiles, the report
//! formats, and the parsers of their names.

use crate::util::error::{Error, Result};

/// How the harness measures, named as in JMH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Operations per second over a timed iteration.
    Throughput,
    /// Time per operation over a timed iteration.
    AverageTime,
    /// One invocation per iteration, cold: time per operation.
    SingleShot,
    /// Every invocation timed on its own: a latency distribution.
    Sample,
}

impl Mode {
    /// JMH's short name: thrpt, avgt, ss, sample.
    pub fn short(self) -> &'static str {
        match self {
            Mode::Throughput => "thrpt",
            Mode::AverageTime => "avgt",
            Mode::SingleShot => "ss",
            Mode::Sample => "sample",
        }
    }

    /// Whether a bigger score is better (throughput) or worse (time per op).
    pub fn higher_is_better(self) -> bool {
        self == Mode::Throughput
    }
}

/// How long and how thorough a run is; the same three profiles on every binary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Profile {
    /// A smoke run: the whole binary in well under a minute.
    Quick,
    /// The default: sound statistics, the whole suite within about 15 minutes.
    #[default]
    Standard,
    /// JMH's habits, for a run left overnight.
    Full,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Standard => "standard",
            Profile::Full => "full",
        }
    }

    /// This profile's value among the three.
    pub fn pick<T>(self, quick: T, standard: T, full: T) -> T {
        match self {
            Profile::Quick => quick,
            Profile::Standard => standard,
            Profile::Full => full,
        }
    }

    /// The profile the switches `--quick`, `--standard` and `--full` choose: at most one.
    pub fn from_switches(quick: bool, standard: bool, full: bool) -> Result<Profile> {
        match (quick, standard, full) {
            (false, false, false) | (false, true, false) => Ok(Profile::Standard),
            (true, false, false) => Ok(Profile::Quick),
            (false, false, true) => Ok(Profile::Full),
            _ => Err(Error::usage(
                "--quick, --standard and --full choose one profile: give at most one",
            )),
        }
    }
}

/// The report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Json,
    /// JMH's `-rf json` with JMH's keys only, for readers that refuse unknown keys.
    Jmh,
    /// Ruby's Benchmark.bm layout: user, system, total and (real) per benchmark.
    Bm,
}

/// Parses `thrpt`, `avgt`, `ss` or `sample` (JMH's long names work too).
pub fn parse_mode(s: &str) -> std::result::Result<Mode, String> {
    match s {
        "thrpt" | "throughput" | "Throughput" => Ok(Mode::Throughput),
        "avgt" | "AverageTime" => Ok(Mode::AverageTime),
        "ss" | "SingleShotTime" => Ok(Mode::SingleShot),
        "sample" | "SampleTime" => Ok(Mode::Sample),
        _ => Err(format!(
            "unknown mode '{s}' (expected thrpt, avgt, ss or sample)"
        )),
    }
}

/// Parses `text`, `csv`, `json`, `jmh` or `bm`.
pub fn parse_format(s: &str) -> std::result::Result<Format, String> {
    match s {
        "text" => Ok(Format::Text),
        "csv" => Ok(Format::Csv),
        "json" => Ok(Format::Json),
        "jmh" => Ok(Format::Jmh),
        "bm" => Ok(Format::Bm),
        _ => Err(format!(
            "unknown format '{s}' (expected text, csv, json, jmh or bm)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_formats() {
        assert_eq!(parse_mode("thrpt"), Ok(Mode::Throughput));
        assert_eq!(parse_mode("sample"), Ok(Mode::Sample));
        assert!(parse_mode("fast").is_err());
        assert_eq!(parse_format("json"), Ok(Format::Json));
        assert_eq!(parse_format("jmh"), Ok(Format::Jmh));
        assert_eq!(parse_format("bm"), Ok(Format::Bm));
        assert!(parse_format("xml").unwrap_err().contains("'xml'"));
    }
}
