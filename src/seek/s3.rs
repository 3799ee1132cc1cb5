//! S3 as a place for bb-seek's objects: the settings made ready before any request
//! ([`prepare`]: the CA bundle they name trusted, the role they name assumed through
//! STS); a bucket as the HTTP client's [`Origin`], its requests signed by [`crate::s3`],
//! a body's SHA-256 in the head through [`Origin::digest`], and retried as the settings
//! say; S3's refusals explained with its own code and message and what to do about them;
//! and what `gen --dest s3://…` needs beyond a PUT: the bucket made when it is missing,
//! and multipart uploads for large objects, streamed in parts.

use super::data::Object;
use crate::harness::signals;
use crate::net::http::{Answer, Ask, Body, Head, HttpClient, Origin, Payload, Url};
use crate::s3::request::complete_multipart_body;
use crate::s3::sigv4::{Sha256Writer, UNSIGNED_PAYLOAD};
use crate::s3::{self, sts, xml, Addressing, Bucket, HttpRequest, Location, S3Settings};
use crate::system::exit;
use crate::util::error::{Error, Result};
use crate::util::format::{printable, quoted_cut};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How long the AssumeRole call to STS may take, all of it.
pub const STS_TIMEOUT: Duration = Duration::from_secs(30);

/// The settings made ready to sign with, before any S3 request: the CA bundle they name
/// trusted (unless `--ca-file` named one), and the role they name assumed through STS,
/// its temporary keys in place of the ones that assumed it.
pub fn prepare(mut settings: S3Settings) -> Result<S3Settings> {
    if let Some((path, what)) = settings.ca_bundle.take() {
        match crate::net::tls::configure_bundle(&path, &what)? {
            true => settings.ca_bundle = Some((path, what)),
            false => settings.notes.push(format!(
                "the CA bundle {} ({what}) is not used: the trusted roots are set already \
                 (--ca-file comes first, as the AWS CLI's --ca-bundle does)",
                path.display()
            )),
        }
    }
    let (Some(role), Some(creds)) = (settings.assume_role.take(), &settings.credentials) else {
        return Ok(settings);
    };
    let endpoint = role
        .endpoint
        .clone()
        .unwrap_or_else(|| sts::aws_endpoint(&settings.region));
    let request =
        sts::assume_role_request(&role, creds, &settings.region, &endpoint, SystemTime::now());
    let server = Url::for_server(&endpoint.host, endpoint.port, endpoint.https)
        .map_err(|e| Error::usage(format!("STS endpoint {endpoint}: {e}")))?;
    let what = format!(
        "AssumeRole of {} ({}) at {endpoint}",
        printable(&role.role_arn),
        role.profile
    );
    let body = request.body.clone();
    let mut client = HttpClient::new(Arc::new(Sts { server, request }), STS_TIMEOUT);
    let ask = Ask {
        body: Some(payload_of(&body)),
        ..Ask::new("POST", None)
    };
    let answer = client
        .call(&ask, &mut |w| w.write_all(&body))
        .map_err(|e| Error::failed(format!("{what}: {e}")))?;
    let (credentials, expiration) =
        sts::parse_answer(answer.head.status, &String::from_utf8_lossy(&answer.body))
            .map_err(|why| Error::failed(format!("{what}: {why}")))?;
    settings.credentials = Some(credentials);
    if let Some(at) = expiration {
        settings.origin = format!("{}, expiring {}", settings.origin, printable(&at));
    }
    Ok(settings)
}

/// STS as an origin of one request, signed already.
struct Sts {
    server: Url,
    request: HttpRequest,
}

impl Origin for Sts {
    fn server(&self) -> &Url {
        &self.server
    }

    fn head(&self, _ask: &Ask) -> String {
        let r = &self.request;
        let mut head = format!("{} {} HTTP/1.1\r\n", r.method, r.target);
        for (name, value) in &r.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head
    }

    fn describe(&self, _name: Option<&str>) -> String {
        format!("{}/ (STS)", self.server)
    }
}

/// Objects above this size are uploaded in parts, as the AWS CLI does above its
/// threshold; [`DEFAULT_PART_SIZE`] per part unless `--part-size` says otherwise.
pub const DEFAULT_MULTIPART_THRESHOLD: u64 = 64 << 20;
pub const DEFAULT_PART_SIZE: u64 = 8 << 20;
/// S3's limits on parts: every part but the last at least 5 MiB, at most 5 GiB, and at
/// most 10,000 parts.
pub const MIN_PART_SIZE: u64 = 5 << 20;
pub const MAX_PART_SIZE: u64 = 5 << 30;
pub const MAX_PARTS: u64 = 10_000;

