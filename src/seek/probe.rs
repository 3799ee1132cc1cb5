//! A source's cost, measured for the plan, in the parent before the plan (in a `--dry-run`
//! too, whose estimate needs it; never in a fork), with this build's code on this machine.
//! A remote one ([`Probe`]): a few ranged GETs give the round trip and the bandwidth, and a
//! shot is estimated from the requests and bytes its client really makes of the source:
//! one request a read for the plain client, and for the stream what it fetches, each
//! client's requests counted by running it over a source that moves no bytes. A local
//! file: a shot timed with its own client over its own file, on samples of its pattern
//! ([`sample_shot`]), with what checking a byte costs ([`CheckProbe`]) for the check after
//! each shot of what its ring keeps, and the untimed pass after its last shot that reads a
//! pattern larger than its ring once more (shared among the fork's shots: [`local_shot`]).
use super::client::{Plain, Reader, SeekableStream, StreamConfig};
use super::data::{Expected, Object};
use super::file::FileSource;
use super::pattern::{Read, Reads};
use super::source::{FetchCounters, Sink, Source};
use super::spec::SourceSpec;
use super::workload::{held, reader, Case, HOLD_SMALL};
use crate::util::error::Result;
use crate::util::format::format_estimate;
use crate::util::rng::Fnv1a64;
use crate::util::terminal::{program_name, warn};
use std::cell::OnceCell;
use std::time::{Duration, Instant};

/// What one request costs: its round trip, and the time per byte of its body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Seconds.
    pub round_trip: f64,
    /// Bytes a second.
    pub bandwidth: f64,
}

/// What a source that could not be probed is assumed to cost.
pub const GUESS: Cost = Cost {
    round_trip: 200e-6,
    bandwidth: 1e9,
};

/// The 1-byte GETs timed for the round trip. Their median counts: the fastest of three
/// said half the round trip a run then saw from moto's server under load, and one slow
/// answer must not double it either.
const ROUND_TRIPS: usize = 7;
/// The least time a body is taken to have needed.
const MIN_BODY: f64 = 1e-6;

/// The largest range GET timed for the bandwidth.
const BANDWIDTH_RANGE: u64 = 4 << 20;

/// One remote source's probe, made once, when the first estimate asks for it.
pub(crate) struct Probe {
    source: SourceSpec,
    /// The object read: the run's largest, so the bandwidth's GET is as large as it can be.
    object: Object,
    /// The object as the probe's line names it: its URL, or its name at its source.
    label: String,
    timeout: Duration,
    cost: OnceCell<Cost>,
}

impl Probe {
    /// The probe of `object` at `source`, named `label` on stderr.
    pub(crate) fn new(
        source: SourceSpec,
        object: Object,
        label: String,
        timeout: Duration,
    ) -> Probe {
        Probe {
            source,
            object,
            label,
            timeout,
            cost: OnceCell::new(),
        }
    }

    /// The source's cost: probed the first time, said on stderr; [`GUESS`] with a warning
    /// where the probe fails (the run itself then fails with the reason when it opens
    /// the object).
    pub(crate) fn cost(&self) -> Cost {
        *self.cost.get_or_init(|| {
            let started = Instant::now();
            let label = &self.label;
            match self.measure() {
                Ok(cost) => {
                    crate::stderr!(
                        "{}: {label}: round trip {:.1} ms, {} ({} requests in {}, for the estimates)",
                        program_name(),
                        cost.round_trip * 1e3,
                        cost.bandwidth_text(self.object.size.min(BANDWIDTH_RANGE)),
                        ROUND_TRIPS + 2,
                        format_estimate(started.elapsed())
                    );
                    cost
                }
                Err(e) => {
                    warn(&format!(
                        "probing {label} for the estimates: {e}; they assume {:.1} ms a request",
                        GUESS.round_trip * 1e3
                    ));
                    GUESS
                }
            }
        })
    }

    /// A HEAD (opening the object, connecting), 1-byte GETs, then one large range.
    fn measure(&self) -> Result<Cost> {
        let o = &self.object;
        let mut source = self.source.open(o, self.timeout)?;
        let mut sink = Discard(vec![0; 64 << 10]);
        let mut timed = |len: u64| -> Result<f64> {
            let started = Instant::now();
            source.read_into(0, len, &mut sink)?;
            Ok(started.elapsed().as_secs_f64())
        };
        let mut round_trips = Vec::with_capacity(ROUND_TRIPS);
        for _ in 0..ROUND_TRIPS {
            round_trips.push(timed(1.min(o.size))?);
        }
        round_trips.sort_by(f64::total_cmp);
        let len = o.size.min(BANDWIDTH_RANGE);
        let took = timed(len)?;
        // The body's time is the large GET's beyond the quickest round trip; a request
        // costs the median one.
        let mut cost = Cost::from_timings(round_trips[0], len, took);
        cost.round_trip = round_trips[ROUND_TRIPS / 2];
        Ok(cost)
    }
}

