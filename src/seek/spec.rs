//! Where the objects live, as `--source` names them (`file:DIR`, `http://HOST:PORT/PREFIX/`),
//! and opening an object there as a `Source`. Above both kinds of source, so that they
//! need not know of each other.

use super::file::FileSource;
use super::http::{HttpSource, Url};
use super::source::Source;
use crate::error::Result;
use std::path::PathBuf;
use std::time::Duration;

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

    /// Opens object `name` of `size` bytes at this source; each HTTP request may take
    /// `request_timeout`.
    pub fn open(
        &self,
        name: &str,
        size: u64,
        request_timeout: Duration,
    ) -> Result<Box<dyn Source>> {
        match self {
            SourceSpec::File(dir) => Ok(Box::new(FileSource::open(&dir.join(name), size)?)),
            SourceSpec::Http(url) => Ok(Box::new(HttpSource::open(
                url,
                name,
                size,
                request_timeout,
            )?)),
        }
    }
}

/// Parses a comma-separated list of sources.
pub fn parse_source_list(s: &str) -> std::result::Result<Vec<SourceSpec>, String> {
    crate::harness::cli::parse_list(s, SourceSpec::parse)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // Refused unless built with TLS (src/seek/http.rs checks both builds).
        assert_eq!(
            SourceSpec::parse("https://x/").is_ok(),
            cfg!(feature = "tls")
        );
        assert_eq!(parse_source_list("file:a,file:b").unwrap().len(), 2);
    }
}
