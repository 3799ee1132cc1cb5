//! bb-rpc's answer: calls per second with one call in flight (sync), with its honest
//! uncertainty, in each placement of client and server, against many in flight (async,
//! future), what the codec costs per call, TCP against a Unix socket, and with an open
//! loop the highest load held and its p99 there. About the first transport, the smallest
//! payload and one connection (the rows a person compares first), in the main placement.

use crate::model::answer::{
    amount, differ, duration_ns, in_placement, joined, main_placement, noise_mark, ratio_is_one,
    times, values_of, PLACEMENT,
};
use crate::model::modes::Mode;
use crate::model::result::BenchResult;
use crate::system::pinning::Pinning;

pub(crate) fn answer(results: &[BenchResult]) -> Vec<String> {
    let everywhere: Vec<&BenchResult> = results
        .iter()
        .filter(|r| r.offered_rate.is_none() && r.mode() == Mode::Throughput)
        .collect();
    let main = main_placement(results);
    let in_main = in_placement(results, main.as_deref());
    let closed: Vec<&BenchResult> = in_main
        .iter()
        .filter(|r| r.offered_rate.is_none() && r.mode() == Mode::Throughput)
        .collect();
    let mut lines = Vec::new();
    let transports = values_of(results, "transport");
    if let Some(t) = transports.first() {
        let mut closed_lines = closed_loop(&closed, t);
        // Sync in the other placements, after the main one's line.
        let others = other_placements(&everywhere, &closed, t, main.as_deref());
        let at = closed_lines.len().min(1);
        closed_lines.splice(at..at, others);
        lines.extend(closed_lines);
        if let Some(other) = transports.get(1) {
            lines.extend(transport_line(&closed, t, other));
        }
    }
    lines.extend(open_loop(results));
    lines
}

/// The row of `style` over `transport` at the reference payload, codec and connections,
/// at `depth` (None: the deepest there is).
fn row<'a>(
    rows: &[&'a BenchResult],
    style: &str,
    transport: &str,
    codec: Option<&str>,
    depth: Option<usize>,
) -> Option<&'a BenchResult> {
    let payload = smallest(rows, "payload")?;
    let depth_of = |r: &BenchResult| {
        r.param("depth")
            .and_then(|d| d.parse::<usize>().ok())
            .unwrap_or(1)
    };
    let mut matching: Vec<&BenchResult> = rows
        .iter()
        .copied()
        .filter(|r| r.name == format!("bb.rpc.{style}"))
        .filter(|r| r.param("transport") == Some(transport))
        .filter(|r| r.param("payload") == Some(&payload))
        .filter(|r| r.param("connections").is_none_or(|c| c == "1"))
        .filter(|r| codec.is_none_or(|c| r.param("codec") == Some(c)))
        .collect();
    matching.sort_by_key(|r| depth_of(r));
    match depth {
        Some(d) => matching.into_iter().find(|r| depth_of(r) == d),
        None => matching.pop(),
    }
}

/// The smallest value of a numeric param.
fn smallest(rows: &[&BenchResult], key: &str) -> Option<String> {
    rows.iter()
        .filter_map(|r| r.param(key))
        .min_by_key(|v| v.parse::<u64>().unwrap_or(u64::MAX))
        .map(String::from)
}

/// The codec the comparisons are made in: raw where it ran.
fn reference_codec(rows: &[&BenchResult]) -> Option<String> {
    let codecs: Vec<String> = rows
        .iter()
        .filter_map(|r| r.param("codec"))
        .map(String::from)
        .collect();
    codecs
        .iter()
        .find(|c| *c == "raw")
        .or(codecs.first())
        .cloned()
}

