//! bb-zstd's workload: a queue of jobs consumed by THREADS threads ([`Pool`]), each job a
//! streaming compress (write, flush, write, finish) or a streaming decompress (a frame
//! decoded twice) done by a worker with its buffers and contexts, every result checked;
//! and the generated JSON corpus ([`corpus`]) used when no input is given.

pub mod corpus;
mod pool;
mod worker;

pub use self::pool::Pool;
pub use self::worker::{compress_whole, job_time};

use std::sync::Arc;

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

/// One benchmark's workload.
#[derive(Clone)]
pub struct Config {
    pub op: Op,
    pub threads: usize,
    pub level: i32,
    /// One encoder/decoder per thread, reset between jobs, instead of one per job.
    pub reuse_context: bool,
    pub input: Arc<Vec<u8>>,
    /// Timed modes keep every thread busy across invocations (a job counts when it
    /// completes); otherwise each invocation queues exactly its jobs and waits for them.
    pub keep_busy: bool,
}
