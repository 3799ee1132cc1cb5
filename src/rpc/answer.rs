//! bb-rpc's answer: calls per second with one call in flight (sync), with its honest
//! uncertainty, in each placement of client and server, against many in flight (async,
//! future), what the codec costs per call, TCP against a Unix socket, and with an open
//! loop the highest load held and its p99 there. About the first transport, the smallest
//! payload and one connection (the rows a person compares first), in the main placement.

use super::options::Offered;
use super::plan::Style;
use super::protocol::Codec;
use super::sweep::load_param;
use super::Row;
use crate::model::answer::{
    amount, differ, distinct, duration_ns, joined, most_common, noise_mark, ratio_is_one, rows_in,
    times,
};
use crate::model::modes::Mode;
use crate::model::result::BenchResult;
use crate::system::pinning::Pinning;

/// A result with the row it was measured for.
type Pair<'a> = (&'a Row, &'a BenchResult);

pub(crate) fn answer(results: &[Pair]) -> Vec<String> {
    let closed = |r: &BenchResult| r.offered_rate.is_none() && r.mode() == Mode::Throughput;
    let everywhere: Vec<Pair> = results.iter().copied().filter(|(_, r)| closed(r)).collect();
    // The main placement, the one most rows ran in: every row runs there, the headline
    // rows in the others too.
    let main = most_common(results.iter().filter_map(|(row, _)| row.placement.as_ref()));
    let in_main: Vec<Pair> = rows_in(results, main, |row| row.placement.as_ref())
        .into_iter()
        .filter(|(_, r)| closed(r))
        .collect();
    let mut lines = Vec::new();
    let transports = distinct(results.iter().map(|(row, _)| row.transport()));
    if let Some(t) = transports.first() {
        let mut closed_lines = closed_loop(&in_main, t);
        // Sync in the other placements, after the main one's line.
        let others = other_placements(&everywhere, &in_main, t, main);
        let at = closed_lines.len().min(1);
        closed_lines.splice(at..at, others);
        lines.extend(closed_lines);
        if let Some(other) = transports.get(1) {
            lines.extend(transport_line(&in_main, t, other));
        }
    }
    lines.extend(open_loop(results));
    lines
}

/// The closed-loop row of `style` over `transport` in `codec` (None: the floor's, which
/// has none) at the smallest payload and one connection, at `depth` (None: the deepest
/// there is).
fn row<'a>(
    rows: &[Pair<'a>],
    style: Style,
    transport: &str,
    codec: Option<Codec>,
    depth: Option<usize>,
) -> Option<Pair<'a>> {
    let payload = rows.iter().map(|(row, _)| row.payload).min()?;
    let mut matching: Vec<Pair> = rows
        .iter()
        .copied()
        .filter(|(row, _)| {
            row.offered == Offered::Closed
                && row.style == style
                && row.transport() == transport
                && row.payload == payload
                && row.connections == 1
                && row.codec == codec
        })
        .collect();
    matching.sort_by_key(|(row, _)| row.depth);
    match depth {
        Some(d) => matching.into_iter().find(|(row, _)| row.depth == d),
        None => matching.pop(),
    }
}

/// The codec the comparisons are made in: raw where it ran, else the first row's (None
/// where that is the floor's); None where there is no row.
fn reference_codec(rows: &[Pair]) -> Option<Option<Codec>> {
    let mut codecs = rows.iter().map(|(row, _)| row.codec);
    let first = codecs.clone().next();
    codecs.find(|c| *c == Some(Codec::Raw)).or(first)
}

/// A codec as its param names it: the floor's is `none`.
fn codec_name(codec: Option<Codec>) -> &'static str {
    codec.map_or("none", Codec::name)
}

/// How the answer says where a row ran: `on 2 cores`.
fn phrase(placement: &Pinning) -> String {
    Pinning::phrase(&placement.name())
}

