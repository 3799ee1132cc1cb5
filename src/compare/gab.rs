//! github-action-benchmark's custom JSON (`customBiggerIsBetter` and
//! `customSmallerIsBetter`): an array of `{name, unit, value, range, extra}`, one file per
//! direction, so that throughput rows are judged bigger-is-better (the action's own
//! `jmh` tool takes every JMH score as smaller-is-better). Written from the last run given
//! to bb-compare (usually the only one).
//!
//! The action keeps each series' history by its name, so a name is a function of its row
//! alone, never of the rest of the file: the benchmark, its params as the file has them,
//! JMH's top-level threads where not 1 and no param says threads, and always the mode
//! (`bb.zstd.compress (level=3, threads=1) [thrpt]`). `value` is always a number: a row
//! whose score is NaN or ±Infinity is left out, and [`left_out`] says so.

use super::{Comparison, Row};
use crate::model::params::label;
use crate::util::format::format_score;
use crate::util::json::Json;

/// Which of the action's two custom tools a file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `tool: customBiggerIsBetter`: throughput and other rates.
    Bigger,
    /// `tool: customSmallerIsBetter`: time per operation and the like.
    Smaller,
}

/// The rows of `c` whose better direction is `direction`, in the last run.
pub fn render(c: &Comparison, direction: Direction) -> String {
    let Some(column) = c.labels.len().checked_sub(1) else {
        return "[]\n".to_string();
    };
    let entries = c
        .rows
        .iter()
        .filter(|row| row.higher_is_better == (direction == Direction::Bigger))
        .filter_map(|row| {
            let cell = row.cells[column].as_ref().filter(|c| c.score.is_finite())?;
            let mut fields = vec![
                ("name", Json::str(name(row))),
                ("unit", Json::str(&row.unit)),
                ("value", Json::Num(cell.score)),
            ];
            if cell.error.is_finite() {
                fields.push((
                    "range",
                    Json::str(format!("± {}", format_score(cell.error))),
                ));
            }
            // Counts where the file has the raw data to count.
            let counts = match cell.samples.count() {
                0 => String::new(),
                n => format!("samples: {n}\nforks: {}\n", cell.samples.fork_count()),
            };
            fields.push((
                "extra",
                Json::str(format!(
                    "mode: {}\n{counts}error: 99.9% confidence half-width\nfrom: {}",
                    row.mode, c.labels[column]
                )),
            ));
            Some(Json::obj(fields))
        })
        .collect();
    Json::Arr(entries).to_pretty()
}

/// The series' name, from its row alone: the benchmark, the file's params (not the
/// `threads` that the table shows where rows differ in it), JMH's top-level threads where
/// it is not 1 (JMH's default) and no param says threads, and the mode.
pub fn name(row: &Row) -> String {
    let mut params: Vec<(String, String)> = row
        .params
        .iter()
        .filter(|(k, _)| !(row.threads_shown && k == "threads"))
        .cloned()
        .collect();
    if let Some(t) = row.threads.filter(|&t| t != 1) {
        if !params.iter().any(|(k, _)| k == "threads") {
            params.push(("threads".into(), t.to_string()));
            params.sort();
        }
    }
    format!("{} [{}]", label(&row.benchmark, &params), row.mode)
}

