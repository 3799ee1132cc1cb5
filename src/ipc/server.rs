//! The server child: started by the client as a fresh copy of the binary in a hidden
//! server mode (as `harness::fork::spawn` starts every child, and why), serving one
//! connection until the client closes it.
//!
//! The child dies with its parent: PR_SET_PDEATHSIG delivers SIGTERM when the client
//! dies (SIGKILL included), and the child's signal thread then removes the socket file and
//! exits; an end of stream on its connection ends it too. The parent reaps it on every
//! path: at the end of the benchmark, on an error (drop), and from an exit hook on a
//! signal or a timeout.

use super::calls::{self, USAGE_METHOD};
use super::conn::Conn;
use super::transport::{self, Transport};
use crate::harness::fork::Purpose;
use crate::system::cpu::CpuTime;
use crate::util::error::{Error, Result};
use crate::wire::msgpack::{self, Value};
use crate::wire::{status, Header, WireError, FLAG_CALLBACK, FLAG_RESPONSE};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// `ROLE:TRANSPORT:FD[,FD][:CPU]`: what a server child serves, on what.
const SERVER_ENV: &str = "BB_IPC_SERVER";
/// The socket file the child removes if its parent dies first.
const SOCKET_ENV: &str = "BB_IPC_SOCKET";

/// The floor's request bytes: a ping answered by itself, or a request for the server's
/// CPU usage, answered by a frame as a call server answers one.
pub(crate) const PING: u8 = b'p';
pub(crate) const USAGE: u8 = b'u';

/// What a server child does with its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Answers calls in the wire format.
    Calls,
    /// Echoes 1-byte pings: the transport's bare round trip.
    Floor,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Calls => "calls",
            Role::Floor => "floor",
        }
    }
}

/// A running server child, killed and reaped if it is dropped before [`ServerChild::stop`].
pub(crate) struct ServerChild {
    child: Child,
    hook: u64,
    stopped: bool,
}

