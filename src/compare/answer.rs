//! bb-compare's answer: which run is faster at what, by how much, and whether that is
//! more than noise, per benchmark family (`bb.zstd.*`), each run after the first against
//! the first, in lines of at most [`WIDTH`] columns under the marker
//! `== bb-compare: the answer ==`. It is drawn from the rows' verdicts alone: `same`
//! within the threshold, `faster`/`slower` beyond it and significant ("beyond noise"),
//! `noise` and `?` beyond it but not shown to be more than noise. A tie (`same` or
//! `noise`) says what it is worth: the smallest change its comparison could have called
//! at 95% power, `a tie (1.01x; could see 4% or more)`.

use super::{Cell, Comparison, Row, Test, Verdict};
pub use crate::model::answer::WIDTH;
use crate::model::answer::{times, Answer};
use crate::stats::power::percent;

/// The program whose answer this is, as the marker names it.
pub const PROGRAM: &str = "bb-compare";

/// The line the block starts with, which scripts look for.
pub fn marker() -> String {
    Answer::marker(PROGRAM)
}

/// The benchmark family a row belongs to: the binary for boardbench's names (`bb.zstd`
/// for `bb.zstd.compress`, `bb.rpc.sweep.x` too), the class for JMH's (`org.x.Bench`
/// for `org.x.Bench.method`), the name itself where it has no dot.
pub fn family(benchmark: &str) -> &str {
    let name = benchmark.split(':').next().unwrap_or(benchmark);
    if let Some(rest) = name.strip_prefix("bb.") {
        let end = rest.find('.').map_or(name.len(), |i| i + 3);
        return &name[..end];
    }
    name.rsplit_once('.').map_or(name, |(class, _)| class)
}

/// How one family's rows came out for one run against the first.
#[derive(Default)]
struct Tally {
    /// Rows both runs have.
    compared: usize,
    same: usize,
    /// Per side (0: the first run ahead, 1: the other), each row's factor (at least 1)
    /// and whether it is beyond noise.
    ahead: [Vec<(f64, bool)>; 2],
    /// Rows only the first run has, and rows only the other has.
    only: [usize; 2],
    /// The ties (`same` or `noise`): each one's speed, the other run's over the first's,
    /// the smallest change its comparison could see, and its verdict.
    ties: Vec<(f64, f64, Verdict)>,
}

impl Tally {
    fn add(&mut self, row: &Row, column: usize) {
        let (base, other) = (&row.cells[0], &row.cells[column]);
        let change = other.as_ref().and_then(|c| c.change.as_ref());
        let Some(change) = change else {
            match (base.is_some(), other.is_some()) {
                (true, false) => self.only[0] += 1,
                (false, true) => self.only[1] += 1,
                _ => {}
            }
            return;
        };
        self.compared += 1;
        // The other run's speed over the first's: above 1 where it is ahead.
        let speed = if row.higher_is_better {
            change.ratio
        } else {
            1.0 / change.ratio
        };
        if matches!(change.verdict, Verdict::Same | Verdict::Noise) {
            self.ties.push((speed, change.smallest, change.verdict));
        }
        if change.verdict == Verdict::Same {
            self.same += 1;
            return;
        }
        let beyond = matches!(change.verdict, Verdict::Faster | Verdict::Slower);
        if speed >= 1.0 {
            self.ahead[1].push((speed, beyond));
        } else {
            self.ahead[0].push((1.0 / speed, beyond));
        }
    }
}

pub(crate) fn rows_text(n: usize) -> String {
    format!("{n} row{}", if n == 1 { "" } else { "s" })
}

/// The answer's lines (without the marker), each at most [`WIDTH`] columns: per run
/// after the first and per family, who is faster, by how much, and how much of it is
/// beyond noise. None with fewer than two runs.
pub fn lines(c: &Comparison) -> Vec<String> {
    if c.labels.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for column in 1..c.labels.len() {
        let names = [c.labels[0].as_str(), c.labels[column].as_str()];
        if c.labels.len() > 2 {
            out.push(format!("{} against {}:", names[1], names[0]));
        }
        for (what, rows) in families(&c.rows) {
            let mut t = Tally::default();
            for row in rows {
                t.add(row, column);
            }
            for line in family_lines(&t, &what, names, c.criteria.threshold) {
                out.extend(wrap(&line, WIDTH));
            }
        }
    }
    out.extend(flagged_line(c));
    out.extend(noise_line(c));
    out
}

