//! bb-seek's suite: a single-shot benchmark for every source, object, pattern and
//! client, in that order; the local directories' objects checked for room and generated
//! before the run, and where S3 objects are read from noted.

use super::gen;
use super::options::{Options, Plan};
use super::probe::{self, Probe};
use super::spec::SourceSpec;
use super::workload::{self, Case, SeekOp};
use crate::harness::benchmark::{Benchmark, Settings, Setup, TimeUnit, Workload};
use crate::harness::cli::Mode;
use crate::harness::{Profiles, Suite};
use crate::util::error::Result;
use std::rc::Rc;

pub fn suite(options: &Options) -> Result<Suite> {
    let mut suite = Suite::new(TimeUnit::Millis, profiles(), benchmarks(options));
    suite.notes = notes(options);
    suite.prepare = prepare(options);
    suite.answer = Some(super::answer::answer);
    Ok(suite)
}

/// Single shots, as the original JMH benchmarks, in one fork.
fn profiles() -> Profiles {
    let shots = |warmup_iterations, iterations| Settings {
        mode: Mode::SingleShot,
        warmup_iterations,
        iterations,
        forks: 1,
        ..Settings::full()
    };
    Profiles {
        quick: shots(1, 5),
        standard: shots(2, 10),
        full: shots(2, 15),
    }
}

fn benchmarks(o: &Options) -> Vec<Benchmark> {
    let mut benchmarks = Vec::new();
    for (source, stream) in &o.sources {
        // A remote source's cost, probed once, when the plan first asks.
        let probe = o
            .objects
            .iter()
            .map(|(object, _)| object)
            .max_by_key(|o| o.size);
        let probe = probe.filter(|_| source.is_remote()).map(|object| {
            Rc::new(Probe::new(
                source.clone(),
                object.clone(),
                o.request_timeout,
            ))
        });
        for (object, plans) in &o.objects {
            for plan in plans {
                for client in &o.clients {
                    let case = Case {
                        source: source.clone(),
                        object: object.clone(),
                        reads: plan.reads.clone(),
                        client: client.clone(),
                        stream: stream.clone(),
                        cold: o.cold,
                        request_timeout: o.request_timeout,
                    };
                    benchmarks.push(benchmark(case, plan, probe.clone()));
                }
            }
        }
    }
    benchmarks
}

/// `bb.seek.PATTERN` over one case, named by its key, client, source, read size and cache.
fn benchmark(case: Case, plan: &Plan, probe: Option<Rc<Probe>>) -> Benchmark {
    let mut b = Benchmark::new(format!("bb.seek.{}", plan.name), setup(case.clone()))
        .param("key", &case.object.name)
        .param("client", &case.client)
        .param("source", case.source.label())
        .param(
            "read-size",
            plan.read_size.map_or("-".to_string(), size_label),
        )
        .param("cache", if case.cold { "cold" } else { "hot" });
    b.bytes_per_op = Some(plan.reads.asked() as f64);
    match probe {
        Some(probe) => {
            let reads = plan.reads.clone();
            b.estimate_invocation = Some(Box::new(move || {
                let fetched = probe::fetches(&case.client, &case.stream, &reads, case.object.size);
                Ok(probe.cost().shot(fetched, reads.asked()))
            }));
        }
        None => b.invocation_estimate = Some(workload::shot_estimate(&case.source, &plan.reads)),
    }
    b
}

fn setup(case: Case) -> Setup {
    Box::new(move || Ok(Box::new(SeekOp::set_up(&case)?) as Box<dyn Workload>))
}

/// Where and how each S3 source is read (never the secret), and that `--cold` cannot
/// drop a server's cache.
fn notes(o: &Options) -> Vec<String> {
    let specs = || o.sources.iter().map(|(spec, _)| spec);
    let mut notes: Vec<String> = specs()
        .filter_map(SourceSpec::s3_objects)
        .map(|objects| objects.settings_line())
        .collect();
    if o.cold {
        notes.extend(
            specs()
                .filter(|spec| spec.is_remote())
                .map(|spec| gen::remote_cold_note(&spec.label())),
        );
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

/// `4k`, `1m`, `1g`, or bytes.
fn size_label(size: u64) -> String {
    match size {
        s if s.is_multiple_of(1 << 30) => format!("{}g", s >> 30),
        s if s.is_multiple_of(1 << 20) => format!("{}m", s >> 20),
        s if s.is_multiple_of(1 << 10) => format!("{}k", s >> 10),
        s => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::cli::parse_from;
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
        assert!(s.benchmarks[0].invocation_estimate.is_some());
        // An HTTP source's estimates wait for its probe, which the plan makes.
        assert!(s.benchmarks[8].invocation_estimate.is_none());
        assert!(s.benchmarks[8].estimate_invocation.is_some());
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

    #[test]
    fn sizes_are_labelled_in_their_largest_whole_unit() {
        assert_eq!(size_label(4096), "4k");
        assert_eq!(size_label(1 << 20), "1m");
        assert_eq!(size_label(3 << 30), "3g");
        assert_eq!(size_label(1000), "1000");
    }
}
