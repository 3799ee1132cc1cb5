//! A run's question answered, as data: a few lines of words and numbers derived from the
//! results just measured, each at most [`WIDTH`] columns, under a marker line that scripts
//! look for (`== bb-zstd: the answer ==`). Each measurement says how it answers (an
//! [`Answerer`]); the text report prints the block last, the JSON report carries its
//! lines. Below: what every answer is made of (finding a row, a ratio with its noise, a
//! number a person reads).

use crate::model::noise::NoiseSource;
use crate::model::params::{label_with, varying_keys};
use crate::model::result::BenchResult;
use crate::stats::paired::{PairedRatio, Verdict};
use crate::stats::power::percent;
use crate::stats::uncertainty::{judge, Basis, Side};
use crate::system::topology::{Cluster, Topology};
use crate::util::format::format_estimate;

/// The widest line of an answer: a terminal's.
pub const WIDTH: usize = 80;
/// The longest answer, in lines, past its marker.
pub const MAX_LINES: usize = 8;
/// Below this p-value (Welch's test over fork means) two scores differ by more than
/// noise, as bb-compare's default `--alpha` has it.
pub use crate::stats::uncertainty::ALPHA;

/// How a measurement answers its question from the results of a run (every benchmark's,
/// in run order); no lines where there is nothing to say. A suite makes it over its own
/// rows with [`with_rows`].
pub type Answerer = Box<dyn Fn(&[BenchResult]) -> Vec<String>>;

/// The [`Answerer`] that hands `answer` each result of a run paired with the row it was
/// measured for: `rows` are the suite's, one per benchmark in the suite's order, and a
/// result's [`BenchResult::index`] names its own. The answer matches on the rows' fields
/// rather than finding rows again by their params' names and parsing the values back.
pub fn with_rows<R: 'static>(
    rows: Vec<R>,
    answer: fn(&[(&R, &BenchResult)]) -> Vec<String>,
) -> Answerer {
    Box::new(move |results| {
        let paired: Vec<(&R, &BenchResult)> = results
            .iter()
            .filter_map(|r| Some((rows.get(r.index)?, r)))
            .collect();
        answer(&paired)
    })
}

/// The answer of one run of one program.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The program that answers (`bb-zstd`).
    pub program: String,
    pub lines: Vec<String>,
}

impl Answer {
    /// `lines` cut to [`WIDTH`] columns and [`MAX_LINES`] lines, as both reports show them;
    /// where lines are left out, the last says so rather than a sentence ending mid-way.
    pub fn new(program: String, lines: Vec<String>) -> Answer {
        Answer::with_tail(program, lines, vec![])
    }

    /// The binary's `lines`, then `tail` (what every answer may add: precision, flags,
    /// counters, the cluster), within [`MAX_LINES`] together: the binary's own are cut to
    /// the room the tail leaves (one line at least).
    pub fn with_tail(program: String, lines: Vec<String>, tail: Vec<String>) -> Answer {
        let tail: Vec<String> = tail.iter().take(MAX_LINES - 1).map(|l| fit(l)).collect();
        let room = MAX_LINES - tail.len();
        let mut kept: Vec<String> = lines.iter().take(room).map(|l| fit(l)).collect();
        if lines.len() > room {
            kept[room - 1] = format!(
                "… {} more lines left out: the table has them",
                lines.len() - (room - 1)
            );
        }
        kept.extend(tail);
        Answer {
            program,
            lines: kept,
        }
    }

    /// The line the block starts with, which run-all and the fleet look for.
    pub fn marker(program: &str) -> String {
        format!("== {program}: the answer ==")
    }

