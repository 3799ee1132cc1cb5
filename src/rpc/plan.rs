//! What one bb-rpc benchmark is, for the process that measures it: the client style,
//! where the server is, and the calls' shape ([`Plan`]).

use super::config::ClientConfig;
use crate::net::addr::Addr;

/// How calls are made on each connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A blocking stub: one call in flight.
    Sync,
    /// Pipelined, completed by the reader thread.
    Async,
    /// Pipelined, a handle per call that the caller waits on.
    Future,
    /// No RPC layer: length-prefixed messages written and read back from a plain echo
    /// server, up to `--depth` in flight.
    Floor,
}

impl Style {
    pub const NAMES: [&'static str; 4] = ["sync", "async", "future", "floor"];

    pub fn parse(s: &str) -> Option<Style> {
        Some(match s {
            "sync" => Style::Sync,
            "async" => Style::Async,
            "future" => Style::Future,
            "floor" => Style::Floor,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Style::NAMES[self as usize]
    }

    /// Whether `--depth` applies.
    pub fn pipelined(self) -> bool {
        matches!(self, Style::Async | Style::Future)
    }
}

/// Where the server is: spawned for the benchmark on this transport, or given.
#[derive(Debug, Clone)]
pub enum Target {
    Local { transport: &'static str },
    Remote(Addr),
}

/// Everything one benchmark needs to set itself up in the process that measures it.
#[derive(Debug, Clone)]
pub struct Plan {
    pub target: Target,
    pub style: Style,
    pub client: ClientConfig,
    pub payload: usize,
    pub depth: usize,
    pub connections: usize,
    pub seed: u64,
    /// `--pin`: the client runs on the first CPU, a spawned server on the last.
    pub pin: Option<Vec<usize>>,
    /// `--rate`: calls per second per connection, sent on a schedule (an open loop, over
    /// the pipelined client); None: a closed loop.
    pub rate: Option<f64>,
}

impl Plan {
    /// The floor this plan's calls are compared with: the raw echo at the same depth,
    /// over the same transport, payload, connections and pinning.
    pub fn floor(&self) -> Plan {
        Plan {
            style: Style::Floor,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    fn plan(style: Style, depth: usize) -> Plan {
        Plan {
            target: Target::Local { transport: "unix" },
            style,
            client: ClientConfig {
                addr: Addr::Unix(PathBuf::new()),
                codec: super::super::protocol::Codec::Raw,
                max_frame: 1024,
                timeout: Duration::from_secs(5),
            },
            payload: 16,
            depth,
            connections: 2,
            seed: 1,
            pin: Some(vec![0]),
            rate: None,
        }
    }

    #[test]
    fn a_plan_is_compared_with_the_floor_at_its_own_depth() {
        for (style, depth) in [(Style::Sync, 1), (Style::Async, 64), (Style::Future, 8)] {
            let floor = plan(style, depth).floor();
            assert_eq!(floor.style, Style::Floor);
            assert_eq!(
                (floor.depth, floor.payload, floor.connections, floor.pin),
                (depth, 16, 2, Some(vec![0]))
            );
        }
    }
}
