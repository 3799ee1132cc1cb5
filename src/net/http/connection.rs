//! One keep-alive connection to a server at a time, kept between requests; a request
//! that fails on a reused one (the server may have closed it while idle) is sent once more
//! on a fresh one, within the same deadline.

use super::head::{read_head, Head};
use super::network_error;
use super::transport::Transport;
use super::url::Url;
use crate::net::deadline::{seconds, Deadlined};
use std::io::{BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The connection a client keeps to its server between requests (none until the first,
/// and none after one that failed or that the server will close).
#[derive(Default)]
pub(crate) struct KeepAlive {
    connection: Option<Connection>,
}

impl KeepAlive {
    /// Sends `request` (its head) and its body as `body` writes it to `server`, and reads
    /// the response head; the caller reads the body (if any) from the returned reader, then
    /// calls [`KeepAlive::done`]. All of it, the retry on a fresh connection included, is
    /// bounded by `deadline`, `allowed` being the request's whole time (for messages).
    pub(crate) fn exchange(
        &mut self,
        server: &Url,
        request: &[u8],
        body: &mut Body,
        deadline: Instant,
        allowed: Duration,
    ) -> std::result::Result<(Head, &mut BufReader<Transport>), String> {
        let mut first_failure: Option<String> = None;
        loop {
            if self.connection.is_none() {
                self.connection = Some(
                    Connection::open(server, deadline, allowed)
                        .map_err(|e| retried(e, &first_failure))?,
                );
            }
            let c = self.connection.as_mut().expect("just opened");
            c.reader.get_mut().socket().set_deadline(deadline, allowed);
            let reused = c.used;
            let answer = c
                .send(request, body)
                .map_err(|e| network_error("sending the request", e))
                .and_then(|_| read_head(&mut c.reader));
            match answer {
                Ok(head) => {
                    let c = self.connection.as_mut().expect("still open");
                    c.used = true;
                    return Ok((head, &mut c.reader));
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
    pub(crate) fn done(&mut self, head: &Head, ok: bool) {
        if !ok || !head.keep_alive {
            self.connection = None;
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
                    let socket = Deadlined::new(stream, deadline, allowed);
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

/// An error, with the one that made the request retry on a fresh connection, if it did.
fn retried(e: String, first: &Option<String>) -> String {
    match first {
        Some(first) => format!("{e} (on a retry on a fresh connection, after: {first})"),
        None => e,
    }
}
