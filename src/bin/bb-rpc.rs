//! bb-rpc: how many RPCs per second with one call in flight (sync) against many (async,
//! future), over a Unix socket or TCP, and what framing and marshalling cost. Without
//! `--connect` it spawns its own server per benchmark; `bb-rpc serve` is that server.

fn main() {
    boardbench::main_with(|| boardbench::rpc::run(&boardbench::harness::cli::parse_args()))
}