/// When an upload goes in parts: objects above `threshold` bytes, in parts of
/// `part_size`.
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    pub threshold: u64,
    pub part_size: u64,
}

/// The objects under `s3://BUCKET/PREFIX/`, with what it takes to reach them.
pub struct S3Objects {
    pub location: Location,
    bucket: Bucket,
    /// The server requests connect to (its prefix is unused: keys make the path).
    server: Url,
}

impl S3Objects {
    /// The objects at `location`, reached with `settings`, the bucket addressed as
    /// `addressing` says (else as the settings or the endpoint prefer).
    pub fn new(
        location: Location,
        settings: S3Settings,
        addressing: Option<Addressing>,
    ) -> Result<S3Objects> {
        let bucket = Bucket::new(&location.bucket, settings, addressing);
        let server = Url::for_server(&bucket.host(), bucket.endpoint.port, bucket.endpoint.https)
            .map_err(|e| Error::usage(format!("{location}: {e}")))?;
        Ok(S3Objects {
            location,
            bucket,
            server,
        })
    }

    /// Where the objects are and how they are reached, for the header line on stderr:
    /// where the credentials came from, never the secret.
    pub fn describe_settings(&self) -> String {
        let b = &self.bucket;
        let style = match b.addressing {
            Addressing::Virtual => "virtual-hosted",
            Addressing::Path => "path-style",
        };
        let s = &b.settings;
        let endpoint_from = s
            .endpoint_origin
            .as_ref()
            .map_or(String::new(), |o| format!(" from {o}"));
        let ca = s.ca_bundle.as_ref().map_or(String::new(), |(path, what)| {
            format!(", CA bundle {} ({what})", path.display())
        });
        let retry = format!(
            ", retries: {}, {} ({})",
            s.retry.mode.name(),
            match s.retry.max_attempts {
                1 => "1 attempt".to_string(),
                n => format!("{n} attempts"),
            },
            s.retry.origin
        );
        format!(
            "{} at {}://{}:{} ({style}){endpoint_from}, region {} ({}), credentials: {}{ca}{retry}",
            self.location,
            if b.endpoint.https { "https" } else { "http" },
            b.endpoint.host,
            b.endpoint.port,
            s.region,
            s.region_origin,
            s.origin
        )
    }

    /// [`S3Objects::describe_settings`] as bb-seek's line on stderr, then a line for each
    /// note on how a setting was read.
    pub fn settings_line(&self) -> String {
        let mut line = format!("bb-seek: {}", self.describe_settings());
        for note in &self.bucket.settings.notes {
            line.push_str(&format!("\nbb-seek: note: {note}"));
        }
        line
    }

    /// `bb-seek gen --dest s3://…`, for messages.
    pub fn gen_command(&self) -> String {
        format!("bb-seek gen --dest {}", self.location)
    }

    /// What to do about an S3 error code, when there is something to say.
    fn advice(&self, code: &str) -> Option<String> {
        let creds = &self.bucket.settings.origin;
        Some(match code {
            "NoSuchBucket" => format!(
                "create the bucket and the objects with {}",
                self.gen_command()
            ),
            "NoSuchKey" => format!("upload the objects with {}", self.gen_command()),
            "SignatureDoesNotMatch" => {
                format!("the secret access key does not match the key id (credentials: {creds})")
            }
            "InvalidAccessKeyId" => {
                format!("the server knows no such access key id (credentials: {creds})")
            }
            "ExpiredToken" | "TokenRefreshRequired" => {
                format!("the session token has expired: refresh the credentials ({creds})")
            }
            "InvalidToken" => format!("the session token is not valid (credentials: {creds})"),
            "AccessDenied" | "AllAccessDisabled" => {
                format!("the credentials ({creds}) may not do this here")
            }
            "RequestTimeTooSkewed" => {
                "this machine's clock is too far from the server's: set it (NTP)".to_string()
            }
            _ => return None,
        })
    }

    /// The region a redirect or a refusal names as the bucket's, if it names another.
    fn other_region(&self, head: &Head, body: &str) -> Option<String> {
        let region = head
            .header("x-amz-bucket-region")
            .map(String::from)
            .or_else(|| xml::element(body, "Region"))?;
        // The server's words: printed, and suggested as AWS_REGION's value.
        (region != self.bucket.settings.region).then(|| quoted_cut(&region, 40))
    }
}

