//! Forks as JMH has them: the binary re-executes itself for each fork of a benchmark, the
//! child runs that one benchmark and sends its results back over a pipe, and the parent
//! only collects. `BB_FORK_RUNNER` names a program to run the child with (qemu-user,
//! where the kernel cannot execute the foreign binary by itself); without it, such a
//! qemu is looked for on PATH (`exec`). Servers start the same way ([`spawn`]).
//!
//! What a child is asked ([`ChildTask`]: a benchmark to run, with the values a prelude
//! measured; its start to be timed; a description of itself), its report over the pipe,
//! and a build's description of itself ([`Description`]) are one protocol, whose version
//! is [`PROTOCOL`].

use crate::harness::runner::ForkResult;
use crate::stats::histogram::Histogram;
use crate::system::cpu::{CpuTime, CpuUsage};
use crate::system::exit::Ending;
use crate::system::placement::PairPlacement;
use crate::util::error::{Error, Result};
use crate::util::format::printable;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const CHILD_ENV: &str = "BB_FORK_CHILD";
/// In a fork of an A/B pair: the descriptor it reads its turns from (`turns.rs`).
const TURNS_ENV: &str = "BB_FORK_TURNS";

/// The request of a copy started only to time a fork's start ([`time_start`]).
const START_ONLY: &str = "start";
/// Set (to the prelude's values) in a copy asked to describe itself ([`describe_command`]).
/// It comes with [`CHILD_ENV`] set to [`START_ONLY`], so that a build from before the
/// description starts and ends without a word rather than running its benchmarks.
const DESCRIBE_ENV: &str = "BB_FORK_DESCRIBE";

/// The version of the protocol between a parent and the copies it starts: the request,
/// the report and the description. An A/B run (`--against`) refuses another build that
/// speaks another version; builds from before the description speak none.
pub const PROTOCOL: u32 = 3;
/// The first word of a description, before the version.
const DESCRIPTION_HEAD: &str = "boardbench-fork";

/// What the parent asks of a fork child: the benchmark to run, the values its prelude
/// measured (empty without one; see [`crate::harness::Prelude`]), and the pipe to report on.
pub(crate) struct ChildRequest {
    pub index: usize,
    pub values: Vec<f64>,
    pub pipe: std::fs::File,
    /// Where it is driven in turn, the pipe its turns come on (`turns.rs`).
    pub turns: Option<std::fs::File>,
}

/// What a copy of this binary started as a fork is for.
pub(crate) enum ChildTask {
    /// To run a benchmark and report.
    Run(ChildRequest),
    /// To start, build its suite and end at once: the parent times it ([`time_start`]).
    StartOnly,
    /// To print its description on stdout ([`Description`]), its benchmarks rebuilt from
    /// these prelude values where there are any.
    Describe(Vec<f64>),
}

/// In a fork child: what its parent asks of it.
pub(crate) fn child_task() -> Option<ChildTask> {
    let value = std::env::var(CHILD_ENV).ok()?;
    std::env::remove_var(CHILD_ENV);
    if let Ok(values) = std::env::var(DESCRIBE_ENV) {
        std::env::remove_var(DESCRIBE_ENV);
        return decode_values(&values).map(ChildTask::Describe);
    }
    if value == START_ONLY {
        return Some(ChildTask::StartOnly);
    }
    let (index, fd, values) = decode_request(&value)?;
    // Started by a wrapper (another build's), it dies with the wrapper as the wrapper
    // dies with the run: a fork never outlives its parent, whoever that is.
    // SAFETY: prctl(2) with PR_SET_PDEATHSIG only sets this process's attribute.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) };
    // SAFETY: the parent passed this descriptor, the write end of a pipe it made for
    // this child alone; nothing else in this process owns it.
    let pipe = unsafe { std::fs::File::from_raw_fd(fd) };
    set_cloexec(pipe.as_raw_fd());
    let turns = std::env::var(TURNS_ENV)
        .ok()
        .and_then(|fd| fd.parse::<i32>().ok());
    std::env::remove_var(TURNS_ENV);
    // SAFETY: as the report pipe: the read end of a pipe the parent made for this child.
    let turns = turns.map(|fd| unsafe { std::fs::File::from_raw_fd(fd) });
    if let Some(t) = &turns {
        set_cloexec(t.as_raw_fd());
    }
    Some(ChildTask::Run(ChildRequest {
        index,
        values,
        pipe,
        turns,
    }))
}

/// How long a fork takes to start before its benchmark: a copy of this binary started
/// as every fork is (through the runner where there is one: qemu-user's start counts),
/// its flags read and its suite built, then ended; timed once before the plan, since it
/// ranges from a few milliseconds to a tenth of a second from one machine to another.
/// None where no copy started or ended within [`START_DEADLINE`] (the first fork then
/// says why, as before).
pub(crate) fn time_start() -> Option<std::time::Duration> {
    let (mut command, exe) = command_for_self(Purpose::Fork).ok()?;
    command
        .args(std::env::args_os().skip(1))
        .env(CHILD_ENV, START_ONLY)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let started = std::time::Instant::now();
    let (mut child, hook) = spawn(&mut command, &exe, "a fork", Purpose::Fork, None).ok()?;
    let poll = std::time::Duration::from_micros(500);
    let status = crate::system::exit::wait_until(&mut child, started + START_DEADLINE, poll);
    let took = started.elapsed();
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    crate::harness::watchdog::remove_exit_hook(hook);
    status.is_some_and(|s| s.success()).then_some(took)
}

