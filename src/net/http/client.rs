//! The client of one origin: each request within one deadline (retry included), over
//! the connection it keeps; answers read whole, sizes by HEAD, ranged GETs into a sink
//! (206 and its Content-Range checked), and uploads whose bodies are streamed, never held.

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
    /// How long each request may take.
    timeout: Duration,
}

impl HttpClient {
    pub(crate) fn new(origin: Arc<dyn Origin>, timeout: Duration) -> HttpClient {
        HttpClient {
            origin,
            connection: KeepAlive::default(),
            timeout,
        }
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
    ) -> std::result::Result<(Head, &mut BufReader<Transport>), String> {
        let request = format!("{}User-Agent: bb-seek\r\n\r\n", self.origin.head(ask));
        let body_len = ask.body.as_ref().map_or(0, |b| b.len);
        let allowed =
            self.timeout + UPLOAD_TIME_PER_MIB.mul_f64(body_len as f64 / (1 << 20) as f64);
        let deadline = Instant::now() + allowed;
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
        let what = self.what(ask);
        let fail = |e: String| Error::failed(format!("{what}: {e}"));
        let (head, reader) = self.request(ask, body).map_err(fail)?;
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
        let (head, reader) = self.request(&ask, &mut |_| Ok(())).map_err(fail)?;
        if !matches!(head.status, 200 | 206) {
            let body = read_small_body(reader, &head).unwrap_or_default();
            self.connection.done(&head, false);
            return Err(fail(self.why(&Answer { head, body })));
        }
        let result = check_range(&head, offset, len, size)
            .and_then(|_| read_body(reader, &head, len, true, sink));
        self.connection.done(&head, result.is_ok());
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
