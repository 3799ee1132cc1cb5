//! bb-rpc's pipelined client: many calls in flight on one connection, their replies
//! matched by id (a ring of the calls in flight) on a reader thread that completes each
//! either by a callback (async, whose freed room it refills itself) or for a handle the
//! caller waits on later (future; where the replies fit the sockets' buffers, the caller
//! reads them itself as it waits, with no thread). The oldest call in flight is held to
//! its deadline.

use super::config::{check_header, ClientConfig};
use super::deadline::DeadlineReader;
use super::in_flight::InFlight;
use super::protocol;
use super::requests::{Encoded, Requests};
use crate::net::addr::SocketStream;
use crate::util::error::Result;
use crate::wire::{self, Header, WireError, HEADER_LEN};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// How a pipelined call completes.
enum Pending {
    /// The reader thread checks the reply and counts it (async).
    Callback,
    /// The reader keeps the reply here (None until it comes) for the caller's handle,
    /// which takes the call out (future): no channel per call.
    Handle(Option<Arrived>),
}

/// A future's reply, as it came.
enum Arrived {
    /// Byte for byte the reply its call expects: checked as it came, nothing kept.
    Exact,
    /// Other bytes (another encoding of the same value, say), kept in a buffer reused
    /// from `spare` for the caller to decode and check.
    Other(Vec<u8>),
}

/// A call sent and not yet answered.
struct Sent {
    pending: Pending,
    /// When it was sent: its deadline is this plus the call timeout.
    sent: Instant,
    /// When it was due: an open loop's scheduled send, else its send.
    due: Instant,
}

/// Where a pipeline reports when each reply came, against when its call was due and sent
/// (an open loop's latencies).
pub(crate) trait ReplyTimes: Send + Sync {
    fn replied(&self, due: Instant, sent: Instant, now: Instant);
}

/// The id of a pipeline's first call.
const FIRST_ID: u32 = 1;

struct PipeState {
    in_flight: InFlight<Sent>,
    /// The sender waits on `progress` until fewer calls than this are in flight (0: it
    /// does not wait): the reader wakes it only then (a wake is a system call), once per
    /// batch of replies read together.
    room_wanted: usize,
    /// Calls the reader thread still sends itself as replies free room (async).
    refill: Option<Refill>,
    /// The future whose reply the sender waits for: the reader wakes it once it is in.
    reply_wanted: Option<u32>,
    /// Reply buffers that futures gave back, for the next replies.
    spare: Vec<Vec<u8>>,
    /// Why the connection failed, once it has.
    error: Option<String>,
    closing: bool,
}

struct PipeShared {
    state: Mutex<PipeState>,
    /// Signalled whenever a call completes or the connection fails.
    progress: Condvar,
}

impl PipeShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, PipeState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A pipelined connection: many calls in flight, replies matched by id on a reader thread
/// (or, for futures, by the caller as it waits).
pub(crate) struct Pipeline {
    config: ClientConfig,
    outgoing: Outgoing,
    shared: Arc<PipeShared>,
    reader: Reader,
}

/// Who reads a pipeline's replies.
enum Reader {
    /// A thread of the pipeline's own, started with it.
    Thread(Option<std::thread::JoinHandle<()>>),
    /// The caller, as it waits for a future's reply: no thread to wake, so a batch costs
    /// a task switch and a futex wake fewer (as a gRPC caller drains its own completion
    /// queue). Only while the calls in flight, requests and replies, fit the sockets'
    /// buffers ([`Refill::fits`]): the caller's blocking write must never wait for
    /// replies that nobody reads meanwhile.
    Caller(Box<CallerReads>),
}

/// What the caller reads replies with.
struct CallerReads {
    reader: BufReader<DeadlineReader>,
    payload: Vec<u8>,
    requests: Arc<Requests>,
    encoded: Arc<Encoded>,
}

/// A call in flight whose reply the caller waits for later (a future per call).
pub(crate) struct Handle {
    id: u32,
    sent: Instant,
}

impl Pipeline {
    /// Connects a pipeline as `config` says, its replies checked by `requests`.
    pub(crate) fn connect(config: &ClientConfig, requests: Arc<Requests>) -> Result<Pipeline> {
        Pipeline::timed(config, requests, None)
    }