/// How long [`time_start`] waits for its copy.
const START_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// `INDEX:FD:VALUES`, the values comma-separated in Rust's shortest round-trip form, so
/// that the fork rebuilds its benchmarks from exactly what the parent measured.
fn encode_request(index: usize, fd: i32, values: &[f64]) -> String {
    format!("{index}:{fd}:{}", encode_values(values))
}

fn decode_request(text: &str) -> Option<(usize, i32, Vec<f64>)> {
    let mut parts = text.splitn(3, ':');
    let index = parts.next()?.parse().ok()?;
    let fd = parts.next()?.parse().ok()?;
    Some((index, fd, decode_values(parts.next()?)?))
}

fn encode_values(values: &[f64]) -> String {
    let values: Vec<String> = values.iter().map(f64::to_string).collect();
    values.join(",")
}

fn decode_values(list: &str) -> Option<Vec<f64>> {
    match list {
        "" => Some(Vec::new()),
        list => list.split(',').map(|v| v.parse().ok()).collect(),
    }
}

/// What a build says of itself when asked ([`ChildTask::Describe`]): the protocol it
/// speaks, its program, and its benchmarks' labels in its own order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    pub protocol: u32,
    pub program: String,
    pub labels: Vec<String>,
}

impl Description {
    /// As a copy prints it: `boardbench-fork 3`, `program bb-zstd`, a `bench LABEL` line
    /// per benchmark, then `end`.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{DESCRIPTION_HEAD} {}\nprogram {}\n",
            self.protocol,
            self.program.replace(['\n', '\r'], " ")
        );
        // One line each, whatever a label holds (a CR before the LF would be read as its end).
        for label in &self.labels {
            out.push_str(&format!("bench {}\n", label.replace(['\n', '\r'], " ")));
        }
        out.push_str("end\n");
        out
    }

    /// What [`Description::text`] wrote. Err(None) where the text is no description at
    /// all (a build from before them, or another program); Err(Some(why)) where it is one
    /// that cannot be read, `why` a predicate ("does not end").
    pub fn parse(text: &str) -> std::result::Result<Description, Option<String>> {
        let mut lines = text.lines();
        let head = lines.next().and_then(|l| l.strip_prefix(DESCRIPTION_HEAD));
        let version = head.and_then(|h| h.strip_prefix(' ')).ok_or(None)?;
        let protocol = version.parse().map_err(|_| {
            Some(format!(
                "has a protocol version '{}'",
                printable(&version.chars().take(25).collect::<String>())
            ))
        })?;
        let mut d = Description {
            protocol,
            program: String::new(),
            labels: Vec::new(),
        };
        for line in lines {
            match line.split_once(' ') {
                Some(("program", name)) => d.program = name.to_string(),
                Some(("bench", label)) => d.labels.push(label.to_string()),
                None if line == "end" => return Ok(d),
                // A later version's lines, where the versions match, are not errors.
                _ if d.protocol != PROTOCOL => {}
                _ => return Err(Some("has a line it does not explain".into())),
            }
        }
        Err(Some("does not end (no `end` line)".into()))
    }
}

/// Sets `command` (a copy of a build, see [`Launcher`]) to print its description on
/// stdout and end, its benchmarks rebuilt from `values` where there are any.
pub(crate) fn describe_command(command: &mut std::process::Command, values: &[f64]) {
    command
        .env(DESCRIBE_ENV, encode_values(values))
        .env(CHILD_ENV, START_ONLY);
}

/// How to start a copy of another build (`--against`'s) as a fork: its path, the file
/// as it was opened and checked (what every copy executes: a build replaced or removed
/// on disk mid-run changes nothing), the runner it needs (qemu-user, where the kernel
/// cannot execute it), and the arguments.
#[derive(Debug, Clone)]
pub(crate) struct Launcher {
    pub exe: std::path::PathBuf,
    pub file: Option<std::sync::Arc<OwnedFd>>,
    pub runner: Option<std::path::PathBuf>,
    pub args: Vec<std::ffi::OsString>,
}

