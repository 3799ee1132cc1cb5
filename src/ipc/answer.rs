//! bb-ipc's answer: what a method call into another process costs in each placement
//! (across two cores, on one core), with its honest uncertainty, against the transport's
//! bare round trip (its floor) and a local call; which argument shape costs most and
//! what a block (the server calling back) adds, where beyond noise. The first transport
//! in full, the others two lines each.

use crate::model::answer::{
    differ, duration_ns, find, in_placement, joined, main_placement, noise_mark, ns_per_op,
    ratio_is_one, times, values_of, MAX_LINES, PLACEMENT,
};
use crate::model::modes::Mode;
use crate::model::result::BenchResult;
use crate::system::pinning::Pinning;

/// The call every transport's line is about, where it ran.
const PLAIN_CALL: &str = "method_no_args";
const BLOCK_CALL: &str = "method_block";
/// The transport whose floor is the floor under every other's.
const SHM: &str = "shm";

pub(crate) fn answer(results: &[BenchResult]) -> Vec<String> {
    // The time-per-call rows where both modes ran: sample mode's means carry its tail.
    let timed: Vec<BenchResult> = results
        .iter()
        .filter(|r| r.mode() != Mode::Sample)
        .cloned()
        .collect();
    let all = if timed.iter().any(|r| r.name == "bb.ipc.remote") {
        timed
    } else {
        results.to_vec()
    };
    let remote_everywhere: Vec<BenchResult> = all
        .iter()
        .filter(|r| r.name == "bb.ipc.remote")
        .cloned()
        .collect();
    // The main placement has every call; the others the plain call and the floor.
    let main = main_placement(&remote_everywhere);
    let rows = in_placement(&all, main.as_deref());
    let remote = in_placement(&remote_everywhere, main.as_deref());
    let mut lines = Vec::new();
    let mut floors = Vec::new();
    for (i, transport) in values_of(&remote, "transport").iter().enumerate() {
        let calls: Vec<&BenchResult> = remote
            .iter()
            .filter(|r| r.param("transport") == Some(transport))
            .collect();
        let Some(plain) = calls
            .iter()
            .find(|r| r.param("call") == Some(PLAIN_CALL))
            .or(calls.first())
        else {
            continue;
        };
        let call = plain.param("call").unwrap_or("?");
        let costs = costs_line(transport, call, main.as_deref(), &remote_everywhere);
        let mut second = vec![match plain.secondary("vs floor") {
            Some(_) if ratio_is_one(plain, "vs floor") == Some(true) => {
                "the bare round trip within noise".to_string()
            }
            Some(v) => format!("{} the bare round trip", times(v.summary.mean)),
            None => String::new(),
        }];
        floors.extend(floor_beside(plain, &rows).map(|f| (transport.clone(), f)));
        if i == 0 {
            let local = find(&rows, "bb.ipc.local", &[("call", call)]);
            if let (Some(local), Some(v)) = (local, plain.secondary("vs local")) {
                second.push(format!(
                    "{} a local call ({})",
                    times(v.summary.mean),
                    duration_ns(ns_per_op(local))
                ));
            }
        }
        second.retain(|s| !s.is_empty());
        // Its comparisons after the costs, on their line where they fit.
        lines.extend(joined(costs, &second.join(", ")));
        if i > 0 {
            continue;
        }
        // The costliest argument shape; the block, a call and a call back, has its own line.
        if let Some(worst) = calls
            .iter()
            .filter(|r| r.param("call") != Some(BLOCK_CALL))
            .max_by(|a, b| ns_per_op(a).total_cmp(&ns_per_op(b)))
            .filter(|w| w.param("call") != Some(call))
        {
            lines.push(match differ(plain, worst) {
                Some(false) => {
                    "  no argument shape costs more than the plain call beyond noise".to_string()
                }
                _ => format!(
                    "  costliest shape: {} at {}, {} the plain call",
                    worst.param("call").unwrap_or("?"),
                    duration_ns(ns_per_op(worst)),
                    times(ns_per_op(worst) / ns_per_op(plain))
                ),
            });
        }
        if let Some(block) = calls.iter().find(|r| r.param("call") == Some(BLOCK_CALL)) {
            lines.push(format!(
                "  a block (the server calls back) costs {} a call without{}",
                times(ns_per_op(block) / ns_per_op(plain)),
                noise_mark(differ(plain, block))
            ));
        }
    }
    lines.extend(floors_against_shm(&floors));
    lines.truncate(MAX_LINES);
    lines
}