    /// Connects a pipeline as `config` says, its replies checked by `requests` and, with
    /// `times`, timed as they come in.
    pub(crate) fn timed(
        config: &ClientConfig,
        requests: Arc<Requests>,
        times: Option<Arc<dyn ReplyTimes>>,
    ) -> Result<Pipeline> {
        let (writer, reader) = config.open()?;
        Pipeline::start(config, writer, reader, requests, times, false)
    }

    /// Connects a pipeline for futures as `config` says, up to `depth` in flight: the
    /// caller reads the replies as it waits where they fit the sockets' buffers, else a
    /// reader thread.
    pub(crate) fn for_futures(
        config: &ClientConfig,
        requests: Arc<Requests>,
        depth: usize,
    ) -> Result<Pipeline> {
        let (writer, reader) = config.open()?;
        let caller_reads = Refill::fits(&requests, depth);
        Pipeline::start(config, writer, reader, requests, None, caller_reads)
    }

    /// Starts the pipeline of a connection opened by `config` (hellos exchanged):
    /// `writer` to send on, `reader` to read replies from, checked by `requests` and,
    /// with `times`, timed as they come in; read by a thread of its own, or with
    /// `caller_reads` by the caller (futures only, untimed).
    fn start(
        config: &ClientConfig,
        writer: SocketStream,
        reader: BufReader<DeadlineReader>,
        requests: Arc<Requests>,
        times: Option<Arc<dyn ReplyTimes>>,
        caller_reads: bool,
    ) -> Result<Pipeline> {
        let shared = Arc::new(PipeShared {
            state: Mutex::new(PipeState {
                in_flight: InFlight::new(FIRST_ID),
                room_wanted: 0,
                refill: None,
                reply_wanted: None,
                spare: Vec::new(),
                error: None,
                closing: false,
            }),
            progress: Condvar::new(),
        });
        let encoded = Arc::new(requests.encoded(config.codec));
        if caller_reads {
            return Ok(Pipeline {
                config: config.clone(),
                outgoing: Outgoing::new(writer, encoded.clone()),
                shared,
                reader: Reader::Caller(Box::new(CallerReads {
                    reader,
                    payload: Vec::new(),
                    requests,
                    encoded,
                })),
            });
        }
        let s = shared.clone();
        let for_reader = config.clone();
        let refills = Outgoing::new(
            writer.try_clone().map_err(|e| config.failed_by("", e))?,
            encoded.clone(),
        );
        let thread = std::thread::Builder::new()
            .name("bb-rpc-reader".into())
            .spawn(move || {
                let replies = Replies {
                    config: &for_reader,
                    requests: &requests,
                    encoded: &refills.encoded.clone(),
                    shared: &s,
                    times: times.as_deref(),
                };
                replies.read(reader, refills)
            })
            .map_err(|e| config.failed_by("starting the reader thread", e))?;
        Ok(Pipeline {
            config: config.clone(),
            outgoing: Outgoing::new(writer, encoded),
            shared,
            reader: Reader::Thread(Some(thread)),
        })
    }

    /// Waits until fewer than `depth` calls are in flight; returns how many more may go.
    /// Fails once the oldest call in flight has had no reply by its deadline.
    pub(crate) fn wait_for_room(&mut self, depth: usize) -> Result<usize> {
        let mut state = self.shared.lock();
        loop {
            if let Some(e) = &state.error {
                return Err(self.config.fail(e));
            }
            if state.in_flight.len() < depth {
                return Ok(depth - state.in_flight.len());
            }
            let (oldest, call) = state.in_flight.oldest().expect("depth is at least 1");
            let deadline = call.sent + self.config.timeout;
            let now = Instant::now();
            if now >= deadline {
                return Err(self.config.fail(format!(
                    "no reply to call {oldest} within {} (--call-timeout), {} calls in flight",
                    crate::util::format::format_duration(self.config.timeout),
                    state.in_flight.len()
                )));
            }
            state.room_wanted = depth;
            state = self
                .shared
                .progress
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            state.room_wanted = 0;
        }
    }