    /// The block as text: the marker, then the lines.
    pub fn text(&self) -> String {
        let mut out = Answer::marker(&self.program);
        out.push('\n');
        for line in &self.lines {
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// `line` cut to [`WIDTH`] characters, ending in `…` where it was cut: an answerer that
/// writes a longer line loses its end, never the terminal's layout.
pub fn fit(line: &str) -> String {
    if line.chars().count() <= WIDTH {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(WIDTH - 1).collect();
    cut.push('…');
    cut
}

/// `items` joined by `, ` after `head`, wrapped into lines of at most [`WIDTH`] columns,
/// the lines after the first indented by two spaces.
pub fn wrap(head: &str, items: &[String]) -> Vec<String> {
    let mut lines = vec![head.to_string()];
    for (i, item) in items.iter().enumerate() {
        let last = lines.last_mut().expect("one line at least");
        let sep = if i == 0 { "" } else { ", " };
        // One column kept for the comma a wrapped line ends with.
        if last.chars().count() + sep.len() + item.chars().count() < WIDTH {
            last.push_str(sep);
            last.push_str(item);
        } else {
            if i > 0 {
                last.push(',');
            }
            lines.push(format!("  {item}"));
        }
    }
    lines
}

/// `head, tail` as one line where it fits in [`WIDTH`] columns, else `head` and `tail`
/// on a line of its own, indented; `head` alone where `tail` is empty.
pub fn joined(head: String, tail: &str) -> Vec<String> {
    if tail.is_empty() {
        return vec![head];
    }
    let one = format!("{head}, {tail}");
    match one.chars().count() <= WIDTH {
        true => vec![one],
        false => vec![head, format!("  {tail}")],
    }
}

/// What a cluster line ends with where the run could not reach the big cluster.
const BIG_OUT_OF_REACH: &str = "; big out of reach";

/// Which cluster the run's figures are of, where that is a question: on a board of
/// differing clusters, or where `--cluster` chose one. `pinned` is the cluster the run
/// was pinned to (and whether the default chose it); unpinned, the clusters of the
/// `allowed` cores are named, and where none of them is big, that the big one was out of
/// reach. Nothing on a board of one kind of core, left alone.
pub fn cluster_lines(
    clusters: &[Cluster],
    pinned: Option<&Cluster>,
    by_default: bool,
    allowed: &[usize],
) -> Vec<String> {
    let board = Topology {
        clusters: clusters.to_vec(),
    };
    let on = |c: &Cluster| format!("on {}: {}", board.role(c), c.describe());
    match pinned {
        Some(c) if by_default => vec![
            on(c),
            "  chosen as the fastest cores; --cluster little or N for another".into(),
        ],
        Some(c) => vec![on(c)],
        None if board.heterogeneous() => {
            let reached = |c: &&Cluster| c.cpus.iter().any(|cpu| allowed.contains(cpu));
            let touched: Vec<&Cluster> = clusters.iter().filter(reached).collect();
            let mut lines = match touched.as_slice() {
                [one] => vec![on(one)],
                _ => {
                    let each: Vec<String> = touched.iter().map(|c| c.describe()).collect();
                    wrap("unpinned, on any of: ", &each)
                }
            };
            // Said on the line it follows where it fits: an answer has eight lines.
            if let Some(big) = board.big().filter(|big| !reached(&big)) {
                let last = lines.last_mut().expect("a line at least");
                match last.chars().count() + BIG_OUT_OF_REACH.len() <= WIDTH {
                    true => last.push_str(BIG_OUT_OF_REACH),
                    false => lines.push(format!(
                        "  the big cluster ({}) was out of this run's reach",
                        big.cpu_names()
                    )),
                }
            }
            lines
        }
        None => vec![],
    }
}

/// `cycles/byte: 3.10 compress (threads=1), 1.42 decompress (threads=1); IPC 2.1-2.8`:
/// where `--counters` counted the headline rows, the clock-independent figure; rows whose
/// operations have no bytes give cycles per operation. None where nothing was counted.
pub fn counters_line(results: &[BenchResult]) -> Option<String> {
    let counted: Vec<&BenchResult> = results
        .iter()
        .filter(|r| r.headline && r.secondary("cycles/op").is_some())
        .collect();
    if counted.is_empty() {
        return None;
    }
    let varying = varying_keys(counted.iter().map(|r| r.params.as_slice()));
    let (per_byte, unit) = match counted.iter().all(|r| r.secondary("cycles/byte").is_some()) {
        true => ("cycles/byte", "cycles/byte"),
        false => ("cycles/op", "cycles/op"),
    };
    let figures: Vec<String> = counted
        .iter()
        .take(4)
        .filter_map(|r| {
            let value = r.secondary(per_byte)?.summary.mean;
            // The benchmark's last name (`compress`) and the params that vary, as the label
            // has them after the name: a param's value may hold dots of its own.
            let label = label_with(&r.name, &r.params, &varying);
            let params = label.strip_prefix(r.name.as_str()).unwrap_or_default();
            let last = r.name.rsplit('.').next().unwrap_or(&r.name);
            let short = format!("{last}{params}");
            Some(format!("{} {short}", format_estimate_number(value)))
        })
        .collect();
    let ipc: Vec<f64> = counted
        .iter()
        .filter_map(|r| Some(r.secondary("IPC")?.summary.mean))
        .collect();
    let (low, high) = ipc
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
    let ipc = match ipc.is_empty() {
        true => String::new(),
        false if (high - low) < 0.05 => format!("; IPC {low:.2}"),
        false => format!("; IPC {low:.2}-{high:.2}"),
    };
    Some(fit(&format!("{unit}: {}{ipc}", figures.join(", "))))
}

/// A counter's figure with three significant digits.
fn format_estimate_number(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v => format!("{v:.2}"),
    }
}

/// `flagged: 3 of 4 headline rows (governor, busy): not the board at its best`: said
/// where a headline row's figure was taken while something flagged it (throttling,
/// swapping, a busy board; the table's FLAGGED lines say why); nothing where none was.
/// Flags too many for one line go on the lines after, every name kept.
pub fn flagged_lines(results: &[BenchResult]) -> Vec<String> {
    let headline: Vec<&BenchResult> = results.iter().filter(|r| r.headline).collect();
    let flagged: Vec<&BenchResult> = headline
        .iter()
        .copied()
        .filter(|r| !r.throttle.flags.is_empty())
        .collect();
    if flagged.is_empty() {
        return Vec::new();
    }
    let flags = crate::system::validity::sorted(
        flagged
            .iter()
            .flat_map(|r| r.throttle.flags.iter().copied()),
    );
    let rows = format!(
        "flagged: {} of {} headline rows",
        flagged.len(),
        headline.len()
    );
    let names = crate::system::validity::names(&flags);
    let said = format!("{rows} ({names}): not the board at its best");
    let bare = format!("{rows} ({names})");
    match [said, bare]
        .into_iter()
        .find(|l| l.chars().count() <= WIDTH)
    {
        Some(line) => vec![line],
        None => {
            let names: Vec<String> = flags.iter().map(|f| f.name().to_string()).collect();
            wrap(&format!("{rows}: "), &names)
        }
    }
}

/// `precision: ±2% reached in 5 of 8 headline rows; not in 3 (widest ±4.1%, 20 s)`:
/// said where a headline row's forks ran out of budget before its honest ± reached
/// `--precision`; None where every one reached it, or none had one to reach.
pub fn precision_line(results: &[BenchResult]) -> Option<String> {
    let aimed: Vec<&BenchResult> = results.iter().filter(|r| r.precision.is_some()).collect();
    let short: Vec<&BenchResult> = aimed
        .iter()
        .copied()
        .filter(|r| r.precision.is_some_and(|p| !p.reached))
        .collect();
    let target = aimed.first()?.precision?.target;
    let widest = short.iter().max_by(|a, b| {
        a.uncertainty()
            .relative()
            .total_cmp(&b.uncertainty().relative())
    })?;
    Some(format!(
        "precision: ±{}% reached in {} of {} headline rows; not in {} (widest {}, {})",
        crate::util::format::percent(target),
        aimed.len() - short.len(),
        aimed.len(),
        short.len(),
        widest.uncertainty().percent(),
        format_estimate(std::time::Duration::from_secs_f64(
            widest.precision?.seconds
        ))
    ))
}

/// Where the ± of the headline rows comes from, where it matters: this board's
/// calibration (`± includes this board's run-to-run noise (3 runs, 2026-12-08)`), or
/// none yet, and how to measure it. None where no row has a ±.
pub fn noise_line(results: &[BenchResult]) -> Option<String> {
    let row = results
        .iter()
        .find(|r| r.headline)
        .or_else(|| results.first())?;
    let line = match &row.settings.noise_source {
        NoiseSource::Calibration { runs, measured, .. } => {
            format!("± includes this board's run-to-run noise ({runs} runs, {measured})")
        }
        NoiseSource::Default => match row.uncertainty().basis {
            Basis::Forks(_) => {
                "± is this run's forks: run-to-run unmeasured here (run-all.sh --calibrate)"
                    .to_string()
            }
            Basis::Band(_) => {
                "± is a default band, not this board's (measure: run-all.sh --calibrate)"
                    .to_string()
            }
        },
    };
    Some(line)
}

/// The rows an A/B run names one by one in its answer; past them, it counts.
pub const AB_ROWS: usize = 4;

/// The lines an A/B run's answer ends with: `this build against ./old/bb-zstd:`, then how
/// each headline row that both builds ran compares, from its pairs of forks:
/// `compress (threads=1): 1.08x faster (±0.02, more than noise)` or `a tie (1.01x
/// ±0.03)`. Past [`AB_ROWS`] rows, the head counts each verdict and the rows furthest
/// from a tie follow, as many as fit.
pub fn against_lines(shown: &str, results: &[BenchResult]) -> Vec<String> {
    ab_lines(shown, results).iter().map(|l| fit(l)).collect()
}

fn ab_lines(shown: &str, results: &[BenchResult]) -> Vec<String> {
    let compared: Vec<(&BenchResult, PairedRatio)> = results
        .iter()
        .filter(|r| r.headline || !results.iter().any(|h| h.headline))
        .filter_map(|r| Some((r, r.versus.as_ref()?.ratio?)))
        .collect();
    // The path on a line of its own, its end kept where it is long: it names the build.
    let head = format!("this build against {}:", tail_of(shown, WIDTH - 20));
    if compared.is_empty() {
        let ran = results.iter().any(|r| r.versus.is_some());
        let why = match ran {
            true => "  both builds ran; no pair gave a usable score (0, negative, NaN or infinite)",
            false => "  no row both builds ran",
        };
        return vec![head, why.into()];
    }
    let keys = varying_keys(compared.iter().map(|(r, _)| r.params.as_slice()));
    let name = |r: &BenchResult| {
        let short = r.name.splitn(3, '.').nth(2).unwrap_or(&r.name);
        label_with(short, &r.params, &keys)
    };
    let row =
        |(r, ratio): &(&BenchResult, PairedRatio)| format!("  {}: {}", name(r), verdict(ratio));
    let mut lines = vec![head];
    if compared.len() <= AB_ROWS {
        lines.extend(compared.iter().map(row));
        return lines;
    }
    let tally = |v: Verdict| compared.iter().filter(|(_, r)| r.verdict() == v).count();
    let (faster, slower, ties) = (
        tally(Verdict::Faster),
        tally(Verdict::Slower),
        tally(Verdict::Tie),
    );
    if ties == compared.len() {
        let sharpest = compared
            .iter()
            .map(|(_, r)| r.smallest)
            .fold(f64::INFINITY, f64::min);
        lines.push(format!(
            "  a tie in all {ties} rows (the sharpest could see {} or more)",
            percent(sharpest)
        ));
        return lines;
    }
    let mut counts = vec![];
    counts.extend((faster > 0).then(|| format!("{faster} faster")));
    counts.extend((slower > 0).then(|| format!("{slower} slower")));
    counts.extend((ties > 0).then(|| format!("{ties} a tie")));
    lines.push(format!(
        "  {} rows: {}; furthest from a tie:",
        compared.len(),
        counts.join(", ")
    ));
    let mut apart: Vec<&(&BenchResult, PairedRatio)> = compared
        .iter()
        .filter(|(_, r)| r.verdict() != Verdict::Tie)
        .collect();
    apart.sort_by(|a, b| b.1.ratio.ln().abs().total_cmp(&a.1.ratio.ln().abs()));
    lines.extend(apart.into_iter().take(AB_ROWS - 1).map(row));
    lines
}

/// `path` as it is where it has `room` characters at most, else its end after `…`: the
/// end of a path names the build.
pub fn tail_of(path: &str, room: usize) -> String {
    let n = path.chars().count();
    match n <= room {
        true => path.to_string(),
        false => format!("…{}", path.chars().skip(n + 1 - room).collect::<String>()),
    }
}

/// `1.08x faster (±0.02, more than noise)`, `1.08x slower (…)` (the other build's speed
/// over this one's) or `a tie (1.01x; this run could see 4% or more)`: a tie says the
/// smallest change its pairs could have called, what it is worth.
fn verdict(r: &PairedRatio) -> String {
    let pm = |r: &PairedRatio| {
        let e = r.error();
        match e < 0.01 {
            true => format!("±{e:.3}"),
            false => format!("±{e:.2}"),
        }
    };
    if r.verdict() == Verdict::Tie {
        return format!(
            "a tie ({}; this run could see {} or more)",
            times(r.ratio),
            percent(r.smallest)
        );
    }
    match r.verdict() {
        Verdict::Faster => format!("{:.2}x faster ({}, more than noise)", r.ratio, pm(r)),
        Verdict::Slower => {
            let back = r.inverse();
            format!("{:.2}x slower ({}, more than noise)", back.ratio, pm(&back))
        }
        Verdict::Tie => unreachable!("a tie is said above"),
    }
}

/// The distinct `values`, in order of first appearance.
pub fn distinct<T: PartialEq>(values: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The value most of `values` are, the first to appear among equals; None for none.
pub fn most_common<T: PartialEq>(values: impl IntoIterator<Item = T>) -> Option<T> {
    let all: Vec<T> = values.into_iter().collect();
    let count = |v: &T| all.iter().filter(|w| *w == v).count();
    // The last of the most, counting down: the first.
    let at = (0..all.len()).rev().max_by_key(|&i| count(&all[i]))?;
    all.into_iter().nth(at)
}

/// The rows of `results` measured in `placement` (every row where it is None), and
/// those that name none: `placement_of` says where a row was measured.
pub fn rows_in<'a, R, P: PartialEq + 'a>(
    results: &[(&'a R, &'a BenchResult)],
    placement: Option<&P>,
    placement_of: impl Fn(&'a R) -> Option<&'a P>,
) -> Vec<(&'a R, &'a BenchResult)> {
    results
        .iter()
        .copied()
        .filter(|&(row, _)| {
            placement.is_none() || placement_of(row).is_none_or(|p| Some(p) == placement)
        })
        .collect()
}

/// The param that names where a two-sided row's client and server ran
/// ([`crate::system::pinning`]).
pub const PLACEMENT: &str = "placement";

/// Whether the primary scores of `a` and `b` differ beyond noise, judged with their
/// honest uncertainty ([`crate::stats::uncertainty::judge`]: Welch's test over fork
/// means, p < [`ALPHA`], or the noise band where a side has too few forks); None where
/// a score is not a number.
pub fn differ(a: &BenchResult, b: &BenchResult) -> Option<bool> {
    let (ma, mb) = (a.fork_means(), b.fork_means());
    // Rows of one run: a shift of the whole run moves both, so no run floor.
    let side = |means, r: &BenchResult| Side {
        fork_means: means,
        uncertainty: r.uncertainty_in_run(),
    };
    let (sa, sb) = (side(&ma, a), side(&mb, b));
    let finite = sa.uncertainty.score.is_finite() && sb.uncertainty.score.is_finite();
    finite.then(|| judge(sa, sb, ALPHA).beyond)
}

/// Whether `r`'s ratio metric `metric` (one value per iteration, as `vs floor`) is 1
/// within its honest uncertainty: the two sides it compares are the same within noise.
/// None where `r` has no such metric.
pub fn ratio_is_one(r: &BenchResult, metric: &str) -> Option<bool> {
    let ratio = r.secondary(metric)?;
    Some(ratio.uncertainty(r.settings.noise_band).holds(1.0))
}

/// ` (noise)` where two scores do not differ beyond noise, else nothing.
pub fn noise_mark(differs: Option<bool>) -> &'static str {
    match differs {
        Some(false) => " (noise)",
        _ => "",
    }
}

/// A ratio as people say it: `1.9x`, `11.6x`, `348x`, `0.93x`.
pub fn times(x: f64) -> String {
    format!("{}x", significant(x))
}

/// A count or rate in three significant figures with k, M, G: `344`, `72.7`, `101k`,
/// `1.17M`.
pub fn amount(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{suffix}", significant(scaled))
}

/// A time in nanoseconds as `55 ns`, `19.2 us`, `1.25 ms`, `2.10 s`.
pub fn duration_ns(ns: f64) -> String {
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "us")
    } else {
        return format!("{ns:.0} ns");
    };
    format!("{} {unit}", significant(v))
}

/// A result's time per operation in nanoseconds.
pub fn ns_per_op(r: &BenchResult) -> f64 {
    r.seconds_per_op() * 1e9
}

/// Three significant figures, no exponent: 1234 → 1234, 72.71 → 72.7, 0.0932 → 0.0932.
fn significant(v: f64) -> String {
    if !v.is_finite() {
        return "?".to_string();
    }
    let a = v.abs();
    let decimals = if a >= 100.0 || a == 0.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        // 0.0932: two digits past the first significant one.
        (2.0 - a.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::tests::sample_result;

    /// A row of an A/B run whose pairs gave these speedups.
    fn ab_row(op: &str, threads: &str, speedups: &[f64]) -> BenchResult {
        use crate::model::result::{Build, Versus};
        let mut r = sample_result(&format!("bb.zstd.{op}"), threads, vec![1.0]);
        let build = |p: &str| Build {
            path: p.into(),
            sha1: "0".repeat(40),
        };
        r.versus = Some(Versus {
            this: build("this"),
            other: build("./old/bb-zstd"),
            result: Box::new(r.clone()),
            ratio: PairedRatio::of(speedups, 0.35),
        });
        r
    }

    #[test]
    fn an_ab_answer_names_each_row_or_counts_them() {
        let faster = [1.08, 1.07, 1.09, 1.08, 1.08];
        let tie = [1.01, 0.99, 1.03, 0.98, 1.02];
        let rows = [
            ab_row("compress", "1", &faster),
            ab_row("decompress", "1", &tie),
        ];
        let lines = against_lines("./old/bb-zstd", &rows);
        assert_eq!(lines[0], "this build against ./old/bb-zstd:");
        assert!(
            lines[1].starts_with("  compress: 1.08x faster (±0.0"),
            "{lines:?}"
        );
        assert!(lines[1].ends_with(", more than noise)"), "{lines:?}");
        // A tie says what it could have seen: five pairs of about 2% spread at 99%.
        assert_eq!(
            lines[2], "  decompress: a tie (1.01x; this run could see 6% or more)",
            "{lines:?}"
        );
        let slower = [0.5, 0.51, 0.49, 0.5, 0.5];
        let line = &against_lines("b", &[ab_row("compress", "1", &slower)])[1];
        assert!(line.starts_with("  compress: 2.0"), "{line}");
        assert!(line.contains("x slower (±"), "{line}");
        // Eight rows: counted, the furthest from a tie named, threads told apart.
        let mut many: Vec<BenchResult> = (1..=6)
            .map(|t| ab_row("compress", &t.to_string(), &tie))
            .collect();
        many.push(ab_row("decompress", "1", &faster));
        many.push(ab_row("decompress", "2", &slower));
        let lines = against_lines("./old/bb-zstd", &many);
        assert_eq!(lines[0], "this build against ./old/bb-zstd:");
        assert_eq!(
            lines[1],
            "  8 rows: 1 faster, 1 slower, 6 a tie; furthest from a tie:"
        );
        assert!(
            lines[2].starts_with("  decompress (threads=2): 2.0"),
            "{lines:?}"
        );
        assert!(
            lines[3].starts_with("  decompress (threads=1): 1.08x"),
            "{lines:?}"
        );
        assert_eq!(lines.len(), 4);
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH));
        let ties: Vec<BenchResult> = (1..=5).map(|t| ab_row("x", &t.to_string(), &tie)).collect();
        let line = &against_lines("y", &ties)[1];
        assert_eq!(
            line,
            "  a tie in all 5 rows (the sharpest could see 6% or more)"
        );
        // Two pairs: the interval is their spread, and so is what they could see.
        let line = &against_lines("y", &[ab_row("compress", "1", &[2.0, 0.5])])[1];
        assert_eq!(
            line,
            "  compress: a tie (1.00x; this run could see 300% or more)"
        );
        let long = format!("/home/pi/{}/old/bb-zstd", "builds/".repeat(12));
        let lines = against_lines(&long, &rows);
        assert!(lines[0].starts_with("this build against …"), "{lines:?}");
        assert!(lines[0].ends_with("builds//old/bb-zstd:"), "{lines:?}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= WIDTH),
            "{lines:?}"
        );
        let unusable = ab_row("compress", "1", &[0.0, f64::NAN, -1.0, f64::INFINITY]);
        assert_eq!(
            against_lines("x", &[unusable])[1],
            "  both builds ran; no pair gave a usable score (0, negative, NaN or infinite)"
        );
        let plain = sample_result("bb.zstd.compress", "1", vec![1.0]);
        assert_eq!(
            against_lines("x", &[plain]),
            ["this build against x:", "  no row both builds ran"]
        );
    }

    #[test]
    fn numbers_read_as_people_say_them() {
        assert_eq!(times(1.93), "1.93x");
        assert_eq!(times(11.62), "11.6x");
        assert_eq!(times(348.3), "348x");
        assert_eq!(times(0.0932), "0.0932x");
        assert_eq!(amount(72.71), "72.7");
        assert_eq!(amount(344.0), "344");
        assert_eq!(amount(101_234.0), "101k");
        assert_eq!(amount(1_170_000.0), "1.17M");
        assert_eq!(amount(3_770_000_000.0), "3.77G");
        assert_eq!(duration_ns(55.1), "55 ns");
        assert_eq!(duration_ns(19_203.0), "19.2 us");
        assert_eq!(duration_ns(1_250_000.0), "1.25 ms");
        assert_eq!(times(f64::NAN), "?x");
    }

    #[test]
    fn the_block_has_its_marker_and_no_line_past_80_columns() {
        let a = Answer::new("bb-x".into(), vec!["short".into(), "y".repeat(100)]);
        let text = a.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "== bb-x: the answer ==");
        assert_eq!(lines[1], "short");
        assert_eq!(lines[2].chars().count(), WIDTH);
        assert!(lines[2].ends_with('…'));
        let ten: Vec<String> = (1..=10).map(|i| format!("line {i}")).collect();
        let cut = Answer::new("bb-x".into(), ten);
        assert_eq!(cut.lines.len(), MAX_LINES);
        assert_eq!(cut.lines[6], "line 7");
        assert_eq!(cut.lines[7], "… 3 more lines left out: the table has them");
        let eight: Vec<String> = (1..=8).map(|i| format!("line {i}")).collect();
        assert_eq!(Answer::new("bb-x".into(), eight.clone()).lines, eight);
    }

