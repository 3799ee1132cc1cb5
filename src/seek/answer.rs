//! bb-seek's answer: per source and object, whether the seekable stream is faster or
//! slower than the plain client on sequential reads of the smallest read size, with the
//! requests each made, and how it fares on the other patterns, a tie where both made the
//! same requests and the difference is noise.

use crate::model::answer::{differ, times, values_of, wrap, MAX_LINES};
use crate::model::result::BenchResult;

pub(crate) fn answer(results: &[BenchResult]) -> Vec<String> {
    let mut lines = Vec::new();
    let sources = values_of(results, "source");
    for source in &sources {
        let here: Vec<&BenchResult> = results
            .iter()
            .filter(|r| r.param("source") == Some(source))
            .collect();
        if sources.len() > 1 {
            lines.push(format!("{}:", source.chars().take(70).collect::<String>()));
        }
        let owned: Vec<BenchResult> = here.iter().map(|r| (*r).clone()).collect();
        for key in values_of(&owned, "key") {
            let rows: Vec<&BenchResult> = here
                .iter()
                .copied()
                .filter(|r| r.param("key") == Some(&key))
                .collect();
            lines.extend(object_lines(&key, &rows));
        }
    }
    lines.truncate(MAX_LINES);
    lines
}

/// The plain and stream rows of one pattern (and read size), where both ran.
fn pair<'a>(
    rows: &[&'a BenchResult],
    name: &str,
    read_size: Option<&str>,
) -> Option<(&'a BenchResult, &'a BenchResult)> {
    let of = |client: &str| {
        rows.iter().copied().find(|r| {
            r.name == name
                && r.param("client") == Some(client)
                && read_size.is_none_or(|s| r.param("read-size") == Some(s))
        })
    };
    Some((of("plain")?, of("stream")?))
}

fn requests(r: &BenchResult) -> f64 {
    r.secondary("requests").map_or(f64::NAN, |s| s.summary.mean)
}

/// `30.8x faster` or `2.10x slower`, the stream against plain, or `a tie` where both made
/// the same requests and differ by noise.
fn verdict(plain: &BenchResult, stream: &BenchResult) -> String {
    if requests(plain) == requests(stream) && differ(plain, stream) == Some(false) {
        return "a tie".to_string();
    }
    let speedup = plain.seconds_per_op() / stream.seconds_per_op();
    let noise = if differ(plain, stream) == Some(false) {
        " (noise)"
    } else {
        ""
    };
    if speedup >= 1.0 {
        format!("{} faster{noise}", times(speedup))
    } else {
        format!("{} slower{noise}", times(1.0 / speedup))
    }
}

/// Two lines or so: the sequential reads of the smallest size, then the requests they
/// made and the other patterns, wrapped.
fn object_lines(key: &str, rows: &[&BenchResult]) -> Vec<String> {
    let sequential: Vec<BenchResult> = rows
        .iter()
        .filter(|r| r.name == "bb.seek.sequential")
        .map(|r| (*r).clone())
        .collect();
    let smallest = values_of(&sequential, "read-size")
        .into_iter()
        .min_by_key(|s| size_bytes(s));
    let mut head = format!("{key}:");
    let mut items = Vec::new();
    if let Some(size) = &smallest {
        if let Some((plain, stream)) = pair(rows, "bb.seek.sequential", Some(size)) {
            head = format!(
                "{key}, sequential {size}: stream {}",
                verdict(plain, stream)
            );
            let (s, p) = (requests(stream), requests(plain));
            items.push(format!(
                "  {s:.0} request{} against {p:.0}",
                if s == 1.0 { "" } else { "s" }
            ));
        }
    }
    let mut names: Vec<&str> = rows
        .iter()
        .map(|r| r.name.as_str())
        .filter(|n| *n != "bb.seek.sequential")
        .collect();
    names.dedup();
    // Ties are said once, for every pattern that tied.
    let mut ties = Vec::new();
    for name in names {
        if let Some((plain, stream)) = pair(rows, name, None) {
            let pattern = name.trim_start_matches("bb.seek.");
            match verdict(plain, stream) {
                v if v == "a tie" => ties.push(pattern),
                v => items.push(format!("{pattern} {v}")),
            }
        }
    }
    match ties.as_slice() {
        [] => {}
        [one] => items.push(format!("{one} a tie")),
        [first @ .., last] => items.push(format!("{} and {last} a tie", first.join(", "))),
    }
    if items.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![head];
    lines.extend(
        wrap("", &items)
            .into_iter()
            .map(|l| l.trim_end().to_string()),
    );
    lines
}

/// `4k`, `1m`, `512` as bytes, for ordering.
fn size_bytes(s: &str) -> u64 {
    crate::util::parse::parse_size(s).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::modes::Mode;
    use crate::model::result::tests::sample_result;
    use crate::model::result::Secondary;
    use crate::model::settings::TimeUnit;

    fn row(pattern: &str, client: &str, read_size: &str, ms: &[f64], requests: f64) -> BenchResult {
        let mut r = sample_result(&format!("bb.seek.{pattern}"), "1", ms.to_vec());
        r.settings.mode = Mode::SingleShot;
        r.time_unit = TimeUnit::Millis;
        r.params = [
            ("key", "random-16mb.txt"),
            ("client", client),
            ("source", "http://127.0.0.1:8080/data"),
            ("read-size", read_size),
            ("cache", "hot"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        r.secondary = vec![Secondary::new(
            "requests",
            "req/op",
            vec![vec![requests; ms.len()]],
        )];
        r
    }

    #[test]
    fn the_stream_against_plain_with_requests_and_ties() {
        let results = [
            row("sequential", "plain", "4k", &[335.0, 336.0, 337.0], 4096.0),
            row("sequential", "stream", "4k", &[10.8, 10.9, 11.0], 5.0),
            row("sequential", "plain", "1m", &[9.0, 9.1, 9.2], 16.0),
            row("sequential", "stream", "1m", &[9.1, 9.0, 9.2], 16.0),
            row("backward", "plain", "-", &[5.0, 5.1, 4.9], 8.0),
            row("backward", "stream", "-", &[5.05, 5.0, 4.95], 8.0),
            row("parquet", "plain", "-", &[4.0, 4.1, 4.2], 4.0),
            row("parquet", "stream", "-", &[8.0, 8.2, 8.4], 3.0),
        ];
        let lines = answer(&results);
        assert_eq!(
            lines,
            [
                "random-16mb.txt, sequential 4k: stream 30.8x faster",
                "  5 requests against 4096, parquet 2.00x slower, backward a tie",
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 80));
        assert!(
            answer(&results[2..3]).is_empty(),
            "plain alone: nothing to compare"
        );
    }
}
