//! bb-compare's logic ([`run`]): results of several runs (files or results directories) matched by
//! benchmark, mode, threads and params, each scored against the first run with the
//! ratio, its propagated error and a verdict from Welch's t-test on the raw data
//! (iterations, sample mode's samples, or fork means: see [`samples`]). The rows of a
//! load sweep (a `load` param, as `bb-rpc --rate sweep` writes) match by that share of
//! each run's own maximum, not by their `rate`, which differs from board to board.

pub mod answer;
pub mod args;
pub mod calibrate;
pub mod gab;
pub mod load;
pub mod options;
pub mod paired;
pub mod samples;
pub mod svg;
pub mod table;

use crate::model::params::{label, param_value, params_text};
pub use crate::model::result::OfferedLoad;
use crate::report::{self, print_stdout};
use crate::util::error::{Error, Result};
use crate::util::file::write_output;
pub use samples::{Samples, Test};

/// One benchmark entry of a result file (JMH's primary metric).
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub benchmark: String,
    pub mode: String,
    /// Throughput: a bigger score is better; every time-per-op mode: smaller is better.
    pub higher_is_better: bool,
    pub params: Vec<(String, String)>,
    /// JMH's top-level `threads`; None where a file does not say.
    pub threads: Option<u64>,
    pub score: f64,
    /// Half-width of the 99.9% confidence interval (NaN when unknown).
    pub error: f64,
    pub unit: String,
    /// The raw data per fork: iteration scores, or sample mode's histogram.
    pub samples: Samples,
    /// The load an open loop was offered and achieved (boardbench's `offeredLoad`).
    pub offered_load: Option<OfferedLoad>,
    /// The noise band of one fork its binary measured (boardbench's `noiseBand`); None
    /// where the file does not say (JMH's own files).
    pub noise_band: Option<f64>,
    /// What its binary's whole runs differ by beyond their forks (boardbench's
    /// `runFloor`); None where the file does not say.
    pub run_floor: Option<f64>,
    /// Whether its noise band and run floor are its board's own, from a calibration
    /// (boardbench's `noiseSource`, or `--noise`), rather than a binary's default.
    pub calibrated: bool,
    /// What flagged the row as it ran (boardbench's `flags`: `throttled`, `busy`).
    pub flags: Vec<String>,
    /// This build's entry of an A/B file: the pairs' result its run recorded
    /// (`boardbench.against`); None elsewhere, and where it is null or malformed.
    pub against: Option<paired::Recorded>,
    /// Whether it is this build's entry of an A/B file whose other build is the run just
    /// before it: its forks are paired with that run's, by position.
    pub paired: bool,
}

/// How results are judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Criteria {
    /// Significance level of the Welch t-test.
    pub alpha: f64,
    /// Relative changes up to this (0.05 = 5%) count as no change.
    pub threshold: f64,
    /// Params left out of matching (for boards with different core counts, say);
    /// `threads` covers JMH's top-level threads too.
    pub ignore_params: Vec<String>,
    /// `--accept-invalid`: judge a flagged row faster or slower all the same.
    pub accept_invalid: bool,
}

/// The judgement of one result against the first run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    /// The change is within the threshold.
    Same,
    /// The change is beyond the threshold but not significant at alpha.
    Noise,
    /// A change beyond the threshold that cannot be judged: a ratio that is not a
    /// number, or fork means whose test is not one.
    Unknown,
    /// Faster or slower, but a side was flagged as it ran (throttled, busy): not judged
    /// without `--accept-invalid`.
    Flagged,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
            Verdict::Noise => "noise",
            Verdict::Unknown => "?",
            Verdict::Flagged => "flagged",
        }
    }
}

/// One run's result in a row, in the row's unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub score: f64,
    pub error: f64,
    pub samples: Samples,
    /// Against the first run; None in the first column, or where the first run lacks it.
    pub change: Option<Change>,
    /// The load an open loop was offered and achieved.
    pub offered_load: Option<OfferedLoad>,
    /// One fork's noise band: the file's, else [`crate::stats::uncertainty::NOISE_BAND`].
    pub noise_band: f64,
    /// The run floor: the file's, else 0.
    pub run_floor: f64,
    /// Whether the band and floor are its board's own ([`Measurement::calibrated`]).
    pub calibrated: bool,
    /// What flagged it as it ran.
    pub flags: Vec<String>,
    /// The pairs' result an A/B run recorded ([`Measurement::against`]).
    pub against: Option<paired::Recorded>,
    /// Paired with the run just before it ([`Measurement::paired`]).
    pub paired: bool,
}

impl Cell {
    /// The uncertainty its verdicts use: over its forks (or its noise band, with fewer
    /// than [`samples::MIN_FORKS`]), with its run floor; what the table prints beside
    /// its score, where the file's `scoreError` (JMH's, over iterations pooled) is not.
    pub fn honest(&self) -> crate::stats::uncertainty::Uncertainty {
        self.samples
            .uncertainty(self.score, self.noise_band)
            .with_floor(self.run_floor)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// This score over the first run's.
    pub ratio: f64,
    /// The ratio's error, from both honest errors propagated (relative errors in
    /// quadrature): over fork means, or the noise band.
    pub ratio_error: f64,
    /// The ratio's interval, as the range it is: both honest relative errors in
    /// quadrature on a log scale (never below 0, however wide).
    pub low: f64,
    pub high: f64,
    /// The smallest change, relative (0.04: 4%), this comparison could have called in
    /// 95 tries of 100 ([`crate::stats::power`]): what a `same` or `noise` is worth.
    pub smallest: f64,
    /// Two-sided p-value of Welch's t-test over the fork means (NaN where the noise band
    /// judged).
    pub p_value: f64,
    /// What the test ran over.
    pub test: Test,
    pub verdict: Verdict,
}

/// A benchmark with one cell per run.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub benchmark: String,
    pub mode: String,
    pub higher_is_better: bool,
    pub params: Vec<(String, String)>,
    /// JMH's top-level threads of the first run that has it; shown as a `threads` param
    /// where runs or rows differ in it and the params do not say.
    pub threads: Option<u64>,
    /// Whether `params` holds a `threads` shown for that, not one of the file's params.
    pub threads_shown: bool,
    pub unit: String,
    pub cells: Vec<Option<Cell>>,
}

