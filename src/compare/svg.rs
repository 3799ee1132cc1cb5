//! bb-compare's chart: plain SVG, no dependencies, viewable in any browser. One panel per
//! benchmark with a bar per run and its error bar; for thread sweeps (the same throughput
//! benchmark at several `threads`), throughput against threads with the ideal line; for
//! open loops offered several loads (`bb-rpc --rate`), p50, p99 and p99.9 latency against
//! the achieved rate on a log axis, where the knee shows. The first panels are each
//! family's headline (its row of the largest difference between the first two runs);
//! titles leave out the params common to a family's rows (named once at the top) and
//! wrap the rest over lines, never cut; the chart stops at [`MAX_HEIGHT`] pixels, saying
//! how many panels it left out.

use super::{Cell, Comparison, Row};
use crate::util::xml::document_text as escape;
use std::fmt::Write;

const COLORS: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];
const PANEL_W: f64 = 300.0;
/// A panel's height below its title: the plot and its labels.
const PLOT_H: f64 = 186.0;
const COLUMNS: usize = 3;
const MARGIN: f64 = 16.0;
/// The font's size, and the widest advance of one of its characters as titles are laid
/// out (0.62 em: sans-serif's widest lower-case letters and digits, bold).
pub const FONT_SIZE: f64 = 11.0;
pub const ADVANCE: f64 = 0.62 * FONT_SIZE;
/// A title line's height.
const LINE_H: f64 = 13.0;
/// The most characters of a title line: the panel's width less its padding.
pub const TITLE_CHARS: usize = ((PANEL_W - 12.0) / ADVANCE) as usize;
/// The chart's greatest height: about three screens.
pub const MAX_HEIGHT: f64 = 3000.0;
/// The headline panels' frame.
const HEADLINE_STROKE: &str = "#d62728";

fn color(i: usize) -> &'static str {
    COLORS[i % COLORS.len()]
}

