//! Objects bb-seek did not make (`--object`): what their place says of them before a run
//! (the size, and on S3 the ETag and `x-amz-checksum-*` of a HEAD with checksum mode on),
//! and the read of each, whole and untimed, with the plain client, that checks its bytes
//! against those checksums and makes the [`Fingerprint`]s each client's bytes are
//! checked against during the run. A multipart upload's ETag and a composite checksum
//! are of the parts, not of the bytes: they are named as not checked, and the clients'
//! agreement is the check.

use super::client::{Plain, Reader, StreamConfig};
use super::data::{Fingerprint, Fingerprinting, Object};
use super::pattern::Reads;
use super::source::Feeding;
use super::spec::{ObjectSpec, SourceSpec};
use super::workload::held;
use crate::net::http::{Head, HttpClient};
use crate::util::digest::{self, Crc, Md5, Sha1};
use crate::util::error::{Error, Result};
use crate::util::format::printable;
use crate::util::terminal::program_name;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

/// What a request of the check pass reads at most: few requests, each well within the
/// request timeout on a slow link (8 MiB at 1 MB/s).
const PIECE: u64 = 8 << 20;

/// The most characters of a value from outside (an ETag, a checksum) a message quotes.
const QUOTED: usize = 100;

/// A checksum an object's place gives for its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// A single-part S3 object's ETag: the MD5 of its bytes, in hex.
    EtagMd5,
    /// `x-amz-checksum-NAME`, base64 of the digest (a CRC's bytes most significant first).
    Checksum(&'static str),
}

/// S3's full-object checksums, the strongest first.
const CHECKSUMS: [&str; 5] = ["sha256", "sha1", "crc64nvme", "crc32c", "crc32"];

impl Algorithm {
    /// How the `check` param names it: `etag-md5`, `checksum-crc32`.
    pub fn param(&self) -> String {
        match self {
            Algorithm::EtagMd5 => "etag-md5".to_string(),
            Algorithm::Checksum(name) => format!("checksum-{name}"),
        }
    }

    /// How a message names it.
    fn what(&self) -> String {
        match self {
            Algorithm::EtagMd5 => "its ETag (the MD5 of a single-part object)".to_string(),
            Algorithm::Checksum(name) => format!("its x-amz-checksum-{name}"),
        }
    }

    fn hasher(&self) -> Hasher {
        match self {
            Algorithm::EtagMd5 => Hasher::Md5(Md5::default()),
            Algorithm::Checksum("sha256") => Hasher::Sha256(Sha256::new()),
            Algorithm::Checksum("sha1") => Hasher::Sha1(Sha1::default()),
            Algorithm::Checksum("crc64nvme") => Hasher::Crc(Crc::crc64nvme()),
            Algorithm::Checksum("crc32c") => Hasher::Crc(Crc::crc32c()),
            Algorithm::Checksum(_) => Hasher::Crc(Crc::crc32()),
        }
    }
}

/// One digest being made, as its algorithm writes it.
enum Hasher {
    Md5(Md5),
    Sha256(Sha256),
    Sha1(Sha1),
    Crc(Crc),
}

impl Hasher {
    fn update(&mut self, bytes: &[u8]) {
        match self {
            Hasher::Md5(h) => h.update(bytes),
            Hasher::Sha256(h) => h.update(bytes),
            Hasher::Sha1(h) => h.update(bytes),
            Hasher::Crc(h) => h.update(bytes),
        }
    }

    /// The digest as the place writes it: an ETag's hex, a checksum's base64.
    fn finish(self) -> String {
        match self {
            Hasher::Md5(h) => digest::hex(&h.finish()),
            Hasher::Sha256(h) => digest::base64(&h.finalize()),
            Hasher::Sha1(h) => digest::base64(&h.finish()),
            Hasher::Crc(h) => digest::base64(&h.finish()),
        }
    }
}

/// A checksum the place gives: which, and its value as the place wrote it (an ETag's
/// hex in lowercase, without its quotes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub algorithm: Algorithm,
    pub value: String,
}

/// What an object's place says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub size: u64,
    /// The checksums of its bytes that the check pass checks.
    pub claims: Vec<Claim>,
    /// Why a checksum the place gave cannot be checked against the bytes.
    pub unchecked: Vec<String>,
}