    #[test]
    fn precision_is_said_where_a_headline_row_fell_short() {
        use crate::model::result::{tests::forked_result, Precision};
        let row = |reached: bool, spread: f64| {
            let mut r = forked_result(
                "bb.x",
                "1",
                vec![vec![100.0], vec![100.0 + spread], vec![100.0 - spread]],
            );
            r.precision = Some(Precision {
                target: 0.02,
                reached,
                seconds: 20.4,
            });
            r
        };
        let plain = sample_result("bb.y", "1", vec![1.0]);
        assert_eq!(precision_line(&[row(true, 0.01), plain.clone()]), None);
        assert_eq!(precision_line(&[plain]), None);
        let line = precision_line(&[row(true, 0.01), row(false, 1.0), row(false, 2.0)]).unwrap();
        assert_eq!(
            line,
            "precision: ±2% reached in 1 of 3 headline rows; not in 2 (widest ±7.0%, 20 s)"
        );
        assert!(line.chars().count() <= WIDTH);
    }

    #[test]
    fn a_tail_joins_its_head_where_it_fits() {
        assert_eq!(joined("a".into(), "b"), ["a, b"]);
        assert_eq!(joined("a".into(), ""), ["a"]);
        let long = "x".repeat(70);
        assert_eq!(
            joined(long.clone(), "twelve chars"),
            [long, "  twelve chars".to_string()]
        );
    }