/// A short number for axis labels: 1234 → 1.234k; small ones keep their digits
/// (0.000003 → 3.00e-6, never 0.000).
fn short(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a < 0.01 {
        format!("{v:.2e}")
    } else if a >= 1e9 {
        format!("{:.3}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.3}k", v / 1e3)
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Time units from the smallest, as JMH names them.
const TIME_UNITS: [&str; 7] = ["ns", "us", "ms", "s", "min", "hr", "day"];

/// The unit a panel shows values in, and the factor from the row's unit: a time per
/// operation or a rate whose largest value is below 1 moves to the time unit where it is
/// 1 or more (3e-9 s/op shows as 3 ns/op, 2e-5 ops/s as 1.728 ops/day); other units
/// stay as they are.
fn display_unit(unit: &str, max: f64) -> (f64, String) {
    let seconds = super::seconds_in;
    let keep = (1.0, unit.to_string());
    if !(max > 0.0 && max < 1.0) {
        return keep;
    }
    if let Some(from) = unit.strip_suffix("/op").and_then(seconds) {
        // The largest unit in which the largest value is at least 1.
        let to = TIME_UNITS
            .iter()
            .rev()
            .find(|u| max * from / seconds(u).unwrap() >= 1.0)
            .unwrap_or(&"ns");
        return (from / seconds(to).unwrap(), format!("{to}/op"));
    }
    if let Some(per) = unit.strip_prefix("ops/").and_then(seconds) {
        // The smallest period in which the largest value is at least 1.
        let Some(to) = TIME_UNITS
            .iter()
            .find(|u| max * seconds(u).unwrap() / per >= 1.0)
        else {
            return keep;
        };
        return (seconds(to).unwrap() / per, format!("ops/{to}"));
    }
    keep
}

/// A thread sweep: rows of one benchmark that differ only in `threads`.
struct Sweep<'a> {
    title: String,
    unit: String,
    points: Vec<(f64, &'a Row)>,
}

fn threads_of(row: &Row) -> Option<f64> {
    row.params
        .iter()
        .find(|(k, _)| k == "threads")
        .and_then(|(_, v)| v.parse::<f64>().ok())
        .filter(|t| *t > 0.0)
}

fn sweeps(c: &Comparison) -> Vec<Sweep<'_>> {
    let mut out: Vec<Sweep> = Vec::new();
    for row in c.rows.iter().filter(|r| r.higher_is_better) {
        let Some(t) = threads_of(row) else { continue };
        let rest: Vec<&(String, String)> =
            row.params.iter().filter(|(k, _)| k != "threads").collect();
        let title = super::label(
            &row.benchmark,
            &rest.iter().map(|p| (*p).clone()).collect::<Vec<_>>(),
        );
        match out
            .iter_mut()
            .find(|s| s.title == title && s.unit == row.unit)
        {
            Some(s) => s.points.push((t, row)),
            None => out.push(Sweep {
                title,
                unit: row.unit.clone(),
                points: vec![(t, row)],
            }),
        }
    }
    out.retain(|s| s.points.len() >= 2);
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// What a panel draws.
enum Kind<'a> {
    /// A family's row of the largest difference, as bars.
    Headline(&'a Row),
    Sweep(Sweep<'a>),
    Curve(LoadCurve<'a>),
    Bar(&'a Row),
}

struct Panel<'a> {
    kind: Kind<'a>,
    /// The title's lines: the name, then its params, wrapped.
    title: Vec<String>,
}

/// The params every row of a family has with one value, per family: left out of the
/// titles and named once at the top.
fn common_params(c: &Comparison) -> Vec<(String, Vec<(String, String)>)> {
    super::answer::families(&c.rows)
        .into_iter()
        .map(|(what, rows)| {
            let mut common = rows[0].params.clone();
            common.retain(|p| rows.iter().all(|r| r.params.contains(p)));
            // One row alone has nothing to tell apart from: its params stay.
            if rows.len() < 2 {
                common.clear();
            }
            (what, common)
        })
        .collect()
}

/// `name (params)` as title lines of at most [`TITLE_CHARS`]: the name, then the params
/// not in `common`, broken after their commas; a word too long for a line is broken
/// inside, never cut.
pub fn title_lines(
    name: &str,
    params: &[(String, String)],
    common: &[(String, String)],
) -> Vec<String> {
    let mut lines = Vec::new();
    hard_wrap(&mut lines, name);
    let rest: Vec<String> = params
        .iter()
        .filter(|p| !common.contains(p))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let mut current = String::new();
    for (i, word) in rest.iter().enumerate() {
        let word = if i + 1 < rest.len() {
            format!("{word},")
        } else {
            word.clone()
        };
        let len = current.chars().count();
        if len > 0 && len + 1 + word.chars().count() > TITLE_CHARS {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&word);
        if current.chars().count() > TITLE_CHARS {
            let long = std::mem::take(&mut current);
            hard_wrap(&mut lines, &long);
            current = lines.pop().unwrap_or_default();
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// `text` in pieces of at most [`TITLE_CHARS`] characters.
fn hard_wrap(lines: &mut Vec<String>, text: &str) {
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(TITLE_CHARS) {
        lines.push(piece.iter().collect());
    }
}

/// Each family's headline: of the rows both of the first two runs have (but those on a
/// load curve, which shows them better), the one whose ratio is furthest from 1 (on a
/// log scale), among those beyond noise where there are any.
fn headlines<'a>(c: &'a Comparison, curves: &[LoadCurve]) -> Vec<&'a Row> {
    if c.labels.len() < 2 {
        return Vec::new();
    }
    let change = |r: &Row| r.cells[1].as_ref().and_then(|x| x.change.clone());
    super::answer::families(&c.rows)
        .into_iter()
        .filter_map(|(_, rows)| {
            let compared: Vec<&Row> = rows
                .into_iter()
                .filter(|r| change(r).is_some_and(|ch| ch.ratio > 0.0 && ch.ratio.is_finite()))
                .filter(|r| {
                    !curves
                        .iter()
                        .any(|k| k.points.iter().any(|p| std::ptr::eq(*p, *r)))
                })
                .collect();
            let beyond: Vec<&Row> = compared
                .iter()
                .copied()
                .filter(|r| {
                    change(r).is_some_and(|ch| {
                        matches!(ch.verdict, super::Verdict::Faster | super::Verdict::Slower)
                    })
                })
                .collect();
            let pool = if beyond.is_empty() { compared } else { beyond };
            pool.into_iter().max_by(|a, b| {
                let size = |r: &Row| change(r).map_or(0.0, |ch| ch.ratio.ln().abs());
                size(a).total_cmp(&size(b))
            })
        })
        .collect()
}

/// Renders the whole chart: its panels chosen, the header's notes, the panels laid out
/// within [`MAX_HEIGHT`], then drawn.
pub fn render(c: &Comparison) -> String {
    let common = common_params(c);
    let mut panels = panels(c, &common);
    let notes = header_notes(c, &panels, &common);
    let layout = Layout::fit(&mut panels, c.labels.len(), notes.len());
    let mut out = String::new();
    header(&mut out, c, &notes, &layout);
    for (i, panel) in panels.iter().enumerate() {
        let at = layout.at(i, &panel.title);
        match &panel.kind {
            Kind::Headline(row) => bar_panel(&mut out, c, row, &at, true),
            Kind::Sweep(s) => sweep_panel(&mut out, c, s, &at),
            Kind::Curve(k) => load_panel(&mut out, c, k, &at),
            Kind::Bar(row) => bar_panel(&mut out, c, row, &at, false),
        }
    }
    if layout.left_out > 0 {
        let _ = writeln!(
            out,
            r##"<text x="{MARGIN}" y="{}" fill="#a00">{} more panels left out: the chart stops at {MAX_HEIGHT} px; the table has every row.</text>"##,
            layout.height - MARGIN,
            layout.left_out
        );
    }
    out.push_str("</svg>\n");
    out
}

/// Every panel in the order drawn: each family's headline, the thread sweeps, the load
/// curves, then a bar panel for each row that none of those shows; titles without the
/// params `common` to their family.
fn panels<'a>(c: &'a Comparison, common: &[(String, Vec<(String, String)>)]) -> Vec<Panel<'a>> {
    let common_of = |benchmark: &str| -> &[(String, String)] {
        let f = super::answer::family(benchmark);
        common
            .iter()
            .find(|(what, _)| what.trim_end_matches(".*") == f)
            .map_or(&[], |(_, p)| p.as_slice())
    };
    let sweeps = sweeps(c);
    let curves = load_curves(c);
    let heads = headlines(c, &curves);
    // A row on a load curve is drawn there, not as a bar of its own; a headline is drawn
    // first, not again.
    let bars: Vec<&Row> = c
        .rows
        .iter()
        .filter(|r| {
            !curves
                .iter()
                .any(|k| k.points.iter().any(|p| std::ptr::eq(*p, *r)))
                && !heads.iter().any(|h| std::ptr::eq(*h, *r))
        })
        .collect();
    // A bar's name, with its mode where another row differs from it in the mode alone.
    let bar_name = |row: &Row| {
        let twin = c
            .rows
            .iter()
            .any(|r| r.benchmark == row.benchmark && r.params == row.params && r.mode != row.mode);
        if twin {
            format!("{} ({})", row.benchmark, row.mode)
        } else {
            row.benchmark.clone()
        }
    };
    let mut panels: Vec<Panel> = Vec::new();
    for row in heads {
        panels.push(Panel {
            title: title_lines(&bar_name(row), &row.params, common_of(&row.benchmark)),
            kind: Kind::Headline(row),
        });
    }
    for s in sweeps {
        let row = s.points[0].1;
        let rest: Vec<(String, String)> = row
            .params
            .iter()
            .filter(|(k, _)| k != "threads")
            .cloned()
            .collect();
        panels.push(Panel {
            title: title_lines(
                &format!("{} vs threads", row.benchmark),
                &rest,
                common_of(&row.benchmark),
            ),
            kind: Kind::Sweep(s),
        });
    }
    for k in curves {
        let row = k.points[0];
        panels.push(Panel {
            title: title_lines(
                &format!("{} latency vs load", row.benchmark),
                &k.params,
                common_of(&row.benchmark),
            ),
            kind: Kind::Curve(k),
        });
    }
    for row in bars {
        panels.push(Panel {
            title: title_lines(&bar_name(row), &row.params, common_of(&row.benchmark)),
            kind: Kind::Bar(row),
        });
    }
    panels
}

/// The chart's width: its columns of panels and their margins.
const WIDTH: f64 = MARGIN + COLUMNS as f64 * (PANEL_W + MARGIN);

/// The header's notes, wrapped to the chart's width: what the red frames are (where a
/// headline is drawn), and each family's params the titles leave out.
fn header_notes(
    c: &Comparison,
    panels: &[Panel],
    common: &[(String, Vec<(String, String)>)],
) -> Vec<String> {
    let chart_chars = ((WIDTH - 2.0 * MARGIN) / ADVANCE) as usize;
    let mut notes: Vec<String> = Vec::new();
    if panels.iter().any(|p| matches!(p.kind, Kind::Headline(_))) {
        notes.push(format!(
            "Red frames: each family's headline, its row of the largest difference between {} and {}.",
            c.labels[0], c.labels[1]
        ));
    }
    for (what, params) in common {
        if !params.is_empty() {
            notes.push(format!(
                "{what}: all panels {}",
                crate::model::params::params_text(params)
            ));
        }
    }
    notes
        .iter()
        .flat_map(|n| super::answer::wrap(n, chart_chars))
        .collect()
}

/// Where the header and the panels go: the chart's height, the header's, each panel's
/// cell in a grid of [`COLUMNS`].
struct Layout {
    height: f64,
    /// The header's height: the title, a line per run, the notes.
    legend_h: f64,
    grid: Grid,
    /// A panel's height with the margin below it.
    cell_h: f64,
    /// How many panels did not fit within [`MAX_HEIGHT`].
    left_out: usize,
}

impl Layout {
    /// Lays `panels` out under the header of `runs` runs and `notes` lines, every
    /// panel's title as tall as the tallest (two lines at least); those below
    /// [`MAX_HEIGHT`] are left out.
    fn fit(panels: &mut Vec<Panel>, runs: usize, notes: usize) -> Layout {
        let title_count = panels
            .iter()
            .map(|p| p.title.len())
            .max()
            .unwrap_or(1)
            .max(2);
        let grid = Grid {
            title_lines: title_count,
        };
        let legend_h = 24.0 + 18.0 * runs as f64 + 15.0 * notes as f64 + 4.0;
        let cell_h = grid.panel_h() + MARGIN;
        // What fits in MAX_HEIGHT, with a line for what was left out.
        let room = ((MAX_HEIGHT - legend_h - MARGIN - 20.0) / cell_h)
            .floor()
            .max(1.0) as usize;
        let left_out = panels.len().saturating_sub(room * COLUMNS);
        panels.truncate(room * COLUMNS);
        let rows = panels.len().div_ceil(COLUMNS);
        let height =
            legend_h + rows as f64 * cell_h + MARGIN + if left_out > 0 { 20.0 } else { 0.0 };
        Layout {
            height,
            legend_h,
            grid,
            cell_h,
            left_out,
        }
    }

    /// Where the `i`th panel goes, titled `title`.
    fn at<'a>(&'a self, i: usize, title: &'a [String]) -> At<'a> {
        At {
            x: MARGIN + (i % COLUMNS) as f64 * (PANEL_W + MARGIN),
            y: self.legend_h + (i / COLUMNS) as f64 * self.cell_h,
            grid: &self.grid,
            title,
        }
    }
}

/// The chart's start and its header: the title, a swatch per run, the notes.
fn header(out: &mut String, c: &Comparison, notes: &[String], layout: &Layout) {
    let height = layout.height;
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="{FONT_SIZE}">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{MARGIN}" y="18" font-size="14" font-weight="bold">bb-compare: {}</text>"#,
        escape(&c.labels.join(" vs "))
    );
    for (i, label) in c.labels.iter().enumerate() {
        let y = 28.0 + 18.0 * i as f64;
        let _ = writeln!(
            out,
            r#"<rect x="{MARGIN}" y="{y}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            color(i),
            MARGIN + 18.0,
            y + 10.0,
            escape(label)
        );
    }
    for (i, note) in notes.iter().enumerate() {
        let _ = writeln!(
            out,
            r##"<text x="{MARGIN}" y="{}" fill="#555">{}</text>"##,
            28.0 + 18.0 * c.labels.len() as f64 + 15.0 * i as f64 + 8.0,
            escape(note)
        );
    }
}

/// The panels' shape, the same for every panel of a chart.
struct Grid {
    /// Lines of the longest title.
    title_lines: usize,
}

impl Grid {
    /// From a panel's top to its plot's.
    fn title_h(&self) -> f64 {
        8.0 + LINE_H * self.title_lines as f64
    }

    fn panel_h(&self) -> f64 {
        self.title_h() + PLOT_H
    }
}

/// Where a panel goes, and its title.
struct At<'a> {
    x: f64,
    y: f64,
    grid: &'a Grid,
    title: &'a [String],
}

/// A panel's y axis.
enum Axis {
    /// From 0 to `max`.
    Linear { max: f64 },
    /// Times from `lo` to `hi` (powers of ten) in a unit of `unit_seconds` seconds, a
    /// decade between ticks.
    LogTime { lo: f64, hi: f64, unit_seconds: f64 },
}

impl Axis {
    /// Where `v` lies, from 0 at the bottom to 1 at the top, clamped to the axis.
    fn fraction(&self, v: f64) -> f64 {
        let f = match *self {
            Axis::Linear { max } => v / max,
            Axis::LogTime { lo, hi, .. } => (v / lo).log10() / (hi / lo).log10(),
        };
        if f.is_nan() {
            0.0
        } else {
            f.clamp(0.0, 1.0)
        }
    }

    /// The ticks: (value, label).
    fn ticks(&self) -> Vec<(f64, String)> {
        match *self {
            Axis::Linear { max } => (0..=4)
                .map(|k| max * k as f64 / 4.0)
                .map(|v| (v, short(v)))
                .collect(),
            Axis::LogTime {
                lo,
                hi,
                unit_seconds,
            } => {
                let decades = (hi / lo).log10().round() as i32;
                (0..=decades)
                    .map(|k| lo * 10f64.powi(k))
                    .map(|v| (v, time_label(v * unit_seconds)))
                    .collect()
            }
        }
    }
}

/// A time as an axis label: `10µs`, `100µs`, `1ms`, `2.500s`.
fn time_label(seconds: f64) -> String {
    let (size, unit) = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs")]
        .into_iter()
        .find(|(size, _)| seconds >= size * 0.9995)
        .unwrap_or((1e-9, "ns"));
    let v = seconds / size;
    if (v - v.round()).abs() < 1e-6 * v.max(1.0) {
        format!("{v:.0}{unit}")
    } else {
        format!("{}{unit}", short(v))
    }
}

/// The frame, title and y axis of a panel; returns the plot area (left, top, width,
/// height).
fn frame(out: &mut String, at: &At, unit: &str, axis: &Axis, stroke: &str) -> (f64, f64, f64, f64) {
    let (x, y) = (at.x, at.y);
    let panel_h = at.grid.panel_h();
    let (left, top, w, h) = (
        x + 48.0,
        y + at.grid.title_h(),
        PANEL_W - 58.0,
        PLOT_H - 30.0,
    );
    let _ = writeln!(
        out,
        r##"<rect x="{x}" y="{y}" width="{PANEL_W}" height="{panel_h}" fill="#fafafa" stroke="{stroke}"/>"##
    );
    // The name in bold, its params under it, each line whole (see title_lines).
    for (i, line) in at.title.iter().enumerate() {
        let (weight, fill) = if i == 0 {
            (r#" font-weight="bold""#, "#000")
        } else {
            ("", "#555")
        };
        let _ = writeln!(
            out,
            r#"<text class="title" x="{}" y="{}"{weight} fill="{fill}">{}</text>"#,
            x + 6.0,
            y + 14.0 + LINE_H * i as f64,
            escape(line)
        );
    }
    for (v, label) in axis.ticks() {
        let ty = top + h - h * axis.fraction(v);
        let _ = writeln!(
            out,
            r##"<line x1="{left}" y1="{ty}" x2="{}" y2="{ty}" stroke="#e3e3e3"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            left + w,
            left - 4.0,
            ty + 4.0,
            escape(&label)
        );
    }
    let _ = writeln!(
        out,
        r##"<line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="#333"/><line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="#333"/>"##,
        top + h,
        top + h,
        left + w,
        top + h
    );
    let _ = writeln!(
        out,
        r##"<text x="{}" y="{}" text-anchor="end" fill="#555">{}</text>"##,
        x + PANEL_W - 6.0,
        y + panel_h - 6.0,
        escape(unit)
    );
    (left, top, w, h)
}

/// Why a row has a bar for one run only: `only in board1`, or `not in board2, board3`
/// where more runs have it. None where every run has it, or there is one run.
fn one_side(c: &Comparison, row: &Row) -> Option<String> {
    let (having, lacking): (Vec<_>, Vec<_>) = c
        .labels
        .iter()
        .zip(&row.cells)
        .partition(|(_, cell)| cell.is_some());
    if lacking.is_empty() {
        return None;
    }
    Some(if having.len() == 1 {
        format!("only in {}", having[0].0)
    } else {
        let names: Vec<&str> = lacking.iter().map(|(l, _)| l.as_str()).collect();
        format!("not in {}", names.join(", "))
    })
}

/// A vertical error bar from `lo` to `hi` (pixels) at `x`.
fn error_bar(out: &mut String, x: f64, lo: f64, hi: f64) {
    let _ = writeln!(
        out,
        r##"<path d="M{x} {lo}V{hi}M{} {lo}h8M{} {hi}h8" stroke="#222" fill="none"/>"##,
        x - 4.0,
        x - 4.0
    );
}

/// The top of an error bar for the axis: errors wider than the score itself (too few
/// iterations) are cut there, so they do not flatten the bars.
fn error_top(score: f64, error: f64) -> f64 {
    score + error.max(0.0).min(score.abs())
}

fn axis_max(values: impl Iterator<Item = f64>) -> f64 {
    let max = values.filter(|v| v.is_finite()).fold(0.0, f64::max);
    if max > 0.0 {
        max * 1.1
    } else {
        1.0
    }
}

fn bar_panel(out: &mut String, c: &Comparison, row: &Row, at: &At, headline: bool) {
    let highest = row
        .cells
        .iter()
        .flatten()
        .map(|cell| error_top(cell.score, cell.error))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let (factor, unit) = display_unit(&row.unit, highest);
    let cells: Vec<Option<Cell>> = row
        .cells
        .iter()
        .map(|cell| {
            cell.as_ref().map(|cell| Cell {
                score: cell.score * factor,
                error: cell.error * factor,
                ..cell.clone()
            })
        })
        .collect();
    let max = axis_max(
        cells
            .iter()
            .flatten()
            .map(|cell| error_top(cell.score, cell.error)),
    );
    let stroke = if headline { HEADLINE_STROKE } else { "#ccc" };
    let (left, top, w, h) = frame(
        out,
        at,
        &format!("{} {}", row.mode, unit),
        &Axis::Linear { max },
        stroke,
    );
    if let Some(why) = one_side(c, row) {
        for (i, line) in title_lines(&why, &[], &[]).iter().enumerate() {
            let _ = writeln!(
                out,
                r##"<text class="why" x="{}" y="{}" text-anchor="middle" fill="#a00">{}</text>"##,
                left + w / 2.0,
                top + 16.0 + LINE_H * i as f64,
                escape(line)
            );
        }
    }
    let slot = w / cells.len() as f64;
    let scale = |v: f64| top + h - (v / max).clamp(0.0, 1.0) * h;
    for (i, cell) in cells.iter().enumerate() {
        let Some(cell) = cell else { continue };
        let cx = left + slot * (i as f64 + 0.5);
        let bw = (slot * 0.6).min(60.0);
        let ty = scale(cell.score);
        let _ = writeln!(
            out,
            r#"<rect x="{}" y="{ty}" width="{bw}" height="{}" fill="{}"><title>{}: {}</title></rect>"#,
            cx - bw / 2.0,
            top + h - ty,
            color(i),
            escape(&c.labels[i]),
            short(cell.score)
        );
        if cell.error.is_finite() {
            error_bar(
                out,
                cx,
                scale(cell.score - cell.error),
                scale(cell.score + cell.error),
            );
        }
        let note = match &cell.change {
            Some(ch) => format!("{:.2}× {}", ch.ratio, ch.verdict.name()),
            None => short(cell.score),
        };
        let _ = writeln!(
            out,
            r#"<text x="{cx}" y="{}" text-anchor="middle">{}</text>"#,
            top + h + 14.0,
            escape(&note)
        );
    }
}

fn sweep_panel(out: &mut String, c: &Comparison, s: &Sweep, at: &At) {
    let t_max = s.points.last().map_or(1.0, |p| p.0);
    let t_min = s.points[0].0;
    let highest = s
        .points
        .iter()
        .flat_map(|(_, row)| row.cells.iter().flatten())
        .map(|cell| error_top(cell.score, cell.error))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let (factor, unit) = display_unit(&s.unit, highest);
    let cell = |row: &Row, column: usize| {
        row.cells[column]
            .as_ref()
            .map(|cell| (cell.score * factor, cell.error * factor))
    };
    // The ideal line: the fewest threads' score, scaled by threads.
    let ideal = |column: usize| cell(s.points[0].1, column).map(|(score, _)| score / t_min);
    let max = axis_max(s.points.iter().flat_map(|(t, row)| {
        (0..row.cells.len()).filter_map(move |i| {
            let (score, error) = cell(row, i)?;
            Some(error_top(score, error).max(ideal(i).unwrap_or(0.0) * t))
        })
    }));
    let (left, top, w, h) = frame(out, at, &unit, &Axis::Linear { max }, "#ccc");
    let px = |t: f64| left + w * t / t_max;
    let py = |v: f64| top + h - (v / max).clamp(0.0, 1.0) * h;
    for &(t, _) in &s.points {
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{t}</text>"#,
            px(t),
            top + h + 14.0
        );
    }
    for column in 0..c.labels.len() {
        if let Some(per_thread) = ideal(column) {
            let _ = writeln!(
                out,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-dasharray="5 4" opacity="0.7"><title>ideal: {} × threads</title></line>"#,
                px(t_min),
                py(per_thread * t_min),
                px(t_max),
                py(per_thread * t_max),
                color(column),
                short(per_thread)
            );
        }
        let points: Vec<(f64, f64, f64)> = s
            .points
            .iter()
            .filter_map(|(t, row)| cell(row, column).map(|(score, error)| (*t, score, error)))
            .collect();
        let path: Vec<String> = points
            .iter()
            .map(|(t, v, _)| format!("{:.1},{:.1}", px(*t), py(*v)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
            path.join(" "),
            color(column)
        );
        for (t, v, e) in points {
            let _ = writeln!(
                out,
                r#"<circle cx="{}" cy="{}" r="3.5" fill="{}"><title>{}: {} threads, {}</title></circle>"#,
                px(t),
                py(v),
                color(column),
                escape(&c.labels[column]),
                t,
                short(v)
            );
            if e.is_finite() {
                error_bar(out, px(t), py(v - e), py(v + e));
            }
        }
    }
}

/// Open-loop rows of one benchmark offered several loads: the same params but the
/// load's (`rate`, and a sweep's `load`).
struct LoadCurve<'a> {
    title: String,
    /// The params the rows share (all but the load's).
    params: Vec<(String, String)>,
    /// Seconds in the rows' time unit (their unit is a time per operation).
    unit_seconds: f64,
    points: Vec<&'a Row>,
}

/// The percentiles drawn on a load curve, each with its dash pattern (solid, dashed,
/// dotted).
const CURVE_PERCENTILES: [(f64, &str, &str); 3] = [
    (50.0, "p50", ""),
    (99.0, "p99", "6 3"),
    (99.9, "p99.9", "2 3"),
];

fn load_curves(c: &Comparison) -> Vec<LoadCurve<'_>> {
    let mut out: Vec<LoadCurve> = Vec::new();
    for row in &c.rows {
        let offered = row
            .cells
            .iter()
            .flatten()
            .any(|cell| cell.offered_load.is_some() && cell.samples.histogram);
        let unit_seconds = row.unit.strip_suffix("/op").and_then(super::seconds_in);
        let (true, Some(unit_seconds)) = (offered, unit_seconds) else {
            continue;
        };
        let rest: Vec<(String, String)> = row
            .params
            .iter()
            .filter(|(k, _)| k != super::SWEEP_RATE && k != super::SWEEP_LOAD)
            .cloned()
            .collect();
        let title = super::label(&format!("{} latency vs load", row.benchmark), &rest);
        match out
            .iter_mut()
            .find(|k| k.title == title && k.unit_seconds == unit_seconds)
        {
            Some(k) => k.points.push(row),
            None => out.push(LoadCurve {
                title,
                params: rest,
                unit_seconds,
                points: vec![row],
            }),
        }
    }
    out.retain(|k| k.points.len() >= 2);
    out
}

