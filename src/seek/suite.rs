//! bb-seek's suite: a single-shot benchmark for every source, object, pattern and
//! client, in that order, then for every existing object's patterns and clients; the
//! local directories' objects checked for room and generated before the run, existing
//! objects checked whole before it (the prelude), and where S3 objects are read from
//! noted.

use super::client::StreamConfig;
use super::data::{Fingerprint, Object};
use super::existing::{self, Existing};
use super::gen;
use super::options::{Options, Plan};
use super::pattern::Reads;
use super::probe::{self, CheckProbe, Probe};
use super::spec::SourceSpec;
use super::workload::{held, Case, SeekOp};
use super::Row;
use crate::harness::benchmark::{Benchmark, Settings, Setup, TimeUnit, Workload};
use crate::harness::cli::Mode;
use crate::harness::{Prelude, Profiles, Suite};
use crate::model::answer::with_rows;
use crate::util::error::{Error, Result};
use std::cell::OnceCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

pub fn suite(options: &Options) -> Result<Suite> {
    let items = items(options, shots_per_fork(options));
    let mut suite = Suite::new(TimeUnit::Millis, profiles(), build(&items, &[])?);
    suite.notes = notes(options);
    suite.prepare = prepare(options);
    let rows = items.iter().map(|item| item.row.clone()).collect();
    suite.answer = Some(with_rows(rows, super::answer::answer));
    suite.prelude = prelude(options, items);
    Ok(suite)
}

/// Single shots, as the original JMH benchmarks, in forks, the unit of replication
/// (docs/method.md): three in the quick profile, five in the others. A shot of a cached
/// object lasts tens of microseconds and its fork's mean moved ×3.9 between A/A runs of
/// one fork each (BENCHMARKS.md, "A/A"): one fork alone says next to nothing, so even the
/// quick profile runs three, and the band of a lone fork is ±100%.
fn profiles() -> Profiles {
    let shots = |warmup_iterations, iterations, forks| Settings {
        mode: Mode::SingleShot,
        warmup_iterations,
        iterations,
        forks,
        // A default, for a board with no noise profile of its own (`run-all.sh
        // --calibrate`): measured on the 2-core x86 VM, and said so wherever it is used.
        noise_band: 1.0,
        ..Settings::full()
    };
    Profiles {
        quick: shots(1, 5, 3),
        standard: shots(1, 4, 5).with_precision(),
        full: shots(2, 10, 5),
    }
}

/// The shots each fork runs (its warm-up shots too): the untimed pass after the last one
/// is shared among them in the estimate.
fn shots_per_fork(o: &Options) -> u64 {
    let settings = profiles().pick(o.flags.profile).with_flags(&o.flags);
    u64::from(settings.warmup_iterations).saturating_add(u64::from(settings.iterations))
}

/// One benchmark to make: its case and pattern, its row (what its params say), the probe of its
/// source, and for an existing object where the prelude's values hold its size and its
/// pattern's fingerprint.
#[derive(Clone)]
struct Item {
    case: Case,
    plan: Plan,
    row: Row,
    probe: Costs,
    existing: Option<Checked>,
}

/// What estimates a benchmark's shots: its remote source's probe; or for a local file,
/// a sample of its own shots, timed, with the check of a byte (the run's probe) and the
/// shots of a fork.
#[derive(Clone)]
enum Costs {
    Remote(Rc<Probe>),
    Local(Rc<CheckProbe>, u64, Rc<OnceCell<(f64, f64)>>),
}

impl Costs {
    /// The costs of one benchmark: a local one's sample is its own, taken once (the
    /// benchmarks rebuilt after the prelude keep it).
    fn each(&self) -> Costs {
        match self {
            Costs::Local(check, shots, _) => Costs::Local(check.clone(), *shots, Rc::default()),
            remote => remote.clone(),
        }
    }
}

/// Where an existing object's benchmark finds what the check before the run found, among
/// the prelude's values: the object's size then (each object's first value), and its
/// pattern's [`Fingerprint`] (four values); and the object as messages name it.
#[derive(Clone)]
struct Checked {
    size: usize,
    fingerprint: usize,
    label: String,
}

