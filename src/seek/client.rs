//! The two clients that read a pattern through a `Source`: `plain`, one request per read
//! (the standard client), and `stream`, the seekable stream: block-aligned fetches into a
//! bounded cache, sequential detection with a read-ahead window that doubles per fetch, a
//! tail prefetch for footer-first readers, and small objects fetched whole. Reads as large
//! as any fetch go straight into the caller's buffer, so the stream never copies more
//! than the plain client would read; a local file's blocks already in the page cache are
//! served from its mapping, so smaller reads are one copy too (out of the page cache).

use crate::seek::cache::{BlockCache, Destination};
use crate::seek::mapping::page_size;
use crate::seek::source::{read_end, FetchCounters, Metered, Sink, Source};
use crate::util::error::{Error, Result};

/// A client reading one object.
pub(crate) trait Reader {
    /// Starts a fresh stream over the object (each measured operation opens it anew);
    /// connections and memory stay.
    fn start(&mut self);

    /// Reads `len` bytes from `offset` into `sink`.
    fn read(&mut self, offset: u64, len: u64, sink: &mut dyn Sink) -> Result<()>;

    /// Requests and bytes made of the source so far.
    fn counters(&self) -> FetchCounters;
}

/// The client names `--client` takes.
pub const CLIENTS: [&str; 2] = ["plain", "stream"];

/// Each read is one positioned read of exactly that range.
pub(crate) struct Plain {
    source: Metered,
}

impl Plain {
    pub(crate) fn new(source: Box<dyn Source>) -> Plain {
        Plain {
            source: Metered::new(source),
        }
    }
}

impl Reader for Plain {
    fn start(&mut self) {}

    fn read(&mut self, offset: u64, len: u64, sink: &mut dyn Sink) -> Result<()> {
        self.source.read_into(offset, len, sink)
    }

    fn counters(&self) -> FetchCounters {
        self.source.counters()
    }
}

/// The stream's knobs, each a flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamConfig {
    /// Fetches are aligned to and cached in blocks of this size.
    pub block_size: u64,
    /// The cache's bound in bytes.
    pub cache_size: u64,
    /// The first read-ahead of a sequential run.
    pub readahead_min: u64,
    /// The read-ahead doubles per sequential fetch up to this.
    pub readahead_max: u64,
    /// A first read this close to the end fetches this much of the tail (0: never).
    pub tail_prefetch: u64,
    /// Objects up to this size are fetched whole on the first read (0: never).
    pub whole_object_max: u64,
}

impl Default for StreamConfig {
    /// The defaults for a remote object, where each request costs a round trip: large
    /// fetches, few requests.
    fn default() -> StreamConfig {
        StreamConfig {
            block_size: 64 << 10,
            cache_size: 8 << 20,
            readahead_min: 128 << 10,
            readahead_max: 4 << 20,
            tail_prefetch: 64 << 10,
            whole_object_max: 256 << 10,
        }
    }
}

impl StreamConfig {
    /// The defaults for a local file, where a read costs a system call and copies
    /// dominate: a cache small enough to stay in the CPU's L2 cache, so the bytes the
    /// kernel just wrote into it are still there when they are copied out (measured:
    /// sequential 4 KiB reads at 8.2–8.5 GB/s with 256 KiB against 5.5–6.1 GB/s with
    /// 8 MiB), and that bounds the pages kept mapped when blocks already in the page cache
    /// are served from the file's mapping (see [`super::cache`]).
    pub fn local() -> StreamConfig {
        StreamConfig {
            cache_size: 256 << 10,
            readahead_min: 64 << 10,
            readahead_max: 128 << 10,
            ..StreamConfig::default()
        }
    }
}

impl StreamConfig {
    /// Checks that the knobs fit together; names the flag that does not.
    pub fn validate(&self) -> Result<()> {
        let kib = |v: u64| format!("{v} bytes");
        if self.block_size == 0 {
            return Err(Error::usage("--block-size must be at least 1 byte"));
        }
        if self.cache_size < self.block_size {
            return Err(Error::usage(format!(
                "--cache-size ({}) must hold at least one block of --block-size ({})",
                kib(self.cache_size),
                kib(self.block_size)
            )));
        }
        if self.readahead_min > self.readahead_max {
            return Err(Error::usage(format!(
                "--readahead-min ({}) is larger than --readahead-max ({})",
                kib(self.readahead_min),
                kib(self.readahead_max)
            )));
        }
        if self.readahead_max > self.cache_size {
            return Err(Error::usage(format!(
                "--readahead-max ({}) is larger than --cache-size ({}), which bounds every fetch",
                kib(self.readahead_max),
                kib(self.cache_size)
            )));
        }
        Ok(())
    }
}