impl Launcher {
    /// A command that starts the build with its arguments, through its runner; the
    /// runner is passed on to the copy (or this run's removed), for the servers it starts.
    /// Start it with [`Launcher::exec_file`].
    pub fn command(&self) -> std::process::Command {
        use crate::harness::exec::RUNNER_ENV;
        use std::os::unix::process::CommandExt;
        let mut command = match &self.runner {
            Some(runner) => {
                let mut c = std::process::Command::new(runner);
                c.arg(self.opened().unwrap_or_else(|| self.exe.clone()))
                    .env(RUNNER_ENV, runner);
                c
            }
            None => {
                let mut c = std::process::Command::new(&self.exe);
                c.env_remove(RUNNER_ENV);
                c
            }
        };
        command.args(&self.args);
        if let Some(fd) = self.file.as_ref().map(|f| f.as_raw_fd()) {
            // SAFETY: fcntl(2) is async-signal-safe and touches only this descriptor.
            // It stays open through exec: a script's interpreter, or the runner, opens
            // the file by it.
            unsafe {
                command.pre_exec(move || {
                    libc::fcntl(fd, libc::F_SETFD, 0);
                    Ok(())
                });
            }
        }
        command
    }

    /// The file [`spawn`] executes for [`Launcher::command`] (its program named by
    /// `exe`, as `argv[0]`): the opened build, where it runs without a runner.
    pub fn exec_file(&self) -> Option<std::path::PathBuf> {
        self.runner.is_none().then(|| self.opened()).flatten()
    }

    /// The opened build as a path any process that holds the descriptor can open.
    fn opened(&self) -> Option<std::path::PathBuf> {
        let fd = self.file.as_ref()?.as_raw_fd();
        Some(format!("/proc/self/fd/{fd}").into())
    }
}

fn set_cloexec(fd: i32) {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
}

/// Runs fork `fork` (1-based) of benchmark `index` in a fresh copy of this binary with the
/// same arguments, passing it the prelude's `values`. The outer error is the run's (no
/// fork can be started: every benchmark would fail alike), the inner the benchmark's.
pub(crate) fn run_child(
    index: usize,
    fork: u32,
    label: &str,
    values: &[f64],
    other: Option<&Launcher>,
    quiet: std::time::Duration,
    limit: std::time::Duration,
) -> Result<Result<ForkResult>> {
    let mut child = Child::start(index, fork, label, values, other, false, limit)?;
    while child.step(quiet) == Step::Turned {}
    child.finish()
}

/// Where a fork driven in turn stands after the part of its work it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// It ended a step and waits for its next turn.
    Turned,
    /// It sent its report (or failed, or fell silent): [`Child::finish`] says which.
    Done,
}

/// A fork started and not yet reaped: its process, the pipe it reports on, and in an A/B
/// pair the pipe that gives it its turns (`turns.rs`).
pub(crate) struct Child {
    process: std::process::Child,
    hook: u64,
    fork: u32,
    label: String,
    report: Report,
    /// The write end of its turns pipe, where it is driven in turn.
    turns: Option<std::fs::File>,
    /// Its report, or why there is none, once it is [`Step::Done`].
    outcome: Option<std::result::Result<ForkResult, Unreported>>,
    quiet: std::time::Duration,
    /// When it is stopped, however it goes on saying `alive`: its deadlines are counted.
    deadline: std::time::Instant,
    limit: std::time::Duration,
}

