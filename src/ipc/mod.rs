//! bb-ipc's parts: the call table that both sides share, framed connections over every
//! transport, the server child, and the client workloads the harness measures; on top,
//! the binary's flags ([`args`]), checked ([`options`]), and its benchmarks ([`suite`]),
//! which [`run`] hands to the harness.

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

use crate::util::error::Result;

/// bb-ipc: a run of the suite its flags ask for.
pub fn run(args: &args::Args) -> Result<()> {
    let options = options::Options::from_args(args)?;
    crate::harness::run_suite(suite::suite(&options)?, &options.flags)
}
