//! The JSON report in JMH's `-rf json` layout (an array of entries with benchmark, mode,
//! threads, forks, iterations, params, primaryMetric and secondaryMetrics), so JMH result
//! viewers read it; boardbench adds `environment` and `boardbench` fields they ignore.

use super::json_value::Json;
use crate::harness::result::{BenchResult, PairedPlacements};
use crate::stats::{percentiles_of, Summary};
use crate::system::env::Environment;
use crate::system::placement::Placement;
use crate::system::throttle::Health;

pub fn render(results: &[BenchResult], env: &Environment) -> String {
    Json::Arr(results.iter().map(|r| entry(r, env)).collect()).to_pretty()
}

fn entry(r: &BenchResult, env: &Environment) -> Json {
    let s = &r.settings;
    // JMH writes iteration times as "10 s" or "500 ms".
    let time = |d: std::time::Duration| {
        let ms = d.as_millis();
        Json::str(if ms.is_multiple_of(1000) {
            format!("{} s", ms / 1000)
        } else {
            format!("{ms} ms")
        })
    };
    Json::obj([
        ("jmhVersion", Json::str("boardbench")),
        ("benchmark", Json::str(&r.name)),
        ("mode", Json::str(r.mode().short())),
        ("threads", Json::Num(r.threads as f64)),
        ("forks", Json::Num(s.forks as f64)),
        ("warmupIterations", Json::Num(s.warmup_iterations as f64)),
        ("warmupTime", time(s.warmup_time)),
        ("warmupBatchSize", Json::Num(1.0)),
        ("measurementIterations", Json::Num(s.iterations as f64)),
        ("measurementTime", time(s.time)),
        ("measurementBatchSize", Json::Num(1.0)),
        (
            "params",
            Json::obj(r.params.iter().map(|(k, v)| (k.clone(), Json::str(v)))),
        ),
        (
            "primaryMetric",
            metric(&r.summary, r.percentiles(), &r.unit(), &r.raw),
        ),
        (
            "secondaryMetrics",
            Json::obj(r.secondary.iter().map(|m| {
                let pct = percentiles_of(&m.raw);
                (m.name.clone(), metric(&m.summary, pct, &m.unit, &m.raw))
            })),
        ),
        ("environment", environment_json(env)),
        (
            "boardbench",
            Json::obj([
                (
                    "cpu",
                    Json::obj([
                        ("wall", Json::Num(r.cpu.wall)),
                        ("user", Json::Num(r.cpu.user())),
                        ("sys", Json::Num(r.cpu.sys())),
                        ("cpuPercent", Json::Num(r.cpu.percent())),
                        ("processUser", Json::Num(r.cpu.process.user)),
                        ("processSys", Json::Num(r.cpu.process.sys)),
                        ("childrenUser", Json::Num(r.cpu.children.user)),
                        ("childrenSys", Json::Num(r.cpu.children.sys)),
                    ]),
                ),
                (
                    "peakRssKiB",
                    Json::opt_num(r.peak_rss_kib.map(|k| k as f64)),
                ),
                ("operations", Json::Num(r.ops as f64)),
                ("throttled", Json::Bool(r.throttle.throttled)),
                (
                    "throttleReasons",
                    Json::Arr(r.throttle.reasons.iter().map(Json::str).collect()),
                ),
                ("maxTemperatureC", Json::opt_num(r.throttle.max_temp_c)),
                ("health", health_json(&r.throttle.health)),
                ("min", Json::Num(r.summary.min)),
                ("median", Json::Num(r.summary.median)),
                ("max", Json::Num(r.summary.max)),
                ("stdev", Json::Num(r.summary.stdev)),
                ("outliersMild", Json::Num(r.summary.outliers_mild as f64)),
                (
                    "outliersSevere",
                    Json::Num(r.summary.outliers_severe as f64),
                ),
                (
                    "samples",
                    Json::Num(r.histogram.as_ref().map_or(0, |h| h.count()) as f64),
                ),
                ("pairing", r.placements.as_ref().map_or(Json::Null, pairing)),
            ]),
        ),
    ])
}

