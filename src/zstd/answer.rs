//! bb-zstd's answer: how fast streaming compression and decompression run on one thread
//! here, and what more threads bring (speedup, efficiency, the cpu% the original
//! reported), with and without a global lock held around the streaming calls where both
//! were measured.

use crate::model::answer::{amount, differ, noise_mark, times};
use crate::model::result::BenchResult;

/// The most thread counts an operation's answer lists beyond its first.
const THREAD_LINES: usize = 2;

pub(crate) fn answer(results: &[BenchResult]) -> Vec<String> {
    let mut lines = Vec::new();
    for op in ["compress", "decompress"] {
        let rows: Vec<&BenchResult> = results
            .iter()
            .filter(|r| r.name == format!("bb.zstd.{op}"))
            .collect();
        lines.extend(op_answer(op, &rows));
    }
    lines
}

fn threads(r: &BenchResult) -> usize {
    r.param("threads")
        .and_then(|t| t.parse().ok())
        .unwrap_or(r.threads)
}

fn lock(r: &BenchResult) -> &str {
    r.param("lock").unwrap_or("none")
}

/// Bytes through zstd per second: the MB/s metric where the run has it, else the score's.
fn mb_per_s(r: &BenchResult) -> f64 {
    r.secondary("MB/s")
        .map(|s| s.summary.mean)
        .unwrap_or_else(|| 1.0 / r.seconds_per_op())
}

/// The honest uncertainty of [`mb_per_s`], as `±2.1%`.
fn mb_per_s_error(r: &BenchResult) -> String {
    r.secondary("MB/s")
        .map_or_else(
            || r.uncertainty(),
            |s| {
                s.uncertainty(r.settings.noise_band)
                    .with_floor(r.settings.run_floor)
            },
        )
        .percent()
}

fn op_answer(op: &str, rows: &[&BenchResult]) -> Vec<String> {
    let unlocked: Vec<&BenchResult> = rows.iter().copied().filter(|r| lock(r) == "none").collect();
    let locked: Vec<&BenchResult> = rows
        .iter()
        .copied()
        .filter(|r| lock(r) == "global")
        .collect();
    let main = if unlocked.is_empty() {
        &locked
    } else {
        &unlocked
    };
    let Some(&base) = main.iter().min_by_key(|r| threads(r)) else {
        return Vec::new();
    };
    let t0 = threads(base);
    let mut what: Vec<String> = Vec::new();
    what.extend(base.param("level").map(|l| format!("level {l}")));
    what.extend(base.param("input").map(|i| i.chars().take(24).collect()));
    if unlocked.is_empty() {
        what.push("a global lock".into());
    }
    let mut lines = vec![format!(
        "{op}: {} MB/s {} on {t0} thread{} ({})",
        amount(mb_per_s(base)),
        mb_per_s_error(base),
        if t0 == 1 { "" } else { "s" },
        what.join(", ")
    )];
    let mut more: Vec<&BenchResult> = main.iter().copied().filter(|r| threads(r) > t0).collect();
    more.sort_by_key(|r| threads(r));
    let skip = more.len().saturating_sub(THREAD_LINES);
    for r in &more[skip..] {
        let speedup = mb_per_s(r) / mb_per_s(base);
        lines.push(format!(
            "  {} threads: {} (efficiency {:.2}, cpu {:.0}%){}",
            threads(r),
            times(speedup),
            speedup * t0 as f64 / threads(r) as f64,
            r.cpu.percent(),
            noise_mark(differ(base, r)),
        ));
    }
    if !unlocked.is_empty() {
        lines.extend(lock_line(base, &unlocked, &locked));
    }
    lines
}

/// With a global lock measured too: at the most threads both ran, what the lock leaves of
/// the speedup and what releasing it gains.
fn lock_line(
    base: &BenchResult,
    unlocked: &[&BenchResult],
    locked: &[&BenchResult],
) -> Option<String> {
    let l = locked
        .iter()
        .copied()
        .filter(|l| unlocked.iter().any(|u| threads(u) == threads(l)))
        .max_by_key(|r| threads(r))?;
    let u = unlocked
        .iter()
        .copied()
        .find(|u| threads(u) == threads(l))?;
    Some(format!(
        "  a global lock at {} threads: {} (cpu {:.0}%); releasing it gains {}{}",
        threads(l),
        times(mb_per_s(l) / mb_per_s(base)),
        l.cpu.percent(),
        times(mb_per_s(u) / mb_per_s(l)),
        noise_mark(differ(l, u)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::tests::sample_result;
    use crate::model::result::Secondary;

    /// A bb-zstd row: its op, threads, lock, MB/s per iteration and cpu%.
    fn row(op: &str, threads: &str, lock: &str, mbs: &[f64], cpu_percent: f64) -> BenchResult {
        let mut r = sample_result(&format!("bb.zstd.{op}"), threads, mbs.to_vec());
        r.params = vec![
            ("input".into(), "city.json".into()),
            ("level".into(), "3".into()),
            ("context".into(), "job".into()),
            ("threads".into(), threads.into()),
            ("lock".into(), lock.into()),
        ];
        r.secondary = vec![Secondary::new("MB/s", "MB/s", vec![mbs.to_vec()])];
        // cpu% = (user + sys) / wall.
        r.cpu.wall = 1.0;
        r.cpu.process.user = cpu_percent / 100.0;
        r.cpu.process.sys = 0.0;
        r.cpu.children = Default::default();
        r
    }

    #[test]
    fn one_thread_then_the_speedup_of_more_and_what_the_lock_costs() {
        let results = [
            row("compress", "1", "none", &[340.0, 344.0, 348.0], 99.0),
            row("compress", "4", "none", &[1220.0, 1240.0, 1230.0], 360.0),
            row("compress", "4", "global", &[338.0, 345.0, 342.0], 99.0),
            row("decompress", "1", "none", &[900.0, 905.0, 910.0], 99.0),
            row("decompress", "4", "none", &[901.0, 906.0, 903.0], 120.0),
        ];
        let lines = answer(&results);
        assert_eq!(
            lines,
            [
                "compress: 344 MB/s ±25% on 1 thread (level 3, city.json)",
                "  4 threads: 3.58x (efficiency 0.89, cpu 360%)",
                "  a global lock at 4 threads: 0.993x (cpu 99%); releasing it gains 3.60x",
                "decompress: 905 MB/s ±25% on 1 thread (level 3, city.json)",
                "  4 threads: 0.998x (efficiency 0.25, cpu 120%) (noise)",
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 80));
    }

    #[test]
    fn nothing_measured_nothing_said() {
        assert!(answer(&[]).is_empty());
        let only = [row("compress", "2", "none", &[10.0, 11.0], 150.0)];
        assert_eq!(
            answer(&only),
            ["compress: 10.5 MB/s ±25% on 2 threads (level 3, city.json)"]
        );
    }
}