impl Row {
    /// `name (k=v, k=v)`, as the notes name a row.
    pub fn label(&self) -> String {
        label(&self.benchmark, &self.params)
    }
}

/// Something the table cannot show: a benchmark on one side only, params that differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// `missing`, `params`, `units`, `duplicate`, `load` (how sweep rows matched), or
    /// `error` (a score that is not a number: NaN, ±Infinity).
    pub kind: &'static str,
    pub message: String,
}

/// Every run side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub labels: Vec<String>,
    pub criteria: Criteria,
    pub rows: Vec<Row>,
    pub notes: Vec<Note>,
    /// The cells left empty because the file's score is not a number: (row, column,
    /// score), each with an `error` note.
    pub invalid: Vec<(usize, usize, f64)>,
    /// The noise profile `--noise` gave the rows without their own: its board and day.
    pub noise: Option<(String, String)>,
}

impl Comparison {
    /// Whether any result is slower than the first run's beyond the threshold, significantly.
    pub fn has_regression(&self) -> bool {
        self.count(Verdict::Slower) > 0
    }

    pub fn count(&self, verdict: Verdict) -> usize {
        self.rows
            .iter()
            .flat_map(|r| &r.cells)
            .filter(|c| {
                c.as_ref()
                    .and_then(|c| c.change.as_ref())
                    .is_some_and(|ch| ch.verdict == verdict)
            })
            .count()
    }

    /// How the verdicts were reached, where any was by the noise band or by pairs.
    fn tests_note(&self) -> String {
        let by = |test: Test| {
            self.rows
                .iter()
                .flat_map(|r| &r.cells)
                .flatten()
                .filter_map(|c| c.change.as_ref())
                .any(|ch| ch.test == test)
        };
        let mut note = String::new();
        if by(Test::Band) {
            note.push_str(&format!(
                "; {}: fewer than {} forks on a side, the ratio's interval (each side's A/A noise band) against 1",
                Test::Band.mark(),
                samples::MIN_FORKS,
            ));
        }
        if by(Test::Pairs) {
            note.push_str(&format!(
                "; {}: an A/B file's pairs of forks, their ratio's interval against 1",
                Test::Pairs.mark(),
            ));
        }
        note
    }

    /// One line: how many of each verdict, and the settings behind them.
    pub fn summary(&self) -> String {
        let counts: Vec<String> = [
            Verdict::Slower,
            Verdict::Faster,
            Verdict::Same,
            Verdict::Noise,
            Verdict::Unknown,
            Verdict::Flagged,
        ]
        .iter()
        .map(|&v| (v, self.count(v)))
        .filter(|&(_, n)| n > 0)
        .map(|(v, n)| format!("{n} {}", v.name()))
        .collect();
        format!(
            "{} (same: within {}%; noise: beyond it but within noise, Welch p >= {} over fork means{})",
            if counts.is_empty() {
                "nothing to compare".to_string()
            } else {
                counts.join(", ")
            },
            self.criteria.threshold * 100.0,
            self.criteria.alpha,
            self.tests_note()
        )
    }
}

/// bb-compare: the files loaded, compared, and reported (the table, `--output`, the
/// chart); an error (exit 1) when a result is slower beyond the threshold, significantly.
pub fn run(args: &args::Args) -> Result<()> {
    let o = options::Options::from_args(args)?;
    if o.env {
        return print_stdout(&report::environment_document());
    }
    // A path is one run, or two where it is an A/B run's file (the other build first).
    let mut runs = Vec::new();
    for (path, label) in o.files.iter().zip(load::column_labels(&o.files)) {
        runs.extend(load::load_metric(
            path,
            &label,
            o.metric.as_deref(),
            o.max_input,
        )?);
    }
    let labels = distinct_labels(runs.iter().map(|(label, _)| label.clone()).collect());
    for ((label, _), distinct) in runs.iter_mut().zip(labels) {
        *label = distinct;
    }
    let noise = match &o.noise {
        Some(path) => Some(crate::harness::noise::read_profile(path, "--noise")?),
        None => None,
    };
    if let Some(profile) = &noise {
        calibrate::apply(&mut runs, profile);
    }
    let mut comparison = compare(runs, o.criteria.clone());
    comparison.noise = noise.map(|p| (p.board, p.measured));
    if let Some(path) = &o.calibrate {
        return write_calibration(&comparison, path);
    }
    // A signal while a file is written removes its temporary file (the exit's clean-up)
    // instead of killing the process with it left behind.
    crate::harness::signals::exit_on_signals();
    if let Some(path) = &o.svg {
        write_output(path, svg::render(&comparison).as_bytes())?;
    }
    let direction = match report::choose_format(o.format, o.output.as_deref()) {
        table::TableFormat::GabBigger => Some(gab::Direction::Bigger),
        table::TableFormat::GabSmaller => Some(gab::Direction::Smaller),
        _ => None,
    };
    for line in direction.map_or_else(Vec::new, |d| gab::left_out(&comparison, d)) {
        crate::util::terminal::warn(&line);
    }
    report::deliver(o.format, o.output.as_deref(), |format| {
        table::render(format, &comparison)
    })?;
    if comparison.has_regression() {
        return Err(Error::failed(format!(
            "slower than {} beyond {}% (Welch p < {})",
            comparison.labels[0],
            o.criteria.threshold * 100.0,
            o.criteria.alpha
        )));
    }
    Ok(())
}

