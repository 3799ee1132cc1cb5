//! Reading results for bb-compare: boardbench's JSON reports and JMH's own `-rf json`
//! files (the same layout), one file or a results directory of them.

use super::Measurement;
use crate::error::{Error, Result};
use crate::output::json_value::Json;
use std::path::{Path, PathBuf};

/// The measurements of one column: a JSON file, or every `*.json` under a directory
/// (run-all's results directory; its `env.json` is the environment, not results).
pub fn load(path: &Path) -> Result<Vec<Measurement>> {
    let files = if path.is_dir() {
        json_files_under(path)?
    } else {
        vec![path.to_path_buf()]
    };
    if files.is_empty() {
        return Err(Error::usage(format!(
            "{}: no JSON result files in this directory",
            path.display()
        )));
    }
    let mut all = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| Error::io(format!("reading {}", file.display()), e))?;
        all.extend(parse(&text).map_err(|why| {
            Error::usage(format!(
                "{}: not a JMH/boardbench JSON result file: {why}",
                file.display()
            ))
        })?);
    }
    Ok(all)
}

/// Column names: the paths as given without `.json` or a trailing slash, less the
/// leading directories they all share (`results/pi4/`, `results/pi5/` → `pi4`, `pi5`).
pub fn column_labels(paths: &[PathBuf]) -> Vec<String> {
    let parts: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            let s = p.to_string_lossy();
            let s = s.trim_end_matches('/');
            let s = s.strip_suffix(".json").unwrap_or(s);
            s.split('/').map(String::from).collect()
        })
        .collect();
    let shortest = parts.iter().map(Vec::len).min().unwrap_or(1);
    let shared = (0..shortest - 1)
        .take_while(|&i| parts.iter().all(|p| p[i] == parts[0][i]))
        .count();
    let shared = if paths.len() > 1 { shared } else { 0 };
    parts.iter().map(|p| p[shared..].join("/")).collect()
}

/// Every `*.json` file under `dir` except `env.json`, sorted, subdirectories included.
fn json_files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
    for entry in entries {
        let path = entry
            .map_err(|e| Error::io(format!("reading {}", dir.display()), e))?
            .path();
        if path.is_dir() {
            files.extend(json_files_under(&path)?);
        } else if path.extension().is_some_and(|e| e == "json")
            && path.file_name().is_some_and(|n| n != "env.json")
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Parses a JSON result document: an array of JMH entries. The error says what is wrong
/// and in which entry.
pub fn parse(text: &str) -> std::result::Result<Vec<Measurement>, String> {
    let doc = Json::parse(text)?;
    let entries = doc
        .as_array()
        .ok_or("expected an array of benchmark entries")?;
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| entry(e).map_err(|why| format!("entry {}: {why}", i + 1)))
        .collect()
}

fn entry(e: &Json) -> std::result::Result<Measurement, String> {
    let text = |key: &str| {
        e.get(key)
            .and_then(Json::as_str)
            .map(String::from)
            .ok_or(format!("missing \"{key}\""))
    };
    let benchmark = text("benchmark")?;
    let mode = text("mode")?;
    let higher_is_better = crate::harness::cli::parse_mode(&mode)?.higher_is_better();
    let params = match e.get("params") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Obj(pairs)) => pairs
            .iter()
            .map(|(k, v)| match v {
                Json::Str(s) => Ok((k.clone(), s.clone())),
                Json::Num(n) => Ok((k.clone(), n.to_string())),
                _ => Err(format!("param \"{k}\" is not a string")),
            })
            .collect::<std::result::Result<_, _>>()?,
        Some(_) => return Err("\"params\" is not an object".into()),
    };
    let metric = e.get("primaryMetric").ok_or("missing \"primaryMetric\"")?;
    let number = |key: &str| {
        metric
            .get(key)
            .and_then(Json::as_f64)
            .ok_or(format!("primaryMetric: \"{key}\" is not a number"))
    };
    let score = number("score")?;
    // JMH writes "NaN" for an error it cannot compute; an absent one is the same.
    let error = metric
        .get("scoreError")
        .map_or(Ok(f64::NAN), |_| number("scoreError"))?;
    let unit = metric
        .get("scoreUnit")
        .and_then(Json::as_str)
        .ok_or("primaryMetric: missing \"scoreUnit\"")?
        .to_string();
    let mut raw = Vec::new();
    if let Some(forks) = metric.get("rawData") {
        for fork in forks.as_array().ok_or("rawData is not an array")? {
            for v in fork.as_array().ok_or("rawData is not an array of arrays")? {
                let v = v
                    .as_f64()
                    .ok_or("rawData holds a value that is not a number")?;
                if v.is_finite() {
                    raw.push(v);
                }
            }
        }
    }
    Ok(Measurement {
        benchmark,
        mode,
        higher_is_better,
        params,
        score,
        error,
        unit,
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_jmh_entries_with_nan_strings_and_numeric_params() {
        let text = r#"[{"jmhVersion":"1.37","benchmark":"org.x.Rpc.sync","mode":"avgt",
            "threads":1,"forks":1,"params":{"size":1024,"codec":"proto"},
            "primaryMetric":{"score":12.5,"scoreError":"NaN","scoreConfidence":["NaN","NaN"],
            "scoreUnit":"us/op","rawData":[[12.0,13.0],["NaN"]]},"secondaryMetrics":{}}]"#;
        let m = &parse(text).unwrap()[0];
        assert_eq!(m.benchmark, "org.x.Rpc.sync");
        assert!(!m.higher_is_better);
        assert_eq!(
            m.params,
            vec![
                ("size".to_string(), "1024".to_string()),
                ("codec".to_string(), "proto".to_string())
            ]
        );
        assert!(m.error.is_nan());
        assert_eq!(m.unit, "us/op");
        assert_eq!(m.raw, vec![12.0, 13.0]);
    }

    #[test]
    fn malformed_documents_say_what_and_where() {
        for (text, why) in [
            ("{", "expected a string key"),
            ("{}", "array"),
            ("[{\"mode\":\"thrpt\"}]", "entry 1: missing \"benchmark\""),
            (
                "[{\"benchmark\":\"a\",\"mode\":\"fast\",\"primaryMetric\":{}}]",
                "unknown mode 'fast'",
            ),
            (
                "[{\"benchmark\":\"a\",\"mode\":\"thrpt\",\"primaryMetric\":{\"score\":\"x\"}}]",
                "\"score\" is not a number",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn labels_drop_shared_directories_and_the_extension() {
        let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            column_labels(&paths(&["r/pi4/", "r/pi5"])),
            vec!["pi4", "pi5"]
        );
        assert_eq!(
            column_labels(&paths(&["/t/a.json", "/t/b.json"])),
            vec!["a", "b"]
        );
        assert_eq!(
            column_labels(&paths(&["a/x.json", "b/x.json"])),
            vec!["a/x", "b/x"]
        );
        assert_eq!(column_labels(&paths(&["x/base.json"])), vec!["x/base"]);
    }
}
