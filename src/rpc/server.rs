//! The bb-rpc server: a thread per connection, each reading frames through a buffer and
//! answering them in order (the requests one read brought are parsed in place), writing
//! its replies in one go whenever no further request is already buffered (so pipelined
//! calls cost one read and one write per batch, not one per call).
//! A fault on one connection (a bad header, an oversized or truncated frame, a stranger,
//! an idle client) is answered with an error frame where the framing allows, logged in
//! one line, and closes that connection only. SIGINT/SIGTERM stop it gracefully, within
//! a bound: replies a client does not read are given up after [`STOP_WRITE_TIME`].

use super::protocol::{self, Call, Reply, ServerStats, FLAG_MSGPACK};
use crate::net::addr::{Addr, Listener, SocketStream};
use crate::system::cpu::CpuTime;
use crate::util::error::{Error, Result};
use crate::wire::{self, status, Header, WireError, HEADER_LEN};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How a server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub max_frame: u32,
    /// A connection that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    pub max_connections: usize,
    /// Plain byte echo without handshake or frames: the floor the RPC layer is compared to.
    pub floor: bool,
    /// No summary line at the end (a server spawned by a benchmark).
    pub quiet: bool,
}

/// Replies are written once this much is buffered even if more requests are waiting.
const REPLY_BATCH: usize = 256 << 10;
const READ_BUFFER: usize = 64 << 10;

#[derive(Default)]
struct CallCounters {
    connections: AtomicU64,
    echo: AtomicU64,
    add: AtomicU64,
    stats: AtomicU64,
    errors: AtomicU64,
}

/// One connection's calls not yet added to the shared counters: an atomic add per call
/// would cost each call a locked instruction. Added before every write of replies (so a
/// client that has its replies finds them counted) and at the connection's end.
struct Tally<'a> {
    counters: &'a CallCounters,
    echo: u64,
    add: u64,
}

impl<'a> Tally<'a> {
    fn new(counters: &'a CallCounters) -> Tally<'a> {
        Tally {
            counters,
            echo: 0,
            add: 0,
        }
    }

    fn flush(&mut self) {
        for (count, counter) in [
            (&mut self.echo, &self.counters.echo),
            (&mut self.add, &self.counters.add),
        ] {
            if *count > 0 {
                counter.fetch_add(std::mem::take(count), Ordering::Relaxed);
            }
        }
    }
}

impl Drop for Tally<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

struct Shared {
    config: ServerConfig,
    counters: CallCounters,
    /// Live connections, so a stop can end their reads.
    live: Mutex<HashMap<u64, SocketStream>>,
}

impl Shared {
    fn stats(&self) -> ServerStats {
        let cpu = CpuTime::of_self();
        let c = &self.counters;
        ServerStats {
            user_us: (cpu.user * 1e6) as u64,
            sys_us: (cpu.sys * 1e6) as u64,
            connections: c.connections.load(Ordering::Relaxed),
            echo_calls: c.echo.load(Ordering::Relaxed),
            add_calls: c.add.load(Ordering::Relaxed),
            stats_calls: c.stats.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
        }
    }

    fn fault(&self, conn: u64, peer: &str, what: impl std::fmt::Display) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        crate::stderr!(
            "{}: serve: connection {conn} ({peer}): {what}; closed",
            crate::util::terminal::program_name()
        );
    }
}

