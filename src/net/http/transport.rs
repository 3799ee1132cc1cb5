//! What a connection's bytes go through: plain TCP, or TLS over it for `https://`
//! ([`tls`], with the feature `tls`), every socket read and write within
//! the request's deadline.

use super::url::Url;
use crate::net::deadline::Deadlined;
#[cfg(feature = "tls")]
use crate::net::tls;
use std::io::{Read, Write};

/// What a connection's bytes go through: the deadlined socket itself, or a TLS session
/// over it, each of whose socket reads and writes (the handshake's too) is bounded by the
/// same deadline.
pub(crate) enum Transport {
    Plain(Deadlined),
    #[cfg(feature = "tls")]
    Tls(Box<tls::TlsStream<Deadlined>>),
}

impl Transport {
    /// Over TLS when `url` is https, with its host's certificate checked.
    #[cfg(feature = "tls")]
    pub(crate) fn new(url: &Url, socket: Deadlined) -> std::result::Result<Transport, String> {
        match url.https {
            true => Ok(Transport::Tls(Box::new(tls::connect(&url.host, socket)?))),
            false => Ok(Transport::Plain(socket)),
        }
    }

    #[cfg(not(feature = "tls"))]
    pub(crate) fn new(url: &Url, socket: Deadlined) -> std::result::Result<Transport, String> {
        match url.https {
            true => Err(crate::net::tls::MISSING.to_string()),
            false => Ok(Transport::Plain(socket)),
        }
    }

    /// The socket underneath, whose deadline each request sets.
    pub(crate) fn socket(&mut self) -> &mut Deadlined {
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