/// The seekable stream.
pub(crate) struct SeekableStream {
    source: Metered,
    config: StreamConfig,
    cache: BlockCache,
    /// Where the next read starts if the reader reads on sequentially.
    next_offset: Option<u64>,
    /// The read-ahead of the current sequential run (0: not in one).
    window: u64,
}

impl SeekableStream {
    pub(crate) fn new(source: Box<dyn Source>, config: StreamConfig) -> SeekableStream {
        let source = Metered::new(source);
        let (block, capacity) = (config.block_size as usize, config.cache_size as usize);
        // A mapped local file serves blocks already in the page cache from there, with one
        // copy instead of two; its blocks must be whole pages.
        let cache = match source.map() {
            Some(mapping) if block.is_multiple_of(page_size()) => {
                BlockCache::mapped(block, capacity, mapping)
            }
            _ => BlockCache::new(block, capacity),
        };
        SeekableStream {
            source,
            config,
            cache,
            next_offset: None,
            window: 0,
        }
    }

    /// The block cache, for tests of its bound.
    #[cfg(test)]
    pub(crate) fn cache(&self) -> &BlockCache {
        &self.cache
    }

    /// Fetches the blocks from the one holding `from` up to the one holding `to - 1`, in
    /// one request: at most the cache's capacity, and stopping before a cached block.
    fn fetch(&mut self, from: u64, to: u64) -> Result<()> {
        let bs = self.config.block_size;
        let first = from / bs;
        let last = (to.min(self.source.size()) - 1) / bs;
        let mut count = ((last - first + 1) as usize).min(self.cache.capacity_blocks());
        if let Some(cached) = (first..first + count as u64).find(|&b| self.cache.contains(b)) {
            count = (cached - first) as usize;
        }
        let len = self.source.size();
        let source = &mut self.source;
        self.cache
            .fill(first, count, len, |offset, destination| match destination {
                Destination::Buffers(bufs) => source.read_at(offset, bufs),
                Destination::Mapped(len) => source.fetch_mapped(offset, len),
            })
    }

    /// The first read of a stream: small objects whole, or the tail for a footer reader.
    fn prefetch(&mut self, offset: u64) -> Result<()> {
        let size = self.source.size();
        let c = &self.config;
        if size <= c.whole_object_max && size <= self.cache.memory() as u64 {
            self.fetch(0, size)
        } else if c.tail_prefetch > 0 && offset >= size.saturating_sub(c.tail_prefetch) {
            let tail = c.tail_prefetch.min(self.cache.memory() as u64);
            self.fetch(size.saturating_sub(tail), size)
        } else {
            Ok(())
        }
    }
}

impl Reader for SeekableStream {
    fn start(&mut self) {
        self.cache.clear();
        self.next_offset = None;
        self.window = 0;
    }

    fn read(&mut self, offset: u64, len: u64, sink: &mut dyn Sink) -> Result<()> {
        let end = read_end(offset, len, self.source.size())?;
        if self.next_offset.is_none() {
            self.prefetch(offset)?;
        }
        // A read where the last one ended continues (or starts) a sequential run. A first
        // read is not one yet: a reader that jumps (forward seeks) starts at 0 too.
        let sequential = self.next_offset == Some(offset);
        self.window = match (sequential, self.window) {
            (false, _) => 0,
            (true, 0) => self.config.readahead_min,
            (true, w) => w,
        };
        self.next_offset = Some(end);
        let bs = self.config.block_size;
        let mut pos = offset;
        while pos < end {
            if let Some(data) = self.cache.get(pos / bs) {
                let within = (pos % bs) as usize;
                let n = (data.len() - within).min((end - pos) as usize);
                let mut copied = 0;
                while copied < n {
                    let space = sink.space(n - copied);
                    let m = space.len();
                    space.copy_from_slice(&data[within + copied..within + copied + m]);
                    sink.advance(m);
                    copied += m;
                }
                pos += n as u64;
                continue;
            }
            if end - pos >= bs.max(self.window) {
                // As large as any fetch: straight into the caller's memory, no copy.
                return self.source.read_into(pos, end - pos, sink);
            }
            self.fetch(pos, end.max(pos + self.window))?;
            if self.window > 0 {
                self.window = (self.window * 2).min(self.config.readahead_max);
            }
        }
        Ok(())
    }

