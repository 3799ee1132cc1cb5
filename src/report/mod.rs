//! Reports: pure functions from results to text, one file per format (hyperfine's
//! exporters), and the one place that decides between stdout and a file.

mod bm;
mod csv;
mod json;
mod text;

pub(crate) use self::csv::{num as csv_number, quote as csv_quote};
pub use self::json::environment_json;

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

/// The format a person asked for: `--format`, else the `--output` file's extension, else text.
pub fn chosen_format(flags: &CommonArgs) -> Format {
    flags.format.unwrap_or_else(|| {
        match flags
            .output
            .as_deref()
            .and_then(Path::extension)
            .and_then(|e| e.to_str())
        {
            Some("json") => Format::Json,
            Some("csv") => Format::Csv,
            _ => Format::Text,
        }
    })
}

/// Writes the report where it was asked for: the chosen format to `--output` (atomically)
/// with the text table on stdout, or the chosen format on stdout.
pub fn emit(results: &[BenchResult], env: &Environment, flags: &CommonArgs) -> Result<()> {
    let format = chosen_format(flags);
    let stdout_format = if flags.output.is_some() {
        Format::Text
    } else {
        format
    };
    if let Some(path) = &flags.output {
        write_atomic(path, render(format, results, env).as_bytes())?;
    }
    print_stdout(&render(stdout_format, results, env))
}

/// Prints to stdout; a closed pipe (`| head`) ends the process quietly.
pub fn print_stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        r => r.map_err(|e| Error::io("writing to stdout", e)),
    }
}

/// Writes `bytes` to a temporary file beside `path`, syncs it and renames it over `path`,
/// so the file is either the old one or the whole new one, never half-written.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let name = path
        .file_name()
        .ok_or_else(|| Error::usage(format!("--output {}: not a file name", path.display())))?;
    let tmp = path.with_file_name(format!(
        ".{}.tmp.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(format!("writing {}", path.display()), e)
    })
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
    fn atomic_write_replaces_whole_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("bb-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.json");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new contents").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new contents");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let err = write_atomic(&dir.join("missing/x.json"), b"x").unwrap_err();
        assert!(err.to_string().contains("missing/x.json"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
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
    }
}
