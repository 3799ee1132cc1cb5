//! Connections driven together: the calling thread drives the first, a thread each the
//! others, and a run's calls are split evenly between them.

use super::drivers::Driver;
use crate::util::error::{Error, Result};
use crossbeam_channel::{unbounded, Receiver, Sender};

/// Connections driven together: the calling thread drives the first, a thread each the
/// others; a run's calls are split evenly between them.
pub(crate) struct Fanout {
    first: Box<dyn Driver>,
    others: Vec<(Sender<u64>, std::thread::JoinHandle<()>)>,
    done: Receiver<Result<()>>,
}

impl Fanout {
    pub(crate) fn new(mut drivers: Vec<Box<dyn Driver>>) -> Result<Fanout> {
        let first = drivers.remove(0);
        let (done_tx, done) = unbounded();
        let mut others = Vec::new();
        for (i, mut driver) in drivers.into_iter().enumerate() {
            let (tx, rx) = unbounded::<u64>();
            let done_tx = done_tx.clone();
            let thread = std::thread::Builder::new()
                .name(format!("bb-rpc-client-{}", i + 1))
                .spawn(move || {
                    while let Ok(n) = rx.recv() {
                        if done_tx.send(driver.calls(n)).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|e| Error::failed(format!("starting client thread {}: {e}", i + 1)))?;
            others.push((tx, thread));
        }
        Ok(Fanout {
            first,
            others,
            done,
        })
    }

    pub(crate) fn run(&mut self, n: u64) -> Result<()> {
        let parts = 1 + self.others.len() as u64;
        let mut sent = 0;
        for (i, (tx, _)) in self.others.iter().enumerate() {
            let share = n / parts + u64::from((i as u64 + 1) < n % parts);
            if share > 0 {
                tx.send(share)
                    .map_err(|_| Error::failed("a client thread died"))?;
                sent += 1;
            }
        }
        let mut result = self
            .first
            .calls(n / parts + u64::from(!n.is_multiple_of(parts)));
        for _ in 0..sent {
            let r = self
                .done
                .recv()
                .map_err(|_| Error::failed("a client thread died"))?;
            result = result.and(r);
        }
        result
    }
}

impl Drop for Fanout {
    fn drop(&mut self) {
        for (tx, thread) in self.others.drain(..) {
            drop(tx);
            let _ = thread.join();
        }
    }
}
