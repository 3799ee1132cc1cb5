//! The client of one origin: each request within one deadline (retry included), over
//! the connection it keeps; answers read whole, sizes by HEAD, ranged GETs into a sink
//! (206 and its Content-Range checked), and uploads whose bodies are streamed, never held.
//! A server's transient failure (500, 502, 503, 504: S3's InternalError and SlowDown) is
//! retried as the AWS SDKs' standard retry mode does, up to the origin's
//! [`Origin::attempts`] attempts with exponential backoff and full jitter, all within the
//! request's one deadline, and counted ([`HttpClient::retries`]); never a 4xx.

use super::body::{read_body, read_small_body};
use super::connection::{Body, KeepAlive};
use super::head::{check_range, unexpected, Head};
use super::origin::{Answer, Ask, Origin, Payload};
use super::transport::Transport;
use crate::net::sink::Sink;
use crate::util::error::{Error, Result};
use std::io::BufReader;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An upload's deadline grows by this per MiB of its body (a floor of 1 MiB/s).
const UPLOAD_TIME_PER_MIB: Duration = Duration::from_secs(1);

/// A client of one origin: keeps one connection open between requests.
pub(crate) struct HttpClient {
    origin: Arc<dyn Origin>,
    connection: KeepAlive,
    /// How long each request may take, its retries included.
    timeout: Duration,
    /// Attempts per request at a transient failure: 1 is no retry.
    attempts: u32,
    /// Retries made so far.
    retries: u64,
    /// How many attempts the last answer of [`HttpClient::call`] took, for its refusal.
    attempted: u32,
    /// The jitter's generator (xorshift), seeded from the clock.
    jitter: u64,
}

/// The SDKs' standard retry mode: the backoff before retry `i` (from 1) is a random
/// share of `min(BACKOFF_BASE * 2^(i-1), MAX_BACKOFF)`.
const BACKOFF_BASE: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(20);

/// Whether a status is a transient failure of the server, worth another attempt.
pub(crate) fn transient(status: u16) -> bool {
    matches!(status, 500 | 502 | 503 | 504)
}

impl HttpClient {
    pub(crate) fn new(origin: Arc<dyn Origin>, timeout: Duration) -> HttpClient {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1;
        let attempts = origin.attempts().max(1);
        HttpClient {
            origin,
            connection: KeepAlive::default(),
            timeout,
            attempts,
            retries: 0,
            attempted: 1,
            jitter: seed,
        }
    }

    /// How many requests were sent again after a transient failure.
    pub(crate) fn retries(&self) -> u64 {
        self.retries
    }

    /// Whether attempt `attempt` (from 1), answered `status`, is followed by another,
    /// and if so waits the backoff first; not when the backoff would end past
    /// `deadline`.
    fn retry_after(&mut self, attempt: u32, status: u16, deadline: Instant) -> bool {
        if attempt >= self.attempts || !transient(status) {
            return false;
        }
        let cap = BACKOFF_BASE
            .saturating_mul(1 << (attempt - 1).min(16))
            .min(MAX_BACKOFF);
        self.jitter ^= self.jitter << 13;
        self.jitter ^= self.jitter >> 7;
        self.jitter ^= self.jitter << 17;
        let wait = cap.mul_f64((self.jitter >> 11) as f64 / (1u64 << 53) as f64);
        if Instant::now() + wait >= deadline {
            return false;
        }
        std::thread::sleep(wait);
        self.retries += 1;
        true
    }

    /// The deadline of a request with `ask`'s body, and how long that is.
    fn deadline(&self, ask: &Ask) -> (Instant, Duration) {
        let body_len = ask.body.as_ref().map_or(0, |b| b.len);
        let allowed =
            self.timeout + UPLOAD_TIME_PER_MIB.mul_f64(body_len as f64 / (1 << 20) as f64);
        (Instant::now() + allowed, allowed)
    }

