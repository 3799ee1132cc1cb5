//! Every signal that ends the process by default and can be caught ([`SIGNALS`]: SIGINT,
//! SIGTERM, SIGHUP, SIGQUIT, the user and timer signals, SIGXCPU, SIGXFSZ) handled
//! outside the signal handler, so that none leaves a governor set or a file behind: the
//! handler only writes
//! the signal number to a pipe; a thread reads it and either cleans up and exits (a
//! benchmark: socket files removed, children stopped) or raises a stop flag (a server
//! that finishes its in-flight calls first). The handler saves and restores errno and
//! writes to a non-blocking pipe, as signal-hook's does; these twenty lines are kept
//! rather than a dependency because the rest of this module (exit hooks, the stop flag,
//! the exit code) would stay all the same.

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use std::os::fd::IntoRawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
static STOP: AtomicBool = AtomicBool::new(false);
/// The first signal received (0: none), recorded by the handler itself so that it is
/// known before the clean-up starts killing what the measurement talks to.
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// Whether the handling is installed (the pipe, the thread, the handlers).
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// What a signal does: stop (true) or exit (false), as the last call asked.
static STOP_MODE: AtomicBool = AtomicBool::new(false);
type StopHook = Box<dyn Fn() + Send>;
/// Called at the first signal in stop mode. Only [`stop_on_signals`] writes it: exit
/// mode leaves it alone rather than storing a hook-less value.
static WAKE: Mutex<Option<StopHook>> = Mutex::new(None);

/// Every catchable signal whose default ends the process. SIGPIPE is left as Rust sets
/// it (ignored: a closed pipe is an error where the write happens).
const SIGNALS: [Signal; 11] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGALRM,
    Signal::SIGVTALRM,
    Signal::SIGPROF,
    Signal::SIGXCPU,
    Signal::SIGXFSZ,
];

extern "C" fn on_signal(signal: libc::c_int) {
    // SAFETY: __errno_location returns this thread's errno, valid for the thread's life.
    // The handler saves and restores it: write(2) below may change it under the code the
    // signal interrupted.
    let errno = unsafe { libc::__errno_location() };
    // SAFETY: see above; reading and writing an int through it is async-signal-safe.
    let saved = unsafe { *errno };
    // Atomic loads and stores are async-signal-safe. Only a signal that ends the process
    // counts for exit_requested: a stop (a server's) is not one, even should the mode
    // change after it (the unit tests run both modes in one process).
    if !STOP_MODE.load(Ordering::SeqCst) {
        let _ = RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    }
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    let byte = signal as u8;
    // SAFETY: write(2) is async-signal-safe; `byte` lives on this stack frame. The write
    // end is non-blocking, so a full pipe (a storm of signals) drops a byte rather than
    // hanging the interrupted thread.
    unsafe {
        libc::write(fd, (&byte as *const u8).cast(), 1);
        *errno = saved;
    }
}

/// On any of [`SIGNALS`]: run the exit hooks (children killed and reaped, socket
/// files removed) and exit with 128 + the signal.
pub fn exit_on_signals() {
    STOP_MODE.store(false, Ordering::SeqCst);
    install();
}

/// On any of [`SIGNALS`]: set the flag that [`stop_requested`] reads and call
/// `wake` (to unblock an accept loop, say). A second signal exits at once, with status
/// 0 as the graceful stop would have (after the exit hooks): the stop was asked for.
pub fn stop_on_signals(wake: impl Fn() + Send + 'static) {
    *WAKE.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(wake));
    STOP_MODE.store(true, Ordering::SeqCst);
    install();
}

/// Whether a stop was asked for by a signal.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The exit code (128 + the signal) once a signal is ending this process under
/// [`exit_on_signals`]. From then on a failure of the measurement is a consequence of
/// the exit (its peer killed under it), not a result: report nothing, exit with this.
pub fn exit_requested() -> Option<i32> {
    let signal = RECEIVED.load(Ordering::SeqCst);
    (signal != 0 && !STOP_MODE.load(Ordering::SeqCst)).then_some(128 + signal)
}

fn install() {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let Ok((read_end, write_end)) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) else {
        return;
    };
    let write_fd = write_end.into_raw_fd();
    // SAFETY: fcntl(2) on a descriptor this function owns; only its status flags change.
    unsafe {
        let flags = libc::fcntl(write_fd, libc::F_GETFL);
        libc::fcntl(write_fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    PIPE_WRITE.store(write_fd, Ordering::Relaxed);
    let reader = std::fs::File::from(read_end);
    super::watchdog::spawn_or_exit("bb-signals", move || watch(reader));
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for s in SIGNALS {
        // SAFETY: the handler only calls write(2), which is async-signal-safe.
        let before = unsafe { sigaction(s, &action) };
        // One ignored when this process started (nohup's SIGHUP, a test's SIGXFSZ) ends
        // nothing, and stays ignored. Not the stop signals a person sends: a shell
        // starts every background job with SIGINT and SIGQUIT ignored unasked, and a
        // script's `kill -INT` must still end the run (the emulated boards' check).
        let stop = matches!(s, Signal::SIGINT | Signal::SIGQUIT | Signal::SIGTERM);
        match before {
            // SAFETY: sets back the disposition this process was started with.
            Ok(ignored) if ignored.handler() == SigHandler::SigIgn && !stop => {
                let _ = unsafe { sigaction(s, &ignored) };
            }
            _ => {}
        }
    }
    // A child started to die with its parent has that signal blocked until now
    // (`fork::die_with_parent`); one that came meanwhile is handled here.
    let mut handled = SigSet::empty();
    for s in SIGNALS {
        handled.add(s);
    }
    let _ = handled.thread_unblock();
}

fn watch(mut reader: std::fs::File) {
    use std::io::Read;
    let mut byte = [0u8; 1];
    while reader.read_exact(&mut byte).is_ok() {
        let code = 128 + byte[0] as i32;
        // The first signal in stop mode stops, a second exits at once; in exit mode
        // every signal exits.
        if STOP_MODE.load(Ordering::SeqCst) && !STOP.swap(true, Ordering::SeqCst) {
            if let Some(wake) = WAKE.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                wake();
            }
        } else if STOP_MODE.load(Ordering::SeqCst) {
            super::watchdog::exit_now(0)
        } else {
            super::watchdog::exit_now(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_raises_the_stop_flag_and_wakes() {
        let (tx, rx) = std::sync::mpsc::channel();
        stop_on_signals(move || {
            let _ = tx.send(());
        });
        assert!(!stop_requested());
        // Not SIGHUP: under nohup it is ignored from the start, and stays so.
        nix::sys::signal::raise(Signal::SIGUSR2).unwrap();
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("the wake hook ran");
        assert!(stop_requested());
    }
}
