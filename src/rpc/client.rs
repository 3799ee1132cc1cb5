//! bb-rpc's blocking stub: one call in flight, each with a deadline, the call timeout
//! from its send, so a dead, silent or dripping server is an error, never a hang. The
//! pipelined client is in `pipeline.rs`; what both share, in `config.rs`.

use super::config::{check_header, ClientConfig};
use super::deadline::DeadlineReader;
use super::protocol::{self, Call, Reply, ServerStats};
use super::requests::Requests;
use crate::net::addr::SocketStream;
use crate::util::error::{Error, Result};
use crate::wire;
use std::io::{BufReader, Write};
use std::time::Instant;

/// A blocking stub: one call in flight.
pub struct SyncClient {
    config: ClientConfig,
    writer: SocketStream,
    reader: BufReader<DeadlineReader>,
    out: Vec<u8>,
    payload: Vec<u8>,
    next_id: u32,
}

impl SyncClient {
    /// Connects a blocking stub as `config` says.
    pub fn connect(config: &ClientConfig) -> Result<SyncClient> {
        let (writer, reader) = config.open()?;
        Ok(SyncClient {
            config: config.clone(),
            writer,
            reader,
            out: Vec::new(),
            payload: Vec::new(),
            next_id: 1,
        })
    }

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
