//! The parent's side of an A/B pair (`--against`): one fork of each build, started with
//! their turns, driven step by step in ABBA order until both have reported (the fork's
//! side is `turns.rs`).

use super::fork::{Child, Step};
use super::runner::ForkResult;
use crate::util::error::{Error, Result};
use std::time::Duration;

/// Drives `pair` (started with their turns) step by step until both have reported:
/// `pair[first]` takes the first step, then ABBA (the other two steps, then two of the
/// first…), each step's reads waiting `quiet` at most. Both reports, or the side that
/// failed (0 or 1) with its error, the other then stopped: a pair is measured whole or
/// not at all. The outer error is the run's (a fork could not be waited for).
pub(crate) fn run_pair(
    mut pair: [Child; 2],
    first: usize,
    quiet: Duration,
) -> Result<std::result::Result<[ForkResult; 2], (usize, Error)>> {
    let mut step = 0usize;
    let mut broken = None;
    'steps: while pair.iter().any(|c| !c.is_done()) {
        let order = match step.is_multiple_of(2) == (first == 0) {
            true => [0, 1],
            false => [1, 0],
        };
        for side in order {
            if pair[side].step(quiet) == Step::Done && pair[side].failed() {
                broken = Some(side);
                pair[1 - side].stop();
                break 'steps;
            }
        }
        step += 1;
    }
    let [a, b] = pair;
    let (a, b) = (a.finish()?, b.finish()?);
    Ok(match (a, b, broken) {
        (Ok(a), Ok(b), None) => Ok([a, b]),
        (a, _, Some(0)) | (a @ Err(_), _, None) => Err((0, error_of(a))),
        (_, b, _) => Err((1, error_of(b))),
    })
}

fn error_of(outcome: Result<ForkResult>) -> Error {
    match outcome {
        Err(e) => e,
        Ok(_) => Error::failed("its pair's other fork failed"),
    }
}
