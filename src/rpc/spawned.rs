//! The server a benchmark spawns for itself: `bb-rpc serve` started as a child of the
//! process that measures, its address read back, stopped and checked when the benchmark
//! finishes and killed on any abnormal exit; and the socket directories that runs killed
//! outright left behind.

use super::args::{ServeArgs, DEFAULT_MAX_CONNECTIONS};
use crate::harness::fork::Purpose;
use crate::net::addr::Addr;
use crate::util::error::{Error, Result};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A server process spawned for one benchmark, stopped (and its socket directory
/// removed) when the benchmark finishes or the process exits abnormally.
pub(crate) struct LocalServer {
    child: Option<Child>,
    pub addr: Addr,
    dir: Option<PathBuf>,
    /// The exit hooks that kill and reap the server, and that remove its directory.
    hooks: Vec<u64>,
}

impl LocalServer {
    /// Starts `bb-rpc serve` (this binary, through `BB_FORK_RUNNER` if set) on a fresh
    /// unix socket or on 127.0.0.1 with an ephemeral port.
    pub fn start(
        transport: &str,
        floor: bool,
        max_frame: u32,
        cpu: Option<usize>,
    ) -> Result<LocalServer> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let mut hooks = Vec::new();
        let (listen, dir) = if transport == "unix" {
            static SWEEP: std::sync::Once = std::sync::Once::new();
            SWEEP.call_once(|| remove_stale_dirs(&std::env::temp_dir()));
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("bb-rpc-{}-{n}", std::process::id()));
            // Registered first, so it runs after the server is killed.
            let for_hook = dir.clone();
            hooks.push(crate::harness::watchdog::add_exit_hook(move || {
                let _ = std::fs::remove_dir_all(&for_hook);
            }));
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
            (Addr::Unix(dir.join("rpc.sock")), Some(dir))
        } else {
            (Addr::Tcp("127.0.0.1:0".into()), None)
        };
        let mut server = LocalServer {
            child: None,
            addr: Addr::Unix(PathBuf::new()),
            dir,
            hooks,
        };
        let (mut command, exe) = crate::harness::fork::command_for_self(Purpose::Server)?;
        if let Some(cpu) = cpu {
            command.args(["--pin", &cpu.to_string()]);
        }
        let serve = ServeArgs {
            listen: listen.clone(),
            max_frame: Some(max_frame.into()),
            // No idle timeout: its connections, the control connection above all, wait
            // through calibration and warm-up however long they take, and the server dies
            // with this process anyway.
            idle_timeout: Some(Duration::ZERO),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            floor,
            quiet: true,
        };
        command
            .args(serve.argv())
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        // A client killed outright (SIGKILL) does not leave its server behind either.
        let (mut child, hook) =
            crate::harness::fork::spawn(&mut command, &exe, "the server", Purpose::Server, None)?;
        server.hooks.push(hook);
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout is piped");
        server.child = Some(child);
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| Error::io("reading the server's address", e))?;
        let addr = line.trim().strip_prefix("listening on ").ok_or_else(|| {
            Error::failed(format!(
                "the server on {listen} did not start (it said '{}')",
                line.trim()
            ))
        })?;
        server.addr = Addr::parse(addr).map_err(Error::failed)?;
        Ok(server)
    }

    /// The server's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops the server with SIGTERM and checks it exits cleanly within 10 s.
    pub fn stop(mut self) -> Result<()> {
        let mut child = self.child.take().expect("the server is running");
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let until = Instant::now() + Duration::from_secs(10);
        match crate::system::exit::wait_until(&mut child, until, Duration::from_millis(10)) {
            Some(status) if status.success() => Ok(()),
            Some(status) => Err(Error::failed(format!(
                "the server on {} exited with {status}",
                self.addr
            ))),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(Error::failed(format!(
                    "the server on {} did not stop within 10s of SIGTERM",
                    self.addr
                )))
            }
        }
    }
}

/// Removes the socket directories (`bb-rpc-PID-N`) that runs killed outright left in
/// `tmp` (SIGKILL gives no time to clean up): only those whose PID is gone, and of what
/// is inside only the socket, so that a directory holding anything else stays.
fn remove_stale_dirs(tmp: &std::path::Path) {
    use std::os::unix::fs::FileTypeExt;
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, n)) = name
            .to_str()
            .and_then(|n| n.strip_prefix("bb-rpc-"))
            .and_then(|rest| rest.split_once('-'))
        else {
            continue;
        };
        let (Ok(pid), Ok(_)) = (pid.parse::<u32>(), n.parse::<u32>()) else {
            continue;
        };
        if !crate::system::exit::pid_gone(pid) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let socket = entry.path().join("rpc.sock");
        if std::fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket()) {
            let _ = std::fs::remove_file(&socket);
        }
        let _ = std::fs::remove_dir(entry.path());
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
        for &hook in &self.hooks {
            crate::harness::watchdog::remove_exit_hook(hook);
        }
    }
}
