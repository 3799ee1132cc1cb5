//! github-action-benchmark's custom JSON (`customBiggerIsBetter` and
//! `customSmallerIsBetter`): an array of `{name, unit, value, range, extra}`, one file per
//! direction, so that throughput rows are judged bigger-is-better (the action's own
//! `jmh` tool takes every JMH score as smaller-is-better). Written from the last run given
//! to bb-compare (usually the only one).

use super::{Comparison, Row};
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
            let cell = row.cells[column].as_ref()?;
            let mut fields = vec![
                ("name", Json::str(name(c, row))),
                ("unit", Json::str(&row.unit)),
                ("value", Json::Num(cell.score)),
            ];
            if cell.error.is_finite() {
                fields.push(("range", Json::str(format!("± {}", format_score(cell.error)))));
            }
            fields.push((
                "extra",
                Json::str(format!(
                    "mode: {}\nsamples: {}\nforks: {}\nerror: 99.9% confidence half-width\nfrom: {}",
                    row.mode,
                    cell.samples.count(),
                    cell.samples.fork_count(),
                    c.labels[column]
                )),
            ));
            Some(Json::obj(fields))
        })
        .collect();
    Json::Arr(entries).to_pretty()
}

/// The row's label, with its mode where the same label is in several modes, so that the
/// action keeps them apart.
fn name(c: &Comparison, row: &Row) -> String {
    let label = row.label();
    let modes = c
        .rows
        .iter()
        .filter(|r| r.label() == label && r.mode != row.mode)
        .count();
    if modes > 0 {
        format!("{label} [{}]", row.mode)
    } else {
        label
    }
}

#[cfg(test)]
mod tests {
    use super::super::compare;
    use super::super::tests::{criteria, measurement};
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
            .starts_with("mode: thrpt\nsamples: 3\nforks: 1\n"));
        assert_eq!(smaller[0]["name"], "bb.z.c (threads=1) [avgt]");
        assert_eq!(smaller[0]["unit"], "us/op");
        assert!(smaller[0].get("range").is_none(), "no error, no range");
    }
}
