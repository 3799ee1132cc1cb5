//! bb-compare's reports: the comparison as an aligned text table, CSV, JSON or a
//! markdown table, or github-action-benchmark's custom JSON, each a pure function of the
//! [`Comparison`].

use super::answer;
use super::gab::{self, Direction};
use super::{Cell, Change, Comparison, Row, Test};
use crate::model::answer::times;
use crate::model::params::{param_keys, param_value};
use crate::report::csv::{num as csv_number, quote as csv_quote};
use crate::report::ReportFormat;
use crate::stats::power::percent;
use crate::util::format::format_score;
use crate::util::json::Json;

/// bb-compare's report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Text,
    Csv,
    Json,
    Markdown,
    /// github-action-benchmark's `customBiggerIsBetter` file (see [`gab`]).
    GabBigger,
    /// github-action-benchmark's `customSmallerIsBetter` file.
    GabSmaller,
}

impl ReportFormat for TableFormat {
    const TEXT: Self = TableFormat::Text;
    fn from_extension(extension: &str) -> Option<Self> {
        match extension {
            "json" => Some(TableFormat::Json),
            "csv" => Some(TableFormat::Csv),
            "md" => Some(TableFormat::Markdown),
            _ => None,
        }
    }
}

/// Parses `text`, `csv`, `json`, `markdown` (`md`), `gab-bigger` or `gab-smaller`.
pub fn parse_table_format(s: &str) -> Result<TableFormat, String> {
    match s {
        "text" => Ok(TableFormat::Text),
        "csv" => Ok(TableFormat::Csv),
        "json" => Ok(TableFormat::Json),
        "markdown" | "md" => Ok(TableFormat::Markdown),
        "gab-bigger" => Ok(TableFormat::GabBigger),
        "gab-smaller" => Ok(TableFormat::GabSmaller),
        _ => Err(format!(
            "unknown format '{s}' (expected text, csv, json, markdown, gab-bigger or gab-smaller)"
        )),
    }
}

pub fn render(format: TableFormat, c: &Comparison) -> String {
    match format {
        TableFormat::Text => text(c),
        TableFormat::Csv => csv(c),
        TableFormat::Json => json_document(c).to_pretty(),
        TableFormat::Markdown => markdown(c),
        TableFormat::GabBigger => gab::render(c, Direction::Bigger),
        TableFormat::GabSmaller => gab::render(c, Direction::Smaller),
    }
}

/// The params' names, in order of first appearance: a column each.
fn param_keys_of(c: &Comparison) -> Vec<String> {
    param_keys(c.rows.iter().map(|r| r.params.as_slice()))
}

fn param_cells(row: &Row, keys: &[String]) -> Vec<String> {
    keys.iter()
        .map(|k| param_value(&row.params, k).unwrap_or("N/A").to_string())
        .collect()
}

fn with_error(value: f64, error: f64, compact: bool) -> String {
    let number = |v: f64| {
        // The text table's big numbers lose the decimals that say nothing at their size.
        match v.abs() {
            a if compact && a >= 1e4 => format!("{v:.0}"),
            a if compact && a >= 1e3 => format!("{v:.1}"),
            _ => format_score(v),
        }
    };
    if error.is_nan() {
        number(value)
    } else {
        format!("{} ± {}", number(value), number(error))
    }
}

/// A ratio with its interval as the range it is: `0.800x, 0.617x to 1.04x`; the ratio
/// alone where the interval is not a number.
pub fn ratio_range(ch: &Change) -> String {
    match ch.low.is_finite() && ch.high.is_finite() {
        true => format!(
            "{}, {} to {}",
            times(ch.ratio),
            times(ch.low),
            times(ch.high)
        ),
        false => times(ch.ratio),
    }
}

/// The smallest change a comparison could have called, as the tables print it: `4%`,
/// nothing where it is not a number.
pub fn could_see(ch: &Change) -> String {
    match ch.smallest.is_finite() {
        true => percent(ch.smallest),
        false => String::new(),
    }
}

/// Below this a p-value is shown as `<1e-300`: tinier ones end in a double's subnormal
/// range, where they lose their digits, and at 0.
pub const P_FLOOR: f64 = 1e-300;

