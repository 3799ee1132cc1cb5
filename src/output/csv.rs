//! The CSV report: JMH's columns (`Benchmark, Mode, Threads, Samples, Score,
//! Score Error (99.9%), Unit, Param: ...`), secondary metrics as `name:metric` rows, and
//! boardbench's own columns after them (CPU, memory, throttling, clock and temperature).

use crate::harness::benchmark::param_keys;
use crate::harness::result::BenchResult;

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
    let keys = param_keys(results.iter().map(|r| r.params.as_slice()));
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
    let mut out = header.join(",") + "\n";
    for r in results {
        let params: Vec<String> = keys
            .iter()
            .map(|k| r.param(k).map(quote).unwrap_or_default())
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
        let mut row = |name: &str, n: usize, score: f64, error: f64, unit: &str| {
            let mut cells = vec![
                quote(name),
                quote(r.mode().short()),
                r.threads.to_string(),
                n.to_string(),
                num(score),
                num(error),
                quote(unit),
            ];
            cells.extend(params.iter().cloned());
            cells.extend(extras.iter().cloned());
            out.push_str(&cells.join(","));
            out.push('\n');
        };
        row(
            &r.name,
            r.summary.n,
            r.summary.mean,
            r.summary.error,
            &r.unit(),
        );
        for s in &r.secondary {
            row(
                &format!("{}:{}", r.name, s.name),
                s.summary.n,
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
    use crate::harness::result::tests::sample_result;

    #[test]
    fn csv_has_jmh_columns_and_exact_rows() {
        let r = sample_result("bb.zstd.compress", "2", vec![1.0, 2.0]);
        let text = render(&[r]);
        assert_eq!(
            text,
            "\"Benchmark\",\"Mode\",\"Threads\",\"Samples\",\"Score\",\"Score Error (99.9%)\",\"Unit\",\"Param: level\",\"Param: threads\",\"User (s)\",\"Sys (s)\",\"CPU (%)\",\"Wall (s)\",\"Peak RSS (KiB)\",\"Throttled\",\"Clock (MHz)\",\"Clock Max (MHz)\",\"Clock Below Max (%)\",\"Temp Before (°C)\",\"Temp After (°C)\"\n\
             \"bb.zstd.compress\",\"thrpt\",2,2,1.5,NaN,\"ops/s\",\"3\",\"2\",3.5,0.25,187.5,2,10240,false,,,,,\n"
        );
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
