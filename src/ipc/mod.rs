//! bb-ipc's parts: the call table that both sides share, framed connections over every
//! transport, the server child, and the client workloads the harness measures; on top,
//! the binary's flags ([`args`]), checked ([`options`]), and its benchmarks ([`suite`]),
//! which [`run`] hands to the harness; here, `Row`: what one benchmark measures and
//! where, which the suite makes its benchmark of and the answer reads.

mod answer;
pub mod args;
pub mod calls;
pub mod client;
pub(crate) mod conn;
#[cfg(feature = "fault-injection")]
mod fault;
mod futex;
pub mod options;
mod ring;
pub mod server;
pub mod suite;
pub mod transport;

use self::calls::Call;
use self::transport::Transport;
use crate::system::pinning::Pinning;
use crate::util::error::Result;

/// bb-ipc: a run of the suite its flags ask for.
pub fn run(args: &args::Args) -> Result<()> {
    let options = options::Options::from_args(args)?;
    crate::harness::run_suite(suite::suite(&options)?, &options.flags)
}

/// One benchmark of the suite: what it measures, and where its two sides run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Row {
    /// `bb.ipc.local`: the call made in-process.
    Local { call: Call },
    /// `bb.ipc.floor`: the bare round trip of a transport.
    Floor {
        transport: Transport,
        placement: Pinning,
    },
    /// `bb.ipc.remote`: the call into a server child.
    Remote {
        call: Call,
        transport: Transport,
        placement: Pinning,
    },
}

impl Row {
    /// Where the row's two sides ran; None for a local call.
    fn placement(&self) -> Option<&Pinning> {
        match self {
            Row::Local { .. } => None,
            Row::Floor { placement, .. } | Row::Remote { placement, .. } => Some(placement),
        }
    }
}
