//! What a request is to the client and to the origin it goes to: the [`Ask`] (method,
//! object, query, range, body, its [`Payload`]), the [`Origin`] that makes its request
//! line and headers, says how many attempts it gets and explains its refusals (a plain URL prefix here; a signed S3 bucket in bb-seek's
//! `seek::s3`, which puts its body's hash in the head through [`Origin::digest`]), and
//! the [`Answer`] read whole.

use super::connection::Body;
use super::head::Head;
use super::url::Url;

/// One request to an origin: what it asks of which object.
pub(crate) struct Ask<'a> {
    pub method: &'static str,
    /// The object's name; `None`: the place the objects are in (an S3 bucket).
    pub name: Option<&'a str>,
    pub query: &'a [(&'a str, &'a str)],
    /// `offset` and `len` (> 0) of a ranged GET.
    pub range: Option<(u64, u64)>,
    /// Headers the request carries besides those the origin makes (S3's user metadata,
    /// `x-amz-checksum-mode`): names and values the caller made, never a peer's.
    pub headers: &'a [(&'a str, &'a str)],
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
            headers: &[],
            body: None,
        }
    }
}

/// The body a request sends, as its head describes it: its length and, from an origin
/// that makes one, a digest of its bytes (see [`Origin::digest`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Payload {
    pub len: u64,
    /// `None`: the origin made none (the body is written only when it is sent).
    pub digest: Option<String>,
}

/// A response read whole: its head and its (small) body.
pub(crate) struct Answer {
    pub head: Head,
    pub body: Vec<u8>,
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
    /// What the request's head says of the body `body` writes, made before it is sent
    /// (an S3 origin that signs puts its SHA-256 there); `None`, by default: nothing, and
    /// the body is written only when it is sent.
    fn digest(&self, _body: &mut Body) -> std::io::Result<Option<String>> {
        Ok(None)
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
    /// Attempts per request at a transient failure of the server (500, 502, 503, 504):
    /// 1, no retry, unless the origin says (S3's retry settings).
    fn attempts(&self) -> u32 {
        1
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
        for (name, value) in ask.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
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
