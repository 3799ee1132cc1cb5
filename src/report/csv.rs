//! The CSV report as JMH's `-rf csv` writes it: JMH's columns (`Benchmark, Mode, Threads,
//! Samples, Score, Score Error (99.9%), Unit, Param: ...`, the params sorted by name),
//! secondary metrics as `name:metric` rows (in sample mode first JMH's percentile
//! rows, `p0.00` … `p1.00`), numbers as JMH prints them and CRLF line ends; boardbench's own columns come
//! after the params (CPU, memory, throttling, clock and temperature).

use crate::model::params::param_keys;
use crate::model::result::BenchResult;

/// JMH ends every CSV line, the last one too, with CRLF.
const EOL: &str = "\r\n";

/// A score or error as JMH's CSV writer prints it (`String.format("%f")` in the root
/// locale): six decimals rounded as Java rounds them, never an exponent; `NaN`,
/// `Infinity`.
pub(crate) fn jmh_number(v: f64) -> String {
    match v {
        v if v.is_nan() => "NaN".to_string(),
        v if v.is_infinite() => if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string(),
        v => super::java::fixed(v, 6),
    }
}

/// A param value as JMH writes it: bare, unless it holds a comma, a space, a line break
/// or a quote; then quoted, with quotes doubled.
pub(crate) fn jmh_cell(s: &str) -> String {
    if s.contains([',', ' ', '\n', '\r', '"']) {
        quote(s)
    } else {
        s.to_string()
    }
}

pub(crate) fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

pub(crate) fn num(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else {
        format!("{v}")
    }
}

/// A number, or an empty cell when unknown.
fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}

