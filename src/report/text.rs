//! The text report: JMH's table (`Benchmark (params) Mode Cnt Score Error Units`), then a
//! `time`-like line per benchmark (user, sys, cpu%, total, peak RSS, clock, temperature),
//! and for benchmarks offered a load (an open loop) their latency against throughput.

use super::java;
use crate::model::answer::Answer;
use crate::model::failure::Failure;
use crate::model::params::{self, param_keys};
use crate::model::result::{BenchResult, Versus};
use crate::util::format::format_score;

/// One row of JMH's table, as `TextResultFormat` takes a result or a secondary one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TableRow {
    /// The benchmark's name, `name:label` for a secondary result.
    pub name: String,
    pub params: Vec<(String, String)>,
    pub mode: String,
    /// JMH's sample count: printed where above 1.
    pub cnt: u64,
    pub score: f64,
    /// NaN for none.
    pub error: f64,
    pub unit: String,
    /// boardbench's word printed in place of the score and error (`SATURATED`).
    pub instead: Option<&'static str>,
    /// boardbench's mark after the units (`  THROTTLED`).
    pub mark: &'static str,
}

/// JMH's table, the time-like lines, the load table, a `FAILED` line per benchmark that
/// failed, then the run's answer. With no result at all, only the failures.
pub fn render(results: &[BenchResult], failed: &[Failure], answer: Option<&Answer>) -> String {
    let mut out = if results.is_empty() {
        String::new()
    } else {
        tables(results)
    };
    if !failed.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        for f in failed {
            out.push_str(&format!("FAILED: {}: {}\n", f.benchmark, f.error));
        }
    }
    if let Some(answer) = answer.filter(|a| !a.lines.is_empty()) {
        out.push('\n');
        out.push_str(&answer.text());
    }
    out
}

/// The rows of one result: its score, in sample mode JMH's percentile rows
/// (`name:p0.00` … `name:p1.00`), then its secondary metrics.
fn rows_of(r: &BenchResult) -> Vec<TableRow> {
    let mark = match (r.throttle.throttled, r.throttle.flags.is_empty()) {
        (true, _) => "  THROTTLED",
        (false, false) => "  FLAGGED",
        (false, true) => "",
    };
    let row = |name: String, cnt: u64, score: f64, error: f64, unit: String| TableRow {
        name,
        params: r.params.clone(),
        mode: r.mode().short().to_string(),
        cnt,
        score,
        error,
        unit,
        instead: None,
        mark,
    };
    let score = r.score();
    let mut primary = row(
        r.name.clone(),
        score.n as u64,
        score.mean,
        score.error,
        r.unit(),
    );
    // The latencies of a load that was not held describe a queue that kept growing:
    // the row says so instead.
    let saturated = r.saturated();
    if saturated {
        primary.instead = Some("SATURATED");
    }
    let mut rows = vec![primary];
    if !saturated {
        for p in r.sample_percentiles() {
            let name = format!("{}:{}", r.name, p.name);
            rows.push(row(name, 1, p.score, f64::NAN, r.unit()));
        }
    }
    for s in &r.secondary {
        let name = format!("{}:{}", r.name, s.name);
        rows.push(row(
            name,
            s.summary.n as u64,
            s.summary.mean,
            s.summary.error,
            s.unit.clone(),
        ));
    }
    rows
}