/// Where two runs were told apart without their board's run-to-run noise (no
/// calibration in their files, and no `--noise`), one line says so; where `--noise`
/// gave it, one line names the profile. An A/B file's pairs need neither.
fn noise_line(c: &Comparison) -> Option<String> {
    if let Some((board, measured)) = &c.noise {
        let line = crate::util::format::printable(&format!(
            "run-to-run noise from --noise ({measured}): {board}"
        ));
        return Some(match line.chars().count() > WIDTH {
            true => line.chars().take(WIDTH - 1).chain(['…']).collect(),
            false => line,
        });
    }
    let between_runs = c.rows.iter().any(|row| {
        let base = row.cells.first().and_then(|c| c.as_ref());
        row.cells.iter().skip(1).flatten().any(|cell| {
            cell.change
                .as_ref()
                .is_some_and(|ch| ch.test != Test::Pairs)
                && (!cell.calibrated || base.is_some_and(|b| !b.calibrated))
        })
    });
    between_runs.then(|| {
        "verdicts leave out run-to-run noise: no calibration (run-all.sh --calibrate)".into()
    })
}

/// `2 rows flagged as they ran (throttled, busy): no verdict; --accept-invalid judges
/// them`: where a comparison's side was flagged and it was given no faster or slower.
fn flagged_line(c: &Comparison) -> Option<String> {
    let judged_flagged = |cell: &Cell| {
        cell.change
            .as_ref()
            .is_some_and(|ch| ch.verdict == Verdict::Flagged)
    };
    // Rows, not cells: with three runs a row has two comparisons.
    let rows: Vec<&Row> = c
        .rows
        .iter()
        .filter(|r| r.cells.iter().flatten().any(judged_flagged))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut why: Vec<&str> = Vec::new();
    for name in rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .flat_map(|cell| &cell.flags)
    {
        if !why.contains(&name.as_str()) {
            why.push(name);
        }
    }
    Some(crate::model::answer::fit(&format!(
        "{} flagged as they ran ({}): no verdict; --accept-invalid judges them",
        rows_text(rows.len()),
        why.join(", ")
    )))
}

/// The rows by family, in order of first appearance, each family named as a pattern
/// (`bb.zstd.*`), or by itself where it is the benchmark's whole name.
pub fn families(rows: &[Row]) -> Vec<(String, Vec<&Row>)> {
    let mut out: Vec<(&str, Vec<&Row>)> = Vec::new();
    for row in rows {
        let f = family(&row.benchmark);
        match out.iter_mut().find(|(name, _)| *name == f) {
            Some((_, members)) => members.push(row),
            None => out.push((f, vec![row])),
        }
    }
    out.into_iter()
        .map(|(f, members)| {
            let whole = members.iter().all(|r| r.benchmark == f);
            (
                if whole {
                    f.to_string()
                } else {
                    format!("{f}.*")
                },
                members,
            )
        })
        .collect()
}

