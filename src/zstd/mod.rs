//! bb-zstd's workload: a queue of jobs consumed by THREADS threads ([`Pool`]), each job a
//! streaming compress (write, flush, write, finish) or a streaming decompress (a frame
//! decoded twice) done by a worker with its buffers and contexts, every result checked,
//! its streaming calls under one process-wide lock with `--lock global` ([`Lock`]);
//! and the generated JSON corpus ([`corpus`]) used when no input is given; the binary's
//! flags ([`args`]), their checks (`options`) and its suite (`suite`).

mod answer;
pub mod args;
pub mod corpus;
mod options;
mod pool;
mod suite;
mod worker;

pub use self::pool::Pool;
pub use self::worker::{compress_whole, job_time};

use self::args::Args;
use crate::util::error::Result;
use std::sync::Arc;

/// bb-zstd: the benchmarks its flags ask for.
pub fn run(args: &Args) -> Result<()> {
    let options = options::Options::from_args(args)?;
    crate::harness::run_suite(suite::suite(&options)?, &options.common)
}

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Compress,
    Decompress,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Compress => "compress",
            Op::Decompress => "decompress",
        }
    }
}

/// Whether a job's streaming calls hold one process-wide lock: `Global` as Ruby's global
/// VM lock was held around each of zstd-ruby's calls before the patch that released it,
/// so threads take turns at zstd's work; `None` as after it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lock {
    None,
    Global,
}

impl Lock {
    pub fn name(self) -> &'static str {
        match self {
            Lock::None => "none",
            Lock::Global => "global",
        }
    }
}

/// One benchmark's workload, and its row: the suite's params and the answer read it.
#[derive(Clone)]
pub struct Config {
    pub op: Op,
    pub threads: usize,
    pub level: i32,
    /// One encoder/decoder per thread, reset between jobs, instead of one per job.
    pub reuse_context: bool,
    pub input: Arc<Vec<u8>>,
    /// The input as the `input` parameter shows it: the file's name, or `generated-SIZE`.
    pub input_name: String,
    /// The lock held around each streaming call.
    pub lock: Lock,
    /// Timed modes keep every thread busy across invocations (a job counts when it
    /// completes); otherwise each invocation queues exactly its jobs and waits for them.
    pub keep_busy: bool,
}