    fn send(&mut self) -> Result<()> {
        self.outgoing
            .send()
            .map_err(|e| self.config.failed_by("sending calls", e))
    }

    /// Sends `count` calls in one write, completed by the reader thread; the i-th was
    /// due at `due[i]` (an open loop's schedule), or is due as it is sent where `due` is
    /// None. Returns when they were sent. The caller makes room first.
    pub(crate) fn issue(&mut self, count: usize, due: Option<&[Instant]>) -> Result<Instant> {
        let sent = Instant::now();
        let first = self.shared.lock().record(count, sent, due);
        self.outgoing.push(first, count);
        self.send()?;
        Ok(sent)
    }

    /// Makes `n` calls with up to `depth` in flight, completed by the reader thread,
    /// and waits for the last of them.
    pub(crate) fn calls_async(&mut self, requests: &Requests, n: u64, depth: usize) -> Result<()> {
        if Refill::fits(requests, depth) {
            return self.calls_refilled(n, depth);
        }
        let mut issued = 0u64;
        while issued < n {
            let room = self.wait_for_room(depth)?.min((n - issued) as usize);
            self.issue(room, None)?;
            issued += room as u64;
        }
        self.wait_for_room(1).map(|_| ())
    }

    /// [`Pipeline::calls_async`] with the reader thread sending each call that its
    /// replies make room for, as it completes them: the sender sends the first `depth`
    /// and waits for the last reply, so a batch costs the reader's read and write and
    /// no wake of this thread.
    fn calls_refilled(&mut self, n: u64, depth: usize) -> Result<()> {
        {
            let mut state = self.shared.lock();
            if let Some(e) = &state.error {
                return Err(self.config.fail(e));
            }
            let count = (depth as u64).min(n) as usize;
            state.refill = Some(Refill {
                remaining: n - count as u64,
                depth,
            });
            // Sent under the lock, as the reader thread sends its refills: the two
            // never write at once.
            let first = state.record(count, Instant::now(), None);
            self.outgoing.push(first, count);
            self.outgoing
                .send()
                .map_err(|e| self.config.failed_by("sending calls", e))?;
        }
        let done = self.wait_for_room(1).map(|_| ());
        self.shared.lock().refill = None;
        done
    }

    /// Sends `count` calls (buffered until [`Pipeline::flush`]) and queues their
    /// handles behind `handles`.
    fn call_futures(&mut self, count: usize, handles: &mut VecDeque<Handle>) -> Result<()> {
        let sent = Instant::now();
        let first = {
            let mut state = self.shared.lock();
            if let Some(e) = &state.error {
                return Err(self.config.fail(e));
            }
            let first = state.in_flight.next_id();
            for _ in 0..count {
                state.in_flight.push(Sent {
                    pending: Pending::Handle(None),
                    sent,
                    due: sent,
                });
            }
            first
        };
        self.outgoing.push(first, count);
        handles.extend((0..count).map(|i| Handle {
            id: first.wrapping_add(i as u32),
            sent,
        }));
        Ok(())
    }

    /// Sends the calls buffered by [`Pipeline::call_futures`].
    pub(crate) fn flush(&mut self) -> Result<()> {
        if self.outgoing.out.is_empty() {
            return Ok(());
        }
        self.send()
    }

    /// Waits for the reply of the oldest handle in `handles`, until its deadline, then
    /// takes it and every handle after it whose reply is in too, with their replies,
    /// into `replies`.
    fn wait_ready(
        &mut self,
        handles: &mut VecDeque<Handle>,
        replies: &mut Vec<(u32, Arrived)>,
    ) -> Result<()> {
        let oldest = handles.front().expect("a call is outstanding");
        let (id, deadline) = (oldest.id, oldest.sent + self.config.timeout);
        let mut state = match &mut self.reader {
            Reader::Caller(caller) => {
                caller.read_until(id, deadline, &self.config, &self.shared)?
            }
            Reader::Thread(_) => wait_for_reply(&self.shared, id, deadline, &self.config)?,
        };
        while let Some(h) = handles.front() {
            let Some(reply) = state.take_reply(h.id) else {
                break;
            };
            replies.push((h.id, reply));
            handles.pop_front();
        }
        Ok(())
    }