/// JMH's table as its `TextResultFormat` prints it, byte for byte: the name left-aligned;
/// the params sorted by name, each column two wider than its widest value or header,
/// `N/A` where a row has none; Mode, Cnt (blank at 1 or less), Score, then ` ±` in a
/// fixed column and the Error right-aligned after it (blank without one, or beside an
/// approximate score), and the Units, all right-aligned with two spaces between columns.
/// Names are printed whole (JMH shortens a common lower-case package prefix, which
/// boardbench's names, without a class part, would lose whole words to; see
/// docs/output.md).
pub(crate) fn jmh_table(rows: &[TableRow]) -> String {
    const PAD: usize = 2;
    let keys = super::jmh_param_order(
        rows.iter()
            .flat_map(|r| r.params.iter().map(|(k, _)| k.clone())),
    );
    let param_width = |k: &String| {
        rows.iter()
            .filter_map(|r| params::param_value(&r.params, k))
            .map(|v| java::len(v) + PAD)
            .fold(java::len(k) + 2 + PAD, usize::max)
    };
    let widths: Vec<usize> = keys.iter().map(param_width).collect();
    let score_text = |r: &TableRow| r.instead.map_or_else(|| java::score(r.score), String::from);
    let widest = |header: &str, f: &dyn Fn(&TableRow) -> String| {
        rows.iter()
            .map(|r| java::len(&f(r)))
            .fold(java::len(header), usize::max)
    };
    let name_w = widest("Benchmark", &|r| r.name.clone());
    let mode_w = widest("Mode", &|r| r.mode.clone()) + PAD;
    let cnt_w = widest("Cnt", &|r| r.cnt.to_string()) + PAD;
    let score_w = widest("Score", &score_text) + PAD;
    // One of the pad is the ± separator's.
    let error_w = widest("Error", &|r| java::score(r.error)) + PAD - 1;
    let unit_w = widest("Units", &|r| r.unit.clone()) + PAD;
    let mut out = java::left("Benchmark", name_w);
    for (k, w) in keys.iter().zip(&widths) {
        out.push_str(&java::right(&format!("({k})"), *w));
    }
    out.push_str(&java::right("Mode", mode_w));
    out.push_str(&java::right("Cnt", cnt_w));
    out.push_str(&java::right("Score", score_w));
    out.push_str("  ");
    out.push_str(&java::right("Error", error_w));
    out.push_str(&java::right("Units", unit_w));
    out.push('\n');
    for r in rows {
        out.push_str(&java::left(&r.name, name_w));
        for (k, w) in keys.iter().zip(&widths) {
            out.push_str(&java::right(
                params::param_value(&r.params, k).unwrap_or("N/A"),
                *w,
            ));
        }
        out.push_str(&java::right(&r.mode, mode_w));
        let cnt = if r.cnt > 1 {
            r.cnt.to_string()
        } else {
            String::new()
        };
        out.push_str(&java::right(&cnt, cnt_w));
        out.push_str(&java::right(&score_text(r), score_w));
        if r.instead.is_none() && !r.error.is_nan() && !java::is_approximate(r.score) {
            out.push_str(" \u{b1}");
            out.push_str(&java::right(&java::error(r.error), error_w));
        } else {
            out.push_str("  ");
            out.push_str(&" ".repeat(error_w));
        }
        out.push_str(&java::right(&r.unit, unit_w));
        out.push_str(r.mark);
        out.push('\n');
    }
    out
}

fn tables(results: &[BenchResult]) -> String {
    // An A/B run's rows of both builds, told apart by the `build` column.
    let rows: Vec<TableRow> = super::both_builds(results)
        .iter()
        .flat_map(rows_of)
        .collect();
    let mut out = jmh_table(&rows);
    out.push('\n');
    for r in results {
        out.push_str(&time_line(r));
        out.push('\n');
    }
    out.push_str(&load_table(results));
    out.push_str(&ab_table(results));
    let short: Vec<&BenchResult> = results.iter().filter(|r| r.saturated()).collect();
    if !short.is_empty() {
        out.push('\n');
        for r in short {
            let load = r
                .offered_load()
                .expect("a saturated result was offered a load");
            out.push_str(&format!(
                "SATURATED: {}: achieved {} of the {} ops/s offered ({:.0}%)\n",
                r.label(),
                format_score(load.achieved),
                format_score(load.target),
                100.0 * load.achieved / load.target
            ));
        }
    }
    // Every flagged row with why: throttled ones as they have long been marked.
    let flagged: Vec<&BenchResult> = results
        .iter()
        .filter(|r| r.throttle.throttled || !r.throttle.flags.is_empty())
        .collect();
    if !flagged.is_empty() {
        out.push('\n');
        for r in flagged {
            let what = match r.throttle.throttled {
                true => "THROTTLED",
                false => "FLAGGED",
            };
            out.push_str(&format!(
                "{what}: {}: {}\n",
                r.label(),
                r.throttle.reasons.join("; ")
            ));
        }
    }
    out
}

