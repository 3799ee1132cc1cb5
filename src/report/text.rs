//! The text report: JMH's table (`Benchmark (params) Mode Cnt Score Error Units`), then a
//! `time`-like line per benchmark (user, sys, cpu%, total, peak RSS, clock, temperature),
//! and for benchmarks offered a load (an open loop) their latency against throughput.

use crate::util::format::format_score;
use crate::model::answer::Answer;
use crate::model::failure::Failure;
use crate::model::params::param_keys;
use crate::model::result::BenchResult;

/// One table row before alignment.
struct Row {
    benchmark: String,
    params: Vec<String>,
    mode: String,
    cnt: String,
    score: String,
    error: String,
    unit: String,
    flag: &'static str,
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

fn tables(results: &[BenchResult]) -> String {
    let keys = param_keys(results.iter().map(|r| r.params.as_slice()));
    let mut rows = Vec::new();
    for r in results {
        let params: Vec<String> = keys
            .iter()
            .map(|k| r.param(k).unwrap_or("N/A").to_string())
            .collect();
        let flag = if r.throttle.throttled {
            "  THROTTLED"
        } else {
            ""
        };
        let row = |benchmark: String, cnt: String, score: f64, error: f64, unit: String| Row {
            benchmark,
            params: params.clone(),
            mode: r.mode().short().to_string(),
            cnt,
            score: format_score(score),
            error: if error.is_nan() {
                String::new()
            } else {
                format!("± {}", format_score(error))
            },
            unit,
            flag,
        };
        let mut primary = row(
            r.name.clone(),
            r.sample_count().to_string(),
            r.summary.mean,
            r.summary.error,
            r.unit(),
        );
        // The latencies of a load that was not held describe a queue that kept growing:
        // the row says so instead.
        let saturated = r.saturated();
        if saturated {
            primary.score = "SATURATED".into();
            primary.error = String::new();
        }
        rows.push(primary);
        if let Some(h) = r.histogram.as_ref().filter(|_| !saturated) {
            for (p, v) in r.percentiles() {
                if [50.0, 90.0, 99.0, 99.9, 99.99, 100.0].contains(&p) {
                    let name = percentile_name(p);
                    rows.push(row(
                        format!("{}:{name}", r.name),
                        h.count().to_string(),
                        v,
                        f64::NAN,
                        r.unit(),
                    ));
                }
            }
        }
        for s in &r.secondary {
            rows.push(row(
                format!("{}:{}", r.name, s.name),
                s.summary.n.to_string(),
                s.summary.mean,
                s.summary.error,
                s.unit.clone(),
            ));
        }
    }
    let mut header = Row {
        benchmark: "Benchmark".into(),
        params: keys.iter().map(|k| format!("({k})")).collect(),
        mode: "Mode".into(),
        cnt: "Cnt".into(),
        score: "Score".into(),
        error: "Error".into(),
        unit: "Units".into(),
        flag: "",
    };
    let width = |f: &dyn Fn(&Row) -> usize| {
        rows.iter()
            .map(f)
            .chain(std::iter::once(f(&header)))
            .max()
            .unwrap_or(0)
    };
    let w_bench = width(&|r| r.benchmark.chars().count());
    let w_params: Vec<usize> = (0..keys.len())
        .map(|i| width(&|r| r.params[i].chars().count()))
        .collect();
    let w_mode = width(&|r| r.mode.len());
    let w_cnt = width(&|r| r.cnt.len());
    let w_score = width(&|r| r.score.len());
    let w_error = width(&|r| r.error.chars().count());
    let mut out = String::new();
    let mut line = |r: &Row| {
        let mut s = format!("{:<w_bench$}", r.benchmark);
        for (p, w) in r.params.iter().zip(&w_params) {
            s.push_str(&format!("  {p:>w$}"));
        }
        s.push_str(&format!(
            "  {:>w_mode$}  {:>w_cnt$}  {:>w_score$}  {:>w_error$}  {}{}",
            r.mode, r.cnt, r.score, r.error, r.unit, r.flag
        ));
        out.push_str(s.trim_end());
        out.push('\n');
    };
    header.error = format!("{:>w_error$}", "Error");
    line(&header);
    for r in &rows {
        line(r);
    }
    out.push('\n');
    for r in results {
        out.push_str(&time_line(r));
        out.push('\n');
    }
    out.push_str(&load_table(results));
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
    let throttled: Vec<&BenchResult> = results.iter().filter(|r| r.throttle.throttled).collect();
    if !throttled.is_empty() {
        out.push('\n');
        for r in throttled {
            out.push_str(&format!(
                "THROTTLED: {}: {}\n",
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
    let mut out = format!(
        "\nLatency against throughput ({}):\n",
        first.time_unit.label()
    );
    for row in &rows {
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
        assert!(text.starts_with(&render(std::slice::from_ref(&r), &[], None)), "{text}");
        assert!(text.ends_with("\n\n== bb-zstd: the answer ==\ncompress: 344 MB/s\n"), "{text}");
        let silent = Answer::new("bb-zstd".into(), vec![]);
        assert_eq!(render(std::slice::from_ref(&r), &[], Some(&silent)), render(&[r], &[], None));
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

    #[test]
    fn table_matches_jmh_layout_exactly() {
        let mut a = sample_result("bb.zstd.compress", "1", vec![100.0, 110.0, 120.0]);
        a.secondary.push(crate::model::result::Secondary {
            name: "MB/s".into(),
            unit: "MB/s".into(),
            raw: vec![vec![355.9]],
            summary: crate::stats::Summary::of(&[355.9]),
        });
        let mut b = sample_result("bb.zstd.decompress", "2", vec![1.5, 1.5]);
        b.throttle.throttled = true;
        b.throttle.reasons = vec!["vcgencmd get_throttled: throttled (0x4)".into()];
        let text = render(&[a, b], &[], None);
        let expected = "\
Benchmark              (level)  (threads)   Mode  Cnt    Score      Error  Units
bb.zstd.compress             3          1  thrpt    3  110.000  ± 182.437  ops/s
bb.zstd.compress:MB/s        3          1  thrpt    1  355.900             MB/s
bb.zstd.decompress           3          2  thrpt    2    1.500             ops/s  THROTTLED

bb.zstd.compress (level=3, threads=1): user 3.50s  sys 0.25s  cpu 188%  total 2.00s  peak RSS 10.0 MiB
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
        let text = render(&[crate::model::result::tests::sample_mode_result()], &[], None);
        let cnt = |name: &str| {
            let line = text.lines().find(|l| l.starts_with(name)).unwrap();
            line.split_whitespace().nth(4).unwrap().to_string()
        };
        assert_eq!(cnt("bb.ipc.remote "), "110");
        assert_eq!(cnt("bb.ipc.remote:p0.99 "), "110");
    }

    #[test]
    fn a_saturated_row_says_so_instead_of_its_latencies() {
        let mut r = crate::model::result::tests::sample_mode_result();
        r.offered_rate = Some(1000.0);
        r.ops = 500;
        r.cpu.wall = 1.0;
        let text = render(&[r.clone()], &[], None);
        let row = "bb.ipc.remote        3          1  sample  110  SATURATED         us/op";
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
bb.ipc.remote        3          1     50%        100         100  54.911  1000.000  1000.000
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
