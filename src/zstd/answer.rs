//! bb-zstd's answer: how fast streaming compression and decompression run on one thread
//! here, and what more threads bring (speedup, efficiency, the cpu% the original
//! reported), with and without a global lock held around the streaming calls where both
//! were measured.

use super::{Config, Lock, Op};
use crate::model::answer::{amount, differ, noise_mark, times};
use crate::model::result::BenchResult;

/// The most thread counts an operation's answer lists beyond its first.
const THREAD_LINES: usize = 2;

/// A result with the row it was measured for.
type Row<'a> = (&'a Config, &'a BenchResult);

pub(crate) fn answer(results: &[Row]) -> Vec<String> {
    let mut lines = Vec::new();
    for op in [Op::Compress, Op::Decompress] {
        let rows: Vec<Row> = results
            .iter()
            .copied()
            .filter(|(c, _)| c.op == op)
            .collect();
        lines.extend(op_answer(op, &rows));
    }
    lines
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

fn op_answer(op: Op, rows: &[Row]) -> Vec<String> {
    let with = |lock| -> Vec<Row> {
        rows.iter()
            .copied()
            .filter(|(c, _)| c.lock == lock)
            .collect()
    };
    let (unlocked, locked) = (with(Lock::None), with(Lock::Global));
    let main = if unlocked.is_empty() {
        &locked
    } else {
        &unlocked
    };
    let Some(&(config, base)) = main.iter().min_by_key(|(c, _)| c.threads) else {
        return Vec::new();
    };
    let t0 = config.threads;
    let mut what = vec![
        format!("level {}", config.level),
        config.input_name.chars().take(24).collect(),
    ];
    if unlocked.is_empty() {
        what.push("a global lock".into());
    }
    let mut lines = vec![format!(
        "{}: {} MB/s {} on {t0} thread{} ({})",
        op.name(),
        amount(mb_per_s(base)),
        mb_per_s_error(base),
        if t0 == 1 { "" } else { "s" },
        what.join(", ")
    )];
    let mut more: Vec<Row> = main
        .iter()
        .copied()
        .filter(|(c, _)| c.threads > t0)
        .collect();
    more.sort_by_key(|(c, _)| c.threads);
    let skip = more.len().saturating_sub(THREAD_LINES);
    for &(c, r) in &more[skip..] {
        let speedup = mb_per_s(r) / mb_per_s(base);
        lines.push(format!(
            "  {} threads: {} (efficiency {:.2}, cpu {:.0}%){}",
            c.threads,
            times(speedup),
            speedup * t0 as f64 / c.threads as f64,
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
fn lock_line(base: &BenchResult, unlocked: &[Row], locked: &[Row]) -> Option<String> {
    let &(lc, l) = locked
        .iter()
        .filter(|(l, _)| unlocked.iter().any(|(u, _)| u.threads == l.threads))
        .max_by_key(|(c, _)| c.threads)?;
    let &(_, u) = unlocked.iter().find(|(u, _)| u.threads == lc.threads)?;
    Some(format!(
        "  a global lock at {} threads: {} (cpu {:.0}%); releasing it gains {}{}",
        lc.threads,
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
    use std::sync::Arc;

    /// A bb-zstd row and its result: its op, threads, lock, MB/s per iteration and cpu%.
    fn row(
        op: Op,
        threads: usize,
        lock: Lock,
        mbs: &[f64],
        cpu_percent: f64,
    ) -> (Config, BenchResult) {
        let config = Config {
            op,
            threads,
            level: 3,
            reuse_context: false,
            input: Arc::new(vec![]),
            input_name: "city.json".into(),
            lock,
            keep_busy: true,
        };
        let name = format!("bb.zstd.{}", op.name());
        let mut r = sample_result(&name, &threads.to_string(), mbs.to_vec());
        r.secondary = vec![Secondary::new("MB/s", "MB/s", vec![mbs.to_vec()])];
        // cpu% = (user + sys) / wall.
        r.cpu.wall = 1.0;
        r.cpu.process.user = cpu_percent / 100.0;
        r.cpu.process.sys = 0.0;
        r.cpu.children = Default::default();
        (config, r)
    }

    fn answer_of(rows: &[(Config, BenchResult)]) -> Vec<String> {
        answer(&rows.iter().map(|(c, r)| (c, r)).collect::<Vec<_>>())
    }

    #[test]
    fn one_thread_then_the_speedup_of_more_and_what_the_lock_costs() {
        let results = [
            row(Op::Compress, 1, Lock::None, &[340.0, 344.0, 348.0], 99.0),
            row(
                Op::Compress,
                4,
                Lock::None,
                &[1220.0, 1240.0, 1230.0],
                360.0,
            ),
            row(Op::Compress, 4, Lock::Global, &[338.0, 345.0, 342.0], 99.0),
            row(Op::Decompress, 1, Lock::None, &[900.0, 905.0, 910.0], 99.0),
            row(Op::Decompress, 4, Lock::None, &[901.0, 906.0, 903.0], 120.0),
        ];
        let lines = answer_of(&results);
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
        assert!(answer_of(&[]).is_empty());
        let only = [row(Op::Compress, 2, Lock::None, &[10.0, 11.0], 150.0)];
        assert_eq!(
            answer_of(&only),
            ["compress: 10.5 MB/s ±25% on 2 threads (level 3, city.json)"]
        );
    }
}
