//! The child processes a benchmark starts, all one way: this binary started again (through
//! `BB_FORK_RUNNER` where one is set: qemu-user, where the kernel cannot execute the
//! foreign binary by itself), made to die with the thread that started it, stopped by an
//! exit hook if this process ends first (a signal, a timeout), and reaped on every path.
//! The harness's forks, bb-ipc's server children and bb-rpc's spawned servers are such
//! children.
//!
//! Why a re-executed binary rather than a bare fork(2): by the time a benchmark is set up,
//! the harness already runs threads (the signal thread, the watchdog), and after a fork in
//! a threaded process only async-signal-safe calls are allowed until exec, which rules out
//! the allocator and every lock a child needs. A re-exec starts clean.

use super::watchdog;
use crate::error::{Error, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

/// A command that starts this binary again, without arguments, made to receive SIGTERM
/// when the thread that starts it ends (see [`die_with_parent`]).
pub struct SelfCommand {
    pub command: Command,
    /// This binary's path, for messages.
    pub exe: PathBuf,
}

impl SelfCommand {
    pub fn new() -> Result<SelfCommand> {
        let exe = std::env::current_exe()
            .map_err(|e| Error::io("finding this binary to start it again", e))?;
        let mut command = match std::env::var_os("BB_FORK_RUNNER").filter(|r| !r.is_empty()) {
            Some(runner) => {
                let mut c = Command::new(runner);
                c.arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        die_with_parent(&mut command, Signal::SIGTERM);
        Ok(SelfCommand { command, exe })
    }

    /// Starts the child; `what` names it in the error (`starting the server (EXE): ...`).
    /// If this process ends abnormally first, an exit hook sends the child `on_exit`
    /// (SIGTERM lets a fork clean up after itself; a SIGKILLed child is also reaped) and
    /// then runs `cleanup` (removing what the child leaves behind).
    pub fn spawn(
        mut self,
        what: &str,
        on_exit: Signal,
        cleanup: impl Fn() + Send + 'static,
    ) -> Result<Child> {
        let process = self
            .command
            .spawn()
            .map_err(|e| Error::io(format!("{what} ({})", self.exe.display()), e))?;
        let pid = Pid::from_raw(process.id() as i32);
        let hook = watchdog::add_exit_hook(move || {
            let _ = kill(pid, on_exit);
            if on_exit == Signal::SIGKILL {
                // SAFETY: waits for this process's own child; no memory is passed.
                unsafe { libc::waitpid(pid.as_raw(), std::ptr::null_mut(), 0) };
            }
            cleanup();
        });
        Ok(Child {
            process,
            hook,
            reaped: false,
        })
    }
}

/// Makes the process that `command` starts receive `signal` when the thread that starts
/// it ends (PR_SET_PDEATHSIG), so that a child never outlives a parent killed with
/// SIGKILL; a child whose parent died before the request took hold exits at once.
pub fn die_with_parent(command: &mut Command, signal: Signal) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe
    // system calls (prctl, getppid, _exit); it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// A running child: killed (SIGKILL) and reaped if it is dropped before it was waited for.
pub struct Child {
    process: std::process::Child,
    hook: u64,
    reaped: bool,
}

impl Child {
    pub fn id(&self) -> u32 {
        self.process.id()
    }

    /// The child's stdout, where the command piped it; taken once.
    pub fn take_stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.process.stdout.take()
    }

    /// Sends the child `signal`.
    pub fn signal(&self, signal: Signal) {
        let _ = kill(Pid::from_raw(self.process.id() as i32), signal);
    }

    /// Waits for the child to end.
    pub fn wait(&mut self) -> std::io::Result<ExitStatus> {
        let status = self.process.wait();
        self.forget();
        status
    }

    /// Waits up to `grace` for the child to end by itself, looking every `poll`; None
    /// when it still runs (or cannot be asked).
    pub fn wait_for(&mut self, grace: Duration, poll: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + grace;
        loop {
            match self.process.try_wait() {
                Ok(Some(status)) => {
                    self.forget();
                    return Some(status);
                }
                Ok(None) if Instant::now() < until => std::thread::sleep(poll),
                _ => return None,
            }
        }
    }

    /// Kills the child (SIGKILL) and reaps it, if that was not done yet.
    pub fn reap(&mut self) {
        if !self.reaped {
            let _ = self.process.kill();
            let _ = self.process.wait();
            self.forget();
        }
    }

    /// The child is reaped: its exit hook has nothing more to do.
    fn forget(&mut self) {
        if !self.reaped {
            self.reaped = true;
            watchdog::remove_exit_hook(self.hook);
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.reap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_dies_with_the_thread_that_started_it() {
        let child = std::thread::spawn(|| {
            let mut c = std::process::Command::new("sleep");
            c.arg("30");
            die_with_parent(&mut c, nix::sys::signal::Signal::SIGKILL);
            c.spawn().unwrap()
        })
        .join()
        .unwrap();
        // The starting thread has ended: the kernel sent the child SIGKILL.
        let mut child = child;
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    }
}
