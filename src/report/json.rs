//! The JSON report in JMH's `-rf json` layout: every field JMH writes, in JMH's order and
//! with JMH's types (an array of entries with jmhVersion, benchmark, mode, threads, forks,
//! the JVM fields, iterations, times, batch sizes, params, primaryMetric and
//! secondaryMetrics; sample mode with `rawDataHistogram` and the `p0.00` … percentile
//! metrics, scored over every sample),
//! so JMH result viewers take it; boardbench adds `environment` and `boardbench` fields
//! that they ignore. A reader that refuses unknown keys (Jackson's
//! `FAIL_ON_UNKNOWN_PROPERTIES`, kotlinx.serialization's default) takes `--format jmh`
//! ([`render_jmh`]): the same entries with JMH's keys only.

use crate::model::answer::Answer;
use crate::model::failure::Failure;
use crate::model::modes::Mode;
use crate::model::noise::NoiseSource;
use crate::model::result::{BenchResult, Build, PairedPlacements, PercentileMetric};
use crate::stats::{percentiles_of, Summary};
use crate::system::env::Environment;
use crate::system::placement::Placement;
use crate::system::throttle::Health;
use crate::util::json::Json;
use std::time::Duration;

/// The JMH version whose `-rf json` layout this report follows (`jmhVersion`); the
/// boardbench version that wrote it is `boardbench.version`.
pub use crate::model::result::JMH_LAYOUT_VERSION;

/// What JMH's JVM fields hold in a boardbench report, where no JVM runs.
pub const NO_JVM: &str = "n/a";

/// The entries; in the first entry's `boardbench` object, where JMH's readers ignore
/// them, the run's answer where there is one as `answer` (`{"program": …, "lines": […]}`)
/// and the benchmarks that failed, which have no entry (as in JMH's), as `failed`
/// (`[{"benchmark": label, "error": …}]`).
pub fn render(
    results: &[BenchResult],
    failed: &[Failure],
    env: &Environment,
    answer: Option<&Answer>,
) -> String {
    // In an A/B run, a row the other build lacks is still this build's.
    let this = results.iter().find_map(|r| Some(&r.versus.as_ref()?.this));
    let mut entries: Vec<Json> = results.iter().flat_map(|r| entries(r, this, env)).collect();
    if let Some(Json::Obj(first)) = entries.first_mut() {
        if let Some((_, Json::Obj(ours))) = first.iter_mut().find(|(k, _)| k == "boardbench") {
            if let Some(answer) = answer {
                ours.push(("answer".into(), answer_json(answer)));
            }
            if !failed.is_empty() {
                let failed = failed.iter().map(|f| {
                    Json::obj([
                        ("benchmark", Json::str(&f.benchmark)),
                        ("error", Json::str(&f.error)),
                    ])
                });
                ours.push(("failed".into(), Json::Arr(failed.collect())));
            }
        }
    }
    Json::Arr(entries).to_pretty()
}

/// `--format jmh`: the entries with JMH's keys only (the 19 of JMH's `-rf json`, and in
/// the metrics JMH's own), so that a reader that refuses unknown keys opens the file;
/// the environment, boardbench's extras, the answer and the failed benchmarks are left
/// out (the text table on stdout, with `--output`, still has the last two).
pub fn render_jmh(results: &[BenchResult]) -> String {
    Json::Arr(results.iter().map(|r| entry(r, None)).collect()).to_pretty()
}