    /// A cluster of `cpus` of `core` up to `max` MHz, with the capacity arm64 gives.
    fn cluster(cpus: &[usize], core: &str, capacity: u64, max: u64) -> Cluster {
        Cluster {
            policy: cpus.first().copied(),
            cpus: cpus.to_vec(),
            core: Some(core.into()),
            capacity: Some(capacity),
            min_mhz: Some(408),
            max_mhz: Some(max),
            ..Cluster::default()
        }
    }

    #[test]
    fn the_answer_names_the_cluster_of_a_big_little_run_and_why() {
        // An RK3588: four A55s, then two pairs of A76s (policy4 and policy6).
        let little = cluster(&[0, 1, 2, 3], "Cortex-A55", 414, 1800);
        let big = [
            cluster(&[4, 5], "Cortex-A76", 1024, 2352),
            cluster(&[6, 7], "Cortex-A76", 1024, 2352),
        ];
        let rk3588 = [little.clone(), big[0].clone(), big[1].clone()];
        let both = cluster(&[4, 5, 6, 7], "Cortex-A76", 1024, 2352);
        let all: Vec<usize> = (0..8).collect();
        assert_eq!(
            cluster_lines(&rk3588, Some(&both), true, &[4, 5, 6, 7]),
            [
                "on the big cluster: 4 × Cortex-A76 (cpu4-7, 408-2352 MHz)",
                "  chosen as the fastest cores; --cluster little or N for another",
            ]
        );
        assert_eq!(
            cluster_lines(&rk3588, Some(&little), false, &[0, 1, 2, 3]),
            ["on the little cluster: 4 × Cortex-A55 (cpu0-3, 408-1800 MHz)"]
        );
        // Unpinned: every cluster the run may land on, within 80 columns.
        let any = cluster_lines(&rk3588, None, false, &all);
        assert_eq!(
            any,
            [
                "unpinned, on any of: 4 × Cortex-A55 (cpu0-3, 408-1800 MHz),",
                "  2 × Cortex-A76 (cpu4-5, 408-2352 MHz), 2 × Cortex-A76 (cpu6-7, 408-2352 MHz)",
            ]
        );
        assert!(any.iter().all(|l| l.chars().count() <= WIDTH), "{any:?}");
        // Held to the little cores (taskset, a cpuset, --pin 0): said, and that big was
        // out of reach.
        assert_eq!(
            cluster_lines(&rk3588, None, false, &[0, 1]),
            ["on the little cluster: 4 × Cortex-A55 (cpu0-3, 408-1800 MHz); big out of reach"]
        );
        // Where the line has no room for it, on a line of its own.
        let mut wordy = little.clone();
        wordy.core = Some("Cortex-A55 r2p0 (a long model name)".into());
        let board = [wordy, big[0].clone()];
        assert_eq!(
            cluster_lines(&board, None, false, &[0]),
            [
                "on the little cluster: 4 × Cortex-A55 r2p0 (a long model name) (cpu0-3, 408-1800 MHz)",
                "  the big cluster (cpu4-5) was out of this run's reach",
            ]
        );
        assert_eq!(
            cluster_lines(&rk3588, None, false, &[6]),
            ["on the big cluster: 2 × Cortex-A76 (cpu6-7, 408-2352 MHz)"]
        );
        // Three kinds of core: the one between is a middle cluster.
        let three = [
            little.clone(),
            cluster(&[4, 5, 6], "Cortex-A78", 800, 2600),
            cluster(&[7], "Cortex-X3", 1024, 3200),
        ];
        assert_eq!(
            cluster_lines(&three, Some(&three[1]), false, &[4, 5, 6]),
            ["on a middle cluster: 3 × Cortex-A78 (cpu4-6, 408-2600 MHz)"]
        );
        // One kind of core: nothing said, unless --cluster chose.
        let pi4 = [cluster(&[0, 1, 2, 3], "Cortex-A72", 1024, 1800)];
        assert!(cluster_lines(&pi4, None, false, &all).is_empty());
        assert_eq!(
            cluster_lines(&pi4, Some(&pi4[0]), false, &all),
            ["on one cluster: 4 × Cortex-A72 (cpu0-3, 408-1800 MHz)"]
        );
    }

