//! `--against PATH`: another build of the same binary, measured fork by fork in pairs with
//! this one, in ABBA order (docs/ab.md). Before anything runs, the other build is checked: a file that
//! this machine executes (through the qemu-user of its architecture where the kernel
//! cannot), that speaks this fork protocol, is the same measurement, and has this run's
//! rows; rows it lacks run on this build alone, named once. A refusal is one line that
//! names the flag, and exit 2.

use super::fork::{describe_command, spawn, Description, Launcher, Purpose, PROTOCOL};
use crate::model::result::Build;
use crate::util::error::{Error, Result};
use crate::util::format::printable;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long the other build has to describe itself: qemu-user starts slowly.
const DESCRIBE_DEADLINE: Duration = Duration::from_secs(30);
/// The most of its description read, and of its complaint.
const DESCRIPTION_LIMIT: u64 = 1 << 20;
const COMPLAINT_LIMIT: u64 = 64 << 10;
/// The largest file taken for a build: hashing reads it whole.
const LARGEST_BUILD: u64 = 256 << 20;

/// The other build of an A/B run, checked, and which of this run's rows it has.
pub(crate) struct Against {
    pub launcher: Launcher,
    /// `--against`'s value as given, for messages and reports.
    pub shown: String,
    pub this: Build,
    pub other: Build,
    /// For each of this run's benchmarks, the other build's index of the same row.
    pub rows: Vec<Option<usize>>,
    /// Whether this build runs first in a benchmark's odd pairs (the seed's choice); the
    /// even pairs run the other way round.
    pub this_first: bool,
}

impl Against {
    /// Checks `path` as the build to run against, for a run of `labels` (this build's
    /// benchmarks, in order) whose arguments, `--against` left out, are `args`.
    pub fn check(
        path: &Path,
        args: Vec<OsString>,
        labels: &[String],
        seed: u64,
    ) -> Result<Against> {
        let shown = printable(&path.to_string_lossy());
        let refuse = |why: String| Error::usage(format!("--against {shown}: {why}"));
        let meta = std::fs::metadata(path).map_err(|e| refuse(not_found(&e)))?;
        use std::os::unix::fs::PermissionsExt;
        if !meta.is_file() {
            return Err(refuse(
                "not a file (expected another build of this binary)".into(),
            ));
        }
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(refuse("not executable (chmod +x it)".into()));
        }
        if meta.len() > LARGEST_BUILD {
            return Err(refuse(format!(
                "{} MiB, larger than any build (at most {} MiB)",
                meta.len() >> 20,
                LARGEST_BUILD >> 20
            )));
        }
        // A relative path stays one the forks find from any directory they run in.
        let exe = std::fs::canonicalize(path).map_err(|e| refuse(not_found(&e)))?;
        // Opened once: what is hashed is what every copy executes.
        let mut file = std::fs::File::open(&exe).map_err(|e| refuse(not_found(&e)))?;
        let sha1 = sha1_of(&mut file, &exe)?;
        let launcher = Launcher {
            runner: runner(&exe).map_err(refuse)?,
            file: Some(std::sync::Arc::new(file.into())),
            exe,
            args,
        };
        // Its rows with this run's flags tell who it is; where they give none, it is asked
        // with no flags (bb-ipc refuses bb-zstd's). Asked bare first, bb-seek would read
        // its default source, S3 where BUCKET is set, which this run's may not touch.
        let description = describe(&launcher, &[]);
        let identity = match &description {
            Ok(d) if !d.labels.is_empty() => d.clone(),
            _ => {
                let bare = Launcher {
                    args: vec![],
                    ..launcher.clone()
                };
                describe(&bare, &[]).map_err(&refuse)?
            }
        };
        let program = crate::util::terminal::program_name();
        if identity.labels.is_empty() {
            return Err(refuse(format!(
                "it describes no rows ({} has none to pair with this run's)",
                printable(&identity.program)
            )));
        }
        if family(&identity.labels) != family(labels) {
            return Err(refuse(format!(
                "it is {}, not {program}: --against takes another build of the same binary",
                printable(&identity.program)
            )));
        }
        let description = description.map_err(refuse)?;
        let this_exe = std::env::current_exe()
            .map_err(|e| Error::io("finding this binary to name its build", e))?;
        let mut rng = crate::util::rng::Rng::new(seed ^ 0xab_ab);
        Ok(Against {
            rows: rows(labels, &description.labels),
            this: Build {
                path: printable(&this_exe.to_string_lossy()),
                sha1: sha1_of_path(&this_exe)?,
            },
            other: Build {
                path: shown.clone(),
                sha1,
            },
            launcher,
            shown,
            this_first: rng.below(2) == 0,
        })
    }

    /// After a prelude: the rows again, the other build's benchmarks rebuilt from the
    /// same `values`, as its forks will be.
    pub fn rematch(&mut self, labels: &[String], values: &[f64]) -> Result<()> {
        let description = describe(&self.launcher, values)
            .map_err(|why| Error::failed(format!("--against {}: {why}", self.shown)))?;
        self.rows = rows(labels, &description.labels);
        Ok(())
    }

    /// The labels among `labels` the other build lacks: they run on this build alone.
    pub fn missing<'a>(&self, labels: &'a [String]) -> Vec<&'a str> {
        labels
            .iter()
            .zip(&self.rows)
            .filter(|(_, row)| row.is_none())
            .map(|(l, _)| l.as_str())
            .collect()
    }

    /// Whether this build runs first in pair `pair` (1-based): ABBA, the first side the
    /// seed's.
    pub fn this_runs_first(&self, pair: u32) -> bool {
        (pair % 2 == 1) == self.this_first
    }
}