impl Stat {
    /// The `check` param: the checksums checked (`etag-md5+checksum-crc32`), or
    /// `clients-agree` where the place gives none, the check every object gets.
    pub fn check(&self) -> String {
        match self.claims.as_slice() {
            [] => "clients-agree".to_string(),
            claims => claims
                .iter()
                .map(|c| c.algorithm.param())
                .collect::<Vec<_>>()
                .join("+"),
        }
    }
}

/// One existing object of a run, its place resolved: what `--object` named, the
/// stream's knobs for it, and what its place said.
#[derive(Clone)]
pub struct Existing {
    pub spec: ObjectSpec,
    pub stream: StreamConfig,
    pub object: Object,
    pub stat: Stat,
}

/// `--object LABEL`, quoted safely, for messages.
fn flag(spec: &ObjectSpec) -> String {
    format!("--object {}", printable(&spec.label))
}

/// A value from outside, for a message: escaped and cut short.
fn quoted(value: &str) -> String {
    crate::util::format::quoted_cut(value, QUOTED)
}

/// What the place of `spec` (resolved) says of its object: a file's size (a regular file
/// only), or a HEAD's (with S3's checksum mode on). A file that is not there or not a
/// file, and an empty object, are bad input (exit 2); a remote refusal is exit 1.
pub fn stat(spec: &ObjectSpec, timeout: Duration) -> Result<Stat> {
    let stat = match &spec.place {
        SourceSpec::File(dir) => {
            let path = dir.join(&spec.name);
            let meta = std::fs::metadata(&path)
                .map_err(|e| Error::usage(format!("{}: {e}", flag(spec))))?;
            if !meta.is_file() {
                return Err(Error::usage(format!(
                    "{}: not a regular file (a directory, a device or a FIFO has no size to read)",
                    flag(spec)
                )));
            }
            Stat {
                size: meta.len(),
                claims: Vec::new(),
                unchecked: Vec::new(),
            }
        }
        place => {
            let (origin, _) = place.origin()?;
            let s3 = place.s3_objects().is_some();
            let mode: &[(&str, &str)] = if s3 {
                &[("x-amz-checksum-mode", "ENABLED")]
            } else {
                &[]
            };
            let mut client = HttpClient::new(origin, timeout);
            let (size, head) = client
                .head(&spec.name, mode)
                .map_err(|e| e.within(flag(spec)))?
                .ok_or_else(|| {
                    Error::failed(format!("{}: the object is not there (404)", flag(spec)))
                })?;
            let (claims, unchecked) = if s3 {
                claims(&head)
            } else {
                (Vec::new(), Vec::new())
            };
            Stat {
                size,
                claims,
                unchecked,
            }
        }
    };
    if stat.size == 0 {
        return Err(Error::usage(format!(
            "{}: the object is empty (0 bytes): there is nothing to read",
            flag(spec)
        )));
    }
    Ok(stat)
}

/// The checksums of an S3 object's bytes that a HEAD's answer gives, and why others it
/// gives are not of its bytes: a multipart upload's ETag (`…-N`), an ETag under KMS or a
/// customer's key, a composite checksum (`…-N`, `x-amz-checksum-type: COMPOSITE`, or any
/// of a multipart object not said to be `FULL_OBJECT`).
pub(crate) fn claims(head: &Head) -> (Vec<Claim>, Vec<String>) {
    let mut claims = Vec::new();
    let mut unchecked = Vec::new();
    let etag = head
        .header("etag")
        .map(|e| e.trim().trim_matches('"').to_ascii_lowercase());
    let parts = etag
        .as_deref()
        .and_then(|e| e.split_once('-'))
        .map(|(_, n)| n.to_string());
    let encrypted = head
        .header("x-amz-server-side-encryption")
        .is_some_and(|v| v.trim().starts_with("aws:kms"))
        || head
            .header("x-amz-server-side-encryption-customer-algorithm")
            .is_some();
    match (&etag, &parts) {
        (None, _) => {}
        (Some(_), Some(n)) => unchecked.push(format!(
            "its ETag is a multipart upload's (of {} parts), not the MD5 of its bytes",
            quoted(n)
        )),
        (Some(_), None) if encrypted => unchecked.push(
            "it is encrypted with KMS or a customer's key: its ETag is not the MD5 of its bytes"
                .to_string(),
        ),
        (Some(e), None) if e.len() == 32 && e.bytes().all(|b| b.is_ascii_hexdigit()) => claims
            .push(Claim {
                algorithm: Algorithm::EtagMd5,
                value: e.clone(),
            }),
        (Some(e), None) => unchecked.push(format!("its ETag ({}) is not an MD5", quoted(e))),
    }
    let kind = head.header("x-amz-checksum-type").map(str::trim);
    let full = kind.is_some_and(|k| k.eq_ignore_ascii_case("FULL_OBJECT"));
    let composite = kind.is_some_and(|k| k.eq_ignore_ascii_case("COMPOSITE"));
    for name in CHECKSUMS {
        let Some(value) = head.header(&format!("x-amz-checksum-{name}")) else {
            continue;
        };
        let value = value.trim();
        if value.contains('-') || composite || (parts.is_some() && !full) {
            unchecked.push(format!(
                "its x-amz-checksum-{name} is a composite of its parts' checksums, not of its bytes"
            ));
        } else {
            claims.push(Claim {
                algorithm: Algorithm::Checksum(name),
                value: value.to_string(),
            });
        }
    }
    (claims, unchecked)
}

