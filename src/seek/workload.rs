//! bb-seek's measured operation for the harness: a fresh client over one object reads a
//! whole pattern into a ring of bounded memory, and what the ring keeps of the shot is
//! checked outside the timing: byte for byte against the regenerated data, or for an
//! existing object against the fingerprint of the bytes read when it was checked before
//! the run; a pattern larger than the ring is also read once more, untimed, every byte
//! checked as it arrives. With the requests and bytes it fetched per operation as metrics.
//! A hot fork over a local file first places the file's page-cache pages afresh.

use super::client::{Plain, Reader, SeekableStream, StreamConfig};
use super::data::{fnv_of, Expected, Fingerprint, Object};
use super::file::FileSource;
use super::pattern::{Read, Reads};
use super::source::{Feeding, FetchCounters, Sink};
use super::spec::SourceSpec;
use crate::harness::benchmark::{Metric, Workload};
use crate::util::error::{Error, Result};
use crate::util::rng::Fnv1a64;
use std::sync::Arc;
use std::time::Duration;

/// The most bytes of a shot kept for its check: patterns of large reads asking up to this
/// (forward, backward, parquet and 1 MiB reads of the default 1, 4 and 16 MiB objects) are
/// held and checked whole after each shot; of larger ones, the last this many bytes read.
/// A run's memory is this, the stream's cache and small buffers, whatever the object's size.
pub const HOLD: u64 = 16 << 20;

/// What a pattern of small reads (none over this) keeps: its reads land in memory that
/// stays in the CPU's caches, as a reader's reused buffer does. Held in 16 MiB, 4 KiB reads
/// spent more time writing that memory than reading the file (a C loop copying 16 MiB out
/// of a mapping in 4 KiB pieces: 5-7 times slower into 16 MiB than into 64 KiB).
pub const HOLD_SMALL: u64 = 64 << 10;

/// The bytes a shot of `reads` keeps for its check (the length of the ring its reads land
/// in): [`HOLD_SMALL`] for small reads, else [`HOLD`], and never more than it asks.
pub fn held(reads: &Reads) -> u64 {
    let hold = match reads.largest() <= HOLD_SMALL {
        true => HOLD_SMALL,
        false => HOLD,
    };
    hold.min(reads.asked())
}

/// The largest local object whose page-cache pages each hot fork places afresh before its
/// shots ([`FileSource::place_afresh`]: dropped and read back whole, about 13 ms for
/// 16 MiB here): the pages' placement, fixed for a whole run when it was left to the run,
/// made one run's hot rows up to x2 slower than another's, its forks agreeing
/// (BENCHMARKS.md, "bb-seek's run-level shift"). Larger objects keep the run's placement: reading a 1 GiB object
/// back from an SD card at 20 MB/s would add most of a minute to every fork.
pub const PLACE_MAX: u64 = 64 << 20;

/// One benchmark's fixed description, captured by its set-up.
#[derive(Clone)]
pub struct Case {
    pub source: SourceSpec,
    pub object: Object,
    /// Shared by the cases of one pattern.
    pub reads: Arc<Reads>,
    /// `plain` or `stream` (see [`super::client::CLIENTS`]).
    pub client: String,
    pub stream: StreamConfig,
    /// Drop the object's cached pages before every shot.
    pub cold: bool,
    /// How long an HTTP request may take.
    pub request_timeout: Duration,
    /// An existing object's: what the bytes of this pattern were when it was checked
    /// before the run (None until then, and for a generated object).
    pub fingerprint: Option<Fingerprint>,
    /// Why the benchmark fails as it starts: an existing object's size, read again by a
    /// fork, is not the one the run began with.
    pub changed: Option<String>,
}

/// What a shot's bytes are checked against.
enum Verify {
    /// A generated object's bytes, made again.
    Bytes(Expected),
    /// An existing object's fingerprint.
    Fingerprint(Fingerprint),
}

/// Memory reads land in, reused in a circle: after a shot it holds the last bytes read.
struct Ring {
    buf: Vec<u8>,
    /// Bytes delivered since the shot began.
    written: u64,
}

impl Sink for Ring {
    fn space(&mut self, max: usize) -> &mut [u8] {
        let at = (self.written % self.buf.len() as u64) as usize;
        let end = self.buf.len().min(at.saturating_add(max));
        &mut self.buf[at..end]
    }

    fn advance(&mut self, n: usize) {
        self.written += n as u64;
    }
}