/// One family's lines: a line per side with rows beyond noise, then the rest; or one
/// line where nothing is beyond noise.
fn family_lines(t: &Tally, what: &str, names: [&str; 2], threshold: f64) -> Vec<String> {
    let beyond = |side: usize| t.ahead[side].iter().filter(|r| r.1).count();
    let same = format!("same within {}%", threshold * 100.0);
    let only: Vec<String> = (0..2)
        .filter(|&side| t.only[side] > 0)
        .map(|side| format!("{} only in {}", rows_text(t.only[side]), names[side]))
        .collect();
    let with_only = |line: String| {
        if only.is_empty() {
            line
        } else {
            format!("{line}; {}", only.join(", "))
        }
    };
    if t.compared == 0 {
        return vec![format!("{what}: {}", only.join(", "))];
    }
    let seen = could_see(&t.ties);
    if let [(speed, smallest, verdict)] = t.ties[..] {
        if t.compared == 1 {
            let how = match verdict {
                Verdict::Same => same.clone(),
                _ => "within noise".to_string(),
            };
            let seen = could_see(&[(speed, smallest, verdict)]);
            let worth = seen.map_or(String::new(), |s| format!("; {s}"));
            return vec![with_only(format!(
                "{what}: a tie ({}{worth}), {how}",
                times(speed)
            ))];
        }
    }
    let worth = |line: String| match &seen {
        Some(s) => format!("{line}; {s}"),
        None => line,
    };
    if t.same == t.compared {
        return vec![with_only(format!(
            "{what}: {same} ({})",
            worth(rows_text(t.compared))
        ))];
    }
    // The side ahead beyond noise at more rows first.
    let mut sides = [1, 0];
    sides.sort_by_key(|&s| std::cmp::Reverse((beyond(s), t.ahead[s].len())));
    if beyond(0) + beyond(1) == 0 {
        let mut parts: Vec<String> = sides
            .iter()
            .filter(|&&s| !t.ahead[s].is_empty())
            .map(|&s| format!("{} ahead at {}", names[s], t.ahead[s].len()))
            .collect();
        if t.same > 0 {
            parts.push(format!("{} {same}", t.same));
        }
        return vec![with_only(format!(
            "{what}: nothing beyond noise ({}: {})",
            rows_text(t.compared),
            worth(parts.join(", "))
        ))];
    }
    let mut out = Vec::new();
    let mut rest = Vec::new();
    for side in sides {
        let rows = &t.ahead[side];
        if rows.is_empty() {
            continue;
        }
        let b = beyond(side);
        if b == 0 {
            rest.push(format!(
                "{} ahead at {} within noise",
                names[side],
                rows.len()
            ));
            continue;
        }
        let lo = rows.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
        let hi = rows.iter().map(|r| r.0).fold(0.0, f64::max);
        let range = if times(lo) == times(hi) {
            times(lo)
        } else {
            format!("{} to {}", times(lo), times(hi))
        };
        let noise = if b == rows.len() && b > 1 {
            "all beyond noise".to_string()
        } else {
            format!("{b} beyond noise")
        };
        let count = if rows.len() == t.compared {
            rows_text(t.compared)
        } else {
            format!("{} of {}", rows.len(), rows_text(t.compared))
        };
        out.push(format!(
            "{} is faster at {what} ({count}): {range}, {noise}",
            names[side]
        ));
    }
    if t.same > 0 {
        rest.push(format!("{} {same}", t.same));
    }
    rest.extend(only);
    if !rest.is_empty() {
        out.push(worth(format!("{what}, the rest: {}", rest.join(", "))));
    }
    out
}

/// What the ties could have seen: `could see 4% or more` (the smallest change their
/// comparisons could call at 95% power), `could see 2% to 9% or more` where they
/// differ; None without a tie that has the figure.
fn could_see(ties: &[(f64, f64, Verdict)]) -> Option<String> {
    let figures: Vec<f64> = ties.iter().map(|t| t.1).filter(|s| s.is_finite()).collect();
    let lo = percent(figures.iter().copied().reduce(f64::min)?);
    let hi = percent(figures.iter().copied().fold(0.0, f64::max));
    Some(match lo == hi {
        true => format!("could see {hi} or more"),
        false => format!("could see {lo} to {hi} or more"),
    })
}

/// `line` in lines of at most `width` columns, broken at spaces, the later ones
/// indented by two; a word longer than a line is cut, ending in `…`.
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in line.split(' ') {
        let indent = if out.is_empty() { 0 } else { 2 };
        let room = width - indent;
        let word: String = if word.chars().count() > room {
            word.chars().take(room - 1).chain(['…']).collect()
        } else {
            word.to_string()
        };
        let len = current.chars().count();
        if len > 0 && len + 1 + word.chars().count() > room {
            out.push(format!("{}{current}", " ".repeat(indent)));
            current = word;
        } else {
            if len > 0 {
                current.push(' ');
            }
            current.push_str(&word);
        }
    }
    let indent = if out.is_empty() { 0 } else { 2 };
    out.push(format!("{}{current}", " ".repeat(indent)));
    out
}