fn closed_loop(rows: &[Pair], transport: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let Some(codec) = reference_codec(rows) else {
        return lines;
    };
    let Some((at, sync)) = row(rows, Style::Sync, transport, codec, Some(1)) else {
        return lines;
    };
    let placed = at
        .placement
        .as_ref()
        .map(|p| format!(" {}", phrase(p)))
        .unwrap_or_default();
    let first = format!(
        "{transport}, {} B, {}{placed}: sync {} calls/s {}",
        at.payload,
        codec_name(codec),
        amount(sync.score().mean),
        sync.uncertainty().percent()
    );
    let floor = match sync.secondary("vs floor") {
        Some(_) if ratio_is_one(sync, "vs floor") == Some(true) => {
            "its floor within noise".to_string()
        }
        Some(v) => format!("{} its floor", times(v.summary.mean)),
        None => String::new(),
    };
    lines.extend(joined(first, &floor));
    let deep = |style| row(rows, style, transport, codec, None).filter(|(r, _)| r.depth != 1);
    if let Some((deepest, a)) = deep(Style::Async) {
        lines.push(format!(
            "  async ({} in flight) {}/s = {} sync{}",
            deepest.depth,
            amount(a.score().mean),
            times(a.score().mean / sync.score().mean),
            noise_mark(differ(sync, a))
        ));
        if let Some((_, f)) = deep(Style::Future).filter(|(f, _)| f.depth == deepest.depth) {
            lines.push(format!(
                "  future at the same depth {}/s = {} async{}",
                amount(f.score().mean),
                times(f.score().mean / a.score().mean),
                noise_mark(differ(a, f))
            ));
        }
    }
    let other_codec = rows.iter().map(|(row, _)| row.codec).find(|c| *c != codec);
    if let Some(other) = other_codec {
        if let Some((_, o)) = row(rows, Style::Sync, transport, other, Some(1)) {
            // Time per call, the codec's against the reference's.
            let cost = sync.score().mean / o.score().mean - 1.0;
            let (other, reference) = (codec_name(other), codec_name(codec));
            lines.push(match differ(sync, o) {
                Some(false) => {
                    format!("  {other} costs what {reference} does, within noise (sync)")
                }
                _ if cost >= 0.0 => format!(
                    "  {other} costs {:.0}% per call over {reference} (sync)",
                    cost * 100.0
                ),
                _ => format!(
                    "  {other} is {:.0}% cheaper per call than {reference} (sync)",
                    -cost * 100.0
                ),
            });
        }
    }
    lines
}

/// `  on 1 core: sync 51.0k calls/s ±3.1%, 3.07x on 2 cores`: the sync row of `transport`
/// in each placement other than the main one, against the main one's.
fn other_placements(
    everywhere: &[Pair],
    main_rows: &[Pair],
    transport: &str,
    main: Option<&Pinning>,
) -> Vec<String> {
    let Some(codec) = reference_codec(main_rows) else {
        return Vec::new();
    };
    let Some((_, base)) = row(main_rows, Style::Sync, transport, codec, Some(1)) else {
        return Vec::new();
    };
    let here = main.map(phrase).unwrap_or_default();
    let placements = distinct(
        everywhere
            .iter()
            .filter_map(|(row, _)| row.placement.as_ref()),
    );
    placements
        .into_iter()
        .filter(|&p| Some(p) != main)
        .filter_map(|p| {
            let rows: Vec<Pair> = everywhere
                .iter()
                .copied()
                .filter(|(row, _)| row.placement.as_ref() == Some(p))
                .collect();
            let (_, r) = row(&rows, Style::Sync, transport, codec, Some(1))?;
            Some(format!(
                "  {}: sync {} calls/s {}, {} {here}{}",
                phrase(p),
                amount(r.score().mean),
                r.uncertainty().percent(),
                times(r.score().mean / base.score().mean),
                noise_mark(differ(base, r))
            ))
        })
        .collect()
}

/// The second transport against the first, sync and deepest async.
fn transport_line(rows: &[Pair], first: &str, other: &str) -> Option<String> {
    let codec = reference_codec(rows)?;
    let ((_, a), (_, b)) = (
        row(rows, Style::Sync, first, codec, Some(1))?,
        row(rows, Style::Sync, other, codec, Some(1))?,
    );
    let mut line = format!(
        "{other}: sync {} calls/s, {} {first}'s{}",
        amount(b.score().mean),
        times(b.score().mean / a.score().mean),
        noise_mark(differ(a, b))
    );
    if let (Some((xr, x)), Some((yr, y))) = (
        row(rows, Style::Async, first, codec, None),
        row(rows, Style::Async, other, codec, None),
    ) {
        if xr.depth == yr.depth && xr.depth != 1 {
            line.push_str(&format!(
                "; async {}",
                times(y.score().mean / x.score().mean)
            ));
        }
    }
    Some(line)
}