    pub(crate) fn origin(&self) -> &dyn Origin {
        &*self.origin
    }

    /// Sends `ask` and reads the response head; the caller reads the body (if any) from
    /// the returned reader, then calls [`KeepAlive::done`]. All of it, the retry on a
    /// fresh connection included, is bounded by one deadline: the request timeout, plus
    /// [`UPLOAD_TIME_PER_MIB`] for a body.
    fn request(
        &mut self,
        ask: &Ask,
        body: &mut Body,
        (deadline, allowed): (Instant, Duration),
    ) -> std::result::Result<(Head, &mut BufReader<Transport>), String> {
        let request = format!("{}User-Agent: bb-seek\r\n\r\n", self.origin.head(ask));
        self.connection.exchange(
            self.origin.server(),
            request.as_bytes(),
            body,
            deadline,
            allowed,
        )
    }

    /// What a request is called in messages: `GET s3://bucket/key`.
    fn what(&self, ask: &Ask) -> String {
        format!("{} {}", ask.method, self.origin.describe(ask.name))
    }

    /// Sends `ask` with `body` and reads the whole answer, whatever its status; a body
    /// over [`MAX_SMALL_BODY`](super::body::MAX_SMALL_BODY) is an error.
    pub(crate) fn call(&mut self, ask: &Ask, body: &mut Body) -> Result<Answer> {
        let deadline = self.deadline(ask);
        let mut attempt = 1;
        loop {
            let answer = self.call_once(ask, body, deadline)?;
            if !self.retry_after(attempt, answer.head.status, deadline.0) {
                self.attempted = attempt;
                return Ok(answer);
            }
            attempt += 1;
        }
    }

    /// One attempt of [`HttpClient::call`], by `deadline`.
    fn call_once(
        &mut self,
        ask: &Ask,
        body: &mut Body,
        deadline: (Instant, Duration),
    ) -> Result<Answer> {
        let what = self.what(ask);
        let fail = |e: String| Error::failed(format!("{what}: {e}"));
        let (head, reader) = self.request(ask, body, deadline).map_err(fail)?;
        let read = if ask.method == "HEAD" || matches!(head.status, 204 | 304) {
            Ok(Vec::new())
        } else {
            read_small_body(reader, &head)
        };
        self.connection.done(&head, read.is_ok());
        Ok(Answer {
            body: read.map_err(fail)?,
            head,
        })
    }

    /// The error for an answer that was not asked for: why, as the origin explains it,
    /// else the status line.
    /// After a transient failure retried, the attempts are said too.
    pub(crate) fn refused(&self, ask: &Ask, answer: &Answer) -> Error {
        let after = match (self.attempted, transient(answer.head.status)) {
            (n, true) if n > 1 => format!(" (after {n} attempts)"),
            _ => String::new(),
        };
        Error::failed(format!("{}: {}{after}", self.what(ask), self.why(answer)))
    }

    /// Why `answer` came: as the origin explains it, else its status line.
    fn why(&self, answer: &Answer) -> String {
        self.origin
            .explain(&answer.head, &answer.body)
            .unwrap_or_else(|| unexpected(&answer.head))
    }

    /// The size of object `name` (HEAD), or None when the server has no such object.
    pub(crate) fn size(&mut self, name: &str) -> Result<Option<u64>> {
        Ok(self.head(name, &[])?.map(|(size, _)| size))
    }

