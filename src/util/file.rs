//! Output files: a path given with `--output` (or bb-compare's `--svg`) is checked before
//! anything runs, and written after it without ever leaving it half-written or replacing
//! what is not a regular file: a regular file is replaced by a renamed temporary file, a
//! symlink is followed and kept, a character device or FIFO (`/dev/stdout`, a pipe) is
//! written in place. Small inputs (settings, certificates, results) are read through
//! [`read_regular`], bounded.

use crate::util::error::{Error, Result};
use std::fs;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How a path is written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Destination {
    /// A regular file or nothing yet: a temporary file in the same directory, renamed over
    /// this path (the path with symlinks followed, so that a symlink stays one).
    Replace(PathBuf),
    /// A character device or FIFO: opened and written in place.
    InPlace,
    /// This process's own stdout or stderr (`/dev/stdout`, or the file stdout is
    /// redirected to): written through that stream, at its place in it.
    Stdout,
    Stderr,
}

/// Checks that `path`, given with `flag`, can be written: an error naming the flag and the
/// path (bad input, exit 2) for a directory, a missing or unwritable parent directory, or
/// something that is neither a file, a character device nor a FIFO.
pub fn check_output(flag: &str, path: &Path) -> Result<()> {
    destination(path)
        .map(drop)
        .map_err(|why| Error::usage(format!("{flag} {}: {why}", path.display())))
}

/// [`check_output`] as a flag's value parser: argh names the flag and the value.
pub fn parse_output(s: &str) -> std::result::Result<PathBuf, String> {
    let path = PathBuf::from(s);
    destination(&path)?;
    Ok(path)
}

/// Whether `path` is this process's own stdout, so that a report written there is the
/// only thing to print.
pub fn is_stdout(path: &Path) -> bool {
    destination(path) == Ok(Destination::Stdout)
}

/// Writes `bytes` to `path` so that it is never half-written and nothing but a regular
/// file is ever replaced: a regular file (or a new one) through a temporary file beside
/// it, synced, renamed over it and the directory synced (a board may lose power); a
/// symlink's target the same way, leaving the symlink; a character device, a FIFO, or
/// this process's stdout or stderr in place. A failure names the path (exit 1).
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    write_output_with(path, &mut |w| w.write_all(bytes))
}

/// [`write_output`] for contents too large to hold: `write` streams them into the writer
/// it is given, in pieces, as many times as it is called (once).
pub fn write_output_with(
    path: &Path,
    write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    let failed = |why: String| Error::failed(format!("writing {}: {why}", path.display()));
    let written = match destination(path).map_err(failed)? {
        Destination::Replace(target) => replace(&target, write),
        Destination::InPlace => fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| write(&mut f)),
        Destination::Stdout => {
            let mut out = io::stdout().lock();
            quiet_on_broken_pipe(write(&mut out).and_then(|_| out.flush()))
        }
        Destination::Stderr => write(&mut io::stderr().lock()),
    };
    written.map_err(|e| failed(e.to_string()))
}

/// The bytes of `path`, an input that must be a regular file of at most `max_bytes`: a
/// FIFO would block, a device (`/dev/zero`) never ends, and a file larger than its kind
/// ever is is a mistake rather than input. `name` names it in each error (its path, and
/// the flag or variable it came from); `limit` says what the bound is ("--max-input 64
/// MiB"). Every error is bad input (exit 2), naming the file; an I/O error keeps its
/// cause, so that a caller can tell a missing file by [`Error::io_kind`].
pub fn read_regular(path: &Path, name: &str, max_bytes: u64, limit: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    // Opened without blocking, so that a FIFO is refused rather than waited on; what is
    // open is what is checked, not a path that might change in between.
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(format!("reading {name}"), e).as_usage())?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(format!("reading {name}"), e).as_usage())?;
    if !meta.is_file() {
        let what = match meta.file_type() {
            t if t.is_dir() => "a directory",
            t if t.is_fifo() => "a FIFO",
            t if t.is_char_device() || t.is_block_device() => "a device",
            t if t.is_socket() => "a socket",
            _ => "not a file",
        };
        return Err(Error::usage(format!("{name}: {what}, not a regular file")));
    }
    let too_large = || Error::usage(format!("{name}: larger than {limit}"));
    if meta.len() > max_bytes {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("reading {name}"), e).as_usage())?;
    if bytes.len() as u64 > max_bytes {
        // It grew while it was read.
        return Err(too_large());
    }
    Ok(bytes)
}

/// Writes to stdout; a closed pipe (`| head`) ends the process quietly.
pub(crate) fn write_stdout(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    quiet_on_broken_pipe(out.write_all(bytes).and_then(|_| out.flush()))
}