impl Child {
    /// Starts fork `fork` of benchmark `index` (of this build, or of `other`); with
    /// `in_turn`, it waits for a turn before each step of its work ([`Child::step`]). It
    /// is stopped once it has run `limit`, its report or not, and so is its exit.
    pub fn start(
        index: usize,
        fork: u32,
        label: &str,
        values: &[f64],
        other: Option<&Launcher>,
        in_turn: bool,
        limit: std::time::Duration,
    ) -> Result<Child> {
        // Errno is named, not kept as the cause: its Debug (every errno's name) would
        // double the binaries' error tables.
        let pipe = || {
            nix::unistd::pipe()
                .map_err(|e| Error::failed(format!("creating a pipe for a fork: {e}")))
        };
        let (read_end, write_end) = pipe()?;
        set_cloexec(read_end.as_raw_fd());
        let turns = match in_turn {
            true => {
                let (turn_read, turn_write) = pipe()?;
                set_cloexec(turn_write.as_raw_fd());
                Some((turn_read, turn_write))
            }
            false => None,
        };
        let (mut command, exe, purpose, file) = match other {
            Some(launcher) => (
                launcher.command(),
                launcher.exe.clone(),
                Purpose::Other,
                launcher.exec_file(),
            ),
            None => {
                let (mut command, exe) = command_for_self(Purpose::Fork)?;
                command.args(std::env::args_os().skip(1));
                (command, exe, Purpose::Fork, None)
            }
        };
        command
            .env(
                CHILD_ENV,
                encode_request(index, write_end.as_raw_fd(), values),
            )
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null());
        match &turns {
            Some((turn_read, _)) => command.env(TURNS_ENV, turn_read.as_raw_fd().to_string()),
            None => command.env_remove(TURNS_ENV),
        };
        let (process, hook) = spawn(
            &mut command,
            &exe,
            &format!("fork {fork} of {label}"),
            purpose,
            file.as_deref(),
        )?;
        drop(write_end);
        Ok(Child {
            process,
            hook,
            fork,
            label: label.to_string(),
            report: Report::new(read_end),
            turns: turns.map(|(read, write)| {
                drop(read);
                std::fs::File::from(write)
            }),
            outcome: None,
            quiet: std::time::Duration::ZERO,
            deadline: crate::harness::watchdog::after(limit),
            limit,
        })
    }

    /// Gives it its next turn (where it is driven in turn) and reads what it says until
    /// it ends that step or its report; each read waits `quiet` at most.
    pub fn step(&mut self, quiet: std::time::Duration) -> Step {
        if self.outcome.is_some() {
            return Step::Done;
        }
        self.quiet = quiet;
        if let Some(turns) = self.turns.as_mut() {
            // One that is gone cannot take it: its report's end says why.
            let _ = turns.write_all(b"t");
        }
        loop {
            return match self.report.next(quiet, self.deadline) {
                Ok(Event::Turn) if self.turns.is_some() => Step::Turned,
                // A turn it was never given is no step: read on.
                Ok(Event::Turn) => continue,
                Ok(Event::Report(result)) => self.done(Ok(*result)),
                Err(why) => self.done(Err(why)),
            };
        }
    }

    fn done(&mut self, outcome: std::result::Result<ForkResult, Unreported>) -> Step {
        if let Err(Unreported::Silent | Unreported::Overran) = outcome {
            crate::system::exit::kill_whole(&self.process);
        }
        self.outcome = Some(outcome);
        Step::Done
    }

    /// Whether it has reported, failed or fallen silent.
    pub fn is_done(&self) -> bool {
        self.outcome.is_some()
    }

    /// Whether it is done without a report.
    pub fn failed(&self) -> bool {
        matches!(self.outcome, Some(Err(_)))
    }

    /// Ends it where it has not ended (its pair's other fork failed), SIGKILL.
    pub fn stop(&mut self) {
        if self.outcome.is_none() {
            crate::system::exit::kill_whole(&self.process);
            self.outcome = Some(Err(Unreported::Bad("stopped".into())));
        }
    }

    /// Reaps it: its report, or why there is none, naming the fork (the harness names
    /// the benchmark). The outer error is the run's: it could not be waited for.
    pub fn finish(mut self) -> Result<Result<ForkResult>> {
        let (fork, quiet) = (self.fork, self.quiet);
        // Its turns pipe closed: one still waiting for a turn ends.
        self.turns = None;
        // One that lingers after its report (or its pipe's end) is killed after a grace,
        // within its limit.
        let until = (std::time::Instant::now() + EXIT_GRACE).min(self.deadline);
        let poll = std::time::Duration::from_millis(5);
        let lingered = crate::system::exit::wait_until(&mut self.process, until, poll).is_none();
        if lingered {
            crate::system::exit::kill_whole(&self.process);
        }
        let status = self.process.wait();
        crate::harness::watchdog::remove_exit_hook(self.hook);
        let status = status
            .map_err(|e| Error::io(format!("waiting for fork {fork} of {}", self.label), e))?;
        let parsed = self
            .outcome
            .take()
            .unwrap_or_else(|| Err(Unreported::Bad("no report (it was never read)".into())));
        Ok(match parsed {
            Err(Unreported::Failed(error)) => Err(error),
            Err(Unreported::Silent) => Err(Error::failed(format!(
                "fork {fork} said nothing for {} (--timeout and {} to start): stopped, or never started by its runner; it was killed",
                crate::util::format::format_duration(quiet),
                crate::util::format::format_duration(FORK_GRACE)
            ))),
            Err(Unreported::Overran) => Err(Error::failed(format!(
                "fork {fork} ran past its limit of {} (its deadlines at --timeout each, and {} to start) though it said it was alive; it was killed",
                crate::util::format::format_duration(self.limit),
                crate::util::format::format_duration(FORK_GRACE)
            ))),
            _ if lingered => Err(Error::failed(format!(
                "fork {fork} did not exit within {} of its report's end; it was killed",
                crate::util::format::format_duration(EXIT_GRACE)
            ))),
            _ if !status.success() => Err(Error::failed(format!("fork {fork} failed ({status})"))),
            Err(Unreported::Bad(e)) => {
                Err(Error::failed(format!("fork {fork} sent a bad report: {e}")))
            }
            Ok(result) => Ok(result),
        })
    }
}

/// What a copy of this binary is started for: it decides how the copy is ended on an
/// abnormal exit, and the advice when it cannot be started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A fork of a benchmark: SIGTERM lets it stop its own server first.
    Fork,
    /// A server, killed outright: its client is gone.
    Server,
    /// A copy of another build (`--against`'s), which may be a wrapper script that runs
    /// the build as its child: in a process group of its own, ended whole, and nothing
    /// blocked in it (a wrapper would never unblock it).
    Other,
}

impl Purpose {
    fn ending(self) -> Ending {
        match self {
            Purpose::Fork | Purpose::Other => Ending::Terminate,
            Purpose::Server => Ending::Kill,
        }
    }

    /// What else the person can do about a binary that cannot be re-executed.
    fn alternative(self) -> &'static str {
        match self {
            Purpose::Fork => ", or use --forks 0",
            Purpose::Server | Purpose::Other => "",
        }
    }
}

