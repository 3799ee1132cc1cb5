//! What one bb-rpc benchmark is, for the process that measures it: the client style,
//! where the server is, and the calls' shape ([`Plan`]); and what its calls hold: the
//! calls a connection keeps in flight within the flow-control window ([`in_flight`]), the
//! calls of one invocation ([`closed_loop_calls`]) and the time their bytes take
//! ([`bytes_time`]).

use super::config::ClientConfig;
use crate::net::addr::Addr;
use std::time::Duration;

/// The bytes of requests, and of replies, that one connection has in flight at most: a
/// call waits for room under this as under `--depth`, as a gRPC call waits for its
/// flow-control window (grpc-go's grows to 16 MiB at most). So the calls in flight are
/// bounded by bytes, not only by count: `--depth 4096` of 1 MiB keeps 15 in flight, and
/// what the client holds for them stays within the window whatever `--depth` says.
pub const WINDOW: u64 = 16 << 20;

/// The largest frame of a call of `payload` bytes, request or reply: its header,
/// MessagePack's bin header at most, the payload.
pub fn frame_len(payload: u64) -> u64 {
    (crate::wire::HEADER_LEN as u64 + 5).saturating_add(payload)
}

/// The calls a connection keeps in flight at `depth` with calls of `payload` bytes:
/// `depth`, or as many as [`WINDOW`] holds where fewer; at least 1 (a call larger than
/// the window goes alone, as gRPC lets a message larger than its window through in
/// pieces).
pub fn in_flight(depth: usize, payload: u64) -> usize {
    let fit = (WINDOW / frame_len(payload)).max(1);
    depth.min(usize::try_from(fit).unwrap_or(usize::MAX))
}

/// The bytes of requests one closed-loop invocation sends over all its connections, at
/// most (where one round of the calls in flight is less).
const INVOCATION_BYTES: u64 = 64 << 20;

/// Calls per invocation of a closed loop over `connections`, each keeping `in_flight`
/// calls of `payload` bytes in flight: 64 rounds of them, so that draining the pipeline
/// at the invocation's end is noise, but no more than [`INVOCATION_BYTES`] of requests
/// (an invocation of large calls is then 64 MiB, not 64 × depth of them) and at least one
/// round per connection.
pub fn closed_loop_calls(in_flight: usize, payload: u64, connections: usize) -> u64 {
    let (depth, connections) = (in_flight as u64, connections.max(1) as u64);
    let by_bytes = INVOCATION_BYTES / frame_len(payload).saturating_mul(connections);
    depth.saturating_mul(64).min(by_bytes).max(depth) * connections
}

/// Payload bytes per second that a connection's calls move each way, as the plan counts
/// them: what 1 MiB echoes over a Unix socket or loopback TCP reach on the 2-core x86 VM
/// here (1 to 2 GB/s), at its lower end. A board is slower; this is the estimate's, never
/// a measurement.
const BYTES_PER_SECOND: f64 = 1e9;

/// How long `calls` calls of `payload` bytes take to move their bytes (the request and
/// its echo), for the plan's estimate of an invocation: nothing where payloads are small,
/// since it counts bytes, not calls.
pub fn bytes_time(calls: u64, payload: u64) -> Duration {
    Duration::from_secs_f64(calls as f64 * payload as f64 / BYTES_PER_SECOND)
}

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
    /// Calls in flight per connection at most: `--depth`, or fewer where the
    /// flow-control window says ([`in_flight`]).
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
    fn the_calls_in_flight_are_bounded_by_the_window_in_bytes() {
        // Small calls: --depth decides.
        assert_eq!(in_flight(64, 16), 64);
        assert_eq!(in_flight(65536, 16), 65536);
        assert_eq!(in_flight(64, 64 << 10), 64, "4 MiB in flight");
        // 1 MiB calls: 15 fit in 16 MiB with their headers.
        assert_eq!(in_flight(4096, 1 << 20), 15);
        assert_eq!(in_flight(8, 1 << 20), 8);
        // A call larger than the window goes alone.
        assert_eq!(in_flight(65536, 16 << 20), 1);
        assert_eq!(in_flight(65536, u64::MAX), 1);
    }

    #[test]
    fn an_invocation_is_64_rounds_or_64_mib_of_requests_and_at_least_one_round() {
        assert_eq!(closed_loop_calls(1, 16, 1), 64);
        assert_eq!(closed_loop_calls(64, 16, 1), 64 * 64);
        assert_eq!(closed_loop_calls(64, 16, 2), 2 * 64 * 64);
        // 64 × 64 calls of 64 KiB would be 256 MiB: 64 MiB of them.
        assert_eq!(closed_loop_calls(64, 64 << 10, 1), 1023);
        // 15 in flight of 1 MiB: 63 calls, not 64 × 15 (nor 64 × 4096).
        assert_eq!(closed_loop_calls(15, 1 << 20, 1), 63);
        // Never less than a round per connection.
        assert_eq!(closed_loop_calls(15, 1 << 20, 8), 8 * 15);
        assert_eq!(closed_loop_calls(1, 16 << 20, 1), 3);
        assert_eq!(closed_loop_calls(1, u64::MAX, 3), 3);
        // The bytes, each way, at the plan's rate: 64 MiB in about 67 ms.
        let t = bytes_time(64, 1 << 20);
        assert!(
            t > Duration::from_millis(60) && t < Duration::from_millis(70),
            "{t:?}"
        );
        assert!(bytes_time(4096, 16) < Duration::from_millis(1));
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
