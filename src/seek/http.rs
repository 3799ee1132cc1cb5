//! A small HTTP/1.1 client for object stores, written here rather than taken as a
//! dependency: ranged GETs over a keep-alive connection (206 and its Content-Range
//! checked, Content-Length and chunked bodies, delivered piece by piece into a sink), HEAD
//! for sizes and PUT for uploads (bodies streamed with their length known up front), to
//! an [`Origin`] that makes each request's line and headers (a plain URL prefix here, a
//! signed S3 bucket in [`super::s3`]) and says why a refusal came. A
//! server that ignores Range (answers 200), a redirect, an error status, a truncated body
//! or a connection closed early is a clear error, never a wrong byte; one that is silent or
//! drips its answer is an error at the request's deadline (`--request-timeout`).
//! `https://` goes through [`tls`](super::tls) in builds with the `tls` feature.

use crate::util::error::{Error, Result};
use crate::util::format::printable;
use crate::s3::sigv4::{Sha256Writer, UNSIGNED_PAYLOAD};
use crate::s3::Payload;
use crate::seek::source::{Buffers, Sink, Source};
#[cfg(feature = "tls")]
use crate::net::tls;
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a request may take, connect and retry included, unless `--request-timeout`
/// says otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// An upload's deadline grows by this per MiB of its body (a floor of 1 MiB/s).
const UPLOAD_TIME_PER_MIB: Duration = Duration::from_secs(1);
/// The most bytes a response head may have.
const MAX_HEAD: usize = 64 << 10;
/// The most bytes of a body read whole: an error document, an S3 answer.
const MAX_SMALL_BODY: u64 = 1 << 20;

/// One request to an origin: what it asks of which object.
pub(crate) struct Ask<'a> {
    pub method: &'static str,
    /// The object's name; `None`: the place the objects are in (an S3 bucket).
    pub name: Option<&'a str>,
    pub query: &'a [(&'a str, &'a str)],
    /// `offset` and `len` (> 0) of a ranged GET.
    pub range: Option<(u64, u64)>,
    /// The body a PUT or POST sends.
    pub body: Option<Payload>,
}

impl<'a> Ask<'a> {
    pub fn new(method: &'static str, name: Option<&'a str>) -> Ask<'a> {
        Ask {
            method,
            name,
            query: &[],
            range: None,
            body: None,
        }
    }
}

/// Where requests go and what they look like: a plain URL prefix, or an S3 bucket whose
/// requests are signed.
pub(crate) trait Origin: Send + Sync {
    /// The server to connect to (its prefix is the origin's business).
    fn server(&self) -> &Url;
    /// The request line and the headers, `Host` first, each line ending in CRLF.
    fn head(&self, ask: &Ask) -> String;
    /// Object `name` (`None`: the place itself) as messages name it.
    fn describe(&self, name: Option<&str>) -> String;
    /// Whether a body's SHA-256 goes into the request (else `UNSIGNED-PAYLOAD` will do).
    fn hashes_bodies(&self) -> bool {
        false
    }
    /// Why a response that was not asked for came, from its head and body, when the
    /// origin knows more than the status line says.
    fn explain(&self, _head: &Head, _body: &[u8]) -> Option<String> {
        None
    }
    /// Whether a failed HEAD, which has no body, is asked again as a GET of one byte to
    /// learn why (S3 says why in bodies).
    fn explains_in_bodies(&self) -> bool {
        false
    }
    /// Whether an answer says the object is simply not there (not, say, its bucket).
    fn is_missing(&self, answer: &Answer) -> bool {
        matches!(answer.head.status, 404 | 410)
    }
}

impl Origin for Url {
    fn server(&self) -> &Url {
        self
    }

    fn head(&self, ask: &Ask) -> String {
        let mut head = format!(
            "{} {}{} HTTP/1.1\r\nHost: {}\r\n",
            ask.method,
            self.prefix,
            ask.name.unwrap_or(""),
            self.host_header()
        );
        if let Some((offset, len)) = ask.range {
            head.push_str(&format!("Range: bytes={}-{}\r\n", offset, offset + len - 1));
        }
        if let Some(body) = &ask.body {
            head.push_str(&format!(
                "Content-Length: {}\r\nContent-Type: text/plain\r\n",
                body.len
            ));
        }
        head
    }

    fn describe(&self, name: Option<&str>) -> String {
        self.object(name.unwrap_or(""))
    }
}

/// `http://HOST[:PORT]/PREFIX/` or `https://...`: where objects live; an object's URL is
/// the prefix followed by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// Over TLS (`https://`).
    pub https: bool,
    pub host: String,
    pub port: u16,
    /// The path before object names, starting and ending with `/`.
    pub prefix: String,
}

