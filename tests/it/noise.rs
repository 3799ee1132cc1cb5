//! The board's own noise through the real harness: a synthetic row (the fault-injection
//! feature's `BB_FAULT_NOISE`) whose every invocation costs a known time with noise set
//! at the run, fork and iteration levels, run as real processes. Without a calibration a
//! run's interval is its forks' alone and misses a run-level shift; calibrated on three
//! runs, the board's run floor is measured near the noise set, the next runs' intervals
//! hold the truth, and bb-compare calls none of them different.

use crate::support::{run_with, timing::retry, TempDir};
use serde_json::Value;

const ZSTD: &str = env!("CARGO_BIN_EXE_bb-zstd");
const COMPARE: &str = env!("CARGO_BIN_EXE_bb-compare");

/// Each invocation's cost, microseconds: the truth is a million over it, in ops/s.
const US: f64 = 3000.0;

/// One run of the synthetic row: its run-level draw seeded by `run`, its JSON kept at
/// `out`; five forks, so that its own interval is a fork interval's.
fn synthetic_run(noise: &str, run: u32, out: &std::path::Path, config: &str) -> Value {
    let args = [
        "--size",
        "16k",
        "--op",
        "compress",
        "--threads",
        "1",
        "--lock",
        "none",
        "--forks",
        "5",
        "--warmup",
        "0",
        "--iterations",
        "2",
        "--time",
        "40ms",
        "--precision",
        "off",
        "--idle-wait",
        "0",
        "--format",
        "json",
        "--output",
    ];
    let mut args = args.to_vec();
    args.push(out.to_str().unwrap());
    let run_seed = run.to_string();
    let r = run_with(
        ZSTD,
        &args,
        &[
            ("BB_FAULT_NOISE", noise),
            ("BB_FAULT_RUN", &run_seed),
            ("XDG_CONFIG_HOME", config),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// Whether a run's printed interval holds the truth.
fn holds_truth(v: &Value) -> bool {
    let e = &v[0];
    let (score, error) = (
        e["primaryMetric"]["score"].as_f64().unwrap(),
        e["boardbench"]["error"].as_f64().unwrap(),
    );
    (score - 1e6 / US).abs() <= error
}

mod timing {
    /// Timed: a neighbour's burst while the forks spin is noise the row did not set.
    #[test]
    fn a_run_level_shift_is_measured_by_calibration_and_then_covered() {
        super::retry("noise::timing::a_run_level_shift", super::shift_covered);
    }
}

fn shift_covered() {
    let dir = TempDir::new("noise-levels");
    let config = dir.join("config");
    let config_str = config.to_str().unwrap();
    // 30% between runs, 1% between forks and between iterations: a board whose runs
    // move (bb-seek's page cache on the VM) while one run's forks agree.
    let noise = format!("{US},0.3,0.01,0.01");
    // Seeds whose run-level draws spread as a normal's do (1.22, -0.81, 0.94: sd 1.1);
    // three runs whose draws happen to agree (seeds 1 to 3: sd 0.08) measure a floor of
    // nearly nothing, as a board would whose three calibration runs were alike.
    let calibration: Vec<String> = [12, 13, 14]
        .into_iter()
        .map(|run| {
            let out = dir.join(&format!("calibration{run}.json"));
            synthetic_run(&noise, run, &out, config_str);
            out.to_str().unwrap().to_string()
        })
        .collect();
    let profile = config.join("boardbench/noise.json");
    std::fs::create_dir_all(profile.parent().unwrap()).unwrap();
    let mut args = vec!["--calibrate", profile.to_str().unwrap()];
    args.extend(calibration.iter().map(String::as_str));
    let c = run_with(COMPARE, &args, &[]);
    assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    let runs_sd = written["binaries"]["bb-zstd"]["variance"]["runs"]
        .as_f64()
        .unwrap()
        .sqrt();
    // The three runs' draws are fixed by their seeds; what the machine adds is small
    // beside 30%.
    assert!((0.08..1.0).contains(&runs_sd), "{written}");

    // The next runs, seeds of their own: first as an uncalibrated board would print
    // them (the profile moved away), then with it.
    let hidden = dir.join("hidden.json");
    let (mut held_without, mut held_with) = (0, 0);
    let mut files = Vec::new();
    let runs = 8;
    for run in 20..20 + runs {
        std::fs::rename(&profile, &hidden).unwrap();
        let without = synthetic_run(&noise, run, &dir.join(&format!("w{run}.json")), config_str);
        assert_eq!(without[0]["boardbench"]["noiseSource"], "default");
        held_without += usize::from(holds_truth(&without));
        std::fs::rename(&hidden, &profile).unwrap();
        let out = dir.join(&format!("c{run}.json"));
        let with = synthetic_run(&noise, run, &out, config_str);
        assert_eq!(with[0]["boardbench"]["noiseSource"], "calibration");
        held_with += usize::from(holds_truth(&with));
        files.push(out.to_str().unwrap().to_string());
    }
    // Forks 1% apart print an interval of a few percent: a 30% shift is outside it in
    // most runs. The floor holds it in nearly all.
    assert!(
        held_without <= runs as usize / 2,
        "{held_without} of {runs}"
    );
    assert!(held_with >= runs as usize - 1, "{held_with} of {runs}");
    // No two of the calibrated runs are called different: they are the same build.
    let mut args = vec!["--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let compared = run_with(COMPARE, &args, &[]);
    assert_ne!(compared.code, 2, "{}", compared.stderr);
    let verdicts: Value = serde_json::from_str(&compared.stdout).unwrap();
    let called = verdicts
        .to_string()
        .matches("\"verdict\":\"slower\"")
        .count()
        + verdicts
            .to_string()
            .matches("\"verdict\":\"faster\"")
            .count();
    assert!(called <= 1, "{called} of {} called different", runs - 1);
}
