//! Reading results for bb-compare: boardbench's JSON reports and JMH's own `-rf json`
//! files (the same layout), one file or a results directory of them. Every JMH file
//! reads right: sample mode from `rawDataHistogram`, every JMH unit, a UTF-8 byte order
//! mark; an empty file or one that is not an array of benchmarks is a clear error.
//! An A/B run's file (`--against`: each entry's `boardbench.build` says which build
//! measured it) is read as its two runs, the other build first.

use super::{Measurement, OfferedLoad, Samples};
use crate::model::noise::MAX_NOISE;
use crate::stats::welch::Moments;
use crate::util::error::{Error, Result};
use crate::util::file::read_regular;
use crate::util::json::Json;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The runs of one path, each with its label (`label`, or with the build of an A/B run):
/// a JSON file, or every `*.json` under a directory (run-all's results directory; its
/// `env.json` is the environment, not results).
pub fn load(path: &Path, label: &str) -> Result<Vec<(String, Vec<Measurement>)>> {
    load_metric(path, label, None, DEFAULT_MAX_INPUT)
}

/// The largest result file read by default: a JMH sample-mode file of a long run is a
/// few MiB; a bigger file is more likely a mistake than results.
pub const DEFAULT_MAX_INPUT: u64 = 64 << 20;

/// A result file's text: a regular file (a FIFO or a device would block or never end),
/// at most `max_bytes` long, and UTF-8 (anything else is not a JSON result file), read
/// through [`read_regular`]. Each refusal, a dangling symlink's included, is a usage
/// error: exit 2, never the 1 that means "slower" to a script; a missing file is the
/// 1 of a run that failed to make it.
fn read_result_file(file: &Path, max_bytes: u64) -> Result<String> {
    let limit = format!("--max-input {}", size(max_bytes));
    let bytes = match read_regular(file, &file.display().to_string(), max_bytes, &limit) {
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => {
            return Err(match std::fs::read_link(file) {
                // A symlink to nothing is bad input, as a FIFO is.
                Ok(to) => Error::usage(format!(
                    "{}: a dangling symlink (to {}), not a result file",
                    file.display(),
                    to.display()
                )),
                // A missing file: the run that should have made it failed (exit 1).
                Err(_) => Error::io(
                    format!("reading {}", file.display()),
                    std::io::Error::from_raw_os_error(libc::ENOENT),
                ),
            });
        }
        other => other?,
    };
    String::from_utf8(bytes).map_err(|e| {
        not_results(
            file,
            &format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// A size as a flag reads it back: `64 MiB`, `1 KiB`, `100 bytes`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// As [`load`], with `metric` (a secondary metric's name, see [`metric_matches`]) in
/// place of the primary metric; entries without it are left out, and a file where no
/// entry has it is an error that names the metrics it has.
/// Files larger than `max_bytes` are refused.
pub fn load_metric(
    path: &Path,
    label: &str,
    metric: Option<&str>,
    max_bytes: u64,
) -> Result<Vec<(String, Vec<Measurement>)>> {
    let files = if path.is_dir() {
        let walk = json_files_under(path)?;
        if let Some(note) = walk.skipped_note(path) {
            crate::util::terminal::warn(&note);
        }
        walk.files
    } else {
        vec![path.to_path_buf()]
    };
    if files.is_empty() {
        return Err(Error::usage(format!(
            "{}: no JSON result files in this directory",
            path.display()
        )));
    }
    let mut all = Vec::new();
    let mut found_metrics: Vec<String> = Vec::new();
    for file in files {
        let whole = read_result_file(&file, max_bytes)?;
        // JMH never writes a byte order mark, but an editor may.
        let text = whole.strip_prefix('\u{feff}').unwrap_or(&whole);
        if text.trim().is_empty() {
            // What a failed JMH run leaves behind.
            return Err(Error::usage(format!("empty file: {}", file.display())));
        }
        // Numbers packed (rawData can hold millions), and the text let go before the
        // samples are made from them: a small multiple of the file at any moment.
        let doc = Json::parse_compact(text).map_err(|why| not_results(&file, &why));
        drop(whole);
        let mut doc = doc?;
        found_metrics.extend(metric_names(&doc));
        all.extend(parse_doc(&mut doc, metric).map_err(|why| not_results(&file, &why))?);
    }
    if all.is_empty() {
        return Err(Error::usage(match metric {
            Some(m) => {
                found_metrics.sort();
                found_metrics.dedup();
                format!(
                    "{}: no benchmark has the metric '{m}' (its secondary metrics: {})",
                    path.display(),
                    if found_metrics.is_empty() {
                        "none".to_string()
                    } else {
                        found_metrics.join(", ")
                    }
                )
            }
            None => format!(
                "{}: no benchmark results (an empty array: JMH writes one when no benchmark ran)",
                path.display()
            ),
        }));
    }
    Ok(runs(label, all))
}

/// Which build of an A/B run (`--against`) measured an entry; the other build is the
/// base, so it sorts first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Side {
    Against,
    This,
}

/// An A/B run's entry's `boardbench.build`: the side, and the build's path as given.
#[derive(Debug, Clone, PartialEq)]
struct Build {
    side: Side,
    path: String,
}

/// An entry's `boardbench.build`: None where it has none (a one-run file).
fn build(e: &Json) -> std::result::Result<Option<Build>, String> {
    let Some(b) = e.get("boardbench").and_then(|ours| ours.get("build")) else {
        return Ok(None);
    };
    if !matches!(b, Json::Obj(_)) {
        return Err(format!("boardbench.build is {}, not an object", kind(b)));
    }
    let side = match b.get("side") {
        Some(Json::Str(s)) if s == "this" => Side::This,
        Some(Json::Str(s)) if s == "against" => Side::Against,
        Some(Json::Str(s)) => {
            return Err(format!(
                "boardbench.build.side is \"{s}\", not \"this\" or \"against\""
            ))
        }
        other => {
            return Err(format!(
                "boardbench.build.side is {}, not \"this\" or \"against\"",
                other.map_or("missing", kind)
            ))
        }
    };
    match b.get("path") {
        Some(Json::Str(path)) => Ok(Some(Build {
            side,
            path: path.clone(),
        })),
        other => Err(format!(
            "boardbench.build.path is {}, not a string",
            other.map_or("missing", kind)
        )),
    }
}

/// A path's measurements as its runs: those of no build, then an A/B run's other build
/// (the base) and this build. A side with no entry is no run.
fn runs(
    label: &str,
    entries: Vec<(Option<Build>, Measurement)>,
) -> Vec<(String, Vec<Measurement>)> {
    let mut runs: Vec<(Option<Side>, String, Vec<Measurement>)> = Vec::new();
    for (build, mut m) in entries {
        let side = build.as_ref().map(|b| b.side);
        // The two builds ran in one run, interleaved fork by fork: what whole runs
        // minutes apart differ by (the run floor) did not come between them.
        if side.is_some() {
            m.run_floor = Some(0.0);
        }
        match runs.iter_mut().find(|(s, _, _)| *s == side) {
            Some((_, _, ms)) => ms.push(m),
            None => runs.push((side, run_label(label, build.as_ref()), vec![m])),
        }
    }
    runs.sort_by_key(|(side, _, _)| *side);
    // Both builds there: this build's run comes right after the other's, and its forks
    // were run in pairs with that run's.
    let both = [Side::Against, Side::This].map(|s| runs.iter().any(|r| r.0 == Some(s)));
    if both == [true, true] {
        for (_, _, ms) in runs.iter_mut().filter(|r| r.0 == Some(Side::This)) {
            for m in ms {
                m.paired = true;
            }
        }
    }
    runs.into_iter().map(|(_, label, ms)| (label, ms)).collect()
}

/// A run's label: the path's `label`, with which build it is for an A/B run's
/// (`ab (./old/bb-zstd)`, `ab (this build)`; the other's path from its first entry,
/// escaped for the terminal).
fn run_label(label: &str, build: Option<&Build>) -> String {
    match build {
        None => label.to_string(),
        Some(b) if b.side == Side::This => format!("{label} (this build)"),
        Some(b) if b.path.is_empty() => format!("{label} (other build)"),
        Some(b) => format!("{label} ({})", crate::util::format::printable(&b.path)),
    }
}

fn not_results(file: &Path, why: &str) -> Error {
    Error::usage(format!(
        "{}: not a JMH/boardbench JSON result file: {why}",
        file.display()
    ))
}

/// Whether a secondary metric named `key` in a file is the metric `wanted`: the same
/// name, or the same after JMH's prefixes, so that `gc.alloc.rate` finds JMH 1.21's
/// `·gc.alloc.rate` and `p0.99` (or `·p0.99`) finds both `method·p0.99` and JMH 1.37's
/// `p0.99`.
pub fn metric_matches(key: &str, wanted: &str) -> bool {
    key == wanted || bare_metric(key) == bare_metric(wanted)
}

/// A secondary metric's name without JMH's prefix (`·gc.alloc.rate`, `method·p0.99`).
pub fn bare_metric(name: &str) -> &str {
    name.rsplit('\u{b7}').next().unwrap_or(name)
}

/// Whether a bigger value of the secondary metric `name` in `unit` is better: rates
/// (`ops/s`, `MB/s`, `calls/s`) and `speedup`, `efficiency` are; times, per-op amounts
/// (`B/op`), counts, ratios to a baseline (`vs floor`) and the gc profiler's metrics
/// (allocation and churn rates included) are not.
pub fn metric_higher_is_better(name: &str, unit: &str) -> bool {
    let name = bare_metric(name);
    if name.starts_with("gc.") {
        return false;
    }
    if matches!(name, "speedup" | "efficiency") {
        return true;
    }
    if unit.starts_with("ops/") {
        return true;
    }
    match unit.rsplit_once('/') {
        Some((_, per)) => per != "op" && super::seconds_in(per).is_some(),
        None => false,
    }
}

/// The names of the secondary metrics of a document's entries.
fn metric_names(doc: &Json) -> Vec<String> {
    doc.as_array()
        .unwrap_or_default()
        .iter()
        .filter_map(|e| match e.get("secondaryMetrics") {
            Some(Json::Obj(pairs)) => Some(pairs.iter().map(|(k, _)| k.clone())),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Column names: the paths as given without `.json` or a trailing slash, less the
/// leading directories they all share (`results/pi4/`, `results/pi5/` → `pi4`, `pi5`).
pub fn column_labels(paths: &[PathBuf]) -> Vec<String> {
    let parts: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            let s = p.to_string_lossy();
            let s = s.trim_end_matches('/');
            let s = s.strip_suffix(".json").unwrap_or(s);
            s.split('/')
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect()
        })
        .collect();
    let shortest = parts.iter().map(Vec::len).min().unwrap_or(1);
    let shared = (0..shortest - 1)
        .take_while(|&i| parts.iter().all(|p| p[i] == parts[0][i]))
        .count();
    let shared = if paths.len() > 1 { shared } else { 0 };
    parts.iter().map(|p| p[shared..].join("/")).collect()
}

/// How deep a results directory is walked: run-all's is one level, a fleet's two.
pub const MAX_DEPTH: usize = 16;

/// The most result files one directory gives: a fleet of boards is a few hundred.
pub const MAX_FILES: usize = 10_000;

/// The result files of a directory, and what the walk left out.
#[derive(Debug, Default)]
struct Walk {
    files: Vec<PathBuf>,
    /// Directories (or files) reached again through a symlink: each is read once.
    again: Vec<PathBuf>,
    /// Directories deeper than [`MAX_DEPTH`].
    deep: Vec<PathBuf>,
    /// Whether files past [`MAX_FILES`] were left out.
    full: bool,
}

impl Walk {
    /// One line saying what was skipped, naming the first of each kind; None when
    /// nothing was.
    fn skipped_note(&self, dir: &Path) -> Option<String> {
        let first = |v: &[PathBuf], what: &str| {
            v.first().map(|p| {
                let more = match v.len() {
                    1 => String::new(),
                    n => format!(" and {} more", n - 1),
                };
                format!(
                    "{what} ({}{more})",
                    crate::util::format::printable(&p.display().to_string())
                )
            })
        };
        let parts: Vec<String> = [
            first(&self.again, "already read through another path"),
            first(&self.deep, &format!("deeper than {MAX_DEPTH} directories")),
            self.full
                .then(|| format!("past the first {MAX_FILES} files")),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| {
            format!(
                "{}: skipped what was {}",
                crate::util::format::printable(&dir.display().to_string()),
                parts.join("; ")
            )
        })
    }
}

/// Every `*.json` file under `dir` except `env.json`, sorted, subdirectories included:
/// each real directory and file once (by device and inode, so that a symlink to `.` or
/// to a parent ends), at most [`MAX_DEPTH`] deep and [`MAX_FILES`] files.
fn json_files_under(dir: &Path) -> Result<Walk> {
    let mut walk = Walk::default();
    let mut seen = std::collections::HashSet::new();
    let id = |m: &std::fs::Metadata| (m.dev(), m.ino());
    let top = std::fs::metadata(dir)
        .map_err(|e| Error::io(format!("reading {}", dir.display()), e).as_usage())?;
    seen.insert(id(&top));
    // Depth first, each directory's entries in name order.
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((at, depth)) = stack.pop() {
        let entries = std::fs::read_dir(&at)
            .map_err(|e| Error::io(format!("reading {}", at.display()), e).as_usage())?;
        let mut paths = entries
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|e| Error::io(format!("reading {}", at.display()), e).as_usage())?;
        paths.sort();
        let mut subdirs = Vec::new();
        for path in paths {
            let json = path.extension().is_some_and(|e| e == "json")
                && path.file_name().is_some_and(|n| n != "env.json");
            // Symlinks followed; a dangling one named *.json is read, and refused, as
            // the input it claims to be.
            let meta = std::fs::metadata(&path).ok();
            let is_dir = meta.as_ref().is_some_and(std::fs::Metadata::is_dir);
            if !is_dir && !json {
                continue;
            }
            if let Some(m) = &meta {
                if !seen.insert(id(m)) {
                    walk.again.push(path);
                    continue;
                }
            }
            if is_dir {
                if depth + 1 > MAX_DEPTH {
                    walk.deep.push(path);
                } else {
                    subdirs.push((path, depth + 1));
                }
            } else if walk.files.len() < MAX_FILES {
                walk.files.push(path);
            } else {
                walk.full = true;
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    walk.files.sort();
    Ok(walk)
}

/// Parses a JSON result document: an array of JMH entries (both builds' of an A/B run).
/// The error says what is wrong and in which entry.
pub fn parse(text: &str) -> std::result::Result<Vec<Measurement>, String> {
    let entries = parse_doc(&mut Json::parse_compact(text)?, None)?;
    Ok(entries.into_iter().map(|(_, m)| m).collect())
}

/// What a JSON value is, for messages.
fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Num(_) => "a number",
        Json::Str(_) => "a string",
        Json::Arr(_) | Json::Nums(_) | Json::Pairs(_) => "an array",
        Json::Obj(_) => "an object",
    }
}

/// Reads a document's measurements, each with the build that measured it where the file
/// is an A/B run's; the raw data is moved out of it rather than copied.
fn parse_doc(
    doc: &mut Json,
    metric: Option<&str>,
) -> std::result::Result<Vec<(Option<Build>, Measurement)>, String> {
    // Packed, the entries are numbers or pairs: never benchmark objects.
    match doc {
        Json::Nums(_) => return Err("entry 1: expected a benchmark object, found a number".into()),
        Json::Pairs(_) => return Err("entry 1: expected a benchmark object, found an array".into()),
        _ => {}
    }
    let Json::Arr(entries) = doc else {
        let what = if doc.get("rows").is_some() && doc.get("files").is_some() {
            " (bb-compare's own report, not a result file)"
        } else {
            ""
        };
        return Err(format!(
            "expected a JSON array of benchmark entries, found {}{what}",
            kind(doc)
        ));
    };
    let mut out = Vec::new();
    for (i, e) in entries.iter_mut().enumerate() {
        // Names from the file (a benchmark's, a param's) may hold escaped control
        // characters: every entry's error is made printable here.
        let at = |why: String| crate::util::format::printable(&format!("entry {}: {why}", i + 1));
        if !matches!(e, Json::Obj(_)) {
            return Err(at(format!(
                "expected a benchmark object, found {}",
                kind(e)
            )));
        }
        if e.get("benchmark").is_none() && e.get("name").is_some() && e.get("value").is_some() {
            return Err(at(
                "missing \"benchmark\" (this is github-action-benchmark's custom format, not a JMH result)"
                    .into(),
            ));
        }
        let build = build(e).map_err(at)?;
        let raw = take_raw_data(e, metric);
        if let Some(m) = entry(e, metric, raw).map_err(at)? {
            out.push((build, m));
        }
    }
    Ok(out)
}

/// The `rawData` of an entry's metric (its primary one, or the first secondary one that
/// matches `metric`), taken out of it: millions of values are moved, not copied.
fn take_raw_data(e: &mut Json, metric: Option<&str>) -> Option<Json> {
    let data = match metric {
        None => e.get_mut("primaryMetric")?,
        Some(wanted) => match e.get_mut("secondaryMetrics")? {
            Json::Obj(pairs) => &mut pairs.iter_mut().find(|(k, _)| metric_matches(k, wanted))?.1,
            _ => return None,
        },
    };
    data.get_mut("rawData")
        .map(|v| std::mem::replace(v, Json::Null))
}

/// One entry's measurement: its primary metric, or `metric` (None when it lacks it);
/// `raw` is its metric's `rawData`, taken out of it.
fn entry(
    e: &Json,
    metric: Option<&str>,
    raw: Option<Json>,
) -> std::result::Result<Option<Measurement>, String> {
    let text = |key: &str| {
        e.get(key)
            .and_then(Json::as_str)
            .map(String::from)
            .ok_or(format!("missing \"{key}\""))
    };
    // Names, params and units reach the terminal and the SVG: control characters (a
    // terminal's escapes, a forged line) are escaped here, once.
    use crate::util::format::printable;
    let benchmark = printable(&text("benchmark")?);
    let mode = text("mode")?;
    let higher_is_better = crate::harness::cli::parse_mode(&mode)?.higher_is_better();
    let params = match e.get("params") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Obj(pairs)) => pairs
            .iter()
            .map(|(k, v)| match v {
                Json::Str(s) => Ok((printable(k), printable(s))),
                Json::Num(n) => Ok((printable(k), n.to_string())),
                _ => Err(format!("param \"{k}\" is not a string")),
            })
            .collect::<std::result::Result<_, _>>()?,
        Some(_) => return Err("\"params\" is not an object".into()),
    };
    let threads = match e.get("threads") {
        None | Some(Json::Null) => None,
        Some(t) => Some(
            t.as_f64()
                .filter(|t| *t >= 0.0 && t.fract() == 0.0)
                .ok_or("\"threads\" is not a whole number")? as u64,
        ),
    };
    let primary = e.get("primaryMetric").ok_or("missing \"primaryMetric\"")?;
    let (what, data, benchmark, higher_is_better) = match metric {
        None => (
            "primaryMetric".to_string(),
            primary,
            benchmark,
            higher_is_better,
        ),
        Some(wanted) => {
            let found = match e.get("secondaryMetrics") {
                Some(Json::Obj(pairs)) => pairs.iter().find(|(k, _)| metric_matches(k, wanted)),
                _ => None,
            };
            let Some((key, data)) = found else {
                return Ok(None);
            };
            let unit = data.get("scoreUnit").and_then(Json::as_str).unwrap_or("");
            (
                format!("secondaryMetrics \"{key}\""),
                data,
                format!("{benchmark}:{}", bare_metric(wanted)),
                metric_higher_is_better(key, unit),
            )
        }
    };
    let number = |key: &str| {
        data.get(key)
            .and_then(Json::as_f64)
            .ok_or(format!("{what}: \"{key}\" is not a number"))
    };
    let mut score = number("score")?;
    // JMH writes "NaN" for an error it cannot compute; an absent one is the same.
    let mut error = data
        .get("scoreError")
        .map_or(Ok(f64::NAN), |_| number("scoreError"))?;
    let unit = data
        .get("scoreUnit")
        .and_then(Json::as_str)
        .map(printable)
        .ok_or(format!("{what}: missing \"scoreUnit\""))?;
    let samples = match data.get("rawDataHistogram").filter(|h| **h != Json::Null) {
        Some(h) => {
            let samples = histogram(h).map_err(|why| format!("{what}: {why}"))?;
            // The mean and its error from every sample, count-weighted, as JMH's own.
            if samples.count() > 0 {
                (score, error) = samples.mean_and_error();
            }
            samples
        }
        None => raw_data(raw).map_err(|why| format!("{what}: {why}"))?,
    };
    Ok(Some(Measurement {
        benchmark,
        mode,
        higher_is_better,
        params,
        threads,
        score,
        error,
        unit,
        samples,
        offered_load: offered_load(e),
        noise_band: ours(e, "noiseBand").map_err(|why| format!("{what}: {why}"))?,
        run_floor: ours(e, "runFloor").map_err(|why| format!("{what}: {why}"))?,
        calibrated: e
            .get("boardbench")
            .and_then(|b| b.get("noiseSource"))
            .and_then(Json::as_str)
            == Some("calibration"),
        flags: flags(e),
        // The record is of the primary score's pairs; a secondary metric's pairs are
        // read from its own forks.
        against: metric
            .is_none()
            .then(|| e.get("boardbench")?.get("against"))
            .flatten()
            .map(super::paired::Recorded::read)
            .transpose()
            .map_err(|why| format!("{what}: boardbench.against: {why}"))?
            .flatten(),
        paired: false,
    }))
}

/// boardbench's `flags` of an entry: at most 16, each a name this build knows or cut to
/// 32 printable characters; none for a file without them.
fn flags(e: &Json) -> Vec<String> {
    let Some(Json::Arr(names)) = e.get("boardbench").and_then(|b| b.get("flags")) else {
        return vec![];
    };
    names
        .iter()
        .filter_map(Json::as_str)
        .take(16)
        .map(|n| match crate::system::validity::Flag::parse(n) {
            Some(f) => f.name().to_string(),
            // Still a flag (the row is not judged), but one a reader can see.
            None if n.trim().is_empty() => "unnamed".to_string(),
            None => crate::util::format::printable(&n.chars().take(32).collect::<String>()),
        })
        .collect()
}

/// A number of boardbench's own about the row's noise (`boardbench.KEY`: `noiseBand`,
/// `runFloor`): a relative figure from 0 to [`MAX_NOISE`] (a calibrated band of a lone
/// fork on a noisy board passes 1: ×2.5), where 0 says nothing (the default is kept). Both are
/// relative and the row's, measured where its forks ran: a secondary metric (`--metric`)
/// comes from the same forks and runs, so it carries them as the primary score does,
/// never the defaults. One past its range is refused, not obeyed: a floor of 1e308
/// would have silenced every verdict.
fn ours(e: &Json, key: &str) -> std::result::Result<Option<f64>, String> {
    let Some(v) = e.get("boardbench").and_then(|b| b.get(key)) else {
        return Ok(None);
    };
    match v.as_f64() {
        None if *v == Json::Null => Ok(None),
        Some(v) if (0.0..=MAX_NOISE).contains(&v) => Ok((v > 0.0).then_some(v)),
        _ => Err(format!(
            "boardbench.{key} is not a relative figure from 0 to {MAX_NOISE}"
        )),
    }
}

/// boardbench's `offeredLoad` of an open loop (`targetRate`, `achievedRate`); None for
/// any other entry, and for one whose rates are not numbers.
fn offered_load(e: &Json) -> Option<OfferedLoad> {
    let load = e.get("boardbench")?.get("offeredLoad")?;
    Some(OfferedLoad {
        target: load.get("targetRate")?.as_f64()?,
        achieved: load.get("achievedRate")?.as_f64()?,
    })
}

/// A `[value, count]` pair, either half None where it is not a number.
type Pair = (Option<f64>, Option<f64>);

/// The `[value, count]` pairs of an array, compact ([`Json::Pairs`]) or not: None when
/// it is not an array, Some(None) for an item that is not a pair of numbers.
fn pairs(v: &Json) -> Option<Box<dyn Iterator<Item = Option<Pair>> + '_>> {
    match v {
        Json::Pairs(ps) => Some(Box::new(ps.iter().map(|p| Some((Some(p[0]), Some(p[1])))))),
        Json::Arr(items) => Some(Box::new(items.iter().map(|pair| match pair {
            Json::Nums(p) if p.len() == 2 => Some((Some(p[0]), Some(p[1]))),
            Json::Arr(p) if p.len() == 2 => Some((p[0].as_f64(), p[1].as_f64())),
            _ => None,
        }))),
        _ => None,
    }
}

/// JMH's `rawData`: per fork, one score per iteration; NaN and infinities left out.
/// A packed fork's numbers are kept where they are.
fn raw_data(v: Option<Json>) -> std::result::Result<Samples, String> {
    let mut forks = Vec::new();
    let finite = |mut values: Vec<f64>| {
        values.retain(|v| v.is_finite());
        values
    };
    match v {
        None | Some(Json::Null) => {}
        Some(Json::Pairs(ps)) => {
            // Forks of two iterations each, packed.
            forks = ps.into_iter().map(|p| finite(p.to_vec())).collect();
        }
        Some(Json::Arr(items)) => {
            for fork in items {
                let values = match fork {
                    Json::Nums(ns) => ns,
                    Json::Arr(items) => items
                        .iter()
                        .map(|v| {
                            v.as_f64()
                                .ok_or("rawData holds a value that is not a number")
                        })
                        .collect::<std::result::Result<_, _>>()?,
                    _ => return Err("rawData is not an array of arrays".into()),
                };
                forks.push(finite(values));
            }
        }
        Some(Json::Nums(_)) => return Err("rawData is not an array of arrays".into()),
        Some(_) => return Err("rawData is not an array".into()),
    }
    Ok(Samples::iterations(forks))
}

/// JMH's `rawDataHistogram`: per fork, per iteration, `[value, count]` pairs; the
/// iterations of a fork are pooled.
/// The largest count of one value a histogram may hold: every integer up to it is exact
/// in a double.
const MOST_SAMPLES: f64 = 9_007_199_254_740_992.0;

fn histogram(v: &Json) -> std::result::Result<Samples, String> {
    let bad = "rawDataHistogram is not [fork][iteration][[value, count], ...]";
    let mut forks = Vec::new();
    let mut iteration_means = Vec::new();
    for fork in v.as_array().ok_or(bad)? {
        let mut pairs_of_fork = Vec::new();
        let mut means = Vec::new();
        for iteration in fork.as_array().ok_or(bad)? {
            let first = pairs_of_fork.len();
            for pair in pairs(iteration).ok_or(bad)? {
                let (value, count) = pair.ok_or(bad)?;
                let (Some(value), Some(count)) = (value, count) else {
                    return Err(
                        "rawDataHistogram holds a value or count that is not a number".into(),
                    );
                };
                // A count is a whole number of samples, and one a run could hold.
                if !(count >= 0.0 && count.fract() == 0.0 && count <= MOST_SAMPLES) {
                    return Err(format!(
                        "rawDataHistogram holds a count of {count}, not a whole number of samples (0 to 2^53)"
                    ));
                }
                if value.is_finite() && count >= 1.0 {
                    pairs_of_fork.push((value, count as u64));
                }
            }
            let mean = Moments::of(pairs_of_fork[first..].iter().copied()).mean;
            if mean.is_finite() {
                means.push(mean);
            }
        }
        forks.push(pairs_of_fork);
        iteration_means.push(means);
    }
    Ok(Samples::buckets(forks, iteration_means))
}

#[cfg(test)]
mod tests {
    use super::super::{Test, Verdict};
    use super::*;
    use crate::stats::uncertainty::Basis;

    #[test]
    fn reads_jmh_entries_with_nan_strings_and_numeric_params() {
        let text = r#"[{"jmhVersion":"1.37","benchmark":"org.x.Rpc.sync","mode":"avgt",
            "threads":1,"forks":1,"params":{"size":1024,"codec":"proto"},
            "primaryMetric":{"score":12.5,"scoreError":"NaN","scoreConfidence":["NaN","NaN"],
            "scoreUnit":"us/op","rawData":[[12.0,13.0],["NaN"]]},"secondaryMetrics":{}}]"#;
        let m = &parse(text).unwrap()[0];
        assert_eq!(m.benchmark, "org.x.Rpc.sync");
        assert!(!m.higher_is_better);
        assert_eq!(
            m.params,
            vec![
                ("size".to_string(), "1024".to_string()),
                ("codec".to_string(), "proto".to_string())
            ]
        );
        assert!(m.error.is_nan());
        assert_eq!(m.unit, "us/op");
        assert_eq!(m.threads, Some(1));
        assert_eq!(
            m.samples,
            Samples::iterations(vec![vec![12.0, 13.0], vec![]])
        );
    }

    #[test]
    fn sample_mode_reads_the_histogram_count_weighted() {
        let text = r#"[{"benchmark":"org.x.B.lat","mode":"sample","threads":2,
            "primaryMetric":{"score":99.0,"scoreError":"NaN","scoreUnit":"ns/op",
            "rawDataHistogram":[[[[10.0,3],[20.0,1]],[[10.0,4]]],[[[30.0,2]]]]},
            "secondaryMetrics":{"lat·p0.99":{"score":30.0,"scoreError":"NaN",
            "scoreUnit":"ns/op","rawData":[[20.0,10.0],[30.0]]}}}]"#;
        let m = &parse(text).unwrap()[0];
        assert_eq!(m.samples.count(), 10);
        assert_eq!(m.samples.forks.len(), 2, "iterations pooled per fork");
        assert_eq!(
            m.samples.iteration_means,
            [vec![12.5, 10.0], vec![30.0]],
            "each iteration's mean kept"
        );
        assert_eq!(m.score, 15.0, "(70 + 20 + 60) / 10, not the file's 99");
        assert!(m.error.is_finite() && m.error > 0.0);
        assert_eq!(m.threads, Some(2));
        let mut doc = Json::parse_compact(text).unwrap();
        for wanted in ["p0.99", "·p0.99", "lat·p0.99"] {
            let p = &parse_doc(&mut doc.clone(), Some(wanted)).unwrap()[0].1;
            assert_eq!(p.benchmark, "org.x.B.lat:p0.99", "{wanted}");
            assert_eq!(p.score, 30.0);
            assert!(!p.higher_is_better);
            assert_eq!(
                p.samples,
                Samples::iterations(vec![vec![20.0, 10.0], vec![30.0]])
            );
        }
        assert!(parse_doc(&mut doc, Some("p0.50")).unwrap().is_empty());
        assert_eq!(m.offered_load, None, "JMH offers no load");
        let open = text.replace(
            r#""secondaryMetrics":{"#,
            r#""boardbench":{"offeredLoad":{"targetRate":200,"achievedRate":150.5,"saturated":true}},"secondaryMetrics":{"#,
        );
        let load = parse(&open).unwrap()[0].offered_load.unwrap();
        assert_eq!((load.target, load.achieved), (200.0, 150.5));
        assert!(load.saturated());
    }

    #[test]
    fn a_secondary_metric_keeps_the_rows_noise_band_and_run_floor() {
        let text = r#"[{"benchmark":"bb.zstd.compress","mode":"thrpt",
            "primaryMetric":{"score":10.0,"scoreUnit":"ops/s","rawData":[[10.0]]},
            "secondaryMetrics":{"MB/s":{"score":120.0,"scoreUnit":"MB/s",
            "rawData":[[120.0]]}},"boardbench":{"noiseBand":0.05,"runFloor":0.17}}]"#;
        let mut doc = Json::parse_compact(text).unwrap();
        let primary = &parse_doc(&mut doc.clone(), None).unwrap()[0].1;
        let metric = &parse_doc(&mut doc, Some("MB/s")).unwrap()[0].1;
        assert_eq!(metric.benchmark, "bb.zstd.compress:MB/s");
        for m in [primary, metric] {
            assert_eq!((m.noise_band, m.run_floor), (Some(0.05), Some(0.17)));
        }
        // A file without them (JMH's) leaves both to bb-compare's defaults.
        let bare = text.replace(r#","boardbench":{"noiseBand":0.05,"runFloor":0.17}"#, "");
        let mut doc = Json::parse_compact(&bare).unwrap();
        let m = &parse_doc(&mut doc, Some("MB/s")).unwrap()[0].1;
        assert_eq!((m.noise_band, m.run_floor), (None, None));
    }

    #[test]
    fn metric_direction_follows_its_unit_and_name() {
        for (name, unit, higher) in [
            ("MB/s", "MB/s", true),
            ("calls/s", "calls/s", true),
            ("·gc.alloc.rate", "MB/sec", false),
            ("gc.alloc.rate.norm", "B/op", false),
            ("gc.count", "counts", false),
            ("run·p0.99", "us/op", false),
            ("vs floor", "x", false),
            ("speedup", "x", true),
            ("thrpt", "ops/ms", true),
        ] {
            assert_eq!(metric_higher_is_better(name, unit), higher, "{name} {unit}");
        }
        assert!(metric_matches("·gc.alloc.rate", "gc.alloc.rate"));
        assert!(!metric_matches("gc.alloc.rate.norm", "gc.alloc.rate"));
    }

    #[test]
    fn malformed_documents_say_what_and_where() {
        for (text, why) in [
            ("{", "expected a string key"),
            (
                "{}",
                "expected a JSON array of benchmark entries, found an object",
            ),
            ("{\"files\":[],\"rows\":[]}", "bb-compare's own report"),
            (
                "[1]",
                "entry 1: expected a benchmark object, found a number",
            ),
            (
                "[{\"name\":\"x\",\"unit\":\"ns\",\"value\":1}]",
                "github-action-benchmark's custom format",
            ),
            ("[{\"mode\":\"thrpt\"}]", "entry 1: missing \"benchmark\""),
            (
                "[{\"benchmark\":\"a\",\"mode\":\"fast\",\"primaryMetric\":{}}]",
                "unknown mode 'fast'",
            ),
            (
                "[{\"benchmark\":\"a\",\"mode\":\"thrpt\",\"primaryMetric\":{\"score\":\"x\"}}]",
                "\"score\" is not a number",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
        // A sample-mode histogram's counts are whole numbers of samples.
        for count in ["-5", "0.5", "1e300"] {
            let text = format!(
                r#"[{{"benchmark":"a","mode":"sample","primaryMetric":{{"score":1,"scoreUnit":"us/op",
                "rawDataHistogram":[[[[1.0,{count}],[2.0,3]]]]}}}}]"#
            );
            let err = parse(&text).unwrap_err();
            assert!(
                err.contains(&format!("a count of {}", count.parse::<f64>().unwrap())),
                "{count}: {err}"
            );
        }
    }

    /// An A/B run's entry (`build`: its JSON text) with a fork per score.
    fn ab_entry(name: &str, build: &str, forks: &[f64]) -> String {
        let raw: Vec<String> = forks.iter().map(|v| format!("[{v}]")).collect();
        format!(
            r#"{{"benchmark":"{name}","mode":"thrpt","params":{{"level":"3"}},
            "primaryMetric":{{"score":{},"scoreUnit":"ops/s","rawData":[{}]}},
            "boardbench":{{"build":{build}}}}}"#,
            forks[0],
            raw.join(",")
        )
    }

    const THIS: &str = r#"{"side":"this","path":"./bb-zstd","sha1":"aa"}"#;
    const OLD: &str = r#"{"side":"against","path":"./old/bb-zstd","sha1":"bb"}"#;

    fn ab_runs(entries: &[String]) -> Vec<(String, Vec<Measurement>)> {
        let mut doc = Json::parse_compact(&format!("[{}]", entries.join(","))).unwrap();
        runs("ab", parse_doc(&mut doc, None).unwrap())
    }

    #[test]
    fn an_ab_file_is_its_two_runs_the_other_build_first() {
        let ab = ab_runs(&[
            ab_entry("bb.z.compress", THIS, &[130.0, 131.0]),
            ab_entry("bb.z.compress", OLD, &[100.0, 101.0]),
            ab_entry("bb.z.decompress", THIS, &[230.0]),
            ab_entry("bb.z.decompress", OLD, &[200.0]),
        ]);
        let labels: Vec<&str> = ab.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["ab (./old/bb-zstd)", "ab (this build)"]);
        let scores = |ms: &[Measurement]| -> Vec<(String, f64)> {
            ms.iter().map(|m| (m.benchmark.clone(), m.score)).collect()
        };
        assert_eq!(
            scores(&ab[0].1),
            [
                ("bb.z.compress".into(), 100.0),
                ("bb.z.decompress".into(), 200.0)
            ]
        );
        assert_eq!(
            scores(&ab[1].1),
            [
                ("bb.z.compress".into(), 130.0),
                ("bb.z.decompress".into(), 230.0)
            ]
        );
        assert_eq!(
            ab[1].1[0].samples,
            Samples::iterations(vec![vec![130.0], vec![131.0]])
        );
        // Both builds' entries read by `parse`, and a file without `build` is one run.
        let text = format!(
            "[{},{}]",
            ab_entry("bb.z.compress", THIS, &[1.0]),
            ab_entry("bb.z.compress", OLD, &[2.0])
        );
        assert_eq!(parse(&text).unwrap().len(), 2);
        let plain = text.replace(r#""build":"#, r#""built":"#);
        let mut doc = Json::parse_compact(&plain).unwrap();
        let one = runs("plain", parse_doc(&mut doc, None).unwrap());
        assert_eq!(one.len(), 1);
        assert_eq!((one[0].0.as_str(), one[0].1.len()), ("plain", 2));
    }

    #[test]
    fn an_ab_files_builds_are_judged_as_pairs_only_against_each_other() {
        let with_record = |f: f64| {
            ab_entry("bb.z.compress", THIS, &[100.0 * f, 110.0 * f, 120.0 * f]).replace(
                r#""build":"#,
                &format!(
                    r#""against":{{"ratio":{f},"low":{},"high":{},"pairs":3,"basis":"forks 3"}},"build":"#,
                    f * 0.99,
                    f * 1.01
                ),
            )
        };
        let ab = ab_runs(&[
            with_record(1.2),
            ab_entry("bb.z.compress", OLD, &[100.0, 110.0, 120.0]),
        ]);
        let this = &ab[1].1[0];
        assert!(this.paired && !ab[0].1[0].paired);
        assert_eq!(this.against.unwrap().basis, Basis::Forks(3));
        let criteria = super::super::tests::criteria();
        let c = super::super::compare(ab.clone(), criteria.clone());
        let change = c.rows[0].cells[1].as_ref().unwrap().change.clone().unwrap();
        assert_eq!(
            (change.test, change.verdict),
            (Test::Pairs, Verdict::Faster)
        );
        assert_eq!((change.low, change.high), (1.2 * 0.99, 1.2 * 1.01));
        // After another run, the file's builds are two more runs: judged against the
        // first as runs are, never as pairs.
        let mut runs = vec![("plain".to_string(), ab[0].1.clone())];
        runs.extend(ab);
        let c = super::super::compare(runs, criteria);
        for cell in c.rows[0].cells[1..].iter().flatten() {
            assert_ne!(cell.change.as_ref().unwrap().test, Test::Pairs);
        }
    }

    #[test]
    fn one_side_only_or_a_row_on_one_side_is_read_as_it_is() {
        let only_this = ab_runs(&[ab_entry("bb.z.compress", THIS, &[1.0])]);
        assert_eq!(only_this.len(), 1);
        assert_eq!(only_this[0].0, "ab (this build)");
        let uneven = ab_runs(&[
            ab_entry("bb.z.compress", THIS, &[1.0]),
            ab_entry("bb.z.decompress", THIS, &[1.0]),
            ab_entry("bb.z.compress", OLD, &[1.0]),
        ]);
        let counts: Vec<(&str, usize)> = uneven
            .iter()
            .map(|(l, ms)| (l.as_str(), ms.len()))
            .collect();
        assert_eq!(counts, [("ab (./old/bb-zstd)", 1), ("ab (this build)", 2)]);
        // The other build's path is escaped for the terminal; an empty one still says which.
        let odd = ab_runs(&[ab_entry(
            "bb.z.compress",
            r#"{"side":"against","path":"./old\u001b[2J"}"#,
            &[1.0],
        )]);
        assert_eq!(odd[0].0, "ab (./old\\u{1b}[2J)");
        let empty = ab_runs(&[ab_entry(
            "bb.z.compress",
            r#"{"side":"against","path":""}"#,
            &[1.0],
        )]);
        assert_eq!(empty[0].0, "ab (other build)");
    }

    #[test]
    fn a_malformed_build_says_what_and_where() {
        for (build, why) in [
            (
                r#""this""#,
                "entry 2: boardbench.build is a string, not an object",
            ),
            ("null", "entry 2: boardbench.build is null, not an object"),
            (
                r#"{"side":"mine","path":"x"}"#,
                r#"entry 2: boardbench.build.side is "mine", not "this" or "against""#,
            ),
            (
                r#"{"path":"x"}"#,
                r#"entry 2: boardbench.build.side is missing, not "this" or "against""#,
            ),
            (
                r#"{"side":"against","path":7}"#,
                "entry 2: boardbench.build.path is a number, not a string",
            ),
            (
                r#"{"side":"against"}"#,
                "entry 2: boardbench.build.path is missing, not a string",
            ),
        ] {
            let text = format!(
                "[{},{}]",
                ab_entry("bb.z.compress", THIS, &[1.0]),
                ab_entry("bb.z.compress", build, &[1.0])
            );
            assert_eq!(parse(&text).unwrap_err(), why, "{build}");
        }
    }

    #[test]
    fn labels_drop_shared_directories_and_the_extension() {
        let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            column_labels(&paths(&["r/pi4/", "r/pi5"])),
            vec!["pi4", "pi5"]
        );
        assert_eq!(
            column_labels(&paths(&["/t/a.json", "/t/b.json"])),
            vec!["a", "b"]
        );
        assert_eq!(
            column_labels(&paths(&["a/x.json", "b/x.json"])),
            vec!["a/x", "b/x"]
        );
        assert_eq!(column_labels(&paths(&["x/base.json"])), vec!["x/base"]);
        // A doubled slash (`results//pi4.json`) is one.
        assert_eq!(
            column_labels(&paths(&["r//pi4.json", "r/pi5//x.json"])),
            vec!["pi4", "pi5/x"]
        );
    }
}