    fn counters(&self) -> FetchCounters {
        self.source.counters()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seek::pattern::{built_in, Read};
    use crate::seek::source::tests::Memory;
    use crate::seek::source::Buffers;

    /// Reads `buf.len()` bytes from `offset` into `buf`.
    fn read_buf(client: &mut dyn Reader, offset: u64, buf: &mut [u8]) -> Result<()> {
        let len = buf.len() as u64;
        client.read(offset, len, &mut Buffers::new(&mut [buf]))
    }

    const MIB: u64 = 1 << 20;

    fn object(size: u64) -> Vec<u8> {
        (0..size).map(|i| (i * 31 % 251) as u8).collect()
    }

    /// Runs `reads` through `client` twice (two operations), checking every byte;
    /// returns the counters of the second operation.
    fn run(client: &mut dyn Reader, data: &[u8], reads: &[Read]) -> FetchCounters {
        let mut before = FetchCounters::default();
        for _ in 0..2 {
            before = client.counters();
            client.start();
            for r in reads {
                let mut buf = vec![0; r.len as usize];
                read_buf(client, r.offset, &mut buf).unwrap();
                let (o, l) = (r.offset as usize, r.len as usize);
                assert!(buf == data[o..o + l], "bytes of read {r:?}");
            }
        }
        let after = client.counters();
        FetchCounters {
            requests: after.requests - before.requests,
            bytes: after.bytes - before.bytes,
            retries: after.retries - before.retries,
        }
    }

    fn stream(data: &[u8], config: StreamConfig) -> SeekableStream {
        SeekableStream::new(Box::new(Memory(data.to_vec())), config)
    }

    #[test]
    fn plain_makes_one_request_per_read() {
        let data = object(MIB);
        let reads = built_in("sequential", MIB, 4096);
        let c = run(
            &mut Plain::new(Box::new(Memory(data.clone()))),
            &data,
            &reads,
        );
        assert_eq!((c.requests, c.bytes), (256, MIB));
    }

    #[test]
    fn sequential_small_reads_grow_the_read_ahead() {
        let size = 16 * MIB;
        let data = object(size);
        let reads = built_in("sequential", size, 4096);
        let c = run(&mut stream(&data, StreamConfig::default()), &data, &reads);
        // A block, then 128k, 256k, 512k, 1m, 2m, then 4m fetches: 3.94 MiB, then 3 × 4 MiB
        // and the rest.
        assert_eq!(c.requests, 10, "{c:?}");
        assert_eq!(c.bytes, size, "nothing fetched twice or past the end");
        assert!(c.requests * MIB < size, "under one request per MiB");
    }

    #[test]
    fn random_reads_reset_the_read_ahead() {
        let data = object(4 * MIB);
        let config = StreamConfig::default();
        // Small reads that jump around: each fetches only its own block.
        let reads: Vec<Read> = [3 * MIB, MIB + 100, 2 * MIB + 5000, 100_000]
            .iter()
            .map(|&offset| Read { offset, len: 1000 })
            .collect();
        let c = run(&mut stream(&data, config.clone()), &data, &reads);
        assert_eq!((c.requests, c.bytes), (4, 4 * config.block_size));
        // A jump back to where the last read ended counts as sequential again.
        let reads = [
            Read {
                offset: MIB,
                len: 100,
            },
            Read {
                offset: MIB + 100,
                len: 100,
            },
        ];
        let c = run(&mut stream(&data, config.clone()), &data, &reads);
        assert_eq!((c.requests, c.bytes), (1, config.block_size));
        // 4 KiB reads over the first MiB of 4: a block, then fetches of 128k, 256k, 512k
        // and 1m, the last one reaching past the reads.
        let reads = built_in("sequential", MIB, 4096);
        let c = run(&mut stream(&data, config.clone()), &data, &reads);
        assert_eq!(
            (c.requests, c.bytes),
            (5, (64 + 128 + 256 + 512 + 1024) << 10)
        );
    }

    #[test]
    fn large_reads_go_straight_through_and_match_plain() {
        for pattern in ["forward", "backward"] {
            for size in [MIB, 4 * MIB, 16 * MIB] {
                let data = object(size);
                let reads = built_in(pattern, size, 4096);
                let s = run(&mut stream(&data, StreamConfig::default()), &data, &reads);
                let p = run(
                    &mut Plain::new(Box::new(Memory(data.clone()))),
                    &data,
                    &reads,
                );
                assert_eq!(p.requests, 5);
                assert_eq!(s, p, "{pattern} {size}");
            }
        }
    }

    #[test]
    fn a_footer_first_reader_gets_the_tail_in_one_request() {
        for size in [MIB, 16 * MIB] {
            let data = object(size);
            let reads = built_in("parquet", size, 4096);
            let s = run(&mut stream(&data, StreamConfig::default()), &data, &reads);
            assert_eq!(s.requests, 3, "tail, then the two column chunks");
            let p = run(
                &mut Plain::new(Box::new(Memory(data.clone()))),
                &data,
                &reads,
            );
            assert_eq!(p.requests, 4);
            // Without it (and with blocks smaller than the footer), one request per read.
            let no_tail = StreamConfig {
                tail_prefetch: 0,
                block_size: 4096,
                ..StreamConfig::default()
            };
            assert_eq!(run(&mut stream(&data, no_tail), &data, &reads).requests, 4);
        }
    }

    #[test]
    fn small_objects_are_fetched_whole() {
        let data = object(200_000);
        for pattern in ["sequential", "forward", "backward", "parquet"] {
            let reads = built_in(pattern, 200_000, 4096);
            let c = run(&mut stream(&data, StreamConfig::default()), &data, &reads);
            assert_eq!((c.requests, c.bytes), (1, 200_000), "{pattern}");
        }
    }

    #[test]
    fn a_small_cache_stays_bounded_and_correct() {
        let size = 4 * MIB + 12_345;
        let data = object(size);
        let config = StreamConfig {
            block_size: 4096,
            cache_size: 64 << 10,
            readahead_min: 8192,
            readahead_max: 64 << 10,
            tail_prefetch: 16 << 10,
            whole_object_max: 0,
        };
        let mut s = stream(&data, config);
        let mut state = 7u64;
        let mut reads = built_in("sequential", size, 1000);
        for _ in 0..300 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let offset = (state >> 20) % size;
            let len = ((state >> 7) % 100_000).clamp(1, size - offset);
            reads.push(Read { offset, len });
        }
        run(&mut s, &data, &reads);
        assert_eq!(s.cache().memory(), 64 << 10);
        assert!(s.cache().cached_blocks() <= 16);
        let e = read_buf(&mut s, size - 10, &mut [0; 11]).unwrap_err();
        assert!(e.to_string().contains("outside"), "{e}");
    }