impl Url {
    pub fn parse(s: &str) -> std::result::Result<Url, String> {
        let (https, rest) = match s.split_once("://") {
            Some(("http", rest)) => (false, rest),
            Some(("https", rest)) if cfg!(feature = "tls") => (true, rest),
            Some(("https", _)) => return Err(format!("'{s}': {}", crate::net::tls::MISSING)),
            _ => {
                return Err(format!(
                    "invalid URL '{s}' (expected http://HOST:PORT/PREFIX/)"
                ))
            }
        };
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let bad = || format!("invalid URL '{s}' (expected http://HOST:PORT/PREFIX/)");
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (h, p.parse::<u16>().map_err(|_| bad())?),
            _ => (authority, Url::default_port(https)),
        };
        if host.is_empty() || path.contains(['?', '#', ' ']) {
            return Err(bad());
        }
        let mut prefix = if path.is_empty() {
            "/".to_string()
        } else {
            path.to_string()
        };
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        Ok(Url {
            https,
            host: host.to_string(),
            port,
            prefix,
        })
    }

    /// The server at `host` and `port`, as a URL of prefix `/`.
    pub(crate) fn for_server(
        host: &str,
        port: u16,
        https: bool,
    ) -> std::result::Result<Url, String> {
        if https && !cfg!(feature = "tls") {
            return Err(format!("https://{host}: {}", crate::net::tls::MISSING));
        }
        Ok(Url {
            https,
            host: host.to_string(),
            port,
            prefix: "/".into(),
        })
    }

    fn default_port(https: bool) -> u16 {
        if https {
            443
        } else {
            80
        }
    }

    /// The `Host` header's value.
    fn host_header(&self) -> String {
        if self.port == Url::default_port(self.https) {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The URL of object `name`, for messages.
    pub fn object(&self, name: &str) -> String {
        format!("{self}{name}")
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}{}", self.host_header(), self.prefix)
    }
}

/// A response's status line and headers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Head {
    pub status: u16,
    pub reason: String,
    /// Whether the server will keep the connection open after this response.
    pub keep_alive: bool,
    headers: Vec<(String, String)>,
}

impl Head {
    /// A header's value (names compare case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body's length; two Content-Length headers that disagree are an error (which
    /// one framed the body is anybody's guess), equal ones are one.
    fn content_length(&self) -> std::result::Result<Option<u64>, String> {
        let mut length: Option<u64> = None;
        for (_, v) in self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        {
            let n: u64 = v
                .trim()
                .parse()
                .map_err(|_| format!("invalid Content-Length '{}'", printable(v)))?;
            match length {
                Some(m) if m != n => {
                    return Err(format!(
                        "two different Content-Length headers ({m} and {n})"
                    ))
                }
                _ => length = Some(n),
            }
        }
        Ok(length)
    }

    fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    }

    pub fn status_line(&self) -> String {
        format!("{} {}", self.status, printable(&self.reason))
    }
}

/// Interim (1xx) responses skipped before the final one, at most.
const MAX_INTERIM: usize = 8;

/// Reads the final response's status line and headers: interim responses (100 Continue,
/// 103 Early Hints), which have no body, are skipped.
fn read_head<R: BufRead>(r: &mut R) -> std::result::Result<Head, String> {
    for _ in 0..=MAX_INTERIM {
        let head = read_one_head(r)?;
        if !(100..=199).contains(&head.status) || head.status == 101 {
            return Ok(head);
        }
    }
    Err(format!(
        "more than {MAX_INTERIM} interim (1xx) responses before the answer"
    ))
}

/// Reads one response's status line and headers.
fn read_one_head<R: BufRead>(r: &mut R) -> std::result::Result<Head, String> {
    let mut taken = 0;
    let mut line = |first: bool| -> std::result::Result<String, String> {
        let mut buf = Vec::new();
        let n = r
            .by_ref()
            .take((MAX_HEAD - taken) as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| network_error("reading the response", e))?;
        taken += n;
        if n == 0 {
            return Err(if first {
                "the server closed the connection without answering".to_string()
            } else {
                "the server closed the connection in the middle of the response head".to_string()
            });
        }
        if taken > MAX_HEAD {
            return Err(format!("the response head is longer than {MAX_HEAD} bytes"));
        }
        if !buf.ends_with(b"\n") {
            return Err(
                "the server closed the connection in the middle of the response head".into(),
            );
        }
        Ok(String::from_utf8_lossy(&buf)
            .trim_end_matches(['\r', '\n'])
            .to_string())
    };
    let status_line = line(true)?;
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    // Exactly three digits, 100 to 599 (RFC 9110, 9112): "21", "+206" or "020" is none.
    let status = parts
        .next()
        .filter(|s| s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..=599).contains(s));
    let (Some(status), true) = (status, version.starts_with("HTTP/1.")) else {
        return Err(format!(
            "not an HTTP/1.x response: '{}'",
            printable(&status_line)
        ));
    };
    let reason = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let l = line(false)?;
        if l.is_empty() {
            break;
        }
        let (name, value) = l
            .split_once(':')
            .ok_or_else(|| format!("malformed header line '{}'", printable(&l)))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let mut head = Head {
        status,
        reason,
        keep_alive: true,
        headers,
    };
    let connection = head.header("connection").unwrap_or("").to_ascii_lowercase();
    head.keep_alive = if version == "HTTP/1.0" {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close")
    };
    Ok(head)
}