/// Every benchmark, in order: each source's objects, patterns and clients; then each
/// existing object's patterns and clients. A fork runs `shots` shots.
fn items(o: &Options, shots: u64) -> Vec<Item> {
    let mut items = Vec::new();
    let case =
        |source: &SourceSpec, stream: &StreamConfig, object: &Object, plan: &Plan, client: &str| {
            Case {
                source: source.clone(),
                object: object.clone(),
                reads: plan.reads.clone(),
                client: client.to_string(),
                stream: stream.clone(),
                cold: o.cold,
                request_timeout: o.request_timeout,
                fingerprint: None,
                changed: None,
            }
        };
    let row = |plan: &Plan, client: &str, key: &str, source: String| Row {
        pattern: plan.name.clone(),
        read_size: plan.read_size,
        key: key.to_string(),
        size: None,
        client: client.to_string(),
        source,
        cold: o.cold,
        check: None,
    };
    // A remote source's cost, probed once, when the plan first asks: with the run's
    // largest object (or the existing object itself). A check's, once for the run.
    let generated = o.objects.first().map(|(object, _)| object.clone());
    let check = Rc::new(CheckProbe::new(generated));
    let probe = |source: &SourceSpec, object: &Object, label: Option<&str>| match source {
        SourceSpec::File(_) => Costs::Local(check.clone(), shots, Rc::default()),
        _ => {
            let label = label.map_or_else(
                || format!("{} at {}", object.name, source.label()),
                str::to_string,
            );
            Costs::Remote(Rc::new(Probe::new(
                source.clone(),
                object.clone(),
                label,
                o.request_timeout,
            )))
        }
    };
    for (source, stream) in &o.sources {
        let largest = o
            .objects
            .iter()
            .map(|(object, _)| object)
            .max_by_key(|o| o.size);
        let Some(largest) = largest else { continue };
        let probe = probe(source, largest, None);
        for (object, plans) in &o.objects {
            for plan in plans {
                for client in &o.clients {
                    items.push(Item {
                        case: case(source, stream, object, plan, client),
                        plan: plan.clone(),
                        row: row(plan, client, &object.name, source.label()),
                        probe: probe.each(),
                        existing: None,
                    });
                }
            }
        }
    }
    // Each object's values: its size, then four for each of its patterns' fingerprints.
    let mut at = 0;
    for (e, plans) in &o.existing {
        let probe = probe(&e.spec.place, &e.object, Some(&e.spec.label));
        let size = at;
        at += 1;
        for plan in plans {
            for client in &o.clients {
                items.push(Item {
                    case: case(&e.spec.place, &e.stream, &e.object, plan, client),
                    plan: plan.clone(),
                    row: Row {
                        size: Some(e.object.size),
                        check: Some(e.stat.check()),
                        ..row(plan, client, &e.object.name, e.spec.label.clone())
                    },
                    probe: probe.each(),
                    existing: Some(Checked {
                        size,
                        fingerprint: at,
                        label: e.spec.label.clone(),
                    }),
                });
            }
            at += 4;
        }
    }
    items
}

/// The benchmarks of `items`, an existing object's with its fingerprint from `values`
/// (the prelude's; none before it has run). A fork reads an existing object's size again
/// as it starts: one that differs from the size the check before the run read fails its
/// benchmark, the object having changed since the run began.
fn build(items: &[Item], values: &[f64]) -> Result<Vec<Benchmark>> {
    items
        .iter()
        .map(|item| {
            let mut case = item.case.clone();
            if let (Some(c), false) = (&item.existing, values.is_empty()) {
                let bad = || {
                    Error::failed(format!(
                        "the check before the run gave {} values, not the size and fingerprint of {}",
                        values.len(),
                        c.label
                    ))
                };
                let size = values
                    .get(c.size)
                    .copied()
                    .filter(|v| v.fract() == 0.0 && (1.0..=MAX_EXACT).contains(v))
                    .ok_or_else(bad)? as u64;
                let found = values
                    .get(c.fingerprint..c.fingerprint + 4)
                    .and_then(Fingerprint::from_values);
                case.fingerprint = Some(found.ok_or_else(bad)?);
                if size != case.object.size {
                    case.changed = Some(format!(
                        "{} has {} bytes, not the {size} it had when the run began: it changed \
                         since (an --object must stay as it is through the run)",
                        c.label, case.object.size
                    ));
                }
            }
            Ok(benchmark(case, item))
        })
        .collect()
}

