//! Integration tests of bb-compare: the real binary on crafted result files with known
//! verdicts (a clear regression, a change inside noise, benchmarks missing on one side,
//! mismatched params, JMH's own files, malformed input), every format, and the SVG chart
//! rendered by a real headless chromium.

use crate::support::{run_bounded, run_in, run_with, Run, TempDir};
use serde_json::{json, Value};

const EXE: &str = env!("CARGO_BIN_EXE_bb-compare");

/// A JMH-layout entry whose rawData is `raw`, a fork per value: the fork is what
/// bb-compare's verdicts rest on.
fn entry(name: &str, mode: &str, params: Value, raw: &[f64], unit: &str) -> Value {
    let mean = raw.iter().sum::<f64>() / raw.len() as f64;
    let forks: Vec<Vec<f64>> = raw.iter().map(|&v| vec![v]).collect();
    json!({
        "jmhVersion": "1.37", "benchmark": name, "mode": mode, "threads": 1, "forks": raw.len(),
        "params": params,
        "primaryMetric": {
            "score": mean, "scoreError": "NaN", "scoreConfidence": ["NaN", "NaN"],
            "scorePercentiles": {}, "scoreUnit": unit, "rawData": forks
        },
        "secondaryMetrics": {}
    })
}

fn write(dir: &TempDir, name: &str, entries: Vec<Value>) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&Value::Array(entries)).unwrap(),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn compare(args: &[&str]) -> Run {
    run_with(EXE, args, &[])
}

const STEADY: [f64; 5] = [100.0, 101.0, 99.0, 100.5, 99.5];

fn scaled(f: f64) -> Vec<f64> {
    STEADY.iter().map(|v| v * f).collect()
}

/// The text table's line for a benchmark.
fn line<'a>(run: &'a Run, name: &str) -> &'a str {
    run.stdout
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no line for {name}:\n{}", run.stdout))
}

#[test]
fn a_clear_regression_is_slower_and_exit_1() {
    let d = TempDir::new("cmp-regression");
    let p = json!({"threads": "1"});
    let base = write(
        &d,
        "base.json",
        vec![entry("bb.x.op", "thrpt", p.clone(), &STEADY, "ops/s")],
    );
    let new = write(
        &d,
        "new.json",
        vec![entry("bb.x.op", "thrpt", p, &scaled(0.8), "ops/s")],
    );
    let run = compare(&[&base, &new]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let l = line(&run, "bb.x.op");
    assert!(l.contains("0.800") && l.ends_with("slower"), "{l}");
    assert!(
        run.stderr.contains("slower than") && run.stderr.lines().count() == 1,
        "{}",
        run.stderr
    );
    // The other way round it is faster, and the exit code is 0.
    let run = compare(&[&new, &base]);
    run.assert_ok();
    assert!(line(&run, "bb.x.op").ends_with("faster"));
}

#[test]
fn time_per_op_modes_are_lower_is_better() {
    let d = TempDir::new("cmp-avgt");
    let base = write(
        &d,
        "base.json",
        vec![entry("bb.x.lat", "avgt", json!({}), &STEADY, "us/op")],
    );
    let new = write(
        &d,
        "new.json",
        vec![entry("bb.x.lat", "avgt", json!({}), &scaled(1.25), "us/op")],
    );
    let run = compare(&[&base, &new]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(line(&run, "bb.x.lat").ends_with("slower"));
    let run = compare(&[&new, &base]);
    run.assert_ok();
    assert!(line(&run, "bb.x.lat").ends_with("faster"));
}

#[test]
fn changes_inside_noise_or_threshold_pass() {
    let d = TempDir::new("cmp-noise");
    let base = write(
        &d,
        "base.json",
        vec![
            entry(
                "bb.x.noisy",
                "thrpt",
                json!({}),
                &[50.0, 150.0, 60.0, 140.0, 100.0],
                "ops/s",
            ),
            entry("bb.x.close", "thrpt", json!({}), &STEADY, "ops/s"),
        ],
    );
    let new = write(
        &d,
        "new.json",
        vec![
            entry(
                "bb.x.noisy",
                "thrpt",
                json!({}),
                &[40.0, 130.0, 50.0, 120.0, 60.0],
                "ops/s",
            ),
            entry("bb.x.close", "thrpt", json!({}), &scaled(0.97), "ops/s"),
        ],
    );
    let run = compare(&[&base, &new]);
    run.assert_ok();
    assert!(line(&run, "bb.x.noisy").ends_with("noise"));
    assert!(line(&run, "bb.x.close").ends_with("same"));
    // A tighter threshold turns the 3% into a significant slowdown.
    let run = compare(&["--threshold", "1%", &base, &new]);
    assert_eq!(run.code, 1);
    assert!(line(&run, "bb.x.close").ends_with("slower"));
    // A looser alpha does not make noise significant when p is far above it.
    let run = compare(&["--alpha", "0.05", &base, &new]);
    run.assert_ok();
}

#[test]
fn missing_benchmarks_and_mismatched_params_are_reported() {
    let d = TempDir::new("cmp-missing");
    let base = write(
        &d,
        "base.json",
        vec![
            entry("bb.x.a", "thrpt", json!({"threads": "4"}), &STEADY, "ops/s"),
            entry("bb.x.only_base", "thrpt", json!({}), &STEADY, "ops/s"),
        ],
    );
    let new = write(
        &d,
        "new.json",
        vec![
            entry(
                "bb.x.a",
                "thrpt",
                json!({"threads": "2"}),
                &scaled(0.5),
                "ops/s",
            ),
            entry("bb.x.only_new", "thrpt", json!({}), &STEADY, "ops/s"),
        ],
    );
    let run = compare(&[&base, &new]);
    run.assert_ok();
    let (b, n) = ("base", "new");
    assert!(
        run.stdout.contains(&format!(
            "missing: bb.x.only_base (thrpt) is in {b} but not in {n}"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "missing: bb.x.only_new (thrpt) is in {n} but not in {b}"
        )),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(&format!(
        "params: bb.x.a (thrpt) in {b} has params (threads=4), {n} has (threads=2); --ignore-params threads compares them anyway"
    )), "{}", run.stdout);
    // Told to ignore threads, the rows match, and the halving is a regression.
    let run = compare(&["--ignore-params", "threads", &base, &new]);
    assert_eq!(run.code, 1);
    assert!(line(&run, "bb.x.a").ends_with("slower"));
}

#[test]
fn jmh_files_with_nan_strings_and_other_units_compare() {
    let d = TempDir::new("cmp-jmh");
    let base = write(
        &d,
        "bb.json",
        vec![entry(
            "org.x.Rpc.sync",
            "thrpt",
            json!({"size": "1024"}),
            &STEADY,
            "ops/s",
        )],
    );
    // JMH wrote the same throughput in ops/ms.
    let ms: Vec<f64> = STEADY.iter().map(|v| v / 1000.0).collect();
    let jmh = write(
        &d,
        "jmh.json",
        vec![entry(
            "org.x.Rpc.sync",
            "thrpt",
            json!({"size": "1024"}),
            &ms,
            "ops/ms",
        )],
    );
    let run = compare(&["--format", "json", &base, &jmh]);
    run.assert_ok();
    let v = run.json();
    let cell = &v["rows"][0]["results"][1];
    assert!(
        (cell["score"].as_f64().unwrap() - 100.0).abs() < 1e-9,
        "{v:#}"
    );
    assert_eq!(cell["verdict"], "same");
    assert_eq!(v["rows"][0]["unit"], "ops/s");
    assert_eq!(v["rows"][0]["results"][0]["scoreError"], "NaN");
}

#[test]
fn many_files_make_one_table_with_a_column_each_and_every_format() {
    let d = TempDir::new("cmp-many");
    let files: Vec<String> = [1.0, 0.5, 2.0]
        .iter()
        .enumerate()
        .map(|(i, f)| {
            write(
                &d,
                &format!("board{i}.json"),
                vec![
                    entry(
                        "bb.zstd.compress",
                        "thrpt",
                        json!({"threads": "1"}),
                        &scaled(*f),
                        "ops/s",
                    ),
                    entry(
                        "bb.zstd.compress",
                        "thrpt",
                        json!({"threads": "2"}),
                        &scaled(1.9 * f),
                        "ops/s",
                    ),
                ],
            )
        })
        .collect();
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let run = compare(&args);
    assert_eq!(run.code, 1, "board1 is slower than board0");
    // Mode and unit are the same in every row: named once above the table.
    assert_eq!(
        run.stdout.lines().next(),
        Some("all rows: Mode thrpt, Units ops/s")
    );
    let header = run.stdout.lines().nth(1).unwrap();
    assert_eq!(header.matches("Verdict").count(), 2, "{header}");
    let l = run
        .stdout
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["bb.zstd.compress", "1"]))
        .unwrap();
    assert!(
        l.contains("0.500x") && l.contains("2.00x") && l.contains("slower") && l.contains("faster"),
        "{l}"
    );
    let md = compare(&[&["--format", "markdown"], &args[..]].concat());
    assert!(
        md.stdout
            .starts_with("| Benchmark | (threads) | Mode | Units |"),
        "{}",
        md.stdout
    );
    assert!(md.stdout.lines().nth(1).unwrap().starts_with("|---|---:|"));
    let csv = compare(&[&["--format", "csv"], &args[..]].concat());
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
    let out = d.join("report.json");
    let svg = d.join("chart.svg");
    let run = compare(
        &[
            &[
                "--output",
                out.to_str().unwrap(),
                "--svg",
                svg.to_str().unwrap(),
            ],
            &args[..],
        ]
        .concat(),
    );
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("\nBenchmark"), "text still on stdout");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 3);
    assert_eq!(v["regression"], true);
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("bb.zstd.compress vs threads"));
    assert_eq!(svg.matches("<polyline").count(), 3);
}

