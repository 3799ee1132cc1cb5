//! THREADS workers consuming jobs from a bounded channel, as the harness measures them.
//! In timed modes the queue is kept full across invocations (a job counts when it
//! completes); otherwise each invocation queues exactly its jobs and waits for them.

use super::worker::{compress_whole, verify_frame, verify_job_frame, Shared, Worker};
use super::{Config, Op};
use crate::harness::benchmark::Workload;
use crate::util::error::{Error, Result};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use std::sync::Arc;

/// The workers and the queue between the harness and them.
pub struct Pool {
    jobs: Option<Sender<()>>,
    done: Receiver<Result<()>>,
    workers: Vec<std::thread::JoinHandle<()>>,
    /// Jobs queued or running: at most `window`, so sending never blocks.
    in_flight: usize,
    window: usize,
    keep_busy: bool,
}

impl Pool {
    /// Verifies the reference frames, then starts `config.threads` workers.
    pub fn start(config: &Config) -> Result<Pool> {
        let input = &config.input;
        let input_frame = compress_whole(input, config.level)?;
        verify_frame(&input_frame, input)?;
        // Compress jobs compare their frames with a verified reference frame.
        let job_frame = match config.op {
            Op::Compress => {
                let mut reference = Worker::new(&Shared {
                    config: config.clone(),
                    job_frame: vec![],
                    input_frame: vec![],
                });
                reference.compress(input, config.level, false)?;
                verify_job_frame(&reference.output, input)?;
                reference.output
            }
            Op::Decompress => Vec::new(),
        };
        let shared = Arc::new(Shared {
            config: config.clone(),
            job_frame,
            input_frame,
        });
        let window = 2 * config.threads;
        let (jobs_tx, jobs_rx) = bounded::<()>(window);
        let (done_tx, done_rx) = unbounded();
        let workers = (0..config.threads)
            .map(|i| {
                let (shared, jobs_rx, done_tx) = (shared.clone(), jobs_rx.clone(), done_tx.clone());
                std::thread::Builder::new()
                    .name(format!("bb-zstd-{i}"))
                    .spawn(move || {
                        let mut worker = Worker::new(&shared);
                        while jobs_rx.recv().is_ok() {
                            #[cfg(feature = "fault-injection")]
                            let started = std::time::Instant::now();
                            let done = worker.job(&shared);
                            #[cfg(feature = "fault-injection")]
                            crate::harness::drift::spin_after(started);
                            if done_tx.send(done).is_err() {
                                return;
                            }
                        }
                    })
                    .map_err(|e| Error::io(format!("starting worker thread {i}"), e))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Pool {
            jobs: Some(jobs_tx),
            done: done_rx,
            workers,
            in_flight: 0,
            window,
            keep_busy: config.keep_busy,
        })
    }

    /// Waits for one job to complete.
    fn complete_one(&mut self) -> Result<()> {
        let result = self
            .done
            .recv()
            .map_err(|_| Error::failed("a zstd worker thread died"))?;
        self.in_flight -= 1;
        result
    }
}

impl Workload for Pool {
    fn run(&mut self, ops: u64) -> Result<()> {
        let jobs = self.jobs.clone().expect("pool is running");
        let mut sent = 0u64;
        for _ in 0..ops {
            while self.in_flight < self.window && (self.keep_busy || sent < ops) {
                jobs.send(())
                    .map_err(|_| Error::failed("a zstd worker thread died"))?;
                self.in_flight += 1;
                sent += 1;
            }
            self.complete_one()?;
        }
        Ok(())
    }

    /// The jobs still queued at the end complete and are checked, untimed.
    fn finish(&mut self) -> Result<()> {
        while self.in_flight > 0 {
            self.complete_one()?;
        }
        Ok(())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
