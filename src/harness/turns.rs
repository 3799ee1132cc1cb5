//! Two forks driven in turn (`--against`): one fork of each build alive together, each
//! step of their work (the set-up, every warm-up and measurement iteration, the finish)
//! taken in turn in ABBA order, so that the builds alternate iteration by iteration and
//! never run at once. A drift of the board slower than one iteration then falls on both
//! builds of a pair alike, where forks run one after the other met it seconds apart.
//! The fork's side waits for its turn on a pipe and says `turn` when a step is done;
//! the parent's side gives the turns ([`run_pair`]).

use super::fork::{Child, Step, TURN};
use super::runner::ForkResult;
use crate::util::error::{Error, Result};
use std::io::{Read, Write};
use std::sync::Mutex;
use std::time::Duration;

/// A fork's ends of its turns: where they come from, where it says a step is done.
struct Turns {
    from_parent: std::fs::File,
    to_parent: std::fs::File,
    /// Whether a step is under way (the first turn has come).
    in_step: bool,
}

static TURNS: Mutex<Option<Turns>> = Mutex::new(None);

/// In a fork of a pair: its work is driven by the turns on `from_parent`, each step's end
/// told on `to_parent` (a copy of its report pipe).
pub(crate) fn driven_by(from_parent: std::fs::File, to_parent: std::fs::File) {
    *TURNS.lock().unwrap_or_else(|e| e.into_inner()) = Some(Turns {
        from_parent,
        to_parent,
        in_step: false,
    });
}

/// In a fork driven in turn: ends the step under way (the parent is told) and waits for
/// the next turn, with no deadline armed (the other build's step is under way). A fork
/// whose parent closed its turns ends at once. Elsewhere, nothing.
pub(crate) fn next_step() {
    let mut guard = TURNS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(turns) = guard.as_mut() else {
        return;
    };
    if turns.in_step {
        // A parent that is gone has nothing to be told; the read below ends this fork.
        let _ = turns.to_parent.write_all(format!("{TURN}\n").as_bytes());
    }
    super::watchdog::disarm();
    let mut byte = [0u8];
    loop {
        match turns.from_parent.read(&mut byte) {
            Ok(1) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            _ => super::watchdog::exit_now(1),
        }
    }
    turns.in_step = true;
}

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
        let order = match (step % 2 == 0) == (first == 0) {
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