/// A sink that checks each piece against the expected bytes as soon as it is filled, for
/// the untimed pass over a pattern larger than the ring.
struct Checking<'a> {
    buf: &'a mut [u8],
    at: usize,
    /// The object's offset of the next byte.
    offset: u64,
    expected: &'a mut Expected,
    /// The first wrong byte: its offset and value.
    wrong: Option<(u64, u8)>,
}

impl Sink for Checking<'_> {
    fn space(&mut self, max: usize) -> &mut [u8] {
        if self.at == self.buf.len() {
            self.at = 0;
        }
        let end = self.buf.len().min(self.at.saturating_add(max));
        &mut self.buf[self.at..end]
    }

    fn advance(&mut self, n: usize) {
        let got = &self.buf[self.at..self.at + n];
        if self.wrong.is_none() {
            if let Some(i) = self.expected.mismatch(self.offset, got) {
                self.wrong = Some((self.offset + i as u64, got[i]));
            }
        }
        self.at += n;
        self.offset += n as u64;
    }
}

/// The case's client over its object, opened.
pub(crate) fn reader(case: &Case) -> Result<Box<dyn Reader>> {
    let source = case.source.open(&case.object, case.request_timeout)?;
    Ok(match case.client.as_str() {
        "plain" => Box::new(Plain::new(source)),
        _ => Box::new(SeekableStream::new(source, case.stream.clone())),
    })
}

/// One operation: a fresh stream over the object reads the whole pattern into the ring.
/// What the ring holds is checked after the shot, outside the timing (in timed modes, each
/// operation but an invocation's last is checked inside it).
pub struct SeekOp {
    reader: Box<dyn Reader>,
    reads: Arc<Reads>,
    object: Object,
    /// The object as messages name it, with its client.
    what: String,
    verify: Verify,
    ring: Ring,
    unchecked: bool,
    cold: Option<FileSource>,
    metered: (FetchCounters, u64),
    /// Over HTTP or S3: retries are reported (and warned about, once).
    remote: bool,
    warned: bool,
}

impl SeekOp {
    /// Opens the object at the case's source with its client.
    pub fn set_up(case: &Case) -> Result<SeekOp> {
        if let Some(why) = &case.changed {
            return Err(Error::failed(why.clone()));
        }
        if held(&case.reads) == 0 {
            // The options refuse an object too small for its pattern: never a 0-byte ring.
            return Err(Error::usage(format!(
                "{}: the pattern reads nothing of it",
                case.object.name
            )));
        }
        if let (SourceSpec::File(dir), false) = (&case.source, case.cold) {
            if case.object.size <= PLACE_MAX {
                let path = dir.join(&case.object.name);
                // What it did is not checked: tmpfs keeps its pages where they are.
                FileSource::open_object(&path, &case.object)?.place_afresh()?;
            }
        }
        let reader = reader(case)?;
        let cold = match (&case.source, case.cold) {
            (SourceSpec::File(dir), true) => {
                let f = FileSource::open_object(&dir.join(&case.object.name), &case.object)?;
                // Whether it worked was checked and reported once, by the parent.
                let _ = f.drop_cache();
                Some(f)
            }
            _ => None,
        };
        let verify = match (case.object.generated(), case.fingerprint) {
            (true, _) => Verify::Bytes(Expected::new(&case.object)),
            (false, Some(f)) => Verify::Fingerprint(f),
            (false, None) => {
                return Err(Error::failed(format!(
                    "{}: its bytes were not checked before the run",
                    case.object.name
                )))
            }
        };
        let held = held(&case.reads) as usize;
        // What opening it took (a HEAD, its retries) is not an operation's.
        let opened = reader.counters();
        Ok(SeekOp {
            reader,
            reads: case.reads.clone(),
            object: case.object.clone(),
            what: format!(
                "the {} client's bytes of {} at {}",
                case.client,
                case.object.name,
                case.source.label()
            ),
            verify,
            ring: Ring {
                buf: vec![0; held],
                written: 0,
            },
            unchecked: false,
            cold,
            metered: (opened, 0),
            remote: case.source.is_remote(),
            warned: false,
        })
    }

