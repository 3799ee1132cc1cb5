//! boardbench's files against JMH's own: the real bb-zstd's JSON and CSV in sample mode
//! next to the real JMH files kept in tests/data/jmh (their origin in SOURCES.md), read
//! the way JMH Visualizer reads them; and its bm output against Ruby's Benchmark.bm.

use crate::support::{run_with, Run};
use serde_json::Value;
use std::path::PathBuf;

const ZSTD: &str = env!("CARGO_BIN_EXE_bb-zstd");
const SMALL: &[&str] = crate::support::ZSTD_SMALL;

fn bb_zstd(extra: &[&str]) -> Run {
    run_with(ZSTD, &[SMALL, extra].concat(), &[])
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/jmh")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

/// bb-zstd in sample mode, two forks of two iterations, decompress at 1 thread.
fn sample_run(format: &str) -> Run {
    let run = bb_zstd(&[
        "--lock",
        "none",
        "--mode",
        "sample",
        "--op",
        "decompress",
        "--threads",
        "1",
        "--forks",
        "2",
        "--format",
        format,
    ]);
    run.assert_ok();
    run
}

/// The keys of the objects in a JSON text at `depth` (1: the entries of the top-level
/// array) under the path of keys `under`, in the order they are written (serde_json's
/// Value sorts them); for the first entry only.
fn key_order(text: &str, under: &[&str]) -> Vec<String> {
    let mut keys = Vec::new();
    let mut path: Vec<Option<String>> = Vec::new();
    let mut last_key: Option<String> = None;
    let mut chars = text.chars().peekable();
    let mut entries = 0;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut s = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => s.push(chars.next().unwrap()),
                        '"' => break,
                        c => s.push(c),
                    }
                }
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                if chars.peek() == Some(&':') {
                    let here: Vec<&str> = path[2..]
                        .iter()
                        .map(|k| k.as_deref().unwrap_or("[]"))
                        .collect();
                    if entries == 1 && path.len() == under.len() + 2 && here == under {
                        keys.push(s.clone());
                    }
                    last_key = Some(s);
                }
            }
            '{' | '[' => {
                if path.len() == 1 && c == '{' {
                    entries += 1;
                }
                path.push(last_key.take());
            }
            '}' | ']' => {
                path.pop();
                last_key = None;
            }
            ',' => last_key = None,
            _ => {}
        }
    }
    keys
}

/// The JSON type of a value, for comparing layouts.
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Reads a JMH JSON document as JMH Visualizer's extractors do (MetricExtractor and
/// PrimaryMetricExtractor): for every benchmark, the primary metric and every secondary
/// one, the score, error and unit, then min and max over the score and the raw scores:
/// `rawDataHistogram` values for a sample-mode primary metric, `rawData` otherwise. A
/// missing field or a value that makes JavaScript's Math.min NaN is an error.
pub(crate) fn visualizer_extract(doc: &Value) -> Result<usize, String> {
    let mut metrics = 0;
    for (i, b) in doc.as_array().ok_or("not an array")?.iter().enumerate() {
        let at = |why: String| format!("benchmark {}: {why}", i + 1);
        let name = b["benchmark"]
            .as_str()
            .ok_or_else(|| at("no benchmark".into()))?;
        if !name.contains('.') {
            return Err(at(format!("{name}: no class.method to group by")));
        }
        let mode = b["mode"].as_str().ok_or_else(|| at("no mode".into()))?;
        if let Some(params) = b.get("params") {
            for (k, v) in params.as_object().ok_or_else(|| at("params".into()))? {
                v.as_str()
                    .ok_or_else(|| at(format!("param {k} is not a string")))?;
            }
        }
        let mut all = vec![("primary".to_string(), &b["primaryMetric"], mode == "sample")];
        for (key, m) in b["secondaryMetrics"]
            .as_object()
            .ok_or_else(|| at("no secondaryMetrics".into()))?
        {
            all.push((key.clone(), m, false));
        }
        for (key, m, histogram) in all {
            let at = |why: &str| at(format!("{key}: {why}"));
            let score = m["score"]
                .as_f64()
                .ok_or_else(|| at("score is not a number"))?;
            m.get("scoreError").ok_or_else(|| at("no scoreError"))?;
            m["scoreUnit"].as_str().ok_or_else(|| at("no scoreUnit"))?;
            let conf = m["scoreConfidence"]
                .as_array()
                .ok_or_else(|| at("no scoreConfidence"))?;
            if conf.len() != 2 {
                return Err(at("scoreConfidence is not [low, high]"));
            }
            let raw: Vec<&Value> = if histogram {
                let h = m["rawDataHistogram"]
                    .as_array()
                    .ok_or_else(|| at("rawDataHistogram.flatMap of undefined"))?;
                let mut values = Vec::new();
                for fork in h {
                    for iteration in fork.as_array().ok_or_else(|| at("fork"))? {
                        for pair in iteration.as_array().ok_or_else(|| at("iteration"))? {
                            values.push(&pair.as_array().ok_or_else(|| at("pair"))?[0]);
                        }
                    }
                }
                values
            } else {
                let r = m["rawData"]
                    .as_array()
                    .ok_or_else(|| at("rawData.flatMap of undefined"))?;
                let mut values = Vec::new();
                for fork in r {
                    values.extend(fork.as_array().ok_or_else(|| at("fork"))?);
                }
                values
            };
            let (mut min, mut max) = (score, score);
            for v in raw {
                let v = v
                    .as_f64()
                    .ok_or_else(|| at(&format!("raw score {v} is NaN to Math.min")))?;
                min = min.min(v);
                max = max.max(v);
            }
            if !(min.is_finite() && max.is_finite()) {
                return Err(at("min or max is not finite"));
            }
            metrics += 1;
        }
    }
    Ok(metrics)
}