/// The largest size a prelude's value (an `f64`) holds exactly: 8 PiB.
const MAX_EXACT: f64 = (1u64 << 53) as f64;

/// `bb.seek.PATTERN` over one case, named by its params.
fn benchmark(case: Case, item: &Item) -> Benchmark {
    let plan = &item.plan;
    let mut b = Benchmark::new(format!("bb.seek.{}", plan.name), setup(case.clone()));
    for (k, v) in item.row.params() {
        b = b.param(k, v);
    }
    b.bytes_per_op = Some(plan.reads.asked() as f64);
    let (probe, reads) = (item.probe.clone(), plan.reads.clone());
    b.estimate_invocation(move || {
        Ok(match probe {
            Costs::Remote(probe) => {
                let fetched = probe::fetches(&case.client, &case.stream, &reads, case.object.size);
                probe.cost().shot(fetched, reads.asked())
            }
            Costs::Local(check, shots, sample) => {
                let sample = *sample.get_or_init(|| probe::sample_shot(&case, &reads));
                probe::local_shot(sample, &reads, check.per_byte(), shots)
            }
        })
    });
    b
}

fn setup(case: Case) -> Setup {
    Box::new(move || Ok(Box::new(SeekOp::set_up(&case)?) as Box<dyn Workload>))
}

/// Existing objects are checked before the run, in the parent: each read whole (and each
/// pattern other than sequential read once), untimed, its bytes checked against its
/// store's checksums; the fingerprints of its patterns are the values every benchmark,
/// in a fork too, checks its shots against.
fn prelude(o: &Options, items: Vec<Item>) -> Option<Prelude> {
    if o.existing.is_empty() {
        return None;
    }
    let targets: Vec<(Existing, Vec<Arc<Reads>>)> = o
        .existing
        .iter()
        .map(|(e, plans)| (e.clone(), plans.iter().map(|p| p.reads.clone()).collect()))
        .collect();
    // Its reads (a network's 100 MB/s, or a page cache's 3 GB/s), and its hashing at the
    // speed this build hashes a fingerprint's bytes here: the object once for each ring
    // size of its sequential patterns, and each other pattern's bytes, with their tails.
    let hash = CheckProbe::new(None).per_byte();
    let estimate = targets
        .iter()
        .map(|(e, reads)| {
            let (per_byte, per_read) = match e.spec.place.is_remote() {
                true => (1e-8, 2e-4),
                false => (0.3e-9, 5e-6),
            };
            let size = e.object.size;
            let lists = reads.iter().filter(|r| matches!(***r, Reads::List(_)));
            let bytes = size + lists.clone().map(|r| r.asked()).sum::<u64>();
            let count: u64 = lists.clone().map(|r| r.count()).sum();
            let mut holds: Vec<u64> = reads
                .iter()
                .filter(|r| matches!(***r, Reads::Sequential { .. }))
                .map(|r| held(r))
                .collect();
            holds.sort_unstable();
            holds.dedup();
            let hashed = holds.iter().map(|h| size + h).sum::<u64>()
                + lists.map(|r| r.asked() + held(r)).sum::<u64>();
            bytes as f64 * per_byte + count as f64 * per_read + hashed as f64 * hash
        })
        .sum::<f64>();
    let timeout = o.request_timeout;
    Some(Prelude {
        what: format!(
            "checking {} (read whole, untimed)",
            crate::util::format::count(targets.len() as u64, "object")
        ),
        estimate: Duration::from_secs_f64(estimate),
        measure: Box::new(move || {
            let mut values = Vec::new();
            for (e, reads) in &targets {
                values.push(e.object.size as f64);
                for f in existing::check(e, reads, timeout)? {
                    values.extend(f.values());
                }
            }
            Ok(values)
        }),
        rebuild: Box::new(move |values| build(&items, values)),
    })
}