/// `--calibrate`: the noise profile of this board from the runs, written to `path`, and
/// the answer: what each binary's noise came to.
fn write_calibration(c: &Comparison, path: &std::path::Path) -> Result<()> {
    use crate::model::answer::WIDTH;
    let board = crate::system::env::board_identity();
    let today = crate::util::format::utc_date(std::time::SystemTime::now());
    let profile = calibrate::profile(c, &board, &today)?;
    crate::harness::signals::exit_on_signals();
    write_output(path, profile.to_json().to_pretty().as_bytes())?;
    let mut lines = vec![crate::util::format::printable(&format!(
        "this board's noise, from {} runs ({board}):",
        c.labels.len()
    ))];
    lines.extend(
        calibrate::lines(&profile)
            .into_iter()
            .map(|l| format!("  {l}")),
    );
    let shown = crate::util::format::printable(&path.display().to_string());
    let var = |key: &str| std::env::var(key).ok();
    let read_by_default = [
        crate::harness::noise::default_path(&var),
        var(crate::harness::noise::VARIABLE).map(std::path::PathBuf::from),
    ]
    .contains(&Some(path.to_path_buf()));
    lines.push(if read_by_default {
        "written where every run here reads it:".to_string()
    } else {
        "written to (runs read it with --noise FILE or BB_NOISE=FILE):".to_string()
    });
    lines.push(format!(
        "  {}",
        crate::model::answer::tail_of(&shown, WIDTH - 2)
    ));
    let mut text = answer::marker();
    text.push('\n');
    for line in lines {
        for part in answer::wrap(&line, WIDTH) {
            text.push_str(&part);
            text.push('\n');
        }
    }
    print_stdout(&text)
}

/// Matches the runs' measurements (each run a label and its measurements) and judges
/// every run against the first.
pub fn compare(runs: Vec<(String, Vec<Measurement>)>, criteria: Criteria) -> Comparison {
    let mut rows: Vec<Row> = Vec::new();
    let mut notes = Vec::new();
    let labels: Vec<String> = runs.iter().map(|(l, _)| l.clone()).collect();
    let mut by_load: Vec<String> = Vec::new();
    let mut invalid: Vec<(usize, usize, f64)> = Vec::new();
    for (column, (run_label, measurements)) in runs.into_iter().enumerate() {
        for mut m in measurements {
            if as_matched(&mut m, &criteria) && !by_load.contains(&m.benchmark) {
                by_load.push(m.benchmark.clone());
            }
            let index = row_of(&mut rows, &m, labels.len());
            let row = &mut rows[index];
            row.threads = row.threads.or(m.threads);
            match cell_of(row, column, m, &run_label, &labels[0]) {
                Ok(cell) => row.cells[column] = Some(cell),
                Err((note, score)) => {
                    notes.push(note);
                    invalid.extend(score.map(|score| (index, column, score)));
                }
            }
        }
    }
    show_threads(&mut rows);
    judge_rows(&mut rows, &criteria);
    notes.extend(unmatched(&rows, &labels, &invalid));
    notes.extend(by_load.into_iter().map(|benchmark| Note {
        kind: "load",
        message: format!(
            "{benchmark}: sweep rows are matched by {SWEEP_LOAD} (a share of each run's own maximum), not by {SWEEP_RATE}"
        ),
    }));
    Comparison {
        labels,
        criteria,
        rows,
        notes,
        invalid,
        noise: None,
    }
}

/// `m` as rows are matched: without the params `criteria` ignores (with `threads` among
/// them, without its top-level threads too), a sweep row without its absolute rate, the
/// params sorted. Whether it is a sweep row, matched by its load.
fn as_matched(m: &mut Measurement, criteria: &Criteria) -> bool {
    m.params
        .retain(|(k, _)| !criteria.ignore_params.contains(k));
    let by_load = param_value(&m.params, SWEEP_LOAD).is_some();
    if by_load {
        m.params.retain(|(k, _)| k != SWEEP_RATE);
    }
    m.params.sort();
    if criteria.ignore_params.iter().any(|p| p == "threads") {
        m.threads = None;
    }
    by_load
}

/// The index of the row `m` belongs in (the same benchmark, mode and params, and threads
/// where both say), added with an empty cell for each of `columns` runs where there is
/// none yet.
fn row_of(rows: &mut Vec<Row>, m: &Measurement, columns: usize) -> usize {
    let found = rows.iter().position(|r| {
        r.benchmark == m.benchmark
            && r.mode == m.mode
            && r.params == m.params
            && (r.threads.is_none() || m.threads.is_none() || r.threads == m.threads)
    });
    found.unwrap_or_else(|| {
        rows.push(Row {
            benchmark: m.benchmark.clone(),
            mode: m.mode.clone(),
            higher_is_better: m.higher_is_better,
            params: m.params.clone(),
            threads: m.threads,
            threads_shown: false,
            unit: m.unit.clone(),
            cells: vec![None; columns],
        });
        rows.len() - 1
    })
}

/// `m` as `row`'s cell in `column` (the run `run_label`; `first` is the first run's), in
/// the row's unit; or the note that says why it is not compared: a second one in the same
/// run, a unit that does not convert, or a score that is not a number (with that score).
fn cell_of(
    row: &Row,
    column: usize,
    m: Measurement,
    run_label: &str,
    first: &str,
) -> std::result::Result<Cell, (Note, Option<f64>)> {
    if row.cells[column].is_some() {
        return Err((
            Note {
                kind: "duplicate",
                message: format!(
                    "{} appears twice in {run_label}: the first one is used",
                    row.label()
                ),
            },
            None,
        ));
    }
    let Some(scale) = unit_factor(&m.unit, &row.unit) else {
        return Err((
            Note {
                kind: "units",
                message: format!(
                    "{}: {run_label} is in {}, {first} in {}: not compared",
                    row.label(),
                    m.unit,
                    row.unit
                ),
            },
            None,
        ));
    };
    let score = m.score * scale;
    if !score.is_finite() {
        return Err((
            Note {
                kind: "error",
                message: format!(
                    "{} ({}) in {run_label}: the score is {}, not a measurement: not compared",
                    row.label(),
                    row.mode,
                    java_number(m.score)
                ),
            },
            Some(m.score),
        ));
    }
    Ok(Cell {
        score,
        error: m.error * scale,
        samples: m.samples.scaled(scale),
        change: None,
        offered_load: m.offered_load,
        noise_band: m
            .noise_band
            .unwrap_or(crate::stats::uncertainty::NOISE_BAND),
        run_floor: m.run_floor.unwrap_or(0.0),
        calibrated: m.calibrated,
        flags: m.flags.clone(),
        against: m.against,
        paired: m.paired,
    })
}

