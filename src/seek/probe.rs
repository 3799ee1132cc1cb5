//! A remote source's cost, measured for the plan: a few ranged GETs in the parent before
//! the plan (in a `--dry-run` too, whose estimate needs them; never in a fork) give the
//! round trip and the bandwidth, and a shot is estimated from the requests and bytes its
//! client really makes of the source: one request a read for the plain client, and for
//! the stream what it fetches, counted by running it over a source that moves no bytes.

use super::client::{Reader, SeekableStream, StreamConfig};
use super::data::Object;
use super::pattern::Reads;
use super::source::{FetchCounters, Sink, Source};
use super::spec::SourceSpec;
use crate::util::error::Result;
use crate::util::format::format_estimate;
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
        let mut source = self.source.open(&o.name, o.size, self.timeout)?;
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
    /// read and then checked (as [`super::workload::shot_estimate`] counts it).
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
