//! Where the objects live, as `--source` names them (`file:DIR`, `http://HOST:PORT/PREFIX/`,
//! `s3://BUCKET/PREFIX/`), and opening an object there as a `Source`. Above every kind of
//! source, so that they need not know of each other.

use super::file::FileSource;
use super::http::HttpSource;
use super::s3::S3Objects;
use super::source::Source;
use crate::net::http::{Origin, Url};
use crate::s3::{credentials, Addressing, Location};
use crate::util::error::{Error, Result};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `s3://BUCKET/PREFIX/`, and once the settings are read, how to reach it.
#[derive(Clone)]
pub struct S3Place {
    pub location: Location,
    pub objects: Option<Arc<S3Objects>>,
}

impl PartialEq for S3Place {
    fn eq(&self, other: &S3Place) -> bool {
        self.location == other.location
    }
}

impl Eq for S3Place {}

impl fmt::Debug for S3Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S3Place({})", self.location)
    }
}

/// Where the objects live, as `--source` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// `file:DIR`: local files read with pread.
    File(PathBuf),
    /// `http://HOST:PORT/PREFIX/`: ranged GETs.
    Http(Url),
    /// `s3://BUCKET/PREFIX/`: signed ranged GETs.
    S3(S3Place),
}

impl SourceSpec {
    /// Parses `file:DIR`, a bare directory, `http://HOST[:PORT]/PREFIX/` or
    /// `s3://BUCKET/PREFIX/`.
    pub fn parse(s: &str) -> std::result::Result<SourceSpec, String> {
        if s.starts_with("s3://") {
            return Location::parse(s).map(SourceSpec::s3);
        }
        if let Some(dir) = s.strip_prefix("file:") {
            if dir.is_empty() {
                return Err(format!("invalid source '{s}' (expected file:DIR)"));
            }
            return Ok(SourceSpec::File(PathBuf::from(dir)));
        }
        if s.contains("://") {
            return Url::parse(s).map(SourceSpec::Http);
        }
        if let Some(host) = looks_remote(s) {
            return Err(format!(
                "source '{s}' has no scheme but looks like a server ({host}): did you mean \
                 http://{s}? (a local directory of that name: file:{s} or ./{s})"
            ));
        }
        Ok(SourceSpec::File(PathBuf::from(s)))
    }

    /// S3 objects at `location`, their settings not read yet.
    pub fn s3(location: Location) -> SourceSpec {
        SourceSpec::S3(S3Place {
            location,
            objects: None,
        })
    }

    /// The source with what it takes to reach it: for S3, the settings of the
    /// environment `env` names (`--no-sign`, `--addressing`), read once, before anything
    /// runs.
    pub fn resolve(
        self,
        env: &dyn Fn(&str) -> Option<String>,
        no_sign: bool,
        addressing: Option<Addressing>,
    ) -> Result<SourceSpec> {
        match self {
            SourceSpec::S3(S3Place { location, .. }) => {
                let settings = super::s3::prepare(credentials::resolve(env, no_sign)?)?;
                let objects = S3Objects::new(location.clone(), settings, addressing)?;
                Ok(SourceSpec::S3(S3Place {
                    location,
                    objects: Some(Arc::new(objects)),
                }))
            }
            other => Ok(other),
        }
    }

    /// The source as the reports name it: `file:DIR` or the URL.
    pub fn label(&self) -> String {
        match self {
            SourceSpec::File(dir) => format!("file:{}", dir.display()),
            SourceSpec::Http(url) => url.to_string(),
            SourceSpec::S3(place) => place.location.to_string(),
        }
    }

    /// How to reach the objects of a resolved S3 source; None for other sources.
    pub fn s3_objects(&self) -> Option<&Arc<S3Objects>> {
        match self {
            SourceSpec::S3(S3Place {
                objects: Some(objects),
                ..
            }) => Some(objects),
            _ => None,
        }
    }

    /// Whether reads go over the network (the stream's defaults differ).
    pub fn is_remote(&self) -> bool {
        !matches!(self, SourceSpec::File(_))
    }

    /// The HTTP origin of a remote source, and the command that makes its objects.
    pub(crate) fn origin(&self) -> Result<(Arc<dyn Origin>, String)> {
        match self {
            SourceSpec::File(_) => Err(Error::failed("a file source has no HTTP origin")),
            SourceSpec::Http(url) => {
                Ok((Arc::new(url.clone()), format!("bb-seek gen --dest {url}")))
            }
            SourceSpec::S3(S3Place {
                objects: Some(o), ..
            }) => Ok((o.clone(), o.gen_command())),
            SourceSpec::S3(S3Place { location, .. }) => Err(Error::failed(format!(
                "{location}: the S3 settings were not read before the run"
            ))),
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
        if let SourceSpec::File(dir) = self {
            return Ok(Box::new(FileSource::open(&dir.join(name), size)?));
        }
        let (origin, gen) = self.origin()?;
        Ok(Box::new(HttpSource::open(
            origin,
            name,
            size,
            request_timeout,
            &gen,
        )?))
    }
}

/// Parses a comma-separated list of sources.
pub fn parse_source_list(s: &str) -> std::result::Result<Vec<SourceSpec>, String> {
    crate::harness::cli::parse_list(s, SourceSpec::parse)
}

/// The server a bare source with a forgotten scheme names, if it looks like one: its first
/// part is `HOST:PORT` (`nas.local:8080`), or a host name with a dot (`nas.local/objects`)
/// where no such local directory exists. `./X` and `/X` are always directories.
fn looks_remote(s: &str) -> Option<String> {
    if s.starts_with('.') || s.starts_with('/') {
        return None;
    }
    let first = s.split('/').next().unwrap_or(s);
    let host_port = first.rsplit_once(':').is_some_and(|(h, p)| {
        !h.is_empty() && !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())
    });
    let host_name = first.contains('.')
        && first
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && s.contains('/')
        && !std::path::Path::new(first).exists();
    (host_port || host_name).then(|| first.to_string())
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
        // A forgotten scheme is refused with the URL it probably meant.
        for forgot in [
            "nas.local:8080",
            "nas.local:8080/objects/",
            "nas.local/objects",
        ] {
            let e = SourceSpec::parse(forgot).unwrap_err();
            assert!(e.contains(&format!("did you mean http://{forgot}?")), "{e}");
        }
        // Directories stay directories, however named.
        for dir in [
            "data",
            "./nas.local:8080",
            "/srv/nas.local/objects",
            "src/seek",
        ] {
            assert_eq!(SourceSpec::parse(dir), Ok(SourceSpec::File(dir.into())));
        }
        assert_eq!(
            SourceSpec::parse("file:nas.local:8080"),
            Ok(SourceSpec::File("nas.local:8080".into()))
        );
        let http = SourceSpec::parse("http://127.0.0.1:8080/objects/").unwrap();
        assert_eq!(http.label(), "http://127.0.0.1:8080/objects/");
        // Refused unless built with TLS (src/net/http/url.rs checks both builds).
        assert_eq!(
            SourceSpec::parse("https://x/").is_ok(),
            cfg!(feature = "tls")
        );
        assert_eq!(parse_source_list("file:a,file:b").unwrap().len(), 2);
        let s3 = SourceSpec::parse("s3://bench/runs").unwrap();
        assert_eq!(s3.label(), "s3://bench/runs/");
        assert!(s3.is_remote());
        assert!(SourceSpec::parse("s3://x/")
            .unwrap_err()
            .contains("bucket name"));
    }
}