/// A p-value with its digits: `0.042`, `1.6e-5`, `3.2e-250`, `<1e-300`.
pub fn p_text(p: f64) -> String {
    if p.is_nan() {
        String::new()
    } else if p < P_FLOOR {
        "<1e-300".to_string()
    } else if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// The p-value of Welch's test over fork means, or the mark of the noise band or of an
/// A/B file's pairs where that judged.
fn p_with_test(p: f64, test: Test) -> String {
    match test {
        Test::ForkMeans => p_text(p),
        Test::Band | Test::Pairs => test.mark().to_string(),
    }
}

/// The table both text and markdown show, of `rows`: header cells, then a row of cells
/// per benchmark, and the number of columns that describe a row (the name, params, mode
/// and unit, first). Scores come with the honest ± their verdicts use ([`Cell::honest`]);
/// each run after the first adds the ratio with its interval, p, the smallest change it
/// could see and the verdict (last, where scripts look for it); `compact`, numbers of 1000 and more with fewer
/// decimals.
fn display_table(
    c: &Comparison,
    rows: &[&Row],
    compact: bool,
) -> (Vec<String>, Vec<Vec<String>>, usize) {
    let keys = param_keys(rows.iter().map(|r| r.params.as_slice()));
    let mut header = vec!["Benchmark".to_string()];
    header.extend(keys.iter().map(|k| format!("({k})")));
    header.extend(["Mode".to_string(), "Units".to_string()]);
    let described = header.len();
    for (i, label) in c.labels.iter().enumerate() {
        header.push(label.clone());
        if i > 0 {
            header.extend([
                "Ratio".into(),
                "p".into(),
                "Could see".into(),
                "Verdict".into(),
            ]);
        }
    }
    let rows = rows
        .iter()
        .map(|row| {
            let mut cells = vec![row.benchmark.clone()];
            cells.extend(param_cells(row, &keys));
            cells.extend([row.mode.clone(), row.unit.clone()]);
            for (i, cell) in row.cells.iter().enumerate() {
                cells.push(cell.as_ref().map_or("-".into(), |x| {
                    with_error(x.score, x.honest().error, compact)
                }));
                if i > 0 {
                    match cell.as_ref().and_then(|x| x.change.as_ref()) {
                        Some(ch) => cells.extend([
                            ratio_range(ch),
                            p_with_test(ch.p_value, ch.test),
                            could_see(ch),
                            ch.verdict.name().to_string(),
                        ]),
                        None => {
                            cells.extend(["-".into(), String::new(), String::new(), String::new()])
                        }
                    }
                }
            }
            cells
        })
        .collect();
    (header, rows, described)
}

/// The describing columns that hold one value in every row (`N/A` aside), each taken out
/// of the table and named once: `threads=1`, `Mode thrpt`, `Units ops/s`; a param some
/// rows lack is `level=3 where set`.
fn common_columns(
    header: &mut Vec<String>,
    rows: &mut [Vec<String>],
    described: usize,
) -> Vec<String> {
    if rows.is_empty() {
        return Vec::new();
    }
    let mut named = Vec::new();
    for i in (1..described).rev() {
        let mut values: Vec<&str> = rows
            .iter()
            .map(|r| r[i].as_str())
            .filter(|v| *v != "N/A")
            .collect();
        let unset = values.len() < rows.len();
        values.sort_unstable();
        values.dedup();
        if values.len() != 1 {
            continue;
        }
        let value = values[0].to_string();
        let name = header.remove(i);
        for r in rows.iter_mut() {
            r.remove(i);
        }
        named.push(
            match name.strip_prefix('(').and_then(|n| n.strip_suffix(')')) {
                Some(param) if unset => format!("{param}={value} where set"),
                Some(param) => format!("{param}={value}"),
                None => format!("{name} {value}"),
            },
        );
    }
    named.reverse();
    named
}

/// The widest line the text table aims at where the params allow: a wide terminal's.
pub const TABLE_WIDTH: usize = 120;

/// The aligned table, a section per benchmark family where there are several (each with
/// its own columns), without the describing columns that hold one value in every row of
/// the section (named once above it); then the notes, the summary and the answer.
fn text(c: &Comparison) -> String {
    let families = answer::families(&c.rows);
    let sections = families.len() > 1;
    let mut tables = Vec::new();
    for (what, rows) in &families {
        let (mut header, mut cells, described) = display_table(c, rows, true);
        let common = common_columns(&mut header, &mut cells, described);
        let heading = match (sections, common.is_empty()) {
            (true, true) => Some(format!("in {what} ({}):", answer::rows_text(rows.len()))),
            (true, false) => Some(format!(
                "in {what} ({}): {}",
                answer::rows_text(rows.len()),
                common.join(", ")
            )),
            (false, false) => Some(format!("all rows: {}", common.join(", "))),
            (false, true) => None,
        };
        tables.push((heading, header, cells));
    }
    // Runs are named by letter, with a legend, where a table is past the width and a
    // run's name is longer than a score with its error mostly is.
    let too_wide = c.labels.iter().any(|l| l.chars().count() > 12)
        && tables.iter().any(|(_, header, cells)| {
            aligned(header, cells)
                .lines()
                .any(|l| l.chars().count() > TABLE_WIDTH)
        });
    let mut out = String::new();
    if too_wide && c.labels.len() > 1 {
        let letters: Vec<String> = (0..c.labels.len()).map(run_letter).collect();
        let legend: Vec<String> = c
            .labels
            .iter()
            .zip(&letters)
            .map(|(label, letter)| format!("{letter} = {label}"))
            .collect();
        for line in answer::wrap(&format!("runs: {}", legend.join(", ")), TABLE_WIDTH) {
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
        for (_, header, _) in &mut tables {
            for (label, letter) in c.labels.iter().zip(&letters) {
                if let Some(cell) = header.iter_mut().find(|h| *h == label) {
                    *cell = letter.clone();
                }
            }
        }
    }
    for (i, (heading, header, cells)) in tables.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for line in heading.iter().flat_map(|h| answer::wrap(h, TABLE_WIDTH)) {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&aligned(header, cells));
    }
    out.push('\n');
    for note in &c.notes {
        out.push_str(&format!("{}: {}\n", note.kind, note.message));
    }
    if c.labels.len() > 1 {
        let summary = format!("against {}: {}", c.labels[0], c.summary());
        for line in phrases(&summary, SUMMARY_WIDTH) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    let answer = answer::text(c);
    if !answer.is_empty() {
        out.push('\n');
        out.push_str(&answer);
    }
    out
}

/// A run's letter in a table too wide for its name: `A`, `B`, … `Z`, then `R27`.
fn run_letter(i: usize) -> String {
    match u8::try_from(i) {
        Ok(n) if n < 26 => char::from(b'A' + n).to_string(),
        _ => format!("R{}", i + 1),
    }
}

/// The widest line of the summary under the table: room for the indent Ansible's YAML
/// output adds, within [`TABLE_WIDTH`].
const SUMMARY_WIDTH: usize = 100;

/// `text` in lines of at most `width` columns (where its phrases are that short), broken
/// after the `; ` between phrases, never inside one; later lines indented by two.
fn phrases(text: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for phrase in text.split("; ") {
        if current.is_empty() {
            current = phrase.to_string();
        } else if current.chars().count() + 2 + phrase.chars().count() <= width {
            current = format!("{current}; {phrase}");
        } else {
            out.push(format!("{current};"));
            current = format!("  {phrase}");
        }
    }
    out.push(current);
    out
}

/// Rows of cells in columns: the first left-aligned, like JMH's, the others right.
fn aligned(header: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            std::iter::once(header)
                .chain(rows.iter().map(Vec::as_slice))
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::new();
        for (i, (cell, w)) in r.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w - cell.chars().count());
            if i == 0 {
                line.push_str(cell);
                line.push_str(&pad);
            } else {
                line.push_str("  ");
                line.push_str(&pad);
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn markdown(c: &Comparison) -> String {
    let (header, rows, _) = display_table(c, &c.rows.iter().collect::<Vec<_>>(), false);
    let escape = |s: &str| s.replace('|', "\\|");
    let line = |cells: &[String]| {
        format!(
            "| {} |\n",
            cells
                .iter()
                .map(|s| escape(s))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    let mut out = line(&header);
    let align: Vec<String> = (0..header.len())
        .map(|i| if i == 0 { "---".into() } else { "---:".into() })
        .collect();
    out.push_str(&format!("|{}|\n", align.join("|")));
    for r in &rows {
        out.push_str(&line(r));
    }
    if !c.notes.is_empty() {
        out.push('\n');
    }
    for note in &c.notes {
        out.push_str(&format!("- {}: {}\n", note.kind, escape(&note.message)));
    }
    if c.labels.len() > 1 {
        out.push_str(&format!("\nAgainst {}: {}\n", c.labels[0], c.summary()));
    }
    out
}

fn csv(c: &Comparison) -> String {
    let keys = param_keys_of(c);
    let mut header: Vec<String> = vec!["Benchmark".into(), "Mode".into(), "Unit".into()];
    header.extend(keys.iter().map(|k| format!("Param: {k}")));
    for (i, label) in c.labels.iter().enumerate() {
        header.extend([
            format!("{label} Score"),
            format!("{label} Error"),
            format!("{label} Honest Error"),
            format!("{label} Error Basis"),
        ]);
        if i > 0 {
            header.extend([
                format!("{label} Ratio"),
                format!("{label} Ratio Error"),
                format!("{label} Ratio Low"),
                format!("{label} Ratio High"),
                format!("{label} p"),
                format!("{label} Test"),
                format!("{label} Verdict"),
                format!("{label} Could See"),
            ]);
        }
    }
    let mut out = header
        .iter()
        .map(|h| csv_quote(h))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for row in &c.rows {
        let mut cells = vec![
            csv_quote(&row.benchmark),
            csv_quote(&row.mode),
            csv_quote(&row.unit),
        ];
        cells.extend(param_cells(row, &keys).iter().map(|p| csv_quote(p)));
        for (i, cell) in row.cells.iter().enumerate() {
            match cell {
                Some(x) => {
                    let honest = x.honest();
                    cells.extend([
                        csv_number(x.score),
                        csv_number(x.error),
                        csv_number(honest.error),
                        csv_quote(&honest.basis.name()),
                    ])
                }
                None => cells.extend(vec![String::new(); 4]),
            }
            if i > 0 {
                match cell.as_ref().and_then(|x| x.change.as_ref()) {
                    Some(ch) => cells.extend([
                        csv_number(ch.ratio),
                        csv_number(ch.ratio_error),
                        csv_number(ch.low),
                        csv_number(ch.high),
                        if ch.p_value < P_FLOOR {
                            p_text(ch.p_value)
                        } else {
                            csv_number(ch.p_value)
                        },
                        csv_quote(ch.test.name()),
                        csv_quote(ch.verdict.name()),
                        csv_number(ch.smallest),
                    ]),
                    None => cells.extend(vec![String::new(); 8]),
                }
            }
        }
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

fn cell_json(label: &str, cell: &Option<Cell>) -> Json {
    let Some(x) = cell else {
        return Json::Null;
    };
    let honest = x.honest();
    let mut pairs = vec![
        ("file", Json::str(label)),
        ("score", Json::Num(x.score)),
        ("scoreError", Json::Num(x.error)),
        ("error", Json::Num(honest.error)),
        ("errorBasis", Json::str(honest.basis.name())),
        ("noiseBand", Json::Num(x.noise_band)),
        ("runFloor", Json::Num(x.run_floor)),
        ("samples", Json::Num(x.samples.count() as f64)),
        ("forks", Json::Num(x.samples.fork_count() as f64)),
    ];
    if let Some(ch) = &x.change {
        pairs.extend([
            ("ratio", Json::Num(ch.ratio)),
            ("ratioError", Json::Num(ch.ratio_error)),
            ("ratioLow", Json::Num(ch.low)),
            ("ratioHigh", Json::Num(ch.high)),
            ("pValue", Json::Num(ch.p_value)),
            ("test", Json::str(ch.test.name())),
            ("verdict", Json::str(ch.verdict.name())),
            ("smallest", Json::Num(ch.smallest)),
        ]);
    }
    Json::obj(pairs)
}

fn json_document(c: &Comparison) -> Json {
    Json::obj([
        ("files", Json::Arr(c.labels.iter().map(Json::str).collect())),
        ("alpha", Json::Num(c.criteria.alpha)),
        ("threshold", Json::Num(c.criteria.threshold)),
        (
            "rows",
            Json::Arr(
                c.rows
                    .iter()
                    .map(|row| {
                        Json::obj([
                            ("benchmark", Json::str(&row.benchmark)),
                            ("mode", Json::str(&row.mode)),
                            (
                                "params",
                                Json::obj(
                                    row.params.iter().map(|(k, v)| (k.clone(), Json::str(v))),
                                ),
                            ),
                            ("unit", Json::str(&row.unit)),
                            (
                                "results",
                                Json::Arr(
                                    c.labels
                                        .iter()
                                        .zip(&row.cells)
                                        .map(|(l, cell)| cell_json(l, cell))
                                        .collect(),
                                ),
                            ),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "notes",
            Json::Arr(
                c.notes
                    .iter()
                    .map(|n| {
                        Json::obj([
                            ("kind", Json::str(n.kind)),
                            ("message", Json::str(&n.message)),
                        ])
                    })
                    .collect(),
            ),
        ),
        ("regression", Json::Bool(c.has_regression())),
        (
            "answer",
            Json::obj([
                ("program", Json::str(answer::PROGRAM)),
                (
                    "lines",
                    Json::Arr(answer::lines(c).iter().map(Json::str).collect()),
                ),
            ]),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::super::compare;
    use super::super::tests::{criteria, measurement};
    use super::super::Samples;
    use super::*;

    #[test]
    fn the_format_follows_the_output_extension_as_the_reports_do() {
        let md = Some(std::path::Path::new("report.md"));
        let chosen = |f: Option<TableFormat>, o| crate::report::choose_format(f, o);
        assert_eq!(chosen(None, md), TableFormat::Markdown);
        assert_eq!(chosen(Some(TableFormat::Csv), md), TableFormat::Csv);
        assert_eq!(chosen(None, None), TableFormat::Text);
    }

    fn sample() -> Comparison {
        compare(
            vec![
                (
                    "base".into(),
                    vec![
                        measurement("bb.x.a", &[("threads", "1")], &[100.0, 101.0, 99.0]),
                        measurement("bb.x.gone", &[], &[5.0, 5.0, 5.0]),
                    ],
                ),
                (
                    "new".into(),
                    vec![measurement(
                        "bb.x.a",
                        &[("threads", "1")],
                        &[80.0, 81.0, 79.0],
                    )],
                ),
            ],
            criteria(),
        )
    }

    #[test]
    fn text_table_is_aligned_with_ratio_p_and_verdict() {
        let expected = "\
all rows: threads=1 where set, Mode thrpt, Units ops/s
Benchmark             base             new                     Ratio       p  Could see  Verdict
bb.x.a     100.000 ± 3.513  80.000 ± 3.513  0.800x, 0.756x to 0.846x  1.6e-5         5%   slower
bb.x.gone    5.000 ± 0.000               -                         -

missing: bb.x.gone (thrpt) is in base but not in new
against base: 1 slower (same: within 5%;
  noise: beyond it but within noise, Welch p >= 0.01 over fork means)

== bb-compare: the answer ==
base is faster at bb.x.* (1 row): 1.25x, 1 beyond noise
bb.x.*, the rest: 1 row only in base
";
        assert_eq!(text(&sample()), expected);
    }

    #[test]
    fn runs_named_wider_than_the_table_allows_go_by_letter_with_a_legend() {
        let run = |label: &str, score: f64| {
            (
                label.to_string(),
                vec![measurement(
                    "bb.zstd.compress",
                    &[("threads", "1")],
                    &[score, score],
                )],
            )
        };
        let long = ["x".repeat(50), "y".repeat(50)];
        let c = compare(vec![run(&long[0], 1.0), run(&long[1], 2.0)], criteria());
        let t = text(&c);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            format!("runs: A = {}, B = {}", long[0], long[1]),
            "{t}"
        );
        let header = lines.iter().find(|l| l.starts_with("Benchmark")).unwrap();
        assert!(header.contains(" A ") && !header.contains(&long[0]), "{t}");
        assert!(
            t.lines()
                .filter(|l| !l.starts_with("against "))
                .all(|l| l.chars().count() <= TABLE_WIDTH),
            "{t}"
        );
        // Short names stay in the header.
        let c = compare(vec![run("pi4", 1.0), run("pi5", 2.0)], criteria());
        let t = text(&c);
        assert!(!t.contains("runs: "), "{t}");
        assert!(
            t.lines()
                .any(|l| l.starts_with("Benchmark") && l.contains("pi5")),
            "{t}"
        );
    }

    #[test]
    fn each_family_is_a_section_with_its_own_columns() {
        let c = compare(
            vec![
                (
                    "a".into(),
                    vec![
                        measurement(
                            "bb.zstd.compress",
                            &[("level", "3"), ("threads", "1")],
                            &[1.0, 1.0],
                        ),
                        measurement(
                            "bb.zstd.compress",
                            &[("level", "3"), ("threads", "2")],
                            &[2.0, 2.0],
                        ),
                        measurement("bb.seek.read", &[("client", "plain")], &[1.0, 1.0]),
                        measurement("bb.seek.read", &[("client", "stream")], &[1.0, 1.0]),
                    ],
                ),
                ("b".into(), vec![]),
            ],
            criteria(),
        );
        let t = text(&c);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0], "in bb.zstd.* (2 rows): level=3, Mode thrpt, Units ops/s",
            "{t}"
        );
        assert!(lines[1].starts_with("Benchmark         (threads)"), "{t}");
        assert!(!lines[1].contains("(client)"), "{t}");
        assert_eq!(
            lines[5], "in bb.seek.* (2 rows): Mode thrpt, Units ops/s",
            "{t}"
        );
        assert!(lines[6].starts_with("Benchmark     (client)"), "{t}");
        // Markdown and CSV keep every column.
        assert!(markdown(&c)
            .starts_with("| Benchmark | (level) | (threads) | (client) | Mode | Units |"));
        assert!(csv(&c)
            .lines()
            .next()
            .unwrap()
            .contains("\"Param: client\""));
    }

    #[test]
    fn markdown_csv_and_json_carry_the_same_rows() {
        let c = sample();
        let md = markdown(&c);
        assert!(md.starts_with("| Benchmark | (threads) | Mode | Units | base | new | Ratio | p | Could see | Verdict |\n|---|---:|"), "{md}");
        assert!(md.contains("| bb.x.a | 1 | thrpt | ops/s | 100.000 ± 3.513 | 80.000 ± 3.513 | 0.800x, 0.756x to 0.846x | 1.6e-5 | 5% | slower |"), "{md}");
        assert!(md.contains("- missing: bb.x.gone"), "{md}");
        let csv = csv(&c);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "\"Benchmark\",\"Mode\",\"Unit\",\"Param: threads\",\"base Score\",\"base Error\",\"base Honest Error\",\"base Error Basis\",\"new Score\",\"new Error\",\"new Honest Error\",\"new Error Basis\",\"new Ratio\",\"new Ratio Error\",\"new Ratio Low\",\"new Ratio High\",\"new p\",\"new Test\",\"new Verdict\",\"new Could See\"");
        assert!(
            lines[1].starts_with("\"bb.x.a\",\"thrpt\",\"ops/s\",\"1\",100,"),
            "{}",
            lines[1]
        );
        assert!(lines[1].contains(",\"forks 3\","), "{}", lines[1]);
        assert!(lines[1].contains(",\"slower\",0.05"), "{}", lines[1]);
        assert_eq!(
            lines[2],
            "\"bb.x.gone\",\"thrpt\",\"ops/s\",\"N/A\",5,0,0,\"forks 3\",,,,,,,,,,,,"
        );
        let j = Json::parse(&json_document(&c).to_pretty()).unwrap();
        assert_eq!(j.get("regression"), Some(&Json::Bool(true)));
        let row = &j.get("rows").unwrap().as_array().unwrap()[0];
        let new = &row.get("results").unwrap().as_array().unwrap()[1];
        assert_eq!(new.get("verdict").unwrap().as_str(), Some("slower"));
        assert_eq!(new.get("ratio").unwrap().as_f64(), Some(0.8));
        assert_eq!(new.get("test").unwrap().as_str(), Some("fork means"));
        assert_eq!(new.get("errorBasis").unwrap().as_str(), Some("forks 3"));
        let num = |k: &str| new.get(k).unwrap().as_f64().unwrap();
        // t(2 df, 97.5%) × √2 × 1/√3: where the next run of three forks lands.
        assert!((num("error") - 3.513).abs() < 1e-3, "{}", num("error"));
        assert!(num("ratioLow") < 0.8 && 0.8 < num("ratioHigh"));
        assert!(
            (0.04..0.07).contains(&num("smallest")),
            "{}",
            num("smallest")
        );
        let answer = j.get("answer").unwrap();
        assert_eq!(answer.get("program").unwrap().as_str(), Some("bb-compare"));
        let said: Vec<&str> = answer
            .get("lines")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        assert_eq!(said, super::answer::lines(&c));
        assert!(
            said[0].starts_with("base is faster at bb.x.* (1 row): 1.25x"),
            "{said:?}"
        );
    }

    #[test]
    fn scores_carry_the_honest_error_and_a_ratio_its_range() {
        // One fork a side, JMH's error over its iterations tiny: the verdict uses the
        // noise band (25%), and so does the table; the file's error stays in the JSON.
        let one = |score: f64| {
            let mut m = measurement("bb.x.a", &[], &[score]);
            m.samples = Samples::iterations(vec![vec![score; 5]]);
            m.error = 0.5;
            m
        };
        let c = compare(
            vec![
                ("a".into(), vec![one(100.0)]),
                ("b".into(), vec![one(30.0)]),
            ],
            criteria(),
        );
        let t = text(&c);
        let row = t.lines().find(|l| l.starts_with("bb.x.a")).unwrap();
        assert!(row.contains("100.000 ± 25.000"), "{t}");
        assert!(row.contains("30.000 ± 7.500"), "{t}");
        // 0.3 with both bands in quadrature on a log scale: never below 0.
        assert!(row.contains("0.300x, 0.211x to 0.427x"), "{t}");
        assert!(!row.contains("± 0."), "{t}");
        let j = json_document(&c);
        let cell = &j.get("rows").unwrap().as_array().unwrap()[0]
            .get("results")
            .unwrap()
            .as_array()
            .unwrap()[1];
        assert_eq!(cell.get("scoreError").unwrap().as_f64(), Some(0.5));
        assert_eq!(cell.get("error").unwrap().as_f64(), Some(7.5));
        assert_eq!(cell.get("errorBasis").unwrap().as_str(), Some("band 1"));
        // By the band, it could see the band's interval: e^(0.25 × √2) - 1.
        let smallest = cell.get("smallest").unwrap().as_f64().unwrap();
        assert!((smallest - (0.25 * 2f64.sqrt()).exp_m1()).abs() < 1e-12);
        assert!(row.ends_with("42%   slower"), "{t}");
    }

    #[test]
    fn p_values_keep_their_digits_down_to_1e_300() {
        assert_eq!(p_text(0.0421), "0.042");
        assert_eq!(p_text(1.63e-5), "1.6e-5");
        assert_eq!(p_text(3.2e-250), "3.2e-250");
        assert_eq!(p_text(1e-310), "<1e-300");
        assert_eq!(p_text(0.0), "<1e-300");
        assert_eq!(p_text(f64::NAN), "");
        assert_eq!(p_with_test(0.5, Test::ForkMeans), "0.500");
        assert_eq!(p_with_test(0.0, Test::ForkMeans), "<1e-300");
        assert_eq!(p_with_test(f64::NAN, Test::Band), "band");
        assert_eq!(p_with_test(f64::NAN, Test::Pairs), "pairs");
    }
}
