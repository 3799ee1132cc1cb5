//! This board's noise from several runs of one build on it (`bb-compare --calibrate
//! FILE run1 run2 run3`, which `run-all.sh --calibrate` calls): each binary's variance
//! at each level, its run floor and the band of a lone fork, written as the noise
//! profile the binaries read; and a profile given to a comparison (`--noise`), its
//! floors and bands for the rows whose files carry none of this board's.

use super::{Cell, Comparison, Measurement};
use crate::model::noise::{binary_of, BinaryNoise, NoiseProfile};
use crate::stats::components::{Components, RowRuns};
use crate::stats::power::percent;
use crate::util::error::{Error, Result};

/// The fewest runs a calibration takes: the run-to-run part needs two at least, and
/// three are what `run-all.sh --calibrate` runs.
pub const MIN_RUNS: usize = 2;

/// One cell's scores per fork: its iterations (each iteration's mean, for a histogram).
fn forks_of(cell: &Cell) -> Vec<Vec<f64>> {
    if cell.samples.histogram {
        cell.samples.iteration_means.clone()
    } else {
        cell.samples.forks.clone()
    }
}

/// The profile of `board` on `measured` (a day) from every run of `c`, which are runs
/// of one build on it, each binary's rows pooled; an error where there are too few runs,
/// where a run is an A/B file's, or where no binary ran in two of them.
pub fn profile(c: &Comparison, board: &str, measured: &str) -> Result<NoiseProfile> {
    if c.labels.len() < MIN_RUNS {
        return Err(Error::usage(format!(
            "--calibrate takes {MIN_RUNS} runs or more of one build on this board (3 is run-all.sh --calibrate's)"
        )));
    }
    let cells = || c.rows.iter().flat_map(|r| r.cells.iter().flatten());
    if cells().any(|cell| cell.against.is_some() || cell.paired) {
        return Err(Error::usage(
            "--calibrate takes runs of one build; an A/B run (--against) is two builds",
        ));
    }
    let mut binaries: Vec<(String, Vec<RowRuns>)> = Vec::new();
    for row in &c.rows {
        let Some(binary) = binary_of(&row.benchmark) else {
            continue;
        };
        let runs: RowRuns = row.cells.iter().flatten().map(forks_of).collect();
        match binaries.iter_mut().find(|(name, _)| *name == binary) {
            Some((_, rows)) => rows.push(runs),
            None => binaries.push((binary, vec![runs])),
        }
    }
    let binaries: Vec<(String, BinaryNoise)> = binaries
        .into_iter()
        .filter_map(|(name, rows)| Some((name, BinaryNoise::of(&Components::of(&rows))?)))
        .collect();
    if binaries.is_empty() {
        return Err(Error::usage(
            "--calibrate: no boardbench row ran in two of these runs with a score",
        ));
    }
    Ok(NoiseProfile {
        board: board.to_string(),
        measured: measured.to_string(),
        binaries,
    })
}

/// What a calibration found, for its answer: a line per binary,
/// `bb-zstd: run to run ±4.1%, a lone fork ±12% (8 rows, 3 runs)`.
pub fn lines(p: &NoiseProfile) -> Vec<String> {
    p.binaries
        .iter()
        .map(|(name, n)| {
            let floor = match n.variance[2] {
                Some(_) => format!("run to run ±{}", percent(n.run_floor)),
                None => "run to run not told from forks (one fork a run)".to_string(),
            };
            format!(
                "{name}: {floor}, a lone fork ±{} ({} rows, {} runs)",
                percent(n.band),
                n.rows,
                n.runs
            )
        })
        .collect()
}

/// Gives each row of `runs` whose file carries no calibration of its own the band and
/// run floor `p` measured for its binary; the number of rows it gave them.
pub fn apply(runs: &mut [(String, Vec<Measurement>)], p: &NoiseProfile) -> usize {
    let mut given = 0;
    for m in runs.iter_mut().flat_map(|(_, ms)| ms.iter_mut()) {
        let Some(noise) = binary_of(&m.benchmark).and_then(|b| p.of(&b)) else {
            continue;
        };
        if !m.calibrated {
            m.noise_band = Some(noise.band);
            m.run_floor = Some(noise.run_floor);
            m.calibrated = true;
            given += 1;
        }
    }
    given
}