    #[test]
    fn wrapped_lists_stay_within_80_columns() {
        let items: Vec<String> = (0..12)
            .map(|i| format!("pattern{i} 2.04x slower"))
            .collect();
        let lines = wrap("  others:", &items);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= WIDTH),
            "{lines:?}"
        );
        assert_eq!(lines.join(" ").matches("slower").count(), 12);
        assert_eq!(wrap("a:", &["b".into()]), ["a:b"]);
    }

    #[test]
    fn each_result_is_answered_with_the_row_of_its_benchmark() {
        let answerer = with_rows(vec!["a", "b", "c"], |pairs| {
            pairs
                .iter()
                .map(|(row, r)| format!("{row} {}", r.raw[0][0]))
                .collect()
        });
        let result = |index: usize, score: f64| BenchResult {
            index,
            ..sample_result("bb.x", "1", vec![score])
        };
        // Benchmark b failed: c's result is the second, and keeps its row.
        assert_eq!(answerer(&[result(0, 1.0), result(2, 3.0)]), ["a 1", "c 3"]);
        assert!(answerer(&[result(3, 4.0)]).is_empty(), "no such row");
    }

    #[test]
    fn the_main_placement_is_the_one_most_rows_ran_in() {
        let row =
            |placement: Option<&'static str>| (placement, sample_result("bb.x", "1", vec![1.0]));
        let rows = [
            row(Some("one-core")),
            row(Some("two-cores")),
            row(Some("two-cores")),
            row(None),
        ];
        let placements = || rows.iter().filter_map(|(p, _)| *p);
        assert_eq!(most_common(placements()), Some("two-cores"));
        assert_eq!(most_common(placements().take(2)), Some("one-core"));
        assert_eq!(most_common(placements().skip(3)), None);
        assert_eq!(distinct(placements()), ["one-core", "two-cores"]);
        let pairs: Vec<(&Option<&str>, &BenchResult)> = rows.iter().map(|(p, r)| (p, r)).collect();
        assert_eq!(rows_in(&pairs, Some(&"two-cores"), Option::as_ref).len(), 3);
        assert_eq!(rows_in(&pairs, None, Option::as_ref).len(), 4);
    }

    #[test]
    fn noise_is_told_apart_from_a_difference_over_forks() {
        use crate::model::result::tests::forked_result;
        let forks = |scale: f64, jitter: f64| -> Vec<Vec<f64>> {
            [[100.0, 101.0], [99.0, 100.5], [100.2, 99.8]]
                .iter()
                .enumerate()
                .map(|(i, f)| f.iter().map(|v| v * scale + jitter * i as f64).collect())
                .collect()
        };
        let a = forked_result("bb.x", "1", forks(1.0, 0.0));
        let b = forked_result("bb.x", "2", forks(0.8, 0.0));
        let c = forked_result("bb.x", "4", forks(1.0, 0.3));
        assert_eq!(differ(&a, &b), Some(true));
        assert_eq!(differ(&a, &c), Some(false));
        assert_eq!(noise_mark(differ(&a, &c)), " (noise)");
        // One fork a side: its iterations say nothing of the next run, the band does.
        let one = |v: f64| sample_result("bb.x", "1", vec![v, v + 0.1, v - 0.1]);
        assert_eq!(differ(&one(100.0), &one(80.0)), Some(false));
        assert_eq!(differ(&one(100.0), &one(200.0)), Some(true));
        assert_eq!(differ(&a, &sample_result("bb.x", "1", vec![])), None);
    }

    #[test]
    fn counters_give_cycles_per_byte_and_ipc_of_the_headline_rows() {
        use crate::model::result::tests::sample_result;
        use crate::model::result::Secondary;
        let row = |threads: &str, per_byte: f64, ipc: f64| {
            let mut r = sample_result("bb.zstd.compress", threads, vec![1.0]);
            r.secondary = vec![
                Secondary::new("cycles/op", "cycles/op", vec![vec![per_byte * 1000.0]]),
                Secondary::new("cycles/byte", "cycles/byte", vec![vec![per_byte]]),
                Secondary::new("IPC", "IPC", vec![vec![ipc]]),
            ];
            r
        };
        assert_eq!(
            counters_line(&[sample_result("bb.x", "1", vec![1.0])]),
            None
        );
        let line = counters_line(&[row("1", 3.1, 2.0), row("2", 3.4, 2.5)]).unwrap();
        assert_eq!(
            line,
            "cycles/byte: 3.10 compress (threads=1), 3.40 compress (threads=2); IPC 2.00-2.50"
        );
    }

    #[test]
    fn flagged_headline_rows_are_counted_and_every_flag_named() {
        use crate::system::validity::Flag;
        let row = |headline: bool, flags: &[Flag]| {
            let mut r = sample_result("bb.zstd.compress", "1", vec![1.0]);
            r.headline = headline;
            r.throttle.flags = flags.to_vec();
            r
        };
        assert!(flagged_lines(&[row(true, &[])]).is_empty());
        // Only the headline rows count; each flag named once.
        let rows = [
            row(true, &[Flag::Busy]),
            row(true, &[Flag::Governor, Flag::Busy]),
            row(true, &[]),
            row(false, &[Flag::Swapped]),
        ];
        assert_eq!(
            flagged_lines(&rows),
            ["flagged: 2 of 3 headline rows (busy, governor): not the board at its best"]
        );
        // Every flag at once: wrapped, none cut.
        let all = [row(true, &crate::system::validity::ALL)];
        let lines = flagged_lines(&all);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= WIDTH),
            "{lines:?}"
        );
        assert!(
            lines[0].starts_with("flagged: 1 of 1 headline rows: throttled, "),
            "{lines:?}"
        );
        let said = lines.join(" ");
        for flag in crate::system::validity::ALL {
            assert!(said.contains(flag.name()), "{}: {lines:?}", flag.name());
        }
        // Two long names: the names kept, the words after them left out.
        let two = [row(true, &[Flag::ClockMismatch, Flag::ClockBelowTarget])];
        assert_eq!(
            flagged_lines(&two),
            ["flagged: 1 of 1 headline rows (clock-below-target, clock-mismatch)"]
        );
    }

    #[test]
    fn the_tail_of_an_answer_keeps_its_room_within_the_eight_lines() {
        let own: Vec<String> = (1..=10).map(|i| format!("line {i}")).collect();
        let tail = vec![
            "flagged: 1 of 2 headline rows (busy)".to_string(),
            "on x".into(),
        ];
        let a = Answer::with_tail("bb-x".into(), own, tail);
        assert_eq!(a.lines.len(), MAX_LINES);
        assert_eq!(a.lines[4], "line 5");
        assert_eq!(a.lines[5], "… 5 more lines left out: the table has them");
        assert_eq!(
            a.lines[6..],
            ["flagged: 1 of 2 headline rows (busy)", "on x"]
        );
        let short = Answer::with_tail("bb-x".into(), vec!["a".into()], vec!["b".into()]);
        assert_eq!(short.lines, ["a", "b"]);
    }
}
