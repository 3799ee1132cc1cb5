//! bb-compare's reports: the comparison as an aligned text table, CSV, JSON or a
//! markdown table, or github-action-benchmark's custom JSON, each a pure function of the
//! [`Comparison`].

use super::gab::{self, Direction};
use super::{Cell, Comparison, Row, Test};
use crate::model::params::{param_keys, param_value};
use crate::report::csv::{num as csv_number, quote as csv_quote};
use crate::util::format::format_score;
use crate::util::json::Json;
use crate::report::ReportFormat;

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

fn with_error(value: f64, error: f64) -> String {
    if error.is_nan() {
        format_score(value)
    } else {
        format!("{} ± {}", format_score(value), format_score(error))
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

/// The p-value with the test it came from, where that is not pooled iterations.
fn p_with_test(p: f64, test: Test) -> String {
    match test {
        Test::Iterations => p_text(p),
        _ if p.is_nan() => String::new(),
        _ => format!("{} ({})", p_text(p), test.name()),
    }
}

/// The table both text and markdown show: header cells, then a row of cells per benchmark.
/// Scores come with their errors; each run after the first adds ratio, p and verdict.
fn display_table(c: &Comparison) -> (Vec<String>, Vec<Vec<String>>) {
    let keys = param_keys_of(c);
    let mut header = vec!["Benchmark".to_string()];
    header.extend(keys.iter().map(|k| format!("({k})")));
    header.extend(["Mode".to_string(), "Units".to_string()]);
    for (i, label) in c.labels.iter().enumerate() {
        header.push(label.clone());
        if i > 0 {
            header.extend(["Ratio".into(), "p".into(), "Verdict".into()]);
        }
    }
    let rows = c
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![row.benchmark.clone()];
            cells.extend(param_cells(row, &keys));
            cells.extend([row.mode.clone(), row.unit.clone()]);
            for (i, cell) in row.cells.iter().enumerate() {
                cells.push(
                    cell.as_ref()
                        .map_or("-".into(), |x| with_error(x.score, x.error)),
                );
                if i > 0 {
                    match cell.as_ref().and_then(|x| x.change.as_ref()) {
                        Some(ch) => cells.extend([
                            with_error(ch.ratio, ch.ratio_error),
                            p_with_test(ch.p_value, ch.test),
                            ch.verdict.name().to_string(),
                        ]),
                        None => cells.extend(["-".into(), String::new(), String::new()]),
                    }
                }
            }
            cells
        })
        .collect();
    (header, rows)
}

fn text(c: &Comparison) -> String {
    let (header, rows) = display_table(c);
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            std::iter::once(&header)
                .chain(&rows)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, (cell, w)) in r.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            if i > 0 {
                line.push_str("  ");
            }
            // The benchmark name is left-aligned, like JMH's; everything else right.
            if i == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    for note in &c.notes {
        out.push_str(&format!("{}: {}\n", note.kind, note.message));
    }
    if c.labels.len() > 1 {
        out.push_str(&format!("against {}: {}\n", c.labels[0], c.summary()));
    }
    out
}