/// `unix: method_no_args costs 62.1 us ±2.0% on 2 cores, 5.10 us ±1.5% on 1 core`: the
/// plain call in each placement it ran in, the main one first.
fn costs_line(transport: &str, call: &str, main: Option<&str>, remote: &[BenchResult]) -> String {
    let mut rows: Vec<&BenchResult> = remote
        .iter()
        .filter(|r| r.param("transport") == Some(transport) && r.param("call") == Some(call))
        .collect();
    rows.sort_by_key(|r| r.param(PLACEMENT) != main);
    let costs: Vec<String> = rows
        .iter()
        .map(|r| {
            let cost = format!(
                "{} {}",
                duration_ns(ns_per_op(r)),
                r.uncertainty().percent()
            );
            match r.param(PLACEMENT) {
                Some(p) => format!("{cost} {}", Pinning::phrase(p)),
                None => cost,
            }
        })
        .collect();
    format!("{transport}: {call} costs {}", costs.join(", "))
}

/// A transport's bare round trip in ns, as measured beside its call `plain`: the
/// call's time over its paired ratio. The floor's own row ran apart, in processes the
/// kernel may have placed otherwise (unpinned, a round trip within one core and one
/// across two differ tenfold), so the answer quotes it only where no pair ran.
fn floor_beside(plain: &BenchResult, rows: &[BenchResult]) -> Option<f64> {
    match plain.secondary("vs floor") {
        Some(v) => Some(ns_per_op(plain) / v.summary.mean),
        None => {
            let transport = plain.param("transport")?;
            Some(ns_per_op(find(
                rows,
                "bb.ipc.floor",
                &[("transport", transport)],
            )?))
        }
    }
}

