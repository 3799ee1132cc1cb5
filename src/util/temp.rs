//! A temporary directory for the unit tests, removed with all it holds when dropped, so
//! that a failing test (its panic unwinding) leaves nothing behind either, where a test
//! that removed its own at its end left it on a failure. Test-only: compiled with the
//! unit tests alone. The integration tests have their own (`tests/it/support`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh directory under the system's temporary one, named by the test, the process
/// and a count, so that tests running side by side never share one.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Makes `bb-unit-NAME-PID-N`; one of that name left by an earlier process with the
    /// same pid is emptied first.
    pub fn new(name: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("bb-unit-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("making {}: {e}", dir.display()));
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.0.join(p)
    }
}

/// A `&TempDir` is its path wherever a `&Path` is asked for.
impl std::ops::Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_is_fresh_and_gone_when_dropped() {
        let a = TempDir::new("temp");
        let b = TempDir::new("temp");
        assert_ne!(a.path(), b.path());
        std::fs::create_dir_all(a.join("x/y")).unwrap();
        std::fs::write(a.join("x/y/z"), b"z").unwrap();
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists(), "{}", path.display());
        assert!(b.path().is_dir());
    }
}