    /// Object `name`'s size and the head of the answer to a HEAD with `headers` (what
    /// else the server says of it: S3's ETag, checksums and user metadata), or None
    /// when the server has no such object.
    pub(crate) fn head(
        &mut self,
        name: &str,
        headers: &[(&str, &str)],
    ) -> Result<Option<(u64, Head)>> {
        let ask = Ask {
            headers,
            ..Ask::new("HEAD", Some(name))
        };
        let answer = self.call(&ask, &mut |_| Ok(()))?;
        match answer.head.status {
            200 => match answer.head.content_length() {
                Ok(Some(n)) => Ok(Some((n, answer.head))),
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
    pub(crate) fn get_range(
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
        let deadline = self.deadline(&ask);
        let mut attempt = 1;
        let refused = loop {
            let (head, reader) = self
                .request(&ask, &mut |_| Ok(()), deadline)
                .map_err(fail)?;
            if matches!(head.status, 200 | 206) {
                let result = check_range(&head, offset, len, size)
                    .and_then(|_| read_body(reader, &head, len, true, sink));
                self.connection.done(&head, result.is_ok());
                return result.map(|_| ()).map_err(fail);
            }
            let body = read_small_body(reader, &head);
            self.connection.done(&head, body.is_ok());
            let answer = Answer {
                body: body.unwrap_or_default(),
                head,
            };
            if !self.retry_after(attempt, answer.head.status, deadline.0) {
                break answer;
            }
            attempt += 1;
        };
        let after = match attempt {
            1 => String::new(),
            n => format!(" (after {n} attempts)"),
        };
        Err(fail(format!("{}{after}", self.why(&refused))))
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

    /// Uploads object `name` of `len` bytes with PUT and `headers` (S3's user metadata),
    /// its body written by `body` (in pieces: nothing here holds it).
    pub(crate) fn put(
        &mut self,
        name: &str,
        len: u64,
        headers: &[(&str, &str)],
        body: &mut Body,
    ) -> Result<()> {
        let mut ask = Ask {
            headers,
            ..Ask::new("PUT", Some(name))
        };
        ask.body = Some(self.payload(len, body)?);
        self.send_body(&ask, body).map(|_| ())
    }

    /// The payload of a body of `len` bytes that `body` writes, with the origin's digest
    /// of it when it makes one (S3's signed SHA-256: the body written once into the hash,
    /// so not held, and once more when it is sent).
    pub(crate) fn payload(&self, len: u64, body: &mut Body) -> Result<Payload> {
        let digest = self
            .origin
            .digest(body)
            .map_err(|e| Error::io("hashing a body", e))?;
        Ok(Payload { len, digest })
    }
}

#[cfg(test)]
mod tests {
    use super::super::url::Url;
    use super::*;

    /// An origin that never answers: only the retry policy is exercised.
    struct Retrying(u32, Url);

    impl Origin for Retrying {
        fn server(&self) -> &Url {
            &self.1
        }
        fn head(&self, _ask: &Ask) -> String {
            String::new()
        }
        fn describe(&self, _name: Option<&str>) -> String {
            "x".into()
        }
        fn attempts(&self) -> u32 {
            self.0
        }
    }

    fn client(attempts: u32) -> HttpClient {
        let url = Url::for_server("127.0.0.1", 9, false).unwrap();
        HttpClient::new(Arc::new(Retrying(attempts, url)), Duration::from_secs(30))
    }

    #[test]
    fn transient_failures_are_retried_within_the_attempts_and_the_deadline_never_a_4xx() {
        assert!([500, 502, 503, 504].into_iter().all(transient));
        assert!(![200, 206, 301, 400, 403, 404, 409, 429, 501]
            .into_iter()
            .any(transient));
        let far = Instant::now() + Duration::from_secs(60);
        let mut c = client(3);
        assert!(!c.retry_after(1, 403, far));
        let start = Instant::now();
        assert!(c.retry_after(1, 503, far));
        assert!(start.elapsed() < BACKOFF_BASE + Duration::from_millis(500));
        assert!(c.retry_after(2, 500, far));
        assert!(!c.retry_after(3, 503, far), "3 attempts in all");
        assert_eq!(c.retries(), 2);
        // A backoff that would end past the deadline is not waited for.
        let mut c = client(20);
        assert!(!c.retry_after(15, 503, Instant::now()));
        assert_eq!(c.retries(), 0);
        // One attempt: no retry at all.
        assert!(!client(1).retry_after(1, 503, far));
    }
}
