//! Threads the system may refuse to start (an address-space limit, a cap on processes):
//! started with an error the caller reports, never a panic.

use super::error::{Error, Result};

/// Starts `f` on a thread named `name`; the error names the thread and why it could not.
pub fn spawn<F, T>(name: &str, f: F) -> Result<std::thread::JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(|e| Error::io(format!("starting the {name} thread"), e))
}