/// A command that starts this binary again, without arguments, through the runner where
/// one is needed ([`crate::harness::exec::choose_runner`], decided once per process and passed on
/// to the copies); and the binary's path, for messages.
pub fn command_for_self(purpose: Purpose) -> Result<(std::process::Command, std::path::PathBuf)> {
    use crate::harness::exec::RUNNER_ENV;
    static RUNNER: std::sync::OnceLock<std::result::Result<Option<std::path::PathBuf>, String>> =
        std::sync::OnceLock::new();
    let exe = std::env::current_exe()
        .map_err(|e| Error::io("finding this binary to start it again", e))?;
    let runner = RUNNER
        .get_or_init(|| {
            let path = std::env::var_os("PATH");
            crate::harness::exec::choose_runner(&exe, std::env::var_os(RUNNER_ENV), path.as_deref())
        })
        .clone()
        .map_err(|e| Error::failed(format!("{e}{}", purpose.alternative())))?;
    let command = match runner {
        Some(runner) => {
            let mut c = std::process::Command::new(&runner);
            c.arg(&exe).env(RUNNER_ENV, &runner);
            c
        }
        None => std::process::Command::new(&exe),
    };
    Ok((command, exe))
}

/// Starts `command` (from [`command_for_self`], arguments and environment set) as a child
/// that dies with this process, even one killed by SIGKILL; on an abnormal exit (a
/// signal, a timeout) it is ended as `purpose` wants and reaped before this process
/// exits. Returns the child and the handle of that exit hook, to remove once it is
/// reaped. A program the kernel refuses (ENOEXEC) is an error that says what to do.
/// `file`, where given, is executed in the program's place ([`Launcher::exec_file`]).
pub fn spawn(
    command: &mut std::process::Command,
    exe: &std::path::Path,
    what: &str,
    purpose: Purpose,
    file: Option<&std::path::Path>,
) -> Result<(std::process::Child, u64)> {
    let own = purpose != Purpose::Other;
    die_with_parent(command, nix::sys::signal::Signal::SIGTERM, own);
    if !own {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let started = crate::harness::exec::exec_directly(command, file)
        .and_then(|()| crate::system::exit::spawn_with_exit_hook(command, purpose.ending()));
    started.map_err(|e| {
        let program = std::path::Path::new(command.get_program());
        match e.raw_os_error() {
            Some(libc::ENOEXEC) if program == exe => Error::failed(format!(
                "{}{}",
                crate::harness::exec::cannot_reexecute(exe),
                purpose.alternative()
            )),
            Some(libc::ENOEXEC) => Error::failed(format!(
                "cannot run {}={} (exec format error): it must be a program this machine executes, such as qemu-arm-static",
                crate::harness::exec::RUNNER_ENV,
                program.display()
            )),
            // The runner failed to start, not the binary: name the variable.
            _ if program != exe => Error::failed(format!(
                "cannot run {}={} ({e}): it must be a program this machine runs, such as qemu-arm-static",
                crate::harness::exec::RUNNER_ENV,
                crate::util::format::printable(&program.to_string_lossy()),
            )),
            _ => Error::io(format!("starting {what} ({})", exe.display()), e),
        }
    })
}

/// Makes the process that `command` starts receive `signal` when the thread that starts
/// it ends (PR_SET_PDEATHSIG), so that a child never outlives a parent killed with
/// SIGKILL. It starts with no signal blocked and the signals a run handles at their
/// defaults, except that in a copy of this binary (`own`) a catchable `signal` is
/// blocked until the child's own handling is in place (`signals::install` unblocks it,
/// the signal mask surviving exec): one that came between exec and the handler would
/// end the child before it removed what it must (a socket file). Another program would
/// never unblock it. A child whose parent died before the request took hold gets the
/// signal at once, the same way.
pub fn die_with_parent(
    command: &mut std::process::Command,
    signal: nix::sys::signal::Signal,
    own: bool,
) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    let catchable = signal != nix::sys::signal::Signal::SIGKILL;
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe
    // system calls (signal, sigemptyset, sigaddset, sigprocmask, prctl, getppid, raise);
    // it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || {
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
                libc::signal(s, libc::SIG_DFL);
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            if catchable && own {
                libc::sigaddset(&mut set, signal as libc::c_int);
            }
            if libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::raise(signal as libc::c_int);
            }
            Ok(())
        });
    }
}

/// How much longer than `--timeout` a fork may say nothing: its start (qemu-user's too)
/// and the time to report.
pub(crate) const FORK_GRACE: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a fork has to exit once its report has ended (it stops its server).
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The largest report a fork may send.
const REPORT_LIMIT: usize = 256 << 20;

/// What a fork says, read line by line as it comes: `alive` lines (see
/// [`crate::harness::watchdog::arm`]) only say it is still going, `turn` that it ended a
/// step of its work; a fork silent for the `quiet` a read is given is
/// [`Unreported::Silent`].
struct Report {
    pipe: std::fs::File,
    pending: Vec<u8>,
    lines: Vec<String>,
    /// What the pending and kept lines hold, bounded by [`REPORT_LIMIT`].
    held: usize,
}

