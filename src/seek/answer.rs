//! bb-seek's answer: per source and object (an existing object by where it is), whether the seekable stream is faster or
//! slower than the plain client on sequential reads of the smallest read size, with the
//! requests each made, and how it fares on the other patterns, a tie where both made the
//! same requests and the difference is noise.

use crate::model::answer::{differ, times, values_of, wrap, MAX_LINES, WIDTH};
use crate::model::result::BenchResult;

pub(crate) fn answer(results: &[BenchResult]) -> Vec<String> {
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

fn objects(results: &[BenchResult]) -> Vec<Object> {
    let mut objects = Vec::new();
    let sources = values_of(results, "source");
    for source in &sources {
        let here: Vec<&BenchResult> = results
            .iter()
            .filter(|r| r.param("source") == Some(source))
            .collect();
        let mut named = sources.len() > 1;
        let owned: Vec<BenchResult> = here.iter().map(|r| (*r).clone()).collect();
        for key in values_of(&owned, "key") {
            let rows: Vec<&BenchResult> = here
                .iter()
                .copied()
                .filter(|r| r.param("key") == Some(&key))
                .collect();
            // An existing object's source is the object itself: it names it, where it is.
            let existing = rows.iter().any(|r| r.param("size").is_some());
            let name = match existing {
                true => cut(source, 60),
                false => key.clone(),
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

/// What to say of one object: the sequential reads of the smallest size, then the
/// requests they made and the other patterns.
fn object(key: &str, rows: &[&BenchResult]) -> Object {
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
    let mut requests_item = None;
    if let Some(size) = &smallest {
        if let Some((plain, stream)) = pair(rows, "bb.seek.sequential", Some(size)) {
            head = format!(
                "{key}, sequential {size}: stream {}",
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
    Object {
        source: None,
        head,
        requests: requests_item,
        items,
    }
}

/// `4k`, `1m`, `512` as bytes, for ordering.
fn size_bytes(s: &str) -> u64 {
    crate::util::parse::parse_size(s).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::modes::Mode;
    use crate::model::result::tests::forked_result;
    use crate::model::result::Secondary;
    use crate::model::settings::TimeUnit;

    fn row(pattern: &str, client: &str, read_size: &str, ms: &[f64], requests: f64) -> BenchResult {
        // A fork per shot: the forks are what tells noise from a difference.
        let forks = ms.iter().map(|&v| vec![v]).collect();
        let mut r = forked_result(&format!("bb.seek.{pattern}"), "1", forks);
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
            vec![vec![requests]; ms.len()],
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

    #[test]
    fn many_objects_get_a_line_each_never_a_list_cut_short() {
        let object = |key: &str| {
            let mut rows = vec![
                row("sequential", "plain", "4k", &[335.0, 336.0, 337.0], 4096.0),
                row("sequential", "stream", "4k", &[10.8, 10.9, 11.0], 5.0),
                row("backward", "plain", "-", &[5.0, 5.1, 4.9], 8.0),
                row("backward", "stream", "-", &[5.05, 5.0, 4.95], 8.0),
                row("parquet", "plain", "-", &[4.0, 4.1, 4.2], 4.0),
                row("parquet", "stream", "-", &[8.0, 8.2, 8.4], 3.0),
            ];
            for r in &mut rows {
                for (k, v) in &mut r.params {
                    if k == "key" {
                        *v = key.to_string();
                    }
                }
            }
            rows
        };
        let keys: Vec<String> = (1..=4).map(|i| format!("random-{i}mb.txt")).collect();
        let four: Vec<BenchResult> = keys.iter().flat_map(|k| object(k)).collect();
        assert_eq!(answer(&four).len(), 8, "two lines each fit");
        let keys: Vec<String> = (1..=5).map(|i| format!("random-{i}mb.txt")).collect();
        let five: Vec<BenchResult> = keys.iter().flat_map(|k| object(k)).collect();
        let lines = answer(&five);
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
        let ten: Vec<BenchResult> = keys.iter().flat_map(|k| object(k)).collect();
        let lines = answer(&ten);
        assert_eq!(lines.len(), MAX_LINES);
        assert_eq!(lines[7], "and 3 more lines: see the table");
        assert!(lines[6].starts_with("random-7mb.txt,"));
    }

    #[test]
    fn an_existing_object_is_named_where_it_is_with_no_source_line() {
        let mut results = vec![
            row("sequential", "plain", "4k", &[335.0, 336.0, 337.0], 4096.0),
            row("sequential", "stream", "4k", &[10.8, 10.9, 11.0], 5.0),
        ];
        let mut other = results.clone();
        for (r, source) in results
            .iter_mut()
            .map(|r| (r, "s3://bench/tables/orders.parquet"))
            .chain(other.iter_mut().map(|r| (r, "file:/mnt/usb/disk.img")))
        {
            let name = source.rsplit('/').next().unwrap();
            for (k, v) in &mut r.params {
                match k.as_str() {
                    "key" => *v = name.to_string(),
                    "source" => *v = source.to_string(),
                    _ => {}
                }
            }
            r.params.push(("size".into(), "16777216".into()));
        }
        results.extend(other);
        assert_eq!(
            answer(&results),
            [
                "s3://bench/tables/orders.parquet, sequential 4k: stream 30.8x faster",
                "  5 requests against 4096",
                "file:/mnt/usb/disk.img, sequential 4k: stream 30.8x faster",
                "  5 requests against 4096",
            ]
        );
    }
}