/// Writes incoming bytes into a sink, counting them.
struct Filler<'s> {
    sink: &'s mut dyn Sink,
    wanted: u64,
    total: u64,
}

impl Filler<'_> {
    /// Reads exactly `n` bytes of `r` into the sink (`None`: until the end of `r`).
    fn take_from<R: Read>(&mut self, r: &mut R, n: Option<u64>) -> std::result::Result<(), String> {
        let mut left = n.unwrap_or(u64::MAX);
        while left > 0 {
            if self.total == self.wanted {
                if n.is_none() {
                    let mut probe = [0u8; 1];
                    if matches!(r.read(&mut probe), Ok(0)) {
                        return Ok(());
                    }
                }
                return Err(format!(
                    "the body is longer than the {} bytes asked for",
                    self.wanted
                ));
            }
            let max = (self.wanted - self.total).min(left);
            let buf = self.sink.space(usize::try_from(max).unwrap_or(usize::MAX));
            let got = r
                .read(buf)
                .map_err(|e| network_error("reading the body", e))?;
            if got == 0 {
                if n.is_none() {
                    return Ok(());
                }
                return Err(format!(
                    "the server closed the connection after {} of the body's bytes (truncated body)",
                    self.total
                ));
            }
            self.sink.advance(got);
            self.total += got as u64;
            left -= got as u64;
        }
        Ok(())
    }
}

/// Reads the body that follows `head`, which must be exactly `wanted` bytes (`exact`) or
/// at most that many, into `sink`; returns its length.
fn read_body<R: BufRead>(
    r: &mut R,
    head: &Head,
    wanted: u64,
    exact: bool,
    sink: &mut dyn Sink,
) -> std::result::Result<u64, String> {
    let mut filler = Filler {
        sink,
        wanted,
        total: 0,
    };
    if head.chunked() {
        loop {
            let mut size_line = String::new();
            r.by_ref()
                .take(1024)
                .read_line(&mut size_line)
                .map_err(|e| network_error("reading a chunk size", e))?;
            if !size_line.ends_with('\n') {
                return Err(format!(
                    "the server closed the connection after {} of the body's bytes (truncated chunked body)",
                    filler.total
                ));
            }
            let hex = size_line.split(';').next().unwrap_or("").trim();
            let size = u64::from_str_radix(hex, 16)
                .map_err(|_| format!("malformed chunk size '{}'", printable(size_line.trim())))?;
            if size == 0 {
                // Trailers, up to the empty line: as much as a response head, at most.
                let mut trailers = 0;
                loop {
                    let mut t = String::new();
                    let n = r
                        .by_ref()
                        .take((MAX_HEAD - trailers) as u64 + 1)
                        .read_line(&mut t)
                        .map_err(|e| network_error("reading the trailers", e))?;
                    trailers += n;
                    if trailers > MAX_HEAD {
                        return Err(format!("the trailers are longer than {MAX_HEAD} bytes"));
                    }
                    if n == 0 || t.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            if size > wanted - filler.total {
                return Err(format!(
                    "the body is longer than the {wanted} bytes asked for"
                ));
            }
            filler.take_from(r, Some(size))?;
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf)
                .map_err(|_| "the chunked body is truncated after a chunk".to_string())?;
            if &crlf != b"\r\n" {
                return Err("malformed chunked body (no CRLF after a chunk)".into());
            }
        }
    } else {
        match head.content_length()? {
            Some(n) if n != wanted && (exact || n > wanted) => {
                return Err(format!(
                    "the body has {n} bytes (Content-Length), expected {wanted}"
                ))
            }
            Some(n) => filler.take_from(r, Some(n))?,
            // Without a length, only the end of the connection ends the body: on one that
            // stays open that would be a wait for the timeout.
            None if head.keep_alive => {
                return Err(format!(
                    "{}: a body without Content-Length or chunked encoding on a kept-alive connection has no end",
                    head.status_line()
                ))
            }
            None => filler.take_from(r, None)?,
        }
    }
    if exact && filler.total != wanted {
        return Err(format!(
            "the body has {} bytes, expected {wanted} (truncated body)",
            filler.total
        ));
    }
    Ok(filler.total)
}

/// A sink that grows a vector, up to its capacity.
struct Growing(Vec<u8>, usize);

impl Sink for Growing {
    fn space(&mut self, max: usize) -> &mut [u8] {
        let at = self.0.len();
        let n = max.min(self.0.capacity() - at).min(64 << 10);
        self.0.resize(at + n, 0);
        self.1 = at;
        &mut self.0[at..]
    }

    fn advance(&mut self, n: usize) {
        self.0.truncate(self.1 + n);
    }
}

/// Checks that `head` answers a GET of `len` bytes from `offset` with exactly that range.
fn check_range(head: &Head, offset: u64, len: u64, size: u64) -> std::result::Result<(), String> {
    match head.status {
        206 => {}
        200 => {
            return Err(
                "the server ignores Range requests: it answered 200 with the whole object instead of 206 with the range \
                 (enable range support, or use another server)"
                    .into(),
            )
        }
        _ => return Err(unexpected(head)),
    }
    let expected = format!("bytes {}-{}/{size}", offset, offset + len - 1);
    match head.header("content-range") {
        Some(v) if v.trim() == expected => Ok(()),
        Some(v) => Err(format!(
            "the server sent Content-Range '{}', expected '{expected}'",
            printable(v)
        )),
        None => Err(format!(
            "the 206 response has no Content-Range (expected '{expected}')"
        )),
    }
}

/// The message for a status that was not asked for: redirects say where to.
fn unexpected(head: &Head) -> String {
    match (head.status, head.header("location")) {
        (300..=399, Some(to)) => format!(
            "the server redirected ({}) to {}: redirects are not followed; point --source at the final URL",
            head.status_line(),
            printable(to)
        ),
        (300..=399, None) => format!("the server redirected ({}) without a Location", head.status_line()),
        _ => format!("the server answered {}", head.status_line()),
    }
}

fn network_error(what: &str, e: std::io::Error) -> String {
    format!("{what}: {e}")
}

/// `30s`, `0.5s`: a timeout, for a message.
fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// A socket whose every read and write must end by one deadline, the request's, however
/// the server paces its bytes (a silent server, a body dripped a byte at a time).
struct Deadlined {
    stream: TcpStream,
    deadline: Instant,
    /// The whole request's time, for the message.
    allowed: Duration,
}

impl Deadlined {
    fn left(&self) -> std::io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(self.expired())
        } else {
            Ok(left)
        }
    }

    fn expired(&self) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "the request was not done within {} (--request-timeout)",
                seconds(self.allowed)
            ),
        )
    }

    /// The socket's own timeouts (EAGAIN) read as the deadline's.
    fn timed<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        match r {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(self.expired())
            }
            r => r,
        }
    }
}