/// What a fork said that [`Report::next`] returns.
enum Event {
    /// It ended a step of its work.
    Turn,
    Report(Box<ForkResult>),
}

impl Report {
    fn new(read_end: OwnedFd) -> Report {
        Report {
            pipe: std::fs::File::from(read_end),
            pending: Vec::new(),
            lines: Vec::new(),
            held: 0,
        }
    }

    /// Reads until the fork ends a step or its report, until `deadline` at most.
    fn next(
        &mut self,
        quiet: std::time::Duration,
        deadline: std::time::Instant,
    ) -> std::result::Result<Event, Unreported> {
        use std::io::Read;
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            if let Some(event) = self.parse_pending()? {
                return Ok(event);
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let wait = quiet.min(left);
            if !readable_within(&self.pipe, wait).map_err(|e| Unreported::Bad(e.to_string()))? {
                return Err(match wait < quiet {
                    true => Unreported::Overran,
                    false => Unreported::Silent,
                });
            }
            let n = self
                .pipe
                .read(&mut chunk)
                .map_err(|e| Unreported::Bad(e.to_string()))?;
            // Stop at "end": a grandchild (a forked server) may hold the pipe open longer.
            if n == 0 {
                return Err(Unreported::Bad(
                    "no report (the fork ended early)".to_string(),
                ));
            }
            self.pending.extend_from_slice(&chunk[..n]);
            self.held += n;
            if self.held > REPORT_LIMIT {
                return Err(Unreported::Bad("a report larger than 256 MiB".to_string()));
            }
        }
    }

    /// The event the complete lines read so far make, if any.
    fn parse_pending(&mut self) -> std::result::Result<Option<Event>, Unreported> {
        while let Some(at) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=at).collect();
            let line = String::from_utf8_lossy(&line[..at]).into_owned();
            if let Some(rest) = line.strip_prefix("error ") {
                let (code, message) = rest.split_once(' ').unwrap_or(("1", rest));
                let error = match code {
                    "2" => Error::usage(message),
                    _ => Error::failed(message),
                };
                return Err(Unreported::Failed(error));
            }
            match line.as_str() {
                crate::harness::watchdog::ALIVE => {}
                super::turns::TURN => return Ok(Some(Event::Turn)),
                "end" => {
                    let text = std::mem::take(&mut self.lines).join("\n");
                    return decode(&text)
                        .map(|r| Some(Event::Report(Box::new(r))))
                        .map_err(Unreported::Bad);
                }
                _ => self.lines.push(line),
            }
        }
        Ok(None)
    }
}

/// Whether `pipe` has something to read (or its end) within `limit`.
fn readable_within(pipe: &std::fs::File, limit: std::time::Duration) -> std::io::Result<bool> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let until = std::time::Instant::now() + limit;
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        let ms = PollTimeout::try_from(left.as_millis().min(i32::MAX as u128) as i32)
            .unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, ms) {
            Ok(0) if left.is_zero() => return Ok(false),
            Ok(0) => continue,
            Ok(_) => return Ok(true),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(std::io::Error::from(e)),
        }
    }
}

/// Why a fork sent no result.
enum Unreported {
    /// Its benchmark failed with this error (see [`send_error`]).
    Failed(Error),
    /// It said nothing, not even `alive`, for longer than its deadline allows.
    Silent,
    /// It ran past its limit, every deadline it may arm at --timeout.
    Overran,
    /// Its report was missing or could not be read.
    Bad(String),
}

/// Sends a fork's result to the parent.
pub fn send(mut pipe: std::fs::File, result: &ForkResult) -> Result<()> {
    let text = encode(result);
    pipe.write_all(text.as_bytes())
        .and_then(|_| pipe.write_all(b"end\n"))
        .map_err(|e| Error::io("sending results to the parent process", e))
}

/// Sends the parent the error that failed a fork's benchmark, on one line with its exit
/// code (`error 1 message`), so that the parent reports why, not only that the fork
/// exited 1.
pub(crate) fn send_error(mut pipe: std::fs::File, error: &Error) {
    let message = error.to_string().replace('\n', "; ");
    // A parent that cannot read it says the fork failed, without the reason.
    let code = error.exit_code();
    let _ = pipe.write_all(format!("error {code} {message}\nend\n").as_bytes());
}

/// The line protocol between a fork and its parent; floats use Rust's shortest
/// round-trip form, so nothing is lost.
pub fn encode(r: &ForkResult) -> String {
    let mut out = String::new();
    for s in &r.scores {
        out.push_str(&format!("score {s}\n"));
    }
    for (name, unit, values) in &r.metrics {
        let v: Vec<String> = values.iter().map(|x| x.to_string()).collect();
        out.push_str(&format!("metric {name}\t{unit}\t{}\n", v.join(" ")));
    }
    if let Some(h) = &r.histogram {
        out.push_str(&format!("hist {}\n", encode_histogram(h)));
    }
    for h in &r.iteration_histograms {
        out.push_str(&format!("ihist {}\n", encode_histogram(h)));
    }
    let c = &r.cpu;
    out.push_str(&format!(
        "cpu {} {} {} {} {}\n",
        c.wall, c.process.user, c.process.sys, c.children.user, c.children.sys
    ));
    if let Some(rss) = r.peak_rss_kib {
        out.push_str(&format!("rss {rss}\n"));
    }
    out.push_str(&format!("ops {}\n", r.ops));
    for p in &r.pairs {
        out.push_str(&format!("pair {}\n", p.encode()));
    }
    out
}