/// Binds `addr`, prints `listening on ADDR` on stdout (with the real port), and serves
/// until SIGINT or SIGTERM; then stops accepting, lets every connection finish the calls
/// it has received, prints a one-line summary on stderr and removes its socket file.
pub fn serve(addr: &Addr, config: ServerConfig) -> Result<()> {
    let listener = addr.listen().map_err(|e| {
        let message = format!("listening on {addr}: {e}");
        // Taken by somebody else: the person chooses another address.
        match e.kind() {
            std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::AddrInUse => {
                Error::usage(message)
            }
            _ => Error::failed(message),
        }
    })?;
    let bound = listener
        .local_addr()
        .map_err(|e| Error::io(format!("reading the address of {addr}"), e))?;
    let socket_file = match &listener {
        Listener::Unix(_, path) => Some(path.clone()),
        Listener::Tcp(_) => None,
    };
    if let Some(path) = socket_file.clone() {
        crate::harness::watchdog::add_exit_hook(move || {
            let _ = std::fs::remove_file(&path);
        });
    }
    let wake_addr = listener
        .reachable_addr()
        .map_err(|e| Error::io(format!("reading the address of {addr}"), e))?;
    crate::harness::signals::stop_on_signals(move || {
        // Unblocks accept(); the loop then sees the stop flag.
        let _ = wake_addr.connect(Duration::from_secs(1));
    });
    println!("listening on {bound}");
    let _ = std::io::stdout().flush();

    let shared = Arc::new(Shared {
        config,
        counters: CallCounters::default(),
        live: Mutex::new(HashMap::new()),
    });
    let mut threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    while !crate::harness::signals::stop_requested() {
        let stream = match listener.accept() {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // Out of descriptors, say: keep serving the connections there are.
                crate::stderr!(
                    "{}: serve: accept: {e}",
                    crate::util::terminal::program_name()
                );
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if crate::harness::signals::stop_requested() {
            break;
        }
        threads.retain(|t| !t.is_finished());
        next_id += 1;
        let peer = stream.peer();
        if threads.len() >= shared.config.max_connections {
            let why = format!("over --max-connections {}", shared.config.max_connections);
            shared.fault(next_id, &peer, &why);
            refuse(stream, shared.config.floor, &why);
            continue;
        }
        shared.counters.connections.fetch_add(1, Ordering::Relaxed);
        let conn = next_id;
        let s = shared.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("bb-rpc-conn-{conn}"))
            .spawn(move || connection(stream, conn, &peer, &s));
        match spawned {
            Ok(t) => threads.push(t),
            Err(e) => crate::stderr!(
                "{}: serve: starting a thread: {e}",
                crate::util::terminal::program_name()
            ),
        }
    }
    stop_connections(&shared, &threads);
    for t in threads {
        let _ = t.join();
    }
    if let Some(path) = socket_file {
        let _ = std::fs::remove_file(path);
    }
    let s = shared.stats();
    if !shared.config.quiet {
        crate::stderr!(
            "{}: serve: stopped: {} connections, {} calls, {} errors",
            crate::util::terminal::program_name(),
            s.connections,
            s.work_calls() + s.stats_calls,
            s.errors
        );
    }
    Ok(())
}

/// How long connections have, once a stop is asked, to write the replies they owe:
/// a client that pipelines and never reads would otherwise hold its last write forever.
const STOP_WRITE_TIME: Duration = Duration::from_secs(2);

/// Ends every connection's reads (each then answers what it has read), waits at most
/// [`STOP_WRITE_TIME`] for them to finish, then ends their writes too.
fn stop_connections(shared: &Shared, threads: &[std::thread::JoinHandle<()>]) {
    let shut_all = |how| {
        for stream in shared
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            let _ = stream.shutdown(how);
        }
    };
    shut_all(Shutdown::Read);
    let until = std::time::Instant::now() + STOP_WRITE_TIME;
    while threads.iter().any(|t| !t.is_finished()) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    shut_all(Shutdown::Both);
}