/// A result's entry; in an A/B run (`--against`, whose build is `this`) two, this build's then the other's,
/// each naming its build in `boardbench.build` (`side`, `path`, `sha1`), this build's
/// with the pairs' ratio in `boardbench.against`, so that bb-compare reads the file as
/// the two runs it is.
fn entries(r: &BenchResult, this: Option<&Build>, env: &Environment) -> Vec<Json> {
    let build = |side: &str, b: &Build| {
        Json::obj([
            ("side", Json::str(side)),
            ("path", Json::str(&b.path)),
            ("sha1", Json::str(&b.sha1)),
        ])
    };
    let Some(versus) = &r.versus else {
        return vec![match this {
            Some(this) => with_ours(entry(r, Some(env)), [("build", build("this", this))]),
            None => entry(r, Some(env)),
        }];
    };
    let ratio = versus.ratio.map_or(Json::Null, |p| {
        Json::obj([
            ("path", Json::str(&versus.other.path)),
            ("sha1", Json::str(&versus.other.sha1)),
            ("ratio", Json::Num(p.ratio)),
            ("low", Json::Num(p.low)),
            ("high", Json::Num(p.high)),
            // The pairs the ratio used: one with a score of 0 or not a number is left out.
            ("pairs", Json::Num(p.basis.count() as f64)),
            ("basis", Json::str(p.basis.name())),
            ("verdict", Json::str(p.verdict().name())),
            ("level", Json::Num(crate::stats::paired::PAIRED_CONFIDENCE)),
            // What the pairs could have called at 95% power (0.04: 4%), and one pair's
            // spread (the standard deviation of its log-ratio), which sizes a next run.
            ("smallestChange", Json::Num(p.smallest)),
            ("pairSpread", Json::Num(p.spread)),
        ])
    });
    let this = with_ours(
        entry(r, Some(env)),
        [("build", build("this", &versus.this)), ("against", ratio)],
    );
    let other = with_ours(
        entry(&versus.result, Some(env)),
        [("build", build("against", &versus.other))],
    );
    vec![this, other]
}

/// `entry` with `fields` added to its `boardbench` object.
fn with_ours<const N: usize>(mut entry: Json, fields: [(&str, Json); N]) -> Json {
    if let Json::Obj(keys) = &mut entry {
        if let Some((_, Json::Obj(ours))) = keys.iter_mut().find(|(k, _)| k == "boardbench") {
            ours.extend(fields.map(|(k, v)| (k.to_string(), v)));
        }
    }
    entry
}

fn answer_json(answer: &Answer) -> Json {
    Json::obj([
        ("program", Json::str(&answer.program)),
        (
            "lines",
            Json::Arr(answer.lines.iter().map(Json::str).collect()),
        ),
    ])
}

/// An iteration time as JMH's `TimeValue` prints it ("10 s", "500 ms", "250 us"), or
/// "single-shot" in single-shot mode, where iterations have no time.
fn jmh_time(d: Duration, mode: Mode) -> Json {
    if mode == Mode::SingleShot {
        return Json::str("single-shot");
    }
    let ns = d.as_nanos();
    let (n, unit) = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")]
        .into_iter()
        .find(|(per, _)| ns.is_multiple_of(*per))
        .map_or((ns, "ns"), |(per, unit)| (ns / per, unit));
    Json::str(format!("{n} {unit}"))
}