impl Read for Deadlined {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream.set_read_timeout(Some(self.left()?))?;
        let r = self.stream.read(buf);
        self.timed(r)
    }
}

impl Write for Deadlined {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream.set_write_timeout(Some(self.left()?))?;
        let r = self.stream.write(buf);
        self.timed(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a connection's bytes go through: the deadlined socket itself, or a TLS session
/// over it, each of whose socket reads and writes (the handshake's too) is bounded by the
/// same deadline.
enum Transport {
    Plain(Deadlined),
    #[cfg(feature = "tls")]
    Tls(Box<tls::TlsStream<Deadlined>>),
}

impl Transport {
    /// Over TLS when `url` is https, with its host's certificate checked.
    #[cfg(feature = "tls")]
    fn new(url: &Url, socket: Deadlined) -> std::result::Result<Transport, String> {
        match url.https {
            true => Ok(Transport::Tls(Box::new(tls::connect(&url.host, socket)?))),
            false => Ok(Transport::Plain(socket)),
        }
    }

    #[cfg(not(feature = "tls"))]
    fn new(url: &Url, socket: Deadlined) -> std::result::Result<Transport, String> {
        match url.https {
            true => Err(crate::net::tls::MISSING.to_string()),
            false => Ok(Transport::Plain(socket)),
        }
    }

    /// The socket underneath, whose deadline each request sets.
    fn socket(&mut self) -> &mut Deadlined {
        match self {
            Transport::Plain(socket) => socket,
            #[cfg(feature = "tls")]
            Transport::Tls(tls) => &mut tls.sock,
        }
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.read(buf),
            #[cfg(feature = "tls")]
            Transport::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.write(buf),
            #[cfg(feature = "tls")]
            Transport::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Transport::Plain(socket) => socket.flush(),
            #[cfg(feature = "tls")]
            Transport::Tls(tls) => tls.flush(),
        }
    }
}

/// One keep-alive connection to a server.
struct Connection {
    reader: BufReader<Transport>,
    /// Whether a response has come over it: a reused connection may have been closed by
    /// the server while idle, and a request that fails on it is retried once.
    used: bool,
}

impl Connection {
    fn open(
        url: &Url,
        deadline: Instant,
        allowed: Duration,
    ) -> std::result::Result<Connection, String> {
        let addrs: Vec<_> = (url.host.trim_matches(['[', ']']), url.port)
            .to_socket_addrs()
            .map_err(|e| format!("resolving {}: {e}", url.host))?
            .collect();
        let mut last = format!("{} resolves to no address", url.host);
        for addr in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "connecting to {addr}: not connected within {} (--request-timeout)",
                    seconds(allowed)
                ));
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    let socket = Deadlined {
                        stream,
                        deadline,
                        allowed,
                    };
                    return Ok(Connection {
                        reader: BufReader::with_capacity(64 << 10, Transport::new(url, socket)?),
                        used: false,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    last = format!(
                        "connecting to {addr}: not connected within {} (--request-timeout)",
                        seconds(allowed)
                    )
                }
                Err(e) => last = network_error(&format!("connecting to {addr}"), e),
            }
        }
        Err(last)
    }

    /// Sends the request's head, then its body as `body` writes it (and what TLS keeps
    /// back).
    fn send(&mut self, request: &[u8], body: &mut Body) -> std::io::Result<()> {
        let stream = self.reader.get_mut();
        stream.write_all(request)?;
        body(stream)?;
        stream.flush()
    }
}