/// Starts a server child for `role` on the descriptors `fds` of `transport`, pinned to
/// `cpu` if given; `socket_file` is the file it removes if this process dies first.
pub(crate) fn spawn(
    role: Role,
    transport: Transport,
    fds: Vec<OwnedFd>,
    socket_file: Option<&Path>,
    cpu: Option<usize>,
) -> Result<ServerChild> {
    use std::os::unix::process::CommandExt;
    let (mut command, exe) = crate::harness::fork::command_for_self(Purpose::Server)?;
    let raw: Vec<i32> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let list: Vec<String> = raw.iter().map(|f| f.to_string()).collect();
    let mut spec = format!("{}:{}:{}", role.name(), transport.name(), list.join(","));
    if let Some(cpu) = cpu {
        spec.push_str(&format!(":{cpu}"));
    }
    command
        .env(SERVER_ENV, spec)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if let Some(path) = socket_file {
        command.env(SOCKET_ENV, path);
    }
    // SAFETY: runs between fork and exec and only calls fcntl(2), which is
    // async-signal-safe; `raw` was allocated before the fork and is only read.
    unsafe {
        command.pre_exec(move || {
            for &fd in &raw {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let (child, hook) =
        crate::harness::fork::spawn(&mut command, &exe, "the server", Purpose::Server, None)?;
    drop(fds);
    Ok(ServerChild {
        child,
        hook,
        stopped: false,
    })
}

impl ServerChild {
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the child to end by itself (its connection is closed), kills it after
    /// `grace`, and reaps it; an exit other than 0 is an error.
    pub(crate) fn stop(mut self, grace: Duration) -> Result<()> {
        let until = Instant::now() + grace;
        let status =
            crate::system::exit::wait_until(&mut self.child, until, Duration::from_millis(1));
        self.stopped = true;
        self.reap();
        match status {
            Some(s) if s.success() => Ok(()),
            Some(s) => Err(Error::failed(format!("the server child failed ({s})"))),
            None => Err(Error::failed(format!(
                "the server child did not stop within {grace:?} of its connection closing; killed"
            ))),
        }
    }

    fn reap(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        crate::harness::watchdog::remove_exit_hook(self.hook);
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        if !self.stopped {
            self.reap();
        }
    }
}

/// In a server child: serves, then exits (0 when the client closed the connection, 1 on
/// an error). Elsewhere: returns at once. Call it first thing in `main`.
pub fn serve_if_child() {
    let Ok(spec) = std::env::var(SERVER_ENV) else {
        return;
    };
    std::env::remove_var(SERVER_ENV);
    let served = serve(&spec);
    if let Some(code) = crate::harness::signals::exit_requested() {
        crate::harness::watchdog::exit_now(code);
    }
    let code = match served {
        Ok(()) => 0,
        Err(e) => {
            crate::stderr!(
                "{} server: error: {e}",
                crate::util::terminal::program_name()
            );
            1
        }
    };
    crate::harness::watchdog::exit_now(code)
}

fn serve(spec: &str) -> Result<()> {
    #[cfg(feature = "fault-injection")]
    if super::fault::ServerFault::from_env() == Some(super::fault::ServerFault::SlowStart) {
        std::thread::sleep(Duration::from_secs(1));
    }
    if let Ok(path) = std::env::var(SOCKET_ENV) {
        std::env::remove_var(SOCKET_ENV);
        crate::harness::watchdog::add_exit_hook(move || {
            let _ = std::fs::remove_file(&path);
        });
    }
    crate::harness::signals::exit_on_signals();
    let (role, transport, fds, cpu) = parse_spec(spec).map_err(Error::failed)?;
    if let Some(cpu) = cpu {
        crate::harness::pin_process(&[cpu])?;
    }
    let mut conn = transport::server_end(transport, fds)
        .map_err(|e| Error::io(format!("accepting the client on {}", transport.name()), e))?;
    conn.handshake().map_err(Error::from_cause)?;
    let served = match role {
        Role::Calls => serve_calls(&mut conn),
        Role::Floor => serve_floor(&mut conn),
    };
    match served {
        Ok(()) | Err(WireError::Closed) => Ok(()),
        Err(e) => Err(Error::from_cause(e)),
    }
}

fn parse_spec(
    spec: &str,
) -> std::result::Result<(Role, Transport, Vec<OwnedFd>, Option<usize>), String> {
    let bad = || format!("bad {SERVER_ENV} '{spec}'");
    let mut parts = spec.split(':');
    let role = match parts.next() {
        Some("calls") => Role::Calls,
        Some("floor") => Role::Floor,
        _ => return Err(bad()),
    };
    let transport = parts
        .next()
        .and_then(Transport::from_name)
        .ok_or_else(bad)?;
    let fds = parts
        .next()
        .ok_or_else(bad)?
        .split(',')
        .map(|f| f.parse::<i32>().map_err(|_| bad()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let cpu = match parts.next() {
        Some(c) => Some(c.parse().map_err(|_| bad())?),
        None => None,
    };
    let fds = fds
        .into_iter()
        // SAFETY: the parent passed these descriptors to this process alone (they were
        // close-on-exec everywhere else), and each number appears once.
        .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
        .collect();
    Ok((role, transport, fds, cpu))
}

/// Answers `request` with this process's CPU time as `[user_us, sys_us]`.
fn send_usage(conn: &mut Conn, request: Header) -> std::result::Result<(), WireError> {
    let t = CpuTime::of_self();
    let mut answer = Vec::new();
    msgpack::encode(
        &Value::Array(vec![
            Value::Int((t.user * 1e6) as i64),
            Value::Int((t.sys * 1e6) as i64),
        ]),
        &mut answer,
    );
    conn.send(
        Header {
            method: USAGE_METHOD,
            flags: FLAG_RESPONSE,
            status: status::OK,
            ..request
        },
        &answer,
    )
}

/// The server's CPU time from its answer to a usage request.
pub(crate) fn decode_usage(payload: &[u8]) -> std::result::Result<CpuTime, WireError> {
    match msgpack::decode_all(payload)? {
        Value::Array(v) => match (
            v.first().and_then(Value::as_i64),
            v.get(1).and_then(Value::as_i64),
        ) {
            (Some(user), Some(sys)) if v.len() == 2 => Ok(CpuTime {
                user: user as f64 / 1e6,
                sys: sys as f64 / 1e6,
            }),
            _ => Err(WireError::Malformed(format!("usage {v:?}"))),
        },
        other => Err(WireError::Malformed(format!("usage {other:?}"))),
    }
}

/// Answers calls until the client closes the connection.
fn serve_calls(conn: &mut Conn) -> std::result::Result<(), WireError> {
    let mut payload = Vec::new();
    let mut answer = Vec::new();
    let mut callback_buf = Vec::new();
    #[cfg(feature = "fault-injection")]
    let mut fault = super::fault::ServerFault::from_env();
    loop {
        let request = conn.recv(&mut payload)?;
        #[cfg(feature = "fault-injection")]
        let wrong_answer = match fault.take() {
            Some(f) => f.inject(conn)?,
            None => false,
        };
        #[cfg(not(feature = "fault-injection"))]
        let wrong_answer = false;
        if request.flags == 0 && request.method == USAGE_METHOD {
            send_usage(conn, request)?;
            continue;
        }
        answer.clear();
        let status = if request.flags != 0 {
            answer.extend_from_slice(b"expected a call");
            status::ERROR
        } else {
            match msgpack::decode_all(&payload) {
                Err(e) => {
                    answer.extend_from_slice(format!("bad arguments: {e}").as_bytes());
                    status::BAD_ARGUMENTS
                }
                Ok(args) => {
                    match calls::dispatch(request.method, &args, |x| {
                        call_back(conn, request, x, &mut callback_buf)
                    })? {
                        Ok(v) => {
                            msgpack::write_int(&mut answer, v + i64::from(wrong_answer));
                            status::OK
                        }
                        Err(rejection) => {
                            answer.extend_from_slice(rejection.message().as_bytes());
                            rejection.status()
                        }
                    }
                }
            }
        };
        conn.send(
            Header {
                id: request.id,
                method: request.method,
                flags: FLAG_RESPONSE,
                status,
                len: 0,
            },
            &answer,
        )?;
    }
}

/// Runs `method_block`'s block in the client: yields `x` in a callback frame and waits
/// for the client's answer before the call itself is answered.
fn call_back(
    conn: &mut Conn,
    request: Header,
    x: i64,
    buf: &mut Vec<u8>,
) -> std::result::Result<i64, WireError> {
    buf.clear();
    msgpack::write_int(buf, x);
    conn.send(
        Header {
            flags: FLAG_CALLBACK,
            status: status::OK,
            ..request
        },
        buf,
    )?;
    let answer = conn.recv(buf)?;
    let malformed = |why: String| WireError::Malformed(format!("the block's answer: {why}"));
    if answer.flags != FLAG_CALLBACK | FLAG_RESPONSE || answer.id != request.id {
        return Err(malformed(format!(
            "expected the answer to callback {}, got flags {} id {}",
            request.id, answer.flags, answer.id
        )));
    }
    if answer.status != status::OK {
        return Err(malformed(String::from_utf8_lossy(buf).into_owned()));
    }
    msgpack::decode_all(buf)?
        .as_i64()
        .ok_or_else(|| malformed("not an integer".into()))
}

/// Echoes 1-byte pings until the client closes the connection.
fn serve_floor(conn: &mut Conn) -> std::result::Result<(), WireError> {
    let mut byte = [0u8; 1];
    loop {
        conn.read_raw(&mut byte)?;
        match byte[0] {
            PING => conn.write_raw(&byte)?,
            USAGE => send_usage(conn, Header::default())?,
            other => {
                return Err(WireError::Malformed(format!(
                    "the floor takes pings, got byte {other}"
                )))
            }
        }
    }
}
