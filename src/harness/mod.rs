//! The harness, the core of boardbench: a binary describes its benchmarks (a name,
//! parameters and one operation, see [`benchmark`]) as a [`Suite`] (its profiles, the
//! notes it prints after the header line, the steps that prepare its inputs, a
//! [`Prelude`] whose outcome decides its benchmarks) and hands it to [`run_suite`], which
//! owns the plan of the run, the header line, warm-up and iterations (`runner`), forks
//! ([`fork`]), timeouts (`watchdog`), signals, the forks gathered into results
//! (`aggregate`), the environment and throttling watch, `--pin` ([`pin_process`]) and the
//! reports; [`main_with`] is every binary's `main`. No binary prints its own tables or
//! computes its own statistics.

pub(crate) mod against;
pub(crate) mod aggregate;
pub mod benchmark;
mod board;
pub mod checks;
pub mod cli;
#[cfg(feature = "fault-injection")]
pub(crate) mod drift;
pub(crate) mod exec;
pub mod fork;
pub mod noise;
pub(crate) mod pair;
pub(crate) mod plan;
pub(crate) mod runner;
pub(crate) mod signals;
pub(crate) mod turns;
pub(crate) mod watchdog;

use self::benchmark::{Benchmark, Settings, TimeUnit};
use self::cli::{CommonArgs, Mode, Profile};
use crate::model::answer::{
    against_lines, cluster_lines, counters_line, flagged_lines, noise_line, precision_line, Answer,
    Answerer,
};
use crate::model::failure::Failure;
use crate::model::params::{label_with, varying_keys};
use crate::model::result::{Precision, Versus};
use crate::model::warning::Warning;
use crate::stats::paired::PairedRatio;
use crate::stats::uncertainty::Uncertainty;
use crate::system::cooldown;
use crate::system::env::Environment;
use crate::system::throttle::{Snapshot, ThrottleReport};
use crate::util::error::{Error, Result};
use crate::util::format::{count, format_duration};
use crate::util::progress::Progress;
use crate::util::terminal::{program_name, warn};

/// What a binary hands to the harness.
pub struct Suite {
    /// The unit of time-per-operation scores.
    pub unit: TimeUnit,
    /// The binary's settings for each profile (flags override them).
    pub profiles: Profiles,
    pub benchmarks: Vec<Benchmark>,
    /// Whether the harness pins the whole process to `--pin`'s CPUs; false where the
    /// binary uses the CPUs itself (one per process, say).
    pub pin_process: bool,
    /// Lines the parent prints on stderr after the header line (and in a `--dry-run`),
    /// never a fork: where the objects are read from and how, say.
    pub notes: Vec<String>,
    /// Work done in order before the plan and the header, never in a fork and never in a
    /// `--dry-run`: inputs checked for room and generated, say. The first error ends the run.
    pub prepare: Vec<Box<dyn FnOnce() -> Result<()>>>,
    /// Work done once in the parent before the benchmarks, whose outcome decides them.
    pub prelude: Option<Prelude>,
    /// How the results answer the binary's question (the block that ends the text report).
    pub answer: Option<Answerer>,
}

impl Suite {
    /// A suite of `benchmarks` that the harness pins to `--pin`, with no notes, nothing to
    /// prepare and no prelude: set those fields after.
    pub fn new(unit: TimeUnit, profiles: Profiles, benchmarks: Vec<Benchmark>) -> Suite {
        Suite {
            unit,
            profiles,
            benchmarks,
            pin_process: true,
            notes: vec![],
            prepare: vec![],
            prelude: None,
            answer: None,
        }
    }
}

/// A binary's settings for each of the three profiles (`--quick`, `--standard`, `--full`).
#[derive(Debug, Clone, PartialEq)]
pub struct Profiles {
    pub quick: Settings,
    pub standard: Settings,
    pub full: Settings,
}

impl Profiles {
    /// The settings of `profile`.
    pub fn pick(&self, profile: Profile) -> Settings {
        profile
            .pick(&self.quick, &self.standard, &self.full)
            .clone()
    }
}

/// Work a binary does once, in the parent, before its benchmarks, whose outcome decides
/// them: bb-rpc's `--rate sweep` probes the closed-loop maximum and sets its rows' rates
/// from it. The plan counts its time and lists the benchmarks as they are before it; a
/// `--dry-run` does not run it, and neither does a fork, which gets the values the parent
/// measured in its fork request and rebuilds its benchmarks from them.
pub struct Prelude {
    /// What it does, for the plan and the progress line.
    pub what: String,
    pub estimate: std::time::Duration,
    /// Runs it, in the parent: the values the benchmarks are rebuilt from.
    pub measure: Box<dyn FnOnce() -> Result<Vec<f64>>>,
    /// The benchmarks to run instead, from `measure`'s values: as many, in the same
    /// order. Called in the parent, and in each fork with the same values.
    pub rebuild: Rebuild,
}

/// A prelude's [`Prelude::rebuild`].
pub type Rebuild = Box<dyn Fn(&[f64]) -> Result<Vec<Benchmark>>>;

/// The benchmarks `rebuild` makes from `values` in place of the suite's `before`,
/// checked to be as many.
fn rebuilt(what: &str, rebuild: &Rebuild, values: &[f64], before: usize) -> Result<Vec<Benchmark>> {
    let benchmarks = rebuild(values)?;
    if benchmarks.len() != before {
        return Err(Error::failed(format!(
            "{what} changed the number of benchmarks from {before} to {}",
            benchmarks.len()
        )));
    }
    Ok(benchmarks)
}