/// Latency percentiles against the achieved rate, one colour per run and a dash pattern
/// per percentile, on a log time axis; a load that was not held has no latency to show
/// and is marked by a vertical line at the rate it achieved.
fn load_panel(out: &mut String, c: &Comparison, k: &LoadCurve, at: &At) {
    let (x, y) = (at.x, at.y);
    // Per run: (achieved rate, latency per percentile, saturated), by achieved rate.
    let runs: Vec<Vec<(f64, [f64; 3], bool)>> = (0..c.labels.len())
        .map(|column| {
            let mut points: Vec<(f64, [f64; 3], bool)> = k
                .points
                .iter()
                .filter_map(|row| {
                    let cell = row.cells[column].as_ref()?;
                    let load = cell.offered_load?;
                    let latency = CURVE_PERCENTILES
                        .map(|(p, _, _)| cell.samples.percentile(p).unwrap_or(f64::NAN));
                    Some((load.achieved, latency, load.saturated()))
                })
                .filter(|(rate, _, _)| rate.is_finite())
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points
        })
        .collect();
    let held = || runs.iter().flatten().filter(|p| !p.2);
    let latencies = || {
        held()
            .flat_map(|p| p.1)
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    let decade = |v: f64, round: fn(f64) -> f64| 10f64.powf(round(v.log10()));
    let lo = decade(latencies().fold(f64::INFINITY, f64::min), f64::floor);
    let hi = decade(latencies().fold(0.0, f64::max), f64::ceil);
    let (lo, hi) = match (lo.is_finite() && lo > 0.0, hi > lo) {
        (true, true) => (lo, hi),
        (true, false) => (lo, lo * 10.0),
        _ => (1.0, 10.0),
    };
    let axis = Axis::LogTime {
        lo,
        hi,
        unit_seconds: k.unit_seconds,
    };
    let max_rate = axis_max(runs.iter().flatten().map(|p| p.0));
    let (left, top, w, h) = frame(out, at, "calls/s achieved", &axis, "#ccc");
    let px = |rate: f64| left + w * (rate / max_rate).clamp(0.0, 1.0);
    let py = |v: f64| top + h - h * axis.fraction(v);
    for i in 0..4 {
        let rate = max_rate * i as f64 / 4.0;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            px(rate),
            top + h + 14.0,
            short(rate)
        );
    }
    for (column, points) in runs.iter().enumerate() {
        for (i, (_, name, dash)) in CURVE_PERCENTILES.iter().enumerate() {
            let path: Vec<String> = points
                .iter()
                .filter(|p| !p.2 && p.1[i].is_finite())
                .map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1[i])))
                .collect();
            if path.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{dash}"><title>{}: {name}</title></polyline>"#,
                path.join(" "),
                color(column),
                escape(&c.labels[column])
            );
            // A marker per load, so that a curve of one held load shows too.
            for p in points.iter().filter(|p| !p.2 && p.1[i].is_finite()) {
                let _ = writeln!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{}"><title>{}: {name} {} at {} calls/s</title></circle>"#,
                    px(p.0),
                    py(p.1[i]),
                    color(column),
                    escape(&c.labels[column]),
                    time_label(p.1[i] * k.unit_seconds),
                    short(p.0)
                );
            }
        }
        for p in points.iter().filter(|p| p.2) {
            let _ = writeln!(
                out,
                r#"<line x1="{0:.1}" y1="{top}" x2="{0:.1}" y2="{1}" stroke="{2}" stroke-dasharray="1 4" stroke-width="2"><title>{3}: saturated at {4} calls/s</title></line>"#,
                px(p.0),
                top + h,
                color(column),
                escape(&c.labels[column]),
                short(p.0)
            );
        }
    }
    // Which dash is which percentile.
    for (i, (_, name, dash)) in CURVE_PERCENTILES.iter().enumerate() {
        let lx = x + 6.0 + 52.0 * i as f64;
        let ly = y + at.grid.panel_h() - 7.0;
        let _ = writeln!(
            out,
            r##"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="#333" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{}">{name}</text>"##,
            lx + 16.0,
            lx + 19.0,
            ly + 4.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::compare;
    use super::super::tests::{criteria, measurement};
    use super::*;

    #[test]
    fn bars_per_benchmark_and_a_sweep_with_its_ideal_line() {
        let run = |f: f64| {
            vec![
                measurement(
                    "bb.zstd.compress",
                    &[("threads", "1")],
                    &[100.0 * f, 101.0 * f, 99.0 * f],
                ),
                measurement(
                    "bb.zstd.compress",
                    &[("threads", "2")],
                    &[190.0 * f, 191.0 * f, 189.0 * f],
                ),
                measurement("bb.x<y>", &[], &[1.0, 1.0, 1.0]),
            ]
        };
        let c = compare(
            vec![("a".into(), run(1.0)), ("b & c".into(), run(0.5))],
            criteria(),
        );
        let svg = render(&c);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("bb.zstd.compress vs threads"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(
            svg.matches("stroke-dasharray").count(),
            2,
            "one ideal line per run"
        );
        // Legend swatches, four panel frames (a sweep, three benchmarks), two bars each.
        assert_eq!(svg.matches("<rect x=").count(), 2 + 4 + 3 * 2);
        assert!(svg.contains("0.50× slower"));
        assert!(svg.contains("bb.x&lt;y&gt;") && svg.contains("b &amp; c"));
        assert!(!svg.contains("NaN"), "{svg}");
    }

    #[test]
    fn tiny_values_move_to_a_unit_that_shows_them() {
        let near = |(f, u): (f64, String), factor: f64, unit: &str| {
            assert!((f / factor - 1.0).abs() < 1e-12 && u == unit, "{f} {u}");
        };
        near(display_unit("s/op", 3e-9), 1e9, "ns/op");
        near(display_unit("ms/op", 0.5), 1e3, "us/op");
        assert_eq!(display_unit("us/op", 250.0), (1.0, "us/op".to_string()));
        near(display_unit("ops/s", 2e-5), 86400.0, "ops/day");
        assert_eq!(display_unit("x", 0.002), (1.0, "x".to_string()));
        assert_eq!(short(0.000003), "3.00e-6");
        let mut a = measurement("org.x.Tiny.op", &[], &[3.0e-9, 3.1e-9, 2.9e-9]);
        a.mode = "avgt".into();
        a.unit = "s/op".into();
        a.higher_is_better = false;
        let c = compare(vec![("a".into(), vec![a])], criteria());
        let svg = render(&c);
        assert!(svg.contains("avgt ns/op"), "{svg}");
        assert!(svg.contains(">3.000<"), "the bar's label: {svg}");
        assert!(!svg.contains(">0.000<"), "{svg}");
    }

    #[test]
    fn open_loop_rows_draw_latency_against_achieved_rate_on_a_log_axis() {
        use super::super::{Measurement, OfferedLoad, Samples};
        // A sweep of one group: latencies of 20 µs to 4 ms, the last load not held.
        let row = |load: &str, achieved: f64, target: f64, us: [f64; 3]| {
            let mut m = measurement("bb.rpc.open", &[("rate", "x"), ("load", load)], &[1.0]);
            m.mode = "sample".into();
            m.unit = "us/op".into();
            m.higher_is_better = false;
            m.samples = Samples::buckets(
                vec![vec![(us[0], 500), (us[1], 490), (us[2], 10)]],
                Vec::new(),
            );
            m.offered_load = Some(OfferedLoad { target, achieved });
            m
        };
        let run = |f: f64| -> Vec<Measurement> {
            vec![
                row("10%", 1e3 * f, 1e3 * f, [20.0, 40.0, 60.0]),
                row("50%", 5e3 * f, 5e3 * f, [25.0, 80.0, 300.0]),
                row("90%", 9e3 * f, 9e3 * f, [90.0, 900.0, 4000.0]),
                row("100%", 8e3 * f, 1e4 * f, [9e5, 9e5, 9e5]),
            ]
        };
        let c = compare(
            vec![("pi4".into(), run(1.0)), ("pi5".into(), run(2.0))],
            criteria(),
        );
        let svg = render(&c);
        assert!(svg.contains(">bb.rpc.open latency vs load</text>"), "{svg}");
        // A decade a tick, from 10 µs below the fastest p50 to 10 ms above the slowest
        // p99.9 of a load that was held; the saturated row's 900 ms is not on it.
        for tick in [">10µs<", ">100µs<", ">1ms<", ">10ms<"] {
            assert!(svg.contains(tick), "{tick}: {svg}");
        }
        assert!(!svg.contains(">100ms<") && !svg.contains(">1µs<"), "{svg}");
        // One polyline per percentile per run, each percentile its dash.
        assert_eq!(svg.matches("<polyline").count(), 3 * 2, "{svg}");
        for name in ["p50", "p99", "p99.9"] {
            assert_eq!(
                svg.matches(&format!(": {name}</title></polyline>")).count(),
                2
            );
        }
        assert_eq!(svg.matches("saturated at").count(), 2, "{svg}");
        // A marker per held load and percentile: three loads, three percentiles, two runs.
        assert_eq!(svg.matches("<circle").count(), 3 * 3 * 2, "{svg}");
        assert!(
            svg.contains("pi4: p99.9 4ms at 9000 calls/s</title></circle>"),
            "{svg}"
        );
        // The four rows are drawn on the curve, not as bars: legend swatches and one panel.
        assert_eq!(svg.matches("<rect x=").count(), 2 + 1, "{svg}");
        assert!(!svg.contains("NaN"), "{svg}");
        assert_eq!(time_label(2.5e-3), "2.500ms");
        assert_eq!(time_label(1e-9), "1ns");
    }

    /// The title lines of every panel, unescaped, a panel's lines together.
    pub(crate) fn titles(svg: &str) -> Vec<Vec<String>> {
        let mut panels: Vec<Vec<String>> = Vec::new();
        for line in svg.lines() {
            if line.starts_with("<rect x=") && line.contains(r##"fill="#fafafa""##) {
                panels.push(Vec::new());
            }
            if let Some(rest) = line.split_once(r#"class="title""#).map(|(_, r)| r) {
                let text = rest
                    .split_once('>')
                    .unwrap()
                    .1
                    .split("</text>")
                    .next()
                    .unwrap();
                let text = text
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&apos;", "'")
                    .replace("&amp;", "&");
                panels.last_mut().unwrap().push(text);
            }
        }
        panels
    }

    #[test]
    fn titles_are_whole_leave_out_common_params_and_tell_panels_apart() {
        let raw = [10.0, 11.0, 12.0];
        let row = |transport: &str, codec: &str| {
            measurement(
                "bb.rpc.sync_with_a_rather_long_benchmark_name_indeed",
                &[
                    ("transport", transport),
                    ("codec", codec),
                    ("payload", "16"),
                    (
                        "source",
                        "file:./data/a/folder/with/a/name/longer/than/a/line",
                    ),
                ],
                &raw,
            )
        };
        let run = vec![
            row("unix", "raw"),
            row("tcp", "raw"),
            row("unix", "msgpack"),
            row("tcp", "msgpack"),
        ];
        let c = compare(
            vec![("board1".into(), run.clone()), ("board2".into(), run)],
            criteria(),
        );
        let svg = render(&c);
        let panels = titles(&svg);
        assert_eq!(panels.len(), 4, "{svg}");
        for lines in &panels {
            for line in lines {
                let px = line.chars().count() as f64 * ADVANCE;
                assert!(px <= PANEL_W - 12.0, "{line:?}: {px} px");
            }
            let whole = lines.concat();
            assert!(whole.starts_with("bb.rpc.sync_with_a_rather_long_benchmark_name_indeed"));
            assert!(
                whole.contains("transport=") && whole.contains("codec="),
                "{lines:?}"
            );
            assert!(
                !whole.contains("payload"),
                "common to every panel: {lines:?}"
            );
        }
        let mut distinct: Vec<String> = panels.iter().map(|l| l.concat()).collect();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{panels:?}");
        assert!(
            svg.contains("bb.rpc.*: all panels payload=16, source=file:./data/a/folder"),
            "{svg}"
        );
        assert!(!svg.contains("only in"), "{svg}");
    }

    #[test]
    fn a_panel_with_one_run_says_why_and_modes_tell_twins_apart() {
        let raw = [10.0, 11.0, 12.0];
        let mut sample = measurement("bb.ipc.remote", &[], &raw);
        sample.mode = "sample".into();
        let a = vec![
            measurement("bb.ipc.remote", &[], &raw),
            sample.clone(),
            measurement("bb.ipc.gone", &[], &raw),
        ];
        let b = vec![measurement("bb.ipc.remote", &[], &raw), sample];
        let c = compare(vec![("board1".into(), a), ("board2".into(), b)], criteria());
        let svg = render(&c);
        assert_eq!(svg.matches(">only in board1</text>").count(), 1, "{svg}");
        let names: Vec<String> = titles(&svg).iter().map(|l| l[0].clone()).collect();
        assert!(
            names.contains(&"bb.ipc.remote (thrpt)".to_string()),
            "{names:?}"
        );
        assert!(
            names.contains(&"bb.ipc.remote (sample)".to_string()),
            "{names:?}"
        );
        assert!(names.contains(&"bb.ipc.gone".to_string()), "{names:?}");
    }

    #[test]
    fn headlines_come_first_and_a_long_suite_stops_at_the_height_limit() {
        let rows = |f: f64| -> Vec<_> {
            (0..200)
                .map(|i| {
                    let s = i.to_string();
                    let scale = if i == 150 { f } else { 1.0 };
                    measurement(
                        "bb.seek.read",
                        &[("size", &s)],
                        &[100.0 * scale, 101.0 * scale, 99.0 * scale, 100.0 * scale],
                    )
                })
                .chain([measurement("bb.zstd.compress", &[], &[1.0, 1.1, 0.9])])
                .collect()
        };
        let c = compare(
            vec![("a".into(), rows(1.0)), ("b".into(), rows(3.0))],
            criteria(),
        );
        let svg = render(&c);
        let height: f64 = svg
            .split("height=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(height <= MAX_HEIGHT, "{height}");
        let panels = titles(&svg);
        // The headline of bb.seek is the row 3x apart; bb.zstd's its only row.
        assert_eq!(panels[0], ["bb.seek.read", "size=150"]);
        assert_eq!(panels[1], ["bb.zstd.compress"]);
        assert_eq!(svg.matches(HEADLINE_STROKE).count(), 2);
        let left_out = 201 - panels.len();
        assert!(
            svg.contains(&format!(
                ">{left_out} more panels left out: the chart stops at 3000 px"
            )),
            "{svg}"
        );
    }
}
