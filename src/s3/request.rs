//! Signed S3 requests for one bucket, ready for an HTTP transport: ranged GET and HEAD of
//! an object, PUT of an object, CreateBucket (with its LocationConstraint outside
//! us-east-1), and the multipart upload's CreateMultipartUpload, UploadPart and
//! CompleteMultipartUpload. Builders only: sending them is the transport's.

use crate::s3::credentials::S3Settings;
use crate::s3::endpoint::{Addressing, Endpoint};
use crate::s3::sigv4::{self, Request, Scope};
use crate::util::xml;
use std::time::SystemTime;

/// A request to send as it is: where to connect, the request line's method and target,
/// the headers (`host` first, signed unless the settings say `--no-sign`), and the body
/// when the request made its own. PUT object and UploadPart send the caller's bytes,
/// whose hash and length they signed (a [`Payload`]), so that nothing here holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: &'static str,
    pub https: bool,
    /// Where to connect.
    pub host: String,
    pub port: u16,
    /// The encoded path and query: `/KEY?partNumber=1&uploadId=…`.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// A header's value, by its lowercase name.
    pub fn header(&self, name: &str) -> Option<&str> {
        sigv4::header(&self.headers, name)
    }
}

/// The length and SHA-256 of a body the caller sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    pub len: u64,
    /// Lowercase hex.
    pub sha256: String,
}

impl Payload {
    /// The payload of `bytes`.
    pub fn of(bytes: &[u8]) -> Payload {
        Payload {
            len: bytes.len() as u64,
            sha256: sigv4::sha256_hex(bytes),
        }
    }

    pub fn empty() -> Payload {
        Payload::of(b"")
    }
}

/// The body of a CompleteMultipartUpload of the parts whose ETags are `etags`, in order.
pub fn complete_multipart_body(etags: &[String]) -> String {
    let parts: String = etags
        .iter()
        .enumerate()
        .map(|(i, etag)| {
            format!(
                "<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>",
                i + 1,
                xml::escape(etag)
            )
        })
        .collect();
    format!("<CompleteMultipartUpload>{parts}</CompleteMultipartUpload>")
}

/// One bucket at one endpoint, with the settings to sign for it.
#[derive(Debug, Clone)]
pub struct Bucket {
    pub name: String,
    pub settings: S3Settings,
    pub endpoint: Endpoint,
    pub addressing: Addressing,
}

impl Bucket {
    /// Bucket `name`: addressed as `addressing` says (a flag), else as the settings say,
    /// else as the endpoint prefers.
    pub fn new(name: &str, settings: S3Settings, addressing: Option<Addressing>) -> Bucket {
        let endpoint = settings.endpoint();
        let addressing = addressing
            .or(settings.addressing)
            .unwrap_or_else(|| endpoint.default_addressing(name));
        Bucket {
            name: name.to_string(),
            settings,
            endpoint,
            addressing,
        }
    }

    /// The host requests connect to: the bucket's own name under the endpoint's when
    /// virtual-hosted, the endpoint's when path-style.
    pub fn host(&self) -> String {
        match self.addressing {
            Addressing::Virtual => format!("{}.{}", self.name, self.endpoint.host),
            Addressing::Path => self.endpoint.host.clone(),
        }
    }

    /// GET of `len` bytes of `key` from `offset` (`len` > 0).
    pub fn get_range(&self, key: &str, offset: u64, len: u64, now: SystemTime) -> HttpRequest {
        let range = format!("bytes={offset}-{}", offset + len - 1);
        self.request(
            "GET",
            Some(key),
            &[],
            &[("Range", range)],
            &Payload::empty(),
            now,
        )
    }

    /// HEAD of `key`: its size is the answer's Content-Length.
    pub fn head(&self, key: &str, now: SystemTime) -> HttpRequest {
        self.request("HEAD", Some(key), &[], &[], &Payload::empty(), now)
    }

