//! bb-seek's answer: per source and object (an existing object by where it is), whether the seekable stream is faster or
//! slower than the plain client on sequential reads of the smallest read size, with the
//! requests each made, and how it fares on the other patterns, a tie where both made the
//! same requests and the difference is noise.

use super::{size_label, Row};
use crate::model::answer::{differ, distinct, times, wrap, MAX_LINES, WIDTH};
use crate::model::result::BenchResult;

/// A result with the row it was measured for.
type Pair<'a> = (&'a Row, &'a BenchResult);

pub(crate) fn answer(results: &[Pair]) -> Vec<String> {
    let objects = objects(results);
    let full: Vec<String> = objects.iter().flat_map(Object::lines).collect();
    if full.len() <= MAX_LINES {
        return full;
    }
    // Too many objects for the whole story: a line each, the sequential verdict and its
    // requests, and a count of those left out rather than a list cut mid-sentence.
    let mut short: Vec<String> = objects
        .iter()
        .filter_map(|o| Some(o.source.iter().cloned().chain([o.line()?])))
        .flatten()
        .collect();
    if short.len() > MAX_LINES {
        let left = short.len() - (MAX_LINES - 1);
        short.truncate(MAX_LINES - 1);
        short.push(format!("and {left} more lines: see the table"));
    }
    short
}

/// What the answer says of one object: its headline and the rest.
struct Object {
    /// A source's name (`http://…:`) ahead of its first object, where there are several.
    source: Option<String>,
    head: String,
    /// The requests line's item (`9 requests against 256`), where sequential reads ran.
    requests: Option<String>,
    /// The requests, then the other patterns' verdicts.
    items: Vec<String>,
}

impl Object {
    /// The whole story: the head, then the items wrapped.
    fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.source.iter().cloned().collect();
        if self.items.is_empty() {
            return lines;
        }
        lines.push(self.head.clone());
        lines.extend(
            wrap("", &self.items)
                .into_iter()
                .map(|l| l.trim_end().to_string()),
        );
        lines
    }

    /// One line: the head and, where it fits, the requests.
    fn line(&self) -> Option<String> {
        if self.items.is_empty() {
            return None;
        }
        let mut line = self.head.clone();
        if let Some(r) = &self.requests {
            let longer = format!("{line}, {}", r.trim_start());
            if longer.chars().count() <= WIDTH {
                line = longer;
            }
        }
        Some(line)
    }
}

fn objects(results: &[Pair]) -> Vec<Object> {
    let mut objects = Vec::new();
    let sources = distinct(results.iter().map(|(row, _)| row.source.as_str()));
    for source in &sources {
        let here: Vec<Pair> = results
            .iter()
            .copied()
            .filter(|(row, _)| row.source == *source)
            .collect();
        let mut named = sources.len() > 1;
        for key in distinct(here.iter().map(|(row, _)| row.key.as_str())) {
            let rows: Vec<Pair> = here
                .iter()
                .copied()
                .filter(|(row, _)| row.key == key)
                .collect();
            // An existing object's source is the object itself: it names it, where it is.
            let existing = rows.iter().any(|(row, _)| row.size.is_some());
            let name = match existing {
                true => cut(source, 60),
                false => key.to_string(),
            };
            let mut object = object(&name, &rows);
            if named && !existing && !object.items.is_empty() {
                object.source = Some(format!("{}:", cut(source, 70)));
                named = false;
            }
            objects.push(object);
        }
    }
    objects
}

/// The first `max` characters of `s`, with `…` where it was cut.
fn cut(s: &str, max: usize) -> String {
    match s.chars().count() > max {
        true => format!("{}…", s.chars().take(max - 1).collect::<String>()),
        false => s.to_string(),
    }
}