    /// Checks the reply to future `id`.
    fn check(&self, id: u32, payload: &[u8], requests: &Requests) -> Result<()> {
        protocol::decode_reply(requests.method, self.config.codec, payload)
            .and_then(|r| requests.check(id, &r))
            .map_err(|e| self.config.fail(e))
    }

    /// Makes `n` calls through handles, up to `depth` outstanding: the oldest is waited
    /// for, and taken with every other whose reply is in too; their replies are
    /// checked, and the freed room refilled in one send.
    pub(crate) fn calls_future(&mut self, requests: &Requests, n: u64, depth: usize) -> Result<()> {
        let mut outstanding = VecDeque::with_capacity(depth);
        let mut replies = Vec::with_capacity(depth);
        let (mut issued, mut done) = (0u64, 0u64);
        while done < n {
            let count = (depth - outstanding.len()).min((n - issued) as usize);
            self.call_futures(count, &mut outstanding)?;
            issued += count as u64;
            self.flush()?;
            self.wait_ready(&mut outstanding, &mut replies)?;
            for (id, reply) in &replies {
                if let Arrived::Other(payload) = reply {
                    self.check(*id, payload, requests)?;
                }
            }
            done += replies.len() as u64;
            // Their buffers go back for the reader's next replies.
            let buffers = replies.drain(..).filter_map(|(_, reply)| match reply {
                Arrived::Other(payload) => Some(payload),
                Arrived::Exact => None,
            });
            self.shared.lock().spare.extend(buffers);
        }
        Ok(())
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        let _ = self.outgoing.writer.shutdown(std::net::Shutdown::Both);
        if let Reader::Thread(thread) = &mut self.reader {
            if let Some(t) = thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Waits, on the reader thread's signal, until future `id`'s reply is in (the state
/// then locked), the connection fails, or `deadline` passes.
fn wait_for_reply<'s>(
    shared: &'s PipeShared,
    id: u32,
    deadline: Instant,
    config: &ClientConfig,
) -> Result<std::sync::MutexGuard<'s, PipeState>> {
    let mut state = shared.lock();
    while !state.answered(id) {
        if let Some(e) = &state.error {
            return Err(config.fail(e));
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(config.fail(no_reply(id, config)));
        }
        state.reply_wanted = Some(id);
        state = shared
            .progress
            .wait_timeout(state, deadline - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
        state.reply_wanted = None;
    }
    Ok(state)
}

/// The failure of a future whose reply did not come by its deadline.
fn no_reply(id: u32, config: &ClientConfig) -> String {
    format!(
        "no reply to call {id} within {} (--call-timeout)",
        crate::util::format::format_duration(config.timeout)
    )
}

impl CallerReads {
    /// Reads replies until future `id`'s is in (the state then locked), the connection
    /// fails, or `deadline` passes.
    fn read_until<'s>(
        &mut self,
        id: u32,
        deadline: Instant,
        config: &ClientConfig,
        shared: &'s PipeShared,
    ) -> Result<std::sync::MutexGuard<'s, PipeState>> {
        self.reader.get_mut().set_deadline(deadline);
        loop {
            let state = shared.lock();
            if state.answered(id) {
                return Ok(state);
            }
            if let Some(e) = &state.error {
                return Err(config.fail(e));
            }
            drop(state);
            if Instant::now() >= deadline {
                return Err(config.fail(no_reply(id, config)));
            }
            let replies = Replies {
                config,
                requests: &self.requests,
                encoded: &self.encoded,
                shared,
                times: None,
            };
            // A read that timed out between frames ends at the deadline above.
            if let Batch::Failed(e) = replies.read_batch(&mut self.reader, &mut self.payload, None)
            {
                shared.lock().error = Some(e.clone());
                return Err(config.fail(e));
            }
        }
    }
}

impl PipeState {
    /// Whether call `id` is a future whose reply is in.
    fn answered(&self, id: u32) -> bool {
        matches!(
            self.in_flight.get(id),
            Some(Sent {
                pending: Pending::Handle(Some(_)),
                ..
            })
        )
    }