/// Runs every benchmark of the suite and writes the report. In a fork child, runs only
/// the benchmark the parent asked for and reports back over the pipe.
pub fn run_suite(suite: Suite, flags: &CommonArgs) -> Result<()> {
    let settings = suite.profiles.pick(flags.profile).with_flags(flags);
    validate(&settings)?;
    if let Some(path) = &flags.output {
        crate::util::file::check_output("--output", path)?;
    }
    signals::exit_on_signals();
    let task = fork::child_task();
    count_with(flags.counters, task.is_none());
    match task {
        Some(fork::ChildTask::Run(request)) => run_fork(suite, &settings, request),
        Some(fork::ChildTask::StartOnly) => Ok(()),
        Some(fork::ChildTask::Describe(values)) => describe(suite, &values),
        None => {
            let settings = board_noise(settings, &suite, flags)?;
            run_parent(suite, settings, flags)
        }
    }
}

/// `settings` with this board's noise, where a calibration measured this binary's.
fn board_noise(settings: Settings, suite: &Suite, flags: &CommonArgs) -> Result<Settings> {
    let var = |key: &str| std::env::var(key).ok();
    let board = crate::system::env::board_identity();
    let found = noise::find(flags.noise.as_deref(), &var, &board)?;
    let binary = noise::binary_of_names(suite.benchmarks.iter().map(|b| b.name.as_str()));
    Ok(noise::apply(
        settings,
        found.as_ref(),
        &binary.unwrap_or_default(),
    ))
}

/// A fork child's part: the one benchmark asked for, rebuilt from the parent's prelude
/// values where there is a prelude.
fn run_fork(mut suite: Suite, settings: &Settings, request: fork::ChildRequest) -> Result<()> {
    if let Some(prelude) = suite.prelude.take() {
        let before = suite.benchmarks.len();
        suite.benchmarks = rebuilt(&prelude.what, &prelude.rebuild, &request.values, before)?;
    }
    let index = request.index;
    let bench = suite.benchmarks.get(index).ok_or_else(|| {
        Error::failed(format!(
            "fork asked for benchmark {index}, which does not exist"
        ))
    })?;
    let (settings, unit) = bench.effective(settings, suite.unit);
    // Every deadline armed from here on tells the parent this fork is still going.
    if let Ok(pipe) = request.pipe.try_clone() {
        watchdog::beat_to(pipe);
    }
    // In an A/B pair, each step of the work waits for its turn.
    if let (Some(turns), Ok(pipe)) = (request.turns, request.pipe.try_clone()) {
        turns::driven_by(turns, pipe);
    }
    match runner::run_in_process(bench, &settings, unit) {
        Ok(result) => fork::send(request.pipe, &result),
        // The parent prints it, naming the benchmark, and reports the others.
        Err(e) => {
            fork::send_error(request.pipe, &e);
            watchdog::exit_now(e.exit_code())
        }
    }
}

/// A copy asked to describe itself by an A/B run's parent ([`against`]): the protocol,
/// the program and its benchmarks' labels on stdout, rebuilt from the prelude's values
/// where the parent has measured them.
fn describe(mut suite: Suite, values: &[f64]) -> Result<()> {
    if let Some(prelude) = suite.prelude.take().filter(|_| !values.is_empty()) {
        let before = suite.benchmarks.len();
        suite.benchmarks = rebuilt(&prelude.what, &prelude.rebuild, values, before)?;
    }
    let description = fork::Description {
        protocol: fork::PROTOCOL,
        program: program_name(),
        labels: labels(&suite.benchmarks),
    };
    print!("{}", description.text());
    Ok(())
}

fn labels(benchmarks: &[Benchmark]) -> Vec<String> {
    benchmarks.iter().map(Benchmark::label).collect()
}

/// The other build of an A/B run, checked before anything else is done; its line for
/// the notes, and one naming the rows it lacks.
fn check_against(
    suite: &mut Suite,
    settings: &Settings,
    flags: &CommonArgs,
) -> Result<Option<against::Against>> {
    let Some(path) = &flags.against else {
        return Ok(None);
    };
    if settings.forks == 0 {
        return Err(Error::usage(
            "--against runs both builds in forks: it takes --forks 1 or more",
        ));
    }
    let labels = labels(&suite.benchmarks);
    let against = against::Against::check(path, against::other_args(), &labels, flags.seed)?;
    suite.notes.push(format!(
        "against {} (sha1 {}): each fork of a row paired with one of it, in ABBA order",
        against.shown,
        &against.other.sha1[..12]
    ));
    let missing = against.missing(&labels);
    if !missing.is_empty() {
        suite.notes.push(format!(
            "{} lacks {}, run on this build alone: {}",
            against.shown,
            count(missing.len() as u64, "row"),
            missing.join(", ")
        ));
    }
    Ok(Some(against))
}