/// Each row's cells judged against its first run's, where the first run has it: as
/// pairs where the first two runs are an A/B file's two builds ([`paired`]), else as
/// two runs.
fn judge_rows(rows: &mut [Row], criteria: &Criteria) {
    for row in rows {
        // Split rather than cloned: a cell's samples can be millions of values.
        let Some((Some(base), others)) = row.cells.split_first_mut() else {
            continue;
        };
        for (i, cell) in others.iter_mut().enumerate() {
            let Some(cell) = cell else { continue };
            let hib = row.higher_is_better;
            let pairs = (i == 0 && cell.paired)
                .then(|| paired::judge(base, cell, hib, criteria))
                .flatten();
            cell.change = Some(pairs.unwrap_or_else(|| judge(base, cell, hib, criteria)));
        }
    }
}

/// A number as JMH's JSON writes one that is not finite (`NaN`, `Infinity`,
/// `-Infinity`), or as Rust prints it.
pub(crate) fn java_number(v: f64) -> String {
    match v {
        v if v.is_nan() => "NaN".into(),
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        v => v.to_string(),
    }
}

/// The param of a sweep's row that names its share of the run's own maximum (`50%`): rows
/// with it match by it, and their absolute [`SWEEP_RATE`] is left out of matching.
pub const SWEEP_LOAD: &str = "load";
/// The param of an open loop's offered rate.
pub const SWEEP_RATE: &str = "rate";

/// The ratio of `new` to `base`, its honest error, and the verdict.
pub(crate) fn judge(
    base: &Cell,
    new: &Cell,
    higher_is_better: bool,
    criteria: &Criteria,
) -> Change {
    // A histogram against iteration scores alone: both sides' iteration means, for the
    // ratio as for the test, where both have some.
    let mixed = samples::mixed(&base.samples, &new.samples);
    fn side(c: &Cell, mixed: bool) -> (std::borrow::Cow<'_, Samples>, f64) {
        let by_iteration = c.samples.by_iteration();
        let mean = by_iteration.mean_and_error().0;
        match mixed && mean.is_finite() {
            true => (by_iteration, mean),
            false => (std::borrow::Cow::Borrowed(&c.samples), c.score),
        }
    }
    let (b_samples, b) = side(base, mixed);
    let (n_samples, n) = side(new, mixed);
    // Two runs: each side with its run floor.
    let b_honest = b_samples
        .uncertainty(b, base.noise_band)
        .with_floor(base.run_floor);
    let n_honest = n_samples
        .uncertainty(n, new.noise_band)
        .with_floor(new.run_floor);
    let ratio = n / b;
    let relative = (b_honest.relative().powi(2) + n_honest.relative().powi(2)).sqrt();
    let ratio_error = ratio.abs() * relative;
    let (judged, test) = samples::significance(
        (&b_samples, b_honest),
        (&n_samples, n_honest),
        criteria.alpha,
    );
    let undecided = judged.by_forks && judged.p_value.is_nan();
    let flagged = !base.flags.is_empty() || !new.flags.is_empty();
    let verdict = verdict_of(
        ratio,
        judged.beyond,
        undecided,
        flagged,
        higher_is_better,
        criteria,
    );
    Change {
        ratio,
        ratio_error,
        low: ratio * (-relative).exp(),
        high: ratio * relative.exp(),
        smallest: judged.smallest,
        p_value: judged.p_value,
        test,
        verdict,
    }
}

/// The verdict on a `ratio` of scores: `same` within the threshold, `?` where it is not
/// a number or its test `undecided`, `noise` where not `beyond` noise, `flagged` where
/// a side was (unless accepted), else which way it went.
pub(crate) fn verdict_of(
    ratio: f64,
    beyond: bool,
    undecided: bool,
    flagged: bool,
    higher_is_better: bool,
    criteria: &Criteria,
) -> Verdict {
    let better = if higher_is_better {
        ratio > 1.0
    } else {
        ratio < 1.0
    };
    if (ratio - 1.0).abs() <= criteria.threshold {
        Verdict::Same
    } else if !ratio.is_finite() || undecided {
        Verdict::Unknown
    } else if !beyond {
        Verdict::Noise
    } else if flagged && !criteria.accept_invalid {
        Verdict::Flagged
    } else if better {
        Verdict::Faster
    } else {
        Verdict::Slower
    }
}

/// Where rows differ in JMH's top-level threads, shows it as a `threads` param on the
/// rows whose params do not name threads, so that tables and notes tell them apart.
fn show_threads(rows: &mut [Row]) {
    let mut seen: Vec<u64> = rows.iter().filter_map(|r| r.threads).collect();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() < 2 {
        return;
    }
    for row in rows {
        if let Some(t) = row.threads {
            if !row.params.iter().any(|(k, _)| k == "threads") {
                row.params.push(("threads".into(), t.to_string()));
                row.params.sort();
                row.threads_shown = true;
            }
        }
    }
}

/// Makes column labels distinct: the second `x` becomes `x#2`, the third `x#3`.
pub fn distinct_labels(labels: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(labels.len());
    for label in labels {
        let mut candidate = label.clone();
        let mut n = 1;
        while out.contains(&candidate) {
            n += 1;
            candidate = format!("{label}#{n}");
        }
        out.push(candidate);
    }
    out
}

