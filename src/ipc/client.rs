//! The client side, as the harness measures it: a remote call (marshal, send, let the
//! server dispatch, take any callback, check the answer), the transport's floor (a 1-byte
//! ping-pong), and the local baseline (the same functions called in this process).

use super::calls::{self, Call, USAGE_METHOD};
use super::conn::Conn;
#[cfg(feature = "fault-injection")]
use super::fault::ClientFault;
use super::server::{self, Role, ServerChild, PING, USAGE};
use super::transport::{self, SocketFile, Transport};
use crate::harness::benchmark::Workload;
use crate::system::cpu::CpuTime;
use crate::util::error::{Error, Result};
use crate::wire::msgpack::{self, Value};
use crate::wire::{status, Header, WireError, FLAG_CALLBACK, FLAG_RESPONSE};
use std::time::Duration;

/// Which CPUs the two sides run on: `--pin CLIENT,SERVER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pin {
    pub client: Option<usize>,
    pub server: Option<usize>,
}

impl Pin {
    /// The client's and the server's CPUs of `placement`.
    pub fn of(placement: &crate::system::pinning::Pinning) -> Pin {
        let cpus = placement.cpus();
        Pin {
            client: cpus.map(|c| c.0),
            server: cpus.map(|c| c.1),
        }
    }

    fn pin_client(&self) -> Result<()> {
        match self.client {
            Some(cpu) => crate::harness::pin_process(&[cpu]),
            None => Ok(()),
        }
    }
}

/// A server child and the client's connection to it.
struct Session {
    conn: Conn,
    server: ServerChild,
    transport: Transport,
    // Dropped last: the file goes once the server is gone.
    _socket_file: Option<SocketFile>,
}

impl Session {
    fn start(role: Role, transport: Transport, pin: Pin) -> Result<Session> {
        pin.pin_client()?;
        let opened = transport::open(transport)?;
        let server = server::spawn(
            role,
            transport,
            opened.server_fds,
            opened.socket_file.as_ref().map(SocketFile::path),
            pin.server,
        )?;
        let mut session = Session {
            conn: opened.client,
            server,
            transport,
            _socket_file: opened.socket_file,
        };
        session
            .conn
            .handshake()
            .map_err(|e| session.failure("handshake", e))?;
        Ok(session)
    }

    /// An error of the connection, named with the transport and what was going on, and
    /// caused by `e`.
    fn failure(&self, doing: &str, e: WireError) -> Error {
        let context = format!("{doing} over {}", self.transport.name());
        match e {
            WireError::Closed => Error::failed(format!(
                "{context}: the server (pid {}) closed the connection without answering",
                self.server.pid()
            )),
            e => Error::caused(context, e),
        }
    }

    /// The CPU the server's serving thread (its main thread) last ran on.
    fn server_cpu(&self) -> Vec<usize> {
        let pid = self.server.pid();
        crate::system::placement::last_cpus(pid, |tid, _| tid == pid)
    }

    /// Closes the connection, then waits for the server to end and reaps it.
    fn close(self) -> Result<()> {
        drop(self.conn);
        self.server.stop(Duration::from_secs(5))
    }
}

/// A session as a workload holds it: what the harness asks of the server (its CPU, where
/// it ran) answered the same way for every role, and `finish` closing it (a second finish
/// finds nothing to close).
struct Link {
    session: Option<Session>,
    role: Role,
}

impl Link {
    fn start(role: Role, transport: Transport, pin: Pin) -> Result<Link> {
        Ok(Link {
            session: Some(Session::start(role, transport, pin)?),
            role,
        })
    }

    fn session(&mut self) -> Result<&mut Session> {
        self.session
            .as_mut()
            .ok_or_else(|| Error::failed("the connection to the server is closed"))
    }

    fn peer_cpu(&mut self) -> Result<CpuTime> {
        let role = self.role;
        server_usage(self.session()?, role)
    }

    fn peer_placement(&self) -> Vec<usize> {
        self.session
            .as_ref()
            .map_or(Vec::new(), Session::server_cpu)
    }

    fn finish(&mut self) -> Result<()> {
        self.session.take().map_or(Ok(()), Session::close)
    }
}

/// Calls into the server child.
pub struct Remote {
    call: Call,
    link: Link,
    /// A fault for the tests to inject at the first call.
    #[cfg(feature = "fault-injection")]
    fault: Option<ClientFault>,
    id: u32,
    args: Vec<u8>,
    payload: Vec<u8>,
    block_answer: Vec<u8>,
}

impl Remote {
    pub fn start(call: Call, transport: Transport, pin: Pin) -> Result<Remote> {
        Ok(Remote {
            call,
            link: Link::start(Role::Calls, transport, pin)?,
            #[cfg(feature = "fault-injection")]
            fault: ClientFault::from_env(),
            id: 0,
            args: Vec::with_capacity(64),
            payload: Vec::with_capacity(64),
            block_answer: Vec::with_capacity(16),
        })
    }

