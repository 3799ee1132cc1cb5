//! Executing a copy of this binary where the kernel may not be able to: under qemu-user
//! without binfmt_misc (a board's binary tried on a laptop), execve(2) of the binary fails
//! with ENOEXEC, and glibc's execvp, which `Command` uses, then hands the file to /bin/sh
//! as a script ("Syntax error: word unexpected"). Here the exec is made directly, so the
//! failure is seen as what it is; the runner (`BB_FORK_RUNNER`, or the qemu-user for the
//! binary's architecture found on PATH) is chosen once by trying; and an exec format
//! error is explained.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Names a program to run copies of this binary with, as `RUNNER EXE ARGS...`.
pub const RUNNER_ENV: &str = "BB_FORK_RUNNER";
/// Set in the copy started only to see whether the kernel executes the binary: it exits
/// at once ([`exit_if_probe`]).
const PROBE_ENV: &str = "BB_EXEC_PROBE";

/// In the copy started by the probe: exits at once. Call it first thing in `main`.
pub fn exit_if_probe() {
    if std::env::var_os(PROBE_ENV).is_some() {
        std::process::exit(0);
    }
}

/// The runner for copies of `exe`: `BB_FORK_RUNNER` where set; none where the kernel
/// executes `exe` itself; where it cannot (ENOEXEC), the qemu-user for its architecture
/// found on `path`; an error naming the fix when there is none.
pub fn choose_runner(
    exe: &Path,
    runner_env: Option<OsString>,
    path: Option<&OsStr>,
) -> Result<Option<PathBuf>, String> {
    if let Some(runner) = runner_env.filter(|r| !r.is_empty()) {
        return Ok(Some(PathBuf::from(runner)));
    }
    match probe(exe) {
        Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => {
            let names = qemu_names(exe);
            names
                .iter()
                .find_map(|name| find_on_path(OsStr::new(name), path))
                .map(Some)
                .ok_or_else(|| cannot_reexecute(exe))
        }
        // Executed, or failed otherwise: the spawn itself will say how.
        _ => Ok(None),
    }
}

/// The message for a copy of `exe` that the kernel refuses to execute.
pub fn cannot_reexecute(exe: &Path) -> String {
    let qemu = qemu_names(exe)
        .first()
        .map_or("qemu-<arch>-static", |n| n.as_str())
        .to_string();
    format!(
        "cannot re-execute {} (exec format error): under qemu-user without binfmt_misc, set {RUNNER_ENV}={qemu}",
        exe.display()
    )
}

/// Whether the kernel executes `exe` itself: a copy is started with the probe variable
/// set, and killed at once if it did start.
fn probe(exe: &Path) -> std::io::Result<()> {
    let mut command = Command::new(exe);
    command
        .env(PROBE_ENV, "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    exec_directly(&mut command, None)?;
    let (mut child, hook) =
        crate::system::exit::spawn_with_exit_hook(&mut command, crate::system::exit::Ending::Kill)?;
    let _ = child.kill();
    let _ = child.wait();
    crate::system::exit::remove_exit_hook(hook);
    Ok(())
}

/// The qemu-user programs that run `exe`, from the machine in its ELF header; none for a
/// file that is not ELF or an architecture not known here.
fn qemu_names(exe: &Path) -> Vec<String> {
    let mut header = [0u8; 20];
    let read = std::fs::File::open(exe).and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut header)
    });
    if read.is_err() || &header[..4] != b"\x7fELF" {
        return Vec::new();
    }
    let bytes = [header[18], header[19]];
    // EI_DATA: 1 little-endian, 2 big-endian.
    let machine = if header[5] == 2 {
        u16::from_be_bytes(bytes)
    } else {
        u16::from_le_bytes(bytes)
    };
    let arch = match (machine, header[4]) {
        (3, _) => "i386",
        (40, _) => "arm",
        (62, _) => "x86_64",
        (183, _) => "aarch64",
        (243, 2) => "riscv64",
        _ => return Vec::new(),
    };
    vec![format!("qemu-{arch}-static"), format!("qemu-{arch}")]
}

/// `name` as execvp would find it: itself if it has a slash, else the first executable
/// file of that name in the directories of `path`.
fn find_on_path(name: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if name.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(name));
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// What the child execs, built before the fork, as nothing may be allocated after it.
struct Exec {
    program: CString,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    _strings: Vec<CString>,
}

impl Exec {
    /// Replaces this process with the program; returns only on failure, with the error.
    ///
    /// # Safety
    /// Meant for between fork and exec: it allocates nothing and takes no lock.
    unsafe fn run(&self) -> std::io::Error {
        // SAFETY: the arrays are NUL-terminated and point into strings this value owns.
        unsafe {
            libc::execve(
                self.program.as_ptr(),
                self.argv.as_ptr(),
                self.envp.as_ptr(),
            )
        };
        std::io::Error::last_os_error()
    }
}

// SAFETY: the pointers point into the CStrings of `_strings` (heap buffers that never move
// or change while this value lives) and are only read, by execve.
unsafe impl Send for Exec {}
// SAFETY: as for Send: nothing is ever written through the pointers.
unsafe impl Sync for Exec {}

