//! The ways one connection makes calls, each a [`Driver`]: the blocking stub (sync), the
//! pipeline completing by callback (async) or by handle (future), the open loop, and the
//! floor, plain length-prefixed echo with no RPC layer.

use super::client::SyncClient;
use super::config::ClientConfig;
use super::open_loop::{OpenLoop, Recorder};
use super::pipeline::{Pipeline, ReplyTimes};
use super::plan::{Plan, Style};
use super::requests::Requests;
use crate::net::addr::{Addr, SocketStream};
use crate::util::error::{Error, Result};
use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::socket::{self, MsgFlags};
use std::io::{ErrorKind, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::time::Duration;

/// A connection's driver, and an open loop's recorder of latencies.
pub(crate) type Connected = (Box<dyn Driver>, Option<Arc<Recorder>>);

/// Connects one of `plan`'s connections to the server `config` names: its driver, and an
/// open loop's recorder of latencies.
pub(crate) fn connect(
    plan: &Plan,
    config: &ClientConfig,
    requests: &Arc<Requests>,
) -> Result<Connected> {
    if let Some(rate) = plan.rate {
        let recorder = Arc::new(Recorder::default());
        let times = recorder.clone() as Arc<dyn ReplyTimes>;
        let pipeline = Pipeline::timed(config, requests.clone(), Some(times))?;
        let open = OpenLoop::new(pipeline, plan.depth, rate, recorder.clone());
        return Ok((Box::new(open), Some(recorder)));
    }
    let driver: Box<dyn Driver> = match plan.style {
        Style::Sync => Box::new(SyncDriver(SyncClient::connect(config)?, requests.clone())),
        Style::Async => Box::new(AsyncDriver(
            Pipeline::connect(config, requests.clone())?,
            requests.clone(),
            plan.depth,
        )),
        Style::Future => Box::new(FutureDriver(
            Pipeline::for_futures(config, requests.clone(), plan.depth)?,
            requests.clone(),
            plan.depth,
        )),
        Style::Floor => {
            let addr = &config.addr;
            let stream = addr
                .connect(config.timeout)
                .and_then(|s| s.set_timeouts(Some(config.timeout)).map(|_| s))
                .map_err(|e| Error::failed(format!("echo floor on {addr}: connecting: {e}")))?;
            let mut payload = vec![0u8; plan.payload];
            crate::util::rng::Rng::new(plan.seed).fill(&mut payload);
            Box::new(FloorDriver::new(
                stream,
                addr.clone(),
                &payload,
                plan.depth,
                config.timeout,
            ))
        }
    };
    Ok((driver, None))
}

/// One connection's way of making calls.
pub(crate) trait Driver: Send {
    fn calls(&mut self, n: u64) -> Result<()>;
}

struct SyncDriver(SyncClient, Arc<Requests>);
struct AsyncDriver(Pipeline, Arc<Requests>, usize);
struct FutureDriver(Pipeline, Arc<Requests>, usize);

impl Driver for SyncDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        self.0.calls(&self.1, n)
    }
}

impl Driver for AsyncDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        self.0.calls_async(&self.1, n, self.2)
    }
}

impl Driver for OpenLoop {
    fn calls(&mut self, n: u64) -> Result<()> {
        OpenLoop::calls(self, n)
    }
}

impl Driver for FutureDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        self.0.calls_future(&self.1, n, self.2)
    }
}

/// The floor: each call a message (the payload's length as a u32, then the payload)
/// written and read back from a plain echo server, checked, without ids or a codec. Up
/// to `depth` are in flight: the room freed by each read is refilled in one write, and
/// each read parses every message it completed, as a pipelined client at its best would.
/// At depth 1 it is a blocking round trip per call.
struct FloorDriver {
    stream: SocketStream,
    addr: Addr,
    /// `depth` messages back to back: a write of any number of calls is a slice of it.
    messages: Vec<u8>,
    message_len: usize,
    depth: usize,
    /// How long a write or read may wait for the peer (--call-timeout).
    timeout: Duration,
    /// Bytes read; `buffered` of them not yet parsed, a partial message at most.
    back: Vec<u8>,
    buffered: usize,
}

impl FloorDriver {
    fn new(
        stream: SocketStream,
        addr: Addr,
        payload: &[u8],
        depth: usize,
        timeout: Duration,
    ) -> FloorDriver {
        let mut message = (payload.len() as u32).to_le_bytes().to_vec();
        message.extend_from_slice(payload);
        FloorDriver {
            stream,
            addr,
            messages: message.repeat(depth),
            message_len: message.len(),
            depth,
            timeout,
            back: vec![0u8; message.len().max(FLOOR_READ)],
            buffered: 0,
        }
    }

    fn fail(&self, what: impl std::fmt::Display) -> Error {
        Error::failed(format!("echo floor on {}: {what}", self.addr))
    }

