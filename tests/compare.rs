//! Integration tests of bb-compare: the real binary on crafted result files with known
//! verdicts (a clear regression, a change inside noise, benchmarks missing on one side,
//! mismatched params, JMH's own files, malformed input), every format, and the SVG chart
//! rendered by a real headless chromium.

mod common;
use common::{run_with, Run, TempDir};
use serde_json::{json, Value};

const EXE: &str = env!("CARGO_BIN_EXE_bb-compare");

/// A JMH-layout entry whose rawData is `raw` in one fork.
fn entry(name: &str, mode: &str, params: Value, raw: &[f64], unit: &str) -> Value {
    let mean = raw.iter().sum::<f64>() / raw.len() as f64;
    json!({
        "jmhVersion": "1.37", "benchmark": name, "mode": mode, "threads": 1, "forks": 1,
        "params": params,
        "primaryMetric": {
            "score": mean, "scoreError": "NaN", "scoreConfidence": ["NaN", "NaN"],
            "scorePercentiles": {}, "scoreUnit": unit, "rawData": [raw]
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
    let header = run.stdout.lines().next().unwrap();
    assert_eq!(header.matches("Verdict").count(), 2, "{header}");
    let l = run
        .stdout
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["bb.zstd.compress", "1"]))
        .unwrap();
    assert!(
        l.contains("0.500") && l.contains("2.000") && l.contains("slower") && l.contains("faster"),
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
    assert!(run.stdout.starts_with("Benchmark"), "text still on stdout");
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
