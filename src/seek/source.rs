//! The positioned-read source both clients read through: local files with pread, or an
//! HTTP server with ranged GETs. Every read of a source is one request (one pread, one
//! GET), counted with its bytes, so read amplification is measured the same way for both.

use crate::error::{Error, Result};
use crate::seek::http::Url;
use std::path::PathBuf;

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
pub struct Counters {
    pub requests: u64,
    pub bytes: u64,
}

/// A source that counts its requests and bytes.
pub struct Metered {
    inner: Box<dyn Source>,
    counters: Counters,
}

impl Metered {
    pub fn new(inner: Box<dyn Source>) -> Metered {
        Metered {
            inner,
            counters: Counters::default(),
        }
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    pub fn size(&self) -> u64 {
        self.inner.size()
    }

    pub fn read_at(&mut self, offset: u64, bufs: &mut [&mut [u8]]) -> Result<()> {
        let total: u64 = bufs.iter().map(|b| b.len() as u64).sum();
        let end = offset.checked_add(total).filter(|&e| e <= self.size());
        if end.is_none() {
            return Err(Error::failed(format!(
                "a read of {total} bytes at {offset} falls outside the {}-byte object",
                self.size()
            )));
        }
        self.counters.requests += 1;
        self.counters.bytes += total;
        self.inner.read_at(offset, bufs)
    }
}

/// Where the objects live, as `--source` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// `file:DIR`: local files read with pread.
    File(PathBuf),
    /// `http://HOST:PORT/PREFIX/`: ranged GETs.
    Http(Url),
}

impl SourceSpec {
    /// Parses `file:DIR`, a bare directory, or `http://HOST[:PORT]/PREFIX/`.
    pub fn parse(s: &str) -> std::result::Result<SourceSpec, String> {
        if let Some(dir) = s.strip_prefix("file:") {
            if dir.is_empty() {
                return Err(format!("invalid source '{s}' (expected file:DIR)"));
            }
            return Ok(SourceSpec::File(PathBuf::from(dir)));
        }
        if s.contains("://") {
            return Url::parse(s).map(SourceSpec::Http);
        }
        Ok(SourceSpec::File(PathBuf::from(s)))
    }

    /// The source as the reports name it: `file:DIR` or the URL.
    pub fn label(&self) -> String {
        match self {
            SourceSpec::File(dir) => format!("file:{}", dir.display()),
            SourceSpec::Http(url) => url.to_string(),
        }
    }

    /// Opens object `name` of `size` bytes at this source.
    pub fn open(&self, name: &str, size: u64) -> Result<Box<dyn Source>> {
        match self {
            SourceSpec::File(dir) => Ok(Box::new(crate::seek::file::FileSource::open(
                &dir.join(name),
                size,
            )?)),
            SourceSpec::Http(url) => Ok(Box::new(crate::seek::http::HttpSource::open(
                url, name, size,
            )?)),
        }
    }
}

/// Parses a comma-separated list of sources.
pub fn parse_source_list(s: &str) -> std::result::Result<Vec<SourceSpec>, String> {
    crate::cli::parse_list(s, SourceSpec::parse)
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
            Counters {
                requests: 1,
                bytes: 5
            }
        );
    }

    #[test]
    fn source_specs() {
        assert_eq!(
            SourceSpec::parse("file:/data"),
            Ok(SourceSpec::File("/data".into()))
        );
        assert_eq!(
            SourceSpec::parse("./data"),
            Ok(SourceSpec::File("./data".into()))
        );
        assert!(SourceSpec::parse("file:").is_err());
        let http = SourceSpec::parse("http://127.0.0.1:8080/objects/").unwrap();
        assert_eq!(http.label(), "http://127.0.0.1:8080/objects/");
        assert!(SourceSpec::parse("https://x/")
            .unwrap_err()
            .contains("https"));
        assert_eq!(parse_source_list("file:a,file:b").unwrap().len(), 2);
    }
}
