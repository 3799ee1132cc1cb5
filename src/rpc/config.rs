//! What every bb-rpc client shares: where it connects, how long it waits, how its
//! failures read, the connection and hellos themselves, and the check of a reply's
//! header. The blocking stub (`client.rs`) and the pipeline (`pipeline.rs`) both build on
//! it. Every connect and hello has a deadline, the call timeout from its start.

use super::deadline::DeadlineReader;
use super::protocol::Codec;
use crate::net::addr::{Addr, SocketStream};
use crate::util::error::{Cause, Error, Result};
use crate::util::format::printable;
use crate::wire::{self, Header, WireError};
use std::io::BufReader;
use std::time::{Duration, Instant};

/// How clients connect and how long they wait.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub addr: Addr,
    pub codec: Codec,
    pub max_frame: u32,
    /// The deadline of a connect, of a hello and of each call from its send.
    pub timeout: Duration,
}

impl ClientConfig {
    /// A failure with the server, described by `what`.
    pub(super) fn fail(&self, what: impl std::fmt::Display) -> Error {
        Error::failed(format!("rpc to {}: {what}", self.addr))
    }

    /// A failure with the server while `doing` something (or nothing in particular),
    /// caused by `cause`.
    pub(super) fn failed_by(
        &self,
        doing: &str,
        cause: impl Into<Cause> + std::fmt::Display,
    ) -> Error {
        match doing {
            "" => Error::caused(format!("rpc to {}", self.addr), cause),
            _ => Error::caused(format!("rpc to {}: {doing}", self.addr), cause),
        }
    }

    /// Why a reply did not come in time: nothing of it, or how much of it.
    pub(super) fn late(&self, what: &str, e: WireError) -> Error {
        let within = crate::util::format::format_duration(self.timeout);
        match e {
            WireError::Io(io) if wire::is_timeout(&io) => {
                self.fail(format!("no {what} within {within} (--call-timeout)"))
            }
            WireError::StalledInFrame { expected, got } => self.fail(format!(
                "the {what} was still incomplete after {within} (--call-timeout): {got} of its {expected} bytes"
            )),
            other => self.failed_by(&format!("waiting for the {what}"), other),
        }
    }

    /// Connects and exchanges hellos, each within the timeout.
    pub(super) fn open(&self) -> Result<(SocketStream, BufReader<DeadlineReader>)> {
        let start = Instant::now();
        let mut stream = self
            .addr
            .connect(self.timeout)
            .map_err(|e| self.failed_by("connecting", e))?;
        stream
            .set_timeouts(Some(self.timeout))
            .map_err(|e| self.failed_by("", e))?;
        wire::send_hello(&mut stream).map_err(|e| self.failed_by("", e))?;
        let reading = stream
            .try_clone()
            .and_then(|s| DeadlineReader::new(s, self.timeout))
            .map_err(|e| self.failed_by("", e))?;
        let mut reader = BufReader::with_capacity(64 << 10, reading);
        reader.get_mut().set_deadline(start + self.timeout);
        wire::expect_hello(&mut reader).map_err(|e| self.late("hello", e))?;
        reader
            .get_mut()
            .clear_deadline()
            .map_err(|e| self.failed_by("", e))?;
        Ok((stream, reader))
    }
}

/// Checks a reply's header against the request it answers; an error reply is an error.
pub(super) fn check_header(h: &Header, payload: &[u8]) -> std::result::Result<(), String> {
    if h.flags & wire::FLAG_RESPONSE == 0 {
        return Err(format!(
            "frame {} is not a reply (flags 0x{:02x})",
            h.id, h.flags
        ));
    }
    if h.status != wire::status::OK {
        return Err(format!(
            "call {} failed with status {} ({}): {}",
            h.id,
            h.status,
            wire::status::name(h.status),
            // The server's words, as text that cannot drive the terminal.
            printable(&String::from_utf8_lossy(&payload[..payload.len().min(200)]))
        ));
    }
    Ok(())
}