/// Writes a request's body (its length is in the head), as many times as it is sent.
pub(crate) type Body<'a> = dyn FnMut(&mut dyn Write) -> std::io::Result<()> + 'a;

/// A response read whole: its head and its (small) body.
pub(crate) struct Answer {
    pub head: Head,
    pub body: Vec<u8>,
}

/// A client of one origin: keeps one connection open between requests.
pub(crate) struct HttpClient {
    origin: Arc<dyn Origin>,
    connection: Option<Connection>,
    /// How long each request may take.
    timeout: Duration,
}

impl HttpClient {
    pub(crate) fn new(origin: Arc<dyn Origin>, timeout: Duration) -> HttpClient {
        HttpClient {
            origin,
            connection: None,
            timeout,
        }
    }

    pub(crate) fn origin(&self) -> &dyn Origin {
        &*self.origin
    }

    /// Sends `ask` and reads the response head; the caller reads the body (if any) from
    /// the returned connection, then calls [`HttpClient::done`]. All of it, the retry on
    /// a fresh connection included, is bounded by one deadline: the request timeout, plus
    /// [`UPLOAD_TIME_PER_MIB`] for a body.
    fn request(
        &mut self,
        ask: &Ask,
        body: &mut Body,
    ) -> std::result::Result<(Head, &mut Connection), String> {
        let request = format!("{}User-Agent: bb-seek\r\n\r\n", self.origin.head(ask));
        let body_len = ask.body.as_ref().map_or(0, |b| b.len);
        let allowed =
            self.timeout + UPLOAD_TIME_PER_MIB.mul_f64(body_len as f64 / (1 << 20) as f64);
        let deadline = Instant::now() + allowed;
        let mut first_failure: Option<String> = None;
        loop {
            if self.connection.is_none() {
                self.connection = Some(
                    Connection::open(self.origin.server(), deadline, allowed)
                        .map_err(|e| retried(e, &first_failure))?,
                );
            }
            let c = self.connection.as_mut().expect("just opened");
            c.reader.get_mut().socket().deadline = deadline;
            c.reader.get_mut().socket().allowed = allowed;
            let reused = c.used;
            let answer = c
                .send(request.as_bytes(), body)
                .map_err(|e| network_error("sending the request", e))
                .and_then(|_| read_head(&mut c.reader));
            match answer {
                Ok(head) => {
                    let c = self.connection.as_mut().expect("still open");
                    c.used = true;
                    return Ok((head, c));
                }
                // An idle keep-alive connection the server closed: once more, afresh,
                // within the same deadline.
                Err(e) if reused && first_failure.is_none() && Instant::now() < deadline => {
                    self.connection = None;
                    first_failure = Some(e);
                }
                Err(e) => {
                    self.connection = None;
                    return Err(retried(e, &first_failure));
                }
            }
        }
    }

    /// After a response was read whole: keeps the connection if the server keeps it.
    fn done(&mut self, head: &Head, ok: bool) {
        if !ok || !head.keep_alive {
            self.connection = None;
        }
    }

    /// What a request is called in messages: `GET s3://bucket/key`.
    fn what(&self, ask: &Ask) -> String {
        format!("{} {}", ask.method, self.origin.describe(ask.name))
    }

    /// Sends `ask` with `body` and reads the whole answer, whatever its status; a body
    /// over [`MAX_SMALL_BODY`] is an error.
    pub(crate) fn call(&mut self, ask: &Ask, body: &mut Body) -> Result<Answer> {
        let what = self.what(ask);
        let fail = |e: String| Error::failed(format!("{what}: {e}"));
        let (head, c) = self.request(ask, body).map_err(fail)?;
        let read = if ask.method == "HEAD" || matches!(head.status, 204 | 304) {
            Ok(Vec::new())
        } else {
            read_small_body(&mut c.reader, &head)
        };
        self.done(&head, read.is_ok());
        Ok(Answer {
            body: read.map_err(fail)?,
            head,
        })
    }

    /// The error for an answer that was not asked for: why, as the origin explains it,
    /// else the status line.
    pub(crate) fn refused(&self, ask: &Ask, answer: &Answer) -> Error {
        Error::failed(format!("{}: {}", self.what(ask), self.why(answer)))
    }

    /// Why `answer` came: as the origin explains it, else its status line.
    fn why(&self, answer: &Answer) -> String {
        self.origin
            .explain(&answer.head, &answer.body)
            .unwrap_or_else(|| unexpected(&answer.head))
    }