    /// Takes future `id` out once its reply is in, with the reply.
    fn take_reply(&mut self, id: u32) -> Option<Arrived> {
        if !self.answered(id) {
            return None;
        }
        match self.in_flight.remove(id)?.pending {
            Pending::Handle(reply) => reply,
            Pending::Callback => None,
        }
    }

    /// Records `count` calls sent at `sent`, the i-th due at `due[i]` (else as sent),
    /// completed by the reader thread; returns the first one's id.
    fn record(&mut self, count: usize, sent: Instant, due: Option<&[Instant]>) -> u32 {
        let first = self.in_flight.next_id();
        for i in 0..count {
            self.in_flight.push(Sent {
                pending: Pending::Callback,
                sent,
                due: due.map_or(sent, |d| d[i]),
            });
        }
        first
    }
}

/// Async calls that the reader thread sends as their room comes free.
struct Refill {
    /// Calls still to send.
    remaining: u64,
    depth: usize,
}

/// The most request and reply bytes in flight for the reader thread to send refills:
/// its blocking write must always fit in the sockets' buffers, since while it writes
/// nobody reads the replies. Beyond this the sender refills, as for an open loop.
const REFILL_IN_FLIGHT: usize = 64 << 10;

impl Refill {
    /// Whether `depth` calls of `requests` in flight, requests and replies, stay within
    /// [`REFILL_IN_FLIGHT`].
    fn fits(requests: &Requests, depth: usize) -> bool {
        // A frame's header, and MessagePack's bin header at most.
        let frame = HEADER_LEN + 5 + requests.payload_len();
        depth.saturating_mul(2 * frame) <= REFILL_IN_FLIGHT
    }
}

/// Calls on their way out: the socket they are written to, the calls encoded once, and
/// the buffer their frames gather in until one write sends them. The sender has one;
/// the reader thread, which refills, has its own on a clone of the socket.
struct Outgoing {
    writer: SocketStream,
    encoded: Arc<Encoded>,
    out: Vec<u8>,
}

impl Outgoing {
    fn new(writer: SocketStream, encoded: Arc<Encoded>) -> Outgoing {
        Outgoing {
            writer,
            encoded,
            out: Vec::new(),
        }
    }

    /// Appends the requests of calls `first` to `first + count - 1`.
    fn push(&mut self, first: u32, count: usize) {
        self.encoded.push(&mut self.out, first, count);
    }

    /// Writes what was appended, in one write.
    fn send(&mut self) -> std::io::Result<()> {
        let sent = self.writer.write_all(&self.out);
        self.out.clear();
        sent
    }
}

/// What one read of replies came to.
enum Batch {
    /// Replies read and completed.
    Read,
    /// Nothing came within the socket's timeout, between frames.
    Timeout,
    /// The connection failed, or a reply was wrong: the run's error.
    Failed(String),
}

/// The reader of replies: completes calls by id until the connection ends or fails.
struct Replies<'a> {
    config: &'a ClientConfig,
    requests: &'a Requests,
    /// The replies expected, byte for byte.
    encoded: &'a Encoded,
    shared: &'a PipeShared,
    /// Where reply times go.
    times: Option<&'a dyn ReplyTimes>,
}