/// Serves one connection to its end, registered so a stop can end its reads.
fn connection(stream: SocketStream, conn: u64, peer: &str, shared: &Shared) {
    let registered = stream.try_clone().map(|clone| {
        shared
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(conn, clone);
    });
    let mut failed = false;
    if registered.is_ok() && !crate::harness::signals::stop_requested() {
        let timeout = Some(shared.config.idle_timeout).filter(|t| !t.is_zero());
        let served = stream
            .set_timeouts(timeout)
            .map_err(WireError::Io)
            .and_then(|_| {
                if shared.config.floor {
                    floor(stream)
                } else {
                    frames(stream, conn, peer, shared)
                }
            });
        if let Err(e) = served {
            if !crate::harness::signals::stop_requested() {
                shared.fault(conn, peer, describe(&e, shared.config.idle_timeout));
            }
            failed = true;
        }
    }
    let open = shared
        .live
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&conn);
    // A framed connection closed for an error has its error frame written; the peer's
    // unread bytes would turn the close into a reset that can destroy it unread.
    if let (true, false, Some(stream)) = (failed, shared.config.floor, open) {
        drain_and_close(&stream);
    }
}

fn describe(e: &WireError, idle: Duration) -> String {
    match e {
        WireError::Io(io) if wire::is_timeout(io) => {
            format!(
                "idle for {} (--idle-timeout)",
                crate::util::format::format_duration(idle)
            )
        }
        other => other.to_string(),
    }
}

/// The floor: every byte read is written straight back.
fn floor(mut stream: SocketStream) -> std::result::Result<(), WireError> {
    let mut buf = vec![0u8; READ_BUFFER];
    let mut writer = stream.try_clone()?;
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => writer.write_all(&buf[..n])?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Tells a connection beyond the limit why it is closed, where the protocol can say it
/// (a hello and an error frame; a floor has no frames), without waiting on the peer.
fn refuse(mut stream: SocketStream, floor: bool, why: &str) {
    if floor {
        return;
    }
    let mut out = Vec::new();
    if wire::send_hello(&mut out).is_ok() {
        protocol::push_error(&mut out, &Header::default(), status::ERROR, why);
        let _ = stream.set_timeouts(Some(std::time::Duration::from_millis(100)));
        let _ = stream.write_all(&out);
    }
    drain_and_close(&stream);
}

/// The framed protocol: hello, then requests answered in order.
fn frames(
    stream: SocketStream,
    conn: u64,
    peer: &str,
    shared: &Shared,
) -> std::result::Result<(), WireError> {
    let mut writer = stream.try_clone()?;
    wire::send_hello(&mut writer)?;
    let mut reader = BufReader::with_capacity(READ_BUFFER, stream);
    let mut out = Vec::with_capacity(READ_BUFFER);
    if let Err(e) = wire::expect_hello(&mut reader) {
        // The stranger may still read: tell it why before closing.
        protocol::push_error(&mut out, &Header::default(), status::ERROR, &e.to_string());
        let _ = writer.write_all(&out);
        return Err(e);
    }
    let max = shared.config.max_frame;
    let mut payload = Vec::new();
    let mut tally = Tally::new(&shared.counters);
    let result = 'connection: loop {
        let header = match wire::read_frame(&mut reader, max, &mut payload) {
            Ok(h) => h,
            Err(WireError::Closed) => break Ok(()),
            Err(e @ WireError::TooLarge { .. }) => {
                // A connection-level error: id 0, as the request's header is not kept.
                protocol::push_error(
                    &mut out,
                    &Header::default(),
                    status::TOO_LARGE,
                    &e.to_string(),
                );
                break Err(e);
            }
            Err(e) => break Err(e),
        };
        let first = serve_request(&header, &payload, &mut out, &mut tally, conn, peer, shared);
        if let Err(e) = first {
            break Err(e);
        }
        // Then every whole request that came with it, read in place from the buffer: a
        // run of raw echoes answered in one copy, any other request on its own.
        loop {
            let (echoes, length) = protocol::raw_echo_run(reader.buffer(), max);
            if echoes > 0 {
                protocol::push_raw_echo_replies(&mut out, &reader.buffer()[..length]);
                tally.echo += echoes;
                reader.consume(length);
            } else if let Some((header, length)) = wire::buffered_frame(reader.buffer(), max) {
                let payload = &reader.buffer()[HEADER_LEN..length];
                let served =
                    serve_request(&header, payload, &mut out, &mut tally, conn, peer, shared);
                reader.consume(length);
                if let Err(e) = served {
                    break 'connection Err(e);
                }
            } else {
                break;
            }
            if out.len() >= REPLY_BATCH {
                tally.flush();
                writer.write_all(&out)?;
                out.clear();
            }
        }
        if reader.buffer().is_empty() || out.len() >= REPLY_BATCH {
            tally.flush();
            writer.write_all(&out)?;
            out.clear();
        }
    };
    tally.flush();
    if !out.is_empty() {
        let _ = writer.write_all(&out);
    }
    result
}

