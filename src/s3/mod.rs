//! S3 for bb-seek: where objects are (`s3://BUCKET/PREFIX/`, or the `BUCKET` and
//! `PREFIX` environment variables as the original benchmark took them), the credentials
//! and settings (`credentials`), the endpoint and its addressing (`endpoint`), AWS
//! Signature Version 4 (`sigv4`), and signed requests ready for an HTTP transport
//! (`request`).

pub mod credentials;
pub mod endpoint;
pub mod ini;
pub mod process;
pub mod request;
pub mod sigv4;
pub mod sts;
pub mod xml;

pub use credentials::S3Settings;
pub use endpoint::{Addressing, Endpoint};
pub use request::{Bucket, HttpRequest, Payload};

use crate::util::format::printable;

/// A bucket and the prefix its objects' keys start with (empty, or ending with `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub bucket: String,
    pub prefix: String,
}

impl Location {
    /// `s3://BUCKET[/PREFIX[/]]`.
    pub fn parse(s: &str) -> Result<Location, String> {
        let rest = s
            .strip_prefix("s3://")
            .ok_or_else(|| format!("invalid S3 location '{s}' (expected s3://BUCKET/PREFIX/)"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        Location::new(bucket, prefix).map_err(|e| format!("'{}': {e}", printable(s)))
    }

    /// From `BUCKET` and `PREFIX`, as the original benchmark read them: `None` when
    /// `BUCKET` is not set.
    pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Option<Result<Location, String>> {
        let bucket = var("BUCKET").filter(|b| !b.is_empty())?;
        let prefix = var("PREFIX").unwrap_or_default();
        Some(Location::new(&bucket, &prefix).map_err(|e| format!("BUCKET and PREFIX: {e}")))
    }

    /// The place of one object's key: `bucket`, and `prefix`, the key up to and with its
    /// last `/` (`p/a//` of `p/a//b.bin`; empty for a key without one), kept exactly as it
    /// is: S3 keys are opaque, so a doubled or a leading `/` is part of the key, never
    /// normalised away (nor in the signature: S3's SigV4 signs the path as it is sent).
    pub fn for_key(bucket: &str, prefix: &str) -> Result<Location, String> {
        Location::check(bucket, prefix)?;
        if !(prefix.is_empty() || prefix.ends_with('/')) {
            return Err(format!(
                "the key's prefix '{}' does not end with '/'",
                printable(prefix)
            ));
        }
        Ok(Location {
            bucket: bucket.to_string(),
            prefix: prefix.to_string(),
        })
    }

    /// A place of objects: a prefix's leading `/`s are dropped and a `/` added at its end,
    /// as `PREFIX=runs` and `s3://bench/runs` mean `runs/`.
    fn new(bucket: &str, prefix: &str) -> Result<Location, String> {
        Location::check(bucket, prefix)?;
        let prefix = prefix.trim_start_matches('/');
        let prefix = if prefix.is_empty() || prefix.ends_with('/') {
            prefix.to_string()
        } else {
            format!("{prefix}/")
        };
        Ok(Location {
            bucket: bucket.to_string(),
            prefix,
        })
    }

    /// A bucket's name within S3's rules, and a prefix without control characters.
    fn check(bucket: &str, prefix: &str) -> Result<(), String> {
        // S3's rules for new buckets, loosened to what older ones may still be called.
        let valid = (3..=255).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
        if !valid {
            return Err(format!(
                "'{}' is not a bucket name (3 or more letters, digits, '.', '-' or '_')",
                printable(bucket)
            ));
        }
        // Keys are encoded in the request line, but printed as they are.
        if prefix.chars().any(char::is_control) {
            return Err("the prefix holds a control character (CR, LF, ESC or another)".into());
        }
        Ok(())
    }

    /// The key of object `name`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_from_urls_and_from_bucket_and_prefix() {
        let l = Location::parse("s3://bench-data/boards/pi4").unwrap();
        assert_eq!(
            (l.bucket.as_str(), l.prefix.as_str()),
            ("bench-data", "boards/pi4/")
        );
        assert_eq!(l.key("random-1mb.txt"), "boards/pi4/random-1mb.txt");
        assert_eq!(l.to_string(), "s3://bench-data/boards/pi4/");
        assert_eq!(Location::parse("s3://bench").unwrap().key("x"), "x");
        assert_eq!(Location::parse("s3://bench/").unwrap().prefix, "");
        for bad in ["http://b/p", "s3://", "s3://a b/", "s3://ab/x", "s3:/bench"] {
            assert!(Location::parse(bad).unwrap_err().contains(bad), "{bad}");
        }
        let env = |b: Option<&str>, p: Option<&str>| {
            let (b, p) = (b.map(String::from), p.map(String::from));
            Location::from_env(&move |k| if k == "BUCKET" { b.clone() } else { p.clone() })
        };
        assert_eq!(env(None, Some("p")), None);
        let l = env(Some("bench"), Some("/runs/1")).unwrap().unwrap();
        assert_eq!((l.bucket.as_str(), l.prefix.as_str()), ("bench", "runs/1/"));
        assert_eq!(env(Some("bench"), None).unwrap().unwrap().prefix, "");
        assert!(env(Some("b"), None)
            .unwrap()
            .unwrap_err()
            .starts_with("BUCKET and PREFIX: "));
        for (b, p) in [
            ("bench\r\nX-Injected: 1", ""),
            ("bench", "runs/\r\nX: 1"),
            ("bench", "\x1b[2J"),
        ] {
            let e = env(Some(b), Some(p)).unwrap().unwrap_err();
            assert!(
                e.starts_with("BUCKET and PREFIX: ") && !e.contains(['\r', '\n', '\x1b']),
                "{e}"
            );
        }
        let e = Location::parse("s3://bench/a\nb").unwrap_err();
        assert!(e.contains("control character") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn an_objects_key_is_kept_exactly_as_given() {
        for (prefix, name, key) in [
            ("p/a//", "b.bin", "p/a//b.bin"),
            ("/", "top.bin", "/top.bin"),
            ("//x///", "y", "//x///y"),
            ("", "k", "k"),
        ] {
            let l = Location::for_key("bench", prefix).unwrap();
            assert_eq!(l.key(name), key);
            assert_eq!(l.to_string(), format!("s3://bench/{prefix}"));
        }
        // A place of objects is still tidied as PREFIX and --source mean it.
        assert_eq!(Location::parse("s3://bench//runs").unwrap().prefix, "runs/");
        assert!(Location::for_key("bench", "a").is_err());
        assert!(Location::for_key("b", "")
            .unwrap_err()
            .contains("bucket name"));
        assert!(Location::for_key("bench", "a\n/").is_err());
    }
}
