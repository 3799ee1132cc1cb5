//! The S3 request builders against a real S3 API server: moto's standalone server on
//! 127.0.0.1 with request authentication on, so a signature that S3 would refuse is
//! refused here too. The requests go over a plain TcpStream (the transport is bb-seek's,
//! wired in later): create a bucket outside us-east-1, PUT, HEAD, ranged GET, a multipart
//! upload of three parts, and a wrong secret and an unknown key refused.

use boardbench::s3::sigv4::{self, header, Credentials, Request, Scope};
use boardbench::s3::{xml, Bucket, Endpoint, HttpRequest, Settings};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// How long moto may take to start (it imports every AWS service it mocks).
const START_LIMIT: Duration = Duration::from_secs(60);
const IO_LIMIT: Duration = Duration::from_secs(30);

/// A moto server on 127.0.0.1, killed and reaped when dropped (a failed assertion too).
struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    /// Starts moto with authentication on after the first three requests, which set up
    /// the IAM user whose keys sign everything else.
    fn start() -> Moto {
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let child = Command::new(moto_server())
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .env("INITIAL_NO_AUTH_ACTION_COUNT", "3")
                .env("S3_UPLOAD_PART_MIN_SIZE", "1024")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("moto_server is missing: scripts/setup.sh test installs it (pip install 'moto[server]')");
            let mut moto = Moto { child, port };
            let deadline = Instant::now() + START_LIMIT;
            while Instant::now() < deadline {
                if let Ok(Some(_)) = moto.child.try_wait() {
                    break; // the port was taken meanwhile: try another
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return moto;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!("moto_server did not start on 127.0.0.1 within {START_LIMIT:?}");
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// An IAM request (form-encoded, signed for `iam`: moto picks the service from the
    /// signature's scope; not checked yet, it is one of the first three).
    fn iam(&self, params: &[(&str, &str)]) -> String {
        let body: String = params
            .iter()
            .chain(&[("Version", "2010-05-08")])
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    sigv4::uri_encode(k, true),
                    sigv4::uri_encode(v, true)
                )
            })
            .collect::<Vec<_>>()
            .join("&");
        let host = format!("127.0.0.1:{}", self.port);
        let headers = vec![
            (
                "Content-Type".to_string(),
                "application/x-www-form-urlencoded".to_string(),
            ),
            ("Content-Length".to_string(), body.len().to_string()),
        ];
        let signed = sigv4::sign(
            &Request {
                method: "POST",
                host: &host,
                path: "/",
                query: &[],
                headers: &headers,
                payload_hash: &sigv4::sha256_hex(body.as_bytes()),
            },
            &Credentials {
                access_key_id: "AKIASETUP".into(),
                secret_access_key: "setup".into(),
                session_token: None,
            },
            &Scope {
                region: "us-east-1",
                service: "iam",
                time: SystemTime::now(),
            },
        );
        let r = HttpRequest {
            method: "POST",
            https: false,
            host: "127.0.0.1".into(),
            port: self.port,
            target: "/".into(),
            headers: signed.headers,
            body: body.into_bytes(),
        };
        let (status, _, body) = send(&r, &r.body);
        let body = String::from_utf8_lossy(&body).to_string();
        assert_eq!(status, 200, "IAM {params:?}: {body}");
        body
    }

    /// A user allowed everything, and its keys.
    fn user(&self) -> Credentials {
        self.iam(&[("Action", "CreateUser"), ("UserName", "bench")]);
        let keys = self.iam(&[("Action", "CreateAccessKey"), ("UserName", "bench")]);
        let policy = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#;
        self.iam(&[
            ("Action", "PutUserPolicy"),
            ("UserName", "bench"),
            ("PolicyName", "all"),
            ("PolicyDocument", policy),
        ]);
        Credentials {
            access_key_id: xml::element(&keys, "AccessKeyId").expect("an AccessKeyId"),
            secret_access_key: xml::element(&keys, "SecretAccessKey").expect("a SecretAccessKey"),
            session_token: None,
        }
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `r` with `body` on a new connection and reads the whole answer: the status,
/// the headers (names lowercase) and the body.
fn send(r: &HttpRequest, body: &[u8]) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = TcpStream::connect((r.host.as_str(), r.port)).unwrap();
    s.set_read_timeout(Some(IO_LIMIT)).unwrap();
    s.set_write_timeout(Some(IO_LIMIT)).unwrap();
    let mut head = format!("{} {} HTTP/1.1\r\n", r.method, r.target);
    for (n, v) in &r.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("connection: close\r\n\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let text = String::from_utf8_lossy(&answer[..end]).to_string();
    let mut lines = text.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, answer[end + 4..].to_vec())
}