/// The board's health around one benchmark; null where the board does not tell.
/// `clockMHz` is the mean CPU clock during the benchmark (`clockSource`: `time_in_state`,
/// time-weighted from cpufreq's statistics; `vcgencmd`, one `measure_clock arm` reading
/// as it ended), `clockMaxMHz` the highest clock cpufreq offers, `clockBelowMaxPercent`
/// the share of the time spent below it (time_in_state only), `tempBeforeC` and
/// `tempAfterC` the SoC temperature (the hottest thermal zone) before and after.
fn health_json(h: &Health) -> Json {
    Json::obj([
        ("clockMHz", Json::opt_num(h.clock_mhz)),
        ("clockMaxMHz", Json::opt_num(h.clock_max_mhz)),
        ("clockBelowMaxPercent", Json::opt_num(h.below_max_percent)),
        (
            "clockSource",
            Json::opt_str(h.clock_source.map(|c| c.name())),
        ),
        ("tempBeforeC", Json::opt_num(h.temp_before_c)),
        ("tempAfterC", Json::opt_num(h.temp_after_c)),
    ])
}

/// Where a paired baseline's iterations and the benchmark's ran, pair by pair, one list
/// per fork; and how many pairs ran placed differently.
fn pairing(p: &PairedPlacements) -> Json {
    let cpus = |c: &[usize]| Json::Arr(c.iter().map(|&c| Json::Num(c as f64)).collect());
    let side =
        |s: &Placement| Json::obj([("client", cpus(&s.client)), ("server", cpus(&s.server))]);
    Json::obj([
        ("metric", Json::str(&p.metric)),
        ("pairs", Json::Num(p.pairs() as f64)),
        ("placementDiffers", Json::Num(p.differing().count() as f64)),
        (
            "placements",
            Json::Arr(
                p.forks
                    .iter()
                    .map(|fork| {
                        Json::Arr(
                            fork.iter()
                                .map(|pair| {
                                    Json::obj([
                                        ("baseline", side(&pair.baseline)),
                                        ("measured", side(&pair.measured)),
                                        ("differs", Json::Bool(pair.differs())),
                                    ])
                                })
                                .collect(),
                        )
                    })
                    .collect(),
            ),
        ),
    ])
}

fn metric(s: &Summary, percentiles: Vec<(f64, f64)>, unit: &str, raw: &[Vec<f64>]) -> Json {
    let (lo, hi) = s.confidence();
    Json::obj([
        ("score", Json::Num(s.mean)),
        ("scoreError", Json::Num(s.error)),
        (
            "scoreConfidence",
            Json::Arr(vec![Json::Num(lo), Json::Num(hi)]),
        ),
        (
            "scorePercentiles",
            Json::obj(
                percentiles
                    .into_iter()
                    .map(|(p, v)| (format!("{p:?}"), Json::Num(v))),
            ),
        ),
        ("scoreUnit", Json::str(unit)),
        (
            "rawData",
            Json::Arr(
                raw.iter()
                    .map(|f| Json::Arr(f.iter().map(|&v| Json::Num(v)).collect()))
                    .collect(),
            ),
        ),
    ])
}

/// This machine's environment record as a JSON document: run-all's env.json
/// (`bb-compare --env`).
pub fn environment_document() -> String {
    environment_json(&Environment::capture()).to_pretty()
}

