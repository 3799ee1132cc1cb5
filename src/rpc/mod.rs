//! bb-rpc's library: addresses and transports, the methods and codecs on top of the
//! shared wire format, the server, the three client styles, the open loop and its sweep,
//! the workload the harness measures, and the binary's flags, their checks and its suite;
//! here, `Row`: one benchmark's place on every axis of the matrix, which the suite
//! makes its benchmark of and the answer reads.

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
use self::options::{Offered, Options, ServeOptions};
use self::plan::{in_flight, Plan, Style, Target};
use self::protocol::Codec;
use crate::model::answer::PLACEMENT;
use crate::system::pinning::Pinning;
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

/// One benchmark's place on every axis of the matrix.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    target: Target,
    payload: u64,
    style: Style,
    /// None for the floor, which has no codec.
    codec: Option<Codec>,
    depth: usize,
    connections: usize,
    offered: Offered,
    /// Where a spawned server's two sides run; None for a server given (`--connect`).
    placement: Option<Pinning>,
}

impl Row {
    /// A row on `target`, its other axes to be set.
    fn at(target: &Target) -> Row {
        Row {
            target: target.clone(),
            payload: 0,
            style: Style::Sync,
            codec: None,
            depth: 1,
            connections: 1,
            offered: Offered::Closed,
            placement: None,
        }
    }

    fn name(&self) -> String {
        match self.offered {
            Offered::Closed => format!("bb.rpc.{}", self.style.name()),
            _ => "bb.rpc.open".to_string(),
        }
    }

    /// The transport's name: `unix`, `tcp`.
    fn transport(&self) -> &'static str {
        match &self.target {
            Target::Local { transport } => transport,
            Target::Remote(a) => a.transport(),
        }
    }

    /// The parameters every row has; a sweep's group is the rows that share them.
    fn params(&self) -> Vec<(String, String)> {
        let mut params: Vec<(String, String)> = [
            ("transport", self.transport().to_string()),
            ("codec", self.codec.map_or("none", |c| c.name()).to_string()),
            ("payload", self.payload.to_string()),
            ("depth", self.depth.to_string()),
            ("connections", self.connections.to_string()),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into();
        if let Some(p) = &self.placement {
            params.push((PLACEMENT.to_string(), p.name()));
        }
        params
    }

    /// What the row's process sets up, in a closed loop.
    fn plan(&self, o: &Options) -> Plan {
        Plan {
            target: self.target.clone(),
            style: self.style,
            client: self::config::ClientConfig {
                codec: self.codec.unwrap_or(Codec::Raw),
                ..o.client.clone()
            },
            payload: self.payload as usize,
            depth: in_flight(self.depth, self.payload),
            connections: self.connections,
            seed: o.common.seed,
            // A given server's client follows --pin; a spawned pair, its placement.
            pin: match &self.placement {
                Some(p) => p.as_list(),
                None => o.common.pin.clone(),
            },
            rate: None,
        }
    }
}