    #[test]
    fn a_mapped_file_is_read_with_the_requests_and_bytes_of_a_copying_cache() {
        let f = crate::seek::mapping::tests::TempFile::new("mapped-stream", (4 << 20) + 12_345);
        let size = f.bytes.len() as u64;
        let mut reads = built_in("sequential", size, 4096);
        for pattern in ["forward", "backward", "parquet"] {
            reads.extend(built_in(pattern, size, 0));
        }
        let mut state = 11u64;
        for _ in 0..200 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let offset = (state >> 20) % size;
            let len = ((state >> 7) % 20_000).clamp(1, size - offset);
            reads.push(Read { offset, len });
        }
        let odd_blocks = StreamConfig {
            block_size: 5000,
            ..StreamConfig::local()
        };
        for (config, mapped) in [
            (StreamConfig::local(), true),
            (StreamConfig::default(), true),
            (odd_blocks, false),
        ] {
            let file = crate::seek::file::FileSource::open(&f.path, size).unwrap();
            let mut from_file = SeekableStream::new(Box::new(file), config.clone());
            assert_eq!(from_file.cache().mapping().is_some(), mapped, "{config:?}");
            let got = run(&mut from_file, &f.bytes, &reads);
            let want = run(&mut stream(&f.bytes, config.clone()), &f.bytes, &reads);
            assert_eq!(got, want, "{config:?}");
        }
    }

    /// A sink like a shot's ring: a small buffer reused in a circle, each piece checked
    /// against `data` from `at` on as it is filled.
    struct Ring<'a> {
        buf: Vec<u8>,
        written: usize,
        data: &'a [u8],
        at: usize,
    }

    impl Sink for Ring<'_> {
        fn space(&mut self, max: usize) -> &mut [u8] {
            let i = self.written % self.buf.len();
            let end = self.buf.len().min(i + max);
            &mut self.buf[i..end]
        }

        fn advance(&mut self, n: usize) {
            let i = self.written % self.buf.len();
            assert!(
                self.buf[i..i + n] == self.data[self.at..self.at + n],
                "{n} bytes at {}",
                self.at
            );
            self.written += n;
            self.at += n;
        }
    }

    #[test]
    fn every_client_returns_the_right_bytes_across_blocks_and_at_the_end() {
        let f = crate::seek::mapping::tests::TempFile::new("straddles", (2 << 20) + 4097);
        let (data, size) = (&f.bytes, f.bytes.len() as u64);
        let block = StreamConfig::local().block_size;
        for read_size in [1, 4095, 4096, 4097, block + 1, MIB] {
            let mut reads = built_in("sequential", size, read_size);
            for pattern in ["forward", "backward", "parquet"] {
                reads.extend(built_in(pattern, size, read_size));
            }
            // Across each of the first blocks' ends, and up to the object's last byte.
            for b in 1..8 {
                let offset = (b * block).saturating_sub(read_size / 2 + 1);
                reads.push(Read {
                    offset,
                    len: read_size.min(size - offset),
                });
            }
            reads.push(Read {
                offset: size - read_size.min(size),
                len: read_size.min(size),
            });
            reads.push(Read {
                offset: size - 1,
                len: 1,
            });
            let file = || Box::new(crate::seek::file::FileSource::open(&f.path, size).unwrap());
            let clients: [(&str, Box<dyn Reader>); 3] = [
                ("plain", Box::new(Plain::new(file()))),
                (
                    "stream, mapped",
                    Box::new(SeekableStream::new(file(), StreamConfig::local())),
                ),
                (
                    "stream, copied",
                    Box::new(stream(data, StreamConfig::local())),
                ),
            ];
            for (name, mut client) in clients {
                for _ in 0..2 {
                    client.start();
                    for r in &reads {
                        let mut ring = Ring {
                            buf: vec![0; 64 << 10],
                            written: 0,
                            data,
                            at: r.offset as usize,
                        };
                        client.read(r.offset, r.len, &mut ring).unwrap();
                        assert_eq!(
                            ring.at as u64,
                            r.offset + r.len,
                            "{name}, {read_size}-byte reads, {r:?}"
                        );
                    }
                }
                let e = read_buf(client.as_mut(), size - 1, &mut [0; 2]).unwrap_err();
                assert!(e.to_string().contains("outside"), "{name}: {e}");
            }
        }
    }

    #[test]
    fn knobs_that_do_not_fit_are_usage_errors() {
        StreamConfig::default().validate().unwrap();
        for (config, flag) in [
            (
                StreamConfig {
                    cache_size: 1000,
                    ..Default::default()
                },
                "--cache-size",
            ),
            (
                StreamConfig {
                    readahead_min: 8 << 20,
                    ..Default::default()
                },
                "--readahead-min",
            ),
            (
                StreamConfig {
                    readahead_max: 16 << 20,
                    ..Default::default()
                },
                "--readahead-max",
            ),
            (
                StreamConfig {
                    block_size: 0,
                    ..Default::default()
                },
                "--block-size",
            ),
        ] {
            let e = config.validate().unwrap_err();
            assert!(e.to_string().starts_with(flag), "{e}");
            assert_eq!(e.exit_code(), 2);
        }
    }
}
