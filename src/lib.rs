//! boardbench: small benchmark binaries over one harness. Each folder is one layer, and
//! imports run one way, from the binaries down (ARCHITECTURE.md draws the order, and
//! `tests/it/architecture.rs` holds the code to it):
//!
//! - One folder per measurement: [`zstd`], [`ipc`], [`rpc`], [`seek`], and [`compare`]
//!   for bb-compare.
//! - [`harness`]: what a benchmark is, the runner loop, forks, aggregation, the plan, the
//!   watchdog and signals, the common flags; [`run_suite`] is what every binary calls.
//! - [`report`]: one file per report format, pure functions of results, and delivery.
//! - [`model`]: results, modes, settings, params and warnings, as data.
//! - [`system`] (the machine: CPU and memory accounting, environment, throttling, cooldown,
//!   placement, exit hooks), `stats` (as JMH computes them), [`net`] (TLS), [`s3`]
//!   (locations, credentials as the AWS CLI finds them, SigV4, signed requests).
//! - [`util`]: the error type, formatting, parsers, the terminal, progress, the atomic
//!   file, JSON, rng; [`wire`]: frames and MessagePack, a leaf that imports nothing.
//!
//! The binaries (`src/bin/bb-*.rs`) hand their flags to their measurement's `run` (its
//! `args`, `options` and `suite`) or, where they do not yet, turn them into benchmarks
//! and call [`run_suite`].

pub mod compare;
pub mod harness;
pub mod ipc;
pub mod model;
pub mod net;
pub mod report;
pub mod rpc;
pub mod s3;
pub mod seek;
pub(crate) mod stats;
pub mod system;
pub mod util;
pub mod wire;
pub mod zstd;

pub use harness::benchmark::{
    Benchmark, Metric, PairedBaseline, Settings, Setup, TimeUnit, Workload,
};
pub use harness::cli::{CommonArgs, Format, Mode, Profile};
pub use harness::{main_with, pin_process, run_suite, Prelude, Profiles, Suite};
pub use util::error::{Error, Result};