    /// The size of object `name` (HEAD), or None when the server has no such object.
    pub(crate) fn size(&mut self, name: &str) -> Result<Option<u64>> {
        let ask = Ask::new("HEAD", Some(name));
        let answer = self.call(&ask, &mut |_| Ok(()))?;
        match answer.head.status {
            200 => match answer.head.content_length() {
                Ok(Some(n)) => Ok(Some(n)),
                Ok(None) => Err(Error::failed(format!(
                    "{}: the answer has no Content-Length",
                    self.what(&ask)
                ))),
                Err(e) => Err(Error::failed(format!("{}: {e}", self.what(&ask)))),
            },
            // Why it failed, from a bodied answer to the same question where only a
            // body tells (a missing object, or a missing bucket).
            _ if self.origin.explains_in_bodies() => {
                let mut get = Ask::new("GET", Some(name));
                get.range = Some((0, 1));
                let why = self.call(&get, &mut |_| Ok(()))?;
                if self.origin.is_missing(&why) {
                    Ok(None)
                } else {
                    Err(self.refused(&ask, &why))
                }
            }
            _ if self.origin.is_missing(&answer) => Ok(None),
            _ => Err(self.refused(&ask, &answer)),
        }
    }

    /// Reads `len` bytes of object `name` from `offset` into `sink` with one ranged GET.
    fn get_range(
        &mut self,
        name: &str,
        offset: u64,
        len: u64,
        size: u64,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let mut ask = Ask::new("GET", Some(name));
        ask.range = Some((offset, len));
        let what = format!("{} bytes {offset}+{len}", self.what(&ask));
        let fail = |e: String| Error::failed(format!("{what}: {e}"));
        let (head, c) = self.request(&ask, &mut |_| Ok(())).map_err(fail)?;
        if !matches!(head.status, 200 | 206) {
            let body = read_small_body(&mut c.reader, &head).unwrap_or_default();
            self.done(&head, false);
            return Err(fail(self.why(&Answer { head, body })));
        }
        let result = check_range(&head, offset, len, size)
            .and_then(|_| read_body(&mut c.reader, &head, len, true, sink));
        self.done(&head, result.is_ok());
        result.map(|_| ()).map_err(fail)
    }

    /// Sends `ask`'s body as `body` writes it (in pieces: nothing here holds it), and
    /// returns the answer when it is a success.
    pub(crate) fn send_body(&mut self, ask: &Ask, body: &mut Body) -> Result<Answer> {
        let answer = self.call(ask, body)?;
        match answer.head.status {
            200..=299 => Ok(answer),
            405 if !self.origin.explains_in_bodies() => Err(Error::failed(format!(
                "{}: {}: the server does not accept uploads here (nginx needs `dav_methods PUT;`)",
                self.what(ask),
                answer.head.status_line()
            ))),
            _ => Err(self.refused(ask, &answer)),
        }
    }

    /// Uploads object `name` of `len` bytes with PUT, its body written by `body` (in
    /// pieces: nothing here holds it).
    pub(crate) fn put(&mut self, name: &str, len: u64, body: &mut Body) -> Result<()> {
        let mut ask = Ask::new("PUT", Some(name));
        ask.body = Some(self.payload(len, body)?);
        self.send_body(&ask, body).map(|_| ())
    }

    /// The payload of a body of `len` bytes that `body` writes: hashed when the origin
    /// signs bodies (the body written once into the hash, so not held, and once more
    /// when it is sent), else `UNSIGNED-PAYLOAD`.
    pub(crate) fn payload(&self, len: u64, body: &mut Body) -> Result<Payload> {
        let sha256 = if self.origin.hashes_bodies() {
            let mut hasher = Sha256Writer::default();
            body(&mut hasher).map_err(|e| Error::io("hashing a body", e))?;
            hasher.hex()
        } else {
            UNSIGNED_PAYLOAD.to_string()
        };
        Ok(Payload { len, sha256 })
    }
}

/// Reads a body of at most [`MAX_SMALL_BODY`] bytes whole.
fn read_small_body<R: BufRead>(r: &mut R, head: &Head) -> std::result::Result<Vec<u8>, String> {
    let max = match head.content_length()? {
        Some(n) if n > MAX_SMALL_BODY => {
            return Err(format!(
                "{}: a body of {n} bytes where a short answer was expected",
                head.status_line()
            ))
        }
        Some(n) => n,
        None => MAX_SMALL_BODY,
    };
    let mut sink = Growing(Vec::with_capacity(max as usize), 0);
    read_body(r, head, max, false, &mut sink)?;
    Ok(sink.0)
}

/// An error, with the one that made the request retry on a fresh connection, if it did.
fn retried(e: String, first: &Option<String>) -> String {
    match first {
        Some(first) => format!("{e} (on a retry on a fresh connection, after: {first})"),
        None => e,
    }
}

/// One object read with ranged GETs.
pub(crate) struct HttpSource {
    client: HttpClient,
    name: String,
    size: u64,
}

