//! A small HTTP/1.1 client for object stores, written here rather than taken as a
//! dependency: ranged GETs over a keep-alive connection (206 and its Content-Range
//! checked, Content-Length and chunked bodies, delivered piece by piece into a
//! [`Sink`](crate::net::sink::Sink)), HEAD for sizes and PUT for uploads (bodies streamed
//! with their length known up front), to an [`Origin`] that makes each request's line and
//! headers (a plain URL prefix here, a signed S3 bucket in bb-seek's `seek::s3`, above)
//! and says why a refusal came. A server that ignores Range (answers 200), a redirect, an
//! error status, a truncated body or a connection closed early is a clear error, never a
//! wrong byte; one that is silent or drips its answer is an error at the request's
//! deadline ([`Deadlined`](crate::net::deadline::Deadlined)). `https://` goes through
//! [`tls`](crate::net::tls) in builds with the `tls` feature.
//!
//! One file per job, from the bottom up: [`url`], the response [`head`], the [`body`]
//! readers, the [`transport`] (plain or TLS), the kept-alive [`connection`] and its retry,
//! what a request is to its [`origin`], and the [`client`].

pub(crate) mod body;
pub(crate) mod client;
pub(crate) mod connection;
pub(crate) mod head;
pub(crate) mod origin;
pub(crate) mod transport;
pub mod url;

pub use body::read_response;
pub(crate) use client::HttpClient;
pub(crate) use connection::Body;
pub(crate) use head::Head;
pub(crate) use origin::{Answer, Ask, Origin, Payload};
pub use url::Url;

/// An I/O error as a message says it: what was being done, then the error.
fn network_error(what: &str, e: std::io::Error) -> String {
    format!("{what}: {e}")
}