/// Where and how each S3 place is read (never the secret), once each, and that `--cold`
/// cannot drop a server's cache.
fn notes(o: &Options) -> Vec<String> {
    let specs = || {
        o.sources
            .iter()
            .map(|(spec, _)| spec)
            .chain(o.existing.iter().map(|(e, _)| &e.spec.place))
    };
    let mut notes: Vec<String> = Vec::new();
    for line in specs()
        .filter_map(SourceSpec::s3_objects)
        .map(|objects| objects.settings_line())
    {
        if !notes.contains(&line) {
            notes.push(line);
        }
    }
    if o.cold {
        let remote = o
            .sources
            .iter()
            .map(|(spec, _)| spec.label())
            .chain(o.existing.iter().map(|(e, _)| e.spec.label.clone()))
            .zip(specs())
            .filter(|(_, spec)| spec.is_remote());
        notes.extend(remote.map(|(label, _)| gen::remote_cold_note(&label)));
    }
    notes
}

/// Room for every local directory's missing objects checked before any is written, then
/// each directory's objects generated where missing or wrong.
fn prepare(o: &Options) -> Vec<Box<dyn FnOnce() -> Result<()>>> {
    let (seed, cold) = (o.flags.seed, o.cold);
    let mut steps: Vec<Box<dyn FnOnce() -> Result<()>>> = Vec::new();
    for dir in o.dirs() {
        let (dir, sizes) = (dir.clone(), o.sizes.clone());
        steps.push(Box::new(move || {
            gen::check_room("--sizes", &dir, &sizes, seed)
        }));
    }
    for dir in o.dirs() {
        let (dir, sizes) = (dir.clone(), o.sizes.clone());
        steps.push(Box::new(move || gen::prepare_dir(&dir, &sizes, seed, cold)));
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::aggregate::answer_over;
    use crate::harness::cli::parse_from;
    use crate::harness::runner::ForkResult;
    use crate::seek::args::Args;

    fn options(argv: &[&str]) -> Options {
        let args: Args = parse_from(argv).unwrap_or_else(|_| panic!("{argv:?}"));
        Options::from_args_with(&args, &|_| None).unwrap()
    }

    #[test]
    fn a_benchmark_per_source_object_pattern_and_client_in_that_order() {
        let o = options(&[
            "--sizes",
            "4k,1m",
            "--pattern",
            "sequential,forward",
            "--read-size",
            "4k",
            "--source",
            "file:a,http://127.0.0.1:1/x/",
            "--cold",
        ]);
        let s = suite(&o).unwrap();
        assert_eq!(s.benchmarks.len(), 2 * 2 * 2 * 2);
        let labels: Vec<String> = s.benchmarks.iter().map(|b| b.label()).collect();
        assert_eq!(
            labels[..3],
            [
                "bb.seek.sequential (key=random-4kb.txt, client=plain, source=file:a, read-size=4k, cache=cold)",
                "bb.seek.sequential (key=random-4kb.txt, client=stream, source=file:a, read-size=4k, cache=cold)",
                "bb.seek.forward (key=random-4kb.txt, client=plain, source=file:a, read-size=-, cache=cold)",
            ]
        );
        assert!(
            labels[8].contains("source=http://127.0.0.1:1/x/"),
            "{}",
            labels[8]
        );
        assert_eq!(s.benchmarks[0].bytes_per_op, Some(4096.0));
        // A file's estimates wait for a sample of its shots, an HTTP source's for its
        // probe: the plan makes them.
        assert!(s.benchmarks[0].invocation_estimate.is_none());
        assert!(s.benchmarks[0].estimate_pending());
        assert!(s.benchmarks[8].invocation_estimate.is_none());
        assert!(s.benchmarks[8].estimate_pending());
        assert_eq!(s.unit, TimeUnit::Millis);
        assert!(s.pin_process);
        // The server's cache is noted; a directory's objects are checked for room, then made.
        assert_eq!(s.notes.len(), 1);
        assert!(s.notes[0].contains("--cold"), "{}", s.notes[0]);
        assert!(
            s.notes[0].contains("http://127.0.0.1:1/x/"),
            "{}",
            s.notes[0]
        );
        assert_eq!(s.prepare.len(), 2);
    }

    /// A recorded run's figures: three forks of three shots a row, in ms, with the
    /// requests each made: the stream reads sequential 4k reads in 1 MiB requests, ties
    /// plain on backward reads and loses on parquet's; an HTTP source three times slower.
    fn recorded(b: &Benchmark) -> Vec<ForkResult> {
        let label = b.label();
        let has = |p: &str| label.contains(p);
        let stream = has("client=stream");
        let object: f64 = if has("random-4kb.txt") {
            4096.0
        } else {
            1048576.0
        };
        let (requests, ms) = match b.name.as_str() {
            "bb.seek.sequential" => {
                let read = if has("read-size=4k") {
                    4096.0
                } else {
                    1048576.0
                };
                let requests = match stream {
                    true => (object / 1048576.0).ceil() + 4.0,
                    false => (object / read).ceil(),
                };
                (requests, 0.08 * requests + 0.5)
            }
            "bb.seek.forward" if stream => (3.0, 1.0),
            "bb.seek.forward" => (10.0, 2.0),
            "bb.seek.backward" => (8.0, if stream { 5.02 } else { 5.0 }),
            _ if stream => (3.0, 8.0),
            _ => (4.0, 4.0),
        };
        let ms = if has("source=http") { ms * 3.0 } else { ms };
        [1.0, 1.02, 0.98]
            .iter()
            .map(|f| ForkResult {
                scores: vec![ms * f, ms * f * 1.01, ms * f * 0.99],
                metrics: vec![("requests".into(), "req/op".into(), vec![requests; 3])],
                ops: 3,
                ..Default::default()
            })
            .collect()
    }

    /// The answer the suite of `argv` gives over the recorded figures of its rows, but
    /// those `failed`.
    fn answered(argv: &[&str], failed: &[usize]) -> Vec<String> {
        let s = suite(&options(argv)).unwrap();
        answer_over(&s, failed, recorded)
    }

    #[test]
    fn the_answer_over_recorded_results() {
        let one = [
            "--sizes",
            "1m",
            "--read-size",
            "4k,1m",
            "--source",
            "file:a",
        ];
        assert_eq!(
            answered(&one, &[]),
            [
                "random-1mb.txt, sequential 4k: stream 23.3x faster",
                "  5 requests against 256, forward 2.00x faster, parquet 2.00x slower,",
                "  backward a tie",
            ]
        );
        let many = [
            "--sizes",
            "4k,1m",
            "--read-size",
            "4k,1m",
            "--source",
            "file:a,http://127.0.0.1:1/x/",
        ];
        // Too many objects for the whole story: a line each.
        assert_eq!(
            answered(&many, &[]),
            [
                "file:a:",
                "random-4kb.txt, sequential 4k: stream 1.55x slower, 5 requests against 1",
                "random-1mb.txt, sequential 4k: stream 23.3x faster, 5 requests against 256",
                "http://127.0.0.1:1/x/:",
                "random-4kb.txt, sequential 4k: stream 1.55x slower, 5 requests against 1",
                "random-1mb.txt, sequential 4k: stream 23.3x faster, 5 requests against 256",
            ]
        );
        assert_eq!(
            answered(&many[..4], &[]),
            [
                "random-4kb.txt, sequential 4k: stream 1.55x slower",
                "  5 requests against 1, forward 2.00x faster, parquet 2.00x slower,",
                "  backward a tie",
                "random-1mb.txt, sequential 4k: stream 23.3x faster",
                "  5 requests against 256, forward 2.00x faster, parquet 2.00x slower,",
                "  backward a tie",
            ]
        );
        // The stream's sequential 4k reads failed: the other patterns alone.
        assert_eq!(
            answered(&one, &[1]),
            [
                "random-1mb.txt:",
                "forward 2.00x faster, parquet 2.00x slower, backward a tie",
            ]
        );
        let dir = crate::util::temp::TempDir::new("seek-answer");
        let file = dir.join("table.parquet");
        std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
        let path = file.to_str().unwrap();
        // An existing object is named where it is, in 60 characters at most.
        let place = format!("file:{path}");
        let named = match place.chars().count() > 60 {
            true => format!("{}…", place.chars().take(59).collect::<String>()),
            false => place,
        };
        assert_eq!(
            answered(&["--object", path, "--read-size", "4k"], &[]),
            [
                format!("{named}, sequential 4k: stream 23.3x faster"),
                "  5 requests against 256, forward 2.00x faster, parquet 2.00x slower,".into(),
                "  backward a tie".into(),
            ]
        );
    }
}