impl Origin for S3Objects {
    fn server(&self) -> &Url {
        &self.server
    }

    fn head(&self, ask: &Ask) -> String {
        let key = ask.name.map(|n| self.location.key(n));
        let headers: Vec<(&str, String)> = ask
            .range
            .map(|(offset, len)| ("Range", format!("bytes={offset}-{}", offset + len - 1)))
            .into_iter()
            .chain(ask.headers.iter().map(|(n, v)| (*n, v.to_string())))
            .collect();
        let body = match &ask.body {
            Some(p) => s3::Payload {
                len: p.len,
                sha256: p
                    .digest
                    .clone()
                    .unwrap_or_else(|| UNSIGNED_PAYLOAD.to_string()),
            },
            None => s3::Payload::empty(),
        };
        let r = self.bucket.request(
            ask.method,
            key.as_deref(),
            ask.query,
            &headers,
            &body,
            SystemTime::now(),
        );
        let mut head = format!("{} {} HTTP/1.1\r\n", r.method, r.target);
        for (name, value) in &r.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head
    }

    fn describe(&self, name: Option<&str>) -> String {
        format!(
            "s3://{}/{}",
            self.location.bucket,
            self.location.key(name.unwrap_or(""))
        )
    }

    /// A body's SHA-256, which the signature covers, when requests are signed (else
    /// `UNSIGNED-PAYLOAD` will do).
    fn digest(&self, body: &mut Body) -> std::io::Result<Option<String>> {
        if self.bucket.settings.credentials.is_none() {
            return Ok(None);
        }
        let mut hasher = Sha256Writer::default();
        body(&mut hasher)?;
        Ok(Some(hasher.hex()))
    }

    fn explain(&self, head: &Head, body: &[u8]) -> Option<String> {
        let text = String::from_utf8_lossy(body);
        let code = xml::element(&text, "Code");
        if let Some(region) = self.other_region(head, &text) {
            return Some(format!(
                "{}{}: the bucket is in region {region}, not {}: set AWS_REGION={region}",
                head.status_line(),
                code.map(|c| format!(" {}", quoted_cut(&c, 64)))
                    .unwrap_or_default(),
                self.bucket.settings.region
            ));
        }
        let code = code?;
        let message = xml::element(&text, "Message").unwrap_or_default();
        let mut why = format!(
            "{} {}: {}",
            head.status_line(),
            quoted_cut(&code, 64),
            quoted_cut(&message, 300)
        );
        if let Some(advice) = self.advice(&code) {
            why.push_str(&format!(" ({advice})"));
        }
        Some(why)
    }

    fn explains_in_bodies(&self) -> bool {
        true
    }

    fn attempts(&self) -> u32 {
        self.bucket.settings.retry.max_attempts
    }

    fn is_missing(&self, answer: &Answer) -> bool {
        answer.head.status == 404
            && matches!(
                xml::element(&String::from_utf8_lossy(&answer.body), "Code").as_deref(),
                None | Some("NoSuchKey")
            )
    }
}

/// The payload of a body the origin holds whole (S3's own XML), its SHA-256 made here.
fn payload_of(bytes: &[u8]) -> Payload {
    let p = s3::Payload::of(bytes);
    Payload {
        len: p.len,
        digest: Some(p.sha256),
    }
}

/// Makes the bucket when it is not there (with the region's LocationConstraint); says
/// whether it did. A bucket that is there but not ours to use is S3's clear refusal.
pub fn ensure_bucket(objects: &Arc<S3Objects>, timeout: Duration) -> Result<bool> {
    let mut client = HttpClient::new(objects.clone(), timeout);
    let head = Ask::new("HEAD", None);
    let answer = client.call(&head, &mut |_| Ok(()))?;
    match answer.head.status {
        200 => return Ok(false),
        404 => {}
        _ => {
            // HEAD has no body to say why; a listing of no keys does.
            let list = Ask {
                query: &[("list-type", "2"), ("max-keys", "0")],
                ..Ask::new("GET", None)
            };
            let why = client.call(&list, &mut |_| Ok(()))?;
            return Err(client.refused(&head, &why));
        }
    }
    let create = objects.bucket.create_bucket(SystemTime::now());
    let mut ask = Ask::new("PUT", None);
    ask.body = Some(payload_of(&create.body));
    // The body is the LocationConstraint the builder made (the headers sign the same).
    let made = client.call(&ask, &mut |w| w.write_all(&create.body))?;
    match made.head.status {
        200..=299 => Ok(true),
        _ => Err(client.refused(&ask, &made)),
    }
}