impl HttpSource {
    /// Checks that object `name` is there with `size` bytes (HEAD), keeping the
    /// connection; `gen` is the command that makes the objects, for messages.
    pub(crate) fn open(
        origin: Arc<dyn Origin>,
        name: &str,
        size: u64,
        timeout: Duration,
        gen: &str,
    ) -> Result<HttpSource> {
        let mut client = HttpClient::new(origin, timeout);
        let object = client.origin().describe(Some(name));
        match client.size(name)? {
            Some(n) if n == size => {}
            Some(n) => {
                return Err(Error::failed(format!(
                    "{object} has {n} bytes, expected {size} (run {gen})"
                )))
            }
            None => {
                return Err(Error::failed(format!(
                    "{object} is not there (404); upload the objects first: {gen}"
                )))
            }
        }
        Ok(HttpSource {
            client,
            name: name.to_string(),
            size,
        })
    }
}

impl Source for HttpSource {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&mut self, offset: u64, bufs: &mut [&mut [u8]]) -> Result<()> {
        let mut sink = Buffers::new(bufs);
        let len = sink.total();
        self.client
            .get_range(&self.name, offset, len, self.size, &mut sink)
    }

    fn read_into(&mut self, offset: u64, len: u64, sink: &mut dyn Sink) -> Result<()> {
        self.client
            .get_range(&self.name, offset, len, self.size, sink)
    }
}