/// The block as text: the marker, then the lines; nothing with fewer than two runs.
pub fn text(c: &Comparison) -> String {
    let lines = lines(c);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = marker();
    out.push('\n');
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{criteria, measurement};
    use super::super::{compare, Measurement};
    use super::*;

    /// Five iterations around `mean`, spread ±1%.
    fn around(mean: f64) -> Vec<f64> {
        [1.0, 1.01, 0.99, 1.005, 0.995].map(|f| f * mean).to_vec()
    }

    fn m(name: &str, size: &str, raw: Vec<f64>) -> Measurement {
        measurement(name, &[("size", size)], &raw)
    }

    fn answer(base: Vec<Measurement>, new: Vec<Measurement>) -> Vec<String> {
        lines(&compare(
            vec![("board1".into(), base), ("board2".into(), new)],
            criteria(),
        ))
    }

    #[test]
    fn families_are_the_binary_or_the_class() {
        assert_eq!(family("bb.zstd.compress"), "bb.zstd");
        assert_eq!(family("bb.rpc.sweep.open"), "bb.rpc");
        assert_eq!(family("bb.seek"), "bb.seek");
        assert_eq!(family("bb.ipc.call:MB/s"), "bb.ipc");
        assert_eq!(family("org.x.Bench.run"), "org.x.Bench");
        assert_eq!(family("plain"), "plain");
    }

    #[test]
    fn one_side_ahead_says_by_how_much_and_how_much_is_beyond_noise() {
        let base = vec![
            m("bb.zstd.compress", "1", around(100.0)),
            m("bb.zstd.compress", "2", around(100.0)),
            m(
                "bb.zstd.decompress",
                "1",
                vec![100.0, 160.0, 40.0, 130.0, 70.0],
            ),
        ];
        let new = vec![
            m("bb.zstd.compress", "1", around(140.0)),
            m("bb.zstd.compress", "2", around(220.0)),
            m(
                "bb.zstd.decompress",
                "1",
                vec![150.0, 100.0, 200.0, 90.0, 160.0],
            ),
        ];
        assert_eq!(
            answer(base, new),
            ["board2 is faster at bb.zstd.* (3 rows): 1.40x to 2.20x, 2 beyond noise"]
        );
    }

    #[test]
    fn differences_within_noise_are_said_to_be_so() {
        let noisy = |f: f64| vec![100.0 * f, 160.0 * f, 40.0 * f, 130.0 * f, 70.0 * f];
        let base = vec![
            m("bb.ipc.call", "1", noisy(1.0)),
            m("bb.ipc.call", "2", noisy(1.0)),
            m("bb.ipc.call", "3", around(100.0)),
        ];
        let new = vec![
            m("bb.ipc.call", "1", noisy(1.3)),
            m("bb.ipc.call", "2", noisy(0.7)),
            m("bb.ipc.call", "3", around(101.0)),
        ];
        assert_eq!(
            answer(base, new),
            [
                "bb.ipc.*: nothing beyond noise (3 rows: board2 ahead at 1, board1 ahead at 1, 1",
                "  same within 5%; could see 3% to 184% or more)",
            ]
        );
    }

    #[test]
    fn a_family_within_the_threshold_is_the_same_and_sides_are_told_apart() {
        let mut base = vec![
            m("bb.seek.read", "1", around(100.0)),
            m("bb.seek.read", "2", around(50.0)),
        ];
        let mut new = vec![
            m("bb.seek.read", "1", around(102.0)),
            m("bb.seek.read", "2", around(49.0)),
        ];
        // bb.rpc: board2 ahead at one row, board1 at two, one the same, one on one side.
        base.extend([
            m("bb.rpc.sync", "1", around(100.0)),
            m("bb.rpc.sync", "2", around(300.0)),
            m("bb.rpc.sync", "3", around(300.0)),
            m("bb.rpc.sync", "4", around(10.0)),
            m("bb.rpc.sync", "5", around(10.0)),
        ]);
        new.extend([
            m("bb.rpc.sync", "1", around(200.0)),
            m("bb.rpc.sync", "2", around(150.0)),
            m("bb.rpc.sync", "3", around(100.0)),
            m("bb.rpc.sync", "4", around(10.1)),
        ]);
        let lines = answer(base, new);
        assert_eq!(
            lines,
            [
                "bb.seek.*: same within 5% (2 rows; could see 3% or more)",
                "board1 is faster at bb.rpc.* (2 of 4 rows): 2.00x to 3.00x, all beyond noise",
                "board2 is faster at bb.rpc.* (1 of 4 rows): 2.00x, 1 beyond noise",
                "bb.rpc.*, the rest: 1 same within 5%, 1 row only in board1; could see 3% or more",
            ],
        );
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH));
    }

    #[test]
    fn a_tie_says_the_smallest_change_it_could_have_seen() {
        // One row, 8% apart within forks that spread by 30%: a tie, and what it was worth.
        let noisy = |f: f64| [100.0, 140.0, 70.0, 120.0, 80.0].map(|v| v * f).to_vec();
        let base = vec![m("bb.zstd.compress", "1", noisy(1.0))];
        let new = vec![m("bb.zstd.compress", "1", noisy(1.08))];
        let c = compare(
            vec![("board1".into(), base), ("board2".into(), new)],
            criteria(),
        );
        let change = c.rows[0].cells[1].as_ref().unwrap().change.clone().unwrap();
        assert_eq!(change.verdict, Verdict::Noise);
        let seen = percent(change.smallest);
        assert_eq!(
            lines(&c),
            [format!(
                "bb.zstd.*: a tie (1.08x; could see {seen} or more), within noise"
            )]
        );
        // Figures that differ give their range; none, nothing.
        let tie = |s: f64| (1.0, s, Verdict::Same);
        assert_eq!(
            could_see(&[tie(0.041), tie(0.09)]).unwrap(),
            "could see 4% to 9% or more"
        );
        assert_eq!(could_see(&[tie(f64::NAN)]), None);
    }

    #[test]
    fn runs_without_their_boards_noise_are_said_to_leave_it_out() {
        let run = |calibrated: bool, f: f64| {
            let mut m = m("bb.zstd.compress", "1", around(100.0 * f));
            m.calibrated = calibrated;
            vec![m]
        };
        let judged = |a: bool, b: bool| {
            let c = compare(
                vec![
                    ("board1".into(), run(a, 1.0)),
                    ("board2".into(), run(b, 2.0)),
                ],
                criteria(),
            );
            lines(&c)
        };
        let said = "verdicts leave out run-to-run noise: no calibration (run-all.sh --calibrate)";
        assert!(judged(true, false).contains(&said.to_string()));
        assert!(judged(false, true).contains(&said.to_string()));
        assert!(!judged(true, true).contains(&said.to_string()));
        // A profile --noise gave is named instead.
        let mut c = compare(
            vec![
                ("board1".into(), run(true, 1.0)),
                ("board2".into(), run(true, 2.0)),
            ],
            criteria(),
        );
        c.noise = Some((
            "pi4: Raspberry Pi 4, 4 cores, aarch64".into(),
            "2026-12-08".into(),
        ));
        assert_eq!(
            lines(&c).last().unwrap(),
            "run-to-run noise from --noise (2026-12-08): pi4: Raspberry Pi 4, 4 cores, aarch…"
        );
    }

    #[test]
    fn lower_is_better_rows_count_less_time_as_faster() {
        let time = |raw: Vec<f64>| {
            let mut m = measurement("org.x.Bench.op", &[], &raw);
            m.mode = "avgt".into();
            m.unit = "us/op".into();
            m.higher_is_better = false;
            m
        };
        let lines = answer(vec![time(around(30.0))], vec![time(around(10.0))]);
        assert_eq!(
            lines,
            ["board2 is faster at org.x.Bench.* (1 row): 3.00x, 1 beyond noise"]
        );
    }

    #[test]
    fn three_runs_answer_each_against_the_first_and_one_run_says_nothing() {
        let runs = vec![
            ("a".to_string(), vec![m("bb.x.y", "1", around(100.0))]),
            ("b".to_string(), vec![m("bb.x.y", "1", around(100.0))]),
            ("c".to_string(), vec![m("bb.x.y", "1", around(50.0))]),
        ];
        let c = compare(runs.clone(), criteria());
        assert_eq!(
            lines(&c),
            [
                "b against a:",
                "bb.x.*: a tie (1.00x; could see 3% or more), same within 5%",
                "c against a:",
                "a is faster at bb.x.* (1 row): 2.00x, 1 beyond noise",
            ]
        );
        assert!(text(&c).starts_with("== bb-compare: the answer ==\n"));
        let one = compare(runs[..1].to_vec(), criteria());
        assert!(lines(&one).is_empty() && text(&one).is_empty());
    }

    #[test]
    fn long_lines_wrap_at_spaces_and_long_words_are_cut() {
        let long = format!("{} tail", "w ".repeat(50));
        let wrapped = wrap(&long, WIDTH);
        assert!(
            wrapped.iter().all(|l| l.chars().count() <= WIDTH),
            "{wrapped:?}"
        );
        assert!(wrapped[1].starts_with("  w"));
        assert_eq!(wrapped.join(" ").split_whitespace().count(), 51);
        let word = "x".repeat(200);
        let cut = wrap(&word, WIDTH);
        assert_eq!(cut.len(), 1);
        assert_eq!(cut[0].chars().count(), WIDTH);
        assert!(cut[0].ends_with('…'));
    }
}