fn quiet_on_broken_pipe(written: io::Result<()>) -> io::Result<()> {
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::exit(0),
        r => r,
    }
}

/// Decides how `path` is written, or says in a few words why it cannot be.
fn destination(path: &Path) -> std::result::Result<Destination, String> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.is_empty() {
        return Err("an empty path".into());
    }
    match fs::metadata(path) {
        Ok(m) => {
            if let Some(own) = own_stream(&m) {
                return Ok(own);
            }
            let t = m.file_type();
            if t.is_dir() {
                return Err("is a directory".into());
            }
            if t.is_char_device() || t.is_fifo() {
                writable(path).map_err(|e| format!("cannot write to it: {e}"))?;
                return Ok(Destination::InPlace);
            }
            if !t.is_file() {
                let what = if t.is_block_device() {
                    "a block device"
                } else if t.is_socket() {
                    "a socket"
                } else {
                    "not a file"
                };
                return Err(format!(
                    "is {what}: a report goes to a file, a character device or a FIFO"
                ));
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.to_string()),
    }
    if bytes.ends_with(b"/") {
        return Err("names a directory (it ends in /)".into());
    }
    let target = follow_symlinks(path).map_err(|e| e.to_string())?;
    if target.file_name().is_none() {
        return Err(format!("{} is not a file name", target.display()));
    }
    let dir = parent(&target);
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(format!("{} is not a directory", dir.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!("the directory {} does not exist", dir.display()))
        }
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    }
    writable(dir).map_err(|e| format!("cannot create files in {}: {e}", dir.display()))?;
    Ok(Destination::Replace(target))
}

/// Whether this process may write to `path` (for a directory: create files in it).
fn writable(path: &Path) -> io::Result<()> {
    use nix::unistd::AccessFlags;
    nix::unistd::access(path, AccessFlags::W_OK).map_err(io::Error::from)
}

/// Stdout or stderr when the file `m` describes is the one that stream writes to.
fn own_stream(m: &fs::Metadata) -> Option<Destination> {
    use std::os::fd::{AsFd, BorrowedFd};
    let same = |fd: BorrowedFd| {
        fd.try_clone_to_owned()
            .map(fs::File::from)
            .and_then(|f| f.metadata())
            .is_ok_and(|s| s.dev() == m.dev() && s.ino() == m.ino())
    };
    if same(io::stdout().as_fd()) {
        Some(Destination::Stdout)
    } else if same(io::stderr().as_fd()) {
        Some(Destination::Stderr)
    } else {
        None
    }
}

/// The directory a file `path` names lies in (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `path` with the symlinks of its last component followed, as far as they lead (to a file
/// that may not exist yet): the file to replace, so that the symlink itself stays.
fn follow_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    // Linux's own limit (MAXSYMLINKS) on the links one lookup follows.
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&p)?;
                p = parent(&p).join(target);
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::from(nix::errno::Errno::ELOOP))
}

/// The temporary file that process `pid` writes `target` through: `.NAME.tmp.PID`
/// beside it.
pub fn temp_path(target: &Path, pid: u32) -> PathBuf {
    let name = target.file_name().unwrap_or(target.as_os_str());
    parent(target).join(format!(".{}.tmp.{pid}", name.to_string_lossy()))
}

/// The file and the process of a temporary file [`temp_path`] names, if `name` is one.
pub fn temp_file_of(name: &str) -> Option<(&str, u32)> {
    let (file, pid) = name.strip_prefix('.')?.rsplit_once(".tmp.")?;
    let pid = pid.parse().ok().filter(|&p| p > 0)?;
    (!file.is_empty()).then_some((file, pid))
}