/// The latency percentiles of the load table, each column named as JMH names it.
const LOAD_PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

/// Latency against throughput for the benchmarks that were offered a load (an open
/// loop's rates, a sweep's shares of the maximum): per benchmark the rate offered and the
/// rate achieved over all its threads, and the p50, p99 and p99.9 latencies (an open
/// loop's are counted from each call's due time); a load not held says SATURATED instead
/// of latencies. Empty when no benchmark was offered one.
fn load_table(results: &[BenchResult]) -> String {
    let loaded: Vec<&BenchResult> = results
        .iter()
        .filter(|r| r.offered_load().is_some())
        .collect();
    let Some(first) = loaded.first() else {
        return String::new();
    };
    // The offered column stands for the rate parameter.
    let keys: Vec<String> = param_keys(loaded.iter().map(|r| r.params.as_slice()))
        .into_iter()
        .filter(|k| k != "rate")
        .collect();
    let mut header = vec!["Benchmark".to_string()];
    header.extend(keys.iter().map(|k| format!("({k})")));
    header.extend(["Offered/s", "Achieved/s"].map(String::from));
    header.extend(LOAD_PERCENTILES.map(percentile_name));
    let mut rows = vec![header];
    for r in &loaded {
        let load = r.offered_load().expect("filtered above");
        let mut row = vec![r.name.clone()];
        row.extend(keys.iter().map(|k| r.param(k).unwrap_or("N/A").to_string()));
        row.push(format!("{:.0}", load.target));
        row.push(format!("{:.0}", load.achieved));
        let percentiles = r.percentiles();
        for p in LOAD_PERCENTILES {
            let value = percentiles.iter().find(|(q, _)| *q == p).map(|(_, v)| *v);
            row.push(match value {
                Some(v) if !load.saturated() => format_score(v),
                _ => String::new(),
            });
        }
        if load.saturated() {
            row.push("SATURATED".into());
        }
        rows.push(row);
    }
    let title = format!("Latency against throughput ({})", first.time_unit.label());
    aligned(&title, &rows)
}

/// An A/B run's table (`--against`): per row both builds ran, both scores, how many
/// times faster this build is from the pairs of forks, the ratio's interval and its
/// verdict. Empty where no row has a pair.
fn ab_table(results: &[BenchResult]) -> String {
    let paired: Vec<(&BenchResult, &Versus)> = results
        .iter()
        .filter_map(|r| Some((r, r.versus.as_ref()?)))
        .collect();
    let Some((_, first)) = paired.first() else {
        return String::new();
    };
    let keys = param_keys(paired.iter().map(|(r, _)| r.params.as_slice()));
    let mut header = vec!["Benchmark".to_string()];
    header.extend(keys.iter().map(|k| format!("({k})")));
    header.extend(
        [
            "This",
            "Against",
            "Units",
            "Ratio",
            "Interval",
            "Pairs",
            "Verdict",
            "Could see",
        ]
        .map(String::from),
    );
    let mut rows = vec![header];
    for (r, versus) in &paired {
        let mut row = vec![r.name.clone()];
        row.extend(keys.iter().map(|k| r.param(k).unwrap_or("N/A").to_string()));
        row.push(format_score(r.score().mean));
        row.push(format_score(versus.result.score().mean));
        row.push(r.unit());
        match versus.ratio {
            Some(p) => row.extend([
                format!("{:.3}x", p.ratio),
                format!("{}-{}", format_score(p.low), format_score(p.high)),
                p.basis.count().to_string(),
                p.verdict().name().to_string(),
                crate::stats::power::percent(p.smallest),
            ]),
            None => row.extend(["?", "", "", "?", ""].map(String::from)),
        }
        rows.push(row);
    }
    let title = format!(
        "This build against {} (sha1 {}): Ratio is how many times faster this build is, over pairs of forks ({}% interval; Could see: the smallest change the pairs would call in 95 tries of 100)",
        first.other.path,
        &first.other.sha1[..first.other.sha1.len().min(12)],
        crate::stats::paired::PAIRED_CONFIDENCE * 100.0
    );
    aligned(&title, &rows)
}