/// Reads a response (interim ones skipped) and a body of `want` bytes from `bytes`, as a
/// ranged GET's answer is read: the entry of the `http_response` fuzz target.
#[doc(hidden)]
pub fn read_response(bytes: &[u8], want: usize) -> std::result::Result<(u16, Vec<u8>), String> {
    let mut r = bytes;
    let head = read_head(&mut r)?;
    let mut body = vec![0; want];
    read_body(
        &mut r,
        &head,
        want as u64,
        true,
        &mut super::source::Buffers::new(&mut [&mut body[..]]),
    )?;
    Ok((head.status, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Head {
        read_head(&mut text.as_bytes()).unwrap()
    }

    fn body(text: &str, want: usize) -> std::result::Result<Vec<u8>, String> {
        let mut r = text.as_bytes();
        let h = read_head(&mut r)?;
        let mut out = vec![0; want];
        let (a, b) = out.split_at_mut(want / 2);
        read_body(
            &mut r,
            &h,
            want as u64,
            true,
            &mut Buffers::new(&mut [a, b]),
        )?;
        Ok(out)
    }

    #[test]
    fn interim_responses_are_skipped_and_hostile_heads_are_clear_errors() {
        let text = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
                    HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/10\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(body(text, 5).unwrap(), b"hello");
        let endless = "HTTP/1.1 100 Continue\r\n\r\n".repeat(MAX_INTERIM + 2);
        assert!(read_head(&mut endless.as_bytes())
            .unwrap_err()
            .contains("interim"));
        // Found by the http_response fuzz target: a status of two digits was taken.
        for bad in [
            "HTTP/1.1 21 206 Partial\r\n\r\n",
            "HTTP/1.1 +20 OK\r\n\r\n",
            "HTTP/1.1 020 OK\r\n\r\n",
        ] {
            let e = read_head(&mut bad.as_bytes()).unwrap_err();
            assert!(e.contains("not an HTTP/1.x response"), "{e}");
        }
        let two = head("HTTP/1.1 206 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n");
        assert_eq!(
            two.content_length().unwrap_err(),
            "two different Content-Length headers (5 and 7)"
        );
        let same = head("HTTP/1.1 206 OK\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n");
        assert_eq!(same.content_length(), Ok(Some(5)));
        let e = read_head(&mut "HTTP/2 \x1b[2J200\r\n\r\n".as_bytes()).unwrap_err();
        assert!(!e.contains('\x1b') && e.contains("\\u{1b}"), "{e}");
        let e = body("HTTP/1.1 206 OK\r\n\r\nhello", 5).unwrap_err();
        assert!(e.contains("has no end"), "{e}");
        assert_eq!(
            body("HTTP/1.1 206 OK\r\nConnection: close\r\n\r\nhello", 5).unwrap(),
            b"hello"
        );
        let trailers = format!(
            "HTTP/1.1 206 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n{}\r\n",
            "X-T: y\r\n".repeat(MAX_HEAD)
        );
        assert!(body(&trailers, 5)
            .unwrap_err()
            .contains("trailers are longer"));
        let odd = head("HTTP/1.1 500 \x07bell\r\n\r\n");
        assert_eq!(odd.status_line(), "500 \\u{7}bell");
    }

    #[test]
    fn urls() {
        let u = Url::parse("http://127.0.0.1:8080/objects").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.prefix.as_str()),
            ("127.0.0.1", 8080, "/objects/")
        );
        assert_eq!(
            u.object("random-1mb.txt"),
            "http://127.0.0.1:8080/objects/random-1mb.txt"
        );
        let u = Url::parse("http://[::1]:9000/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("[::1]", 9000));
        assert_eq!(Url::parse("http://example/").unwrap().port, 80);
        for bad in [
            "ftp://x/",
            "http://:80/",
            "http://x:port/",
            "http://x/a?b",
            "x",
        ] {
            assert!(Url::parse(bad).unwrap_err().contains(bad), "{bad}");
        }
    }

    #[cfg(feature = "tls")]
    #[test]
    fn https_urls_default_to_port_443() {
        let u = Url::parse("https://s3.example.com/bucket").unwrap();
        assert_eq!(
            (u.https, u.port, u.host_header()),
            (true, 443, "s3.example.com".into())
        );
        assert_eq!(u.object("a.txt"), "https://s3.example.com/bucket/a.txt");
        let u = Url::parse("https://localhost:8443/").unwrap();
        assert_eq!(u.to_string(), "https://localhost:8443/");
        let u = Url::parse("http://x:443/").unwrap();
        assert_eq!((u.https, u.to_string()), (false, "http://x:443/".into()));
    }

    #[cfg(not(feature = "tls"))]
    #[test]
    fn https_needs_the_tls_feature() {
        let e = Url::parse("https://x/").unwrap_err();
        assert!(
            e.starts_with("'https://x/': this bb-seek was built without TLS")
                && e.contains("--features tls")
                && e.contains("make dist"),
            "{e}"
        );
    }

    #[test]
    fn content_length_body_206_with_its_range() {
        let h = head("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 10-14/100\r\nContent-Length: 5\r\n\r\n");
        check_range(&h, 10, 5, 100).unwrap();
        assert!(h.keep_alive);
        let e = check_range(&h, 10, 6, 100).unwrap_err();
        assert!(
            e.contains("Content-Range 'bytes 10-14/100', expected 'bytes 10-15/100'"),
            "{e}"
        );
        assert_eq!(
            body("HTTP/1.1 206 OK\r\ncontent-length: 5\r\n\r\nhello", 5).unwrap(),
            b"hello"
        );
    }

    #[test]
    fn chunked_bodies_are_decoded_across_buffers() {
        let text = "HTTP/1.1 206 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nhel\r\n4\r\nlo w\r\n0\r\nX-Trailer: t\r\n\r\n";
        assert_eq!(body(text, 7).unwrap(), b"hello w");
        let e = body(text, 6).unwrap_err();
        assert!(e.contains("longer than the 6 bytes"), "{e}");
        let e = body(
            "HTTP/1.1 206 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n",
            7,
        )
        .unwrap_err();
        assert!(e.contains("truncated"), "{e}");
        let e = body(
            "HTTP/1.1 206 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            7,
        )
        .unwrap_err();
        assert!(e.contains("malformed chunk size 'zz'"), "{e}");
    }

    #[test]
    fn a_server_ignoring_range_is_detected() {
        let h = head("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
        let e = check_range(&h, 10, 5, 100).unwrap_err();
        assert!(e.contains("ignores Range"), "{e}");
    }

    #[test]
    fn bad_content_range_redirects_and_errors_are_clear() {
        let h = head("HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\n\r\n");
        assert!(check_range(&h, 0, 5, 100)
            .unwrap_err()
            .contains("no Content-Range"));
        let h = head("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/99\r\n\r\n");
        assert!(check_range(&h, 0, 5, 100)
            .unwrap_err()
            .contains("'bytes 0-4/99'"));
        let h = head("HTTP/1.1 302 Found\r\nLocation: http://elsewhere/x\r\n\r\n");
        let e = check_range(&h, 0, 5, 100).unwrap_err();
        assert!(
            e.contains("redirected (302 Found) to http://elsewhere/x"),
            "{e}"
        );
        let h = head("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n");
        assert_eq!(
            check_range(&h, 0, 5, 100).unwrap_err(),
            "the server answered 403 Forbidden"
        );
        assert!(!h.keep_alive);
        assert!(!head("HTTP/1.0 206 OK\r\n\r\n").keep_alive);
    }

    #[test]
    fn truncated_bodies_and_early_closes_are_errors() {
        let e = body("HTTP/1.1 206 OK\r\nContent-Length: 5\r\n\r\nhel", 5).unwrap_err();
        assert!(
            e.contains("after 3 of the body's bytes (truncated body)"),
            "{e}"
        );
        let e = body("HTTP/1.1 206 OK\r\nContent-Length: 9\r\n\r\nhello", 5).unwrap_err();
        assert!(e.contains("9 bytes (Content-Length), expected 5"), "{e}");
        // No length and no chunks on a connection the server closes: the body runs to
        // the close, and must be exact (on a kept-alive one it is an error at once).
        let close = |rest: &str| format!("HTTP/1.1 206 OK\r\nConnection: close\r\n\r\n{rest}");
        assert_eq!(body(&close("hello"), 5).unwrap(), b"hello");
        assert!(body(&close("hell"), 5).unwrap_err().contains("truncated"));
        assert!(body(&close("hello!"), 5).unwrap_err().contains("longer"));
        let e = read_head(&mut &b""[..]).unwrap_err();
        assert!(e.contains("closed the connection without answering"), "{e}");
        let e = read_head(&mut &b"HTTP/1.1 206 OK\r\nContent-Le"[..]).unwrap_err();
        assert!(e.contains("in the middle of the response head"), "{e}");
        let e = read_head(&mut &b"SSH-2.0-OpenSSH\r\n\r\n"[..]).unwrap_err();
        assert!(e.contains("not an HTTP/1.x response"), "{e}");
    }
}
