//! boardbench: small benchmark binaries over one harness. Each folder is one layer:
//!
//! - [`harness`]: what a benchmark is, the runner loop, forks, results, the watchdog and
//!   signals; [`run_suite`] is what every binary calls.
//! - `stats`: the Student-t error, percentiles, Welch's test, the latency histogram.
//! - `system`: CPU and memory accounting, the environment record, throttling, cooldown,
//!   where the two sides of a measurement ran.
//! - [`output`]: one file per report format, the atomic writer, number and duration
//!   formatting, the JSON value type, warnings and progress on stderr.
//! - One folder per measurement: [`zstd`], [`ipc`], [`rpc`], [`seek`], and [`compare`]
//!   for bb-compare; [`wire`] is the frame format and MessagePack that ipc and rpc share.
//! - [`s3`]: S3 locations, credentials as the AWS CLI finds them, Signature Version 4 and
//!   signed request builders, for bb-seek's S3 source.
//!
//! The binaries (`src/bin/bb-*.rs`) only turn flags into benchmarks and call
//! [`run_suite`]; bb-ipc, bb-seek and bb-compare hand their flags to their folder's
//! `run` (its `args`, `options` and `suite`).

pub mod compare;
pub mod error;
pub mod harness;
pub mod ipc;
pub mod output;
pub mod rng;
pub mod rpc;
pub mod s3;
pub mod seek;
pub(crate) mod stats;
pub(crate) mod system;
pub mod wire;
pub mod zstd;

pub use error::{Error, Result};
pub use harness::benchmark::{
    Benchmark, Metric, PairedBaseline, Settings, Setup, TimeUnit, Workload,
};
pub use harness::cli::{CommonArgs, Format, Mode, Profile};
pub use harness::{
    main_with, pin_process, run_suite, run_suite_with_prelude, Prelude, Profiles, Suite,
};