    /// HeadBucket: 200 when the bucket is there and ours to read, 404 when it is not.
    pub fn head_bucket(&self, now: SystemTime) -> HttpRequest {
        self.request("HEAD", None, &[], &[], &Payload::empty(), now)
    }

    /// ListObjectsV2 of no keys: a bodied answer to what a HeadBucket only gives a status.
    pub fn list_nothing(&self, now: SystemTime) -> HttpRequest {
        let query = [("list-type", "2"), ("max-keys", "0")];
        self.request("GET", None, &query, &[], &Payload::empty(), now)
    }

    /// PUT of a body as `key` (its hash signed).
    pub fn put_object(&self, key: &str, body: &Payload, now: SystemTime) -> HttpRequest {
        self.request("PUT", Some(key), &[], &[], body, now)
    }

    /// CreateBucket; outside us-east-1 the body names the region, as S3 requires.
    pub fn create_bucket(&self, now: SystemTime) -> HttpRequest {
        let region = &self.settings.region;
        let body = if region == "us-east-1" {
            String::new()
        } else {
            format!(
                "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
                 <LocationConstraint>{}</LocationConstraint></CreateBucketConfiguration>",
                xml::escape(region)
            )
        };
        self.carrying("PUT", None, &[], body, now)
    }

    /// CreateMultipartUpload: the answer's `UploadId` names the upload.
    pub fn create_multipart_upload(&self, key: &str, now: SystemTime) -> HttpRequest {
        self.request(
            "POST",
            Some(key),
            &[("uploads", "")],
            &[],
            &Payload::empty(),
            now,
        )
    }

    /// UploadPart `part` (from 1) of upload `upload_id`: the answer's ETag names the part.
    pub fn upload_part(
        &self,
        key: &str,
        upload_id: &str,
        part: u32,
        body: &Payload,
        now: SystemTime,
    ) -> HttpRequest {
        let part = part.to_string();
        let query = [("partNumber", part.as_str()), ("uploadId", upload_id)];
        self.request("PUT", Some(key), &query, &[], body, now)
    }

    /// CompleteMultipartUpload of the parts whose ETags are `etags`, in part order.
    pub fn complete_multipart_upload(
        &self,
        key: &str,
        upload_id: &str,
        etags: &[String],
        now: SystemTime,
    ) -> HttpRequest {
        let body = complete_multipart_body(etags);
        let query = [("uploadId", upload_id)];
        self.carrying("POST", Some(key), &query, body, now)
    }

    /// AbortMultipartUpload: the parts of a failed upload are not left to be billed.
    pub fn abort_multipart_upload(
        &self,
        key: &str,
        upload_id: &str,
        now: SystemTime,
    ) -> HttpRequest {
        let query = [("uploadId", upload_id)];
        self.request("DELETE", Some(key), &query, &[], &Payload::empty(), now)
    }

    /// A request whose body is made here, and so travels with it.
    fn carrying(
        &self,
        method: &'static str,
        key: Option<&str>,
        query: &[(&str, &str)],
        body: String,
        now: SystemTime,
    ) -> HttpRequest {
        let mut r = self.request(method, key, query, &[], &Payload::of(body.as_bytes()), now);
        r.body = body.into_bytes();
        r
    }

