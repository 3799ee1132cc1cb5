//! Two forks driven in turn (`--against`): one fork of each build alive together, each
//! step of their work (the set-up, every warm-up and measurement iteration, the finish)
//! taken in turn in ABBA order, so that the builds alternate iteration by iteration and
//! never run at once. A drift of the board slower than one iteration then falls on both
//! builds of a pair alike, where forks run one after the other met it seconds apart.
//! This is the fork's side: it waits for its turn on a pipe and says [`TURN`] when a
//! step is done; the parent's side, which gives the turns, is `pair.rs`.

use std::io::{Read, Write};
use std::sync::Mutex;

/// The line a fork driven in turn sends when it has done a step.
pub(crate) const TURN: &str = "turn";

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