/// The arguments of this run for the other build's copies: this process's, with
/// `--against` and its value left out.
pub(crate) fn other_args() -> Vec<OsString> {
    let mut args = Vec::new();
    let mut skip = false;
    for arg in std::env::args_os().skip(1) {
        match () {
            _ if skip => skip = false,
            _ if arg == "--against" => skip = true,
            _ => args.push(arg),
        }
    }
    args
}

fn not_found(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        _ => e.to_string(),
    }
}

/// The runner the other build needs: none where the kernel executes it, else the
/// qemu-user of its architecture on PATH, else `BB_FORK_RUNNER`'s; an error that offers
/// both where there is neither.
fn runner(exe: &Path) -> std::result::Result<Option<PathBuf>, String> {
    use crate::harness::exec::{choose_runner, RUNNER_ENV};
    let path = std::env::var_os("PATH");
    match choose_runner(exe, None, path.as_deref()) {
        Ok(runner) => Ok(runner),
        Err(why) => match std::env::var_os(RUNNER_ENV).filter(|r| !r.is_empty()) {
            Some(runner) => Ok(Some(PathBuf::from(runner))),
            None => Err(format!(
                "this machine cannot execute it (exec format error: another architecture?); {}",
                why.split_once(": ").map_or(why.as_str(), |(_, fix)| fix)
            )),
        },
    }
}