    fn call_once(&mut self) -> Result<()> {
        let session = self.link.session()?;
        let call = self.call;
        let name = call.name();
        self.id = self.id.wrapping_add(1);
        self.args.clear();
        call.encode_args(&mut self.args);
        let method = call.id();
        #[cfg(feature = "fault-injection")]
        let method = match self.fault.take() {
            Some(fault) => fault.apply(method, &mut self.args),
            None => method,
        };
        let request = Header {
            id: self.id,
            method,
            ..Default::default()
        };
        let fail = |s: &Session, e| s.failure(name, e);
        session
            .conn
            .send(request, &self.args)
            .map_err(|e| fail(session, e))?;
        let mut callbacks = 0;
        loop {
            let h = session
                .conn
                .recv(&mut self.payload)
                .map_err(|e| fail(session, e))?;
            if h.flags == FLAG_CALLBACK && h.id == self.id {
                callbacks += 1;
                let x = msgpack::decode_all(&self.payload)
                    .ok()
                    .and_then(|v| v.as_i64())
                    .ok_or_else(|| {
                        fail(
                            session,
                            WireError::Malformed(
                                "the callback's argument is not an integer".into(),
                            ),
                        )
                    })?;
                self.block_answer.clear();
                msgpack::write_int(&mut self.block_answer, calls::block(x));
                session
                    .conn
                    .send(
                        Header {
                            flags: FLAG_CALLBACK | FLAG_RESPONSE,
                            ..h
                        },
                        &self.block_answer,
                    )
                    .map_err(|e| fail(session, e))?;
                continue;
            }
            if h.flags != FLAG_RESPONSE || h.id != self.id {
                return Err(fail(
                    session,
                    WireError::Malformed(format!(
                        "expected the answer to call {}, got flags {} id {}",
                        self.id, h.flags, h.id
                    )),
                ));
            }
            if h.status != status::OK {
                return Err(Error::failed(format!(
                    "{name} over {}: the server refused the call ({}): {}",
                    session.transport.name(),
                    status::name(h.status),
                    String::from_utf8_lossy(&self.payload)
                )));
            }
            let answer = msgpack::decode_all(&self.payload).map_err(|e| fail(session, e))?;
            return calls::check_answer(call, &answer, callbacks)
                .map_err(|e| Error::failed(format!("{e} (over {})", session.transport.name())));
        }
    }
}

/// Asks the server for its CPU time: a usage request as a call (`calls`) or a byte (floor).
fn server_usage(session: &mut Session, role: Role) -> Result<CpuTime> {
    let mut payload = Vec::new();
    let asked = match role {
        Role::Calls => session.conn.send(
            Header {
                method: USAGE_METHOD,
                ..Default::default()
            },
            &[],
        ),
        Role::Floor => session.conn.write_raw(&[USAGE]),
    };
    let answer = asked.and_then(|_| session.conn.recv(&mut payload));
    let usage = answer.and_then(|h| {
        if h.method == USAGE_METHOD && h.status == status::OK {
            server::decode_usage(&payload)
        } else {
            Err(WireError::Malformed(format!("unexpected answer {h:?}")))
        }
    });
    usage.map_err(|e| session.failure("asking the server for its CPU time", e))
}

impl Workload for Remote {
    fn run(&mut self, ops: u64) -> Result<()> {
        for _ in 0..ops {
            self.call_once()?;
        }
        Ok(())
    }

    fn peer_cpu(&mut self) -> Result<CpuTime> {
        self.link.peer_cpu()
    }

    fn peer_placement(&mut self) -> Vec<usize> {
        self.link.peer_placement()
    }

    fn finish(&mut self) -> Result<()> {
        self.link.finish()
    }
}

/// The transport's bare round trip: one byte each way.
pub struct Floor {
    link: Link,
}

impl Floor {
    pub fn start(transport: Transport, pin: Pin) -> Result<Floor> {
        Ok(Floor {
            link: Link::start(Role::Floor, transport, pin)?,
        })
    }
}

impl Workload for Floor {
    fn run(&mut self, ops: u64) -> Result<()> {
        let session = self.link.session()?;
        let mut byte = [0u8; 1];
        for _ in 0..ops {
            let echoed = session
                .conn
                .write_raw(&[PING])
                .and_then(|_| session.conn.read_raw(&mut byte));
            echoed.map_err(|e| session.failure("ping", e))?;
            if byte[0] != PING {
                return Err(Error::failed(format!(
                    "verification mismatch: the floor server echoed byte {}, expected {PING}",
                    byte[0]
                )));
            }
        }
        Ok(())
    }

    fn peer_cpu(&mut self) -> Result<CpuTime> {
        self.link.peer_cpu()
    }

    fn peer_placement(&mut self) -> Vec<usize> {
        self.link.peer_placement()
    }

    fn finish(&mut self) -> Result<()> {
        self.link.finish()
    }
}

/// The same functions called in this process.
pub struct Local {
    call: Call,
    block_runs: u64,
}

impl Local {
    pub fn start(call: Call, pin: Pin) -> Result<Local> {
        pin.pin_client()?;
        Ok(Local {
            call,
            block_runs: 0,
        })
    }
}

impl Workload for Local {
    fn run(&mut self, ops: u64) -> Result<()> {
        for _ in 0..ops {
            let before = self.block_runs;
            let result = std::hint::black_box(calls::call_local(self.call, &mut self.block_runs));
            calls::check_answer(self.call, &Value::Int(result), self.block_runs - before)
                .map_err(|e| Error::failed(format!("{e} (local call)")))?;
        }
        Ok(())
    }
}