    /// The request for `key` (none: the bucket itself), signed unless `--no-sign`. A
    /// request with a method that sends a body says its length.
    pub fn request(
        &self,
        method: &'static str,
        key: Option<&str>,
        query: &[(&str, &str)],
        headers: &[(&str, String)],
        body: &Payload,
        now: SystemTime,
    ) -> HttpRequest {
        let host = self.host();
        let path = match (self.addressing, key) {
            (Addressing::Virtual, _) => format!("/{}", key.unwrap_or("")),
            (Addressing::Path, Some(k)) => format!("/{}/{k}", self.name),
            (Addressing::Path, None) => format!("/{}", self.name),
        };
        let query: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut extra: Vec<(String, String)> = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        if matches!(method, "PUT" | "POST") {
            extra.push(("Content-Length".into(), body.len.to_string()));
        }
        let host_header = self.endpoint.host_header(&host);
        let headers = match &self.settings.credentials {
            Some(creds) => {
                let req = Request {
                    method,
                    host: &host_header,
                    path: &path,
                    query: &query,
                    headers: &extra,
                    payload_hash: &body.sha256,
                };
                let scope = Scope {
                    region: &self.settings.region,
                    service: "s3",
                    time: now,
                };
                sigv4::sign(&req, creds, &scope).headers
            }
            None => {
                let mut h = vec![("host".to_string(), host_header)];
                h.extend(extra.into_iter().map(|(n, v)| (n.to_ascii_lowercase(), v)));
                h
            }
        };
        let mut target = sigv4::uri_encode(&path, false);
        let query = sigv4::canonical_query(&query);
        if !query.is_empty() {
            target = format!("{target}?{query}");
        }
        HttpRequest {
            method,
            https: self.endpoint.https,
            host,
            port: self.endpoint.port,
            target,
            headers,
            body: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::s3::sigv4::Credentials;
    use std::time::{Duration, UNIX_EPOCH};

    fn settings(region: &str, endpoint: Option<&str>, signed: bool) -> S3Settings {
        let credentials = signed.then(|| Credentials {
            access_key_id: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        });
        let endpoint = endpoint.map(|e| Endpoint::parse(e).unwrap());
        S3Settings::with(credentials, region, endpoint)
    }

    fn may_2013() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_369_353_600)
    }

    #[test]
    fn a_ranged_get_on_aws_is_the_s3_reference_example() {
        // The S3 API reference's GET object example, built rather than spelled out: the
        // same request must carry the same published signature.
        let mut b = Bucket::new("examplebucket", settings("us-east-1", None, true), None);
        assert_eq!(b.addressing, Addressing::Virtual);
        // The reference signs for the global endpoint's host name.
        b.endpoint.host = "s3.amazonaws.com".into();
        let r = b.get_range("test.txt", 0, 10, may_2013());
        assert_eq!(
            (r.method, r.target.as_str(), r.https, r.port),
            ("GET", "/test.txt", true, 443)
        );
        assert_eq!(r.host, "examplebucket.s3.amazonaws.com");
        assert_eq!(r.header("range"), Some("bytes=0-9"));
        assert!(r.header("authorization").unwrap().ends_with(
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        ));
    }

    #[test]
    fn custom_endpoints_are_path_style_and_carry_their_port() {
        let b = Bucket::new(
            "bench",
            settings("eu-west-1", Some("http://127.0.0.1:9000"), true),
            None,
        );
        let r = b.head("data/random 1mb.txt", may_2013());
        assert_eq!(
            (r.host.as_str(), r.port, r.https),
            ("127.0.0.1", 9000, false)
        );
        assert_eq!(r.target, "/bench/data/random%201mb.txt");
        assert_eq!(r.header("host"), Some("127.0.0.1:9000"));
        assert!(r
            .header("authorization")
            .unwrap()
            .contains("/eu-west-1/s3/aws4_request"));
        let v = Bucket::new("bench", b.settings.clone(), Some(Addressing::Virtual));
        let r = v.head("k", may_2013());
        assert_eq!(
            (r.header("host"), r.target.as_str()),
            (Some("bench.127.0.0.1:9000"), "/k")
        );
    }