/// The plain and stream rows of one pattern (and read size), where both ran.
fn pair<'a>(
    rows: &[Pair<'a>],
    pattern: &str,
    read_size: Option<u64>,
) -> Option<(&'a BenchResult, &'a BenchResult)> {
    let of = |client: &str| {
        rows.iter()
            .find(|(row, _)| {
                row.pattern == pattern
                    && row.client == client
                    && read_size.is_none_or(|s| row.read_size == Some(s))
            })
            .map(|&(_, r)| r)
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

/// What to say of one object: the sequential reads of the smallest size, then the
/// requests they made and the other patterns.
fn object(key: &str, rows: &[Pair]) -> Object {
    let smallest = rows
        .iter()
        .filter(|(row, _)| row.pattern == SEQUENTIAL)
        .filter_map(|(row, _)| row.read_size)
        .min();
    let mut head = format!("{key}:");
    let mut items = Vec::new();
    let mut requests_item = None;
    if let Some(size) = smallest {
        if let Some((plain, stream)) = pair(rows, SEQUENTIAL, Some(size)) {
            head = format!(
                "{key}, sequential {}: stream {}",
                size_label(size),
                verdict(plain, stream)
            );
            let (s, p) = (requests(stream), requests(plain));
            let item = format!(
                "  {s:.0} request{} against {p:.0}",
                if s == 1.0 { "" } else { "s" }
            );
            requests_item = Some(item.clone());
            items.push(item);
        }
    }
    let mut patterns: Vec<&str> = rows
        .iter()
        .map(|(row, _)| row.pattern.as_str())
        .filter(|p| *p != SEQUENTIAL)
        .collect();
    patterns.dedup();
    // Ties are said once, for every pattern that tied.
    let mut ties = Vec::new();
    for pattern in patterns {
        if let Some((plain, stream)) = pair(rows, pattern, None) {
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
    Object {
        source: None,
        head,
        requests: requests_item,
        items,
    }
}

/// The pattern whose read size the answer's head is about.
const SEQUENTIAL: &str = "sequential";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::modes::Mode;
    use crate::model::result::tests::forked_result;
    use crate::model::result::Secondary;
    use crate::model::settings::TimeUnit;

    /// A row of random-16mb.txt over HTTP, read hot, and its single shots in ms.
    fn row(
        pattern: &str,
        client: &str,
        read_size: Option<u64>,
        ms: &[f64],
        requests: f64,
    ) -> (Row, BenchResult) {
        let row = Row {
            pattern: pattern.into(),
            read_size,
            key: "random-16mb.txt".into(),
            size: None,
            client: client.into(),
            source: "http://127.0.0.1:8080/data".into(),
            cold: false,
            check: None,
        };
        // A fork per shot: the forks are what tells noise from a difference.
        let forks = ms.iter().map(|&v| vec![v]).collect();
        let mut r = forked_result(&format!("bb.seek.{pattern}"), "1", forks);
        r.settings.mode = Mode::SingleShot;
        r.time_unit = TimeUnit::Millis;
        r.secondary = vec![Secondary::new(
            "requests",
            "req/op",
            vec![vec![requests]; ms.len()],
        )];
        (row, r)
    }

    fn answer_of(rows: &[(Row, BenchResult)]) -> Vec<String> {
        answer(&rows.iter().map(|(row, r)| (row, r)).collect::<Vec<_>>())
    }

    #[test]
    fn the_stream_against_plain_with_requests_and_ties() {
        let results = [
            row(
                "sequential",
                "plain",
                Some(4096),
                &[335.0, 336.0, 337.0],
                4096.0,
            ),
            row("sequential", "stream", Some(4096), &[10.8, 10.9, 11.0], 5.0),
            row("sequential", "plain", Some(1 << 20), &[9.0, 9.1, 9.2], 16.0),
            row(
                "sequential",
                "stream",
                Some(1 << 20),
                &[9.1, 9.0, 9.2],
                16.0,
            ),
            row("backward", "plain", None, &[5.0, 5.1, 4.9], 8.0),
            row("backward", "stream", None, &[5.05, 5.0, 4.95], 8.0),
            row("parquet", "plain", None, &[4.0, 4.1, 4.2], 4.0),
            row("parquet", "stream", None, &[8.0, 8.2, 8.4], 3.0),
        ];
        let lines = answer_of(&results);
        assert_eq!(
            lines,
            [
                "random-16mb.txt, sequential 4k: stream 30.8x faster",
                "  5 requests against 4096, parquet 2.00x slower, backward a tie",
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 80));
        assert!(
            answer_of(&results[2..3]).is_empty(),
            "plain alone: nothing to compare"
        );
    }

    #[test]
    fn many_objects_get_a_line_each_never_a_list_cut_short() {
        let object = |key: &str| {
            let mut rows = vec![
                row(
                    "sequential",
                    "plain",
                    Some(4096),
                    &[335.0, 336.0, 337.0],
                    4096.0,
                ),
                row("sequential", "stream", Some(4096), &[10.8, 10.9, 11.0], 5.0),
                row("backward", "plain", None, &[5.0, 5.1, 4.9], 8.0),
                row("backward", "stream", None, &[5.05, 5.0, 4.95], 8.0),
                row("parquet", "plain", None, &[4.0, 4.1, 4.2], 4.0),
                row("parquet", "stream", None, &[8.0, 8.2, 8.4], 3.0),
            ];
            for (row, _) in &mut rows {
                row.key = key.to_string();
            }
            rows
        };
        let keys: Vec<String> = (1..=4).map(|i| format!("random-{i}mb.txt")).collect();
        let four: Vec<(Row, BenchResult)> = keys.iter().flat_map(|k| object(k)).collect();
        assert_eq!(answer_of(&four).len(), 8, "two lines each fit");
        let keys: Vec<String> = (1..=5).map(|i| format!("random-{i}mb.txt")).collect();
        let five: Vec<(Row, BenchResult)> = keys.iter().flat_map(|k| object(k)).collect();
        let lines = answer_of(&five);
        assert_eq!(
            lines.len(),
            5,
            "five objects' whole stories would take 10 lines of 8"
        );
        assert_eq!(
            lines[0],
            "random-1mb.txt, sequential 4k: stream 30.8x faster, 5 requests against 4096"
        );
        let keys: Vec<String> = (1..=10).map(|i| format!("random-{i}mb.txt")).collect();
        let ten: Vec<(Row, BenchResult)> = keys.iter().flat_map(|k| object(k)).collect();
        let lines = answer_of(&ten);
        assert_eq!(lines.len(), MAX_LINES);
        assert_eq!(lines[7], "and 3 more lines: see the table");
        assert!(lines[6].starts_with("random-7mb.txt,"));
    }

    #[test]
    fn an_existing_object_is_named_where_it_is_with_no_source_line() {
        let mut results = vec![
            row(
                "sequential",
                "plain",
                Some(4096),
                &[335.0, 336.0, 337.0],
                4096.0,
            ),
            row("sequential", "stream", Some(4096), &[10.8, 10.9, 11.0], 5.0),
        ];
        let mut other = results.clone();
        for ((row, _), source) in results
            .iter_mut()
            .map(|r| (r, "s3://bench/tables/orders.parquet"))
            .chain(other.iter_mut().map(|r| (r, "file:/mnt/usb/disk.img")))
        {
            row.key = source.rsplit('/').next().unwrap().to_string();
            row.source = source.to_string();
            row.size = Some(16 << 20);
        }
        results.extend(other);
        assert_eq!(
            answer_of(&results),
            [
                "s3://bench/tables/orders.parquet, sequential 4k: stream 30.8x faster",
                "  5 requests against 4096",
                "file:/mnt/usb/disk.img, sequential 4k: stream 30.8x faster",
                "  5 requests against 4096",
            ]
        );
    }
}