/// What the `direction` file leaves out of the last run, a line each for a warning: the
/// rows whose score is not a number (NaN, ±Infinity), which the action cannot chart.
pub fn left_out(c: &Comparison, direction: Direction) -> Vec<String> {
    let Some(column) = c.labels.len().checked_sub(1) else {
        return Vec::new();
    };
    let bigger = direction == Direction::Bigger;
    let invalid = c
        .invalid
        .iter()
        .filter(|&&(_, col, _)| col == column)
        .map(|&(row, _, score)| (&c.rows[row], score));
    let cells = c
        .rows
        .iter()
        .filter_map(|r| Some((r, r.cells[column].as_ref()?.score)))
        .filter(|(_, score)| !score.is_finite());
    invalid
        .chain(cells)
        .filter(|(row, _)| row.higher_is_better == bigger)
        .map(|(row, score)| {
            format!(
                "{}: the score in {} is {}, not a number: left out of the {} file",
                name(row),
                c.labels[column],
                super::java_number(score),
                if bigger { "gab-bigger" } else { "gab-smaller" }
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{criteria, measurement};
    use super::super::{compare, Measurement};
    use super::*;

    #[test]
    fn rows_split_by_direction_with_name_unit_value_range_and_extra() {
        let thrpt = measurement("bb.z.c", &[("threads", "1")], &[100.0, 101.0, 99.0]);
        let mut avgt = measurement("bb.z.c", &[("threads", "1")], &[2.0, 2.5]);
        avgt.mode = "avgt".into();
        avgt.higher_is_better = false;
        avgt.unit = "us/op".into();
        let c = compare(vec![("new".into(), vec![thrpt, avgt])], criteria());
        let bigger: serde_json::Value =
            serde_json::from_str(&render(&c, Direction::Bigger)).unwrap();
        let smaller: serde_json::Value =
            serde_json::from_str(&render(&c, Direction::Smaller)).unwrap();
        assert_eq!(bigger.as_array().unwrap().len(), 1);
        assert_eq!(bigger[0]["name"], "bb.z.c (threads=1) [thrpt]");
        assert_eq!(bigger[0]["unit"], "ops/s");
        assert_eq!(bigger[0]["value"], 100.0);
        assert_eq!(bigger[0]["range"], "± 18.244");
        assert!(bigger[0]["extra"]
            .as_str()
            .unwrap()
            .starts_with("mode: thrpt\nsamples: 3\nforks: 3\n"));
        assert_eq!(smaller[0]["name"], "bb.z.c (threads=1) [avgt]");
        assert_eq!(smaller[0]["unit"], "us/op");
        assert!(smaller[0].get("range").is_none(), "no error, no range");
    }

    fn names(c: &Comparison, direction: Direction) -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&render(c, direction)).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn a_name_is_its_rows_alone_whatever_else_the_file_holds() {
        let raw = [100.0, 101.0, 99.0];
        let row = |size: &str, threads: u64| {
            let mut m = measurement("org.x.B.run", &[("size", size)], &raw);
            m.threads = Some(threads);
            m
        };
        let nine: Vec<Measurement> = (1..=9).map(|i| row(&i.to_string(), 1)).collect();
        let alone = names(
            &compare(vec![("r".into(), nine.clone())], criteria()),
            Direction::Bigger,
        );
        assert_eq!(alone[0], "org.x.B.run (size=1) [thrpt]");
        // One more row at 4 threads: the table shows threads now, the names stay.
        let mut ten = nine.clone();
        ten.push(row("1", 4));
        let c = compare(vec![("r".into(), ten)], criteria());
        assert_eq!(c.rows[0].label(), "org.x.B.run (size=1, threads=1)");
        let more = names(&c, Direction::Bigger);
        assert_eq!(more[..9], alone[..]);
        assert_eq!(more[9], "org.x.B.run (size=1, threads=4) [thrpt]");
        // The mode is always there, whether or not the file has the label in another.
        let mut sample = row("1", 1);
        sample.mode = "sample".into();
        sample.higher_is_better = false;
        let mut avgt = sample.clone();
        avgt.mode = "avgt".into();
        let one = compare(vec![("r".into(), vec![sample.clone()])], criteria());
        let both = compare(vec![("r".into(), vec![sample, avgt])], criteria());
        assert_eq!(
            names(&one, Direction::Smaller),
            ["org.x.B.run (size=1) [sample]"]
        );
        assert_eq!(
            names(&both, Direction::Smaller)[0],
            "org.x.B.run (size=1) [sample]"
        );
        // A file's own threads param is kept, whatever the top-level threads.
        let own = measurement("bb.zstd.compress", &[("threads", "4")], &raw);
        let c = compare(vec![("r".into(), vec![own])], criteria());
        assert_eq!(
            names(&c, Direction::Bigger),
            ["bb.zstd.compress (threads=4) [thrpt]"]
        );
    }

    #[test]
    fn a_score_that_is_not_a_number_is_left_out_with_a_warning_never_written() {
        let raw = [100.0, 101.0, 99.0];
        let mut bad = measurement("bb.x", &[], &raw);
        bad.score = f64::NEG_INFINITY;
        let mut nan = measurement("bb.n", &[], &raw);
        nan.score = f64::NAN;
        let mut bare = measurement("bb.bare", &[], &[]);
        bare.score = 5.0;
        let good = measurement("bb.y", &[], &raw);
        let c = compare(vec![("new".into(), vec![bad, nan, bare, good])], criteria());
        let text = render(&c, Direction::Bigger);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let entries = v.as_array().unwrap();
        assert_eq!(entries.len(), 2, "{text}");
        assert!(entries.iter().all(|e| e["value"].is_number()), "{text}");
        assert!(
            !text.contains("NaN") && !text.contains("Infinity"),
            "{text}"
        );
        assert!(!text.contains("samples: 0"), "{text}");
        assert_eq!(
            entries[0]["extra"], "mode: thrpt\nerror: 99.9% confidence half-width\nfrom: new",
            "no raw data, no counts"
        );
        assert_eq!(
            left_out(&c, Direction::Bigger),
            [
                "bb.x [thrpt]: the score in new is -Infinity, not a number: left out of the gab-bigger file",
                "bb.n [thrpt]: the score in new is NaN, not a number: left out of the gab-bigger file",
            ]
        );
        assert!(left_out(&c, Direction::Smaller).is_empty());
    }
}