/// JMH's JVM fields, honestly: `jvm` is this binary's path, `jvmArgs` its arguments, and
/// the JDK and VM fields "n/a".
fn vm_fields() -> [(&'static str, Json); 5] {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| crate::util::terminal::program_name());
    let args = std::env::args_os()
        .skip(1)
        .map(|a| Json::str(a.to_string_lossy()))
        .collect();
    [
        ("jvm", Json::str(exe)),
        ("jvmArgs", Json::Arr(args)),
        ("jdkVersion", Json::str(NO_JVM)),
        ("vmName", Json::str(NO_JVM)),
        ("vmVersion", Json::str(NO_JVM)),
    ]
}

/// One benchmark's entry; with `env`, boardbench's `environment` and `boardbench` extras
/// after JMH's keys.
fn entry(r: &BenchResult, env: Option<&Environment>) -> Json {
    let mut fields = jmh_fields(r);
    if let Some(env) = env {
        fields.extend([
            ("environment", environment_json(env)),
            ("boardbench", boardbench_json(r, env)),
        ]);
    }
    Json::obj(fields)
}

/// JMH's keys of an entry, in JMH's order: the run's settings, the params, the metrics.
fn jmh_fields(r: &BenchResult) -> Vec<(&'static str, Json)> {
    let s = &r.settings;
    let mode = r.mode();
    let mut fields: Vec<(&str, Json)> = vec![
        ("jmhVersion", Json::str(JMH_LAYOUT_VERSION)),
        ("benchmark", Json::str(&r.name)),
        ("mode", Json::str(mode.short())),
        ("threads", Json::Num(r.threads as f64)),
        ("forks", Json::Num(s.forks as f64)),
    ];
    fields.extend(vm_fields());
    fields.extend([
        ("warmupIterations", Json::Num(s.warmup_iterations as f64)),
        ("warmupTime", jmh_time(s.warmup_time, mode)),
        ("warmupBatchSize", Json::Num(1.0)),
        ("measurementIterations", Json::Num(s.iterations as f64)),
        ("measurementTime", jmh_time(s.time, mode)),
        ("measurementBatchSize", Json::Num(1.0)),
    ]);
    // JMH leaves params out when a benchmark has none, and sorts them by name.
    if !r.params.is_empty() {
        let keys = super::jmh_param_order(r.params.iter().map(|(k, _)| k.clone()));
        fields.push((
            "params",
            Json::obj(keys.into_iter().map(|k| {
                let v = Json::str(r.param(&k).unwrap_or_default());
                (k, v)
            })),
        ));
    }
    fields.extend(metrics_fields(r));
    fields
}

/// `primaryMetric` and `secondaryMetrics`: the score, sample mode's percentile rows, and
/// the metrics the workload reported.
fn metrics_fields(r: &BenchResult) -> [(&'static str, Json); 2] {
    let mode = r.mode();
    let primary_raw = match (mode, &r.histogram) {
        (Mode::Sample, Some(_)) => ("rawDataHistogram", raw_data_histogram(r)),
        _ => ("rawData", raw_data(&r.raw)),
    };
    let percentile_metrics = r.sample_percentiles();
    let secondary = percentile_metrics
        .iter()
        .map(|m| (m.name.clone(), percentile_metric(m, &r.unit())))
        .chain(r.secondary.iter().map(|m| {
            let pct = percentiles_of(&m.raw);
            (
                m.name.clone(),
                metric(&m.summary, pct, &m.unit, ("rawData", raw_data(&m.raw))),
            )
        }));
    [
        (
            "primaryMetric",
            metric(&r.score(), r.percentiles(), &r.unit(), primary_raw),
        ),
        ("secondaryMetrics", Json::obj(secondary)),
    ]
}

/// boardbench's own keys of an entry: CPU, memory, the board's health and flags, the
/// honest error and what it rests on, placement, offered load.
fn boardbench_json(r: &BenchResult, env: &Environment) -> Json {
    Json::obj([
        ("version", Json::str(&env.boardbench_version)),
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
        // What makes the figure not the board's best (`system::validity`).
        (
            "flags",
            Json::Arr(
                r.throttle
                    .flags
                    .iter()
                    .map(|f| Json::str(f.name()))
                    .collect(),
            ),
        ),
        (
            "throttleReasons",
            Json::Arr(r.throttle.reasons.iter().map(Json::str).collect()),
        ),
        ("maxTemperatureC", Json::opt_num(r.throttle.max_temp_c)),
        ("health", health_json(&r.throttle.health)),
        // The monitor's readings while its forks ran, in the columns the
        // environment's `monitor` names.
        ("monitor", readings_json(&r.throttle.readings)),
        ("error", Json::Num(r.uncertainty().error)),
        ("errorBasis", Json::str(r.uncertainty().basis.name())),
        ("noiseBand", Json::Num(r.settings.noise_band)),
        ("runFloor", Json::Num(r.settings.run_floor)),
        ("noiseSource", Json::str(r.settings.noise_source.name())),
        (
            "noiseCalibration",
            calibration_json(&r.settings.noise_source),
        ),
        ("variance", {
            let [iterations, forks, runs] = r.variance();
            Json::obj([
                ("iterations", Json::opt_num(iterations)),
                ("forks", Json::opt_num(forks)),
                ("runs", Json::opt_num(runs)),
            ])
        }),
        (
            "precision",
            r.precision.map_or(Json::Null, |p| {
                Json::obj([
                    ("target", Json::Num(p.target)),
                    ("reached", Json::Bool(p.reached)),
                    ("seconds", Json::Num(p.seconds)),
                ])
            }),
        ),
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
        (
            "offeredLoad",
            r.offered_load().map_or(Json::Null, |l| {
                Json::obj([
                    ("targetRate", Json::Num(l.target)),
                    ("achievedRate", Json::Num(l.achieved)),
                    ("saturated", Json::Bool(l.saturated())),
                ])
            }),
        ),
    ])
}

/// JMH's `rawData`: one list per fork, one value per iteration.
fn raw_data(raw: &[Vec<f64>]) -> Json {
    Json::Arr(
        raw.iter()
            .map(|f| Json::Arr(f.iter().map(|&v| Json::Num(v)).collect()))
            .collect(),
    )
}

/// JMH's `rawDataHistogram` of sample mode: per fork, per iteration, the `[value, count]`
/// pairs of the latency histogram's non-empty buckets (each bucket's midpoint, within
/// 0.4% of every sample in it, in the score's unit), lowest first.
fn raw_data_histogram(r: &BenchResult) -> Json {
    Json::Arr(
        r.iteration_histograms
            .iter()
            .map(|fork| {
                Json::Arr(
                    fork.iter()
                        .map(|h| {
                            Json::Arr(
                                r.samples_of(h)
                                    .into_iter()
                                    .map(|(value, count)| {
                                        Json::Arr(vec![Json::Num(value), Json::Num(count as f64)])
                                    })
                                    .collect(),
                            )
                        })
                        .collect(),
                )
            })
            .collect(),
    )
}

/// A sample-mode percentile metric as JMH writes one: no error, its confidence
/// `["NaN", "NaN"]`, every scorePercentile equal to the score.
fn percentile_metric(m: &PercentileMetric, unit: &str) -> Json {
    Json::obj([
        ("score", Json::Num(m.score)),
        ("scoreError", Json::Num(f64::NAN)),
        (
            "scoreConfidence",
            Json::Arr(vec![Json::Num(f64::NAN), Json::Num(f64::NAN)]),
        ),
        (
            "scorePercentiles",
            Json::obj(
                crate::stats::PERCENTILES
                    .iter()
                    .map(|p| (format!("{p:?}"), Json::Num(m.score))),
            ),
        ),
        ("scoreUnit", Json::str(unit)),
        ("rawData", raw_data(&m.raw)),
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
/// Which calibration of this board a row's noise came from: its runs and day; null for
/// the binary's default.
fn calibration_json(source: &NoiseSource) -> Json {
    match source {
        NoiseSource::Calibration { runs, measured, .. } => Json::obj([
            ("runs", Json::Num(*runs as f64)),
            ("measured", Json::str(measured)),
        ]),
        NoiseSource::Default => Json::Null,
    }
}

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

fn metric(s: &Summary, percentiles: Vec<(f64, f64)>, unit: &str, raw: (&str, Json)) -> Json {
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
        raw,
    ])
}

/// This machine's environment record as a JSON document: run-all's env.json
/// (`bb-compare --env`).
pub fn environment_document() -> String {
    environment_json(&Environment::capture()).to_pretty()
}

/// The environment record, as in every JSON entry and in [`environment_document`].
fn environment_json(env: &Environment) -> Json {
    let mut fields: Vec<(&str, Json)> = vec![
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
        // Other processes' CPU just before the run, in cores, and over how long.
        (
            "background",
            env.background.map_or(Json::Null, |b| {
                Json::obj([
                    ("cores", Json::Num((b.cores * 1000.0).round() / 1000.0)),
                    (
                        "windowS",
                        Json::Num((b.window.as_secs_f64() * 1000.0).round() / 1000.0),
                    ),
                ])
            }),
        ),
        (
            "memTotalKiB",
            Json::opt_num(env.mem_total_kib.map(|k| k as f64)),
        ),
        (
            "swapTotalKiB",
            Json::opt_num(env.swap_total_kib.map(|k| k as f64)),
        ),
        ("distribution", Json::opt_str(env.distribution.as_deref())),
        ("pageSize", Json::opt_num(env.page_size.map(|p| p as f64))),
        ("preemption", Json::opt_str(env.preemption.as_deref())),
        (
            "clusters",
            Json::Arr(env.clusters.iter().map(cluster_json).collect()),
        ),
    ];
    fields.extend(run_fields(env));
    fields.push(("boardbenchVersion", Json::str(&env.boardbench_version)));
    Json::obj(fields)
}

/// What the harness recorded of the board around this run: the idle wait, the clocks
/// measured, the monitor's columns, the governor set, the cluster pinned to.
fn run_fields(env: &Environment) -> [(&'static str, Json); 6] {
    [
        // How long the run waited for an idle board, and whether it went idle.
        (
            "idleWait",
            env.idle_wait.map_or(Json::Null, |w| {
                Json::obj([
                    ("idle", Json::Bool(w.idle)),
                    (
                        "waitedS",
                        Json::Num((w.waited.as_secs_f64() * 10.0).round() / 10.0),
                    ),
                    (
                        "backgroundCores",
                        Json::Num((w.background * 1000.0).round() / 1000.0),
                    ),
                    ("limitCores", Json::Num(w.limit)),
                ])
            }),
        ),
        // Each cluster's clock measured by a timed loop at the run's start and end,
        // beside what cpufreq reported.
        ("measuredClocks", clocks_json(&env.clocks)),
        // `--monitor`: how often the sensors were read, and the readings' columns.
        (
            "monitor",
            env.monitor.as_ref().map_or(Json::Null, monitor_json),
        ),
        // `--governor`: what every policy was set to for the run, and what each had.
        (
            "governorSet",
            env.governor_set
                .as_ref()
                .map_or(Json::Null, |(to, before)| {
                    Json::obj([
                        ("to", Json::str(to)),
                        ("before", Json::Arr(before.iter().map(Json::str).collect())),
                    ])
                }),
        ),
        // The cluster the run was pinned to, and what chose it.
        (
            "runCluster",
            env.run_cluster
                .as_ref()
                .map_or(Json::Null, |(c, _)| cluster_json(c)),
        ),
        (
            "runClusterChosenBy",
            env.run_cluster
                .as_ref()
                .map_or(Json::Null, |(_, by_default)| {
                    Json::str(if *by_default { "default" } else { "--cluster" })
                }),
        ),
    ]
}

/// Each cluster's clock measured at the run's start and end, beside cpufreq's.
fn clocks_json(clocks: &[crate::system::clock::ClusterClock]) -> Json {
    Json::Arr(
        clocks
            .iter()
            .map(|c| {
                let mhz = |r: Option<(f64, Option<u64>)>| Json::opt_num(r.map(|r| r.0.round()));
                let reported = |r: Option<(f64, Option<u64>)>| {
                    Json::opt_num(r.and_then(|r| r.1).map(|m| m as f64))
                };
                Json::obj([
                    ("policy", Json::opt_num(c.policy.map(|p| p as f64))),
                    ("cpu", Json::Num(c.cpu as f64)),
                    ("startMHz", mhz(c.start)),
                    ("startReportedMHz", reported(c.start)),
                    ("endMHz", mhz(c.end)),
                    ("endReportedMHz", reported(c.end)),
                ])
            })
            .collect(),
    )
}

/// The monitor's interval and the columns of its readings.
fn monitor_json(m: &crate::system::monitor::Series) -> Json {
    Json::obj([
        ("intervalS", Json::Num(m.interval.as_secs_f64())),
        ("zones", Json::Arr(m.zones.iter().map(Json::str).collect())),
        (
            "policies",
            Json::Arr(
                m.policies
                    .iter()
                    .map(|p| Json::opt_num(p.map(|p| p as f64)))
                    .collect(),
            ),
        ),
        (
            "columns",
            Json::Arr(
                [
                    "s",
                    "tempsC",
                    "clocksMHz",
                    "throttled",
                    "swapIn",
                    "swapOut",
                    "memAvailableKiB",
                ]
                .into_iter()
                .map(Json::str)
                .collect(),
            ),
        ),
    ])
}

/// A row's monitor readings, one array each in the columns the environment names.
fn readings_json(readings: &[crate::system::monitor::Reading]) -> Json {
    let opt = |v: Option<u64>| Json::opt_num(v.map(|v| v as f64));
    Json::Arr(
        readings
            .iter()
            .map(|r| {
                Json::Arr(vec![
                    Json::Num((r.at.as_secs_f64() * 1000.0).round() / 1000.0),
                    Json::Arr(r.temps_c.iter().map(|&t| Json::opt_num(t)).collect()),
                    Json::Arr(r.clocks_mhz.iter().map(|&c| opt(c)).collect()),
                    opt(r.throttled_bits.map(u64::from)),
                    opt(r.vm.map(|v| v.swapped_in)),
                    opt(r.vm.map(|v| v.swapped_out)),
                    opt(r.mem_available_kib),
                ])
            })
            .collect(),
    )
}

/// One cluster of the environment record: its policy, cores and clocks.
fn cluster_json(c: &crate::system::topology::Cluster) -> Json {
    let mhz = |f: Option<u64>| Json::opt_num(f.map(|f| f as f64));
    Json::obj([
        ("policy", Json::opt_num(c.policy.map(|p| p as f64))),
        (
            "cpus",
            Json::Arr(c.cpus.iter().map(|&n| Json::Num(n as f64)).collect()),
        ),
        ("core", Json::opt_str(c.core.as_deref())),
        ("capacity", Json::opt_num(c.capacity.map(|p| p as f64))),
        ("minFreqMHz", mhz(c.min_mhz)),
        ("maxFreqMHz", mhz(c.max_mhz)),
        ("curFreqMHz", mhz(c.cur_mhz)),
        ("governor", Json::opt_str(c.governor.as_deref())),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::tests::sample_result;

    #[test]
    fn an_ab_run_writes_both_builds_and_a_row_of_this_build_alone_is_this_builds() {
        use crate::model::result::{Build, Versus};
        use crate::stats::paired::PairedRatio;
        let build = |p: &str, sha: char| Build {
            path: p.into(),
            sha1: sha.to_string().repeat(40),
        };
        let mut paired = sample_result("bb.zstd.compress", "1", vec![1.0]);
        paired.versus = Some(Versus {
            this: build("/x/bb-zstd", 'a'),
            other: build("./old/bb-zstd", 'b'),
            result: Box::new(paired.clone()),
            ratio: PairedRatio::of(&[1.2, 1.21, 1.19, 1.2, 1.2], 0.35),
        });
        let alone = sample_result("bb.zstd.compress", "2", vec![1.0]);
        let v = Json::parse(&render(
            &[paired, alone],
            &[],
            &Environment::default(),
            None,
        ))
        .unwrap();
        let entries = v.as_array().unwrap();
        let side = |i: usize, key: &str| {
            let build = entries[i].get("boardbench").unwrap().get("build").unwrap();
            build.get(key).unwrap().as_str().unwrap().to_string()
        };
        assert_eq!(entries.len(), 3);
        assert_eq!(
            (side(0, "side"), side(0, "path")),
            ("this".into(), "/x/bb-zstd".into())
        );
        assert_eq!(
            (side(1, "side"), side(1, "path")),
            ("against".into(), "./old/bb-zstd".into())
        );
        assert_eq!(
            (side(2, "side"), side(2, "sha1")),
            ("this".into(), "a".repeat(40))
        );
        let against = entries[0]
            .get("boardbench")
            .unwrap()
            .get("against")
            .unwrap();
        assert_eq!(against.get("verdict").unwrap().as_str(), Some("faster"));
        // The pairs the ratio used, not the forks each side ran.
        assert_eq!(against.get("pairs").unwrap().as_f64(), Some(5.0));
    }

    #[test]
    fn the_answer_rides_in_the_first_entry_only() {
        let r = sample_result("bb.zstd.compress", "1", vec![1.0]);
        let answer = Answer::new("bb-zstd".into(), vec!["compress: 344 MB/s".into()]);
        let v = Json::parse(&render(
            &[r.clone(), r],
            &[],
            &Environment::default(),
            Some(&answer),
        ))
        .unwrap();
        let entries = v.as_array().unwrap();
        let first = entries[0].get("boardbench").unwrap().get("answer").unwrap();
        assert_eq!(first.get("program").unwrap().as_str(), Some("bb-zstd"));
        let lines = first.get("lines").unwrap().as_array().unwrap();
        assert_eq!(lines[0].as_str(), Some("compress: 344 MB/s"));
        assert!(entries[1]
            .get("boardbench")
            .unwrap()
            .get("answer")
            .is_none());
    }

    #[test]
    fn failed_benchmarks_have_no_entry_and_are_listed_in_the_first() {
        let r = sample_result("bb.ipc.local", "1", vec![1.0]);
        let failed = [Failure {
            benchmark: "bb.ipc.remote (transport=tcp)".into(),
            error: "refused".into(),
        }];
        let env = Environment::default();
        let v = Json::parse(&render(&[r.clone(), r], &failed, &env, None)).unwrap();
        let entries = v.as_array().unwrap();
        assert_eq!(entries.len(), 2);
        let listed = entries[0].get("boardbench").unwrap().get("failed").unwrap();
        let listed = listed.as_array().unwrap();
        assert_eq!(listed.len(), 1);
        let name = listed[0].get("benchmark").unwrap().as_str();
        assert_eq!(name, Some("bb.ipc.remote (transport=tcp)"));
        assert_eq!(listed[0].get("error").unwrap().as_str(), Some("refused"));
        assert!(entries[1]
            .get("boardbench")
            .unwrap()
            .get("failed")
            .is_none());
        assert_eq!(render(&[], &failed, &env, None).trim(), "[]");
    }

    #[test]
    fn jmh_fields_are_present_and_nan_is_a_string() {
        let r = sample_result("bb.zstd.compress", "1", vec![1.0, 2.0]);
        let env = Environment {
            arch: "armv7l".into(),
            cores_online: 4,
            ..Default::default()
        };
        let text = render(&[r], &[], &env, None);
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
        // One fork: the honest error is the noise band's, not JMH's NaN from 2 values.
        let ours = e.get("boardbench").unwrap();
        let band = crate::stats::uncertainty::NOISE_BAND * 1.5;
        assert_eq!(ours.get("error").unwrap().as_f64(), Some(band));
        assert_eq!(ours.get("errorBasis").unwrap().as_str(), Some("band 1"));
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

    /// The keys of the object at `path` in `text`'s first entry, in order (serde_json
    /// sorts them).
    fn keys(text: &str, path: &[&str]) -> Vec<String> {
        let doc = Json::parse(text).unwrap();
        let mut v = &doc.as_array().unwrap()[0];
        for key in path {
            v = v.get(key).unwrap();
        }
        match v {
            Json::Obj(pairs) => pairs.iter().map(|(k, _)| k.clone()).collect(),
            _ => panic!("not an object: {v:?}"),
        }
    }

    #[test]
    fn every_field_jmh_writes_is_there_in_jmh_order_with_jmh_types() {
        let env = Environment {
            boardbench_version: "0.1.0".into(),
            ..Default::default()
        };
        let mut r = sample_result("bb.zstd.compress", "1", vec![1.0, 2.0, 3.0]);
        r.params.clear();
        let text = render(&[r], &[], &env, None);
        assert_eq!(
            keys(&text, &[]),
            [
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
                "primaryMetric",
                "secondaryMetrics",
                "environment",
                "boardbench"
            ],
            "params left out when there are none, as JMH does"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let e = &v[0];
        assert_eq!(e["jmhVersion"], JMH_LAYOUT_VERSION);
        assert_eq!(e["boardbench"]["version"], "0.1.0");
        assert!(e["jvm"].as_str().unwrap().starts_with('/'), "{}", e["jvm"]);
        assert!(e["jvmArgs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a.is_string()));
        for key in ["jdkVersion", "vmName", "vmVersion"] {
            assert_eq!(e[key], NO_JVM, "{key}");
        }
        for key in [
            "threads",
            "forks",
            "warmupIterations",
            "warmupBatchSize",
            "measurementIterations",
            "measurementBatchSize",
        ] {
            assert!(e[key].is_u64(), "{key} is an integer: {}", e[key]);
        }
        assert_eq!(
            keys(&text, &["primaryMetric"]),
            [
                "score",
                "scoreError",
                "scoreConfidence",
                "scorePercentiles",
                "scoreUnit",
                "rawData"
            ]
        );
    }

    /// The keys JMH's `-rf json` writes in an entry (`JSONResultFormat`), params
    /// included, and in a metric (primary or secondary): a strict reader's data class.
    pub(crate) const JMH_ENTRY_KEYS: [&str; 19] = [
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
    pub(crate) const JMH_METRIC_KEYS: [&str; 7] = [
        "score",
        "scoreError",
        "scoreConfidence",
        "scorePercentiles",
        "scoreUnit",
        "rawData",
        "rawDataHistogram",
    ];

    /// Reads `text` as a reader that refuses unknown keys does: every key of an entry and
    /// of its metrics must be one of JMH's. The unknown keys, with where they are.
    fn unknown_keys(text: &str) -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut unknown = Vec::new();
        let mut check = |o: &serde_json::Value, allowed: &[&str], at: &str| {
            for k in o.as_object().unwrap().keys() {
                if !allowed.contains(&k.as_str()) {
                    unknown.push(format!("{at}{k}"));
                }
            }
        };
        for (i, e) in v.as_array().unwrap().iter().enumerate() {
            check(e, &JMH_ENTRY_KEYS, &format!("[{i}]."));
            check(&e["primaryMetric"], &JMH_METRIC_KEYS, "primaryMetric.");
            for (name, m) in e["secondaryMetrics"].as_object().unwrap() {
                check(m, &JMH_METRIC_KEYS, &format!("secondaryMetrics.{name}."));
            }
        }
        unknown
    }

    #[test]
    fn the_jmh_format_has_jmh_keys_only_and_json_the_same_entries_with_extras() {
        let mut thrpt = sample_result("bb.zstd.compress", "1", vec![1.0, 2.0, 3.0]);
        thrpt.secondary = vec![crate::model::result::Secondary::new(
            "MB/s",
            "MB/s",
            vec![vec![3.0, 4.0, 5.0]],
        )];
        let sample = crate::model::result::tests::sample_mode_result();
        let results = [thrpt, sample];
        let failed = [Failure {
            benchmark: "bb.x".into(),
            error: "refused".into(),
        }];
        let answer = Answer::new("bb-zstd".into(), vec!["fast".into()]);
        let env = Environment::default();
        let strict = render_jmh(&results);
        assert_eq!(unknown_keys(&strict), Vec::<String>::new(), "{strict}");
        let ours = render(&results, &failed, &env, Some(&answer));
        let unknown = unknown_keys(&ours);
        // serde_json sorts the keys.
        let extras = ["boardbench", "environment"];
        let want: Vec<String> = (0..2)
            .flat_map(|i| extras.map(|k| format!("[{i}].{k}")))
            .collect();
        assert_eq!(unknown, want);
        // Without the extras, the same document.
        let mut doc: serde_json::Value = serde_json::from_str(&ours).unwrap();
        for e in doc.as_array_mut().unwrap() {
            let e = e.as_object_mut().unwrap();
            e.remove("environment");
            e.remove("boardbench");
        }
        let strict: serde_json::Value = serde_json::from_str(&strict).unwrap();
        assert_eq!(strict, doc);
    }

    #[test]
    fn times_print_as_jmh_time_values() {
        let t = |ms: u64, mode| jmh_time(Duration::from_micros(ms), mode);
        assert_eq!(t(3_000_000, Mode::Throughput), Json::str("3 s"));
        assert_eq!(t(500_000, Mode::AverageTime), Json::str("500 ms"));
        assert_eq!(t(250, Mode::Sample), Json::str("250 us"));
        assert_eq!(t(1_500_000, Mode::Throughput), Json::str("1500 ms"));
        assert_eq!(t(1_000_000, Mode::SingleShot), Json::str("single-shot"));
    }

    #[test]
    fn sample_mode_has_raw_data_histogram_and_percentile_metrics() {
        let r = crate::model::result::tests::sample_mode_result();
        let text = render(&[r], &[], &Environment::default(), None);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let e = &v[0];
        assert_eq!(e["mode"], "sample");
        let pm = &e["primaryMetric"];
        assert!(
            pm.get("rawData").is_none(),
            "JMH writes no rawData in sample mode"
        );
        assert_eq!(
            keys(&text, &["primaryMetric"]).last().unwrap(),
            "rawDataHistogram"
        );
        let h = pm["rawDataHistogram"].as_array().unwrap();
        assert_eq!(h.len(), 2, "one list per fork");
        let iterations: Vec<usize> = h.iter().map(|f| f.as_array().unwrap().len()).collect();
        assert_eq!(iterations, [2, 1], "one list per iteration");
        let mut count = 0;
        for pair in h
            .iter()
            .flat_map(|f| f.as_array().unwrap())
            .flat_map(|i| i.as_array().unwrap())
        {
            let pair = pair.as_array().unwrap();
            assert_eq!(pair.len(), 2);
            assert!(pair[0].as_f64().unwrap() > 0.0);
            count += pair[1].as_u64().expect("an integer count");
        }
        assert_eq!(count, 110);
        assert_eq!(
            h[1][0],
            serde_json::json!([[1000, 10]]),
            "1 ms ten times, in us"
        );
        let secondary = keys(&text, &["secondaryMetrics"]);
        assert_eq!(secondary[0], "p0.00", "JMH 1.37's names");
        assert_eq!(secondary[7], "p1.00");
        let p99 = &e["secondaryMetrics"]["p0.99"];
        assert_eq!(p99["scoreError"], "NaN");
        assert_eq!(p99["scoreConfidence"], serde_json::json!(["NaN", "NaN"]));
        assert_eq!(p99["scoreUnit"], "us/op");
        assert_eq!(p99["scorePercentiles"]["0.0"], p99["score"]);
        assert_eq!(p99["rawData"][1], serde_json::json!([1000]));
        assert!(p99.get("rawDataHistogram").is_none());
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
        let v = Json::parse(&render(&[r], &[], &Environment::default(), None)).unwrap();
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
        let v = Json::parse(&render(&[r], &[], &Environment::default(), None)).unwrap();
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