fn markdown(c: &Comparison) -> String {
    let (header, rows) = display_table(c);
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
        header.extend([format!("{label} Score"), format!("{label} Error")]);
        if i > 0 {
            header.extend([
                format!("{label} Ratio"),
                format!("{label} Ratio Error"),
                format!("{label} p"),
                format!("{label} Test"),
                format!("{label} Verdict"),
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
            let (score, error) = cell.as_ref().map_or((String::new(), String::new()), |x| {
                (csv_number(x.score), csv_number(x.error))
            });
            cells.extend([score, error]);
            if i > 0 {
                match cell.as_ref().and_then(|x| x.change.as_ref()) {
                    Some(ch) => cells.extend([
                        csv_number(ch.ratio),
                        csv_number(ch.ratio_error),
                        if ch.p_value < P_FLOOR {
                            p_text(ch.p_value)
                        } else {
                            csv_number(ch.p_value)
                        },
                        csv_quote(ch.test.name()),
                        csv_quote(ch.verdict.name()),
                    ]),
                    None => cells.extend(vec![String::new(); 5]),
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
    let mut pairs = vec![
        ("file", Json::str(label)),
        ("score", Json::Num(x.score)),
        ("scoreError", Json::Num(x.error)),
        ("samples", Json::Num(x.samples.count() as f64)),
        ("forks", Json::Num(x.samples.fork_count() as f64)),
    ];
    if let Some(ch) = &x.change {
        pairs.extend([
            ("ratio", Json::Num(ch.ratio)),
            ("ratioError", Json::Num(ch.ratio_error)),
            ("pValue", Json::Num(ch.p_value)),
            ("test", Json::str(ch.test.name())),
            ("verdict", Json::str(ch.verdict.name())),
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
    ])
}

#[cfg(test)]
mod tests {
    use super::super::compare;
    use super::super::tests::{criteria, measurement};
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
                        measurement("bb.a", &[("threads", "1")], &[100.0, 101.0, 99.0]),
                        measurement("bb.gone", &[], &[5.0, 5.0, 5.0]),
                    ],
                ),
                (
                    "new".into(),
                    vec![measurement(
                        "bb.a",
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
Benchmark  (threads)   Mode  Units              base              new          Ratio       p  Verdict
bb.a               1  thrpt  ops/s  100.000 ± 18.244  80.000 ± 18.244  0.800 ± 0.234  1.6e-5   slower
bb.gone          N/A  thrpt  ops/s     5.000 ± 0.000                -              -

missing: bb.gone (thrpt) is in base but not in new
against base: 1 slower (same: within 5%; noise: beyond it but Welch p >= 0.01; ?: too few iterations to test)
";
        assert_eq!(text(&sample()), expected);
    }

    #[test]
    fn markdown_csv_and_json_carry_the_same_rows() {
        let c = sample();
        let md = markdown(&c);
        assert!(md.starts_with("| Benchmark | (threads) | Mode | Units | base | new | Ratio | p | Verdict |\n|---|---:|"), "{md}");
        assert!(md.contains("| bb.a | 1 | thrpt | ops/s | 100.000 ± 18.244 | 80.000 ± 18.244 | 0.800 ± 0.234 | 1.6e-5 | slower |"), "{md}");
        assert!(md.contains("- missing: bb.gone"), "{md}");
        let csv = csv(&c);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "\"Benchmark\",\"Mode\",\"Unit\",\"Param: threads\",\"base Score\",\"base Error\",\"new Score\",\"new Error\",\"new Ratio\",\"new Ratio Error\",\"new p\",\"new Test\",\"new Verdict\"");
        assert!(
            lines[1].starts_with("\"bb.a\",\"thrpt\",\"ops/s\",\"1\",100,"),
            "{}",
            lines[1]
        );
        assert!(lines[1].ends_with(",\"slower\""), "{}", lines[1]);
        assert_eq!(
            lines[2],
            "\"bb.gone\",\"thrpt\",\"ops/s\",\"N/A\",5,0,,,,,,,"
        );
        let j = Json::parse(&json_document(&c).to_pretty()).unwrap();
        assert_eq!(j.get("regression"), Some(&Json::Bool(true)));
        let row = &j.get("rows").unwrap().as_array().unwrap()[0];
        let new = &row.get("results").unwrap().as_array().unwrap()[1];
        assert_eq!(new.get("verdict").unwrap().as_str(), Some("slower"));
        assert_eq!(new.get("ratio").unwrap().as_f64(), Some(0.8));
        assert_eq!(new.get("test").unwrap().as_str(), Some("iterations"));
    }

    #[test]
    fn p_values_keep_their_digits_down_to_1e_300() {
        assert_eq!(p_text(0.0421), "0.042");
        assert_eq!(p_text(1.63e-5), "1.6e-5");
        assert_eq!(p_text(3.2e-250), "3.2e-250");
        assert_eq!(p_text(1e-310), "<1e-300");
        assert_eq!(p_text(0.0), "<1e-300");
        assert_eq!(p_text(f64::NAN), "");
        assert_eq!(p_with_test(0.5, Test::ForkMeans), "0.500 (fork means)");
        assert_eq!(p_with_test(0.0, Test::Samples), "<1e-300 (samples)");
        assert_eq!(p_with_test(0.0, Test::Iterations), "<1e-300");
    }
}
