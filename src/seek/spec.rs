//! Where the objects live, as `--source` names them (`file:DIR`, `http://HOST:PORT/PREFIX/`,
//! `s3://BUCKET/PREFIX/`), or one object as `--object` does (`s3://BUCKET/KEY`, …), and
//! opening an object there as a `Source`. Above every kind of
//! source, so that they need not know of each other.

use super::data::Object;
use super::file::FileSource;
use super::http::HttpSource;
use super::s3::S3Objects;
use super::source::Source;
use crate::net::http::{Origin, Url};
use crate::s3::{credentials, Addressing, Location, S3Settings};
use crate::util::error::{Error, Result};
use crate::util::format::printable;
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
                return Err(format!(
                    "invalid source '{}' (expected file:DIR)",
                    printable(s)
                ));
            }
            return Ok(SourceSpec::File(PathBuf::from(dir)));
        }
        if s.contains("://") {
            return Url::parse(s).map(SourceSpec::Http);
        }
        if looks_remote(s).is_some() {
            let s = printable(s);
            return Err(format!(
                "source '{s}' has no scheme but looks like a server: did you mean \
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
        let mut resolved = resolve_all(vec![self], env, no_sign, addressing)?;
        Ok(resolved.remove(0))
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

    /// Opens `object` at this source; each HTTP request may take `request_timeout`. Found
    /// otherwise than the run expects it, a generated object names the `gen` that makes
    /// it; an existing one (`--object`) says it changed since the run began.
    pub fn open(&self, object: &Object, request_timeout: Duration) -> Result<Box<dyn Source>> {
        if let SourceSpec::File(dir) = self {
            return Ok(Box::new(FileSource::open_object(
                &dir.join(&object.name),
                object,
            )?));
        }
        let (origin, gen) = self.origin()?;
        let gen = object.generated().then_some(gen.as_str());
        Ok(Box::new(HttpSource::open(
            origin,
            &object.name,
            object.size,
            request_timeout,
            gen,
        )?))
    }
}

/// Every source with what it takes to reach it ([`SourceSpec::resolve`]), S3's settings
/// read (a credential_process run, a role assumed) once for all of them.
pub fn resolve_all(
    specs: Vec<SourceSpec>,
    env: &dyn Fn(&str) -> Option<String>,
    no_sign: bool,
    addressing: Option<Addressing>,
) -> Result<Vec<SourceSpec>> {
    let mut settings: Option<S3Settings> = None;
    specs
        .into_iter()
        .map(|spec| match spec {
            SourceSpec::S3(S3Place { location, .. }) => {
                let ready = match &settings {
                    Some(s) => s.clone(),
                    None => settings
                        .insert(super::s3::prepare(credentials::resolve(env, no_sign)?)?)
                        .clone(),
                };
                let objects = S3Objects::new(location.clone(), ready, addressing)?;
                Ok(SourceSpec::S3(S3Place {
                    location,
                    objects: Some(Arc::new(objects)),
                }))
            }
            other => Ok(other),
        })
        .collect()
}

/// Parses a comma-separated list of sources (`--source`), refusing one that names an
/// object: `--object` measures that.
pub fn parse_source_list(s: &str) -> std::result::Result<Vec<SourceSpec>, String> {
    crate::harness::cli::parse_list(s, |s| {
        if let Some(name) = names_an_object(s) {
            return Err(format!(
                "'{}' names an object ({}), not a place for bb-seek's own: to measure it, give \
                 --object {0} (a prefix whose name has a dot: end it with '/')",
                printable(s),
                printable(name),
            ));
        }
        SourceSpec::parse(s)
    })
}

/// One existing object, as `--object` names it: the place it is in (a directory, a URL
/// prefix, a bucket and the key's prefix), its name there, and how reports name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectSpec {
    pub place: SourceSpec,
    pub name: String,
    /// `s3://BUCKET/KEY`, `http://HOST:PORT/PATH/NAME` or `file:PATH`.
    pub label: String,
}

impl ObjectSpec {
    /// Parses `s3://BUCKET/KEY`, `http(s)://HOST[:PORT]/PATH/NAME`, `file:PATH` or a bare
    /// path (a file): never a prefix or a directory, which name no object.
    pub fn parse(s: &str) -> std::result::Result<ObjectSpec, String> {
        let prefix_only = |what: &str| {
            format!(
                "'{}' names {what}, not an object: give the object's whole name \
                 (--source takes the place of bb-seek's own objects)",
                printable(s)
            )
        };
        if let Some(rest) = s.strip_prefix("s3://") {
            let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
            // The key as it is (S3 keys are opaque: `a//b` and `/a` are keys of their own):
            // its place is everything up to its last `/`, that `/` included.
            let (prefix, name) = key.split_at(key.rfind('/').map_or(0, |i| i + 1));
            if name.is_empty() {
                return Err(prefix_only("a bucket or a prefix"));
            }
            if name.chars().any(char::is_control) {
                return Err(format!(
                    "'{}': the key holds a control character (CR, LF, ESC or another)",
                    printable(s)
                ));
            }
            let location = Location::for_key(bucket, prefix)
                .map_err(|e| format!("'{}': {e}", printable(s)))?;
            return Ok(ObjectSpec {
                label: format!("s3://{}/{}", location.bucket, location.key(name)),
                place: SourceSpec::s3(location),
                name: name.to_string(),
            });
        }
        if let Some((scheme, rest)) = s.split_once("://") {
            if scheme == "file" {
                let path = rest.strip_prefix("localhost").unwrap_or(rest);
                let instead = match path.starts_with('/') {
                    true => format!(": did you mean file:{}?", printable(path)),
                    false => String::new(),
                };
                return Err(format!(
                    "'{}': --object takes a file as file:PATH or a bare path{instead} {OBJECT_FORMS}",
                    printable(s)
                ));
            }
            if !matches!(scheme, "http" | "https") {
                return Err(format!("invalid URL '{}' {OBJECT_FORMS}", printable(s)));
            }
            if rest.contains(['?', '#']) {
                return Err(format!(
                    "'{}' has a query string or a fragment (a pre-signed URL?), which --object \
                     does not take: it signs its own requests to s3://BUCKET/KEY, and reads \
                     http(s)://HOST:PORT/PATH/NAME as it is {OBJECT_FORMS}",
                    printable(s)
                ));
            }
            // Checked whole (its scheme, host, port and characters), then split.
            Url::parse(s).map_err(|e| e.replace(SOURCE_FORMS, OBJECT_FORMS))?;
            let after = &s[s.find("://").map_or(0, |i| i + 3)..];
            let path = after.find('/').map_or("", |i| &after[i..]);
            let (_, name) = path.rsplit_once('/').unwrap_or(("", ""));
            if name.is_empty() {
                return Err(prefix_only("a server's directory"));
            }
            let url = Url::parse(&s[..s.len() - name.len()])
                .map_err(|e| e.replace(SOURCE_FORMS, OBJECT_FORMS))?;
            return Ok(ObjectSpec {
                label: url.object(name),
                place: SourceSpec::Http(url),
                name: name.to_string(),
            });
        }
        let path = match s.strip_prefix("file:") {
            Some(path) => path,
            None => {
                if looks_remote(s).is_some() {
                    return Err(format!(
                        "object '{}' has no scheme but looks like a server's: did you \
                         mean http://{0}? (a local file of that name: file:{0} or ./{0})",
                        printable(s),
                    ));
                }
                s
            }
        };
        let file = std::path::Path::new(path);
        // `dir/.` is the directory itself, though file_name() reads it as `dir`.
        let name = match file.file_name().and_then(|n| n.to_str()) {
            Some(name) if !path.ends_with('/') && !path.ends_with("/.") => name,
            _ => return Err(prefix_only("a directory")),
        };
        if path.chars().any(char::is_control) {
            return Err(format!(
                "'{}': the path holds a control character",
                printable(s)
            ));
        }
        let dir = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // `//x/k` is `/x/k`; as `file://x/k` its label would read as a URL of host `x`.
        let path = match path.starts_with("//") {
            true => format!("/{}", path.trim_start_matches('/')),
            false => path.to_string(),
        };
        Ok(ObjectSpec {
            place: SourceSpec::File(dir),
            name: name.to_string(),
            label: format!("file:{path}"),
        })
    }
}

/// What `--object` takes, for its refusals.
const OBJECT_FORMS: &str = "(expected s3://BUCKET/KEY, http(s)://HOST:PORT/PATH/NAME or file:PATH)";

/// What [`Url::parse`]'s refusals say it expected: a `--source`'s prefix.
const SOURCE_FORMS: &str = "(expected http://HOST:PORT/PREFIX/)";

/// The object's name a `--source` of S3 or HTTP ends with, if it ends with one: its last
/// part, not followed by `/`, has an extension (`orders.parquet`, `random-1mb.txt`: a dot
/// and then letters and digits, at least one letter), the natural first guess of someone
/// who wants an object measured. A prefix whose name has a dot ends with `/`.
fn names_an_object(s: &str) -> Option<&str> {
    let rest = s
        .strip_prefix("s3://")
        .or_else(|| s.strip_prefix("http://"))
        .or_else(|| s.strip_prefix("https://"))?;
    let (_, path) = rest.split_once('/')?;
    if path.is_empty() || path.ends_with('/') {
        return None;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, extension) = name.rsplit_once('.')?;
    let is_extension = !stem.is_empty()
        && extension.bytes().all(|b| b.is_ascii_alphanumeric())
        && extension.bytes().any(|b| b.is_ascii_alphabetic());
    is_extension.then_some(name)
}

/// Parses a comma-separated list of existing objects.
pub fn parse_object_list(s: &str) -> std::result::Result<Vec<ObjectSpec>, String> {
    crate::harness::cli::parse_list(s, ObjectSpec::parse)
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

    #[test]
    fn object_specs_name_one_object_never_a_prefix() {
        let o = ObjectSpec::parse("s3://bench/other/table.parquet").unwrap();
        assert_eq!(o.label, "s3://bench/other/table.parquet");
        assert_eq!(o.name, "table.parquet");
        assert_eq!(o.place.label(), "s3://bench/other/");
        let o = ObjectSpec::parse("s3://bench/top.log").unwrap();
        assert_eq!(
            (o.place.label().as_str(), o.name.as_str()),
            ("s3://bench/", "top.log")
        );
        let o = ObjectSpec::parse("http://127.0.0.1:8080/a/b/disk.img").unwrap();
        assert_eq!(o.label, "http://127.0.0.1:8080/a/b/disk.img");
        assert_eq!(o.place.label(), "http://127.0.0.1:8080/a/b/");
        assert_eq!(o.name, "disk.img");
        for (text, dir, name) in [
            ("file:./disk.img", "./", "disk.img"),
            ("disk.img", ".", "disk.img"),
            ("/mnt/usb/x.parquet", "/mnt/usb", "x.parquet"),
            ("file:nas.local:8080", ".", "nas.local:8080"),
        ] {
            let o = ObjectSpec::parse(text).unwrap();
            assert_eq!(
                o.place,
                SourceSpec::File(dir.trim_end_matches('/').into()),
                "{text}"
            );
            assert_eq!(o.name, name, "{text}");
        }
        assert_eq!(
            ObjectSpec::parse("disk.img").unwrap().label,
            "file:disk.img"
        );
        // A path from the root with its slashes doubled: a file's label, not a URL's, that
        // reads back as the same object.
        let o = ObjectSpec::parse("//sky/k").unwrap();
        assert_eq!((o.label.as_str(), o.name.as_str()), ("file:/sky/k", "k"));
        assert_eq!(ObjectSpec::parse(&o.label).unwrap(), o);
        for (bad, needle) in [
            ("s3://bench/other/", "not an object"),
            ("s3://bench", "not an object"),
            ("s3://x/key", "bucket name"),
            ("s3://bench/a\nb", "control character"),
            ("http://127.0.0.1:8080/objects/", "not an object"),
            ("http://127.0.0.1:8080", "not an object"),
            ("http://h/a b", "no space"),
            ("ftp://h/x", "invalid URL"),
            ("file:", "not an object"),
            ("file:/tmp/", "not an object"),
            ("n/.", "not an object"),
            ("file:/tmp/.", "not an object"),
            (
                "nas.local:8080/x.img",
                "did you mean http://nas.local:8080/x.img?",
            ),
            ("./x\x1b[2J", "control character"),
        ] {
            let e = ObjectSpec::parse(bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
            assert!(!e.contains(['\n', '\x1b']), "{bad}: {e}");
        }
        assert_eq!(parse_object_list("a.img,s3://bench/k").unwrap().len(), 2);
    }

    #[test]
    fn an_s3_key_is_kept_exactly_as_given() {
        for (text, key, place) in [
            ("s3://bench/p/a//b.bin", "p/a//b.bin", "s3://bench/p/a//"),
            ("s3://bench//top.bin", "/top.bin", "s3://bench//"),
            (
                "s3://bench/a///b//c.parquet",
                "a///b//c.parquet",
                "s3://bench/a///b//",
            ),
            ("s3://bench/k", "k", "s3://bench/"),
        ] {
            let o = ObjectSpec::parse(text).unwrap();
            assert_eq!(o.label, text);
            assert_eq!(o.place.label(), place, "{text}");
            let SourceSpec::S3(p) = &o.place else {
                panic!("{text}: not S3")
            };
            assert_eq!(p.location.key(&o.name), key, "{text}");
        }
    }

    #[test]
    fn an_object_url_it_cannot_take_is_refused_with_its_own_forms() {
        let forms = "(expected s3://BUCKET/KEY, http(s)://HOST:PORT/PATH/NAME or file:PATH)";
        for (bad, needle) in [
            (
                "http://127.0.0.1:9000/bench/k.parquet?X-Amz-Signature=abc&X-Amz-Expires=60",
                "has a query string or a fragment (a pre-signed URL?)",
            ),
            ("http://h/a.log#part", "a query string or a fragment"),
            ("file:///tmp/disk.img", "did you mean file:/tmp/disk.img?"),
            (
                "file://localhost/tmp/disk.img",
                "did you mean file:/tmp/disk.img?",
            ),
            ("file://host/disk.img", "file:PATH or a bare path"),
            ("ftp://h/x", "invalid URL 'ftp://h/x'"),
            ("http://h:port/x", "invalid URL"),
        ] {
            let e = ObjectSpec::parse(bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
            assert!(e.ends_with(forms), "{bad}: {e}");
            assert!(!e.contains("PREFIX"), "{bad}: {e}");
        }
        // An S3 key may hold a '?': it is the key's, encoded when sent.
        assert_eq!(ObjectSpec::parse("s3://bench/a?b").unwrap().name, "a?b");
    }

    #[test]
    fn a_name_that_looks_like_a_server_is_quoted_escaped() {
        let e = ObjectSpec::parse("x\u{1b}[2J:8080/a.img").unwrap_err();
        assert!(!e.contains('\u{1b}') && e.contains("\\u{1b}[2J"), "{e}");
        for bad in ["x\u{1b}[2J:8080", "file:"] {
            let e = SourceSpec::parse(bad).map(|_| ()).unwrap_err();
            assert!(!e.chars().any(char::is_control), "{e}");
        }
    }

    #[test]
    fn a_source_naming_an_object_is_refused_with_the_object_flag() {
        for (bad, name) in [
            ("s3://bench/tables/orders.parquet", "orders.parquet"),
            ("s3://bench/random-1mb.txt", "random-1mb.txt"),
            ("http://127.0.0.1:8080/logs/app.log", "app.log"),
        ] {
            let e = parse_source_list(bad).unwrap_err();
            assert!(
                e.contains(&format!("names an object ({name})")),
                "{bad}: {e}"
            );
            assert!(e.contains(&format!("give --object {bad}")), "{bad}: {e}");
            assert_eq!(e.lines().count(), 1);
        }
        // Prefixes stay prefixes: a trailing '/', no extension, or one of digits only.
        for good in [
            "s3://bench/tables/orders.parquet/",
            "s3://bench/runs",
            "s3://bench/v1.2",
            "s3://bench",
            "http://127.0.0.1:8080/bench",
            "http://nas.local:8080/",
            "file:./x.parquet",
        ] {
            parse_source_list(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        // gen --dest names a place to put objects in, whatever its name.
        assert!(SourceSpec::parse("s3://bench/tables/orders.parquet").is_ok());
    }
}