impl Cost {
    /// `269 MB/s`, or what a body too quick to time against the round trip says of it.
    fn bandwidth_text(&self, len: u64) -> String {
        if self.bandwidth >= len as f64 / MIN_BODY {
            format!("a {len}-byte GET no slower than a round trip")
        } else {
            format!("{:.0} MB/s", self.bandwidth / 1e6)
        }
    }

    /// The cost from a round trip of `round_trip` seconds, and a GET of `len` bytes that
    /// took `took`: its time beyond a round trip is the body's.
    pub fn from_timings(round_trip: f64, len: u64, took: f64) -> Cost {
        // A body too quick to time against the round trip: no slower than 1 µs for it.
        let body = (took - round_trip).max(MIN_BODY);
        Cost {
            round_trip,
            bandwidth: len as f64 / body,
        }
    }

    /// A shot that makes `fetched` of the source and asks for `asked` bytes: a round trip
    /// a request, the bytes at the bandwidth, and what was asked for at memory speed,
    /// read and then checked.
    pub fn shot(&self, fetched: FetchCounters, asked: u64) -> Duration {
        let seconds = fetched.requests as f64 * self.round_trip
            + fetched.bytes as f64 / self.bandwidth
            + 2.0 * asked as f64 / 1e9;
        Duration::from_secs_f64(seconds)
    }
}

/// The requests and bytes one shot of `reads` makes of an object of `size` bytes with
/// `client` (`plain` or `stream` with `config`), counted by running the client over a
/// source that moves no bytes.
pub fn fetches(client: &str, config: &StreamConfig, reads: &Reads, size: u64) -> FetchCounters {
    if client == "plain" {
        // One request a read (see `client::Plain`): no need to run it.
        return FetchCounters {
            requests: reads.count(),
            bytes: reads.asked(),
            retries: 0,
        };
    }
    let mut stream = SeekableStream::new(Box::new(Blank(size)), config.clone());
    let mut sink = Discard(vec![0; 64 << 10]);
    stream.start();
    for r in reads.iter() {
        // A read outside the object fails the run itself, with its reason.
        if stream.read(r.offset, r.len, &mut sink).is_err() {
            break;
        }
    }
    stream.counters()
}

/// What checking a byte of a shot costs, measured once for a run ([`CheckProbe`]): its
/// objects are all generated (their bytes compared with the generator's) or all existing
/// (hashed into a fingerprint).
pub(crate) struct CheckProbe {
    /// A generated object, whose bytes are made again to compare; None for existing ones.
    generated: Option<Object>,
    cost: OnceCell<f64>,
}

/// The bytes checked for a byte's cost.
const CHECKED: usize = 1 << 20;

/// What a local shot reads of its pattern, timed, for its estimate: this many bytes of
/// its reads in order, from each of [`SAMPLES`] places spread over it (the first and last
/// read of each cut to fit), so that the bytes read are not still in the CPU's caches
/// from the last sample, as a large shot's are not.
const SAMPLE: u64 = 4 << 20;

/// The samples of a local shot timed; their median counts.
const SAMPLES: u64 = 5;

/// What a local file that cannot be read yet (a `--dry-run` before its objects are
/// generated) is assumed to cost: a read's system call, and its bytes from the page
/// cache (this machine's release build, a 2-core VM).
const LOCAL_GUESS: (f64, f64) = (1e-6, 4e9);

impl CheckProbe {
    pub(crate) fn new(generated: Option<Object>) -> CheckProbe {
        CheckProbe {
            generated,
            cost: OnceCell::new(),
        }
    }