/// Stops writing and reads what the peer still sends for a moment (at most
/// [`DRAIN_TIME`], at most [`DRAIN_BYTES`]), so that closing sends no reset that could
/// destroy the error frame just written.
fn drain_and_close(stream: &SocketStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let Ok(mut reader) = stream.try_clone() else {
        return;
    };
    let _ = reader.set_timeouts(Some(DRAIN_TIME));
    let until = std::time::Instant::now() + DRAIN_TIME;
    let mut sink = [0u8; 4096];
    let mut drained = 0;
    while drained < DRAIN_BYTES && std::time::Instant::now() < until {
        match reader.read(&mut sink) {
            Ok(n) if n > 0 => drained += n,
            _ => break,
        }
    }
}

/// How long, and how much, a connection closed for an error is read before it is closed.
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_millis(200);
const DRAIN_BYTES: usize = 1 << 20;

/// A request's header must carry only the codec flag and a zero status.
fn check_request(h: &Header) -> std::result::Result<(), String> {
    if h.flags & !FLAG_MSGPACK != 0 || h.status != 0 {
        return Err(format!(
            "malformed header: flags 0x{:02x}, status {} in a request (only flag 0x{FLAG_MSGPACK:02x} and status 0 are valid)",
            h.flags, h.status
        ));
    }
    Ok(())
}

/// Appends the reply to one request whose header is checked first: a malformed one is
/// answered with an error frame and ends the connection.
fn serve_request(
    header: &Header,
    payload: &[u8],
    out: &mut Vec<u8>,
    tally: &mut Tally,
    conn: u64,
    peer: &str,
    shared: &Shared,
) -> std::result::Result<(), WireError> {
    if let Err(why) = check_request(header) {
        protocol::push_error(out, header, status::ERROR, &why);
        return Err(WireError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            why,
        )));
    }
    answer(header, payload, out, tally, conn, peer, shared);
    Ok(())
}

/// Appends the reply to one well-framed request (an error reply for a bad one).
fn answer(
    header: &Header,
    payload: &[u8],
    out: &mut Vec<u8>,
    tally: &mut Tally,
    conn: u64,
    peer: &str,
    shared: &Shared,
) {
    let call = match protocol::decode_call(header, payload) {
        Ok(c) => c,
        Err(why) => {
            let code = match header.method {
                protocol::ECHO | protocol::ADD | protocol::STATS => status::BAD_ARGUMENTS,
                _ => status::UNKNOWN_METHOD,
            };
            shared.counters.errors.fetch_add(1, Ordering::Relaxed);
            crate::stderr!(
                "{}: serve: connection {conn} ({peer}): call {}: {why}; answered with status {code} ({})",
                crate::util::terminal::program_name(),
                header.id,
                status::name(code)
            );
            protocol::push_error(out, header, code, &why);
            return;
        }
    };
    let c = &shared.counters;
    match call {
        Call::Echo(data) => {
            tally.echo += 1;
            protocol::push_reply(out, header, &Reply::Echo(data));
        }
        Call::Add(a, b) => {
            tally.add += 1;
            protocol::push_reply(out, header, &Reply::Add(a.wrapping_add(b)));
        }
        Call::Stats => {
            // This connection's own calls so far count in what it is told.
            tally.flush();
            c.stats.fetch_add(1, Ordering::Relaxed);
            protocol::push_reply(out, header, &Reply::Stats(shared.stats()));
        }
    }
}