/// Notes for rows that some run lacks: the benchmark is missing there, or it is there
/// with other params. A cell left out for an `invalid` score has its own note. A params
/// note names the rows on the other side; each of them gets no note of its own, which
/// would say the same from that side.
fn unmatched(rows: &[Row], labels: &[String], invalid: &[(usize, usize, f64)]) -> Vec<Note> {
    let mut notes = Vec::new();
    let mut named: Vec<usize> = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let have: Vec<&str> = labels
            .iter()
            .zip(&row.cells)
            .filter(|(_, c)| c.is_some())
            .map(|(l, _)| l.as_str())
            .collect();
        for (column, label) in labels.iter().enumerate() {
            let left_out = invalid.iter().any(|&(r, c, _)| (r, c) == (index, column));
            if row.cells[column].is_some() || left_out {
                continue;
            }
            let others: Vec<(usize, &Row)> = rows
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    r.benchmark == row.benchmark && r.mode == row.mode && r.cells[column].is_some()
                })
                .collect();
            if others.is_empty() {
                notes.push(Note {
                    kind: "missing",
                    message: format!(
                        "{} ({}) is in {} but not in {label}",
                        row.label(),
                        row.mode,
                        have.join(", ")
                    ),
                });
                continue;
            }
            if named.contains(&index) {
                continue;
            }
            named.extend(others.iter().map(|(i, _)| *i));
            let others: Vec<&Row> = others.into_iter().map(|(_, r)| r).collect();
            let hint = ignore_hint(rows, row, &others);
            let theirs: Vec<String> = others
                .iter()
                .map(|r| format!("({})", params_text(&r.params)))
                .collect();
            notes.push(Note {
                kind: "params",
                message: format!(
                    "{} ({}) in {} has params ({}), {label} has {}{}",
                    row.benchmark,
                    row.mode,
                    have.join(", "),
                    params_text(&row.params),
                    theirs.join(" "),
                    match hint {
                        Some(keys) =>
                            format!("; --ignore-params {} compares them anyway", keys.join(",")),
                        None => String::new(),
                    }
                ),
            });
        }
    }
    notes
}

/// The params to leave out so that `row` matches one of `others` (rows of the same
/// benchmark and mode in a run that lacks `row`): the fewest that do, among those that
/// merge no two rows of one run (which would only make "duplicate" notes). None when no
/// set of params does.
fn ignore_hint(rows: &[Row], row: &Row, others: &[&Row]) -> Option<Vec<String>> {
    let mut candidates: Vec<Vec<String>> = others
        .iter()
        .map(|other| differing_params(row, other))
        .filter(|keys| !keys.is_empty())
        .collect();
    candidates.sort_by_key(Vec::len);
    candidates.dedup();
    candidates
        .into_iter()
        .find(|keys| !merges_rows_of_one_run(rows, row, keys))
}

/// The params that differ between two rows, or that one of them lacks, sorted.
fn differing_params(a: &Row, b: &Row) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (k, _) in a.params.iter().chain(&b.params) {
        if param_value(&a.params, k) != param_value(&b.params, k) && !names.contains(k) {
            names.push(k.clone());
        }
    }
    names.sort();
    names
}

/// Whether leaving `keys` out of matching would make two rows of one run (of `row`'s
/// benchmark and mode) the same.
fn merges_rows_of_one_run(rows: &[Row], row: &Row, keys: &[String]) -> bool {
    let columns = row.cells.len();
    let kept = |r: &Row| -> Vec<(String, String)> {
        r.params
            .iter()
            .filter(|(k, _)| !keys.contains(k))
            .cloned()
            .collect()
    };
    (0..columns).any(|column| {
        let mut seen: Vec<Vec<(String, String)>> = Vec::new();
        for r in rows.iter().filter(|r| {
            r.benchmark == row.benchmark && r.mode == row.mode && r.cells[column].is_some()
        }) {
            let params = kept(r);
            if seen.contains(&params) {
                return true;
            }
            seen.push(params);
        }
        false
    })
}

/// Seconds in one of JMH's time units (`TimeValue.tuToString`: ns, us, ms, s, min, hr,
/// day), or a common spelling of one.
pub fn seconds_in(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1e-9,
        "us" | "µs" | "μs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" => 1.0,
        "min" | "m" => 60.0,
        "hr" | "h" => 3600.0,
        "day" | "d" => 86400.0,
        _ => return None,
    })
}