    /// Checks the bytes the ring holds, the last it received, against the object's.
    fn check(&mut self) -> Result<()> {
        self.unchecked = false;
        let held = self.ring.buf.len() as u64;
        let asked = self.ring.written;
        let expected = match &mut self.verify {
            Verify::Bytes(expected) => expected,
            Verify::Fingerprint(f) => {
                // The oldest byte kept is where the next would go.
                let split = (asked % held) as usize;
                let got = fnv_of(&[&self.ring.buf[split..], &self.ring.buf[..split]]);
                return match got == f.tail {
                    true => Ok(()),
                    false => Err(differs(&self.what, held.min(asked), asked, got, f.tail)),
                };
            }
        };
        let kept_from = asked.saturating_sub(held);
        let mut at = 0; // where each read starts among the bytes the shot received
        for r in self.reads.iter() {
            let end = at + r.len;
            let mut from = at.max(kept_from);
            while from < end {
                let i = (from % held) as usize;
                let n = ((end - from) as usize).min(held as usize - i);
                let offset = r.offset + (from - at);
                let got = &self.ring.buf[i..i + n];
                if let Some(k) = expected.mismatch(offset, got) {
                    let at = offset + k as u64;
                    return Err(mismatch(&self.object, at, got[k], expected.byte_at(at), &r));
                }
                from += n as u64;
            }
            at = end;
        }
        Ok(())
    }

    /// Reads the whole pattern once more, untimed, checking every byte as it arrives:
    /// for a pattern larger than the ring, whose shots keep only their last bytes.
    fn check_all(&mut self) -> Result<()> {
        self.reader.start();
        let expected = match &mut self.verify {
            Verify::Bytes(expected) => expected,
            Verify::Fingerprint(f) => {
                let mut hash = Fnv1a64::default();
                let mut feed = |bytes: &[u8]| hash.update(bytes);
                let mut sink = Feeding {
                    buf: &mut self.ring.buf,
                    feed: &mut feed,
                };
                for r in self.reads.iter() {
                    self.reader.read(r.offset, r.len, &mut sink)?;
                }
                let asked = self.reads.asked();
                return match hash.0 == f.whole {
                    true => Ok(()),
                    false => Err(differs(&self.what, asked, asked, hash.0, f.whole)),
                };
            }
        };
        for r in self.reads.iter() {
            let mut sink = Checking {
                buf: &mut self.ring.buf,
                at: 0,
                offset: r.offset,
                expected,
                wrong: None,
            };
            self.reader.read(r.offset, r.len, &mut sink)?;
            if let Some((offset, got)) = sink.wrong {
                return Err(mismatch(
                    &self.object,
                    offset,
                    got,
                    expected.byte_at(offset),
                    &r,
                ));
            }
        }
        Ok(())
    }
}

/// The error for a wrong byte at `offset` of a generated object, read by `read`.
fn mismatch(object: &Object, offset: u64, got: u8, want: u8, read: &Read) -> Error {
    Error::failed(format!(
        "verification mismatch: byte {offset} of {} (in the read of {} bytes at {}) is 0x{got:02x}, expected 0x{want:02x}: \
         the object is corrupt or was made with another --seed (rerun bb-seek gen)",
        object.name, read.len, read.offset,
    ))
}

/// The error for an existing object's bytes that differ from those read when it was
/// checked: `what` names them; `len` bytes of the `asked` a shot reads were hashed.
fn differs(what: &str, len: u64, asked: u64, got: u64, want: u64) -> Error {
    let which = match len == asked {
        true => format!("all {asked} bytes of this pattern"),
        false => format!("the last {len} of the {asked} bytes of this pattern"),
    };
    Error::failed(format!(
        "verification mismatch: {what} differ from those read when it was checked before the run \
         ({which}: FNV-1a {}, expected {}): the object changed during the run, or a client read wrong bytes",
        Fingerprint::hex(got),
        Fingerprint::hex(want),
    ))
}

impl Workload for SeekOp {
    fn run(&mut self, ops: u64) -> Result<()> {
        for _ in 0..ops {
            if self.unchecked {
                self.check()?;
            }
            self.reader.start();
            self.ring.written = 0;
            for r in self.reads.iter() {
                self.reader.read(r.offset, r.len, &mut self.ring)?;
            }
            self.unchecked = true;
            self.metered.1 += 1;
        }
        Ok(())
    }