/// Makes `command` exec its program with execve(2) itself, as the last step before the
/// execvp that `Command` would make, so that a file the kernel refuses fails the spawn
/// with ENOEXEC instead of running as a shell script. The program is looked up on PATH
/// as execvp would, unless `file` names what to execute in its place (the program then
/// only `argv[0]`). Call it last, once arguments and environment are set.
pub fn exec_directly(command: &mut Command, file: Option<&Path>) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    let invalid = |what: &str| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("a NUL byte in {what}"),
        )
    };
    let path = std::env::var_os("PATH");
    let found = match file {
        Some(file) => Some(file.to_path_buf()),
        None => find_on_path(command.get_program(), path.as_deref()),
    };
    let program = found.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{} is not on PATH", command.get_program().to_string_lossy()),
        )
    })?;
    let program =
        CString::new(program.as_os_str().as_bytes()).map_err(|_| invalid("the program"))?;
    let mut env: std::collections::BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (key, value) in command.get_envs() {
        match value {
            Some(v) => env.insert(key.to_owned(), v.to_owned()),
            None => env.remove(key),
        };
    }
    let args = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| CString::new(a.as_bytes()).map_err(|_| invalid("an argument")))
        .collect::<std::io::Result<Vec<_>>>()?;
    let vars = env
        .iter()
        .map(|(k, v)| {
            let pair = [k.as_bytes(), b"=", v.as_bytes()].concat();
            CString::new(pair).map_err(|_| invalid("the environment"))
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    let pointers = |strings: &[CString]| {
        let mut p: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        p.push(std::ptr::null());
        p
    };
    let exec = Exec {
        program,
        argv: pointers(&args),
        envp: pointers(&vars),
        _strings: args.into_iter().chain(vars).collect(),
    };
    // SAFETY: the closure runs between fork and exec, where `run` may be called: it only
    // calls execve(2), which is async-signal-safe, and reads errno.
    unsafe {
        command.pre_exec(move || Err(exec.run()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::temp::TempDir;

    /// A directory with an ELF header for `machine` (a binary the kernel here refuses)
    /// and, if asked, a stand-in for its qemu.
    fn foreign(name: &str, machine: u16, qemu: Option<&str>) -> (TempDir, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::new(&format!("exec-{name}"));
        let mut header = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
        header.resize(16, 0);
        header.extend_from_slice(&2u16.to_le_bytes()); // e_type: an executable
        header.extend_from_slice(&machine.to_le_bytes());
        header.resize(64, 0);
        let exe = dir.join("bb-foreign");
        std::fs::write(&exe, header).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        if let Some(q) = qemu {
            let runner = dir.join(q);
            std::fs::write(&runner, "#!/bin/sh\nexit 0\n").unwrap();
            std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        (dir, exe)
    }

    /// Whether binfmt_misc would hand `name`'s binaries to a qemu here anyway.
    fn binfmt_registered(arch: &str) -> bool {
        std::path::Path::new(&format!("/proc/sys/fs/binfmt_misc/qemu-{arch}")).exists()
    }

    #[test]
    fn the_runner_is_the_variable_or_nothing_for_a_native_binary() {
        let native = Path::new("/bin/true");
        assert_eq!(choose_runner(native, None, None), Ok(None));
        assert_eq!(
            choose_runner(native, Some("qemu-arm-static".into()), None),
            Ok(Some(PathBuf::from("qemu-arm-static")))
        );
    }

    #[test]
    fn a_foreign_binary_gets_the_qemu_for_its_machine_found_on_path() {
        if binfmt_registered("aarch64") {
            eprintln!("binfmt_misc runs aarch64 binaries here: nothing to choose");
            return;
        }
        let (dir, exe) = foreign("auto", 183, Some("qemu-aarch64-static"));
        let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
        assert_eq!(
            choose_runner(&exe, None, Some(&path)),
            Ok(Some(dir.join("qemu-aarch64-static")))
        );
        // The variable still wins.
        assert_eq!(
            choose_runner(&exe, Some("my-runner".into()), Some(&path)),
            Ok(Some(PathBuf::from("my-runner")))
        );
    }

    #[test]
    fn a_foreign_binary_without_its_qemu_gets_the_fix_named() {
        if binfmt_registered("arm") {
            eprintln!("binfmt_misc runs arm binaries here: nothing to explain");
            return;
        }
        let (dir, exe) = foreign("none", 40, None);
        let error = choose_runner(&exe, None, Some(dir.path().as_os_str())).unwrap_err();
        assert_eq!(
            error,
            format!(
                "cannot re-execute {} (exec format error): under qemu-user without binfmt_misc, set BB_FORK_RUNNER=qemu-arm-static",
                exe.display()
            )
        );
    }

    #[test]
    fn a_direct_exec_reports_enoexec_instead_of_running_the_file_as_a_script() {
        let (_dir, exe) = foreign("direct", 0xbeef, None);
        let mut command = Command::new(&exe);
        exec_directly(&mut command, None).unwrap();
        let error = command.spawn().unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENOEXEC), "{error}");
        // And a native program runs with the arguments and environment it was given.
        let mut echo = Command::new("sh");
        echo.args(["-c", "echo \"$0 $BB_EXEC_TEST\"", "zero"])
            .env("BB_EXEC_TEST", "set")
            .stdout(std::process::Stdio::piped());
        exec_directly(&mut echo, None).unwrap();
        let out = echo.output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "zero set\n");
    }
}