    /// Seconds a byte's check costs: 1 MiB checked as the run's shots are, the quickest
    /// of three.
    pub(crate) fn per_byte(&self) -> f64 {
        *self.cost.get_or_init(|| {
            let mut bytes = vec![0u8; CHECKED];
            let mut quickest = f64::MAX;
            for _ in 0..3 {
                let took = match &self.generated {
                    Some(o) => {
                        o.fill(0, &mut bytes);
                        let mut expected = Expected::new(o);
                        let started = Instant::now();
                        std::hint::black_box(expected.mismatch(0, &bytes));
                        started.elapsed()
                    }
                    None => {
                        let started = Instant::now();
                        let mut hash = Fnv1a64::default();
                        hash.update(&bytes);
                        std::hint::black_box(hash.0);
                        started.elapsed()
                    }
                };
                quickest = quickest.min(took.as_secs_f64());
            }
            quickest / CHECKED as f64
        })
    }
}

/// A local case's shot of `reads`, timed on a sample of it ([`sample`]): its fresh
/// stream's start and its reads' seconds a byte; guessed at for a file not there yet.
pub(crate) fn sample_shot(case: &Case, reads: &Reads) -> (f64, f64) {
    sample(case, reads).unwrap_or_else(|_| guess(case, reads))
}

/// What one of `shots` single shots of a fork costs, its fresh stream taking `start`
/// seconds and its pattern's reads `per_byte` a byte (`sample`, from [`sample_shot`]),
/// with `check` seconds a byte checked: the stream and its reads; the check of what its
/// ring keeps ([`held`]), outside the timing but not outside the run; and its share of
/// the untimed pass after the last shot, where a pattern asking for more than its ring is
/// read once more, every byte checked.
pub(crate) fn local_shot(sample: (f64, f64), reads: &Reads, check: f64, shots: u64) -> Duration {
    let (start, per_byte) = sample;
    let asked = reads.asked() as f64;
    let read = start + per_byte * asked;
    let mut seconds = read + held(reads) as f64 * check;
    if reads.asked() > held(reads) {
        seconds += (read + asked * check) / shots.max(1) as f64;
    }
    Duration::from_secs_f64(seconds)
}

/// The sample of a file not there yet ([`LOCAL_GUESS`]): a system call a request the
/// client makes, and its bytes from the page cache.
fn guess(case: &Case, reads: &Reads) -> (f64, f64) {
    let (request, bandwidth) = LOCAL_GUESS;
    let fetched = fetches(&case.client, &case.stream, reads, case.object.size);
    let read = fetched.requests as f64 * request + fetched.bytes as f64 / bandwidth;
    (0.0, read / reads.asked().max(1) as f64)
}

/// Times the case's client reading [`SAMPLE`] bytes of its pattern, from each of
/// [`SAMPLES`] places spread over it (the whole pattern, each time, when it asks for
/// less, as its shots do), into
/// a ring as a shot's: the median fresh stream's start, and the median sample's seconds
/// a byte. Pages of those places (and of what a stream fetches ahead of them) not
/// in the page cache are brought in first (a hot run's shots find them there: the check
/// before the run has read them), unless the run is `--cold`, whose shots read the
/// storage: then the sample does too.
fn sample(case: &Case, reads: &Reads) -> Result<(f64, f64)> {
    let mut reader = reader(case)?;
    let SourceSpec::File(dir) = &case.source else {
        return Err(crate::util::error::Error::failed("not a local file"));
    };
    let file = FileSource::open_object(&dir.join(&case.object.name), &case.object)?;
    let asked = reads.asked();
    // Spread evenly over the pattern, from its start.
    let places: Vec<Vec<Read>> = (0..SAMPLES)
        .map(|k| {
            let len = SAMPLE.min(asked);
            part(reads, (asked - len) / SAMPLES * k, len)
        })
        .collect();
    if !case.cold {
        // Each read's range, and past it what a stream may fetch ahead of it.
        let ahead = case.stream.cache_size;
        let mut ranges: Vec<Read> = Vec::new();
        for r in places.iter().flatten() {
            let end = (r.offset + r.len + ahead).min(case.object.size);
            match ranges.last_mut() {
                Some(last) if r.offset >= last.offset && r.offset <= last.offset + last.len => {
                    last.len = last.len.max(end - last.offset);
                }
                _ => ranges.push(Read {
                    offset: r.offset,
                    len: end - r.offset,
                }),
            }
        }
        let mut warming: Option<(Plain, Circle)> = None;
        for r in &ranges {
            if file.cached_fraction_of(r.offset, r.len)? < 1.0 {
                let (plain, scratch) = match &mut warming {
                    Some(w) => w,
                    None => warming.insert((
                        Plain::new(Box::new(FileSource::open_object(&file.path, &case.object)?)),
                        Circle {
                            buf: vec![0; HOLD_SMALL as usize],
                            at: 0,
                        },
                    )),
                };
                plain.read(r.offset, r.len, scratch)?;
            }
        }
    }
    // The ring's memory already written, as after a shot's first.
    let mut ring = Circle {
        buf: vec![1; held(reads) as usize],
        at: 0,
    };
    let (mut starts, mut per_bytes) = (Vec::new(), Vec::new());
    for place in &places {
        if case.cold {
            reader.start();
            file.drop_cache()?;
        }
        let started = Instant::now();
        reader.start();
        let reading = Instant::now();
        for r in place {
            reader.read(r.offset, r.len, &mut ring)?;
        }
        let done = Instant::now();
        let bytes: u64 = place.iter().map(|r| r.len).sum();
        starts.push((reading - started).as_secs_f64());
        per_bytes.push((done - reading).as_secs_f64() / bytes.max(1) as f64);
    }
    Ok((median(starts), median(per_bytes)))
}