    fn after_iteration(&mut self) -> Result<()> {
        if self.unchecked {
            self.check()?;
        }
        if let Some(f) = &self.cold {
            // The stream's mapped pages would stay in the page cache: let them go first.
            self.reader.start();
            f.drop_cache()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        if self.reads.asked() > self.ring.buf.len() as u64 {
            self.check_all()?;
        }
        Ok(())
    }

    fn iteration_metrics(&mut self) -> Vec<Metric> {
        let now = self.reader.counters();
        let (before, ops) = std::mem::replace(&mut self.metered, (now, 0));
        let ops = ops.max(1) as f64;
        let requests = (now.requests - before.requests) as f64 / ops;
        let fetched = (now.bytes - before.bytes) as f64 / ops;
        let asked = self.reads.asked() as f64;
        let retries = now.retries - before.retries;
        if retries > 0 && !self.warned {
            self.warned = true;
            crate::util::terminal::warn(&format!(
                "{} after a transient failure (500, 502, 503, 504) in this benchmark: \
                 their backoff is in its times (retries per op are reported)",
                match retries {
                    1 => "1 request was retried".to_string(),
                    n => format!("{n} requests were retried"),
                }
            ));
        }
        let mut metrics = vec![
            Metric {
                name: "requests".into(),
                unit: "req/op".into(),
                value: requests,
            },
            Metric {
                name: "fetched".into(),
                unit: "KiB/op".into(),
                value: fetched / 1024.0,
            },
            Metric {
                name: "amplification".into(),
                unit: "x".into(),
                value: fetched / asked,
            },
        ];
        if self.remote {
            metrics.push(Metric {
                name: "retries".into(),
                unit: "req/op".into(),
                value: retries as f64 / ops,
            });
        }
        metrics
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seek::client::StreamConfig;
    use crate::seek::source::Source;

    /// The bytes this thread has had read from storage (`read_bytes` of
    /// /proc/thread-self/io), where the kernel keeps the count.
    fn read_from_storage() -> Option<u64> {
        let io = std::fs::read_to_string("/proc/thread-self/io").ok()?;
        io.lines()
            .find_map(|l| l.strip_prefix("read_bytes: "))
            .and_then(|n| n.trim().parse().ok())
    }

    /// Whether `dir` is on tmpfs, whose pages cannot be dropped.
    fn on_tmpfs(dir: &std::path::Path) -> bool {
        let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statfs fills the zeroed struct it is given; the path is a C string.
        let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::statfs(path.as_ptr(), &mut fs) };
        // Their types differ between targets (c_long, u32): compared as i64 everywhere.
        #[allow(clippy::unnecessary_cast)]
        let tmpfs = fs.f_type as i64 == libc::TMPFS_MAGIC as i64;
        rc != 0 || tmpfs
    }

    #[test]
    fn each_hot_fork_places_its_objects_pages_afresh_and_a_cold_one_leaves_them() {
        let dir = crate::util::temp::TempDir::new("seek-place");
        let size = 1 << 20;
        let object = Object::new(size, 42);
        let mut file = std::fs::File::create(dir.join(&object.name)).unwrap();
        object.write_range(0, size, &mut file).unwrap();
        drop(file);
        let case = |cold| Case {
            source: SourceSpec::File(dir.to_path_buf()),
            object: object.clone(),
            reads: Arc::new(Reads::built_in("parquet", size, 0)),
            client: "plain".into(),
            stream: StreamConfig::local(),
            cold,
            request_timeout: Duration::from_secs(5),
            fingerprint: None,
            changed: None,
        };
        let path = dir.join(&object.name);
        let cached = || {
            FileSource::open(&path, size)
                .unwrap()
                .cached_fraction()
                .unwrap()
        };
        // Every page cached, as gen (or an earlier fork) left them.
        FileSource::open(&path, size)
            .unwrap()
            .read_at(0, &mut [&mut vec![0; size as usize]])
            .unwrap();
        let (Some(before), false) = (read_from_storage(), on_tmpfs(&dir)) else {
            eprintln!("no per-thread I/O counts, or tmpfs (whose pages stay put): skipped");
            return;
        };
        // A hot fork's set-up drops them and reads the object back from storage: its
        // shots read pages placed for it, not the ones the run found.
        let mut op = SeekOp::set_up(&case(false)).unwrap();
        let read = read_from_storage().unwrap() - before;
        assert!(
            read >= size,
            "the set-up read {read} bytes from storage, not the object's {size}"
        );
        assert_eq!(cached(), 1.0, "a hot fork's shots find every page cached");
        op.run(2).unwrap();
        op.after_iteration().unwrap();
        op.finish().unwrap();
        // A cold fork drops them before each shot anyway: its set-up reads nothing back.
        let before = read_from_storage().unwrap();
        drop(SeekOp::set_up(&case(true)).unwrap());
        assert_eq!(read_from_storage().unwrap() - before, 0);
    }
}
