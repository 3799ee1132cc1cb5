//! The per-iteration timeout: a thread that ends the process with a clear error when an
//! iteration runs past its deadline, instead of letting a stuck peer hang the run. The
//! clean-up hooks that run on that and every other abnormal exit live in [`crate::system::exit`]
//! (re-exported here, where the harness has always found them).

pub use crate::system::exit::{add_exit_hook, exit_now, remove_exit_hook};

use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

struct Deadline {
    at: Instant,
    timeout: Duration,
    what: String,
}

static DEADLINE: Mutex<Option<Deadline>> = Mutex::new(None);
static START: Once = Once::new();

/// Fails the run if `what` is still going after `timeout`.
pub fn arm(timeout: Duration, what: String) {
    START.call_once(|| {
        std::thread::Builder::new()
            .name("bb-watchdog".into())
            .spawn(watch)
            .expect("spawning the watchdog thread");
    });
    let at = Instant::now()
        .checked_add(timeout)
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(1 << 32));
    *DEADLINE.lock().unwrap_or_else(|e| e.into_inner()) = Some(Deadline { at, timeout, what });
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