/// The middle one of `values` (not empty): one sample slowed by another process, or
/// quickened by bytes still in the CPU's caches, does not move it.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The reads of `len` bytes of the pattern `reads` asks for, from its `from`th byte on:
/// the first and last of them cut to fit.
fn part(reads: &Reads, from: u64, len: u64) -> Vec<Read> {
    let (end, mut at) = (from + len, 0);
    let mut part = Vec::new();
    for r in reads.iter() {
        let (start, stop) = (at.max(from), (at + r.len).min(end));
        if start < stop {
            part.push(Read {
                offset: r.offset + (start - at),
                len: stop - start,
            });
        }
        at += r.len;
        if at >= end {
            break;
        }
    }
    part
}

/// Memory reused in a circle, as a shot's ring is: each piece goes where the last ended.
struct Circle {
    buf: Vec<u8>,
    at: usize,
}

impl Sink for Circle {
    fn space(&mut self, max: usize) -> &mut [u8] {
        if self.at == self.buf.len() {
            self.at = 0;
        }
        let end = self.buf.len().min(self.at.saturating_add(max));
        &mut self.buf[self.at..end]
    }

    fn advance(&mut self, n: usize) {
        self.at += n;
    }
}

/// An object of this many bytes that reads as whatever memory held.
struct Blank(u64);

impl Source for Blank {
    fn size(&self) -> u64 {
        self.0
    }

    fn read_at(&mut self, _: u64, _: &mut [&mut [u8]]) -> Result<()> {
        Ok(())
    }

    fn read_into(&mut self, _: u64, _: u64, _: &mut dyn Sink) -> Result<()> {
        Ok(())
    }
}

/// Memory bytes are read into and forgotten.
struct Discard(Vec<u8>);

impl Sink for Discard {
    fn space(&mut self, max: usize) -> &mut [u8] {
        let n = max.min(self.0.len());
        &mut self.0[..n]
    }