/// Reads `e`'s object whole, untimed, with the plain client ([`PIECE`] a request),
/// checks its bytes against every checksum its place gave, and says so on stderr; then
/// the fingerprint of each pattern of `reads`, in order (a sequential one's bytes are the
/// object's in order; the others' are read again, a request a read). Bytes that do not
/// match a checksum are exit 1, naming the object and both values.
pub fn check(e: &Existing, reads: &[Arc<Reads>], timeout: Duration) -> Result<Vec<Fingerprint>> {
    let size = e.object.size;
    let source = e.spec.place.open(&e.object, timeout)?;
    let mut plain = Plain::new(source);
    let mut buf = vec![0; PIECE.min(size) as usize];
    let mut hashers: Vec<Hasher> = e.stat.claims.iter().map(|c| c.algorithm.hasher()).collect();
    // The object's own fingerprint, with the tail each sequential pattern keeps.
    let mut wholes: Vec<(u64, Fingerprinting)> = Vec::new();
    for r in reads
        .iter()
        .filter(|r| matches!(***r, Reads::Sequential { .. }))
    {
        let hold = held(r);
        if wholes.iter().all(|(h, _)| *h != hold) {
            wholes.push((hold, Fingerprinting::new(size, hold)));
        }
    }
    {
        let mut feed = |bytes: &[u8]| {
            for (_, whole) in &mut wholes {
                whole.update(bytes);
            }
            for h in &mut hashers {
                h.update(bytes);
            }
        };
        let mut sink = Feeding {
            buf: &mut buf,
            feed: &mut feed,
        };
        let mut at = 0;
        while at < size {
            let len = PIECE.min(size - at);
            plain.read(at, len, &mut sink)?;
            at += len;
        }
    }
    let requests = plain.counters().requests;
    for (claim, hasher) in e.stat.claims.iter().zip(hashers) {
        let got = hasher.finish();
        if got != claim.value {
            return Err(Error::failed(format!(
                "{}: its bytes do not match {}: they give {got}, the store says {}: the object \
                 changed while it was read, or the store sent other bytes than it describes",
                flag(&e.spec),
                claim.algorithm.what(),
                quoted(&claim.value)
            )));
        }
    }
    crate::stderr!("{}", checked_line(e, requests));
    let mut fingerprints = Vec::new();
    for r in reads {
        if let Reads::Sequential { .. } = **r {
            let hold = held(r);
            let (_, whole) = wholes.iter().find(|(h, _)| *h == hold).expect("made above");
            fingerprints.push(whole.finish());
            continue;
        }
        let mut f = Fingerprinting::new(r.asked(), held(r));
        let mut feed = |bytes: &[u8]| f.update(bytes);
        let mut sink = Feeding {
            buf: &mut buf,
            feed: &mut feed,
        };
        for read in r.iter() {
            plain.read(read.offset, read.len, &mut sink)?;
        }
        fingerprints.push(f.finish());
    }
    Ok(fingerprints)
}