/// Uploads `object` in parts of `part_size` bytes (the last one shorter), with `meta`
/// (its user metadata) given when the upload is created; each part generated twice,
/// once for its hash and once on the wire, so nothing holds it. Once
/// the upload is open, it is aborted on every way out but success: a failure, and
/// SIGINT, SIGTERM or SIGHUP (an exit hook sends the abort on a fresh connection of
/// `origin`, each request within `timeout` and at most [`ABORT_LIMIT`]), so that no
/// parts are left to be billed; an abort that fails says how to remove what is left.
pub(crate) fn multipart_upload(
    client: &mut HttpClient,
    origin: &Arc<dyn Origin>,
    objects: &S3Objects,
    object: &Object,
    part_size: u64,
    meta: &[(&str, &str)],
    timeout: Duration,
) -> Result<()> {
    let name = object.name.as_str();
    let start = Ask {
        query: &[("uploads", "")],
        headers: meta,
        body: Some(payload_of(b"")),
        ..Ask::new("POST", Some(name))
    };
    signals::exit_on_signals();
    let started = client.send_body(&start, &mut |_| Ok(()))?;
    let upload_id =
        xml::element(&String::from_utf8_lossy(&started.body), "UploadId").ok_or_else(|| {
            Error::failed(format!(
                "POST {}?uploads: the answer has no UploadId",
                client.origin().describe(Some(name))
            ))
        })?;
    let open = Open {
        location: objects.location.clone(),
        endpoint_url: (!objects.bucket.endpoint.aws).then(|| objects.bucket.endpoint.to_string()),
        name: name.to_string(),
        upload_id: upload_id.clone(),
    };
    let hook = {
        let (origin, open) = (origin.clone(), open.clone());
        exit::add_exit_hook(move || {
            open.abort(&mut HttpClient::new(
                origin.clone(),
                timeout.min(ABORT_LIMIT),
            ))
        })
    };
    let parts = send_parts(client, object, part_size, &upload_id).and_then(|etags| {
        let done = complete_multipart_body(&etags);
        let complete = Ask {
            query: &[("uploadId", upload_id.as_str())],
            body: Some(payload_of(done.as_bytes())),
            ..Ask::new("POST", Some(name))
        };
        let answer = client.send_body(&complete, &mut |w| w.write_all(done.as_bytes()))?;
        // S3 may answer 200 and still fail the completion, in the body.
        if String::from_utf8_lossy(&answer.body).contains("<Error>") {
            return Err(client.refused(&complete, &answer));
        }
        Ok(())
    });
    exit::remove_exit_hook(hook);
    if parts.is_err() {
        open.abort(client);
    }
    parts
}

/// The longest an abort's request may take when a signal ends the upload.
const ABORT_LIMIT: Duration = Duration::from_secs(10);

/// A multipart upload begun and not yet completed.
#[derive(Clone)]
struct Open {
    location: Location,
    /// The endpoint the AWS CLI must be told, when it is not AWS's own.
    endpoint_url: Option<String>,
    name: String,
    upload_id: String,
}

impl Open {
    /// Aborts the upload (an upload S3 no longer knows, 404, is gone already); if that
    /// fails, says on stderr what is left and the AWS CLI command that removes it.
    fn abort(&self, client: &mut HttpClient) {
        let ask = Ask {
            query: &[("uploadId", self.upload_id.as_str())],
            ..Ask::new("DELETE", Some(self.name.as_str()))
        };
        let why = match client.call(&ask, &mut |_| Ok(())) {
            Ok(a) if matches!(a.head.status, 200..=299 | 404) => return,
            Ok(a) => client.refused(&ask, &a).to_string(),
            Err(e) => e.to_string(),
        };
        crate::util::terminal::warn(&self.left_open(&why));
    }