/// The parent's part: every benchmark, each in its forks, and the report.
fn run_parent(mut suite: Suite, settings: Settings, flags: &CommonArgs) -> Result<()> {
    let mut against = check_against(&mut suite, &settings, flags)?;
    if !flags.dry_run {
        for step in std::mem::take(&mut suite.prepare) {
            step()?;
        }
    }
    if suite.pin_process {
        if let Some(cpus) = &flags.pin {
            pin_process(cpus)?;
        }
    }
    let planning = std::time::Instant::now();
    resolve_estimates(&mut suite.benchmarks)?;
    let start = fork_start(&settings, &suite.benchmarks);
    let mut plan = plan::Plan::new(
        flags.profile,
        &settings,
        suite.unit,
        &suite.benchmarks,
        start,
    );
    plan.planning = Some(planning.elapsed()).filter(|&t| t >= plan::PLANNING_SHOWN);
    plan.prelude = suite.prelude.as_ref().map(|p| (p.what.clone(), p.estimate));
    if let Some(against) = &against {
        // A row with a pair runs every fork twice, once a build.
        for (planned, row) in plan.benchmarks.iter_mut().zip(&against.rows) {
            if row.is_some() {
                planned.estimate = planned.estimate.saturating_mul(2);
            }
        }
    }
    plan.idle_wait = flags.idle_wait;
    // The whole plan: an A/B row's pairs, the prelude and the idle wait counted.
    plan::check_length(plan.total())?;
    if flags.dry_run {
        print_notes(&suite.notes);
        print!("{}", plan.render(&program_name()));
        return Ok(());
    }
    // The governor is set back when `board` drops: however this function ends.
    let mut board = board::Board::before_the_run(flags, plan.idle_wait);
    crate::stderr!(
        "{}, {}",
        header(&board.env, &settings, &plan),
        plan.summary()
    );
    print_notes(&suite.notes);
    for w in board.warnings() {
        warn(&w);
    }
    // The planning is over: the rest is what the progress line counts down.
    let mut progress = Progress::new(plan.total() - plan.planning.unwrap_or_default());
    let mut values = Vec::new();
    if let Some(Prelude {
        what,
        estimate,
        measure,
        rebuild,
    }) = suite.prelude.take()
    {
        progress.step("first:", &what, estimate);
        // The prelude may print what it found: on a line of its own.
        progress.clear();
        watchdog::arm(settings.timeout, what.clone());
        values = measure()?;
        watchdog::disarm();
        suite.benchmarks = rebuilt(&what, &rebuild, &values, suite.benchmarks.len())?;
        // The progress line's estimates.
        resolve_estimates(&mut suite.benchmarks)?;
        if let Some(against) = &mut against {
            against.rematch(&labels(&suite.benchmarks), &values)?;
        }
    }
    let cooler = flags.cooldown.map(cooldown::Cooler::new);
    let monitor = board.monitor(settings.forks, flags.monitor)?;
    let mut run = Rounds {
        benchmarks: &suite.benchmarks,
        settings: &settings,
        unit: suite.unit,
        start,
        values: &values,
        seed: flags.seed,
        fail_on_error: flags.fail_on_error,
        progress: &mut progress,
        cooler,
        against: against.as_ref(),
        monitor: monitor.as_ref(),
    };
    let (mut results, failed, bad_input) = run.all()?;
    progress.finish();
    board.after_the_run(monitor, &mut results);
    let env = &board.env;
    aggregate::add_scaling(&mut results);
    aggregate::add_ratios(&mut results);
    let answer = answer_of(
        suite.answer,
        &results,
        env,
        flags,
        against.as_ref().map(|a| a.shown.as_str()),
    );
    crate::report::emit(
        &results,
        &failed,
        env,
        answer.as_ref(),
        flags.format,
        flags.output.as_deref(),
    )?;
    failures(&failed, suite.benchmarks.len(), bad_input)
}

/// The run's answer: the binary's own lines, then what every answer may add (where a
/// headline row fell short of --precision, was flagged, was counted; which cluster the
/// figures are of), then in an A/B run how the builds compare (`against`: the other
/// build as shown). None where there is nothing to say.
fn answer_of(
    answerer: Option<Answerer>,
    results: &[crate::model::result::BenchResult],
    env: &Environment,
    flags: &CommonArgs,
    against: Option<&str>,
) -> Option<Answer> {
    let mut tail: Vec<String> = precision_line(results).into_iter().collect();
    tail.extend(flagged_lines(results));
    tail.extend(counters_line(results));
    // An A/B run's verdicts are its pairs', within the run.
    if against.is_none() {
        tail.extend(noise_line(results));
    }
    tail.extend(cluster_lines(
        &env.clusters,
        flags.cluster.as_ref(),
        flags.cluster_by_default,
        &crate::system::pinning::allowed_cpus(),
    ));
    let own = answerer.map(|answerer| answerer(results));
    let mut answer = match (own, tail.is_empty()) {
        (None, true) => None,
        (own, _) => Some(Answer::with_tail(
            program_name(),
            own.unwrap_or_default(),
            tail,
        )),
    };
    // An A/B run's answer ends with how the builds compare.
    if let Some(shown) = against {
        let lines = against_lines(shown, results);
        let answer = answer.get_or_insert_with(|| Answer::new(program_name(), vec![]));
        answer.lines.extend(lines);
    }
    answer
}

/// The benchmarks of a run in their forks: round after round, each round one fork of
/// every benchmark still running, in an order shuffled by the seed (Google Benchmark's
/// random interleaving), so that slow drift of clocks, heat and neighbours falls on every
/// benchmark alike rather than on whichever ran last. With no forks, each benchmark runs
/// once in this process, in order.
struct Rounds<'a> {
    benchmarks: &'a [Benchmark],
    settings: &'a Settings,
    unit: TimeUnit,
    start: std::time::Duration,
    values: &'a [f64],
    seed: u64,
    fail_on_error: bool,
    progress: &'a mut Progress,
    cooler: Option<cooldown::Cooler>,
    /// The other build of an A/B run: a row it has runs each fork twice, a pair.
    against: Option<&'a against::Against>,
    /// The sensors read through the run: each row gets the readings of its forks.
    monitor: Option<&'a crate::system::monitor::Monitor>,
}

/// When one fork ran: from just after the snapshot before it to just before the one after.
type ForkSpan = (std::time::Instant, std::time::Instant);

/// What one benchmark has gathered over the rounds so far.
#[derive(Default)]
struct Gathered {
    forks: Vec<runner::ForkResult>,
    throttle: Vec<ThrottleReport>,
    /// The other build's forks of an A/B run, one per pair, in the pairs' order.
    other: Vec<runner::ForkResult>,
    failed: bool,
    /// The wall time of its forks.
    seconds: f64,
    /// When each of its forks ran.
    spans: Vec<ForkSpan>,
}

