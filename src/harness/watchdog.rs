//! The per-iteration timeout: a thread that ends the process with a clear error when an
//! iteration runs past its deadline, instead of letting a stuck peer hang the run; and
//! the clean-up hooks (socket files, child servers) that run on that and every other
//! abnormal exit.

use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

struct Deadline {
    at: Instant,
    timeout: Duration,
    what: String,
}

static DEADLINE: Mutex<Option<Deadline>> = Mutex::new(None);
static START: Once = Once::new();

type Hook = Box<dyn Fn() + Send>;
static EXIT_HOOKS: Mutex<Vec<(u64, Hook)>> = Mutex::new(Vec::new());
static NEXT_HOOK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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
                crate::output::warnings::program_name(),
                crate::output::format::format_duration(timeout)
            );
            exit_now(1);
        }
    }
}

/// Registers a clean-up to run when the process ends abnormally (timeout, signal); returns
/// a handle for [`remove_exit_hook`] once the resource is cleaned up normally.
pub fn add_exit_hook(hook: impl Fn() + Send + 'static) -> u64 {
    let id = NEXT_HOOK.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    EXIT_HOOKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((id, Box::new(hook)));
    id
}

pub fn remove_exit_hook(id: u64) {
    EXIT_HOOKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|(i, _)| *i != id);
}

/// Runs every clean-up hook, then exits with `code`.
pub fn exit_now(code: i32) -> ! {
    run_exit_hooks();
    std::process::exit(code)
}

/// Runs and forgets every registered clean-up hook.
pub fn run_exit_hooks() {
    let hooks = std::mem::take(&mut *EXIT_HOOKS.lock().unwrap_or_else(|e| e.into_inner()));
    for (_, hook) in hooks {
        hook();
    }
}
