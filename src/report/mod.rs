//! What boardbench writes: the reports, pure functions from results to text, one file
//! per format (hyperfine's exporters: `text`, `csv`, `json`, `bm`; numbers as JMH prints
//! them in `java`), the format from `--format` or the `--output` file's extension
//! ([`choose_format`]), and the one place that decides between stdout and a file
//! ([`deliver`]), which `util::file` writes atomically.

mod bm;
pub(crate) mod csv;
mod java;
mod json;
mod text;

pub use self::json::environment_document;

use crate::model::answer::Answer;
use crate::model::failure::Failure;
use crate::model::modes::Format;
use crate::model::result::BenchResult;
use crate::system::env::Environment;
use crate::util::error::{Error, Result};
use crate::util::file::{is_stdout, write_output, write_stdout};
use std::path::Path;

/// Parameter names in JMH's order, as its TreeMap and TreeSet keep them (Java's
/// `String.compareTo`: by UTF-16 code unit), each once: the params of the text table,
/// JSON and CSV alike.
pub(crate) fn jmh_param_order(keys: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut keys: Vec<String> = keys.into_iter().collect();
    keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    keys.dedup();
    keys
}

/// Renders `results` in `format`, with the benchmarks that `failed` where the format has
/// room for them (text and JSON; CSV, bm and JMH's own JSON leave them out).
fn render(
    format: Format,
    results: &[BenchResult],
    failed: &[Failure],
    env: &Environment,
    answer: Option<&Answer>,
) -> String {
    match format {
        Format::Text => text::render(results, failed, answer),
        Format::Csv => csv::render(&both_builds(results)),
        Format::Json => json::render(results, failed, env, answer),
        Format::Jmh => json::render_jmh(&both_builds(results)),
        Format::Bm => bm::render(&both_builds(results)),
    }
}

/// The rows of formats that have no place for an A/B run's other build but their params
/// (JMH's table, CSV, JMH's own JSON, bm): each row of an A/B run twice, this build's and
/// the other's, with a `build` param, `this` or `against`. A run without one is as it is.
pub(crate) fn both_builds(results: &[BenchResult]) -> Vec<BenchResult> {
    let marked = |r: &BenchResult, build: &str| {
        let mut r = r.clone();
        r.versus = None;
        r.params.push(("build".into(), build.into()));
        r
    };
    results
        .iter()
        .flat_map(|r| match &r.versus {
            Some(v) => vec![marked(r, "this"), marked(&v.result, "against")],
            None => vec![r.clone()],
        })
        .collect()
}

/// A report format that a file's extension can choose, as `--output r.json` does.
pub trait ReportFormat: Copy {
    /// The table people read, on stdout beside a file and when nothing else is chosen.
    const TEXT: Self;
    /// The format a file with this extension (without the dot) is written in.
    fn from_extension(extension: &str) -> Option<Self>;
}

impl ReportFormat for Format {
    const TEXT: Self = Format::Text;
    fn from_extension(extension: &str) -> Option<Self> {
        match extension {
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

/// The format a person asked for: `--format`, else the `--output` file's extension, else text.
pub(crate) fn choose_format<F: ReportFormat>(format: Option<F>, output: Option<&Path>) -> F {
    format.unwrap_or_else(|| {
        output
            .and_then(Path::extension)
            .and_then(|e| e.to_str())
            .and_then(F::from_extension)
            .unwrap_or(F::TEXT)
    })
}

/// Writes a report where it was asked for, the same way in every binary: without
/// `output`, the chosen format on stdout; with it, the chosen format to that file (see
/// [`write_output`]) and then the text table on stdout, unless the file is stdout itself.
/// The file is written first, so that a closed stdout cannot lose it, and the table is
/// printed even when the file cannot be written, so that the measurement is not lost.
pub fn deliver<F: ReportFormat>(
    format: Option<F>,
    output: Option<&Path>,
    render: impl Fn(F) -> String,
) -> Result<()> {
    let format = choose_format(format, output);
    let Some(path) = output else {
        return print_stdout(&render(format));
    };
    if is_stdout(path) {
        return print_stdout(&render(format));
    }
    let written = write_output(path, render(format).as_bytes());
    print_stdout(&render(F::TEXT))?;
    written
}

/// Writes the benchmark report in `format` (`--format`) to `output` (`--output`), as
/// [`deliver`] does.
/// The text report ends with the run's answer, and the JSON report carries it.
pub(crate) fn emit(
    results: &[BenchResult],
    failed: &[Failure],
    env: &Environment,
    answer: Option<&Answer>,
    format: Option<Format>,
    output: Option<&Path>,
) -> Result<()> {
    deliver(format, output, |format| {
        render(format, results, failed, env, answer)
    })
}

/// Prints to stdout; a closed pipe (`| head`) ends the process quietly.
pub fn print_stdout(text: &str) -> Result<()> {
    write_stdout(text.as_bytes()).map_err(|e| Error::io("writing to stdout", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_follows_output_extension() {
        let csv = Some(Path::new("r.csv"));
        assert_eq!(choose_format::<Format>(None, csv), Format::Csv);
        assert_eq!(choose_format(Some(Format::Json), csv), Format::Json);
        assert_eq!(choose_format::<Format>(None, None), Format::Text);
    }
}
