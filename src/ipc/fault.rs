//! Faults injected at the first call, for the tests only: `BB_IPC_FAULT` names one, either
//! the server's (`truncate`, `vanish`, `stall`, `wrong-answer`; `slow-start`, a second's
//! sleep before the server child handles signals at all) or the client's
//! (`unknown-method`, `bad-args`). Compiled only with the `fault-injection` feature, which
//! `make test` turns on: the binaries carried to a board have none of it and ignore the
//! variable.

use super::conn::Conn;
use crate::harness::watchdog::exit_now;
use crate::wire::{msgpack, Header, WireError, FLAG_RESPONSE};
use std::time::Duration;

/// The variable that names the fault.
const FAULT_ENV: &str = "BB_IPC_FAULT";

/// A fault of the server at the first call it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerFault {
    /// Exit without answering.
    Vanish,
    /// Send 7 bytes of a header, then exit.
    Truncate,
    /// Send 7 bytes of a header, then hang.
    Stall,
    /// Answer with the right result plus one.
    WrongAnswer,
    /// Sleep a second before anything else, signal handling included: the window in which
    /// a parent killed with SIGKILL must still have its socket file removed.
    SlowStart,
}

/// A fault of the client at its first call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFault {
    /// Call method 999.
    UnknownMethod,
    /// Send a string where the argument list goes.
    BadArgs,
}

impl ServerFault {
    /// The server's fault `BB_IPC_FAULT` asks for, if any.
    pub fn from_env() -> Option<ServerFault> {
        match std::env::var(FAULT_ENV).as_deref() {
            Ok("vanish") => Some(ServerFault::Vanish),
            Ok("truncate") => Some(ServerFault::Truncate),
            Ok("stall") => Some(ServerFault::Stall),
            Ok("wrong-answer") => Some(ServerFault::WrongAnswer),
            Ok("slow-start") => Some(ServerFault::SlowStart),
            _ => None,
        }
    }

    /// Does the fault on `conn`; true when the answer to the call is to be wrong.
    pub fn inject(self, conn: &mut Conn) -> Result<bool, WireError> {
        let cut = Header {
            len: 8,
            flags: FLAG_RESPONSE,
            ..Default::default()
        }
        .encode();
        match self {
            ServerFault::Vanish => exit_now(0),
            ServerFault::Truncate => {
                conn.write_raw(&cut[..7])?;
                exit_now(0)
            }
            ServerFault::Stall => {
                conn.write_raw(&cut[..7])?;
                std::thread::sleep(Duration::from_secs(3600));
                Ok(false)
            }
            ServerFault::WrongAnswer => Ok(true),
            ServerFault::SlowStart => Ok(false),
        }
    }
}

impl ClientFault {
    /// The client's fault `BB_IPC_FAULT` asks for, if any.
    pub fn from_env() -> Option<ClientFault> {
        match std::env::var(FAULT_ENV).as_deref() {
            Ok("unknown-method") => Some(ClientFault::UnknownMethod),
            Ok("bad-args") => Some(ClientFault::BadArgs),
            _ => None,
        }
    }

    /// Spoils a call of `method` with the encoded `args`; returns the method to call.
    pub fn apply(self, method: u16, args: &mut Vec<u8>) -> u16 {
        match self {
            ClientFault::UnknownMethod => 999,
            ClientFault::BadArgs => {
                args.clear();
                msgpack::write_str(args, "not an argument list");
                method
            }
        }
    }
}