/// Writes the contents `write` makes to a temporary file beside `target`, syncs it, renames it over `target`
/// and syncs the directory, so that after a crash or a power cut `target` is the old file
/// or the whole new one. The new file keeps the old one's owner (where this process may
/// give it) and permissions; a file that is new gets the umask's.
fn replace(
    target: &Path,
    write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = parent(target);
    let tmp = temp_path(target, std::process::id());
    let old = fs::metadata(target).ok().filter(fs::Metadata::is_file);
    // A temporary file a killed run of the same pid left behind, and those of this
    // target that runs killed outright (SIGKILL) left.
    let _ = fs::remove_file(&tmp);
    remove_stale_temp_files(target);
    let pending = Pending::register(&tmp);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(&tmp)?;
    let kept = match &old {
        Some(m) => {
            let _ = std::os::unix::fs::fchown(&file, Some(m.uid()), Some(m.gid()));
            file.set_permissions(fs::Permissions::from_mode(m.permissions().mode() & 0o7777))
        }
        None => Ok(()),
    };
    let renamed = kept
        .and_then(|_| write(&mut file))
        .and_then(|_| stall_for_tests())
        .and_then(|_| file.sync_all())
        .and_then(|_| fs::rename(&tmp, target));
    drop(pending);
    if let Err(e) = renamed {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    match fs::File::open(dir).and_then(|d| d.sync_all()) {
        // A file system that cannot sync a directory has nothing more to make durable.
        Err(e) if e.raw_os_error() == Some(nix::errno::Errno::EINVAL as i32) => Ok(()),
        r => r,
    }
}

/// The temporary files being written now, which [`remove_pending_temp_files`] removes
/// when a signal or a timeout ends the process (`system::exit::exit_now`).
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary file's place in [`PENDING`], for as long as it is written.
struct Pending(PathBuf);

impl Pending {
    /// Registered before the file is made: an exit after that finds it listed.
    fn register(tmp: &Path) -> Pending {
        lock_pending().push(tmp.to_path_buf());
        Pending(tmp.to_path_buf())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut pending = lock_pending();
        if let Some(i) = pending.iter().position(|p| *p == self.0) {
            pending.swap_remove(i);
        }
    }
}

fn lock_pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the temporary files being written (an output replaced, a generated object),
/// so that an exit in the middle of a write or an fsync leaves none: the exit's clean-up
/// calls it. A write that goes on meanwhile fails its rename, and the process is ending.
pub fn remove_pending_temp_files() {
    for tmp in lock_pending().drain(..) {
        let _ = fs::remove_file(tmp);
    }
}

/// Removes the temporary files of `target` (`.NAME.tmp.PID`) whose process is gone:
/// what a run killed outright left (SIGKILL gives no time to clean up). Only regular
/// files; a live process's is its own.
fn remove_stale_temp_files(target: &Path) {
    let Some(name) = target.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let Ok(entries) = fs::read_dir(parent(target)) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some((file, pid)) = file_name.to_str().and_then(temp_file_of) else {
            continue;
        };
        if file == name && entry.file_type().is_ok_and(|t| t.is_file()) && pid_gone(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` is gone (ESRCH), so that what it left (a socket directory, a
/// temporary file) is nobody's; a live one, or one not ours to signal (EPERM), is not.
pub fn pid_gone(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    pid > 0
        && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
            == Err(nix::errno::Errno::ESRCH)
}

/// With the `fault-injection` feature, `BB_FAULT_OUTPUT_STALL=SECONDS` holds every
/// replaced file between its write and its fsync, so that a test can signal a process
/// in the middle of it.
fn stall_for_tests() -> io::Result<()> {
    #[cfg(feature = "fault-injection")]
    if let Some(s) = std::env::var("BB_FAULT_OUTPUT_STALL")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_secs_f64(s.clamp(0.0, 60.0)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::temp::TempDir;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_no_temporary_is_left() {
        let dir = TempDir::new("regular");
        let path = dir.join("out.json");
        write_output(&path, b"old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        // Root may give the new file the old one's owner (nobody's, here).
        let root = fs::metadata(dir.path()).unwrap().uid() == 0;
        if root {
            std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        }
        let old_inode = fs::metadata(&path).unwrap().ino();
        write_output(&path, b"new contents").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new contents");
        let m = fs::metadata(&path).unwrap();
        assert_ne!(m.ino(), old_inode, "renamed over, not rewritten in place");
        assert_eq!(m.permissions().mode() & 0o777, 0o640, "permissions kept");
        if root {
            assert_eq!((m.uid(), m.gid()), (65534, 65534), "owner kept");
        }
        assert_eq!(names(dir.path()), ["out.json"]);
    }

    #[test]
    fn a_symlink_is_followed_and_kept() {
        let dir = TempDir::new("symlink");
        std::os::unix::fs::symlink("real.json", dir.join("link.json")).unwrap();
        // A dangling link: its target is created.
        write_output(&dir.join("link.json"), b"first").unwrap();
        assert_eq!(fs::read(dir.join("real.json")).unwrap(), b"first");
        // A link to an existing file, through a second link.
        std::os::unix::fs::symlink("link.json", dir.join("link2.json")).unwrap();
        write_output(&dir.join("link2.json"), b"second").unwrap();
        assert_eq!(fs::read(dir.join("real.json")).unwrap(), b"second");
        for link in ["link.json", "link2.json"] {
            let m = fs::symlink_metadata(dir.join(link)).unwrap();
            assert!(m.file_type().is_symlink(), "{link} is still a symlink");
        }
        assert_eq!(names(dir.path()), ["link.json", "link2.json", "real.json"]);
    }

    #[test]
    fn temporary_files_are_named_and_recognised() {
        let tmp = temp_path(Path::new("d/random-1gb.txt"), 42);
        assert_eq!(tmp, Path::new("d/.random-1gb.txt.tmp.42"));
        let name = tmp.file_name().unwrap().to_str().unwrap();
        assert_eq!(temp_file_of(name), Some(("random-1gb.txt", 42)));
        for other in [
            "random-1gb.txt",
            ".x.tmp.",
            ".x.tmp.0",
            ".x.tmp.1a",
            "..tmp.5",
            "x.tmp.5",
        ] {
            assert_eq!(temp_file_of(other), None, "{other}");
        }
    }

    #[test]
    fn inputs_are_regular_files_read_within_their_bound() {
        let dir = TempDir::new("read-regular");
        let file = dir.join("small");
        fs::write(&file, b"four").unwrap();
        let read = |path: &Path, max| read_regular(path, "THE_VAR x", max, "4 bytes");
        assert_eq!(read(&file, 4).unwrap(), b"four");
        let e = read(&file, 3).unwrap_err();
        assert_eq!(
            (e.exit_code(), e.to_string()),
            (2, "THE_VAR x: larger than 4 bytes".into())
        );
        let fifo = dir.join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        // Nobody writes to it: waiting on it would never end.
        for (path, what) in [(&fifo, "a FIFO"), (&PathBuf::from("/dev/zero"), "a device")] {
            let e = read(path, 4).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{e}");
            assert_eq!(
                e.to_string(),
                format!("THE_VAR x: {what}, not a regular file")
            );
        }
        assert!(read(dir.path(), 4)
            .unwrap_err()
            .to_string()
            .contains("a directory"));
        let e = read(&dir.join("missing"), 4).unwrap_err();
        assert_eq!(
            (e.io_kind(), e.exit_code()),
            (Some(io::ErrorKind::NotFound), 2)
        );
        assert!(e.to_string().starts_with("reading THE_VAR x: "), "{e}");
    }

    #[test]
    fn a_fifo_is_written_in_place() {
        let dir = TempDir::new("fifo");
        let fifo = dir.join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        write_output(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(names(dir.path()), ["pipe"]);
    }

    /// A character device that fails every write with ENOSPC: a node of /dev/full's
    /// numbers in `dir` where this process may make one, so that a writer that replaced
    /// devices could not break the machine's /dev/full, else /dev/full itself.
    fn full_device(dir: &Path) -> PathBuf {
        use nix::sys::stat::{makedev, mknod, Mode, SFlag};
        let node = dir.join("full");
        match mknod(
            &node,
            SFlag::S_IFCHR,
            Mode::from_bits_truncate(0o666),
            makedev(1, 7),
        ) {
            Ok(()) if fs::OpenOptions::new().write(true).open(&node).is_ok() => node,
            _ => PathBuf::from("/dev/full"),
        }
    }

    #[test]
    fn a_full_device_is_written_in_place_and_its_error_names_it() {
        let dir = TempDir::new("full");
        let full = full_device(dir.path());
        let err = write_output(&full, b"{}").unwrap_err();
        assert_eq!(err.exit_code(), 1);
        let message = err.to_string();
        assert!(message.contains(&full.display().to_string()), "{message}");
        assert!(message.contains("No space left on device"), "{message}");
        assert!(fs::metadata(&full).unwrap().file_type().is_char_device());
        assert_eq!(
            names(dir.path()).len(),
            usize::from(full.starts_with(dir.path()))
        );
    }

    #[test]
    fn directories_and_missing_directories_are_rejected_before_writing() {
        let dir = TempDir::new("reject");
        let missing = dir.join("missing/x.json");
        for (path, why) in [
            (dir.path().to_path_buf(), "is a directory"),
            (PathBuf::from("/"), "is a directory"),
            (missing.clone(), "does not exist"),
            (dir.join("new/"), "ends in /"),
        ] {
            let err = check_output("--output", &path).unwrap_err();
            let message = err.to_string();
            assert_eq!(err.exit_code(), 2, "{message}");
            assert!(
                message.starts_with(&format!("--output {}: ", path.display())),
                "{message}"
            );
            assert!(message.contains(why), "{message}");
            assert!(parse_output(path.to_str().unwrap()).is_err());
            let err = write_output(&path, b"x").unwrap_err();
            assert!(err.to_string().contains(why), "{err}");
        }
        let file = dir.join("file");
        fs::write(&file, "x").unwrap();
        let under_file = check_output("--svg", &file.join("x.svg")).unwrap_err();
        assert!(under_file.to_string().starts_with("--svg "), "{under_file}");
        assert!(fs::metadata(dir.join("missing")).is_err());
        check_output("--output", &dir.join("new.json")).unwrap();
        check_output("--output", Path::new("relative.json")).unwrap();
        assert_eq!(names(dir.path()), ["file"], "checking creates nothing");
    }
}
