//! bb-rpc's library: addresses and transports, the methods and codecs on top of the
//! shared wire format, the server, the three client styles, the open loop and its sweep,
//! the workload the harness measures, and the binary's flags, their checks and its suite.

mod answer;
pub mod args;
pub mod client;
pub mod config;
mod deadline;
mod drivers;
mod fan_out;
mod in_flight;
pub(crate) mod open_loop;
pub(crate) mod options;
mod pipeline;
pub(crate) mod plan;
pub mod protocol;
mod requests;
pub mod server;
mod spawned;
pub(crate) mod suite;
pub(crate) mod sweep;
pub(crate) mod workload;

use self::args::{Args, Command, ServeArgs};
use self::options::{Options, ServeOptions};
use crate::util::error::Result;

/// bb-rpc: the benchmarks its flags ask for, or `bb-rpc serve`.
pub fn run(args: &Args) -> Result<()> {
    match &args.command {
        Some(Command::Serve(serve_args)) => serve(args, serve_args),
        None => {
            let options = Options::from_args(args)?;
            crate::harness::run_suite(suite::suite(&options)?, &options.common)
        }
    }
}

/// `bb-rpc serve`: pinned to `--pin`'s CPUs, until SIGINT or SIGTERM.
fn serve(args: &Args, serve_args: &ServeArgs) -> Result<()> {
    let options = ServeOptions::from_args(args, serve_args)?;
    if let Some(cpus) = &options.pin {
        crate::harness::pin_process(cpus)?;
    }
    server::serve(&options.listen, options.server)
}