/// The other build's description, asked for with `values`; the reason in words where
/// it gives none that this build can use.
fn describe(launcher: &Launcher, values: &[f64]) -> std::result::Result<Description, String> {
    let mut command = launcher.command();
    describe_command(&mut command, values);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let (mut child, hook) = spawn(
        &mut command,
        &launcher.exe,
        "the --against build",
        Purpose::Other,
        launcher.exec_file().as_deref(),
    )
    .map_err(|e| e.to_string())?;
    // Its output is read until the pipes' end, and that end is bounded too: a process it
    // left behind may hold them open.
    let deadline = Instant::now() + DESCRIBE_DEADLINE;
    let (sent, texts) = std::sync::mpsc::channel();
    let read = |side: usize, pipe: Option<Box<dyn Read + Send>>, limit: u64| {
        let sent = sent.clone();
        crate::util::thread::spawn("--against's output", move || {
            let mut text = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(limit).read_to_end(&mut text);
            }
            let _ = sent.send((side, String::from_utf8_lossy(&text).into_owned()));
        })
    };
    let (out, err) = (child.stdout.take(), child.stderr.take());
    // One byte past the limit tells a description too long from one that does not end.
    let readers = read(0, out.map(|p| Box::new(p) as _), DESCRIPTION_LIMIT + 1)
        .and_then(|_| read(1, err.map(|p| Box::new(p) as _), COMPLAINT_LIMIT));
    let status = match readers {
        Ok(_) => crate::system::exit::wait_until(&mut child, deadline, Duration::from_millis(2)),
        Err(_) => None,
    };
    // Once it has exited (or run out of time), whatever its process group (its own,
    // `Purpose::Other`) still holds goes: a process it left behind may hold the pipes.
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    let mut output = [None, None];
    while status.is_some() && output.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(Instant::now());
        match texts.recv_timeout(left) {
            Ok((side, text)) => output[side] = Some(text),
            Err(_) => break,
        }
    }
    crate::harness::watchdog::remove_exit_hook(hook);
    if let Err(e) = readers {
        return Err(e.to_string());
    }
    let (Some(status), [Some(stdout), Some(stderr)]) = (status, output) else {
        return Err(format!(
            "it did not describe itself within {} s (is it a boardbench binary?)",
            DESCRIBE_DEADLINE.as_secs()
        ));
    };
    // Before its status: one cut short by the limit may have died of SIGPIPE.
    if stdout.len() as u64 > DESCRIPTION_LIMIT {
        return Err(format!(
            "its self-description is over {} MiB",
            DESCRIPTION_LIMIT >> 20
        ));
    }
    let complaint = stderr.lines().find(|l| !l.trim().is_empty());
    if !status.success() {
        return Err(match complaint {
            Some(line) => format!("it refused this run's flags: {}", printable(line)),
            None => format!("it failed when asked to describe itself ({status})"),
        });
    }
    match Description::parse(&stdout) {
        Ok(d) if d.protocol == PROTOCOL => Ok(d),
        Ok(d) => Err(format!(
            "it speaks fork protocol version {}; this build needs version {PROTOCOL}",
            d.protocol
        )),
        Err(None) => Err(format!(
            "it speaks no fork protocol version; this build needs version {PROTOCOL} (a boardbench build from before --against, or another program)"
        )),
        Err(Some(what)) => Err(format!("its self-description {}", printable(&what))),
    }
}

/// The measurement a suite's labels belong to: their names' first two parts
/// (`bb.zstd`), or nothing for none.
fn family(labels: &[String]) -> Option<String> {
    let name = labels.first()?.split(' ').next()?;
    Some(name.split('.').take(2).collect::<Vec<_>>().join("."))
}

/// For each of `ours`, the index of the same label among `theirs`.
fn rows(ours: &[String], theirs: &[String]) -> Vec<Option<usize>> {
    ours.iter()
        .map(|label| theirs.iter().position(|t| t == label))
        .collect()
}

/// The hex SHA-1 of the file at `path`.
fn sha1_of_path(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path)
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    sha1_of(&mut file, path)
}

/// The hex SHA-1 of `file`, from where it stands to its end; `path` names it.
fn sha1_of(file: &mut std::fs::File, path: &Path) -> Result<String> {
    let mut sha = crate::util::digest::Sha1::default();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => sha.update(&buf[..n]),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        }
    }
    Ok(crate::util::digest::hex(&sha.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_by_label_and_families_by_name() {
        let ours: Vec<String> = [
            "bb.zstd.compress (threads=1)",
            "bb.zstd.compress (threads=4)",
        ]
        .map(String::from)
        .to_vec();
        let theirs: Vec<String> = [
            "bb.zstd.decompress (threads=1)",
            "bb.zstd.compress (threads=1)",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(rows(&ours, &theirs), [Some(1), None]);
        assert_eq!(family(&ours).as_deref(), Some("bb.zstd"));
        assert_ne!(family(&ours), family(&["bb.ipc.remote".to_string()]));
        assert_eq!(family(&[]), None);
    }

    #[test]
    fn the_pairs_alternate_from_the_seeds_side() {
        let against = |this_first| Against {
            launcher: Launcher {
                exe: "/x".into(),
                file: None,
                runner: None,
                args: vec![],
            },
            shown: "x".into(),
            this: Build {
                path: "a".into(),
                sha1: "1".into(),
            },
            other: Build {
                path: "b".into(),
                sha1: "2".into(),
            },
            rows: vec![],
            this_first,
        };
        let order = |a: &Against| (1..=4).map(|p| a.this_runs_first(p)).collect::<Vec<_>>();
        assert_eq!(order(&against(true)), [true, false, true, false]);
        assert_eq!(order(&against(false)), [false, true, false, true]);
    }

    #[test]
    fn a_builds_hash_is_its_contents() {
        let dir = crate::util::temp::TempDir::new("against");
        let file = dir.join("b");
        std::fs::write(&file, b"abc").unwrap();
        assert_eq!(
            sha1_of_path(&file).unwrap(),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }
}