pub fn render(results: &[BenchResult]) -> String {
    // JMH's param columns: every name any result has, sorted.
    let keys = super::jmh_param_order(param_keys(results.iter().map(|r| r.params.as_slice())));
    let mut header: Vec<String> = [
        "Benchmark",
        "Mode",
        "Threads",
        "Samples",
        "Score",
        "Score Error (99.9%)",
        "Unit",
    ]
    .iter()
    .map(|s| quote(s))
    .collect();
    header.extend(keys.iter().map(|k| quote(&format!("Param: {k}"))));
    header.extend(
        [
            "User (s)",
            "Sys (s)",
            "CPU (%)",
            "Wall (s)",
            "Peak RSS (KiB)",
            "Throttled",
            "Clock (MHz)",
            "Clock Max (MHz)",
            "Clock Below Max (%)",
            "Temp Before (°C)",
            "Temp After (°C)",
        ]
        .iter()
        .map(|s| quote(s)),
    );
    let mut out = header.join(",") + EOL;
    for r in results {
        let params: Vec<String> = keys
            .iter()
            .map(|k| r.param(k).map(jmh_cell).unwrap_or_default())
            .collect();
        let h = &r.throttle.health;
        let extras = [
            num(r.cpu.user()),
            num(r.cpu.sys()),
            num(r.cpu.percent()),
            num(r.cpu.wall),
            r.peak_rss_kib.map(|k| k.to_string()).unwrap_or_default(),
            r.throttle.throttled.to_string(),
            opt(h.clock_mhz),
            opt(h.clock_max_mhz),
            opt(h.below_max_percent),
            opt(h.temp_before_c),
            opt(h.temp_after_c),
        ];
        let mut row = |name: &str, n: u64, score: f64, error: f64, unit: &str| {
            let mut cells = vec![
                quote(name),
                quote(r.mode().short()),
                r.threads.to_string(),
                n.to_string(),
                jmh_number(score),
                jmh_number(error),
                quote(unit),
            ];
            cells.extend(params.iter().cloned());
            cells.extend(extras.iter().cloned());
            out.push_str(&cells.join(","));
            out.push_str(EOL);
        };
        let score = r.score();
        row(&r.name, score.n as u64, score.mean, score.error, &r.unit());
        // JMH's percentile rows of sample mode: one value each, no error.
        for p in r.sample_percentiles() {
            let name = format!("{}:{}", r.name, p.name);
            row(&name, 1, p.score, f64::NAN, &r.unit());
        }
        for s in &r.secondary {
            row(
                &format!("{}:{}", r.name, s.name),
                s.summary.n as u64,
                s.summary.mean,
                s.summary.error,
                &s.unit,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::tests::sample_result;

    #[test]
    fn csv_has_jmh_columns_and_exact_rows() {
        let r = sample_result("bb.zstd.compress", "2", vec![1.0, 2.0]);
        let text = render(&[r]);
        assert_eq!(
            text,
            "\"Benchmark\",\"Mode\",\"Threads\",\"Samples\",\"Score\",\"Score Error (99.9%)\",\"Unit\",\"Param: level\",\"Param: threads\",\"User (s)\",\"Sys (s)\",\"CPU (%)\",\"Wall (s)\",\"Peak RSS (KiB)\",\"Throttled\",\"Clock (MHz)\",\"Clock Max (MHz)\",\"Clock Below Max (%)\",\"Temp Before (°C)\",\"Temp After (°C)\"\r\n\
             \"bb.zstd.compress\",\"thrpt\",2,2,1.500000,NaN,\"ops/s\",3,2,3.5,0.25,187.5,2,10240,false,,,,,\r\n"
        );
    }

    #[test]
    fn params_are_sorted_and_quoted_as_jmh_does() {
        let mut a = sample_result("bb.x", "1", vec![1.0, 2.0, 3.0]);
        a.params = vec![
            ("size".into(), "1 MiB".into()),
            ("call".into(), "a,b".into()),
            ("mode".into(), "\"q\"".into()),
        ];
        let mut b = sample_result("bb.y", "1", vec![1.0e10, 2.0e10, 3.0e10]);
        b.params = vec![("alpha".into(), "[1]".into())];
        let text = render(&[a, b]);
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert!(
            lines[0].contains("\"Unit\",\"Param: alpha\",\"Param: call\",\"Param: mode\",\"Param: size\",\"User (s)\""),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("\"bb.x\",\"thrpt\",1,3,2.000000,"),
            "{}",
            lines[1]
        );
        assert!(
            lines[1].contains(",\"ops/s\",,\"a,b\",\"\"\"q\"\"\",\"1 MiB\",3.5,"),
            "{}",
            lines[1]
        );
        // Big numbers without an exponent, as Java's %f prints them.
        assert!(
            lines[2].starts_with("\"bb.y\",\"thrpt\",1,3,20000000000.000000,"),
            "{}",
            lines[2]
        );
        assert!(lines[2].contains(",\"ops/s\",[1],,,,3.5,"), "{}", lines[2]);
        assert_eq!(lines[3], "", "the last line ends in CRLF too");
        assert_eq!(jmh_number(f64::NAN), "NaN");
        assert_eq!(jmh_number(0.000_000_4), "0.000000");
    }

    #[test]
    fn sample_mode_counts_samples_and_adds_percentile_rows() {
        let r = crate::model::result::tests::sample_mode_result();
        let text = render(&[r]);
        let rows: Vec<Vec<&str>> = text
            .split("\r\n")
            .skip(1)
            .filter(|l| !l.is_empty())
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(
            rows[0][..4],
            ["\"bb.ipc.remote\"", "\"sample\"", "1", "110"]
        );
        assert_eq!(
            rows[1][..7],
            [
                "\"bb.ipc.remote:p0.00\"",
                "\"sample\"",
                "1",
                "1",
                "1.001500",
                "NaN",
                "\"us/op\""
            ]
        );
        assert_eq!(rows[8][0], "\"bb.ipc.remote:p1.00\"");
        assert_eq!(rows[8][4], "1000.000000");
        assert_eq!(rows.len(), 9);
    }

    #[test]
    fn health_columns_hold_what_is_known() {
        let mut r = sample_result("bb.zstd.compress", "2", vec![1.0, 2.0]);
        r.throttle.health.clock_mhz = Some(1275.0);
        r.throttle.health.clock_max_mhz = Some(1500.0);
        r.throttle.health.temp_after_c = Some(55.25);
        let text = render(&[r]);
        let row = text.lines().nth(1).unwrap();
        assert!(row.ends_with(",false,1275,1500,,,55.25"), "{row}");
    }
}