    /// A read or write that failed; one that timed out says how long it waited.
    fn io_failed(&self, doing: &str, e: std::io::Error) -> Error {
        match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => self.fail(format!(
                "{doing}: the server took nothing and sent nothing back within {} (--call-timeout)",
                crate::util::format::format_duration(self.timeout)
            )),
            _ => self.fail(format!("{doing}: {e}")),
        }
    }

    /// Writes what it can of `bytes` without waiting: how many it took (0 when full).
    fn write_some(&self, bytes: &[u8]) -> std::io::Result<usize> {
        let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
        loop {
            match socket::send(self.stream.as_fd().as_raw_fd(), bytes, flags) {
                Ok(n) => return Ok(n),
                Err(Errno::EAGAIN) => return Ok(0),
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Parses the whole messages buffered, checking each; returns how many there were.
    fn parse(&mut self) -> Result<usize> {
        let message = &self.messages[..self.message_len];
        let mut at = 0;
        while self.buffered - at >= self.message_len {
            if self.back[at..at + self.message_len] != *message {
                return Err(self.fail("the bytes came back changed"));
            }
            at += self.message_len;
        }
        self.back.copy_within(at..self.buffered, 0);
        self.buffered -= at;
        Ok(at / self.message_len)
    }

    /// Waits until the socket can be read or written: whether it can be read (an error
    /// or a hang-up shows in that read). A socket that can do neither within the timeout
    /// is an error.
    fn wait(&self) -> Result<bool> {
        let events = PollFlags::POLLIN | PollFlags::POLLOUT;
        let timeout = PollTimeout::try_from(self.timeout).unwrap_or(PollTimeout::MAX);
        loop {
            let mut fds = [PollFd::new(self.stream.as_fd(), events)];
            match poll(&mut fds, timeout) {
                Ok(0) => return Err(self.io_failed("writing", ErrorKind::TimedOut.into())),
                Ok(_) => {
                    let got = fds[0].revents().unwrap_or(PollFlags::empty());
                    let read = PollFlags::POLLIN | PollFlags::POLLERR | PollFlags::POLLHUP;
                    return Ok(got.intersects(read));
                }
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(self.io_failed("waiting", e.into())),
            }
        }
    }
}

/// The floor's reads: many messages at a time, as the RPC client's reader reads.
const FLOOR_READ: usize = 64 << 10;

impl Driver for FloorDriver {
    fn calls(&mut self, n: u64) -> Result<()> {
        let len = self.message_len as u64;
        // Bytes written of the n calls' n × len, and whole replies read back.
        let (mut out, mut done) = (0u64, 0u64);
        while done < n {
            // At most `depth` calls in flight: written ahead up to done + depth.
            let limit = n.min(done + self.depth as u64) * len;
            let mut readable = true;
            if out < limit {
                // `messages` holds depth calls; a reply read means its call was written
                // whole (done × len ≤ out), so this slice stays inside it.
                let at = (out % len) as usize;
                let bytes = &self.messages[at..at + (limit - out) as usize];
                let took = self
                    .write_some(bytes)
                    .map_err(|e| self.io_failed("writing", e))?;
                out += took as u64;
                if out < limit {
                    readable = self.wait()?;
                }
            }
            if !readable {
                continue;
            }
            let got = match self.stream.read(&mut self.back[self.buffered..]) {
                Ok(0) => return Err(self.fail("the server closed the connection")),
                Ok(got) => got,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_failed("reading", e)),
            };
            self.buffered += got;
            done += self.parse()? as u64;
            if done * len + self.buffered as u64 > out {
                return Err(self.fail("more bytes came back than were sent"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::PathBuf;
    use std::time::Duration;

    /// A floor driver on one end of a socket pair whose other end answers through
    /// `serve`; the driver's result for `n` calls, and the bytes the server read.
    fn floor_against(
        depth: usize,
        n: u64,
        serve: fn(&mut [u8]),
    ) -> (Result<()>, std::thread::JoinHandle<usize>) {
        floor_of(b"0123456789abcdef", depth, n, serve)
    }

    /// As `floor_against`, with `payload` in each call.
    fn floor_of(
        payload: &[u8],
        depth: usize,
        n: u64,
        serve: fn(&mut [u8]),
    ) -> (Result<()>, std::thread::JoinHandle<usize>) {
        let (mine, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let mut total = 0;
            loop {
                match theirs.read(&mut buf) {
                    Ok(0) | Err(_) => return total,
                    Ok(got) => {
                        total += got;
                        serve(&mut buf[..got]);
                        if theirs.write_all(&buf[..got]).is_err() {
                            return total;
                        }
                    }
                }
            }
        });
        let stream = SocketStream::Unix(mine);
        let timeout = Duration::from_secs(5);
        stream.set_timeouts(Some(timeout)).unwrap();
        let addr = Addr::Unix(PathBuf::from("pair"));
        let mut driver = FloorDriver::new(stream, addr, payload, depth, timeout);
        let result = driver.calls(n);
        drop(driver);
        (result, server)
    }

    #[test]
    fn the_floor_pipelines_length_prefixed_messages_and_checks_each() {
        for depth in [1, 4, 64] {
            let (result, server) = floor_against(depth, 100, |_| {});
            result.unwrap();
            assert_eq!(server.join().unwrap(), 100 * (4 + 16), "depth {depth}");
        }
        let (result, server) = floor_against(8, 100, |b| b[b.len() - 1] ^= 1);
        let e = result.unwrap_err().to_string();
        assert!(
            e.contains("echo floor on unix:pair: the bytes came back changed"),
            "{e}"
        );
        server.join().unwrap();
        let (result, server) = floor_against(8, 100, |b| b.fill(0));
        assert!(result.is_err());
        server.join().unwrap();
    }

    /// Issue 26: depth × payload beyond both sockets' buffers. Written all at once
    /// before reading, the echo server blocked writing back what the driver did not
    /// read, the driver blocked writing what the server did not read, and the call
    /// timeout ended it with EAGAIN.
    #[test]
    fn the_floor_reads_while_it_writes_so_a_deep_large_pipeline_cannot_deadlock() {
        let payload = vec![7u8; 64 << 10];
        for (depth, n) in [(8, 40), (64, 130)] {
            let (result, server) = floor_of(&payload, depth, n, |_| {});
            result.unwrap_or_else(|e| panic!("depth {depth}: {e}"));
            assert_eq!(server.join().unwrap(), n as usize * (4 + payload.len()));
        }
    }
}