/// `MIN MAX INDEX:COUNT ...`, or `empty`.
fn encode_histogram(h: &Histogram) -> String {
    match (h.min(), h.max()) {
        (Some(min), Some(max)) => {
            let b: Vec<String> = h.nonzero().map(|(i, c)| format!("{i}:{c}")).collect();
            format!("{min} {max} {}", b.join(" "))
        }
        _ => "empty".to_string(),
    }
}

fn decode_histogram(rest: &str) -> Option<Histogram> {
    if rest == "empty" {
        return Some(Histogram::new());
    }
    let mut parts = rest.split(' ');
    let min = parts.next()?.parse().ok()?;
    let max = parts.next()?.parse().ok()?;
    let buckets = parts
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (i, c) = p.split_once(':')?;
            Some((i.parse().ok()?, c.parse().ok()?))
        })
        .collect::<Option<Vec<_>>>()?;
    // Counts past 2^64 in all are no histogram (its total would overflow).
    buckets
        .iter()
        .try_fold(0u64, |sum, &(_, c)| sum.checked_add(c))?;
    Histogram::from_buckets(&buckets, min, max)
}

pub fn decode(text: &str) -> std::result::Result<ForkResult, String> {
    let mut r = ForkResult::default();
    for line in text.lines() {
        // Quoted printable and cut: a report may hold anything, a line of megabytes.
        let bad = || {
            format!(
                "bad line '{}'",
                printable(&line.chars().take(30).collect::<String>())
            )
        };
        let (key, rest) = line.split_once(' ').ok_or_else(bad)?;
        let num = |s: &str| s.parse::<f64>().map_err(|_| bad());
        match key {
            "score" => r.scores.push(num(rest)?),
            "metric" => {
                let mut parts = rest.splitn(3, '\t');
                let (name, unit, values) = (
                    parts.next().ok_or_else(bad)?,
                    parts.next().ok_or_else(bad)?,
                    parts.next().ok_or_else(bad)?,
                );
                let values = values
                    .split(' ')
                    .map(num)
                    .collect::<std::result::Result<_, _>>()?;
                r.metrics.push((name.to_string(), unit.to_string(), values));
            }
            "hist" => r.histogram = Some(decode_histogram(rest).ok_or_else(bad)?),
            "ihist" => r
                .iteration_histograms
                .push(decode_histogram(rest).ok_or_else(bad)?),
            "cpu" => {
                let v = rest
                    .split(' ')
                    .map(num)
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                if v.len() != 5 {
                    return Err(bad());
                }
                r.cpu = CpuUsage {
                    wall: v[0],
                    process: CpuTime {
                        user: v[1],
                        sys: v[2],
                    },
                    children: CpuTime {
                        user: v[3],
                        sys: v[4],
                    },
                };
            }
            "rss" => r.peak_rss_kib = Some(rest.parse().map_err(|_| bad())?),
            "ops" => r.ops = rest.parse().map_err(|_| bad())?,
            "pair" => r.pairs.push(PairPlacement::decode(rest).ok_or_else(bad)?),
            _ => return Err(bad()),
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forks_error_comes_back_with_its_message_and_exit_code() {
        for (error, code) in [
            (Error::usage("x.pattern: no reads\nin the file"), 2),
            (Error::failed("method_a3 over tcp: refused"), 1),
        ] {
            let (read_end, write_end) = nix::unistd::pipe().unwrap();
            send_error(std::fs::File::from(write_end), &error);
            let Err(Unreported::Failed(back)) = Report::new(read_end).next(
                std::time::Duration::from_secs(5),
                crate::harness::watchdog::after(std::time::Duration::from_secs(5)),
            ) else {
                panic!("no error came back for {error}");
            };
            let message = error.to_string().replace('\n', "; ");
            assert_eq!((back.to_string(), back.exit_code()), (message, code));
        }
    }

    #[test]
    fn a_report_is_bounded_by_every_line_held_and_turns_come_between_lines() {
        // Complete lines count towards the bound as well as the unfinished one.
        let (read_end, write_end) = nix::unistd::pipe().unwrap();
        let writer = std::thread::spawn(move || {
            let mut pipe = std::fs::File::from(write_end);
            let line = format!("metric {}\n", "x".repeat(1 << 20));
            for _ in 0..300 {
                if pipe.write_all(line.as_bytes()).is_err() {
                    return;
                }
            }
        });
        let mut report = Report::new(read_end);
        match report.next(
            std::time::Duration::from_secs(5),
            crate::harness::watchdog::after(std::time::Duration::from_secs(60)),
        ) {
            Err(Unreported::Bad(why)) => assert!(why.contains("256 MiB"), "{why}"),
            _ => panic!("an endless report of complete lines was read"),
        }
        drop(report);
        writer.join().unwrap();
        let (read_end, write_end) = nix::unistd::pipe().unwrap();
        let mut pipe = std::fs::File::from(write_end);
        pipe.write_all(b"alive\nscore 1\nturn\nscore 2\nturn\nops 2\nend\n")
            .unwrap();
        let mut report = Report::new(read_end);
        let quiet = std::time::Duration::from_secs(5);
        assert!(matches!(
            report.next(quiet, crate::harness::watchdog::after(quiet)),
            Ok(Event::Turn)
        ));
        assert!(matches!(
            report.next(quiet, crate::harness::watchdog::after(quiet)),
            Ok(Event::Turn)
        ));
        match report.next(quiet, crate::harness::watchdog::after(quiet)) {
            Ok(Event::Report(r)) => assert_eq!((&r.scores, r.ops), (&vec![1.0, 2.0], 2)),
            _ => panic!("no report after the turns"),
        }
    }

    #[test]
    fn reports_round_trip_exactly() {
        let mut h = Histogram::new();
        h.record(1234);
        let mut second = Histogram::new();
        second.record_n(99_999, 5);
        h.merge(&second);
        let r = ForkResult {
            scores: vec![1.0 / 3.0, 2e-9, f64::NAN],
            metrics: vec![
                ("MB/s".into(), "MB/s".into(), vec![10.5, 11.25]),
                ("cpu per call".into(), "us".into(), vec![0.1]),
            ],
            iteration_histograms: vec![h.clone(), Histogram::new(), second],
            histogram: Some(h),
            cpu: CpuUsage {
                wall: 1.5,
                process: CpuTime {
                    user: 1.25,
                    sys: 0.125,
                },
                children: CpuTime {
                    user: 0.5,
                    sys: 0.0,
                },
            },
            peak_rss_kib: Some(4096),
            ops: 123,
            pairs: vec![
                PairPlacement::decode("0/0 0/0").unwrap(),
                PairPlacement::decode("0,1/- 1/-").unwrap(),
            ],
        };
        let back = decode(&encode(&r)).unwrap();
        assert_eq!(back.scores[..2], r.scores[..2]);
        assert!(back.scores[2].is_nan());
        assert_eq!(
            (
                back.metrics,
                back.histogram,
                back.iteration_histograms,
                back.cpu,
                back.peak_rss_kib,
                back.ops,
                back.pairs
            ),
            (
                r.metrics,
                r.histogram,
                r.iteration_histograms,
                r.cpu,
                r.peak_rss_kib,
                r.ops,
                r.pairs
            )
        );
    }

    #[test]
    fn a_child_dies_with_the_thread_that_started_it() {
        let child = std::thread::spawn(|| {
            let mut c = std::process::Command::new("sleep");
            c.arg("30");
            die_with_parent(&mut c, nix::sys::signal::Signal::SIGKILL, true);
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

    #[test]
    fn a_request_carries_the_prelude_values_exactly() {
        let values = [123456.789, 1.0 / 3.0, 5e-324];
        let text = encode_request(3, 7, &values);
        assert_eq!(decode_request(&text), Some((3, 7, values.to_vec())));
        assert_eq!(encode_request(0, 4, &[]), "0:4:");
        assert_eq!(decode_request("0:4:"), Some((0, 4, vec![])));
        for bad in ["", "1", "1:x:", "x:3:", "1:3", "1:3:1,y", "1:3:1,"] {
            assert_eq!(decode_request(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_description_round_trips_and_other_texts_are_none() {
        let d = Description {
            protocol: PROTOCOL,
            program: "bb-zstd".into(),
            labels: vec!["bb.zstd.compress (threads=1)".into(), "bb.zstd.x".into()],
        };
        assert_eq!(Description::parse(&d.text()), Ok(d.clone()));
        // Nothing (a build from before descriptions), or another program's output.
        assert_eq!(Description::parse(""), Err(None));
        assert_eq!(Description::parse("usage: ls [FILE]\n"), Err(None));
        assert!(matches!(
            Description::parse("boardbench-fork x\nend\n"),
            Err(Some(_))
        ));
        assert!(matches!(
            Description::parse("boardbench-fork 2\nbench a\n"),
            Err(Some(_))
        ));
        // A later version is read as far as its version, for the refusal to name it.
        let later = Description::parse("boardbench-fork 9\nshape x\nend\n").unwrap();
        assert_eq!(later.protocol, 9);
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(decode("score x").is_err());
        assert!(decode("cpu 1 2").is_err());
        assert!(decode("hist 1 2 99999:1").is_err());
        assert!(decode("ihist 1").is_err());
        assert!(decode("what 1").is_err());
        assert!(decode("pair 0/0").is_err());
    }
}