/// `rows` under `title`, a blank line before: the first column to the left, the others
/// to the right, two spaces apart; cells past the header's columns (a mark) after them.
fn aligned(title: &str, rows: &[Vec<String>]) -> String {
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|row| row.get(i))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("\n{title}:\n");
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let w = widths.get(i).copied().unwrap_or(0);
            if i > 0 {
                line.push_str("  ");
            }
            // Names and params to the left, numbers to the right, the mark after them.
            match i {
                0 => line.push_str(&format!("{cell:<w$}")),
                _ if i >= columns => line.push_str(cell),
                _ => line.push_str(&format!("{cell:>w$}")),
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The `time`-like line of one benchmark over its measured iterations.
pub fn time_line(r: &BenchResult) -> String {
    let c = &r.cpu;
    let mut s = format!(
        "{}: user {:.2}s  sys {:.2}s  cpu {:.0}%  total {:.2}s",
        r.label(),
        c.user(),
        c.sys(),
        c.percent(),
        c.wall
    );
    if let Some(kib) = r.peak_rss_kib {
        s.push_str(&format!("  peak RSS {:.1} MiB", kib as f64 / 1024.0));
    }
    let h = &r.throttle.health;
    if let Some(mhz) = h.clock_mhz {
        match h.clock_max_mhz {
            Some(max) => s.push_str(&format!("  clock {mhz:.0}/{max:.0} MHz")),
            None => s.push_str(&format!("  clock {mhz:.0} MHz")),
        }
        if let Some(below) = h.below_max_percent.filter(|&p| p >= 0.5) {
            s.push_str(&format!(" ({below:.0}% below max)"));
        }
    }
    match (h.temp_before_c, h.temp_after_c) {
        (Some(before), Some(after)) => s.push_str(&format!("  {before:.1}→{after:.1}°C")),
        _ => {
            if let Some(t) = r.throttle.max_temp_c {
                s.push_str(&format!("  max {t:.1}°C"));
            }
        }
    }
    s
}

/// JMH's names of percentile rows: `p0.50`, `p0.90`, `p0.99`, `p0.999`, `p0.9999`, `max`.
fn percentile_name(p: f64) -> String {
    if p == 100.0 {
        return "max".to_string();
    }
    let mut digits = format!("{:.4}", p / 100.0);
    while digits.ends_with('0') && digits.len() > 4 {
        digits.pop();
    }
    format!("p{digits}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::tests::sample_result;

    #[test]
    fn the_answer_comes_last_under_its_marker() {
        let r = sample_result("bb.zstd.compress", "1", vec![1.0]);
        let answer = Answer::new("bb-zstd".into(), vec!["compress: 344 MB/s".into()]);
        let text = render(std::slice::from_ref(&r), &[], Some(&answer));
        assert!(
            text.starts_with(&render(std::slice::from_ref(&r), &[], None)),
            "{text}"
        );
        assert!(
            text.ends_with("\n\n== bb-zstd: the answer ==\ncompress: 344 MB/s\n"),
            "{text}"
        );
        let silent = Answer::new("bb-zstd".into(), vec![]);
        assert_eq!(
            render(std::slice::from_ref(&r), &[], Some(&silent)),
            render(&[r], &[], None)
        );
    }

    #[test]
    fn failed_benchmarks_follow_the_table_and_stand_alone_without_one() {
        let r = sample_result("bb.ipc.local", "1", vec![1.0]);
        let failed = [Failure {
            benchmark: "bb.ipc.remote (transport=tcp)".into(),
            error: "connecting to 127.0.0.1:4000: refused".into(),
        }];
        let answer = Answer::new("bb-ipc".into(), vec!["local: 1 ns".into()]);
        let text = render(std::slice::from_ref(&r), &failed, Some(&answer));
        let table = render(std::slice::from_ref(&r), &[], None);
        assert_eq!(
            text,
            format!(
                "{table}\nFAILED: bb.ipc.remote (transport=tcp): connecting to \
                 127.0.0.1:4000: refused\n\n== bb-ipc: the answer ==\nlocal: 1 ns\n"
            )
        );
        assert_eq!(
            render(&[], &failed, None),
            "FAILED: bb.ipc.remote (transport=tcp): connecting to 127.0.0.1:4000: refused\n"
        );
    }

    /// The rows of a JMH `-rf json` file, as JMH's text format takes its results: each
    /// entry's primary metric, then its secondary metrics in the file's order; the count
    /// is the number of raw values (of samples, in sample mode).
    fn rows_of_jmh_json(text: &str) -> Vec<TableRow> {
        use crate::util::json::Json;
        let doc = Json::parse(text).unwrap();
        let count = |m: &Json| -> u64 {
            if let Some(h) = m.get("rawDataHistogram").and_then(Json::as_array) {
                let pairs = h
                    .iter()
                    .flat_map(|f| f.as_array().unwrap())
                    .flat_map(|i| i.as_array().unwrap());
                return pairs
                    .map(|p| p.as_array().unwrap()[1].as_f64().unwrap() as u64)
                    .sum();
            }
            let raw = m.get("rawData").and_then(Json::as_array).unwrap_or(&[]);
            raw.iter().map(|f| f.as_array().unwrap().len() as u64).sum()
        };
        let mut rows = Vec::new();
        for e in doc.as_array().unwrap() {
            let params: Vec<(String, String)> = match e.get("params") {
                Some(Json::Obj(pairs)) => pairs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                    .collect(),
                _ => vec![],
            };
            let name = e.get("benchmark").unwrap().as_str().unwrap();
            let mut metrics = vec![(name.to_string(), e.get("primaryMetric").unwrap())];
            if let Some(Json::Obj(secondary)) = e.get("secondaryMetrics") {
                metrics.extend(secondary.iter().map(|(k, m)| (format!("{name}:{k}"), m)));
            }
            for (name, m) in metrics {
                let num = |k: &str| m.get(k).and_then(Json::as_f64).unwrap();
                rows.push(TableRow {
                    name,
                    params: params.clone(),
                    mode: e.get("mode").unwrap().as_str().unwrap().to_string(),
                    cnt: count(m),
                    score: num("score"),
                    error: num("scoreError"),
                    unit: m.get("scoreUnit").unwrap().as_str().unwrap().to_string(),
                    instead: None,
                    mark: "",
                });
            }
        }
        rows
    }

    fn jmh_data(file: &str) -> String {
        let path = format!("{}/tests/data/jmh/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn the_table_of_jmh_s_golden_json_is_jmh_s_golden_text_byte_for_byte() {
        let rows = rows_of_jmh_json(&jmh_data("openjdk-golden.json"));
        let golden = jmh_data("openjdk-golden.txt");
        // JMH ends every line with a newline; the golden file, compared line by line by
        // JMH's own test, lacks the last one.
        assert_eq!(jmh_table(&rows), format!("{golden}\n"));
    }

    #[test]
    fn table_matches_jmh_layout_exactly() {
        let mut a = sample_result("bb.zstd.compress", "1", vec![100.0, 110.0, 120.0]);
        a.secondary.push(crate::model::result::Secondary {
            name: "MB/s".into(),
            unit: "MB/s".into(),
            raw: vec![vec![355.9]],
            summary: crate::stats::Summary::of(&[355.9]),
        });
        a.secondary.push(crate::model::result::Secondary::new(
            "tiny",
            "x",
            vec![vec![1e-4, 1e-4, 1e-4]],
        ));
        a.params.insert(0, ("zeta".into(), "z".into()));
        let mut b = sample_result("bb.zstd.decompress", "2", vec![8.2235, 8.2235, 8.2235]);
        b.throttle.throttled = true;
        b.throttle.reasons = vec!["vcgencmd get_throttled: throttled (0x4)".into()];
        let text = render(&[a, b], &[], None);
        // Params sorted, ± in a fixed column, an error that rounds to zero as 0.001, Cnt
        // blank at 1, an approximate score without its error, Units right-aligned.
        let expected = "\
Benchmark              (level)  (threads)  (zeta)   Mode  Cnt    Score     Error  Units
bb.zstd.compress             3          1       z  thrpt    3  110.000 \u{b1} 182.437  ops/s
bb.zstd.compress:MB/s        3          1       z  thrpt       355.900             MB/s
bb.zstd.compress:tiny        3          1       z  thrpt    3   \u{2248} 10\u{207b}\u{2074}                x
bb.zstd.decompress           3          2     N/A  thrpt    3    8.224 \u{b1}   0.001  ops/s  THROTTLED

bb.zstd.compress (zeta=z, level=3, threads=1): user 3.50s  sys 0.25s  cpu 188%  total 2.00s  peak RSS 10.0 MiB
bb.zstd.decompress (level=3, threads=2): user 3.50s  sys 0.25s  cpu 188%  total 2.00s  peak RSS 10.0 MiB

THROTTLED: bb.zstd.decompress (level=3, threads=2): vcgencmd get_throttled: throttled (0x4)
";
        assert_eq!(text, expected);
    }

    #[test]
    fn time_line_shows_clock_and_temperatures_when_known() {
        let mut r = sample_result("bb.zstd.compress", "1", vec![1.0]);
        let base = "bb.zstd.compress (level=3, threads=1): user 3.50s  sys 0.25s  cpu 188%  total 2.00s  peak RSS 10.0 MiB";
        assert_eq!(time_line(&r), base);
        r.throttle.health.clock_mhz = Some(1498.4);
        r.throttle.health.clock_max_mhz = Some(1500.0);
        r.throttle.health.below_max_percent = Some(0.2);
        r.throttle.health.temp_before_c = Some(52.14);
        r.throttle.health.temp_after_c = Some(55.26);
        assert_eq!(
            time_line(&r),
            format!("{base}  clock 1498/1500 MHz  52.1→55.3°C")
        );
        r.throttle.health.clock_mhz = Some(1275.0);
        r.throttle.health.below_max_percent = Some(25.0);
        r.throttle.health.temp_before_c = None;
        r.throttle.max_temp_c = Some(55.26);
        assert_eq!(
            time_line(&r),
            format!("{base}  clock 1275/1500 MHz (25% below max)  max 55.3°C")
        );
        r.throttle.health.clock_max_mhz = None;
        r.throttle.health.below_max_percent = None;
        r.throttle.max_temp_c = None;
        assert_eq!(time_line(&r), format!("{base}  clock 1275 MHz"));
    }

    #[test]
    fn sample_mode_cnt_is_the_number_of_samples() {
        let text = render(
            &[crate::model::result::tests::sample_mode_result()],
            &[],
            None,
        );
        let cnt = |name: &str| {
            let line = text.lines().find(|l| l.starts_with(name)).unwrap();
            line.split_whitespace().nth(4).unwrap().to_string()
        };
        assert_eq!(cnt("bb.ipc.remote "), "110");
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("bb.ipc.remote:"))
            .collect();
        let names: Vec<&str> = rows
            .iter()
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(
            names,
            ["p0.00", "p0.50", "p0.90", "p0.95", "p0.99", "p0.999", "p0.9999", "p1.00"]
                .map(|p| format!("bb.ipc.remote:{p}")),
            "JMH's eight percentile rows"
        );
        for row in rows {
            // Name, two params, mode, then the score: Cnt is blank.
            let cells: Vec<&str> = row.split_whitespace().collect();
            assert_eq!((cells[3], cells.len()), ("sample", 6), "{row}");
        }
    }

    #[test]
    fn sample_mode_is_scored_over_every_sample() {
        let r = crate::model::result::tests::sample_mode_result();
        let text = render(std::slice::from_ref(&r), &[], None);
        let score = r.score();
        assert!(score.mean > 100.0 && score.mean < 150.0, "{}", score.mean);
        let row = text
            .lines()
            .find(|l| l.starts_with("bb.ipc.remote "))
            .unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells[4..7],
            ["110", &java::score(score.mean), "\u{b1}"],
            "{row}"
        );
        assert_eq!(cells[7], java::error(score.error), "{row}");
        assert!(
            !row.contains("367.000"),
            "not the mean of the iterations: {row}"
        );
    }

    #[test]
    fn a_saturated_row_says_so_instead_of_its_latencies() {
        let mut r = crate::model::result::tests::sample_mode_result();
        r.offered_rate = Some(1000.0);
        r.ops = 500;
        r.cpu.wall = 1.0;
        let text = render(&[r.clone()], &[], None);
        let row = "bb.ipc.remote        3          1  sample  110  SATURATED           us/op";
        assert!(text.lines().any(|l| l == row), "{text}");
        assert!(!text.contains(":p0.99"), "no latency percentiles:\n{text}");
        assert!(
            text.ends_with(
                "SATURATED: bb.ipc.remote (level=3, threads=1): achieved 500.000 of the 1000.000 ops/s offered (50%)\n"
            ),
            "{text}"
        );
        // Held within 1%: the latencies as usual.
        r.ops = 995;
        let text = render(&[r], &[], None);
        assert!(
            text.contains(":p0.99") && !text.contains("SATURATED"),
            "{text}"
        );
    }

    #[test]
    fn a_load_table_follows_the_time_lines_with_a_row_per_offered_load() {
        let mut held = crate::model::result::tests::sample_mode_result();
        held.params.push(("rate".into(), "100".into()));
        held.params.push(("load".into(), "50%".into()));
        held.offered_rate = Some(100.0);
        held.ops = 100;
        held.cpu.wall = 1.0;
        let mut short = held.clone();
        short.params[2] = ("rate".into(), "1000".into());
        short.params[3] = ("load".into(), "100%".into());
        short.offered_rate = Some(1000.0);
        let plain = crate::model::result::tests::sample_mode_result();
        assert_eq!(load_table(std::slice::from_ref(&plain)), "");
        let text = render(&[held, short, plain], &[], None);
        let table = text.split("\nLatency against throughput").nth(1).unwrap();
        let expected = " (us):
Benchmark      (level)  (threads)  (load)  Offered/s  Achieved/s   p0.50     p0.99    p0.999
bb.ipc.remote        3          1     50%        100         100  55.424  1000.000  1000.000
bb.ipc.remote        3          1    100%       1000         100                              SATURATED
";
        assert!(table.starts_with(expected), "{table}");
    }

    #[test]
    fn percentile_rows_are_named_as_jmh_names_them() {
        let names: Vec<String> = [50.0, 90.0, 99.0, 99.9, 99.99, 100.0]
            .iter()
            .map(|&p| percentile_name(p))
            .collect();
        assert_eq!(
            names,
            ["p0.50", "p0.90", "p0.99", "p0.999", "p0.9999", "max"]
        );
    }
}