impl Rounds<'_> {
    /// Every round; the results in the suite's order, the failures, and whether every
    /// failure was bad input. Ends early on a signal, `--fail-on-error`, or the same
    /// error twice in a row.
    fn all(&mut self) -> Result<(Vec<crate::model::result::BenchResult>, Vec<Failure>, bool)> {
        let n = self.benchmarks.len();
        let mut gathered: Vec<Gathered> = (0..n).map(|_| Gathered::default()).collect();
        let mut failed = Vec::new();
        let mut bad_input = true;
        // The error of the fork just before, when it failed: the same error twice in a
        // row is the run's (expired credentials, a server gone), not a benchmark's, and
        // it would only repeat for every one left.
        let mut previous: Option<String> = None;
        let varying = varying_keys(self.benchmarks.iter().map(|b| b.params.as_slice()));
        let most: Vec<u32> = self
            .benchmarks
            .iter()
            .map(|b| self.settings.most_forks(b.headline).max(1))
            .collect();
        let rounds = most.iter().copied().max().unwrap_or(1);
        let (forks, target) = (self.settings.forks.max(1), self.settings.precision);
        'rounds: for round in 1..=rounds {
            let order = match self.settings.forks {
                0 => (0..n).collect(),
                _ => fork_order(n, round, self.seed),
            };
            // Past the forks every benchmark runs, only headline rows short of the
            // precision, within their budget.
            let wanted =
                |index: usize, g: &Gathered| wants_fork(round, forks, most[index], target, g);
            if round > 1 && !gathered.iter().enumerate().any(|(i, g)| wanted(i, g)) {
                break;
            }
            for index in order {
                if !wanted(index, &gathered[index]) {
                    continue;
                }
                let bench = &self.benchmarks[index];
                let label = bench.label();
                let shown = label_with(&bench.name, &bench.params, &varying);
                let (outcomes, throttle, span) = self.forks(index, round, &label, &shown)?;
                let g = &mut gathered[index];
                g.spans.push(span);
                g.throttle.push(throttle);
                g.seconds += (span.1 - span.0).as_secs_f64();
                for (other, outcome) in outcomes {
                    match outcome {
                        Ok(fork) => {
                            previous = None;
                            let g = &mut gathered[index];
                            match other {
                                Some(_) => g.other.push(fork),
                                None => g.forks.push(fork),
                            }
                        }
                        Err(e) => {
                            // A signal ends the run (its clean-up killed what the benchmark
                            // talked to).
                            if signals::exit_requested().is_some() {
                                return Err(e);
                            }
                            self.progress.finish();
                            let text = e.to_string();
                            let repeated = previous.as_deref() == Some(text.as_str());
                            let left = gathered.iter().filter(|g| !g.failed).count() - 1;
                            if repeated {
                                crate::stderr!(
                                    "{}: {label} failed the same way: stopping before the other {}",
                                    program_name(),
                                    count(left as u64, "benchmark")
                                );
                            } else {
                                crate::stderr!("{}: error: {label}: {text}", program_name());
                            }
                            bad_input &= e.exit_code() == 2;
                            gathered[index].failed = true;
                            failed.push(Failure {
                                benchmark: label,
                                error: text.clone(),
                            });
                            previous = Some(text);
                            if self.fail_on_error || repeated {
                                break 'rounds;
                            }
                            // A pair fails whole.
                            break;
                        }
                    }
                }
            }
        }
        let mut results = Vec::new();
        for (index, g) in gathered.into_iter().enumerate() {
            if g.failed || g.forks.is_empty() {
                continue;
            }
            let bench = &self.benchmarks[index];
            let (settings, unit) = bench.effective(self.settings, self.unit);
            let mut throttle = ThrottleReport::merge(&g.throttle);
            throttle.readings = self.monitor.map_or(vec![], |m| m.within(&g.spans));
            if throttle.throttled {
                self.progress.clear();
                warn(&Warning::Throttled {
                    benchmark: bench.label(),
                    reasons: throttle.reasons.clone(),
                });
            }
            // An A/B row's pairs were planned to see a change, not to a precision.
            let precision = self.settings.precision.filter(|_| {
                self.settings.most_forks(bench.headline) > self.settings.forks && g.other.is_empty()
            });
            let reached = precision.map(|target| Precision {
                target,
                reached: precise(Some(target), &g),
                seconds: g.seconds,
            });
            let mut result =
                aggregate::from_forks(index, bench, &settings, unit, g.forks, throttle);
            result.precision = reached;
            if let Some(against) = self.against.filter(|_| !g.other.is_empty()) {
                let other = aggregate::from_forks(
                    index,
                    bench,
                    &settings,
                    unit,
                    g.other,
                    result.throttle.clone(),
                );
                let speedups: Vec<f64> = result
                    .fork_speeds()
                    .iter()
                    .zip(other.fork_speeds())
                    .map(|(this, other)| this / other)
                    .collect();
                result.versus = Some(Versus {
                    this: against.this.clone(),
                    other: against.other.clone(),
                    ratio: PairedRatio::of(&speedups, settings.noise_band),
                    result: Box::new(other),
                });
            }
            results.push(result);
        }
        // Said once: only --pin none leaves pairs to run where the scheduler puts them.
        if let Some(w) = crate::model::result::placement_warning(&results) {
            self.progress.clear();
            warn(&w);
        }
        // Failures in the order the benchmarks are listed, as the report shows them.
        let position = |f: &Failure| {
            self.benchmarks
                .iter()
                .position(|b| b.label() == f.benchmark)
        };
        failed.sort_by_key(position);
        Ok((results, failed, bad_input))
    }

    /// The forks of benchmark `index` in `round` (or its one run in this process), with
    /// the health around them and when they ran: this build's (None), or in an A/B run
    /// where the other build has the row (Some of its index there), a pair: one fork of
    /// each build alive together and driven in turn (`pair`), this build's first. A
    /// pair that fails is one failure, of the side that failed.
    #[allow(clippy::type_complexity)]
    fn forks(
        &mut self,
        index: usize,
        round: u32,
        label: &str,
        shown: &str,
    ) -> Result<(
        Vec<(Option<usize>, Result<runner::ForkResult>)>,
        ThrottleReport,
        ForkSpan,
    )> {
        let bench = &self.benchmarks[index];
        let (settings, unit) = bench.effective(self.settings, self.unit);
        let pair = self
            .against
            .and_then(|a| Some((a, a.rows.get(index).copied()??)))
            .filter(|_| settings.forks > 0);
        if let Some(cooler) = &mut self.cooler {
            self.progress.clear();
            cooler.before(label);
        }
        let place = format!("[{}/{}]", index + 1, self.benchmarks.len());
        let tag = match (settings.forks, settings.precision) {
            (n, Some(p)) if round > n && pair.is_none() => {
                format!(
                    "{place} fork {round}, to ±{}%",
                    crate::util::format::percent(p)
                )
            }
            (n, _) if round > n => format!("{place} fork {round}"),
            (0 | 1, _) => place,
            (n, _) => format!("{place} fork {round}/{n}"),
        };
        // A pair is named in the tag, which is never cut.
        let (tag, sides) = match pair {
            Some(_) => (format!("{tag}, paired"), 2),
            None => (tag, 1),
        };
        let estimate = bench.estimated_fork_time(&settings, self.start);
        self.progress
            .step(&tag, shown, estimate.saturating_mul(sides));
        // A fork tells of each deadline its watchdog arms, at most --timeout apart: one
        // silent for longer (stopped, or a runner that never started it) is ended here.
        let quiet = settings.timeout.saturating_add(fork::FORK_GRACE);
        // Nor may it say `alive` for ever: a fork (a pair's two together) arms a known
        // number of deadlines.
        let limit = (settings.timeout)
            .saturating_mul(bench.most_deadlines(&settings).saturating_mul(sides))
            .saturating_add(fork::FORK_GRACE);
        let before = Snapshot::take();
        let started = std::time::Instant::now();
        let outcomes = match (settings.forks, pair) {
            (0, _) => vec![(None, runner::run_in_process(bench, &settings, unit))],
            (_, None) => vec![(
                None,
                fork::run_child(index, round, label, self.values, None, quiet, limit)?,
            )],
            (_, Some((a, there))) => {
                let start = |index, launcher| {
                    let values = self.values;
                    fork::Child::start(index, round, label, values, launcher, true, limit)
                };
                let theirs =
                    |e: Error| vec![(Some(there), Err(e.within(format!("--against {}", a.shown))))];
                let mut this = start(index, None)?;
                // The other build not started (its runner gone, a limit) fails this row,
                // not the run: what was measured is reported.
                match start(there, Some(&a.launcher)) {
                    Err(e) => {
                        this.stop();
                        let _ = this.finish()?;
                        theirs(e)
                    }
                    Ok(other) => {
                        let first = usize::from(!a.this_runs_first(round));
                        match pair::run_pair([this, other], first, quiet)? {
                            Ok([this, other]) => vec![(None, Ok(this)), (Some(there), Ok(other))],
                            Err((0, e)) => vec![(None, Err(e))],
                            Err((_, e)) => theirs(e),
                        }
                    }
                }
            }
        };
        let ended = std::time::Instant::now();
        Ok((
            outcomes,
            ThrottleReport::between(&before, &Snapshot::take()),
            (started, ended),
        ))
    }
}