    /// What an upload whose abort failed (`why`) leaves, and how to remove it.
    fn left_open(&self, why: &str) -> String {
        let (bucket, key) = (&self.location.bucket, self.location.key(&self.name));
        let id = printable(&self.upload_id);
        let endpoint = self.endpoint_url.as_deref().map_or(String::new(), |url| {
            format!(" --endpoint-url {}", shell_word(&printable(url)))
        });
        format!(
            "the multipart upload of s3://{bucket}/{key} is left open, its parts stored \
             (aborting it failed: {why}): bucket {bucket}, key {key}, upload id {id}; \
             remove it with: aws s3api abort-multipart-upload{endpoint} --bucket {} --key {} --upload-id {}",
            shell_word(bucket),
            shell_word(&key),
            shell_word(&id),
            bucket = printable(bucket),
            key = printable(&key),
        )
    }
}

/// `s` as one word for a POSIX shell: as it is when it holds only characters no shell
/// treats specially, else in single quotes (a quote within as `'\''`).
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-/:=+,@%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Sends the parts of `object`; their ETags, in order.
fn send_parts(
    client: &mut HttpClient,
    object: &Object,
    part_size: u64,
    upload_id: &str,
) -> Result<Vec<String>> {
    let mut etags = Vec::new();
    let mut offset = 0;
    while offset < object.size {
        let len = part_size.min(object.size - offset);
        let number = (etags.len() + 1).to_string();
        let mut part = |w: &mut dyn Write| object.write_range(offset, len, w);
        let ask = Ask {
            query: &[("partNumber", number.as_str()), ("uploadId", upload_id)],
            body: Some(client.payload(len, &mut part)?),
            ..Ask::new("PUT", Some(object.name.as_str()))
        };
        let answer = client.send_body(&ask, &mut part)?;
        let etag = answer.head.header("etag").ok_or_else(|| {
            Error::failed(format!(
                "PUT {} part {number}: the answer has no ETag",
                client.origin().describe(Some(&object.name))
            ))
        })?;
        etags.push(etag.to_string());
        offset += len;
    }
    Ok(etags)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's error body is quoted short and escaped: a megabyte of Message, or a
    /// Code with a terminal's escape, is not what a terminal gets.
    #[test]
    fn a_servers_error_is_quoted_short_and_escaped() {
        // A plain-HTTP endpoint: a build without TLS makes these objects too.
        let endpoint = crate::s3::endpoint::Endpoint::parse("http://127.0.0.1:9000").unwrap();
        let settings = S3Settings::with(None, "us-east-1", Some(endpoint));
        let objects =
            S3Objects::new(Location::parse("s3://bench/runs/").unwrap(), settings, None).unwrap();
        let head = crate::net::http::head::tests::head("HTTP/1.1 403 Forbidden\r\n\r\n");
        let body = format!(
            "<Error><Code>Access\x1b[2JDenied</Code><Message>{}</Message></Error>",
            "no ".repeat(400_000)
        );
        let why = objects.explain(&head, body.as_bytes()).unwrap();
        assert!(
            why.starts_with("403 Forbidden Access\\u{1b}[2JDenied: no no "),
            "{why}"
        );
        assert!(why.contains("no …"), "{why}");
        assert!(
            why.chars().count() < 500,
            "{} characters",
            why.chars().count()
        );
        assert!(!why.chars().any(char::is_control), "{why}");
    }

    #[test]
    fn an_upload_left_open_is_named_with_the_command_that_removes_it_quoted_for_the_shell() {
        let open = Open {
            location: Location::parse("s3://bench/runs/").unwrap(),
            endpoint_url: None,
            name: "random-6mb.txt".into(),
            upload_id: "a'b\x1b[2Jc $(x)".into(),
        };
        let line = open.left_open("connection refused");
        assert_eq!(
            line,
            "the multipart upload of s3://bench/runs/random-6mb.txt is left open, its parts \
             stored (aborting it failed: connection refused): bucket bench, key \
             runs/random-6mb.txt, upload id a'b\\u{1b}[2Jc $(x); remove it with: aws s3api \
             abort-multipart-upload --bucket bench --key runs/random-6mb.txt --upload-id \
             'a'\\''b\\u{1b}[2Jc $(x)'"
        );
        let minio = Open {
            endpoint_url: Some("http://127.0.0.1:9000".into()),
            upload_id: "abc".into(),
            ..open
        };
        assert!(minio.left_open("x").ends_with(
            "aws s3api abort-multipart-upload --endpoint-url http://127.0.0.1:9000 --bucket \
             bench --key runs/random-6mb.txt --upload-id abc"
        ));
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("2~EXAMPLE-id_1"), "'2~EXAMPLE-id_1'");
    }
}
