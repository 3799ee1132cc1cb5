//! bb-ipc's answer: what a method call into another process costs in each placement
//! (across two cores, on one core), with its honest uncertainty, against the transport's
//! bare round trip (its floor) and a local call; which argument shape costs most and
//! what a block (the server calling back) adds, where beyond noise. The first transport
//! in full, the others two lines each.

use super::calls::Call;
use super::transport::Transport;
use super::Row;
use crate::model::answer::{
    differ, distinct, duration_ns, joined, most_common, noise_mark, ns_per_op, ratio_is_one,
    rows_in, times, MAX_LINES,
};
use crate::model::modes::Mode;
use crate::model::result::BenchResult;
use crate::system::pinning::Pinning;

/// The call every transport's line is about, where it ran.
const PLAIN_CALL: Call = Call::NoArgs;
const BLOCK_CALL: Call = Call::Block;

/// A result with the row it was measured for.
type Pair<'a> = (&'a Row, &'a BenchResult);

/// A remote call's row: its call and transport.
fn remote(row: &Row) -> Option<(Call, Transport)> {
    match *row {
        Row::Remote {
            call, transport, ..
        } => Some((call, transport)),
        _ => None,
    }
}

pub(crate) fn answer(results: &[Pair]) -> Vec<String> {
    // The time-per-call rows where both modes ran: sample mode's means carry its tail.
    let timed: Vec<Pair> = results
        .iter()
        .copied()
        .filter(|(_, r)| r.mode() != Mode::Sample)
        .collect();
    let all = if timed.iter().any(|(row, _)| remote(row).is_some()) {
        timed
    } else {
        results.to_vec()
    };
    let remote_everywhere: Vec<Pair> = all
        .iter()
        .copied()
        .filter(|(row, _)| remote(row).is_some())
        .collect();
    // The main placement has every call; the others the plain call and the floor.
    let main = most_common(
        remote_everywhere
            .iter()
            .filter_map(|(row, _)| row.placement()),
    );
    let rows = rows_in(&all, main, Row::placement);
    let remote_rows = rows_in(&remote_everywhere, main, Row::placement);
    let mut lines = Vec::new();
    let mut floors = Vec::new();
    let transports = distinct(
        remote_rows
            .iter()
            .filter_map(|(row, _)| remote(row))
            .map(|(_, t)| t),
    );
    for (i, transport) in transports.into_iter().enumerate() {
        let calls: Vec<(Call, &BenchResult)> = remote_rows
            .iter()
            .filter_map(|&(row, r)| match remote(row)? {
                (call, t) if t == transport => Some((call, r)),
                _ => None,
            })
            .collect();
        let Some(&(call, plain)) = calls
            .iter()
            .find(|(call, _)| *call == PLAIN_CALL)
            .or(calls.first())
        else {
            continue;
        };
        let costs = costs_line(transport, call, main, &remote_everywhere);
        let mut second = vec![match plain.secondary("vs floor") {
            Some(_) if ratio_is_one(plain, "vs floor") == Some(true) => {
                "the bare round trip within noise".to_string()
            }
            Some(v) => format!("{} the bare round trip", times(v.summary.mean)),
            None => String::new(),
        }];
        floors.extend(floor_beside(plain, transport, &rows).map(|f| (transport, f)));
        if i == 0 {
            let local = rows
                .iter()
                .find(|(row, _)| **row == Row::Local { call })
                .map(|&(_, r)| r);
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
        if let Some(&(worst_call, worst)) = calls
            .iter()
            .filter(|(c, _)| *c != BLOCK_CALL)
            .max_by(|(_, a), (_, b)| ns_per_op(a).total_cmp(&ns_per_op(b)))
            .filter(|(w, _)| *w != call)
        {
            lines.push(match differ(plain, worst) {
                Some(false) => {
                    "  no argument shape costs more than the plain call beyond noise".to_string()
                }
                _ => format!(
                    "  costliest shape: {} at {}, {} the plain call",
                    worst_call.name(),
                    duration_ns(ns_per_op(worst)),
                    times(ns_per_op(worst) / ns_per_op(plain))
                ),
            });
        }
        if let Some(&(_, block)) = calls.iter().find(|(c, _)| *c == BLOCK_CALL) {
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
fn costs_line(
    transport: Transport,
    call: Call,
    main: Option<&Pinning>,
    remote_rows: &[Pair],
) -> String {
    let mut rows: Vec<Pair> = remote_rows
        .iter()
        .copied()
        .filter(|(row, _)| remote(row) == Some((call, transport)))
        .collect();
    rows.sort_by_key(|(row, _)| row.placement() != main);
    let costs: Vec<String> = rows
        .iter()
        .map(|(row, r)| {
            let cost = format!(
                "{} {}",
                duration_ns(ns_per_op(r)),
                r.uncertainty().percent()
            );
            match row.placement() {
                Some(p) => format!("{cost} {}", Pinning::phrase(&p.name())),
                None => cost,
            }
        })
        .collect();
    format!(
        "{}: {} costs {}",
        transport.name(),
        call.name(),
        costs.join(", ")
    )
}

/// A transport's bare round trip in ns, as measured beside its call `plain`: the
/// call's time over its paired ratio. The floor's own row ran apart, in processes the
/// kernel may have placed otherwise (unpinned, a round trip within one core and one
/// across two differ tenfold), so the answer quotes it only where no pair ran.
fn floor_beside(plain: &BenchResult, transport: Transport, rows: &[Pair]) -> Option<f64> {
    match plain.secondary("vs floor") {
        Some(v) => Some(ns_per_op(plain) / v.summary.mean),
        None => rows.iter().find_map(|(row, r)| match row {
            Row::Floor { transport: t, .. } if *t == transport => Some(ns_per_op(r)),
            _ => None,
        }),
    }
}

/// shm's bare round trip, and each kernel transport's as a multiple of it.
fn floors_against_shm(floors: &[(Transport, f64)]) -> Option<String> {
    let shm = floors.iter().find(|(t, _)| *t == Transport::Shm)?.1;
    let others: Vec<String> = floors
        .iter()
        .filter(|(t, _)| !matches!(t, Transport::Shm | Transport::ShmSpin))
        .map(|(t, ns)| format!("{}'s {}", t.name(), times(ns / shm)))
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

    /// Where the rows of these tests ran, as the suite's main placement on two CPUs.
    const TWO_CORES: Pinning = Pinning::TwoCores(0, 1);

    fn local(call: Call) -> Row {
        Row::Local { call }
    }

    fn floor(transport: Transport) -> Row {
        Row::Floor {
            transport,
            placement: TWO_CORES,
        }
    }

    fn remote(call: Call, transport: Transport) -> Row {
        Row::Remote {
            call,
            transport,
            placement: TWO_CORES,
        }
    }

    /// `row` and its avgt result in microseconds per call, with its ratios where given.
    fn row(row: Row, us: &[f64], ratios: &[(&str, &[f64])]) -> (Row, BenchResult) {
        let name = match row {
            Row::Local { .. } => "bb.ipc.local",
            Row::Floor { .. } => "bb.ipc.floor",
            Row::Remote { .. } => "bb.ipc.remote",
        };
        let mut r = sample_result(name, "1", us.to_vec());
        r.settings.mode = Mode::AverageTime;
        r.time_unit = TimeUnit::Micros;
        r.secondary = ratios
            .iter()
            // A fork per value: the forks are what tells noise from a difference.
            .map(|(n, v)| Secondary::new(n, "x", v.iter().map(|&x| vec![x]).collect()))
            .collect();
        (row, r)
    }

    fn answer_of(rows: &[(Row, BenchResult)]) -> Vec<String> {
        answer(&rows.iter().map(|(row, r)| (row, r)).collect::<Vec<_>>())
    }

    #[test]
    fn a_call_against_its_floor_and_a_local_call_then_the_shapes() {
        use Call::{Block, Keywords, NoArgs};
        use Transport::{Shm, ShmSpin, Tcp, Unix};
        let results = [
            row(local(NoArgs), &[0.055, 0.055], &[]),
            row(floor(Unix), &[18.0, 18.2], &[]),
            row(
                remote(NoArgs, Unix),
                &[19.1, 19.3],
                &[
                    ("vs floor", &[1.07, 1.09, 1.08, 1.08]),
                    ("vs local", &[348.0]),
                ],
            ),
            row(remote(Keywords, Unix), &[51.0, 52.0], &[]),
            row(remote(Block, Unix), &[134.0, 134.5], &[]),
            row(
                remote(NoArgs, Tcp),
                &[25.0, 25.2],
                &[("vs floor", &[0.9, 1.2, 1.0, 1.1])],
            ),
            row(floor(Shm), &[2.0, 2.0], &[]),
            row(floor(ShmSpin), &[0.5, 0.5], &[]),
            row(
                remote(NoArgs, Shm),
                &[2.9, 2.9],
                &[("vs floor", &[1.45, 1.45])],
            ),
        ];
        let lines = answer_of(&results);
        assert_eq!(
            lines,
            [
                "unix: method_no_args costs 19.2 us ±25% on 2 cores",
                "  1.08x the bare round trip, 348x a local call (55 ns)",
                "  costliest shape: method_keywords at 51.5 us, 2.68x the plain call",
                "  a block (the server calls back) costs 6.99x a call without",
                "tcp: method_no_args costs 25.1 us ±25% on 2 cores",
                "  the bare round trip within noise",
                "shm: method_no_args costs 2.90 us ±25% on 2 cores, 1.45x the bare round trip",
                "shm's bare round trip 2.00 us: unix's 8.89x, tcp's 12.0x",
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 80));
        assert!(
            answer_of(&results[..2]).is_empty(),
            "no remote call, nothing to answer"
        );
    }

    #[test]
    fn the_plain_call_is_given_in_every_placement_the_main_one_first() {
        let placed = |us: f64, placement: Pinning, call: Call| {
            let placed = Row::Remote {
                call,
                transport: Transport::Unix,
                placement,
            };
            let (placed, mut r) = row(placed, &[us], &[]);
            r.raw = vec![vec![us], vec![us * 1.01], vec![us * 0.99]];
            (placed, r)
        };
        let results = [
            placed(62.1, TWO_CORES, Call::NoArgs),
            placed(70.0, TWO_CORES, Call::A1),
            placed(5.10, Pinning::OneCore(0), Call::NoArgs),
        ];
        let lines = answer_of(&results);
        // Three forks 1% apart: t(0.9995, 2) = 31.6 times the mean's 0.58%.
        assert_eq!(
            lines[..2],
            [
                "unix: method_no_args costs 62.1 us ±3.5% on 2 cores, 5.10 us ±3.5% on 1 core",
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
        let r = crate::model::result::tests::sample_mode_result();
        let score = r.score().mean;
        assert!((score - 136.8).abs() < 0.2, "{score}");
        assert!((r.summary.mean - 367.0).abs() < 0.1);
        assert_eq!(
            answer_of(&[(remote(Call::NoArgs, Transport::Unix), r.clone())]),
            [format!(
                "unix: method_no_args costs {} {} on 2 cores",
                duration_ns(score * 1e3),
                r.uncertainty().percent()
            )]
        );
    }
}