#[test]
fn malformed_and_missing_files_are_clear_errors() {
    let d = TempDir::new("cmp-bad");
    let good = write(
        &d,
        "good.json",
        vec![entry("bb.x", "thrpt", json!({}), &STEADY, "ops/s")],
    );
    let bad = d.join("bad.json");
    std::fs::write(&bad, "[{\"benchmark\": \"bb.x\", \"mode\": ").unwrap();
    let bad = bad.to_str().unwrap();
    let run = compare(&[&good, bad]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(bad) && run.stderr.contains("not a JMH/boardbench JSON result file"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
    let wrong_shape = write(&d, "shape.json", vec![json!({"benchmark": "bb.x"})]);
    let run = compare(&[&good, &wrong_shape]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("entry 1: missing \"mode\""),
        "{}",
        run.stderr
    );
    let missing = d.join("nope.json");
    let run = compare(&[&good, missing.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("nope.json: no such file"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_flags_get_one_line_and_exit_2() {
    for args in [
        &["--alpha", "2", "a.json"][..],
        &["--threshold", "x", "a.json"],
        &["--format", "xml", "a.json"],
        &["--bogus"],
        &[],
    ] {
        let run = compare(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
    }
    let help = compare(&["--help"]);
    help.assert_ok();
    assert!(help.stdout.contains("--ignore-params") && help.stdout.contains("Exit codes"));
}

#[test]
fn env_prints_the_environment_record() {
    let run = compare(&["--env"]);
    run.assert_ok();
    let v = run.json();
    assert_eq!(v["arch"], std::env::consts::ARCH);
    assert!(v["coresOnline"].as_u64().unwrap() >= 1);
}

#[test]
#[ignore = "needs chromium (scripts/setup.sh test); run by make test"]
fn svg_renders_in_headless_chromium() {
    let d = TempDir::new("cmp-chromium");
    let a = write(
        &d,
        "a.json",
        vec![
            entry(
                "bb.zstd.compress",
                "thrpt",
                json!({"threads": "1"}),
                &STEADY,
                "ops/s",
            ),
            entry(
                "bb.zstd.compress",
                "thrpt",
                json!({"threads": "2"}),
                &scaled(1.9),
                "ops/s",
            ),
            entry("bb.ipc.call", "avgt", json!({}), &STEADY, "us/op"),
        ],
    );
    let b = write(
        &d,
        "b.json",
        vec![
            entry(
                "bb.zstd.compress",
                "thrpt",
                json!({"threads": "1"}),
                &scaled(0.7),
                "ops/s",
            ),
            entry(
                "bb.zstd.compress",
                "thrpt",
                json!({"threads": "2"}),
                &scaled(1.2),
                "ops/s",
            ),
            entry("bb.ipc.call", "avgt", json!({}), &scaled(1.1), "us/op"),
        ],
    );
    let svg = d.join("chart.svg");
    let run = compare(&["--svg", svg.to_str().unwrap(), &a, &b]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let png = d.join("chart.png");
    let profile = d.join("profile");
    let shot = run_with(
        "timeout",
        &[
            "120",
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--screenshot={}", png.display()),
            "--window-size=980,720",
            &format!("file://{}", svg.display()),
        ],
        &[],
    );
    assert_eq!(shot.code, 0, "chromium failed: {}", shot.stderr);
    let bytes =
        std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot ({e}): {}", shot.stderr));
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), (980, 720));
    let channels = info.color_type.samples();
    let pixels = &pixels[..info.buffer_size()];
    let distinct: std::collections::HashSet<&[u8]> = pixels.chunks(channels).collect();
    assert!(
        distinct.len() > 8,
        "the screenshot has only {} colours",
        distinct.len()
    );
    // The bars' colours are on the image: the first run's blue and the second's orange.
    for colour in [[0x4e, 0x79, 0xa7], [0xf2, 0x8e, 0x2b]] {
        assert!(
            pixels.chunks(channels).any(|p| p[..3] == colour),
            "no pixel of colour {colour:02x?}"
        );
    }
}

/// Two boards' results across three families: board2 1.5x to 2x faster at bb.zstd (beyond
/// noise), the same at bb.seek, and bb.rpc's transports within noise of each other.
fn two_boards(d: &TempDir) -> (String, String) {
    let noisy = |f: f64| -> Vec<f64> {
        [100.0, 160.0, 40.0, 130.0, 70.0]
            .iter()
            .map(|v| v * f)
            .collect()
    };
    let board = |zstd: [f64; 2], rpc: [f64; 2]| {
        let mut rows = vec![
            entry(
                "bb.zstd.compress",
                "thrpt",
                json!({"threads": "1", "level": "3", "input": "city.json"}),
                &scaled(zstd[0]),
                "ops/s",
            ),
            entry(
                "bb.zstd.decompress",
                "thrpt",
                json!({"threads": "1", "level": "3", "input": "city.json"}),
                &scaled(zstd[1]),
                "ops/s",
            ),
        ];
        for (transport, f) in [("unix", rpc[0]), ("tcp", rpc[1])] {
            rows.push(entry(
                "bb.rpc.sync",
                "thrpt",
                json!({"transport": transport, "codec": "msgpack", "payload": "16"}),
                &noisy(f),
                "ops/s",
            ));
        }
        for client in ["plain", "stream"] {
            for read in ["4k", "1m"] {
                rows.push(entry(
                    "bb.seek.sequential",
                    "ss",
                    json!({"client": client, "read-size": read, "source": "file:./data", "key": "random-16mb.txt"}),
                    &STEADY,
                    "ms/op",
                ));
            }
        }
        rows
    };
    (
        write(d, "board1.json", board([1.0, 1.0], [1.0, 1.0])),
        write(d, "board2.json", board([1.5, 2.0], [1.2, 0.9])),
    )
}

#[test]
fn the_answer_for_two_boards_is_last_within_80_columns_and_agrees_with_the_rows() {
    let d = TempDir::new("cmp-answer");
    let (a, b) = two_boards(&d);
    let json = d.join("report.json");
    let run = compare(&[&a, &b, "--output", json.to_str().unwrap()]);
    run.assert_ok();
    let text = &run.stdout;
    let (table, block) = text
        .split_once("\n== bb-compare: the answer ==\n")
        .unwrap_or_else(|| panic!("no answer block:\n{text}"));
    let answer: Vec<&str> = block.lines().collect();
    assert!(!answer.is_empty() && answer.len() <= 8, "{block}");
    for l in &answer {
        assert!(l.chars().count() <= 80, "{l:?}");
    }
    assert_eq!(
        answer[0],
        "board2 is faster at bb.zstd.* (2 rows): 1.50x to 2.00x, all beyond noise"
    );
    assert!(
        answer
            .iter()
            .any(|l| l.starts_with("bb.rpc.*: nothing beyond noise (2 rows")),
        "{block}"
    );
    assert!(
        answer
            .iter()
            .any(|l| l.starts_with("bb.seek.*: same within 5% (4 rows; could see ")),
        "{block}"
    );
    // The rows say the same: both bb.zstd rows faster, bb.seek's the same.
    let verdict = |l: &str| l.split_whitespace().last().unwrap().to_string();
    let rows = |name: &str| -> Vec<String> {
        table
            .lines()
            .filter(|l| l.starts_with(name))
            .map(verdict)
            .collect()
    };
    assert_eq!(rows("bb.zstd."), ["faster", "faster"], "{table}");
    assert_eq!(rows("bb.seek.sequential"), ["same"; 4], "{table}");
    assert!(rows("bb.rpc.sync").iter().all(|v| v == "noise"), "{table}");
    // A section per family, without the columns that hold one value there.
    assert!(
        table.contains(
            "in bb.zstd.* (2 rows): input=city.json, level=3, threads=1, Mode thrpt, Units ops/s\n"
        ),
        "{table}"
    );
    // The ratio's range and what it could see take some ten columns more than a ±.
    assert!(table.lines().all(|l| l.chars().count() <= 130), "{table}");
    // The JSON report carries the same lines.
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["answer"]["program"], "bb-compare");
    let lines: Vec<&str> = v["answer"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines, answer);
    // The CSV keeps every column.
    let csv = compare(&["--format", "csv", &a, &b]);
    assert!(csv
        .stdout
        .lines()
        .next()
        .unwrap()
        .contains("\"Param: payload\""));
}

/// Every panel's title lines in an SVG, unescaped.
fn svg_titles(svg: &str) -> Vec<Vec<String>> {
    let mut panels: Vec<Vec<String>> = Vec::new();
    for line in svg.lines() {
        if line.starts_with("<rect x=") && line.contains("fill=\"#fafafa\"") {
            panels.push(Vec::new());
        }
        if let Some((_, rest)) = line.split_once("class=\"title\"") {
            let text = rest
                .split_once('>')
                .unwrap()
                .1
                .split("</text>")
                .next()
                .unwrap();
            panels.last_mut().unwrap().push(
                text.replace("&amp;", "&")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">"),
            );
        }
    }
    panels
}

#[test]
fn svg_titles_are_whole_and_carry_what_tells_panels_apart() {
    // The chart's font is 11 px; its widest characters advance 0.62 em.
    const ADVANCE: f64 = 0.62 * 11.0;
    const ROOM: f64 = 300.0 - 12.0;
    let d = TempDir::new("cmp-svg-titles");
    let (a, b) = two_boards(&d);
    let svg = d.join("chart.svg");
    compare(&[&a, &b, "--svg", svg.to_str().unwrap()]).assert_ok();
    let svg = std::fs::read_to_string(&svg).unwrap();
    let panels = svg_titles(&svg);
    // Headlines first: one per family.
    assert_eq!(panels[0][0], "bb.zstd.decompress", "{panels:?}");
    assert!(panels[1][0].starts_with("bb.rpc.sync"), "{panels:?}");
    assert!(panels[2][0].starts_with("bb.seek.sequential"), "{panels:?}");
    for lines in &panels {
        for l in lines {
            assert!(l.chars().count() as f64 * ADVANCE <= ROOM, "cut: {l:?}");
        }
        let whole = lines.join(" ");
        if whole.starts_with("bb.rpc.sync") {
            assert!(whole.contains("transport="), "{whole}");
            assert!(!whole.contains("payload"), "common to bb.rpc: {whole}");
        }
        if whole.starts_with("bb.seek.sequential") {
            assert!(
                whole.contains("client=") && whole.contains("read-size="),
                "{whole}"
            );
        }
    }
    let seek: Vec<String> = panels
        .iter()
        .filter(|l| l[0] == "bb.seek.sequential")
        .map(|l| l.join(" "))
        .collect();
    let mut distinct = seek.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), seek.len(), "{seek:?}");
    assert!(
        svg.contains("bb.rpc.*: all panels codec=msgpack, payload=16"),
        "{svg}"
    );
}

// ---------------------------------------------------------------------------------
// Real JMH files (tests/data/jmh, their origin in SOURCES.md) and boardbench's own.

fn data(name: &str) -> String {
    format!("{}/tests/data/jmh/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn read_data(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(name)).unwrap()).unwrap()
}

fn write_doc(dir: &TempDir, name: &str, doc: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

/// Every value of a metric (score, error, bounds, percentiles, raw data, histogram
/// values; not the counts) times `f`.
fn scale_metric(m: &mut Value, f: f64) {
    let scale = |v: &mut Value| {
        if let Some(x) = v.as_f64() {
            *v = Value::from(x * f);
        }
    };
    scale(&mut m["score"]);
    scale(&mut m["scoreError"]);
    for v in m["scoreConfidence"].as_array_mut().into_iter().flatten() {
        scale(v);
    }
    for v in m["scorePercentiles"].as_object_mut().into_iter().flatten() {
        scale(v.1);
    }
    // get_mut, not m["key"], which would add a null for a missing key.
    let forks = |m: &mut Value, key: &str| {
        m.get_mut(key)
            .and_then(Value::as_array_mut)
            .map(std::mem::take)
            .unwrap_or_default()
    };
    let mut raw = forks(m, "rawData");
    for fork in &mut raw {
        for v in fork.as_array_mut().unwrap() {
            scale(v);
        }
    }
    let mut histogram = forks(m, "rawDataHistogram");
    for fork in &mut histogram {
        for iteration in fork.as_array_mut().unwrap() {
            for pair in iteration.as_array_mut().unwrap() {
                scale(&mut pair[0]);
            }
        }
    }
    if let Some(v) = m.get_mut("rawData") {
        *v = Value::Array(raw);
    }
    if let Some(v) = m.get_mut("rawDataHistogram") {
        *v = Value::Array(histogram);
    }
}

/// A copy of a document with every entry's primary metric times `f`.
fn scaled_doc(doc: &Value, f: f64) -> Value {
    let mut doc = doc.clone();
    for e in doc.as_array_mut().unwrap() {
        scale_metric(&mut e["primaryMetric"], f);
    }
    doc
}

#[test]
fn a_jmh_sample_file_of_one_fork_is_judged_by_the_noise_band_not_its_samples() {
    // victoriengb's file: one fork, over 100,000 samples a row. Welch over the samples
    // called a 10% change certain (p below 1e-300); one fork says nothing of the next
    // run's spread, so the band judges: 10% is noise, twice as slow is slower.
    let d = TempDir::new("cmp-sample");
    let base = data("victoriengb-sample-jmh1.37.json");
    let doc = read_data("victoriengb-sample-jmh1.37.json");
    let slower = write_doc(&d, "slower.json", &scaled_doc(&doc, 1.1));
    let twice = write_doc(&d, "twice.json", &scaled_doc(&doc, 2.0));
    let run = compare(&["--format", "json", &base, &slower, &twice]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let v = run.json();
    for (row, entry) in v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .zip(doc.as_array().unwrap())
    {
        let (b, n, two) = (&row["results"][0], &row["results"][1], &row["results"][2]);
        assert_eq!(n["verdict"], "noise", "{row:#}");
        assert_eq!(n["test"], "noise band");
        assert_eq!(two["verdict"], "slower", "{row:#}");
        assert!((n["ratio"].as_f64().unwrap() - 1.1).abs() < 1e-9, "{row:#}");
        // The count of every sample in the histogram, not the 10 iterations.
        let count: u64 = entry["primaryMetric"]["rawDataHistogram"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f.as_array().unwrap())
            .flat_map(|i| i.as_array().unwrap())
            .map(|p| p[1].as_u64().unwrap())
            .sum();
        assert_eq!(b["samples"].as_u64().unwrap(), count);
        assert!(count > 100_000, "{count}");
        // The count-weighted mean is JMH's score to the precision of its histogram.
        let file_score = entry["primaryMetric"]["score"].as_f64().unwrap();
        let mean = b["score"].as_f64().unwrap();
        assert!(
            (mean - file_score).abs() <= 0.01 * file_score,
            "{mean} vs {file_score}"
        );
    }
    let text = compare(&[&base, &slower]);
    assert!(text.stdout.contains(" band "), "{}", text.stdout);
    assert!(
        text.stdout.contains("band: fewer than 3 forks on a side"),
        "{}",
        text.stdout
    );
    let same = compare(&[&base, &base]);
    same.assert_ok();
    let table = same
        .stdout
        .split("== bb-compare: the answer ==")
        .next()
        .unwrap();
    let rows = table.lines().filter(|l| l.starts_with("com."));
    assert_eq!(rows.clone().count(), 4, "{}", same.stdout);
    assert!(rows.clone().all(|l| l.ends_with("same")), "{}", same.stdout);
}

#[test]
fn p_values_below_1e_300_are_printed_as_such() {
    // Ten forks a side (dennisrippinger's), half as fast: Welch over the fork means.
    let d = TempDir::new("cmp-tiny-p");
    let doc = read_data("dennisrippinger-thrpt-10forks-jmh1.19.json");
    let mut tight = doc.clone();
    for e in tight.as_array_mut().unwrap() {
        let pm = &mut e["primaryMetric"];
        let score = pm["score"].as_f64().unwrap();
        // Forks that agree exactly: a difference with no spread, p 0.
        for fork in pm["rawData"].as_array_mut().unwrap() {
            for v in fork.as_array_mut().unwrap() {
                *v = json!(score);
            }
        }
    }
    let base = write_doc(&d, "tight.json", &tight);
    let half = write_doc(&d, "half.json", &scaled_doc(&tight, 0.5));
    let run = compare(&[&base, &half]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("<1e-300 "), "{}", run.stdout);
    assert!(!run.stdout.contains("0.0e0"), "{}", run.stdout);
    let csv = compare(&["--format", "csv", &base, &half]);
    assert!(
        csv.stdout.contains(",<1e-300,\"fork means\",\"slower\""),
        "{}",
        csv.stdout
    );
}

#[test]
fn jmh_hour_and_day_units_are_read_and_converted() {
    let d = TempDir::new("cmp-units");
    let per_second = data("gab-jmh-thrpt.json");
    let run = compare(&[
        "--format",
        "json",
        &per_second,
        &data("made-ops-per-hr.json"),
    ]);
    run.assert_ok();
    let v = run.json();
    assert_eq!(v["rows"][0]["unit"], "ops/s");
    let new = &v["rows"][0]["results"][1];
    assert!((new["ratio"].as_f64().unwrap() - 1.0).abs() < 1e-9, "{v:#}");
    assert_eq!(new["verdict"], "same");
    // hr/op in sample mode, histogram included, against the s/op original.
    let run = compare(&[
        "--format",
        "json",
        &data("vietj-sample-jmh1.21.json"),
        &data("made-hr-per-op-sample.json"),
    ]);
    run.assert_ok();
    let v = run.json();
    let row = &v["rows"][0];
    assert_eq!(row["unit"], "s/op");
    assert_eq!(row["results"][1]["verdict"], "same", "{v:#}");
    assert!((row["results"][1]["ratio"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    // ops/day, day/op and min/op, made from the same file.
    let doc = read_data("gab-jmh-thrpt.json");
    let mut per_day = scaled_doc(&doc, 86400.0);
    per_day[0]["primaryMetric"]["scoreUnit"] = "ops/day".into();
    let mut day_per_op = doc.clone();
    day_per_op[0]["mode"] = "avgt".into();
    day_per_op[0]["primaryMetric"]["scoreUnit"] = "day/op".into();
    let mut min_per_op = scaled_doc(&day_per_op, 1440.0);
    min_per_op[0]["primaryMetric"]["scoreUnit"] = "min/op".into();
    let run = compare(&[&per_second, &write_doc(&d, "day.json", &per_day)]);
    run.assert_ok();
    assert!(
        line(&run, "org.openjdk").ends_with("same"),
        "{}",
        run.stdout
    );
    let run = compare(&[
        &write_doc(&d, "dop.json", &day_per_op),
        &write_doc(&d, "mop.json", &min_per_op),
    ]);
    run.assert_ok();
    assert!(run.stdout.contains("Units day/op"), "{}", run.stdout);
    assert!(
        line(&run, "org.openjdk").ends_with("same"),
        "{}",
        run.stdout
    );
}

#[test]
fn top_level_threads_match_like_params_and_ignore_params_threads_covers_them() {
    let d = TempDir::new("cmp-threads");
    let mut doc = read_data("gab-jmh-thrpt.json");
    let base = write_doc(&d, "gab-jmh-thrpt.json", &doc);
    doc[0]["threads"] = 4.into();
    let four = write_doc(&d, "four.json", &doc);
    let run = compare(&[&base, &four]);
    run.assert_ok();
    assert!(
        run.stdout.contains(
            "params: org.openjdk.jmh.samples.JMHSample_01_HelloWorld.wellHelloThere (thrpt) in gab-jmh-thrpt has params (threads=1), four has (threads=4); --ignore-params threads compares them anyway"
        ),
        "{}",
        run.stdout
    );
    let run = compare(&["--ignore-params", "threads", &base, &four]);
    run.assert_ok();
    assert!(
        line(&run, "org.openjdk").ends_with("same"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("params:"), "{}", run.stdout);
}

#[test]
fn the_hint_names_only_the_param_that_differs_and_following_it_merges_nothing() {
    let d = TempDir::new("cmp-hint");
    let base = data("gab-jmh-params.json");
    let mut doc = read_data("gab-jmh-params.json");
    let mut other = doc[0].clone();
    other["params"]["paramA"] = "18".into();
    doc.as_array_mut().unwrap().push(other.clone());
    let base_two = write_doc(&d, "base.json", &doc);
    for e in doc.as_array_mut().unwrap() {
        e["params"]["paramB"] = "34".into();
    }
    let new = write_doc(&d, "new.json", &doc);
    let run = compare(&[&base_two, &new]);
    run.assert_ok();
    let hints: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("params:"))
        .map(|l| l.split("; ").nth(1).unwrap_or("no hint"))
        .collect();
    // Once per row of base, each naming new's rows: new's have no notes of their own.
    assert_eq!(hints.len(), 2, "{}", run.stdout);
    assert!(
        hints
            .iter()
            .all(|h| *h == "--ignore-params paramB compares them anyway"),
        "{}",
        run.stdout
    );
    let run = compare(&["--ignore-params", "paramB", &base_two, &new]);
    run.assert_ok();
    assert!(!run.stdout.contains("duplicate"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("  same").count(), 2, "{}", run.stdout);
    // The real file against itself matches on both params at once.
    compare(&[&base, &base]).assert_ok();
}

#[test]
fn empty_files_a_bom_and_other_documents_get_clear_answers() {
    let d = TempDir::new("cmp-edges");
    let good = data("gab-jmh-thrpt.json");
    let empty = data("made-empty.json");
    let run = compare(&[&good, &empty]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        format!("bb-compare: error: empty file: {empty}")
    );
    let run = compare(&[&good, &data("made-bom.json")]);
    run.assert_ok();
    assert!(
        line(&run, "org.openjdk").ends_with("same"),
        "{}",
        run.stdout
    );
    let run = compare(&[&good, &data("made-empty-array.json")]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no benchmark results"),
        "{}",
        run.stderr
    );
    let run = compare(&[&good, &data("gab-custom-bigger.json")]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(
            "entry 1: missing \"benchmark\" (this is github-action-benchmark's custom format"
        ),
        "{}",
        run.stderr
    );
    let report = compare(&["--format", "json", &good, &good]);
    let report = write_doc(&d, "report.json", &report.json());
    let run = compare(&[&good, &report]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("found an object (bb-compare's own report, not a result file)"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1);
}

#[test]
fn binary_oversized_and_non_regular_inputs_are_malformed_not_slower() {
    let d = TempDir::new("cmp-hostile");
    let good = data("gab-jmh-thrpt.json");
    // Latin-1 and binary bytes: not UTF-8, so not a result file (exit 2, never 1).
    let latin1 = d.join("latin1.json");
    std::fs::write(&latin1, b"[{\"benchmark\": \"caf\xe9\"}]").unwrap();
    let run = compare(&[&good, latin1.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("not UTF-8 text (byte 19)"),
        "{}",
        run.stderr
    );
    // Larger than --max-input: refused before it is read.
    let run = compare(&["--max-input", "1k", &good, &good]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("larger than --max-input 1 KiB"),
        "{}",
        run.stderr
    );
    // A FIFO would block forever (no writer ever opens it): refused without waiting. A
    // run still going after a minute is waiting, and fails the test (no speed is asked
    // for: refused or stuck).
    let bounded = |args: &[&str]| run_bounded(EXE, args, &[], std::time::Duration::from_secs(60));
    let fifo = d.join("results.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let run = bounded(&[&good, fifo.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
    // A device that never ends, likewise.
    let run = bounded(&[&good, "/dev/zero"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[test]
fn two_inputs_with_the_same_label_get_distinct_columns() {
    let f = data("gab-jmh-thrpt.json");
    let run = compare(&["--format", "json", &f, &f, &f]);
    run.assert_ok();
    assert_eq!(
        run.json()["files"],
        serde_json::json!(["gab-jmh-thrpt", "gab-jmh-thrpt#2", "gab-jmh-thrpt#3"])
    );
    // The columns are named in the header, or by letter in the legend above a table too
    // wide for the names.
    let text = compare(&[&f, &f]);
    assert!(
        text.stdout
            .lines()
            .filter(|l| l.starts_with("Benchmark") || l.starts_with("runs: "))
            .any(|l| l.contains("gab-jmh-thrpt#2")),
        "{}",
        text.stdout
    );
}

#[test]
fn metric_compares_a_secondary_metric_with_its_own_verdict() {
    let d = TempDir::new("cmp-metric");
    let base = data("victoriengb-sample-jmh1.37.json");
    let mut doc = read_data("victoriengb-sample-jmh1.37.json");
    for e in doc.as_array_mut().unwrap() {
        // Twice: one fork a side, so the noise band judges.
        scale_metric(&mut e["secondaryMetrics"]["p0.99"], 2.0);
    }
    let new = write_doc(&d, "new.json", &doc);
    // The primary metric has not changed...
    compare(&[&base, &new]).assert_ok();
    // ... its 99th percentile has, in JMH 1.37's name or with the old prefix.
    for metric in ["p0.99", "·p0.99"] {
        let run = compare(&["--metric", metric, &base, &new]);
        assert_eq!(run.code, 1, "{metric}: {}", run.stdout);
        let l = line(&run, "com.victorien.matchingengine.benchmark.MatchingEngineSoABenchmark.cancelBestCase:p0.99");
        assert!(l.contains("2.00x, ") && l.ends_with("slower"), "{l}");
    }
    // JMH 1.21 names it method·p0.99.
    let vietj = data("vietj-sample-jmh1.21.json");
    let run = compare(&["--metric", "p0.99", "--format", "json", &vietj, &vietj]);
    run.assert_ok();
    let v = run.json();
    assert_eq!(
        v["rows"][0]["benchmark"],
        "com.julienviet.benchmark.ClientBenchmark.jdbcBurstQuery:p0.99"
    );
    assert_eq!(v["rows"][0]["unit"], "s/op");
    let run = compare(&["--metric", "gc.alloc.rate", &base, &new]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(
            "no benchmark has the metric 'gc.alloc.rate' (its secondary metrics: p0.00, p0.50,"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn three_forks_a_side_are_tested_on_their_means() {
    let d = TempDir::new("cmp-forks");
    let base = data("dennisrippinger-thrpt-10forks-jmh1.19.json");
    let doc = read_data("dennisrippinger-thrpt-10forks-jmh1.19.json");
    let slower = write_doc(&d, "slower.json", &scaled_doc(&doc, 0.8));
    let run = compare(&["--format", "json", &base, &slower]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    for row in run.json()["rows"].as_array().unwrap() {
        let new = &row["results"][1];
        assert_eq!(new["test"], "fork means", "{row:#}");
        assert_eq!(new["forks"], 10);
        assert_eq!(new["verdict"], "slower", "{row:#}");
    }
    let text = compare(&[&base, &slower]);
    assert!(
        text.stdout.contains("Welch p >= 0.01 over fork means"),
        "{}",
        text.stdout
    );
    // Two forks a side (vietj): the noise band, never the samples pooled.
    let vietj = data("vietj-sample-jmh1.21.json");
    let run = compare(&["--format", "json", &vietj, &vietj]);
    assert_eq!(run.json()["rows"][0]["results"][1]["test"], "noise band");
}

#[test]
fn the_svg_shows_tiny_jmh_scores_in_a_unit_that_shows_them() {
    let d = TempDir::new("cmp-svg-tiny");
    // A JMH throughput of 3.4e9 ops/s as s/op: about 3e-10 s.
    let mut doc = read_data("gab-jmh-thrpt.json");
    let pm = &mut doc[0]["primaryMetric"];
    for fork in pm["rawData"].as_array_mut().unwrap() {
        for v in fork.as_array_mut().unwrap() {
            *v = Value::from(1.0 / v.as_f64().unwrap());
        }
    }
    pm["score"] = Value::from(1.0 / pm["score"].as_f64().unwrap());
    pm["scoreError"] = "NaN".into();
    pm["scoreUnit"] = "s/op".into();
    doc[0]["mode"] = "avgt".into();
    let f = write_doc(&d, "tiny.json", &doc);
    let svg = d.join("tiny.svg");
    compare(&["--svg", svg.to_str().unwrap(), &f, &f]).assert_ok();
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("avgt ns/op"), "{svg}");
    assert!(svg.contains(">0.296<"), "{svg}");
    assert!(!svg.contains(">0.000<"), "{svg}");
}

#[test]
fn gab_formats_write_the_actions_custom_json_split_by_direction() {
    let thrpt = data("gab-jmh-thrpt.json");
    let avgt = data("mariofusco-avgt-nan-secondary.json");
    // The keys the action keeps (its README; the fixtures use no others).
    let allowed = ["name", "unit", "value", "range", "extra"];
    for file in ["gab-custom-bigger.json", "gab-custom-smaller.json"] {
        for e in read_data(file).as_array().unwrap() {
            for k in e.as_object().unwrap().keys() {
                assert!(allowed.contains(&k.as_str()), "{file}: {k}");
            }
        }
    }
    for (file, bigger, smaller) in [(&thrpt, 1, 0), (&avgt, 0, 1)] {
        for (format, n) in [("gab-bigger", bigger), ("gab-smaller", smaller)] {
            let run = compare(&["--format", format, file]);
            run.assert_ok();
            let v = run.json();
            let entries = v.as_array().unwrap();
            assert_eq!(entries.len(), n, "{format} of {file}: {v:#}");
            for e in entries {
                for (k, value) in e.as_object().unwrap() {
                    assert!(
                        allowed.contains(&k.as_str()),
                        "{k} is not one of the action's keys"
                    );
                    let kind = if k == "value" {
                        value.is_number()
                    } else {
                        value.is_string()
                    };
                    assert!(kind, "{k}: {value}");
                }
                assert!(e["extra"].as_str().unwrap().contains("mode: "));
            }
        }
    }
    let v = compare(&["--format", "gab-bigger", &thrpt]).json();
    let name = "org.openjdk.jmh.samples.JMHSample_01_HelloWorld.wellHelloThere [thrpt]";
    assert_eq!(v[0]["name"], name);
    assert_eq!(v[0]["unit"], "ops/s");
    assert!(v[0]["range"].as_str().unwrap().starts_with("± "));
    // The action keeps a series' history by its name: one more row, at 4 threads, and a
    // broken one, rename nothing (the table shows threads now, the names do not).
    let d = TempDir::new("cmp-gab-names");
    let mut doc = read_data("gab-jmh-thrpt.json");
    let mut four = doc[0].clone();
    four["threads"] = 4.into();
    let mut broken = doc[0].clone();
    broken["benchmark"] = "org.x.Broken.run".into();
    broken["primaryMetric"]["score"] = "-Infinity".into();
    broken["primaryMetric"]["scoreError"] = "Infinity".into();
    doc.as_array_mut().unwrap().extend([four, broken]);
    let more = write_doc(&d, "more.json", &doc);
    let text = compare(&[&more]);
    text.assert_ok();
    assert!(
        text.stdout.contains("(threads)"),
        "the table tells them apart: {}",
        text.stdout
    );
    let error = text
        .stdout
        .lines()
        .find(|l| l.starts_with("error: org.x.Broken.run (thrpt) in "))
        .unwrap_or_else(|| panic!("{}", text.stdout));
    assert!(
        error.ends_with("more: the score is -Infinity, not a measurement: not compared"),
        "{error}"
    );
    let run = compare(&["--format", "gab-bigger", &more]);
    run.assert_ok();
    let v = run.json();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [name, &name.replace(" [", " (threads=4) [")],
        "{v:#}"
    );
    assert!(v.as_array().unwrap().iter().all(|e| e["value"].is_number()));
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("bb-compare: warning: org.x.Broken.run [thrpt]: the score in "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .ends_with("more is -Infinity, not a number: left out of the gab-bigger file\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn boardbench_sample_files_compare_from_their_histograms() {
    let d = TempDir::new("cmp-own");
    let out = d.join("own.json");
    let run = run_with(
        env!("CARGO_BIN_EXE_bb-zstd"),
        &[
            crate::support::ZSTD_SMALL,
            &[
                "--op",
                "decompress",
                "--threads",
                "1",
                "--forks",
                "0",
                "--mode",
                "sample",
                "--output",
                out.to_str().unwrap(),
            ],
        ]
        .concat(),
        &[],
    );
    run.assert_ok();
    let own = out.to_str().unwrap().to_string();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let slower = write_doc(&d, "slower.json", &scaled_doc(&doc, 2.0));
    let run = compare(&["--format", "json", &own, &slower]);
    let v = run.json();
    let cell = &v["rows"][0]["results"][1];
    // In this process (--forks 0): one fork, so the noise band, never the samples.
    assert_eq!(cell["test"], "noise band");
    assert!(
        (cell["ratio"].as_f64().unwrap() - 2.0).abs() < 1e-9,
        "{v:#}"
    );
    // Slower, unless a loaded machine took too few and too scattered samples to tell.
    let verdict = cell["verdict"].as_str().unwrap();
    assert!(
        (verdict == "slower" && run.code == 1) || (verdict == "noise" && run.code == 0),
        "{v:#}"
    );
    assert_eq!(
        v["rows"][0]["results"][0]["samples"], doc[0]["boardbench"]["samples"],
        "every sample counted"
    );
    // The same run with only its iteration means as rawData (what a sample file without
    // its histogram holds): compared on iteration means, not samples against means.
    let mut means = doc.clone();
    let pm = means[0]["primaryMetric"].as_object_mut().unwrap();
    let histogram = pm.remove("rawDataHistogram").unwrap();
    let raw: Vec<Vec<f64>> = histogram
        .as_array()
        .unwrap()
        .iter()
        .map(|fork| {
            let fork = fork.as_array().unwrap();
            fork.iter()
                .map(|i| {
                    let pairs = i.as_array().unwrap();
                    let (sum, n) = pairs.iter().fold((0.0, 0.0), |(s, n), p| {
                        let (v, c) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
                        (s + v * c, n + c)
                    });
                    sum / n
                })
                .collect()
        })
        .collect();
    pm.insert("rawData".into(), json!(raw));
    let means = write_doc(&d, "means.json", &means);
    let v = compare(&["--format", "json", &own, &means]).json();
    let cell = &v["rows"][0]["results"][1];
    // The ratio over both sides' iteration means; one fork, so the band judges.
    assert_eq!(cell["test"], "noise band", "{v:#}");
    assert!(
        (cell["ratio"].as_f64().unwrap() - 1.0).abs() < 1e-9,
        "the same iterations: {v:#}"
    );
    assert_eq!(cell["verdict"], "same", "{v:#}");
    // MB/s, boardbench's own secondary metric: bigger is better.
    let mut faster = doc.clone();
    scale_metric(&mut faster[0]["secondaryMetrics"]["MB/s"], 2.0);
    let faster = write_doc(&d, "faster.json", &faster);
    let run = compare(&["--metric", "MB/s", &own, &faster]);
    run.assert_ok();
    assert!(
        line(&run, "bb.zstd.decompress:MB/s").contains("2.00x"),
        "{}",
        run.stdout
    );
    let smaller = compare(&["--format", "gab-smaller", &own]).json();
    assert_eq!(smaller[0]["unit"], "ms/op");
    assert!(smaller[0]["name"]
        .as_str()
        .unwrap()
        .starts_with("bb.zstd.decompress ("));
}

#[test]
fn a_results_directory_that_loops_is_walked_once_and_says_what_it_skipped() {
    let d = TempDir::new("cmp-loops");
    let (base, new) = (d.join("base"), d.join("new"));
    for dir in [&base, &new, &base.join("sub")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let e = |name: &str, f: f64| entry(name, "thrpt", json!({}), &scaled(f), "ops/s");
    std::fs::write(
        base.join("a.json"),
        serde_json::to_string(&vec![e("bb.a", 1.0)]).unwrap(),
    )
    .unwrap();
    std::fs::write(
        base.join("sub/b.json"),
        serde_json::to_string(&vec![e("bb.b", 1.0)]).unwrap(),
    )
    .unwrap();
    std::fs::write(
        new.join("all.json"),
        serde_json::to_string(&vec![e("bb.a", 1.0), e("bb.b", 1.0)]).unwrap(),
    )
    .unwrap();
    // Two links to the directory itself, one to its parent from below, one to a file.
    std::os::unix::fs::symlink(".", base.join("l1")).unwrap();
    std::os::unix::fs::symlink(".", base.join("l2")).unwrap();
    std::os::unix::fs::symlink("..", base.join("sub/up")).unwrap();
    std::os::unix::fs::symlink("a.json", base.join("again.json")).unwrap();
    let run = run_bounded(
        EXE,
        &[base.to_str().unwrap(), new.to_str().unwrap()],
        &[],
        std::time::Duration::from_secs(60),
    );
    run.assert_ok();
    assert!(!run.stdout.contains("duplicate"), "{}", run.stdout);
    assert!(line(&run, "bb.a").ends_with("same"), "{}", run.stdout);
    assert!(line(&run, "bb.b").ends_with("same"), "{}", run.stdout);
    let notes: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("skipped"))
        .collect();
    assert_eq!(notes.len(), 1, "one note:\n{}", run.stderr);
    assert!(
        notes[0].contains("already read through another path") && notes[0].contains("3 more"),
        "{}",
        notes[0]
    );
    // Deeper than the walk goes: said, not followed.
    let mut deep = new.clone();
    for i in 0..20 {
        deep = deep.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("x.json"), "[]").unwrap();
    let run = compare(&[base.to_str().unwrap(), new.to_str().unwrap()]);
    run.assert_ok();
    assert!(
        run.stderr.contains("deeper than 16 directories"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_dangling_json_symlink_is_bad_input_and_a_missing_file_a_failed_run() {
    let d = TempDir::new("cmp-dangling");
    let good = write(
        &d,
        "good.json",
        vec![entry("bb.x", "thrpt", json!({}), &STEADY, "ops/s")],
    );
    let dir = d.join("results");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(&good, dir.join("good.json")).unwrap();
    std::os::unix::fs::symlink("gone.json", dir.join("link.json")).unwrap();
    for input in [dir.clone(), dir.join("link.json")] {
        let run = compare(&[&good, input.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(
            run.stderr
                .contains("link.json: a dangling symlink (to gone.json)"),
            "{}",
            run.stderr
        );
    }
}

/// The peak resident memory of `exe args`, in bytes (the child's own, from wait4).
fn peak_rss(args: &[&str]) -> (i32, u64) {
    // Reaped by wait4 below (for its rusage), which clippy does not see as a wait.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(EXE)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid one; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: wait4 on our child's pid, with pointers to live locals.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, usage.ru_maxrss as u64 * 1024)
}

#[test]
fn memory_stays_within_a_small_multiple_of_the_input() {
    let d = TempDir::new("cmp-memory");
    // 1.5 million iteration scores of two bytes each, and 300,000 histogram buckets:
    // held as a value each, such files took 17 to 29 times their size.
    let n = 1_500_000;
    let mut raw = String::from(
        r#"[{"benchmark":"bb.big","mode":"thrpt","threads":1,"forks":1,"params":{},"primaryMetric":{"score":1,"scoreError":"NaN","scoreUnit":"ops/s","rawData":[["#,
    );
    raw.push_str(&"1,".repeat(n - 1));
    raw.push_str(r#"1]]},"secondaryMetrics":{}},"#);
    raw.push_str(
        r#"{"benchmark":"bb.hist","mode":"sample","threads":1,"forks":1,"params":{},"primaryMetric":{"score":1,"scoreError":"NaN","scoreUnit":"us/op","rawDataHistogram":[[["#,
    );
    raw.push_str(&"[1,1],".repeat(300_000 - 1));
    raw.push_str(r#"[2,1]]]]},"secondaryMetrics":{}}]"#);
    let big = d.join("big.json");
    std::fs::write(&big, &raw).unwrap();
    let small = write(
        &d,
        "small.json",
        vec![
            entry("bb.big", "thrpt", json!({}), &STEADY, "ops/s"),
            entry("bb.hist", "sample", json!({}), &STEADY, "us/op"),
        ],
    );
    let _gate = crate::support::timing::shared();
    let (code, baseline) = peak_rss(&[&small, &small]);
    assert_eq!(code, 0);
    let big = big.to_str().unwrap();
    let (code, peak) = peak_rss(&[big, big]);
    assert_eq!(code, 0);
    let input = 2 * raw.len() as u64;
    let held = peak.saturating_sub(baseline);
    assert!(
        held < 8 * input,
        "{held} bytes above the baseline {baseline} for {input} bytes of input: {:.1}x",
        held as f64 / input as f64
    );
}

#[test]
fn a_files_noise_band_judges_its_lone_forks() {
    // One fork a side, 20% apart: the default band (±25% a side) calls it noise; a binary
    // whose A/A runs measured ±5% (boardbench.noiseBand) calls it slower.
    let d = TempDir::new("cmp-band");
    let one = |score: f64, band: Option<f64>| {
        let mut e = entry("bb.x.op", "thrpt", json!({}), &[score], "ops/s");
        if let Some(b) = band {
            e["boardbench"] = json!({ "noiseBand": b });
        }
        e
    };
    for (band, verdict, code) in [(None, "noise", 0), (Some(0.05), "slower", 1)] {
        let base = write(&d, "base.json", vec![one(100.0, band)]);
        let new = write(&d, "new.json", vec![one(80.0, band)]);
        let run = compare(&["--format", "json", &base, &new]);
        assert_eq!(run.code, code, "{}\n{}", run.stdout, run.stderr);
        let cell = &run.json()["rows"][0]["results"][1];
        assert_eq!(cell["verdict"], verdict, "{band:?}: {cell:#}");
        assert_eq!(cell["test"], "noise band");
    }
}

/// The tests of bb-compare whose pass depends on this machine's steadiness: retried, one
/// at a time ([`crate::support::timing`]).
mod timing {
    use super::*;
    use crate::support::timing::retry;

    /// An A/A comparison at a tiny scale: two quick runs of the same build, nothing
    /// changed between them, compared by bb-compare, give no `faster` or `slower`. One
    /// fork a side, so the noise band judges, never the iterations pooled (which called
    /// one A/A row in six different); a machine busy enough to move a row beyond the band
    /// fails a try.
    #[test]
    fn two_quick_runs_of_one_build_are_never_faster_or_slower() {
        retry("compare::timing::two_quick_runs_of_one_build", || {
            let d = TempDir::new("cmp-aa");
            let run = |name: &str| {
                let out = d.join(name);
                let args = [
                    crate::support::ZSTD_SMALL,
                    &["--threads", "1,2", "--output", out.to_str().unwrap()],
                ]
                .concat();
                run_with(env!("CARGO_BIN_EXE_bb-zstd"), &args, &[]).assert_ok();
                out.to_str().unwrap().to_string()
            };
            let (a, b) = (run("a.json"), run("b.json"));
            let cmp = compare(&["--format", "json", &a, &b]);
            assert_eq!(cmp.code, 0, "{}\n{}", cmp.stdout, cmp.stderr);
            let v = cmp.json();
            let rows = v["rows"].as_array().unwrap();
            assert_eq!(rows.len(), 8, "{v:#}");
            for row in rows {
                let new = &row["results"][1];
                assert_eq!(new["test"], "noise band", "{row:#}");
                let verdict = new["verdict"].as_str().unwrap();
                assert!(["same", "noise"].contains(&verdict), "{row:#}");
            }
        });
    }
}

/// The two entries of one row of an A/B run (`--against`): the other build's at
/// `STEADY`, this build's at `STEADY` times `f`, each with its `build` and this one with
/// the paired ratio its run wrote.
fn ab_row(name: &str, f: f64) -> Vec<Value> {
    let mut this = entry(name, "thrpt", json!({"level": "3"}), &scaled(f), "ops/s");
    this["boardbench"] = json!({
        "build": {"side": "this", "path": "./bb-x", "sha1": "a".repeat(40)},
        "against": {"path": "./old/bb-x", "sha1": "b".repeat(40), "ratio": f,
                    "low": f, "high": f, "pairs": 5, "verdict": "tie"}
    });
    let mut other = entry(name, "thrpt", json!({"level": "3"}), &STEADY, "ops/s");
    other["boardbench"] =
        json!({"build": {"side": "against", "path": "./old/bb-x", "sha1": "b".repeat(40)}});
    vec![this, other]
}

#[test]
fn an_ab_file_alone_compares_its_two_builds_the_other_first() {
    let d = TempDir::new("cmp-ab");
    // Run in the directory, so that the columns are named as a person's would be.
    let compare = |args: &[&str]| run_in(d.path(), EXE, args, &[]);
    write(&d, "slower.json", ab_row("bb.x.op", 0.7));
    let run = compare(&["slower.json"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let header = line(&run, "Benchmark");
    let (other, this) = (
        header.find("slower (./old/bb-x)"),
        header.find("slower (this build)"),
    );
    assert!(other.is_some() && other < this, "{header}");
    let l = line(&run, "bb.x.op");
    assert!(l.contains("0.700") && l.ends_with("slower"), "{l}");
    assert!(
        run.stderr.contains("slower than slower (./old/bb-x)"),
        "{}",
        run.stderr
    );
    // The same build on both sides is a tie: exit 0.
    write(&d, "tie.json", ab_row("bb.x.op", 1.0));
    let run = compare(&["tie.json"]);
    run.assert_ok();
    assert!(line(&run, "bb.x.op").ends_with("same"), "{}", run.stdout);
    // Among other files, an A/B file is its two columns in place.
    let run = compare(&["--format", "json", "tie.json", "slower.json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.json()["files"],
        json!([
            "tie (./old/bb-x)",
            "tie (this build)",
            "slower (./old/bb-x)",
            "slower (this build)"
        ])
    );
    // A malformed build is a malformed file: one line naming it, exit 2.
    let mut bad = ab_row("bb.x.op", 1.0);
    bad[1]["boardbench"]["build"]["side"] = json!("theirs");
    write(&d, "bad.json", bad);
    let run = compare(&["bad.json"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "bad.json: not a JMH/boardbench JSON result file: entry 2: boardbench.build.side"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn an_ab_file_is_judged_by_its_pairs_and_says_what_a_tie_could_see() {
    // A machine that drifts by 20% through the run, this build 8% faster in every pair:
    // as two runs the forks' spread hides it (noise), as the pairs they are it is
    // plain; the record in `against` gives the interval the table prints.
    let d = TempDir::new("cmp-ab-pairs");
    let compare = |args: &[&str]| run_in(d.path(), EXE, args, &[]);
    let other = [100.0, 120.0, 104.0, 116.0, 108.0];
    let pairs = |f: f64, low: f64, high: f64| {
        let mut this = entry(
            "bb.x.op",
            "thrpt",
            json!({}),
            &other.map(|v| v * f),
            "ops/s",
        );
        this["boardbench"] = json!({
            "build": {"side": "this", "path": "./bb-x", "sha1": "a".repeat(40)},
            "against": {"ratio": f, "low": low, "high": high, "pairs": 5,
                        "basis": "forks 5", "verdict": "faster"}
        });
        let mut base = entry("bb.x.op", "thrpt", json!({}), &other, "ops/s");
        base["boardbench"] =
            json!({"build": {"side": "against", "path": "./old/bb-x", "sha1": "b".repeat(40)}});
        vec![this, base]
    };
    write(&d, "ab.json", pairs(1.08, 1.07, 1.09));
    let run = compare(&["--format", "json", "ab.json"]);
    run.assert_ok();
    let cell = &run.json()["rows"][0]["results"][1];
    assert_eq!(cell["test"], "pairs", "{cell:#}");
    assert_eq!(cell["verdict"], "faster", "{cell:#}");
    assert_eq!(
        (cell["ratioLow"].as_f64(), cell["ratioHigh"].as_f64()),
        (Some(1.07), Some(1.09))
    );
    // Every pair 8% apart: those pairs could see any change at all.
    assert!(cell["smallest"].as_f64().unwrap() < 0.001, "{cell:#}");
    // The same files as two runs: noise.
    let plain = |i: usize| {
        let mut e = pairs(1.08, 1.07, 1.09)[i].clone();
        e.as_object_mut().unwrap().remove("boardbench");
        write(&d, &format!("run{i}.json"), vec![e])
    };
    let (base, new) = (plain(1), plain(0));
    let run = compare(&["--format", "json", &base, &new]);
    let cell = &run.json()["rows"][0]["results"][1];
    assert_eq!(
        (cell["test"].as_str(), cell["verdict"].as_str()),
        (Some("fork means"), Some("noise"))
    );
    // A tie reads as one, with what it could have seen.
    write(&d, "tie.json", pairs(1.01, 0.98, 1.04));
    let run = compare(&["tie.json"]);
    run.assert_ok();
    let tie = run
        .stdout
        .lines()
        .find(|l| l.starts_with("bb.x.*: a tie (1.01x; could see "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(tie.ends_with("% or more), same within 5%"), "{tie}");
    assert!(
        line(&run, "bb.x.op").contains("1.01x, 0.980x to 1.04x"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_table_shows_the_honest_error_and_metric_keeps_the_files_noise() {
    // One fork a side whose iterations agree: JMH's error is tiny, the honest one is the
    // file's noise band (5%), for the primary score and for a secondary metric alike.
    let d = TempDir::new("cmp-honest");
    let one = |score: f64| {
        let mut e = entry("bb.x.op", "thrpt", json!({}), &[score], "ops/s");
        e["primaryMetric"]["scoreError"] = json!(0.01);
        e["primaryMetric"]["rawData"] = json!([[score, score, score]]);
        e["secondaryMetrics"] = json!({"MB/s": {
            "score": score, "scoreError": 0.01, "scoreUnit": "MB/s",
            "rawData": [[score, score, score]]}});
        e["boardbench"] = json!({"noiseBand": 0.05, "runFloor": 0.0});
        e
    };
    let base = write(&d, "base.json", vec![one(100.0)]);
    let new = write(&d, "new.json", vec![one(80.0)]);
    for metric in [None, Some("MB/s")] {
        let mut args = vec!["--format", "json"];
        args.extend(metric.map(|m| ["--metric", m]).into_iter().flatten());
        args.extend([base.as_str(), new.as_str()]);
        let run = compare(&args);
        // 20% apart beyond a 5% band: slower (the 25% default would call it noise).
        assert_eq!(run.code, 1, "{metric:?}: {}", run.stdout);
        let cell = &run.json()["rows"][0]["results"][1];
        assert_eq!(cell["verdict"], "slower", "{metric:?}: {cell:#}");
        assert_eq!(cell["scoreError"], 0.01, "the file's, kept");
        assert_eq!(cell["error"], 4.0, "5% of 80");
        assert_eq!(cell["noiseBand"], 0.05);
        let text = compare(&args[2..]);
        assert!(text.stdout.contains("80.000 ± 4.000"), "{}", text.stdout);
        assert!(!text.stdout.contains("± 0.010"), "{}", text.stdout);
    }
}
