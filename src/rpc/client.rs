//! bb-rpc's clients: how they connect, a blocking stub (one call in flight), and the
//! calls a benchmark makes; the pipelined client is in `pipeline.rs`. Every call has a
//! deadline, the call timeout from its send (and every connect and hello one from its
//! start), so a dead, silent or dripping server is an error, never a hang.

use super::addr::{Addr, RpcStream};
use super::deadline::DeadlineReader;
pub(crate) use super::pipeline::{Pipeline, ReplyTimes};
use super::protocol::{self, Call, Codec, Reply, ServerStats};
use crate::util::error::{Cause, Error, Result};
use crate::wire::{self, Header, WireError};
use std::io::{BufReader, Write};
use std::sync::Arc;
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
    pub(super) fn open(&self) -> Result<(RpcStream, BufReader<DeadlineReader>)> {
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

    /// Connects a blocking stub.
    pub fn connect(&self) -> Result<SyncClient> {
        let (writer, reader) = self.open()?;
        Ok(SyncClient {
            config: self.clone(),
            writer,
            reader,
            out: Vec::new(),
            payload: Vec::new(),
            next_id: 1,
        })
    }

    /// Connects a pipeline whose replies are checked by `requests`.
    pub(crate) fn pipeline(&self, requests: Arc<Requests>) -> Result<Pipeline> {
        self.timed_pipeline(requests, None)
    }

    /// Connects a pipeline whose replies are checked by `requests` and, with `times`,
    /// timed as they come in.
    pub(crate) fn timed_pipeline(
        &self,
        requests: Arc<Requests>,
        times: Option<Arc<dyn ReplyTimes>>,
    ) -> Result<Pipeline> {
        let (writer, reader) = self.open()?;
        Pipeline::start(self, writer, reader, requests, times)
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
            String::from_utf8_lossy(&payload[..payload.len().min(200)])
        ));
    }
    Ok(())
}

/// A blocking stub: one call in flight.
pub struct SyncClient {
    config: ClientConfig,
    writer: RpcStream,
    reader: BufReader<DeadlineReader>,
    out: Vec<u8>,
    payload: Vec<u8>,
    next_id: u32,
}

impl SyncClient {
    /// Makes one call and returns its reply.
    pub fn call(&mut self, call: &Call) -> Result<Reply<'_>> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        self.out.clear();
        protocol::push_request(&mut self.out, id, self.config.codec, call);
        self.reader
            .get_mut()
            .set_deadline(Instant::now() + self.config.timeout);
        self.writer
            .write_all(&self.out)
            .map_err(|e| self.config.failed_by(&format!("sending call {id}"), e))?;
        let h = wire::read_frame(&mut self.reader, self.config.max_frame, &mut self.payload)
            .map_err(|e| self.config.late(&format!("reply to call {id}"), e))?;
        check_header(&h, &self.payload).map_err(|e| self.config.fail(e))?;
        if h.id != id || h.method != call.method() {
            return Err(self.config.fail(format!(
                "reply to call {id} (method {}) came with id {} and method {}",
                call.method(),
                h.id,
                h.method
            )));
        }
        protocol::decode_reply(h.method, self.config.codec, &self.payload)
            .map_err(|e| self.config.fail(e))
    }

    /// The server's `stats()`.
    pub fn stats(&mut self) -> Result<ServerStats> {
        match self.call(&Call::Stats)? {
            Reply::Stats(s) => Ok(s),
            _ => unreachable!("decode_reply answers stats with stats"),
        }
    }

    /// Makes `n` calls from `requests`, checking each reply.
    pub(crate) fn calls(&mut self, requests: &Requests, n: u64) -> Result<()> {
        let mut scratch = Vec::new();
        for _ in 0..n {
            let id = self.next_id;
            let call = requests.call(id, &mut scratch);
            let reply = self.call(&call)?;
            requests
                .check(id, &reply)
                .map_err(|e| Error::failed(format!("rpc to {}: {e}", self.config.addr)))?;
        }
        Ok(())
    }
}

/// The calls a benchmark makes (echo), made from the request id so that every reply can
/// be checked against what its request asked without keeping the request.
#[derive(Debug, Clone)]
pub(crate) struct Requests {
    pub method: u16,
    /// echo's payload, bytes from the seed; each request stamps its id over the front.
    base: Vec<u8>,
}

impl Requests {
    pub(crate) fn echo(size: usize, seed: u64) -> Requests {
        let mut base = vec![0u8; size];
        crate::util::rng::Rng::new(seed).fill(&mut base);
        Requests {
            method: protocol::ECHO,
            base,
        }
    }

    /// The size of each request's payload.
    pub(crate) fn payload_len(&self) -> usize {
        self.base.len()
    }

    /// Request `id`'s call; its bytes are built in `scratch`.
    pub(crate) fn call<'a>(&self, id: u32, scratch: &'a mut Vec<u8>) -> Call<'a> {
        scratch.clear();
        scratch.extend_from_slice(&self.base);
        let stamp = id.to_le_bytes();
        let n = stamp.len().min(scratch.len());
        scratch[..n].copy_from_slice(&stamp[..n]);
        Call::Echo(scratch)
    }

    /// Checks that `reply` answers request `id`.
    pub(crate) fn check(&self, id: u32, reply: &Reply) -> std::result::Result<(), String> {
        let ok = match reply {
            Reply::Echo(data) => {
                let stamp = id.to_le_bytes();
                let n = stamp.len().min(self.base.len());
                data.len() == self.base.len()
                    && data[..n] == stamp[..n]
                    && data[n..] == self.base[n..]
            }
            Reply::Add(_) | Reply::Stats(_) => false,
        };
        if ok {
            Ok(())
        } else {
            Err(format!("the reply to call {id} does not match its request"))
        }
    }
}