/// Whether a benchmark that has gathered `g` runs a fork in `round`: every one runs its
/// `forks`; past them, a headline row (`most` above `forks`) runs on while its honest ±
/// is short of `target`, up to `most`, and an A/B row runs the pairs its first `forks`
/// planned ([`planned_pairs`]); a failed one never again.
fn wants_fork(round: u32, forks: u32, most: u32, target: Option<f64>, g: &Gathered) -> bool {
    let more = || match g.other.is_empty() {
        true => !precise(target, g),
        false => target.is_some() && (g.other.len() as u32) < planned_pairs(g, forks, most),
    };
    !g.failed && round <= most && (round <= forks || more())
}

/// The mean of each fork's scores.
fn fork_means(forks: &[runner::ForkResult]) -> Vec<f64> {
    forks
        .iter()
        .map(|f| f.scores.iter().sum::<f64>() / f.scores.len() as f64)
        .collect()
}

/// How many pairs an A/B row runs: as many as its first `forks` (the pilot) say are
/// needed to see a change of [`SEEN_CHANGE`] in 95 tries of 100 at the verdict's level,
/// from `forks` to `most` (Kalibera and Jones: the repetitions from a pilot's variance).
/// Planned once from the pilot, never from the pairs after it, so that stopping does
/// not depend on how the ratio turns out.
fn planned_pairs(g: &Gathered, forks: u32, most: u32) -> u32 {
    let pilot = forks as usize;
    let ratios: Vec<f64> = fork_means(&g.forks)
        .iter()
        .zip(fork_means(&g.other))
        .take(pilot)
        .map(|(a, b)| a / b)
        .collect();
    // The pilot's spread as its verdict has it; the band never decides (NaN: the most).
    let spread = PairedRatio::of(&ratios, 1.0).map_or(f64::NAN, |r| r.spread);
    let alpha = 1.0 - crate::stats::paired::PAIRED_CONFIDENCE;
    let n =
        crate::stats::power::units_for(spread, SEEN_CHANGE.ln_1p(), alpha, pilot, most as usize);
    n as u32
}

/// The change an A/B row plans its pairs to see: 5%.
pub const SEEN_CHANGE: f64 = 0.05;

/// Whether a benchmark's forks so far hold its score within `target`, relative (always,
/// with none asked for: it runs its forks and no more).
fn precise(target: Option<f64>, g: &Gathered) -> bool {
    let Some(target) = target else {
        return true;
    };
    let means = fork_means(&g.forks);
    let score = means.iter().sum::<f64>() / means.len() as f64;
    // The band never decides: fewer than three forks are never precise enough.
    Uncertainty::of(score, &means, 1.0).relative() <= target
}

/// The order of the benchmarks in fork round `round`: every index once, shuffled by
/// `seed` and the round (Fisher–Yates), the same for the same seed on every board.
fn fork_order(benchmarks: usize, round: u32, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..benchmarks).collect();
    let mut rng = crate::util::rng::Rng::new(seed ^ (u64::from(round) << 32) ^ 0x5eed_f0c5);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    order
}