    #[test]
    fn bodies_lengths_and_queries_of_each_request() {
        let b = Bucket::new(
            "bench",
            settings("eu-west-1", Some("http://h:9000"), true),
            None,
        );
        let put = b.put_object("k", &Payload::of(b"hello"), may_2013());
        assert_eq!(put.header("content-length"), Some("5"));
        assert_eq!(
            put.header("x-amz-content-sha256"),
            Some(sigv4::sha256_hex(b"hello").as_str())
        );
        assert!(put.body.is_empty());

        let create = b.create_bucket(may_2013());
        assert_eq!((create.method, create.target.as_str()), ("PUT", "/bench"));
        let body = String::from_utf8(create.body.clone()).unwrap();
        assert_eq!(
            crate::s3::xml::element(&body, "LocationConstraint").as_deref(),
            Some("eu-west-1")
        );
        assert_eq!(
            create.header("content-length"),
            Some(body.len().to_string().as_str())
        );
        assert_eq!(
            create.header("x-amz-content-sha256"),
            Some(sigv4::sha256_hex(&create.body).as_str())
        );
        let east = Bucket::new(
            "bench",
            settings("us-east-1", Some("http://h:9000"), true),
            None,
        );
        assert!(east.create_bucket(may_2013()).body.is_empty());

        let start = b.create_multipart_upload("k", may_2013());
        assert_eq!(
            (start.method, start.target.as_str()),
            ("POST", "/bench/k?uploads=")
        );
        let part = b.upload_part("k", "a/b+c", 2, &Payload::of(b"xyz"), may_2013());
        assert_eq!(part.target, "/bench/k?partNumber=2&uploadId=a%2Fb%2Bc");
        let done =
            b.complete_multipart_upload("k", "id", &["\"e1\"".into(), "\"e2\"".into()], may_2013());
        assert_eq!(done.target, "/bench/k?uploadId=id");
        assert_eq!(
            String::from_utf8(done.body).unwrap(),
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag></Part>\
             <Part><PartNumber>2</PartNumber><ETag>&quot;e2&quot;</ETag></Part></CompleteMultipartUpload>"
        );
    }

    #[test]
    fn a_key_is_sent_and_signed_exactly_as_given() {
        // S3 keys are opaque: `a//b` is not `a/b`, and S3's SigV4 signs the path as it is
        // sent, never normalised (botocore's S3SigV4Auth: "For S3, we do not normalize
        // the path"). The signature is botocore 1.43.11's for this request, made as
        // tests/data/sigv4_botocore.py makes its cases.
        let b = Bucket::new(
            "bench",
            settings("eu-west-1", Some("http://127.0.0.1:9000"), true),
            None,
        );
        let r = b.get_range("p/a//b.bin", 0, 10, may_2013());
        assert_eq!(r.target, "/bench/p/a//b.bin");
        assert!(
            r.header("authorization").unwrap().ends_with(
                "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
                 Signature=2b9688c5b8d1ad5de62d0d65d8d5d09d9afe86119e7c23a1a5e647b454be82a6"
            ),
            "{r:?}"
        );
        // The canonical request's URI is the key's path as sent.
        let signed = sigv4::sign(
            &Request {
                method: "GET",
                host: "127.0.0.1:9000",
                path: "/bench/p/a//b.bin",
                query: &[],
                headers: &[("Range".into(), "bytes=0-9".into())],
                payload_hash: &Payload::empty().sha256,
            },
            b.settings.credentials.as_ref().unwrap(),
            &Scope {
                region: "eu-west-1",
                service: "s3",
                time: may_2013(),
            },
        );
        assert_eq!(
            signed.canonical_request.lines().nth(1),
            Some("/bench/p/a//b.bin")
        );
        assert_eq!(r.header("authorization"), signed.header("authorization"));
        // A leading `/` and runs of them stay, virtual-hosted too.
        let v = Bucket::new("bench", b.settings.clone(), Some(Addressing::Virtual));
        assert_eq!(v.head("/x//y", may_2013()).target, "//x//y");
        assert_eq!(b.head("/x//y", may_2013()).target, "/bench//x//y");
    }

    #[test]
    fn no_sign_sends_no_authorization() {
        let b = Bucket::new("public", settings("us-east-1", None, false), None);
        let r = b.get_range("k", 5, 5, may_2013());
        assert_eq!(
            r.headers,
            [
                (
                    "host".to_string(),
                    "public.s3.us-east-1.amazonaws.com".to_string()
                ),
                ("range".to_string(), "bytes=5-9".to_string())
            ]
        );
    }
}
