//! A real S3 API server for the tests: moto's standalone server on 127.0.0.1 with
//! request authentication on (after the three requests that make the IAM user whose keys
//! sign everything else), and a bare request sender to reach it without bb-seek.

use boardbench::s3::sigv4::{self, Credentials, Request, Scope};
use boardbench::s3::{xml, HttpRequest};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// How long moto may take to start (it imports every AWS service it mocks).
const START_LIMIT: Duration = Duration::from_secs(60);
const IO_LIMIT: Duration = Duration::from_secs(30);

/// A moto server on 127.0.0.1, killed and reaped when dropped (a failed assertion too).
pub struct Moto {
    child: Child,
    pub port: u16,
}

impl Moto {
    /// Starts moto with authentication on after the first three requests, which set up
    /// the IAM user whose keys sign everything else.
    pub fn start() -> Moto {
        for _ in 0..3 {
            let port = super::free_port();
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

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// An IAM request (form-encoded, signed for `iam`: moto picks the service from the
    /// signature's scope; not checked yet, it is one of the first three).
    pub fn iam(&self, params: &[(&str, &str)]) -> String {
        let setup = Credentials {
            access_key_id: "AKIASETUP".into(),
            secret_access_key: "setup".into(),
            session_token: None,
        };
        self.iam_as(&setup, params)
    }

    /// An IAM request signed with `creds` (after the first three, moto checks them).
    pub fn iam_as(&self, creds: &Credentials, params: &[(&str, &str)]) -> String {
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
            creds,
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
    pub fn user(&self) -> Credentials {
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

impl Moto {
    /// A role that `user` may assume, allowed everything; its ARN.
    pub fn role(&self, user: &Credentials, name: &str) -> String {
        let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}"#;
        let made = self.iam_as(
            user,
            &[
                ("Action", "CreateRole"),
                ("RoleName", name),
                ("AssumeRolePolicyDocument", trust),
            ],
        );
        let all = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#;
        self.iam_as(
            user,
            &[
                ("Action", "PutRolePolicy"),
                ("RoleName", name),
                ("PolicyName", "all"),
                ("PolicyDocument", all),
            ],
        );
        xml::element(&made, "Arn").expect("a role's Arn")
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
pub fn send(r: &HttpRequest, body: &[u8]) -> (u16, Vec<(String, String)>, Vec<u8>) {
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