/// The factor that turns a score in `from` into one in `to`: 1 for the same unit, a time
/// scale between JMH's units (`ops/ms` to `ops/s`, `ns/op` to `us/op`), None otherwise.
pub(crate) fn unit_factor(from: &str, to: &str) -> Option<f64> {
    if from == to {
        return Some(1.0);
    }
    if let (Some(f), Some(t)) = (from.strip_prefix("ops/"), to.strip_prefix("ops/")) {
        return Some(seconds_in(t)? / seconds_in(f)?);
    }
    if let (Some(f), Some(t)) = (from.strip_suffix("/op"), to.strip_suffix("/op")) {
        return Some(seconds_in(f)? / seconds_in(t)?);
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A throughput measurement of one fork per value of `raw` (one iteration each).
    pub fn measurement(name: &str, params: &[(&str, &str)], raw: &[f64]) -> Measurement {
        let s = crate::stats::Summary::of(raw);
        Measurement {
            benchmark: name.into(),
            mode: "thrpt".into(),
            higher_is_better: true,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            threads: Some(1),
            score: s.mean,
            error: s.error,
            unit: "ops/s".into(),
            samples: forks_of(raw),
            offered_load: None,
            noise_band: None,
            run_floor: None,
            // As a calibrated board's file (a floor of 0): the answer's line for runs
            // without one is tested on its own.
            calibrated: true,
            flags: vec![],
            against: None,
            paired: false,
        }
    }

    /// A fork per value.
    pub fn forks_of(raw: &[f64]) -> Samples {
        Samples::iterations(raw.iter().map(|&v| vec![v]).collect())
    }

    pub fn criteria() -> Criteria {
        Criteria {
            alpha: 0.01,
            threshold: 0.05,
            ignore_params: vec![],
            accept_invalid: false,
        }
    }

    /// A cell of one fork per value in `raw`, flagged with `flags`.
    fn cell_of(raw: &[f64], flags: &[&str]) -> Cell {
        let s = crate::stats::Summary::of(raw);
        Cell {
            score: s.mean,
            error: s.error,
            samples: forks_of(raw),
            change: None,
            offered_load: None,
            noise_band: crate::stats::uncertainty::NOISE_BAND,
            run_floor: 0.0,
            calibrated: false,
            flags: flags.iter().map(|f| f.to_string()).collect(),
            against: None,
            paired: false,
        }
    }

    fn verdict(base: &[f64], new: &[f64], higher_is_better: bool) -> Verdict {
        let (base, new) = (cell_of(base, &[]), cell_of(new, &[]));
        judge(&base, &new, higher_is_better, &criteria()).verdict
    }

    #[test]
    fn verdicts_follow_threshold_significance_and_direction() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let lower = [80.0, 81.0, 79.0, 80.5, 79.5];
        assert_eq!(verdict(&base, &lower, true), Verdict::Slower);
        assert_eq!(verdict(&base, &lower, false), Verdict::Faster);
        assert_eq!(verdict(&lower, &base, true), Verdict::Faster);
        // Significant but within 5%.
        let slightly = [97.0, 98.0, 96.0, 97.5, 96.5];
        assert_eq!(verdict(&base, &slightly, true), Verdict::Same);
        // 20% apart in the means but the spread is wider than that.
        let noisy_a = [50.0, 150.0, 60.0, 140.0, 100.0];
        let noisy_b = [40.0, 130.0, 50.0, 120.0, 60.0];
        assert_eq!(verdict(&noisy_a, &noisy_b, true), Verdict::Noise);
        // One fork a side: the noise band, however the iterations agree.
        assert_eq!(verdict(&[100.0], &[50.0], true), Verdict::Slower);
        assert_eq!(verdict(&[100.0], &[80.0], true), Verdict::Noise);
        assert_eq!(verdict(&[100.0], &[f64::NAN], true), Verdict::Unknown);
    }

    #[test]
    fn a_flagged_side_is_never_faster_or_slower_unless_accepted() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let lower = [80.0, 81.0, 79.0, 80.5, 79.5];
        let slightly = [99.0, 100.0, 98.0, 99.5, 98.5];
        let judged = |a: &Cell, b: &Cell, accept: bool| {
            let criteria = Criteria {
                accept_invalid: accept,
                ..criteria()
            };
            judge(a, b, true, &criteria).verdict
        };
        let (calm, hot) = (cell_of(&base, &[]), cell_of(&lower, &["throttled"]));
        assert_eq!(judged(&calm, &hot, false), Verdict::Flagged);
        assert_eq!(judged(&hot, &calm, false), Verdict::Flagged, "either side");
        assert_eq!(judged(&calm, &hot, true), Verdict::Slower);
        // Within the threshold it is the same, flagged or not.
        assert_eq!(
            judged(&calm, &cell_of(&slightly, &["busy"]), false),
            Verdict::Same
        );
        assert_eq!(judged(&calm, &cell_of(&lower, &[]), false), Verdict::Slower);
    }

    #[test]
    fn ratio_error_propagates_the_honest_relative_errors() {
        let cell = |score: f64, error: f64, samples: Samples| Cell {
            score,
            error,
            samples,
            change: None,
            offered_load: None,
            noise_band: crate::stats::uncertainty::NOISE_BAND,
            run_floor: 0.0,
            calibrated: false,
            flags: vec![],
            against: None,
            paired: false,
        };
        let (a, b) = (
            cell(100.0, 3.0, forks_of(&[97.0, 100.0, 103.0])),
            cell(200.0, 8.0, forks_of(&[196.0, 200.0, 204.0])),
        );
        let c = judge(&a, &b, true, &criteria());
        assert_eq!((c.ratio, c.test), (2.0, Test::ForkMeans));
        let honest = |c: &Cell| c.samples.uncertainty(c.score, c.noise_band).relative();
        let expected = 2.0 * (honest(&a).powi(2) + honest(&b).powi(2)).sqrt();
        assert!(
            (c.ratio_error - expected).abs() < 1e-12,
            "{}",
            c.ratio_error
        );
        assert!(
            honest(&a) > 0.03,
            "wider than JMH's error over the same values"
        );
        // No raw data: the noise band on both sides.
        let bare = judge(
            &cell(100.0, 3.0, Samples::default()),
            &cell(200.0, 8.0, Samples::default()),
            true,
            &criteria(),
        );
        let band = crate::stats::uncertainty::NOISE_BAND;
        assert!((bare.ratio_error - 2.0 * band * 2f64.sqrt()).abs() < 1e-12);
        assert!(bare.p_value.is_nan() && bare.test == Test::Band);
        // Its interval is the same error as a range on a log scale, and what it could
        // see is the judgement's: by the band, the band; by forks, never under the
        // run floors in quadrature.
        let e = 2.0 * band * 2f64.sqrt() / 2.0;
        assert!((bare.low - 2.0 * (-e).exp()).abs() < 1e-12);
        assert!((bare.high - 2.0 * e.exp()).abs() < 1e-12);
        assert!((bare.smallest - e.exp_m1()).abs() < 1e-12);
        assert!(c.smallest > 0.0 && c.smallest < 0.5, "{}", c.smallest);
        let floored = |x: &Cell| Cell {
            run_floor: 0.17,
            calibrated: false,
            ..x.clone()
        };
        let f = judge(&floored(&a), &floored(&b), true, &criteria());
        assert!(f.smallest >= (0.17 * 2f64.sqrt()).exp_m1() - 1e-12);
    }

    #[test]
    fn rows_match_by_name_and_params_and_notes_name_what_is_missing() {
        let base = vec![
            measurement("bb.a", &[("threads", "1")], &[10.0, 11.0]),
            measurement("bb.b", &[("threads", "4")], &[10.0, 11.0]),
            measurement("bb.gone", &[], &[1.0, 1.0]),
        ];
        let new = vec![
            measurement("bb.a", &[("threads", "1")], &[10.0, 11.0]),
            measurement("bb.b", &[("threads", "2")], &[10.0, 11.0]),
            measurement("bb.new", &[], &[1.0, 1.0]),
        ];
        let c = compare(
            vec![("base".into(), base.clone()), ("new".into(), new.clone())],
            criteria(),
        );
        assert_eq!(c.rows.len(), 5);
        assert!(c.rows[0].cells.iter().all(Option::is_some));
        let notes: Vec<String> = c.notes.iter().map(|n| n.message.clone()).collect();
        assert!(notes.contains(&"bb.gone (thrpt) is in base but not in new".to_string()));
        assert!(notes.contains(&"bb.new (thrpt) is in new but not in base".to_string()));
        assert!(notes.iter().any(|n| n.starts_with(
            "bb.b (thrpt) in base has params (threads=4), new has (threads=2); --ignore-params threads"
        )));
        let opts = Criteria {
            ignore_params: vec!["threads".into()],
            ..criteria()
        };
        let c = compare(vec![("base".into(), base), ("new".into(), new)], opts);
        assert_eq!(c.rows.len(), 4);
        assert_eq!(c.rows[1].label(), "bb.b");
        assert!(c.rows[1].cells.iter().all(Option::is_some));
    }

    #[test]
    fn a_params_note_is_printed_once_not_from_each_side() {
        let raw = [10.0, 11.0, 12.0];
        let c = compare(
            vec![
                (
                    "base".into(),
                    vec![measurement("bb.x", &[("size", "1")], &raw)],
                ),
                (
                    "new".into(),
                    vec![measurement("bb.x", &[("size", "2")], &raw)],
                ),
            ],
            criteria(),
        );
        let said: Vec<&str> = c.notes.iter().map(|n| n.message.as_str()).collect();
        assert_eq!(
            said,
            ["bb.x (thrpt) in base has params (size=1), new has (size=2); --ignore-params size compares them anyway"]
        );
    }

    #[test]
    fn a_score_that_is_not_a_number_is_an_error_for_its_row_alone() {
        let raw = [10.0, 11.0, 12.0];
        for bad in [f64::NEG_INFINITY, f64::INFINITY, f64::NAN] {
            let mut broken = measurement("bb.x", &[], &raw);
            broken.score = bad;
            broken.error = f64::INFINITY;
            let c = compare(
                vec![
                    (
                        "base".into(),
                        vec![
                            measurement("bb.x", &[], &raw),
                            measurement("bb.y", &[], &raw),
                        ],
                    ),
                    (
                        "new".into(),
                        vec![broken.clone(), measurement("bb.y", &[], &raw)],
                    ),
                ],
                criteria(),
            );
            assert!(c.rows[0].cells[1].is_none(), "{bad}: no cell, no verdict");
            assert_eq!(c.count(Verdict::Noise), 0);
            assert_eq!(c.count(Verdict::Same), 1, "bb.y still compared");
            assert_eq!(c.invalid.len(), 1);
            assert_eq!((c.invalid[0].0, c.invalid[0].1), (0, 1));
            let notes: Vec<(&str, &str)> = c
                .notes
                .iter()
                .map(|n| (n.kind, n.message.as_str()))
                .collect();
            let shown = java_number(bad);
            assert_eq!(
                notes,
                [(
                    "error",
                    format!("bb.x (thrpt) in new: the score is {shown}, not a measurement: not compared")
                        .as_str()
                )],
                "one note, not a missing one too"
            );
        }
        // In the base: the others have nothing to be judged against.
        let mut broken = measurement("bb.x", &[], &raw);
        broken.score = f64::NEG_INFINITY;
        let c = compare(
            vec![
                ("base".into(), vec![broken]),
                ("new".into(), vec![measurement("bb.x", &[], &raw)]),
            ],
            criteria(),
        );
        assert!(c.rows[0].cells[0].is_none());
        assert_eq!(c.rows[0].cells[1].as_ref().unwrap().change, None);
        assert_eq!(c.notes.len(), 1, "{:#?}", c.notes);
    }

    #[test]
    fn a_histogram_against_iteration_scores_is_compared_on_iteration_means() {
        // The histogram's samples weigh the slow second iteration 9 to 1; its iteration
        // means are 10 and 20, the other side's iterations 15 and 15.
        let mut sample = measurement("bb.x", &[], &[1.0]);
        sample.mode = "sample".into();
        sample.higher_is_better = false;
        sample.unit = "us/op".into();
        sample.samples = Samples::buckets(vec![vec![(10.0, 1), (20.0, 9)]], vec![vec![10.0, 20.0]]);
        (sample.score, sample.error) = sample.samples.mean_and_error();
        let mut means = measurement("bb.x", &[], &[15.0, 15.0, 15.0, 15.0]);
        means.mode = "sample".into();
        means.higher_is_better = false;
        means.unit = "us/op".into();
        let c = compare(
            vec![("hist".into(), vec![sample]), ("raw".into(), vec![means])],
            criteria(),
        );
        let cell = c.rows[0].cells[1].as_ref().unwrap();
        assert_eq!(cell.score, 15.0, "the file's score is shown");
        let change = cell.change.as_ref().unwrap();
        assert_eq!(change.test, Test::Band);
        assert_eq!(
            change.ratio, 1.0,
            "15 over the mean of 10 and 20, not over 19"
        );
        assert!(
            c.summary().contains("band: fewer than 3 forks"),
            "{}",
            c.summary()
        );
    }

    #[test]
    fn the_hint_names_only_params_that_tell_the_rows_apart() {
        let raw = [10.0, 11.0, 12.0];
        let m = |params: &[(&str, &str)]| measurement("bb.x", params, &raw);
        let base = vec![
            m(&[("size", "1"), ("threads", "4"), ("codec", "a")]),
            m(&[("size", "2"), ("threads", "4"), ("codec", "a")]),
        ];
        let new = vec![
            m(&[("size", "1"), ("threads", "2"), ("codec", "a")]),
            m(&[("size", "2"), ("threads", "2")]),
        ];
        let c = compare(
            vec![("base".into(), base.clone()), ("new".into(), new.clone())],
            criteria(),
        );
        let hints: Vec<&str> = c
            .notes
            .iter()
            .filter_map(|n| n.message.split("--ignore-params ").nth(1))
            .map(|h| h.split(' ').next().unwrap())
            .collect();
        // Once each, from base's side: new's rows are named there.
        assert_eq!(hints, ["threads", "codec,threads"], "{:#?}", c.notes);
        for hint in ["threads", "codec,threads"] {
            let opts = Criteria {
                ignore_params: hint.split(',').map(String::from).collect(),
                ..criteria()
            };
            let c = compare(
                vec![("base".into(), base.clone()), ("new".into(), new.clone())],
                opts,
            );
            assert!(
                c.notes.iter().all(|n| n.kind != "duplicate"),
                "{:#?}",
                c.notes
            );
        }
        // Leaving out size would merge size 1 and 2 of a run: never hinted.
        let base = vec![m(&[("size", "1")]), m(&[("size", "2")])];
        let new = vec![m(&[("size", "3")])];
        let c = compare(vec![("base".into(), base), ("new".into(), new)], criteria());
        assert!(
            c.notes
                .iter()
                .all(|n| !n.message.contains("--ignore-params")),
            "{:#?}",
            c.notes
        );
    }

    #[test]
    fn top_level_threads_match_like_a_param() {
        let raw = [10.0, 11.0, 12.0];
        let at = |threads: u64, f: f64| {
            let mut m = measurement("org.x.B.run", &[], &raw.map(|v| v * f));
            m.threads = Some(threads);
            m
        };
        let runs = || {
            vec![
                ("base".to_string(), vec![at(1, 1.0), at(4, 1.0)]),
                ("new".to_string(), vec![at(1, 1.0), at(8, 0.5)]),
            ]
        };
        let c = compare(runs(), criteria());
        assert_eq!(c.rows.len(), 3, "{:#?}", c.rows);
        assert_eq!(c.rows[1].label(), "org.x.B.run (threads=4)");
        let notes: Vec<&str> = c.notes.iter().map(|n| n.message.as_str()).collect();
        assert!(
            notes.contains(&"org.x.B.run (thrpt) in base has params (threads=4), new has (threads=1) (threads=8)"),
            "{notes:#?}"
        );
        let opts = Criteria {
            ignore_params: vec!["threads".into()],
            ..criteria()
        };
        let c = compare(runs(), opts);
        assert_eq!(c.rows.len(), 1, "{:#?}", c.rows);
        assert_eq!(c.notes[0].kind, "duplicate");
    }

    #[test]
    fn sweep_rows_match_by_their_share_of_the_maximum_not_by_rate() {
        let row = |rate: &str, load: &str| {
            measurement(
                "bb.rpc.open",
                &[("rate", rate), ("load", load)],
                &[1.0, 2.0],
            )
        };
        let fixed = |rate: &str| measurement("bb.rpc.open", &[("rate", rate)], &[1.0, 2.0]);
        let c = compare(
            vec![
                (
                    "pi4".into(),
                    vec![row("1000", "50%"), row("2000", "100%"), fixed("500")],
                ),
                (
                    "pi5".into(),
                    vec![row("3000", "50%"), row("6000", "100%"), fixed("700")],
                ),
            ],
            criteria(),
        );
        let labels: Vec<String> = c.rows.iter().map(Row::label).collect();
        assert_eq!(
            labels,
            [
                "bb.rpc.open (load=50%)",
                "bb.rpc.open (load=100%)",
                "bb.rpc.open (rate=500)",
                "bb.rpc.open (rate=700)"
            ]
        );
        assert!(c.rows[..2]
            .iter()
            .all(|r| r.cells.iter().all(Option::is_some)));
        assert!(
            c.rows[2].cells[1].is_none(),
            "fixed rates still match by rate"
        );
        let said: Vec<&str> = c
            .notes
            .iter()
            .filter(|n| n.kind == "load")
            .map(|n| n.message.as_str())
            .collect();
        assert_eq!(
            said,
            ["bb.rpc.open: sweep rows are matched by load (a share of each run's own maximum), not by rate"]
        );
    }

    #[test]
    fn distinct_labels_number_repeats() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            distinct_labels(l(&["a", "a", "b", "a", "a#2"])),
            l(&["a", "a#2", "b", "a#3", "a#2#2"])
        );
    }

    #[test]
    fn units_are_converted_or_reported() {
        assert_eq!(unit_factor("ops/ms", "ops/s"), Some(1000.0));
        assert_eq!(unit_factor("ns/op", "us/op"), Some(1e-3));
        assert_eq!(unit_factor("ops/hr", "ops/s"), Some(1.0 / 3600.0));
        assert_eq!(unit_factor("ops/day", "ops/min"), Some(1.0 / 1440.0));
        assert_eq!(unit_factor("hr/op", "s/op"), Some(3600.0));
        assert_eq!(unit_factor("day/op", "min/op"), Some(1440.0));
        assert_eq!(unit_factor("ops/s", "us/op"), None);
        let mut jmh = measurement("bb.a", &[], &[0.1, 0.1]);
        jmh.unit = "ops/ms".into();
        jmh.score = 0.1;
        let mut jmh_other = jmh.clone();
        jmh_other.unit = "MB/s".into();
        let c = compare(
            vec![
                (
                    "base".into(),
                    vec![measurement("bb.a", &[], &[100.0, 100.0])],
                ),
                ("jmh".into(), vec![jmh]),
                ("odd".into(), vec![jmh_other]),
            ],
            criteria(),
        );
        let cell = c.rows[0].cells[1].as_ref().unwrap();
        assert!((cell.score - 100.0).abs() < 1e-9);
        assert_eq!(cell.change.as_ref().unwrap().verdict, Verdict::Same);
        assert!(c.rows[0].cells[2].is_none());
        assert_eq!(c.notes[0].kind, "units");
    }
}