/// The open loop's rows: the highest offered load held, with its p99 there.
fn open_loop(results: &[Pair]) -> Option<String> {
    let offered: Vec<Pair> = results
        .iter()
        .copied()
        .filter(|(_, r)| r.offered_rate.is_some())
        .collect();
    let lowest = offered
        .iter()
        .map(|(_, r)| r.offered_rate.unwrap_or(f64::NAN))
        .reduce(f64::min)?;
    let held = offered
        .iter()
        .filter(|(_, r)| !r.saturated())
        .max_by(|(_, a), (_, b)| {
            a.offered_rate
                .unwrap_or(0.0)
                .total_cmp(&b.offered_rate.unwrap_or(0.0))
        });
    Some(match held {
        Some((row, r)) => {
            let share = match row.offered {
                Offered::Share(load) => format!(" ({} of max)", load_param(load)),
                _ => String::new(),
            };
            let p99 = r
                .histogram
                .as_ref()
                .and_then(|h| h.percentile(99.0))
                .map(|ns| format!(", p99 {} there", duration_ns(ns)))
                .unwrap_or_default();
            format!(
                "open loop: held {} calls/s{share}{p99}",
                amount(r.offered_rate.unwrap_or(f64::NAN))
            )
        }
        None => format!(
            "open loop: no load held, down to {} calls/s offered",
            amount(lowest)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::tests::forked_result;
    use crate::model::result::Secondary;
    use crate::rpc::plan::Target;

    /// A row at 16 B on one connection in a closed loop, and its result: a fork per
    /// value of `calls`, the forks being what tells noise from a difference.
    fn row(
        style: Style,
        transport: &'static str,
        codec: Codec,
        depth: usize,
        calls: &[f64],
    ) -> (Row, BenchResult) {
        let mut row = Row::at(&Target::Local { transport });
        (row.payload, row.style, row.codec, row.depth) = (16, style, Some(codec), depth);
        let forks = calls.iter().map(|&v| vec![v]).collect();
        let mut r = forked_result(&row.name(), "1", forks);
        r.settings.mode = Mode::Throughput;
        r.params = row.params();
        (row, r)
    }

    fn answer_of(rows: &[(Row, BenchResult)]) -> Vec<String> {
        answer(&rows.iter().map(|(row, r)| (row, r)).collect::<Vec<_>>())
    }

    #[test]
    fn sync_against_async_and_future_the_codec_and_tcp() {
        let mut sync = row(Style::Sync, "unix", Codec::Raw, 1, &[100e3, 101e3, 102e3]);
        sync.1.secondary.push(Secondary::new(
            "vs floor",
            "x",
            vec![vec![0.93], vec![0.94], vec![0.92], vec![0.93]],
        ));
        let results = [
            sync,
            row(Style::Sync, "unix", Codec::Msgpack, 1, &[92e3, 93e3, 94e3]),
            row(Style::Async, "unix", Codec::Raw, 1, &[90e3, 91e3, 92e3]),
            row(
                Style::Async,
                "unix",
                Codec::Raw,
                64,
                &[1.16e6, 1.17e6, 1.18e6],
            ),
            row(
                Style::Future,
                "unix",
                Codec::Raw,
                64,
                &[0.86e6, 0.87e6, 0.88e6],
            ),
            row(Style::Sync, "tcp", Codec::Raw, 1, &[87e3, 88e3, 89e3]),
            row(
                Style::Async,
                "tcp",
                Codec::Raw,
                64,
                &[1.05e6, 1.06e6, 1.04e6],
            ),
        ];
        let lines = answer_of(&results);
        assert_eq!(
            lines,
            [
                "unix, 16 B, raw: sync 101k calls/s ±3.5%, 0.930x its floor",
                "  async (64 in flight) 1.17M/s = 11.6x sync",
                "  future at the same depth 870k/s = 0.744x async",
                "  msgpack costs 9% per call over raw (sync)",
                "tcp: sync 88.0k calls/s, 0.871x unix's; async 0.897x",
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 80));
    }

    #[test]
    fn an_open_loop_says_the_highest_load_held() {
        let (mut open, mut held) = row(Style::Sync, "unix", Codec::Raw, 1, &[10e3]);
        open.offered = Offered::Rate(10e3);
        held.settings.mode = Mode::Sample;
        held.offered_rate = Some(10e3);
        held.ops = 10_000;
        held.cpu.wall = 1.0;
        let mut lost = held.clone();
        lost.offered_rate = Some(50e3);
        assert_eq!(
            answer_of(&[(open.clone(), held), (open.clone(), lost.clone())]),
            ["open loop: held 10.0k calls/s"]
        );
        assert_eq!(
            answer_of(&[(open, lost)]),
            ["open loop: no load held, down to 50.0k calls/s offered"]
        );
    }
}