/// The run's error when benchmarks failed, after the report of the others: each was
/// printed as it failed, and `FAILED` lines name them in the report. Bad input when
/// every failure was (exit 2), else a failed run (exit 1).
fn failures(failed: &[Failure], benchmarks: usize, bad_input: bool) -> Result<()> {
    let message = match failed {
        [] => return Ok(()),
        [one] if benchmarks == 1 => format!("{} failed", one.benchmark),
        _ => format!(
            "{} of {} failed",
            failed.len(),
            count(benchmarks as u64, "benchmark")
        ),
    };
    Err(if bad_input {
        Error::usage(message)
    } else {
        Error::failed(message)
    })
}

/// How long each fork takes to start, for the estimates: timed where benchmarks run in
/// forks, nothing where they run in this process.
fn fork_start(settings: &Settings, benchmarks: &[Benchmark]) -> std::time::Duration {
    match settings.forks > 0 && !benchmarks.is_empty() {
        true => fork::time_start().unwrap_or(crate::model::settings::FORK_START_GUESS),
        false => std::time::Duration::ZERO,
    }
}

/// Works out every lazy invocation estimate (see [`Benchmark::estimate_invocation`]).
fn resolve_estimates(benchmarks: &mut [Benchmark]) -> Result<()> {
    benchmarks
        .iter_mut()
        .try_for_each(Benchmark::resolve_estimate)
}

fn print_notes(notes: &[String]) {
    for note in notes {
        crate::stderr!("{note}");
    }
}

fn validate(s: &Settings) -> Result<()> {
    cli::check_positive("--iterations", s.iterations as u64)?;
    if s.mode != Mode::SingleShot && s.time.is_zero() {
        return Err(Error::usage(
            "--time must be longer than 0 in the timed modes",
        ));
    }
    if s.timeout.is_zero() {
        return Err(Error::usage("--timeout must be longer than 0"));
    }
    if s.precision.is_some() {
        cli::check_positive("--max-forks", s.max_forks as u64)?;
    }
    // One fork of one benchmark past the longest run: refused before anything is
    // prepared (the whole plan is checked again once the benchmarks are known).
    let forks = s.most_forks(true).max(1);
    let one = s.estimated_fork_time(None, std::time::Duration::ZERO);
    plan::check_length(one.checked_mul(forks).unwrap_or(std::time::Duration::MAX))
}

/// Pins this process (and so every fork and thread it starts) to `cpus`.
pub fn pin_process(cpus: &[usize]) -> Result<()> {
    crate::system::pinning::pin_process(cpus)
        .map_err(|e| Error::usage(format!("--pin {}: {e}", join(cpus))))
}