/// shm's bare round trip, and each kernel transport's as a multiple of it.
fn floors_against_shm(floors: &[(String, f64)]) -> Option<String> {
    let shm = floors.iter().find(|(t, _)| t == SHM)?.1;
    let others: Vec<String> = floors
        .iter()
        .filter(|(t, _)| !t.starts_with(SHM))
        .map(|(t, ns)| format!("{t}'s {}", times(ns / shm)))
        .collect();
    (!others.is_empty()).then(|| {
        format!(
            "shm's bare round trip {}: {}",
            duration_ns(shm),
            others.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::tests::sample_result;
    use crate::model::result::Secondary;
    use crate::model::settings::TimeUnit;

    /// An avgt row in microseconds per call, with its ratios where given.
    fn row(
        name: &str,
        call: Option<&str>,
        transport: Option<&str>,
        us: &[f64],
        ratios: &[(&str, &[f64])],
    ) -> BenchResult {
        let mut r = sample_result(name, "1", us.to_vec());
        r.settings.mode = Mode::AverageTime;
        r.time_unit = TimeUnit::Micros;
        r.params = call
            .map(|c| ("call".to_string(), c.to_string()))
            .into_iter()
            .chain(transport.map(|t| ("transport".to_string(), t.to_string())))
            .collect();
        r.secondary = ratios
            .iter()
            // A fork per value: the forks are what tells noise from a difference.
            .map(|(n, v)| Secondary::new(n, "x", v.iter().map(|&x| vec![x]).collect()))
            .collect();
        r
    }

    #[test]
    fn a_call_against_its_floor_and_a_local_call_then_the_shapes() {
        let results = [
            row(
                "bb.ipc.local",
                Some("method_no_args"),
                None,
                &[0.055, 0.055],
                &[],
            ),
            row("bb.ipc.floor", None, Some("unix"), &[18.0, 18.2], &[]),
            row(
                "bb.ipc.remote",
                Some("method_no_args"),
                Some("unix"),
                &[19.1, 19.3],
                &[
                    ("vs floor", &[1.07, 1.09, 1.08, 1.08]),
                    ("vs local", &[348.0]),
                ],
            ),
            row(
                "bb.ipc.remote",
                Some("method_keywords"),
                Some("unix"),
                &[51.0, 52.0],
                &[],
            ),
            row(
                "bb.ipc.remote",
                Some("method_block"),
                Some("unix"),
                &[134.0, 134.5],
                &[],
            ),
            row(
                "bb.ipc.remote",
                Some("method_no_args"),
                Some("tcp"),
                &[25.0, 25.2],
                &[("vs floor", &[0.9, 1.2, 1.0, 1.1])],
            ),
            row("bb.ipc.floor", None, Some("shm"), &[2.0, 2.0], &[]),
            row("bb.ipc.floor", None, Some("shm-spin"), &[0.5, 0.5], &[]),
            row(
                "bb.ipc.remote",
                Some("method_no_args"),
                Some("shm"),
                &[2.9, 2.9],
                &[("vs floor", &[1.45, 1.45])],
            ),
        ];
        let lines = answer(&results);
        assert_eq!(
            lines,
            [
                "unix: method_no_args costs 19.2 us ±25%",
                "  1.08x the bare round trip, 348x a local call (55 ns)",
                "  costliest shape: method_keywords at 51.5 us, 2.68x the plain call",
                "  a block (the server calls back) costs 6.99x a call without",
                "tcp: method_no_args costs 25.1 us ±25%, the bare round trip within noise",
                "shm: method_no_args costs 2.90 us ±25%, 1.45x the bare round trip",
                "shm's bare round trip 2.00 us: unix's 8.89x, tcp's 12.0x",
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 80));
        assert!(
            answer(&results[..2]).is_empty(),
            "no remote call, nothing to answer"
        );
    }

    #[test]
    fn the_plain_call_is_given_in_every_placement_the_main_one_first() {
        let placed = |us: f64, placement: &str, call: &str| {
            let mut r = row("bb.ipc.remote", Some(call), Some("unix"), &[us], &[]);
            r.raw = vec![vec![us], vec![us * 1.01], vec![us * 0.99]];
            r.params.push((PLACEMENT.into(), placement.into()));
            r
        };
        let results = [
            placed(62.1, "two-cores", "method_no_args"),
            placed(70.0, "two-cores", "method_a1"),
            placed(5.10, "one-core", "method_no_args"),
        ];
        let lines = answer(&results);
        // Three forks 1% apart: t(0.9995, 2) = 31.6 times the mean's 0.58%.
        assert_eq!(
            lines[..2],
            [
                "unix: method_no_args costs 62.1 us ±18% on 2 cores, 5.10 us ±18% on 1 core",
                "  costliest shape: method_a1 at 70.0 us, 1.13x the plain call"
            ],
            "{lines:?}"
        );
        assert!(lines
            .iter()
            .all(|l| l.chars().count() <= crate::model::answer::WIDTH));
        // The shapes are the main placement's: a1 against two cores' plain call.
    }

    #[test]
    fn in_sample_mode_a_call_costs_the_score_the_json_reports() {
        // Samples of 1 to 100 us and ten of 1 ms (136.8 us over every sample), in
        // iterations whose means are 25.5, 75.5 and 1000 us (367 us).
        let mut r = crate::model::result::tests::sample_mode_result();
        r.params = vec![
            ("call".into(), "method_no_args".into()),
            ("transport".into(), "unix".into()),
        ];
        let score = r.score().mean;
        assert!((score - 136.8).abs() < 0.2, "{score}");
        assert!((r.summary.mean - 367.0).abs() < 0.1);
        assert_eq!(
            answer(&[r.clone()]),
            [format!(
                "unix: method_no_args costs {} {}",
                duration_ns(score * 1e3),
                r.uncertainty().percent()
            )]
        );
    }
}
