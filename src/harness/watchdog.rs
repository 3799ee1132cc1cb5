//! The per-iteration timeout: a thread that ends the process with a clear error when an
//! iteration runs past its deadline, instead of letting a stuck peer hang the run. The
//! clean-up hooks that run on that and every other abnormal exit live in [`crate::system::exit`]
//! (re-exported here, where the harness has always found them).

pub use crate::system::exit::{add_exit_hook, exit_now, remove_exit_hook};

use std::io::Write;
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

struct Deadline {
    at: Instant,
    timeout: Duration,
    what: String,
}

static DEADLINE: Mutex<Option<Deadline>> = Mutex::new(None);
static START: Once = Once::new();
/// In a fork: the pipe to its parent, told of every new deadline (`alive`), so that the
/// parent knows the fork is still going ([`crate::harness::fork`]).
static BEAT: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// The line a fork sends its parent at every deadline armed.
pub(crate) const ALIVE: &str = "alive";

/// Fails the run if `what` is still going after `timeout`.
pub fn arm(timeout: Duration, what: String) {
    START.call_once(|| spawn_or_exit("bb-watchdog", watch));
    if let Some(pipe) = BEAT.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        // A parent that is gone has nothing to be told.
        let _ = pipe.write_all(format!("{ALIVE}\n").as_bytes());
    }
    let at = after(timeout);
    *DEADLINE.lock().unwrap_or_else(|e| e.into_inner()) = Some(Deadline { at, timeout, what });
}

/// `timeout` from now, or as far as an Instant goes (absurd flags).
pub(crate) fn after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .unwrap_or_else(|| now + Duration::from_secs(1 << 32))
}

/// In a fork: tell the parent over `pipe` (a copy of its report pipe) of every deadline
/// armed from now on.
pub(crate) fn beat_to(pipe: std::fs::File) {
    *BEAT.lock().unwrap_or_else(|e| e.into_inner()) = Some(pipe);
}

/// Starts `f` on a thread named `name`, or ends the process with one line saying why it
/// could not (exit 1): for the threads a run cannot go on without.
pub(crate) fn spawn_or_exit<F: FnOnce() + Send + 'static>(name: &str, f: F) {
    if let Err(e) = crate::util::thread::spawn(name, f) {
        crate::stderr!("{}: error: {e}", crate::util::terminal::program_name());
        exit_now(1);
    }
}

/// Nothing is being timed any more.
pub fn disarm() {
    *DEADLINE.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

fn watch() {
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let expired = {
            let guard = DEADLINE.lock().unwrap_or_else(|e| e.into_inner());
            guard
                .as_ref()
                .filter(|d| Instant::now() >= d.at)
                .map(|d| (d.what.clone(), d.timeout))
        };
        if let Some((what, timeout)) = expired {
            crate::stderr!(
                "{}: error: {what} ran past the timeout of {} (raise it with --timeout)",
                crate::util::terminal::program_name(),
                crate::util::format::format_duration(timeout)
            );
            exit_now(1);
        }
    }
}