fn join(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Turns on `--counters` for this process's measured iterations; the parent checks first
/// that counters may be opened here, and says once why not, the run going on without
/// them (a fork finds the same and counts nothing).
fn count_with(asked: bool, parent: bool) {
    if !asked {
        return;
    }
    match (crate::system::counters::check(), parent) {
        (Ok(()), _) => runner::count_iterations(true),
        (Err(why), true) => crate::stderr!(
            "{}: --counters: {why}: measuring without them",
            program_name()
        ),
        (Err(_), false) => {}
    }
}

/// The header line on stderr: what ran where, with which settings (each benchmark's
/// as the plan has them: a benchmark may choose its own mode).
fn header(env: &Environment, s: &Settings, plan: &plan::Plan) -> String {
    let mut machine = vec![env.arch.clone()];
    machine.extend(env.board_model.clone());
    machine.extend(env.cpu_model.clone());
    machine.push(count(env.cores_online as u64, "core"));
    machine.extend(env.kernel.as_ref().map(|k| format!("Linux {k}")));
    machine.extend(env.governor.as_ref().map(|g| format!("governor {g}")));
    if env.clusters.len() > 1 {
        let clusters: Vec<String> = env.clusters.iter().map(|c| c.describe()).collect();
        machine.push(format!("clusters {}", clusters.join(" + ")));
    }
    if let Some((c, by_default)) = &env.run_cluster {
        let why = if *by_default {
            "the fastest, by default"
        } else {
            "--cluster"
        };
        machine.push(format!("pinned to {} ({why})", c.cpu_names()));
    }
    if let (Some(c), Some(m)) = (env.cur_freq_mhz, env.max_freq_mhz) {
        machine.push(format!("{c}/{m} MHz"));
    }
    machine.extend(env.temperature_c.map(|t| format!("{t:.1}°C")));
    machine.extend(
        env.load_avg
            .map(|l| format!("load {:.2} {:.2} {:.2}", l[0], l[1], l[2])),
    );
    // Every mode that runs, grouped by how its iterations are described (single shots
    // have no iteration time).
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    let settings = plan.benchmarks.iter().map(|b| &b.settings);
    for b in settings.chain(plan.benchmarks.is_empty().then_some(s)) {
        let (what, mode) = (plan::iterations(b), b.mode.short());
        match groups.iter_mut().find(|(w, _)| *w == what) {
            Some((_, modes)) if modes.contains(&mode) => {}
            Some((_, modes)) => modes.push(mode),
            None => groups.push((what, vec![mode])),
        }
    }
    let runs: Vec<String> = groups
        .iter()
        .map(|(what, modes)| format!("mode {}, {what}", modes.join(" and ")))
        .collect();
    format!(
        "# {} {} on {}: {}\n# {}, {}, {}, timeout {}",
        program_name(),
        env.boardbench_version,
        env.hostname.as_deref().unwrap_or("?"),
        machine.join(", "),
        count(plan.benchmarks.len() as u64, "benchmark"),
        runs.join("; "),
        plan::forks(
            s,
            plan.benchmarks
                .iter()
                .map(|b| b.most_forks)
                .max()
                .unwrap_or(s.forks)
        ),
        format_duration(s.timeout),
    )
}

/// The body of every binary's `main`: runs `run`, prints an error once as
/// `bb-x: error: ...`, and exits with its code (2 for bad input, 1 for a failed run).
/// A run a signal ended exits with 128 + the signal and reports nothing: the clean-up
/// kills the servers the measurement talks to, so its error says nothing about them.
pub fn main_with(run: impl FnOnce() -> Result<()>) {
    exec::exit_if_probe();
    // A panic (release builds abort on one) still runs the clean-up: servers killed, the
    // governor set back.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        watchdog::exit_now(101);
    }));
    let result = run();
    if let Some(code) = signals::exit_requested() {
        watchdog::exit_now(code);
    }
    if let Err(e) = result {
        crate::stderr!("{}: error: {e}", program_name());
        watchdog::exit_now(e.exit_code());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A suite of no benchmarks whose prepare steps log 1 and 2, then fail, then log 3.
    fn failing_suite(log: &Rc<RefCell<Vec<u8>>>) -> Suite {
        let settings = Settings::full();
        let profiles = Profiles {
            quick: settings.clone(),
            standard: settings.clone(),
            full: settings,
        };
        let mut suite = Suite::new(TimeUnit::Millis, profiles, vec![]);
        for step in 1..=3 {
            let log = log.clone();
            suite.prepare.push(Box::new(move || {
                log.borrow_mut().push(step);
                match step {
                    2 => Err(Error::usage("no room")),
                    _ => Ok(()),
                }
            }));
        }
        suite.notes.push("a note".into());
        suite
    }

    /// Profiles of one shot per fork, in this process: quick to run for real.
    fn one_shot() -> Profiles {
        let mut s = Settings::full();
        s.mode = Mode::SingleShot;
        (s.warmup_iterations, s.iterations, s.forks) = (0, 1, 0);
        Profiles {
            quick: s.clone(),
            standard: s.clone(),
            full: s,
        }
    }

    /// A workload that does nothing, for benchmarks whose set-up is what is tested.
    struct Nothing;
    impl benchmark::Workload for Nothing {
        fn run(&mut self, _: u64) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failing_benchmark_is_named_and_the_others_are_reported() {
        let dir = crate::util::temp::TempDir::new("harness-fail");
        let output = dir.join("r.json");
        let run = |fail_on_error: bool| {
            let set_up = Rc::new(RefCell::new(Vec::new()));
            let plan = [
                ("a", None),
                ("b", Some("connecting to 127.0.0.1:1: refused")),
                ("c", None),
            ];
            let suite = Suite::new(TimeUnit::Millis, one_shot(), failing(&set_up, &plan));
            let flags = CommonArgs {
                output: Some(output.clone()),
                fail_on_error,
                ..CommonArgs::default()
            };
            let e = run_suite(suite, &flags).unwrap_err();
            let json = crate::util::json::Json::parse(&std::fs::read_to_string(&output).unwrap());
            let set_up = set_up.borrow().clone();
            (e, json.unwrap(), set_up)
        };
        let names = |json: &crate::util::json::Json| -> Vec<String> {
            let entries = json.as_array().unwrap().iter();
            entries
                .map(|e| e.get("benchmark").unwrap().as_str().unwrap().to_string())
                .collect()
        };
        let (e, json, set_up) = run(false);
        assert_eq!(
            (e.to_string().as_str(), e.exit_code()),
            ("1 of 3 benchmarks failed", 1)
        );
        assert_eq!(set_up, ["a", "b", "c"], "the run goes on past b");
        assert_eq!(names(&json), ["bb.t.a", "bb.t.c"]);
        let failed = json.as_array().unwrap()[0]
            .get("boardbench")
            .unwrap()
            .get("failed");
        let failed = &failed.unwrap().as_array().unwrap()[0];
        assert_eq!(failed.get("benchmark").unwrap().as_str(), Some("bb.t.b"));
        let error = failed.get("error").unwrap().as_str();
        assert_eq!(error, Some("connecting to 127.0.0.1:1: refused"));
        // --fail-on-error stops at b: c is never set up, a is still reported.
        let (e, json, set_up) = run(true);
        assert_eq!(e.exit_code(), 1);
        assert_eq!(set_up, ["a", "b"]);
        assert_eq!(names(&json), ["bb.t.a"]);
    }

    /// Benchmarks `bb.t.NAME`, each failing in set-up with its error where it has one.
    fn failing(
        set_up: &Rc<RefCell<Vec<String>>>,
        plan: &[(&'static str, Option<&'static str>)],
    ) -> Vec<Benchmark> {
        plan.iter()
            .map(|&(name, error)| {
                let set_up = set_up.clone();
                Benchmark::new(
                    format!("bb.t.{name}"),
                    Box::new(move || {
                        set_up.borrow_mut().push(name.to_string());
                        match error {
                            Some(e) => Err(Error::failed(e)),
                            None => Ok(Box::new(Nothing) as Box<dyn benchmark::Workload>),
                        }
                    }),
                )
            })
            .collect()
    }

    #[test]
    fn the_same_error_twice_in_a_row_stops_the_run() {
        let run = |plan: &[(&'static str, Option<&'static str>)]| {
            let set_up = Rc::new(RefCell::new(Vec::new()));
            let suite = Suite::new(TimeUnit::Millis, one_shot(), failing(&set_up, plan));
            let e = run_suite(suite, &CommonArgs::default()).unwrap_err();
            let set_up = set_up.borrow().clone();
            (e.to_string(), set_up)
        };
        let expired = Some("ExpiredToken");
        let (e, set_up) = run(&[("a", None), ("b", expired), ("c", expired), ("d", None)]);
        assert_eq!(set_up, ["a", "b", "c"], "d is never set up");
        assert_eq!(e, "2 of 4 benchmarks failed");
        // Two different errors, or the same one with a success between: the run goes on.
        let (_, set_up) = run(&[("a", Some("x")), ("b", Some("y")), ("c", None)]);
        assert_eq!(set_up, ["a", "b", "c"]);
        let (_, set_up) = run(&[("a", expired), ("b", None), ("c", expired), ("d", None)]);
        assert_eq!(set_up, ["a", "b", "c", "d"]);
    }

    #[test]
    fn every_round_runs_every_benchmark_once_in_an_order_of_the_seed() {
        let orders: Vec<Vec<usize>> = (1..=5).map(|round| fork_order(8, round, 42)).collect();
        for order in &orders {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..8).collect::<Vec<_>>(), "{order:?}");
        }
        assert!(
            orders.windows(2).any(|w| w[0] != w[1]),
            "rounds differ: {orders:?}"
        );
        assert_ne!(orders[0], (0..8).collect::<Vec<_>>());
        assert_eq!(
            fork_order(8, 1, 42),
            orders[0],
            "the same for the same seed"
        );
        assert_ne!(fork_order(8, 1, 43), orders[0]);
        assert_eq!(fork_order(0, 1, 42), Vec::<usize>::new());
        // Over many rounds each benchmark runs first about as often as any other.
        let mut first = [0usize; 4];
        for round in 1..=4000 {
            first[fork_order(4, round, 7)[0]] += 1;
        }
        assert!(first.iter().all(|&n| (800..1200).contains(&n)), "{first:?}");
    }

    #[test]
    fn forks_are_added_until_the_precision_or_the_budget_is_reached() {
        let gathered = |means: &[f64]| Gathered {
            forks: means
                .iter()
                .map(|&m| runner::ForkResult {
                    scores: vec![m * 0.99, m * 1.01],
                    ..Default::default()
                })
                .collect(),
            ..Gathered::default()
        };
        // Five forks 0.1% apart: ±0.2% for the next run, within 2%; five 10% apart are not.
        let tight = gathered(&[100.0, 100.1, 99.9, 100.05, 99.95]);
        let loose = gathered(&[100.0, 110.0, 90.0, 105.0, 95.0]);
        assert!(precise(Some(0.02), &tight) && !precise(Some(0.02), &loose));
        assert!(
            precise(None, &loose),
            "no precision asked for: the forks and no more"
        );
        // Every benchmark runs its five; past them only the loose one, up to ten.
        for round in 1..=5 {
            assert!(wants_fork(round, 5, 10, Some(0.02), &tight));
        }
        assert!(!wants_fork(6, 5, 10, Some(0.02), &tight));
        assert!(wants_fork(6, 5, 10, Some(0.02), &loose));
        assert!(wants_fork(10, 5, 10, Some(0.02), &loose));
        assert!(
            !wants_fork(11, 5, 10, Some(0.02), &loose),
            "the budget is spent"
        );
        // A row that is no headline has most = forks: five and done.
        assert!(!wants_fork(6, 5, 5, Some(0.02), &loose));
        let failed = Gathered {
            failed: true,
            ..gathered(&[100.0])
        };
        assert!(!wants_fork(1, 5, 10, Some(0.02), &failed));
        // Fewer than three forks never reach a precision: the noise band is ±25%.
        assert!(!precise(Some(0.2), &gathered(&[100.0, 100.0])));
    }

    #[test]
    fn the_run_fails_naming_what_failed() {
        let failure = |name: &str| Failure {
            benchmark: name.into(),
            error: "x".into(),
        };
        assert!(failures(&[], 3, true).is_ok());
        let one = failures(&[failure("bb.t.a")], 1, false).unwrap_err();
        assert_eq!(
            (one.to_string().as_str(), one.exit_code()),
            ("bb.t.a failed", 1)
        );
        let two = failures(&[failure("bb.t.a"), failure("bb.t.b")], 2, true).unwrap_err();
        assert_eq!(two.to_string(), "2 of 2 benchmarks failed");
        assert_eq!(two.exit_code(), 2, "bad input throughout");
    }

    #[test]
    fn the_header_says_shots_in_single_shot_mode_and_one_in_the_singular() {
        let env = Environment {
            arch: "armv6l".into(),
            cpu_model: Some("ARM1176".into()),
            cores_online: 1,
            ..Default::default()
        };
        let s = one_shot().full;
        let (mut shots, mut timed) = (
            Benchmark::new("bb.t.s", Box::new(|| unreachable!())),
            Benchmark::new("bb.t.t", Box::new(|| unreachable!())),
        );
        shots.invocation_estimate = Some(std::time::Duration::from_millis(1));
        (shots.mode, timed.mode) = (Some(Mode::SingleShot), Some(Mode::AverageTime));
        timed.invocation_estimate = Some(std::time::Duration::from_millis(1));
        let plan = |b: Vec<Benchmark>| {
            plan::Plan::new(
                Profile::Full,
                &s,
                TimeUnit::Millis,
                &b,
                std::time::Duration::ZERO,
            )
        };
        let text = header(&env, &s, &plan(vec![shots]));
        assert!(text.contains(": armv6l, ARM1176, 1 core\n"), "{text}");
        assert!(
            text.ends_with(
                "\n# 1 benchmark, mode ss, warm-up 0 shots, 1 shot, 0 forks, timeout 10m"
            ),
            "{text}"
        );
        let mut shots = Benchmark::new("bb.t.s", Box::new(|| unreachable!()));
        shots.mode = Some(Mode::SingleShot);
        let text = header(&env, &s, &plan(vec![timed, shots]));
        assert!(
            text.contains("# 2 benchmarks, mode avgt, warm-up 0 × 3s, 1 × 3s; mode ss, warm-up 0 shots, 1 shot, 0 forks"),
            "{text}"
        );
    }

    #[test]
    fn prepare_runs_in_order_until_an_error_and_never_in_a_dry_run() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let dry_run = CommonArgs {
            dry_run: true,
            ..CommonArgs::default()
        };
        run_suite(failing_suite(&log), &dry_run).unwrap();
        assert!(log.borrow().is_empty());
        let e = run_suite(failing_suite(&log), &CommonArgs::default()).unwrap_err();
        assert_eq!((e.to_string().as_str(), e.exit_code()), ("no room", 2));
        assert_eq!(*log.borrow(), [1, 2]);
    }
}