    fn advance(&mut self, _: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_shot_costs_a_round_trip_a_request_and_its_bytes_at_the_bandwidth() {
        // 20 ms a round trip; 4 MiB took 60 ms, 40 of them the body: 100 MiB/s.
        let cost = Cost::from_timings(0.020, 4 * MIB, 0.060);
        assert_eq!(cost.round_trip, 0.020);
        assert!(
            (cost.bandwidth - 100.0 * MIB as f64).abs() < 1.0,
            "{cost:?}"
        );
        // 256 requests of 4 KiB (1 MiB): 5.12 s of round trips, 10 ms of bytes, 2 ms of
        // memory.
        let plain = fetches(
            "plain",
            &StreamConfig::default(),
            &Reads::built_in("sequential", MIB, 4096),
            MIB,
        );
        assert_eq!(
            plain,
            FetchCounters {
                requests: 256,
                bytes: MIB,
                retries: 0
            }
        );
        let shot = cost.shot(plain, MIB).as_secs_f64();
        assert!(
            (shot - (5.12 + 0.01 + 2.0 * MIB as f64 / 1e9)).abs() < 1e-6,
            "{shot}"
        );
        // A GET no slower than its round trip: the body is not timed as free.
        assert_eq!(Cost::from_timings(0.02, 10, 0.01).bandwidth, 10.0 / 1e-6);
    }

    /// A case of `client` reading `reads` of the file at `path` (`size` bytes, not made by
    /// bb-seek).
    fn local_case(path: &std::path::Path, size: u64, client: &str, reads: &Reads) -> Case {
        Case {
            source: SourceSpec::File(path.parent().unwrap().to_path_buf()),
            object: Object::existing(path.file_name().unwrap().to_str().unwrap(), size),
            reads: std::sync::Arc::new(reads.clone()),
            client: client.to_string(),
            stream: StreamConfig::local(),
            cold: false,
            request_timeout: Duration::from_secs(5),
            fingerprint: None,
            changed: None,
        }
    }

    #[test]
    fn a_local_shot_is_its_sample_its_check_and_its_share_of_the_last_pass() {
        // 128 MiB in 4 KiB reads: a fresh stream of 1 ms, 0.25 ns a byte read, 1 ns a
        // byte checked, six shots a fork.
        let size = 128 * MIB;
        let reads = Reads::built_in("sequential", size, 4096);
        let read = 1e-3 + 0.25e-9 * size as f64;
        let ring = 64.0 * 1024.0 * 1e-9;
        let again = (read + size as f64 * 1e-9) / 6.0;
        let shot = local_shot((1e-3, 0.25e-9), &reads, 1e-9, 6).as_secs_f64();
        assert!((shot - (read + ring + again)).abs() < 1e-9, "{shot}");
        // A pattern its ring holds whole is checked after each shot, never read again.
        let small = Reads::built_in("sequential", 64 << 10, 4096);
        let shot = local_shot((0.0, 1e-9), &small, 1e-9, 6).as_secs_f64();
        assert!((shot - 2.0 * 65536e-9).abs() < 1e-12, "{shot}");
    }

    #[test]
    fn a_local_shot_is_timed_with_its_own_client_over_its_own_file() {
        let f = crate::seek::mapping::tests::TempFile::new("probe-sample", (9 << 20) + 5);
        let size = f.bytes.len() as u64;
        for (client, read_size) in [("plain", 4096), ("stream", 4096), ("plain", MIB)] {
            let reads = Reads::built_in("sequential", size, read_size);
            let case = local_case(&f.path, size, client, &reads);
            let (start, per_byte) = sample(&case, &reads).unwrap();
            assert!(start.is_finite() && start >= 0.0, "{client}: {start}");
            assert!(
                per_byte.is_finite() && per_byte > 0.0,
                "{client}: {per_byte}"
            );
            assert_ne!(
                (start, per_byte),
                guess(&case, &reads),
                "measured, not guessed"
            );
        }
        // Its places, spread over the pattern, cover what they say.
        let reads = Reads::built_in("forward", size, 0);
        let whole: Vec<Read> = reads.iter().collect();
        let p = part(&reads, whole[0].len - 10, 30);
        assert_eq!(
            p,
            [
                Read {
                    offset: whole[0].offset + whole[0].len - 10,
                    len: 10
                },
                Read {
                    offset: whole[1].offset,
                    len: 20
                }
            ]
        );
        // A file cut short under it cannot be sampled; one that is not there yet (a
        // --dry-run before gen) is guessed at.
        let reads = Reads::built_in("sequential", size, MIB);
        let case = local_case(&f.path, size + 1, "plain", &reads);
        assert!(sample(&case, &reads).is_err());
        let missing = local_case(&f.path.with_file_name("gone"), size, "plain", &reads);
        assert_eq!(sample_shot(&missing, &reads), guess(&missing, &reads));
    }

    #[test]
    fn the_stream_is_counted_as_it_fetches() {
        let size = 16 * MIB;
        let reads = Reads::built_in("sequential", size, 4096);
        // As client.rs's test has it: ten fetches, every byte once.
        let c = fetches("stream", &StreamConfig::default(), &reads, size);
        assert_eq!(
            c,
            FetchCounters {
                requests: 10,
                bytes: size,
                retries: 0
            }
        );
        // A small object is fetched whole, once.
        let reads = Reads::built_in("sequential", 64 << 10, 4096);
        let c = fetches("stream", &StreamConfig::default(), &reads, 64 << 10);
        assert_eq!(
            c,
            FetchCounters {
                requests: 1,
                bytes: 64 << 10,
                retries: 0
            }
        );
        // So a 20 ms source costs the stream 10 round trips where plain makes 4096.
        let cost = Cost {
            round_trip: 0.02,
            bandwidth: 1e9,
        };
        let stream = cost.shot(
            fetches(
                "stream",
                &StreamConfig::default(),
                &Reads::built_in("sequential", size, 4096),
                size,
            ),
            size,
        );
        assert!(stream < Duration::from_millis(300), "{stream:?}");
    }
}
