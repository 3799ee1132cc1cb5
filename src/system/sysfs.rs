//! Reading /proc and /sys (or a made-up board's copy under `BB_SYSROOT`) within bounds:
//! whatever such a path turns out to be, a run neither blocks on it nor reads it without
//! end (regular files only, never blocking, at most [`MOST_READ`] bytes).

use std::path::{Path, PathBuf};

/// The most of a /proc or /sys file read: /proc/cpuinfo of a 256-core server is a few
/// hundred KiB.
const MOST_READ: u64 = 4 << 20;

/// A /proc or /sys file's text, read within bounds: a regular file (procfs and sysfs
/// files are; a FIFO would block and a device never end), opened without blocking, at
/// most [`MOST_READ`] bytes of it. None for anything else or any error.
pub fn read_file(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(MOST_READ).read_to_string(&mut text).ok()?;
    Some(text)
}

/// Where /proc and /sys are read from; `BB_SYSROOT` overrides `/` for tests (set and
/// empty is unset, as the AWS variables are).
pub fn sysroot() -> PathBuf {
    std::env::var_os("BB_SYSROOT")
        .filter(|root| !root.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

pub fn read(root: &Path, path: &str) -> Option<String> {
    let text = read_file(&root.join(path.trim_start_matches('/')))?;
    let text = text
        .trim_matches(|c: char| c.is_whitespace() || c == '\0')
        .to_string();
    (!text.is_empty()).then_some(text)
}

pub fn read_num(root: &Path, path: &str) -> Option<u64> {
    read(root, path)?.parse().ok()
}

/// A /proc/meminfo line's value in KiB (`MemTotal:  3884096 kB`).
pub fn meminfo_kib(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim().trim_end_matches("kB").trim().parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read_and_only_so_far() {
        let dir = crate::util::temp::TempDir::new("sysfs");
        let fifo = dir.join("cpuinfo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // A FIFO with no writer: refused at once, not waited on.
        let started = std::time::Instant::now();
        assert_eq!(read_file(&fifo), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(
            read_file(Path::new("/dev/zero")),
            None,
            "a device never ends"
        );
        assert_eq!(read_file(&dir), None, "a directory");
        let big = dir.join("big");
        std::fs::write(&big, "x".repeat(MOST_READ as usize + 10)).unwrap();
        assert_eq!(read_file(&big).unwrap().len(), MOST_READ as usize);
    }
}