fn closed_loop(rows: &[&BenchResult], transport: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let codec = reference_codec(rows);
    let codec = codec.as_deref();
    let Some(sync) = row(rows, "sync", transport, codec, Some(1)) else {
        return lines;
    };
    let payload = sync.param("payload").unwrap_or("?");
    let placed = sync
        .param(PLACEMENT)
        .map(|p| format!(" {}", Pinning::phrase(p)))
        .unwrap_or_default();
    let first = format!(
        "{transport}, {payload} B, {}{placed}: sync {} calls/s {}",
        codec.unwrap_or("-"),
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
    let deep =
        |style| row(rows, style, transport, codec, None).filter(|r| r.param("depth") != Some("1"));
    if let Some(a) = deep("async") {
        lines.push(format!(
            "  async ({} in flight) {}/s = {} sync{}",
            a.param("depth").unwrap_or("?"),
            amount(a.score().mean),
            times(a.score().mean / sync.score().mean),
            noise_mark(differ(sync, a))
        ));
        if let Some(f) = deep("future").filter(|f| f.param("depth") == a.param("depth")) {
            lines.push(format!(
                "  future at the same depth {}/s = {} async{}",
                amount(f.score().mean),
                times(f.score().mean / a.score().mean),
                noise_mark(differ(a, f))
            ));
        }
    }
    let other_codec = values_of(
        &rows.iter().map(|r| (*r).clone()).collect::<Vec<_>>(),
        "codec",
    )
    .into_iter()
    .find(|c| Some(c.as_str()) != codec);
    if let Some(other) = other_codec {
        if let Some(o) = row(rows, "sync", transport, Some(&other), Some(1)) {
            // Time per call, the codec's against the reference's.
            let cost = sync.score().mean / o.score().mean - 1.0;
            let reference = codec.unwrap_or("-");
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
    everywhere: &[&BenchResult],
    main_rows: &[&BenchResult],
    transport: &str,
    main: Option<&str>,
) -> Vec<String> {
    let codec = reference_codec(main_rows);
    let Some(base) = row(main_rows, "sync", transport, codec.as_deref(), Some(1)) else {
        return Vec::new();
    };
    let here = main.map(Pinning::phrase).unwrap_or_default();
    let placements = values_of(
        &everywhere.iter().map(|r| (*r).clone()).collect::<Vec<_>>(),
        PLACEMENT,
    );
    placements
        .iter()
        .filter(|p| Some(p.as_str()) != main)
        .filter_map(|p| {
            let rows: Vec<&BenchResult> = everywhere
                .iter()
                .copied()
                .filter(|r| r.param(PLACEMENT) == Some(p))
                .collect();
            let r = row(&rows, "sync", transport, codec.as_deref(), Some(1))?;
            Some(format!(
                "  {}: sync {} calls/s {}, {} {here}{}",
                Pinning::phrase(p),
                amount(r.score().mean),
                r.uncertainty().percent(),
                times(r.score().mean / base.score().mean),
                noise_mark(differ(base, r))
            ))
        })
        .collect()
}

/// The second transport against the first, sync and deepest async.
fn transport_line(rows: &[&BenchResult], first: &str, other: &str) -> Option<String> {
    let codec = reference_codec(rows);
    let codec = codec.as_deref();
    let (a, b) = (
        row(rows, "sync", first, codec, Some(1))?,
        row(rows, "sync", other, codec, Some(1))?,
    );
    let mut line = format!(
        "{other}: sync {} calls/s, {} {first}'s{}",
        amount(b.score().mean),
        times(b.score().mean / a.score().mean),
        noise_mark(differ(a, b))
    );
    if let (Some(x), Some(y)) = (
        row(rows, "async", first, codec, None),
        row(rows, "async", other, codec, None),
    ) {
        if x.param("depth") == y.param("depth") && x.param("depth") != Some("1") {
            line.push_str(&format!(
                "; async {}",
                times(y.score().mean / x.score().mean)
            ));
        }
    }
    Some(line)
}

/// The open loop's rows: the highest offered load held, with its p99 there.
fn open_loop(results: &[BenchResult]) -> Option<String> {
    let offered: Vec<&BenchResult> = results
        .iter()
        .filter(|r| r.offered_rate.is_some())
        .collect();
    let lowest = offered
        .iter()
        .map(|r| r.offered_rate.unwrap_or(f64::NAN))
        .reduce(f64::min)?;
    let held = offered.iter().filter(|r| !r.saturated()).max_by(|a, b| {
        a.offered_rate
            .unwrap_or(0.0)
            .total_cmp(&b.offered_rate.unwrap_or(0.0))
    });
    Some(match held {
        Some(r) => {
            let share = r
                .param("load")
                .map(|l| format!(" ({l} of max)"))
                .unwrap_or_default();
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

    fn row(style: &str, transport: &str, codec: &str, depth: &str, calls: &[f64]) -> BenchResult {
        // A fork per value: the forks are what tells noise from a difference.
        let forks = calls.iter().map(|&v| vec![v]).collect();
        let mut r = forked_result(&format!("bb.rpc.{style}"), "1", forks);
        r.settings.mode = Mode::Throughput;
        r.params = [
            ("transport", transport),
            ("codec", codec),
            ("payload", "16"),
            ("depth", depth),
            ("connections", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        r
    }

    #[test]
    fn sync_against_async_and_future_the_codec_and_tcp() {
        let mut sync = row("sync", "unix", "raw", "1", &[100e3, 101e3, 102e3]);
        sync.secondary.push(Secondary::new(
            "vs floor",
            "x",
            vec![vec![0.93], vec![0.94], vec![0.92], vec![0.93]],
        ));
        let results = [
            sync,
            row("sync", "unix", "msgpack", "1", &[92e3, 93e3, 94e3]),
            row("async", "unix", "raw", "1", &[90e3, 91e3, 92e3]),
            row("async", "unix", "raw", "64", &[1.16e6, 1.17e6, 1.18e6]),
            row("future", "unix", "raw", "64", &[0.86e6, 0.87e6, 0.88e6]),
            row("sync", "tcp", "raw", "1", &[87e3, 88e3, 89e3]),
            row("async", "tcp", "raw", "64", &[1.05e6, 1.06e6, 1.04e6]),
        ];
        let lines = answer(&results);
        assert_eq!(
            lines,
            [
                "unix, 16 B, raw: sync 101k calls/s ±18%, 0.930x its floor",
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
        let mut held = row("sync", "unix", "raw", "1", &[10e3]);
        held.settings.mode = Mode::Sample;
        held.offered_rate = Some(10e3);
        held.ops = 10_000;
        held.cpu.wall = 1.0;
        let mut lost = held.clone();
        lost.offered_rate = Some(50e3);
        assert_eq!(
            answer(&[held.clone(), lost.clone()]),
            ["open loop: held 10.0k calls/s"]
        );
        assert_eq!(
            answer(&[lost]),
            ["open loop: no load held, down to 50.0k calls/s offered"]
        );
    }
}