#[test]
fn sample_mode_json_is_laid_out_as_jmh_writes_it() {
    let run = sample_run("json");
    let doc = run.json();
    let e = &doc[0];
    assert_eq!(e["mode"], "sample");
    let pm = &e["primaryMetric"];
    assert!(pm.get("rawData").is_none(), "{pm:#}");
    let h = pm["rawDataHistogram"].as_array().unwrap();
    assert_eq!(h.len(), 2, "[fork]");
    let mut count = 0;
    let mut lowest = f64::INFINITY;
    for fork in h {
        let iterations = fork.as_array().unwrap();
        assert_eq!(iterations.len(), 2, "[fork][iteration]");
        for iteration in iterations {
            let pairs = iteration.as_array().unwrap();
            assert!(!pairs.is_empty());
            let mut previous = 0.0;
            for pair in pairs {
                let (value, n) = (pair[0].as_f64().unwrap(), pair[1].as_u64().unwrap());
                assert!(
                    value > previous,
                    "[[value, count]] lowest first: {iteration}"
                );
                previous = value;
                lowest = lowest.min(value);
                count += n;
            }
        }
    }
    assert_eq!(count, e["boardbench"]["samples"].as_u64().unwrap());
    assert!(count >= 4, "at least one invocation per iteration");
    let p0 = &e["secondaryMetrics"]["p0.00"];
    assert_eq!(
        p0["score"].as_f64().unwrap(),
        lowest,
        "the lowest value written"
    );
    // Score, Error and the percentiles are the file's own samples', as JMH's are: what
    // a reader computes from rawDataHistogram with JMH's formulas.
    let mut samples: Vec<(f64, u64)> = h
        .iter()
        .flat_map(|f| f.as_array().unwrap())
        .flat_map(|i| i.as_array().unwrap())
        .map(|p| (p[0].as_f64().unwrap(), p[1].as_u64().unwrap()))
        .collect();
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = count as f64;
    let mean = samples.iter().map(|&(v, c)| v * c as f64).sum::<f64>() / n;
    let score = pm["score"].as_f64().unwrap();
    assert!(
        (score - mean).abs() <= 1e-12 * mean,
        "{score} against {mean}"
    );
    let variance = samples
        .iter()
        .map(|&(v, c)| (v - mean).powi(2) * c as f64)
        .sum::<f64>()
        / (n - 1.0);
    if count > 2 {
        // t(0.9995, n − 1) lies between the normal's 3.2905 and t(0.9995, 3) = 12.924.
        let t = pm["scoreError"].as_f64().unwrap() / (variance.sqrt() / n.sqrt());
        assert!(t > 3.29 && t < 12.93, "{t}: {pm:#}");
    }
    let at = |rank: u64| {
        let mut seen = 0;
        samples
            .iter()
            .find(|&&(_, c)| {
                seen += c;
                seen >= rank
            })
            .map_or(samples.last().unwrap().0, |p| p.0)
    };
    let pos = 50.0 * (n + 1.0) / 100.0;
    let (lower, upper) = (at(pos.floor() as u64), at(pos.floor() as u64 + 1));
    let p50 = lower + (upper - lower) * (pos - pos.floor());
    assert_eq!(
        pm["scorePercentiles"]["50.0"].as_f64().unwrap(),
        p50,
        "JMH's estimator"
    );
    assert_eq!(
        e["secondaryMetrics"]["p0.50"]["score"].as_f64().unwrap(),
        p50
    );
    // The same layout as JMH's own sample files: the same keys in the same order, with
    // the same JSON types, boardbench's two extra fields apart.
    let text = &run.stdout;
    for (file, version) in [
        ("victoriengb-sample-jmh1.37.json", "1.37"),
        ("vietj-sample-jmh1.21.json", "1.21"),
    ] {
        let real_text = read(file);
        let real: Value = serde_json::from_str(&real_text).unwrap();
        let r = &real[0];
        assert_eq!(r["jmhVersion"], version);
        let ours: Vec<String> = key_order(text, &[])
            .into_iter()
            .filter(|k| k != "environment" && k != "boardbench")
            .collect();
        let mut theirs = key_order(&real_text, &[]);
        if r.get("params").is_none() {
            theirs.insert(theirs.len() - 2, "params".into());
        }
        assert_eq!(ours, theirs, "{file}");
        for key in theirs.iter().filter(|k| r.get(k.as_str()).is_some()) {
            assert_eq!(type_of(&e[key]), type_of(&r[key]), "{key} against {file}");
        }
        assert_eq!(
            key_order(text, &["primaryMetric"]),
            key_order(&real_text, &["primaryMetric"]),
            "{file}"
        );
        let pct = |text: &str| key_order(text, &["primaryMetric", "scorePercentiles"]);
        assert_eq!(pct(text), pct(&real_text));
        // The percentile metrics: JMH 1.37's names (p0.00), 1.21's (method·p0.00).
        let names = |v: &Value| -> Vec<String> {
            v["secondaryMetrics"]
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.rsplit('·').next().unwrap().to_string())
                .filter(|k| k.starts_with("p0.") || k == "p1.00")
                .collect()
        };
        let mut ours = names(e);
        let mut theirs = names(r);
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs, "{file}");
        let key = |v: &Value| {
            v["secondaryMetrics"]
                .as_object()
                .unwrap()
                .keys()
                .find(|k| k.ends_with("p0.99"))
                .unwrap()
                .clone()
        };
        let (ours, theirs) = (
            &e["secondaryMetrics"][key(e)],
            &r["secondaryMetrics"][key(r)],
        );
        for field in [
            "score",
            "scoreError",
            "scoreConfidence",
            "scorePercentiles",
            "scoreUnit",
            "rawData",
        ] {
            assert_eq!(
                type_of(&ours[field]),
                type_of(&theirs[field]),
                "p0.99 {field} against {file}"
            );
        }
        assert_eq!(
            ours["scoreConfidence"], theirs["scoreConfidence"],
            "[NaN, NaN]"
        );
    }
    assert!(
        e["secondaryMetrics"].get("p0.99").is_some(),
        "p0.99 as JMH 1.37, the version the file claims"
    );
}