/// The environment record, as in every JSON entry and in [`environment_document`].
fn environment_json(env: &Environment) -> Json {
    Json::obj([
        ("hostname", Json::opt_str(env.hostname.as_deref())),
        ("arch", Json::str(&env.arch)),
        ("cpuModel", Json::opt_str(env.cpu_model.as_deref())),
        ("coresOnline", Json::Num(env.cores_online as f64)),
        ("boardModel", Json::opt_str(env.board_model.as_deref())),
        ("kernel", Json::opt_str(env.kernel.as_deref())),
        ("governor", Json::opt_str(env.governor.as_deref())),
        (
            "curFreqMHz",
            Json::opt_num(env.cur_freq_mhz.map(|f| f as f64)),
        ),
        (
            "maxFreqMHz",
            Json::opt_num(env.max_freq_mhz.map(|f| f as f64)),
        ),
        ("temperatureC", Json::opt_num(env.temperature_c)),
        (
            "loadAvg",
            env.load_avg.map_or(Json::Null, |l| {
                Json::Arr(l.iter().map(|&v| Json::Num(v)).collect())
            }),
        ),
        ("boardbenchVersion", Json::str(&env.boardbench_version)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::result::tests::sample_result;

    #[test]
    fn jmh_fields_are_present_and_nan_is_a_string() {
        let r = sample_result("bb.zstd.compress", "1", vec![1.0, 2.0]);
        let env = Environment {
            arch: "armv7l".into(),
            cores_online: 4,
            ..Default::default()
        };
        let text = render(&[r], &env);
        let v = Json::parse(&text).unwrap();
        let e = &v.as_array().unwrap()[0];
        assert_eq!(
            e.get("benchmark").unwrap().as_str(),
            Some("bb.zstd.compress")
        );
        assert_eq!(e.get("mode").unwrap().as_str(), Some("thrpt"));
        assert_eq!(e.get("warmupTime").unwrap().as_str(), Some("500 ms"));
        assert_eq!(e.get("measurementTime").unwrap().as_str(), Some("1 s"));
        assert_eq!(
            e.get("params").unwrap().get("threads").unwrap().as_str(),
            Some("1")
        );
        let pm = e.get("primaryMetric").unwrap();
        assert_eq!(pm.get("score").unwrap().as_f64(), Some(1.5));
        assert!(text.contains("\"scoreError\" : \"NaN\""));
        assert_eq!(pm.get("scoreUnit").unwrap().as_str(), Some("ops/s"));
        assert_eq!(
            pm.get("rawData").unwrap(),
            &Json::Arr(vec![Json::Arr(vec![Json::Num(1.0), Json::Num(2.0)])])
        );
        assert_eq!(
            pm.get("scorePercentiles")
                .unwrap()
                .get("50.0")
                .unwrap()
                .as_f64(),
            Some(1.5)
        );
        assert_eq!(
            e.get("environment").unwrap().get("arch").unwrap().as_str(),
            Some("armv7l")
        );
        assert_eq!(
            e.get("boardbench").unwrap().get("throttled"),
            Some(&Json::Bool(false))
        );
        // An unknown clock and temperature are null, not absent.
        let health = e.get("boardbench").unwrap().get("health").unwrap();
        for key in ["clockMHz", "clockSource", "tempBeforeC", "tempAfterC"] {
            assert_eq!(health.get(key), Some(&Json::Null), "{key}");
        }
        assert_eq!(
            e.get("boardbench").unwrap().get("pairing"),
            Some(&Json::Null)
        );
    }

    #[test]
    fn health_fields_carry_the_clock_and_temperatures() {
        let mut r = sample_result("bb.zstd.compress", "1", vec![1.0, 2.0]);
        r.throttle.health = Health {
            clock_mhz: Some(1275.0),
            clock_max_mhz: Some(1500.0),
            below_max_percent: Some(25.0),
            clock_source: Some(crate::system::throttle::ClockSource::TimeInState),
            temp_before_c: Some(52.1),
            temp_after_c: Some(55.3),
        };
        let v = Json::parse(&render(&[r], &Environment::default())).unwrap();
        let health = v.as_array().unwrap()[0]
            .get("boardbench")
            .unwrap()
            .get("health")
            .unwrap()
            .clone();
        let num = |k: &str| health.get(k).and_then(Json::as_f64);
        assert_eq!(num("clockMHz"), Some(1275.0));
        assert_eq!(num("clockMaxMHz"), Some(1500.0));
        assert_eq!(num("clockBelowMaxPercent"), Some(25.0));
        assert_eq!(
            health.get("clockSource").unwrap().as_str(),
            Some("time_in_state")
        );
        assert_eq!(num("tempBeforeC"), Some(52.1));
        assert_eq!(num("tempAfterC"), Some(55.3));
    }

    #[test]
    fn a_paired_baseline_shows_where_each_pair_ran() {
        let mut r = sample_result("bb.ipc.remote", "1", vec![1.0, 2.0]);
        r.placements = Some(PairedPlacements {
            metric: "vs floor".into(),
            forks: vec![["0/0 0/0", "0/0 1/0"]
                .iter()
                .map(|p| crate::system::placement::PairPlacement::decode(p).unwrap())
                .collect()],
        });
        let v = Json::parse(&render(&[r], &Environment::default())).unwrap();
        let p = v.as_array().unwrap()[0]
            .get("boardbench")
            .unwrap()
            .get("pairing")
            .unwrap()
            .clone();
        assert_eq!(p.get("metric").unwrap().as_str(), Some("vs floor"));
        assert_eq!(p.get("pairs").unwrap().as_f64(), Some(2.0));
        assert_eq!(p.get("placementDiffers").unwrap().as_f64(), Some(1.0));
        let second = &p.get("placements").unwrap().as_array().unwrap()[0]
            .as_array()
            .unwrap()[1];
        assert_eq!(second.get("differs"), Some(&Json::Bool(true)));
        let client = second.get("measured").unwrap().get("client").unwrap();
        assert_eq!(client, &Json::Arr(vec![Json::Num(1.0)]));
    }
}