fn bucket(moto: &Moto, creds: Credentials) -> Bucket {
    let settings = Settings {
        credentials: Some(creds),
        origin: "test".into(),
        region: "eu-west-1".into(),
        endpoint: Some(Endpoint::parse(&moto.endpoint()).unwrap()),
        addressing: None,
    };
    Bucket::new("bench", settings, None)
}

/// Bytes that differ at every offset a wrong range could start from.
fn data(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[test]
#[ignore = "needs moto (scripts/setup.sh test); run by make test"]
fn signed_requests_against_moto_with_authentication_on() {
    let moto = Moto::start();
    let creds = moto.user();
    let b = bucket(&moto, creds.clone());
    let now = SystemTime::now;

    let create = b.create_bucket(now());
    let (status, _, body) = send(&create, &create.body);
    assert_eq!(
        status,
        200,
        "CreateBucket: {}",
        String::from_utf8_lossy(&body)
    );

    let object = data(100_000, 1);
    let (status, _, body) = send(&b.put_object("runs/obj", &object, now()), &object);
    assert_eq!(status, 200, "PUT: {}", String::from_utf8_lossy(&body));

    let (status, headers, _) = send(&b.head("runs/obj", now()), b"");
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-length"), Some("100000"));

    let (status, headers, body) = send(&b.get_range("runs/obj", 1000, 5000, now()), b"");
    assert_eq!(status, 206);
    assert_eq!(
        header(&headers, "content-range"),
        Some("bytes 1000-5999/100000")
    );
    assert!(body == object[1000..6000], "the range's bytes differ");

    // Multipart: three parts, the last one shorter, then the whole object read back.
    let (status, _, body) = send(&b.create_multipart_upload("runs/multi", now()), b"");
    let body = String::from_utf8_lossy(&body).to_string();
    assert_eq!(status, 200, "CreateMultipartUpload: {body}");
    let upload_id = xml::element(&body, "UploadId").expect("an UploadId");
    let parts = [data(4096, 2), data(4096, 3), data(1000, 4)];
    let mut etags = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let r = b.upload_part("runs/multi", &upload_id, i as u32 + 1, part, now());
        let (status, headers, body) = send(&r, part);
        assert_eq!(
            status,
            200,
            "UploadPart {}: {}",
            i + 1,
            String::from_utf8_lossy(&body)
        );
        etags.push(header(&headers, "etag").expect("an ETag").to_string());
    }
    let done = b.complete_multipart_upload("runs/multi", &upload_id, &etags, now());
    let (status, _, body) = send(&done, &done.body);
    assert_eq!(status, 200, "Complete: {}", String::from_utf8_lossy(&body));
    let whole = parts.concat();
    let (status, _, body) = send(
        &b.get_range("runs/multi", 0, whole.len() as u64, now()),
        b"",
    );
    assert_eq!(status, 206);
    assert!(body == whole, "the multipart object's bytes differ");

    // A wrong secret and an unknown key are refused, with S3's own codes.
    let wrong = Credentials {
        secret_access_key: "not-the-secret".into(),
        ..creds.clone()
    };
    for (creds, code) in [
        (wrong, "SignatureDoesNotMatch"),
        (
            Credentials {
                access_key_id: "AKIAUNKNOWN000000000".into(),
                ..creds
            },
            "InvalidAccessKeyId",
        ),
    ] {
        let (status, _, body) = send(
            &bucket(&moto, creds).get_range("runs/obj", 0, 10, now()),
            b"",
        );
        let body = String::from_utf8_lossy(&body).to_string();
        assert_eq!(status, 403, "{body}");
        assert_eq!(xml::element(&body, "Code").as_deref(), Some(code), "{body}");
    }
}

/// moto's server: the one scripts/setup.sh installs in target/tools-venv, else PATH's.
fn moto_server() -> std::path::PathBuf {
    let venv =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools-venv/bin/moto_server");
    if venv.exists() {
        venv
    } else {
        "moto_server".into()
    }
}
