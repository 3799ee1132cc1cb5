//! The positioned-read source both clients read through (local files with pread, or an
//! HTTP server with ranged GETs, see [`super::file`] and [`super::http`]), and the sinks
//! reads are delivered into (net's [`Sink`], which the HTTP client's bodies fill too). Every read of a source is one request (one pread, one GET),
//! counted with its bytes, so read amplification is measured the same way for both; a read
//! larger than the memory its reader holds is delivered piece by piece into a [`Sink`]
//! (still one GET; for a file, a pread per piece).

pub use crate::net::sink::{Buffers, Sink};
use crate::seek::mapping::Mapping;
use crate::util::error::{Error, Result};

/// An object that can be read at any offset.
pub trait Source {
    /// The object's size in bytes.
    fn size(&self) -> u64;

    /// Requests sent again after a server's transient failure (HTTP's retries).
    fn retries(&self) -> u64 {
        0
    }

    /// The object mapped into memory, for a reader that can serve from it without a copy
    /// (fetching with [`Metered::fetch_mapped`]); None where it cannot be (all but local files).
    fn map(&self) -> Option<Mapping> {
        None
    }

    /// Fills `bufs`, in order, with the bytes from `offset` on: exactly their total length
    /// (a short object is an error), in one request.
    fn read_at(&mut self, offset: u64, bufs: &mut [&mut [u8]]) -> Result<()>;

    /// Reads `len` bytes from `offset`, in one request, into the pieces of memory `sink`
    /// hands out in turn. Here a `read_at` per piece: as few as the sink allows.
    fn read_into(&mut self, offset: u64, len: u64, sink: &mut dyn Sink) -> Result<()> {
        let end = offset + len;
        let mut at = offset;
        while at < end {
            let piece = sink.space(usize::try_from(end - at).unwrap_or(usize::MAX));
            let n = piece.len();
            self.read_at(at, &mut [piece])?;
            sink.advance(n);
            at += n as u64;
        }
        Ok(())
    }
}

/// A sink that hands each piece to `feed` as soon as it is filled (to a hash, say),
/// reusing one buffer: what an untimed pass over an object reads into.
pub(crate) struct Feeding<'a> {
    pub buf: &'a mut [u8],
    pub feed: &'a mut dyn FnMut(&[u8]),
}

impl Sink for Feeding<'_> {
    fn space(&mut self, max: usize) -> &mut [u8] {
        let n = max.min(self.buf.len());
        &mut self.buf[..n]
    }

    fn advance(&mut self, n: usize) {
        (self.feed)(&self.buf[..n]);
    }
}

/// Requests made of a source and the bytes they fetched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FetchCounters {
    pub requests: u64,
    pub bytes: u64,
    /// Requests sent again after a transient failure (the source's own count).
    pub retries: u64,
}

/// Where a read of `len` bytes at `offset` of an object of `size` bytes ends; an error when
/// it falls outside the object.
pub fn read_end(offset: u64, len: u64, size: u64) -> Result<u64> {
    offset
        .checked_add(len)
        .filter(|&e| e <= size)
        .ok_or_else(|| {
            Error::failed(format!(
                "a read of {len} bytes at {offset} falls outside the {size}-byte object"
            ))
        })
}

/// A source that counts its requests and bytes.
pub struct Metered {
    inner: Box<dyn Source>,
    counters: FetchCounters,
}

impl Metered {
    pub fn new(inner: Box<dyn Source>) -> Metered {
        Metered {
            inner,
            counters: FetchCounters::default(),
        }
    }

    pub fn counters(&self) -> FetchCounters {
        FetchCounters {
            retries: self.inner.retries(),
            ..self.counters
        }
    }

    pub fn size(&self) -> u64 {
        self.inner.size()
    }

    pub fn read_at(&mut self, offset: u64, bufs: &mut [&mut [u8]]) -> Result<()> {
        let total: u64 = bufs.iter().map(|b| b.len() as u64).sum();
        self.count(offset, total)?;
        self.inner.read_at(offset, bufs)
    }

    pub fn read_into(&mut self, offset: u64, len: u64, sink: &mut dyn Sink) -> Result<()> {
        self.count(offset, len)?;
        self.inner.read_into(offset, len, sink)
    }

    /// The object mapped into memory, if the source can be (see [`Source::map`]).
    pub fn map(&self) -> Option<Mapping> {
        self.inner.map()
    }

    /// A fetch of `len` bytes from `offset` served from this source's mapping, whose pages
    /// mincore found in the page cache: one request, counted like a read of those bytes.
    /// The copies out of them map the pages (a fault maps up to 64 KiB around it, or a
    /// whole large folio): bringing them in first (`MADV_POPULATE_READ`, page by page)
    /// took 31% of a stream's 4 KiB reads (perf), more than the copies.
    pub fn fetch_mapped(&mut self, offset: u64, len: usize) -> Result<()> {
        self.count(offset, len as u64)
    }

    fn count(&mut self, offset: u64, len: u64) -> Result<()> {
        read_end(offset, len, self.size())?;
        self.counters.requests += 1;
        self.counters.bytes += len;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An in-memory source, for the clients' tests.
    pub struct Memory(pub Vec<u8>);

    impl Source for Memory {
        fn size(&self) -> u64 {
            self.0.len() as u64
        }
        fn read_at(&mut self, offset: u64, bufs: &mut [&mut [u8]]) -> Result<()> {
            copy_at(&self.0, offset, bufs);
            Ok(())
        }
    }

    /// Fills `bufs`, in order, with the bytes of `data` from `offset` on.
    pub fn copy_at(data: &[u8], offset: u64, bufs: &mut [&mut [u8]]) {
        let mut at = offset as usize;
        for b in bufs.iter_mut() {
            b.copy_from_slice(&data[at..at + b.len()]);
            at += b.len();
        }
    }

    #[test]
    fn metered_counts_requests_and_bytes_and_refuses_reads_outside() {
        let mut m = Metered::new(Box::new(Memory((0..100).collect())));
        let (mut a, mut b) = ([0u8; 3], [0u8; 2]);
        m.read_at(10, &mut [&mut a, &mut b]).unwrap();
        assert_eq!((a, b), ([10, 11, 12], [13, 14]));
        let e = m.read_at(98, &mut [&mut a]).unwrap_err();
        assert!(e.to_string().contains("outside the 100-byte object"), "{e}");
        assert_eq!(
            m.counters(),
            FetchCounters {
                requests: 1,
                bytes: 5,
                retries: 0
            }
        );
        // A read into a sink of small pieces: one request, every byte where it belongs.
        let (mut a, mut b, mut c) = ([0u8; 7], [0u8; 1], [0u8; 12]);
        let mut bufs: [&mut [u8]; 3] = [&mut a, &mut b, &mut c];
        let mut sink = Buffers::new(&mut bufs);
        m.read_into(50, 20, &mut sink).unwrap();
        assert_eq!(sink.total(), 20);
        assert_eq!((a[0], b[0], c[11]), (50, 57, 69));
        assert_eq!(m.counters().requests, 2);
    }
}