impl Replies<'_> {
    /// Reads replies until the connection ends or fails. Each read brings what the
    /// socket holds (up to 64 KiB, many replies at a pipeline's depth): the replies read
    /// together are completed under one lock, then their room refilled (async) in one
    /// write, then the sender woken if it waits for that much room.
    fn read(&self, mut reader: BufReader<DeadlineReader>, mut outgoing: Outgoing) {
        let mut payload = Vec::new();
        let error = loop {
            match self.read_batch(&mut reader, &mut payload, Some(&mut outgoing)) {
                Batch::Read => {}
                // Between frames: the writer side holds each call to its deadline, and
                // an idle pipeline just waits on.
                Batch::Timeout if !self.shared.lock().closing => {}
                Batch::Failed(e) if !self.shared.lock().closing => break e,
                Batch::Timeout | Batch::Failed(_) => return,
            }
        };
        // Waiters see the error (a future whose reply came before it still gets it).
        self.shared.lock().error = Some(error);
        self.shared.progress.notify_all();
    }

    /// Reads what the socket brings (waiting for it), completes every whole reply it
    /// holds under one lock, then refills through `outgoing` (the reader thread's async
    /// calls) and wakes the sender if it waits for that much room or that reply.
    fn read_batch(
        &self,
        reader: &mut BufReader<DeadlineReader>,
        payload: &mut Vec<u8>,
        outgoing: Option<&mut Outgoing>,
    ) -> Batch {
        let (config, shared) = (self.config, self.shared);
        let h = match wire::read_frame(reader, config.max_frame, payload) {
            Ok(h) => h,
            // Only between frames: inside one a timeout is an error, the stream would
            // be out of step.
            Err(WireError::Io(e)) if wire::is_timeout(&e) => return Batch::Timeout,
            Err(e) => return Batch::Failed(format!("waiting for replies: {e}")),
        };
        // Timed as they came, before their checks: the replies of one read together.
        let arrived = self.times.is_some().then(Instant::now);
        let mut state = shared.lock();
        if let Err(e) = self.complete(&mut state, &h, payload, arrived) {
            return Batch::Failed(e);
        }
        loop {
            let run = self.complete_run(&mut state, reader.buffer());
            if run > 0 {
                reader.consume(run);
                continue;
            }
            let Some((h, length)) = wire::buffered_frame(reader.buffer(), config.max_frame) else {
                break;
            };
            let frame = &reader.buffer()[HEADER_LEN..length];
            let completed = self.complete(&mut state, &h, frame, arrived);
            reader.consume(length);
            if let Err(e) = completed {
                return Batch::Failed(e);
            }
        }
        if let Some(outgoing) = outgoing {
            if let Err(e) = self.refill(&mut state, outgoing) {
                return Batch::Failed(e);
            }
        }
        let wake = state.in_flight.len() < state.room_wanted
            || state.reply_wanted.is_some_and(|id| state.answered(id));
        drop(state);
        if wake {
            shared.progress.notify_all();
        }
        Batch::Read
    }

    /// Completes the replies at the front of `buf` that are, byte for byte, those of the
    /// oldest calls in flight in order, each an async call: a pipeline's usual batch, with
    /// no lookup per reply. Untimed pipelines only (an open loop times each reply).
    /// Returns how many bytes they took; any other reply is [`Replies::complete`]'s.
    fn complete_run(&self, state: &mut PipeState, buf: &[u8]) -> usize {
        if self.times.is_some() {
            return 0;
        }
        let Some((oldest, _)) = state.in_flight.oldest() else {
            return 0;
        };
        let exact = self.encoded.reply_run(buf, oldest, state.in_flight.len());
        let taken = state
            .in_flight
            .take_oldest(exact, |call| matches!(call.pending, Pending::Callback));
        taken * self.encoded.reply_len()
    }

    /// Checks reply `h`, which came at `arrived`, and completes its call; an error ends
    /// the connection.
    fn complete(
        &self,
        state: &mut PipeState,
        h: &Header,
        payload: &[u8],
        arrived: Option<Instant>,
    ) -> std::result::Result<(), String> {
        // A reply that is, byte for byte, the one its call expects needs no other check.
        let exact = self.encoded.is_reply(h, payload, h.id);
        if !exact {
            // The status first: a connection-level error (too large, a bad header)
            // comes with id 0, which no call has.
            check_header(h, payload)?;
        }
        // A future answered already counts as no call in flight: its reply came twice.
        let call = match state.in_flight.get_mut(h.id) {
            Some(call) if !matches!(call.pending, Pending::Handle(Some(_))) => call,
            _ => {
                return Err(format!(
                    "a reply came with id {}, which no call in flight has",
                    h.id
                ))
            }
        };
        let requests = self.requests;
        if h.method != requests.method {
            return Err(format!(
                "the reply to call {} names method {}, not {}",
                h.id, h.method, requests.method
            ));
        }
        match &mut call.pending {
            Pending::Callback => {
                if !exact {
                    protocol::decode_reply(h.method, self.config.codec, payload)
                        .and_then(|r| requests.check(h.id, &r))?;
                }
                if let (Some(t), Some(at)) = (self.times, arrived) {
                    t.replied(call.due, call.sent, at);
                }
                state.in_flight.remove(h.id);
            }
            Pending::Handle(reply) if exact => *reply = Some(Arrived::Exact),
            Pending::Handle(reply) => {
                let mut buffer = state.spare.pop().unwrap_or_default();
                buffer.clear();
                buffer.extend_from_slice(payload);
                *reply = Some(Arrived::Other(buffer));
            }
        }
        Ok(())
    }

    /// Sends the async calls that the room just freed lets go, under the lock (the
    /// sender's first calls went under it too).
    fn refill(
        &self,
        state: &mut PipeState,
        outgoing: &mut Outgoing,
    ) -> std::result::Result<(), String> {
        let Some(refill) = &mut state.refill else {
            return Ok(());
        };
        let room = refill.depth.saturating_sub(state.in_flight.len());
        let count = (room as u64).min(refill.remaining) as usize;
        if count == 0 {
            return Ok(());
        }
        refill.remaining -= count as u64;
        let first = state.record(count, Instant::now(), None);
        outgoing.push(first, count);
        outgoing.send().map_err(|e| format!("sending calls: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::protocol::{Codec, Reply};
    use super::*;
    use crate::net::addr::Addr;
    use crate::util::temp::TempDir;
    use std::io::Read;
    use std::time::Duration;

    /// A server on a fresh Unix socket that reads the requests each read brings, lets
    /// `answer` rewrite the (id, payload) echo replies to them (reorder, rename, drop),
    /// and writes what is left; with a client config for it, timing out after `timeout`.
    fn server(
        timeout: Duration,
        answer: impl Fn(&mut Vec<(u32, Vec<u8>)>) + Send + 'static,
    ) -> (ClientConfig, TempDir) {
        let dir = TempDir::new("rpc-client");
        let addr = Addr::Unix(dir.join("rpc.sock"));
        let listener = addr.listen().unwrap();
        std::thread::spawn(move || {
            let mut stream = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            wire::send_hello(&mut stream).unwrap();
            wire::expect_hello(&mut reader).unwrap();
            let mut payload = Vec::new();
            while let Ok(h) = wire::read_frame(&mut reader, 1024, &mut payload) {
                let mut replies = vec![(h.id, payload.clone())];
                while let Some((h, length)) = wire::buffered_frame(reader.buffer(), 1024) {
                    replies.push((h.id, reader.buffer()[HEADER_LEN..length].to_vec()));
                    reader.consume(length);
                }
                answer(&mut replies);
                let mut out = Vec::new();
                for (id, data) in &replies {
                    let request = Header {
                        id: *id,
                        method: protocol::ECHO,
                        ..Header::default()
                    };
                    protocol::push_reply(&mut out, &request, &Reply::Echo(data));
                }
                if stream.write_all(&out).is_err() {
                    return;
                }
            }
            // Until the client goes.
            let _ = reader.read(&mut [0u8; 1]);
        });
        let config = ClientConfig {
            addr,
            codec: Codec::Raw,
            max_frame: 1024,
            timeout,
        };
        (config, dir)
    }

    /// `n` calls of `size` bytes at `depth`, async or (`future`) through handles,
    /// against a server that answers as `answer` says.
    fn calls_against(
        future: bool,
        size: usize,
        depth: usize,
        n: u64,
        timeout: Duration,
        answer: impl Fn(&mut Vec<(u32, Vec<u8>)>) + Send + 'static,
    ) -> Result<()> {
        let (config, _dir) = server(timeout, answer);
        let requests = Arc::new(Requests::echo(size, 7));
        match future {
            true => Pipeline::for_futures(&config, requests.clone(), depth)
                .and_then(|mut p| p.calls_future(&requests, n, depth)),
            false => Pipeline::connect(&config, requests.clone())
                .and_then(|mut p| p.calls_async(&requests, n, depth)),
        }
    }

    #[test]
    fn replies_in_any_order_complete_their_own_calls() {
        // Refilled by the reader thread, and (1000 bytes × 64 in flight being more than
        // the reader may write without reading) by the sender.
        for (size, depth) in [(16, 1), (16, 3), (16, 64), (1000, 64)] {
            let by_reader = Refill::fits(&Requests::echo(size, 7), depth);
            assert_eq!(by_reader, size == 16, "{size} B × {depth}");
            calls_against(false, size, depth, 500, Duration::from_secs(5), |r| {
                r.reverse()
            })
            .unwrap();
        }
        // Futures read by their caller (16 B) and, beyond the sockets' buffers, by the
        // reader thread (1000 B × 64).
        for (size, depth) in [(16, 1), (16, 64), (1000, 64)] {
            calls_against(true, size, depth, 500, Duration::from_secs(5), |r| {
                r.reverse()
            })
            .unwrap();
        }
    }

    #[test]
    fn a_reply_for_an_unknown_id_or_twice_fails_the_run_with_that_id() {
        for future in [false, true] {
            let e = calls_against(future, 16, 8, 100, Duration::from_secs(5), |r| r[0].0 = 999)
                .unwrap_err()
                .to_string();
            assert!(
                e.ends_with(": a reply came with id 999, which no call in flight has"),
                "{e}"
            );
            let e = calls_against(future, 16, 8, 100, Duration::from_secs(5), |r| {
                r.push(r[0].clone())
            })
            .unwrap_err()
            .to_string();
            assert!(
                e.ends_with(": a reply came with id 1, which no call in flight has"),
                "future {future}: {e}"
            );
            // Twice inside a run of right replies, which are completed together.
            let e = calls_against(future, 16, 8, 100, Duration::from_secs(5), |r| {
                if r.len() > 3 {
                    r.insert(3, r[1].clone())
                }
            })
            .unwrap_err()
            .to_string();
            assert!(
                e.contains(": a reply came with id ")
                    && e.ends_with(", which no call in flight has"),
                "future {future}: {e}"
            );
        }
    }

    #[test]
    fn a_reply_encoded_otherwise_passes_and_one_with_other_bytes_fails() {
        let requests = Arc::new(Requests::echo(16, 7));
        // MessagePack calls, their bin8 echoed back as a bin16 of the same bytes: not the
        // frame each call expects, the same value.
        for future in [false, true] {
            let (mut config, _dir) = server(Duration::from_secs(5), |r| {
                for (_, p) in r.iter_mut() {
                    assert_eq!(p[0], 0xc4, "a bin8");
                    let mut wider = vec![0xc5, 0, p[1]];
                    wider.extend_from_slice(&p[2..]);
                    *p = wider;
                }
            });
            config.codec = Codec::Msgpack;
            match future {
                true => Pipeline::for_futures(&config, requests.clone(), 16)
                    .and_then(|mut p| p.calls_future(&requests, 300, 16)),
                false => Pipeline::connect(&config, requests.clone())
                    .and_then(|mut p| p.calls_async(&requests, 300, 16)),
            }
            .unwrap();
        }
        // One byte of call 5's echo changed.
        for future in [false, true] {
            let e = calls_against(future, 16, 8, 100, Duration::from_secs(5), |r| {
                for (id, p) in r.iter_mut() {
                    if *id == 5 {
                        p[9] ^= 1;
                    }
                }
            })
            .unwrap_err()
            .to_string();
            assert!(
                e.ends_with("the reply to call 5 does not match its request"),
                "future {future}: {e}"
            );
        }
    }

    #[test]
    fn the_oldest_call_without_a_reply_fails_at_its_deadline() {
        // Calls 1 to 20 are answered, then none: call 21 is the oldest left.
        let start = Instant::now();
        let e = calls_against(false, 16, 8, 100, Duration::from_millis(300), |r| {
            r.retain(|(id, _)| *id <= 20)
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("no reply to call 21 within 300ms (--call-timeout), 8 calls in flight"),
            "{e}"
        );
        let e = calls_against(true, 16, 8, 100, Duration::from_millis(300), |r| {
            r.retain(|(id, _)| *id <= 20)
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.ends_with("no reply to call 21 within 300ms (--call-timeout)"),
            "{e}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}
