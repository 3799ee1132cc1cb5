//! The clean-up hooks (socket files removed, children killed and reaped) that run when the process ends abnormally
//! (a signal, a timeout), and the one way out that runs them: whoever starts the exit
//! runs them all, the latest first, while every other thread that tries to exit, start a
//! child or register a clean-up waits for that exit instead, so nothing new is started
//! or reported once it has begun. A leaf below everything that starts a child or makes a
//! file, so that none of them imports in a circle. Whether a pid is gone: [`pid_gone`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

type Hook = Box<dyn Fn() + Send>;

/// The clean-up hooks, and whether the exit that runs them has begun.
struct Hooks {
    exiting: bool,
    list: Vec<(u64, Hook)>,
}

static HOOKS: Mutex<Hooks> = Mutex::new(Hooks {
    exiting: false,
    list: Vec::new(),
});
static NEXT_HOOK: AtomicU64 = AtomicU64::new(0);

/// Registers a clean-up to run when the process ends abnormally (timeout, signal); returns
/// a handle for [`remove_exit_hook`] once the resource is cleaned up normally. Once that
/// exit has begun, the calling thread waits for it instead: whatever it was about to
/// create would outlive the clean-up.
pub fn add_exit_hook(hook: impl Fn() + Send + 'static) -> u64 {
    let mut hooks = lock_unless_exiting();
    let id = NEXT_HOOK.fetch_add(1, Ordering::Relaxed);
    hooks.list.push((id, Box::new(hook)));
    id
}

pub fn remove_exit_hook(id: u64) {
    HOOKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .list
        .retain(|(i, _)| *i != id);
}

/// How a child started by [`spawn_with_exit_hook`] is ended on an abnormal exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// SIGTERM, so that it cleans up after itself (a fork stops its own server), and
    /// SIGKILL if it is still there after 5 s.
    Terminate,
    /// SIGKILL at once: a server whose client is gone, a helper command.
    Kill,
}

/// Starts `command` and registers the hook that ends it as `ending` says and reaps it on
/// an abnormal exit, in one step: no exit can run the hooks between the two and miss the
/// child. Once the exit has begun, nothing more is started; the calling thread waits for
/// the end. Returns the child and the hook's handle, to remove once it is reaped.
pub fn spawn_with_exit_hook(
    command: &mut std::process::Command,
    ending: Ending,
) -> std::io::Result<(std::process::Child, u64)> {
    let mut hooks = lock_unless_exiting();
    let child = command.spawn()?;
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let id = NEXT_HOOK.fetch_add(1, Ordering::Relaxed);
    hooks
        .list
        .push((id, Box::new(move || end_and_reap(pid, ending))));
    Ok((child, id))
}

/// Ends child `pid` and waits for it, so that no zombie is left for init to reap. A
/// child started in a process group of its own is ended with its group: what it started
/// goes too.
fn end_and_reap(pid: nix::unistd::Pid, ending: Ending) {
    use nix::sys::signal::{kill, Signal};
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    let target = whole(pid);
    let mut reaped = false;
    if ending == Ending::Terminate {
        let _ = kill(target, Signal::SIGTERM);
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            // Reaped here, or by the thread that started it (ECHILD).
            reaped = reaped
                || !matches!(
                    waitpid(pid, Some(WaitPidFlag::WNOHANG)),
                    Ok(WaitStatus::StillAlive)
                );
            // A group is waited for whole: what a wrapper started cleans up too.
            let group_left = target != pid && kill(target, None).is_ok();
            if reaped && !group_left {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // A reaped pid may be another process's by now: only a group still held is killed.
    if reaped && target == pid {
        return;
    }
    let _ = kill(target, Signal::SIGKILL);
    let _ = waitpid(pid, None);
}

/// `pid`, or its whole process group where it leads one (a child started in a group of
/// its own), for kill(2).
fn whole(pid: nix::unistd::Pid) -> nix::unistd::Pid {
    match nix::unistd::getpgid(Some(pid)) == Ok(pid) {
        true => nix::unistd::Pid::from_raw(-pid.as_raw()),
        false => pid,
    }
}

/// Kills `child` with SIGKILL, and everything in its process group where it leads one:
/// what a wrapper script started goes with it. Reaping is the caller's.
pub fn kill_whole(child: &std::process::Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(whole(pid), nix::sys::signal::Signal::SIGKILL);
}

/// Whether a pid is gone: the temporary files' check, shared.
pub use crate::util::file::pid_gone;

/// Runs every clean-up hook, the latest first, removes the temporary files being
/// written ([`crate::util::file::remove_pending_temp_files`]), then exits with `code`. Only the first
/// caller does: another thread (the main thread failing because the signal thread's
/// clean-up killed its server, say) waits here for that exit, which keeps its code.
pub fn exit_now(code: i32) -> ! {
    let hooks = {
        let mut hooks = lock_unless_exiting();
        hooks.exiting = true;
        std::mem::take(&mut hooks.list)
    };
    for (_, hook) in hooks.into_iter().rev() {
        hook();
    }
    crate::util::file::remove_pending_temp_files();
    std::process::exit(code)
}

/// The hooks, unless the exit has begun: then this thread waits for it.
fn lock_unless_exiting() -> MutexGuard<'static, Hooks> {
    let hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    if hooks.exiting {
        drop(hooks);
        loop {
            std::thread::park();
        }
    }
    hooks
}

/// Waits until `child` exits or `until` passes, looking every `poll`: its exit status,
/// or None where it still runs at `until` (or cannot be waited for). The caller kills
/// and reaps it then.
pub fn wait_until(
    child: &mut std::process::Child,
    until: Instant,
    poll: Duration,
) -> Option<std::process::ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < until => std::thread::sleep(poll),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pid_is_gone_once_reaped() {
        assert!(!pid_gone(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        assert!(pid_gone(child.id()));
        assert!(!pid_gone(0) && !pid_gone(u32::MAX));
    }

    #[test]
    fn the_hook_of_a_spawned_child_kills_and_reaps_it() {
        for ending in [Ending::Kill, Ending::Terminate] {
            let mut sleep = std::process::Command::new("sleep");
            sleep.arg("30");
            let (child, hook) = spawn_with_exit_hook(&mut sleep, ending).unwrap();
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            remove_exit_hook(hook);
            end_and_reap(pid, ending);
            // Reaped: not even a zombie is left.
            assert!(
                !std::path::Path::new(&format!("/proc/{pid}")).exists(),
                "{ending:?}"
            );
        }
    }
}
