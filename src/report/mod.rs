//! Reports: pure functions from results to text, one file per format (hyperfine's
//! exporters), and the one place that decides between stdout and a file.

mod bm;
mod csv;
mod json;
mod output;
mod text;

pub(crate) use self::csv::{num as csv_number, quote as csv_quote};
pub use self::json::environment_json;
pub use self::output::{check_output, is_stdout, parse_output, write_output};

use crate::cli::{CommonArgs, Format};
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::result::BenchResult;
use std::path::Path;
use std::time::Duration;

/// Renders `results` in `format`.
pub fn render(format: Format, results: &[BenchResult], env: &Environment) -> String {
    match format {
        Format::Text => text::render(results),
        Format::Csv => csv::render(results),
        Format::Json => json::render(results, env),
        Format::Bm => bm::render(results),
    }
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
pub fn choose_format<F: ReportFormat>(format: Option<F>, output: Option<&Path>) -> F {
    format.unwrap_or_else(|| {
        output
            .and_then(Path::extension)
            .and_then(|e| e.to_str())
            .and_then(F::from_extension)
            .unwrap_or(F::TEXT)
    })
}

/// The format a benchmark binary's flags ask for (see [`choose_format`]).
pub fn chosen_format(flags: &CommonArgs) -> Format {
    choose_format(flags.format, flags.output.as_deref())
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

/// Writes the benchmark report where the flags ask for it (see [`deliver`]).
pub fn emit(results: &[BenchResult], env: &Environment, flags: &CommonArgs) -> Result<()> {
    deliver(flags.format, flags.output.as_deref(), |format| {
        render(format, results, env)
    })
}

/// Prints to stdout; a closed pipe (`| head`) ends the process quietly.
pub fn print_stdout(text: &str) -> Result<()> {
    output::write_stdout(text.as_bytes()).map_err(|e| Error::io("writing to stdout", e))
}

/// `500ms`, `3s`, `90s`, `1m`: durations as the flags take them.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        if !d.as_micros().is_multiple_of(1000) {
            return format!("{}us", d.as_micros());
        }
        return format!("{ms}ms");
    }
    let s = d.as_secs_f64();
    if !ms.is_multiple_of(1000) {
        return format!("{s}s");
    }
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

/// A score with three decimals, or more significant digits for small values.
pub fn format_score(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    let a = v.abs();
    if a != 0.0 && a < 0.001 {
        format!("{v:.3e}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_flags_read_them() {
        for (d, s) in [
            (500, "500ms"),
            (3000, "3s"),
            (60_000, "1m"),
            (90_000, "90s"),
            (1500, "1.5s"),
        ] {
            assert_eq!(format_duration(Duration::from_millis(d)), s);
            assert_eq!(
                crate::cli::parse_duration(s).unwrap(),
                Duration::from_millis(d)
            );
        }
        assert_eq!(format_duration(Duration::from_micros(250)), "250us");
    }

    #[test]
    fn format_follows_output_extension() {
        let mut flags = CommonArgs {
            output: Some("r.csv".into()),
            ..Default::default()
        };
        assert_eq!(chosen_format(&flags), Format::Csv);
        flags.format = Some(Format::Json);
        assert_eq!(chosen_format(&flags), Format::Json);
        assert_eq!(chosen_format(&CommonArgs::default()), Format::Text);
        // bb-compare's formats are chosen the same way.
        use crate::compare::table::TableFormat;
        let md = Some(Path::new("report.md"));
        assert_eq!(
            choose_format::<TableFormat>(None, md),
            TableFormat::Markdown
        );
        let csv = Some(TableFormat::Csv);
        assert_eq!(choose_format(csv, md), TableFormat::Csv);
        assert_eq!(choose_format::<TableFormat>(None, None), TableFormat::Text);
    }
}