/// What the check pass found, for stderr.
fn checked_line(e: &Existing, requests: u64) -> String {
    let checks = e
        .stat
        .claims
        .iter()
        .map(|c| c.algorithm.what().replacen("its ", "", 1))
        .collect::<Vec<_>>();
    let verdict = match checks.as_slice() {
        [] => match &e.spec.place {
            SourceSpec::File(_) => "a file gives no checksum".to_string(),
            SourceSpec::Http(_) => "a plain HTTP server gives no checksum".to_string(),
            SourceSpec::S3(_) => "S3 gave no checksum of its bytes".to_string(),
        },
        [one] => format!("they match its {one}"),
        [first @ .., last] => format!("they match its {} and {last}", first.join(", ")),
    };
    let mut line = format!(
        "{}: {}: {} bytes read whole, untimed, in {}: {verdict}",
        program_name(),
        printable(&e.spec.label),
        e.object.size,
        crate::util::format::count(requests, "request")
    );
    for why in &e.stat.unchecked {
        line.push_str(&format!("; {why}"));
    }
    line.push_str("; each client's bytes are checked against these");
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::http::head::tests::head;

    fn params(text: &str) -> (String, Vec<String>) {
        let (claims, unchecked) = claims(&head(text));
        let stat = Stat {
            size: 1,
            claims,
            unchecked,
        };
        (stat.check(), stat.unchecked)
    }

    #[test]
    fn an_s3_heads_checksums_are_checked_where_they_are_of_the_bytes() {
        let single = "HTTP/1.1 200 OK\r\nETag: \"A7249EA736D470281FDA6342C93F1B30\"\r\n\
                      x-amz-checksum-crc32: KPEmDQ==\r\nContent-Length: 3\r\n\r\n";
        assert_eq!(params(single), ("etag-md5+checksum-crc32".into(), vec![]));
        let (claims, _) = claims(&head(single));
        assert_eq!(claims[0].value, "a7249ea736d470281fda6342c93f1b30");
        // moto's multipart object: its CRC32 is its parts', though it says nothing.
        let (check, why) = params(
            "HTTP/1.1 200 OK\r\nETag: \"169efea35035609c84c7f8cef4b24946-3\"\r\n\
             x-amz-checksum-crc32: KRR+LQ==\r\nContent-Length: 3\r\n\r\n",
        );
        assert_eq!(check, "clients-agree");
        assert!(
            why[0].contains("multipart upload's (of 3 parts)"),
            "{why:?}"
        );
        assert!(
            why[1].contains("x-amz-checksum-crc32 is a composite"),
            "{why:?}"
        );
        // AWS's: composite said so, full-object CRC64NVME of a multipart object checked.
        let (check, _) = params(
            "HTTP/1.1 200 OK\r\nETag: \"169efea35035609c84c7f8cef4b24946-3\"\r\n\
             x-amz-checksum-crc64nvme: AAAAAAAAAAA=\r\nx-amz-checksum-type: FULL_OBJECT\r\n\r\n",
        );
        assert_eq!(check, "checksum-crc64nvme");
        let (check, why) = params(
            "HTTP/1.1 200 OK\r\nETag: \"a7249ea736d470281fda6342c93f1b30\"\r\n\
             x-amz-server-side-encryption: aws:kms\r\n\
             x-amz-checksum-sha256: abc=\r\nx-amz-checksum-type: COMPOSITE\r\n\r\n",
        );
        assert_eq!(check, "clients-agree");
        assert!(why[0].contains("KMS"), "{why:?}");
        assert!(why[1].contains("composite"), "{why:?}");
        let (check, why) = params("HTTP/1.1 200 OK\r\nETag: \"x\x1b[2J\"\r\n\r\n");
        assert_eq!(check, "clients-agree");
        assert!(
            why[0].contains("\\u{1b}") && !why[0].contains('\x1b'),
            "{why:?}"
        );
        assert_eq!(
            params("HTTP/1.1 200 OK\r\n\r\n"),
            ("clients-agree".into(), vec![])
        );
    }

    #[test]
    fn each_algorithm_writes_its_digest_as_s3_does() {
        let digest = |a: Algorithm| {
            let mut h = a.hasher();
            h.update(b"hello ");
            h.update(b"world");
            h.finish()
        };
        // As the AWS CLI and Python's hashlib give them for "hello world".
        assert_eq!(
            digest(Algorithm::EtagMd5),
            "5eb63bbbe01eeed093cb22bb8f5acdc3"
        );
        assert_eq!(
            digest(Algorithm::Checksum("sha256")),
            "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="
        );
        assert_eq!(
            digest(Algorithm::Checksum("sha1")),
            "Kq5sNclPz7QV2+lfQIuc6R7oRu0="
        );
        assert_eq!(digest(Algorithm::Checksum("crc32")), "DUoRhQ==");
        assert_eq!(digest(Algorithm::Checksum("crc32c")), "yZRlqg==");
        assert_eq!(digest(Algorithm::Checksum("crc64nvme")), "jSnVw/bqjr4=");
    }

    #[test]
    fn every_shot_is_checked_against_the_fingerprints_of_the_check_pass() {
        use super::super::workload::{Case, SeekOp};
        use crate::harness::benchmark::Workload;
        let dir = crate::util::temp::TempDir::new("seek-existing");
        let path = dir.join("disk.img");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 31 + i / 977) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let spec = ObjectSpec::parse(path.to_str().unwrap()).unwrap();
        let stat = stat(&spec, Duration::from_secs(5)).unwrap();
        let e = &Existing {
            object: Object::existing(&spec.name, stat.size),
            spec,
            stream: StreamConfig::local(),
            stat,
        };
        let size = e.object.size;
        let reads: Vec<Arc<Reads>> = [
            Reads::built_in("sequential", size, 4096),
            Reads::built_in("sequential", size, 1 << 20),
            Reads::built_in("forward", size, 0),
            Reads::built_in("backward", size, 0),
            Reads::built_in("parquet", size, 0),
        ]
        .into_iter()
        .map(Arc::new)
        .collect();
        let fingerprints = check(e, &reads, Duration::from_secs(5)).unwrap();
        assert_eq!(fingerprints.len(), reads.len());
        // Sequential, whatever the read size: the object's bytes in order, and the tail its
        // shots keep (64 KiB of 4 KiB reads, all of 1 MiB ones).
        let fnv = crate::util::rng::fnv1a64;
        assert_eq!(fingerprints[0].whole, fnv(&bytes));
        assert_eq!(fingerprints[1].whole, fnv(&bytes));
        assert_eq!(
            fingerprints[0].tail,
            fnv(&bytes[bytes.len() - (64 << 10)..])
        );
        assert_eq!(fingerprints[1].tail, fnv(&bytes));
        // A checksum the bytes do not match: both values named, exit 1.
        let mut claimed = e.clone();
        let mut md5 = Md5::default();
        md5.update(&bytes);
        let right = digest::hex(&md5.finish());
        claimed.stat.claims = vec![Claim {
            algorithm: Algorithm::EtagMd5,
            value: right.clone(),
        }];
        assert_eq!(
            check(&claimed, &reads, Duration::from_secs(5))
                .unwrap()
                .len(),
            5
        );
        claimed.stat.claims[0].value = "0".repeat(32);
        let wrong = check(&claimed, &reads, Duration::from_secs(5)).unwrap_err();
        assert_eq!(wrong.exit_code(), 1);
        let wrong = wrong.to_string();
        assert!(
            wrong.contains("its bytes do not match its ETag (the MD5 of a single-part object)")
                && wrong.contains(&right)
                && wrong.contains(&"0".repeat(32))
                && wrong.starts_with("--object file:"),
            "{wrong}"
        );
        let shot = |plan: usize, client: &str, fingerprint| {
            let case = Case {
                source: e.spec.place.clone(),
                object: e.object.clone(),
                reads: reads[plan].clone(),
                client: client.to_string(),
                stream: e.stream.clone(),
                cold: false,
                request_timeout: Duration::from_secs(5),
                fingerprint,
                changed: None,
            };
            let mut op = SeekOp::set_up(&case)?;
            op.run(2)?;
            op.after_iteration()?;
            op.finish()
        };
        for (plan, f) in fingerprints.iter().enumerate() {
            for client in ["plain", "stream"] {
                shot(plan, client, Some(*f)).unwrap();
                let wrong = Fingerprint {
                    tail: f.tail ^ 1,
                    ..*f
                };
                let e = shot(plan, client, Some(wrong)).unwrap_err().to_string();
                assert!(
                    e.contains(&format!("the {client} client's bytes of disk.img"))
                        && e.contains("differ from those read when it was checked"),
                    "{e}"
                );
            }
        }
        let e = shot(0, "plain", None).unwrap_err().to_string();
        assert!(e.contains("not checked before the run"), "{e}");
        // The file changes under the run: its shots no longer agree.
        let f = fingerprints[2];
        std::fs::write(&path, vec![0u8; 200_000]).unwrap();
        let e = shot(2, "stream", Some(f)).unwrap_err().to_string();
        assert!(e.contains("verification mismatch"), "{e}");
    }
}