#[test]
fn every_jmh_field_is_there_with_its_type() {
    let run = bb_zstd(&[
        "--op",
        "compress",
        "--threads",
        "1",
        "--forks",
        "0",
        "--format",
        "json",
    ]);
    run.assert_ok();
    let e = &run.json()[0];
    // Read back as kotlinx-serialization or Jackson data classes would: each field
    // present with its type.
    for (key, kind) in [
        ("jmhVersion", "string"),
        ("benchmark", "string"),
        ("mode", "string"),
        ("threads", "integer"),
        ("forks", "integer"),
        ("jvm", "string"),
        ("jvmArgs", "array"),
        ("jdkVersion", "string"),
        ("vmName", "string"),
        ("vmVersion", "string"),
        ("warmupIterations", "integer"),
        ("warmupTime", "string"),
        ("warmupBatchSize", "integer"),
        ("measurementIterations", "integer"),
        ("measurementTime", "string"),
        ("measurementBatchSize", "integer"),
        ("params", "object"),
        ("primaryMetric", "object"),
        ("secondaryMetrics", "object"),
    ] {
        assert_eq!(type_of(&e[key]), kind, "{key}: {}", e[key]);
    }
    assert!(
        e["jvm"].as_str().unwrap().ends_with("bb-zstd"),
        "{}",
        e["jvm"]
    );
    assert!(e["jvmArgs"]
        .as_array()
        .unwrap()
        .contains(&Value::from("--quick")));
    assert_eq!(e["vmName"], "n/a");
    assert_eq!(e["jmhVersion"], "1.37");
    assert_eq!(e["boardbench"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(e["measurementTime"], "100 ms");
    assert_eq!(e["forks"], 0);
}

#[test]
fn visualizer_reads_a_boardbench_sample_file_without_a_missing_field_or_nan() {
    let run = sample_run("json");
    let metrics = visualizer_extract(&run.json()).unwrap_or_else(|e| panic!("{e}\n{}", run.stdout));
    assert!(
        metrics > 8,
        "the primary metric and the 8 percentiles at least: {metrics}"
    );
    let thrpt = bb_zstd(&[
        "--op",
        "compress",
        "--threads",
        "1",
        "--forks",
        "0",
        "--format",
        "json",
    ]);
    thrpt.assert_ok();
    visualizer_extract(&thrpt.json()).unwrap();
    // The extractor itself, on JMH's own sample files.
    for file in [
        "victoriengb-sample-jmh1.37.json",
        "vietj-sample-jmh1.21.json",
    ] {
        let real: Value = serde_json::from_str(&read(file)).unwrap();
        visualizer_extract(&real).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    // ... which finds what crashed JMH Visualizer: a sample entry with only rawData.
    let mut old = run.json();
    let pm = old[0]["primaryMetric"].as_object_mut().unwrap();
    pm.remove("rawDataHistogram");
    pm.insert("rawData".into(), serde_json::json!([[1.0]]));
    assert!(visualizer_extract(&old)
        .unwrap_err()
        .contains("rawDataHistogram"));
}

/// The keys of JMH's `-rf json` entries, and of their metrics (primary and secondary):
/// what a reader that refuses unknown keys (Jackson's FAIL_ON_UNKNOWN_PROPERTIES,
/// kotlinx.serialization's default) declares.
const JMH_ENTRY_KEYS: [&str; 19] = [
    "jmhVersion",
    "benchmark",
    "mode",
    "threads",
    "forks",
    "jvm",
    "jvmArgs",
    "jdkVersion",
    "vmName",
    "vmVersion",
    "warmupIterations",
    "warmupTime",
    "warmupBatchSize",
    "measurementIterations",
    "measurementTime",
    "measurementBatchSize",
    "params",
    "primaryMetric",
    "secondaryMetrics",
];
const JMH_METRIC_KEYS: [&str; 7] = [
    "score",
    "scoreError",
    "scoreConfidence",
    "scorePercentiles",
    "scoreUnit",
    "rawData",
    "rawDataHistogram",
];

/// `doc` read as a strict reader reads it: the keys JMH's data classes lack, with where.
pub(crate) fn unknown_keys(doc: &Value) -> Vec<String> {
    let mut unknown = Vec::new();
    let mut check = |o: &Value, allowed: &[&str], at: String| match o.as_object() {
        Some(o) => unknown.extend(
            o.keys()
                .filter(|k| !allowed.contains(&k.as_str()))
                .map(|k| format!("{at}{k}")),
        ),
        None => unknown.push(format!("{at}: not an object")),
    };
    for (i, e) in doc.as_array().unwrap().iter().enumerate() {
        check(e, &JMH_ENTRY_KEYS, format!("[{i}]."));
        check(
            &e["primaryMetric"],
            &JMH_METRIC_KEYS,
            format!("[{i}].primaryMetric."),
        );
        for (name, m) in e["secondaryMetrics"].as_object().unwrap() {
            check(
                m,
                &JMH_METRIC_KEYS,
                format!("[{i}].secondaryMetrics.{name}."),
            );
        }
    }
    unknown
}

#[test]
fn the_jmh_format_opens_in_a_reader_that_refuses_unknown_keys() {
    // The whitelist is JMH's: every real JMH file here keeps to it.
    for file in [
        "openjdk-golden.json",
        "victoriengb-sample-jmh1.37.json",
        "vietj-sample-jmh1.21.json",
        "dennisrippinger-thrpt-10forks-jmh1.19.json",
        "mariofusco-avgt-nan-secondary.json",
        "gab-jmh-params.json",
    ] {
        let real: Value = serde_json::from_str(&read(file)).unwrap();
        assert_eq!(unknown_keys(&real), Vec::<String>::new(), "{file}");
    }
    let d = crate::support::TempDir::new("jmh-strict");
    let sample = sample_run("jmh");
    let strict = sample.json();
    assert_eq!(
        unknown_keys(&strict),
        Vec::<String>::new(),
        "{}",
        sample.stdout
    );
    assert!(strict[0]["primaryMetric"].get("rawDataHistogram").is_some());
    assert!(strict[0]["secondaryMetrics"].get("p0.99").is_some());
    visualizer_extract(&strict).unwrap();
    // --format json has boardbench's extras, which a strict reader refuses.
    let ours = sample_run("json").json();
    assert_eq!(
        unknown_keys(&ours)[..2],
        ["[0].boardbench", "[0].environment"]
    );
    let thrpt = bb_zstd(&[
        "--op",
        "compress",
        "--threads",
        "1",
        "--forks",
        "0",
        "--format",
        "jmh",
    ]);
    thrpt.assert_ok();
    let doc = thrpt.json();
    assert_eq!(unknown_keys(&doc), Vec::<String>::new(), "{}", thrpt.stdout);
    assert!(doc[0]["secondaryMetrics"].get("MB/s").is_some());
    // bb-compare reads both forms: the strict file against boardbench's own.
    let write = |name: &str, v: &Value| {
        let path = d.join(name);
        std::fs::write(&path, serde_json::to_string(v).unwrap()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (strict, ours) = (write("strict.json", &strict), write("ours.json", &ours));
    let cmp = run_with(
        env!("CARGO_BIN_EXE_bb-compare"),
        &["--format", "json", &ours, &strict],
        &[],
    );
    let v = cmp.json();
    let row = &v["rows"][0];
    assert_eq!(row["benchmark"], "bb.zstd.decompress", "{v:#}");
    assert!(row["results"][1]["ratio"].as_f64().is_some(), "{v:#}");
    // Two forks a side: the noise band, never the samples pooled.
    assert_eq!(row["results"][1]["test"], "noise band", "{v:#}");
}

/// The cells of a CSV line as JMH writes them (quoted or bare, no commas inside quotes
/// in these files but params, which are handled).
fn cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    out.push(cell);
    out
}

#[test]
fn csv_is_written_as_jmh_writes_it() {
    let run = sample_run("csv");
    let text = &run.stdout;
    assert!(
        text.ends_with("\r\n") && !text.replace("\r\n", "").contains('\n'),
        "CRLF everywhere"
    );
    let lines: Vec<&str> = text.split_terminator("\r\n").collect();
    let header = cells(lines[0]);
    let golden = read("openjdk-golden.csv");
    let golden_header = cells(golden.lines().next().unwrap());
    assert_eq!(header[..7], golden_header[..7], "JMH's seven columns");
    assert_eq!(
        lines[0].split(',').take(7).collect::<Vec<_>>(),
        golden
            .lines()
            .next()
            .unwrap()
            .split(',')
            .take(7)
            .collect::<Vec<_>>()
    );
    let params: Vec<&String> = header.iter().filter(|h| h.starts_with("Param: ")).collect();
    let mut sorted = params.clone();
    sorted.sort();
    assert_eq!(
        params, sorted,
        "param columns sorted by name, as JMH's TreeSet"
    );
    assert_eq!(
        header.iter().position(|h| h == "User (s)").unwrap(),
        7 + params.len(),
        "boardbench's columns after the params"
    );
    let rows: Vec<Vec<String>> = lines[1..].iter().map(|l| cells(l)).collect();
    // Sample mode as in JMH's real CSV: the primary row counts samples, the percentile
    // rows (JMH 1.37's bench:p0.00 ..., older bench:method·p0.00) count 1, no error.
    let real = read("regancz-sample-jmh.csv");
    let real_rows: Vec<Vec<String>> = real.lines().skip(1).map(cells).collect();
    let real_sample = real_rows.iter().find(|r| r[1] == "sample").unwrap();
    assert!(real_sample[3].parse::<u64>().unwrap() > 1000);
    let real_p: Vec<&Vec<String>> = real_rows
        .iter()
        .filter(|r| r[0].starts_with(&format!("{}:", real_sample[0])))
        .collect();
    let ours_p: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[0].starts_with(&format!("{}:p", rows[0][0])))
        .collect();
    assert_eq!(ours_p.len(), real_p.len(), "the eight percentile rows");
    for (ours, theirs) in ours_p.iter().zip(&real_p) {
        assert_eq!(ours[0].rsplit(':').next(), theirs[0].rsplit('·').next());
        assert_eq!((ours[3].as_str(), ours[5].as_str()), ("1", "NaN"));
        assert_eq!((theirs[3].as_str(), theirs[5].as_str()), ("1", "NaN"));
    }
    assert_eq!(rows[0][1], "sample");
    assert!(
        rows[0][3].parse::<u64>().unwrap() >= 4,
        "samples, not 4 iterations: {:?}",
        rows[0]
    );
    // Score and error as %f: six decimals, never an exponent, like every JMH row.
    let six = |s: &str| {
        s == "NaN"
            || s.split_once('.').is_some_and(|(i, d)| {
                d.len() == 6
                    && i.trim_start_matches('-')
                        .chars()
                        .all(|c| c.is_ascii_digit())
            })
    };
    for r in rows.iter().chain(&real_rows) {
        assert!(six(&r[4]) && six(&r[5]), "{r:?}");
    }
}

#[test]
fn csv_params_are_bare_unless_jmh_would_quote_them() {
    let run = bb_zstd(&[
        "--op",
        "compress",
        "--threads",
        "1",
        "--forks",
        "0",
        "--format",
        "csv",
    ]);
    run.assert_ok();
    let lines: Vec<&str> = run.stdout.split_terminator("\r\n").collect();
    let header = cells(lines[0]);
    let level = header.iter().position(|h| h == "Param: level").unwrap();
    let raw_cells: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(raw_cells[level], "3", "{}", lines[1]);
    // The golden file writes [value1] bare and "value4" quoted and doubled.
    let golden = read("openjdk-golden.csv");
    let row = golden.lines().nth(1).unwrap();
    assert!(
        row.ends_with(",value0,[value1],{value2},'value3',\"\"\"value4\"\"\""),
        "{row}"
    );
}

#[test]
fn bm_is_byte_for_byte_rubys_benchmark_bm() {
    let run = bb_zstd(&[
        "--threads",
        "1,2",
        "--lock",
        "none",
        "--forks",
        "0",
        "--format",
        "bm",
    ]);
    run.assert_ok();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", run.stdout);
    let width = lines[0].len() - "      user     system      total        real".len();
    let mut rows = Vec::new();
    for line in &lines[1..] {
        let (label, rest) = line.split_at(width);
        let numbers: Vec<String> = rest
            .replace(['(', ')'], " ")
            .split_whitespace()
            .map(String::from)
            .collect();
        assert_eq!(numbers.len(), 4, "{line}");
        rows.push((label.trim_end().to_string(), numbers));
    }
    if run_with("sh", &["-c", "command -v ruby"], &[]).code != 0 {
        eprintln!("skipped the comparison with Ruby: ruby is not installed (scripts/setup.sh test installs it)");
        return;
    }
    // Ruby's own Benchmark.bm prints the same rows: Benchmark.measure answers with the
    // times bb-zstd printed (total = utime + stime + cutime, so cutime is the rest).
    let longest = rows.iter().map(|(l, _)| l.chars().count()).max().unwrap();
    let items: Vec<String> = rows
        .iter()
        .map(|(l, n)| format!("[{l:?}, {}, {}, {}, {}]", n[0], n[1], n[2], n[3]))
        .collect();
    let script = format!(
        r#"require "benchmark"
ROWS = [{}]
def Benchmark.measure(label = "", &blk)
  _, u, s, t, r = ROWS.shift
  Benchmark::Tms.new(u, s, t - u - s, 0.0, r, label)
end
Benchmark.bm({longest}) {{ |x| ROWS.map(&:first).each {{ |l| x.report(l) {{}} }} }}
"#,
        items.join(", ")
    );
    let ruby = run_with("ruby", &["-e", &script], &[]);
    assert_eq!(ruby.code, 0, "{}", ruby.stderr);
    assert_eq!(run.stdout, ruby.stdout, "bb-zstd, then Ruby");
}
