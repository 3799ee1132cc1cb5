//! The positioned-read source both clients read through (local files with pread, or an
//! HTTP server with ranged GETs, see [`super::file`] and [`super::http`]). Every read of a
//! source is one request (one pread, one GET), counted with its bytes, so read
//! amplification is measured the same way for both.

use crate::error::{Error, Result};

/// An object that can be read at any offset.
pub trait Source {
    /// The object's size in bytes.
    fn size(&self) -> u64;

    /// Fills `bufs`, in order, with the bytes from `offset` on: exactly their total length
    /// (a short object is an error), in one request.
    fn read_at(&mut self, offset: u64, bufs: &mut [&mut [u8]]) -> Result<()>;
}

/// Requests made of a source and the bytes they fetched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FetchCounters {
    pub requests: u64,
    pub bytes: u64,
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
        self.counters
    }

    pub fn size(&self) -> u64 {
        self.inner.size()
    }

    pub fn read_at(&mut self, offset: u64, bufs: &mut [&mut [u8]]) -> Result<()> {
        let total: u64 = bufs.iter().map(|b| b.len() as u64).sum();
        read_end(offset, total, self.size())?;
        self.counters.requests += 1;
        self.counters.bytes += total;
        self.inner.read_at(offset, bufs)
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
            let mut at = offset as usize;
            for b in bufs.iter_mut() {
                b.copy_from_slice(&self.0[at..at + b.len()]);
                at += b.len();
            }
            Ok(())
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
                bytes: 5
            }
        );
    }
}
