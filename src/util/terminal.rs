//! What goes to stderr besides the progress line: the program's name, the
//! [`stderr!`](crate::stderr) macro that never panics on a closed stderr, and the one
//! place warnings are printed.

use std::fmt;
use std::path::PathBuf;

/// The name this binary was run as (`bb-zstd`), for messages.
pub fn program_name() -> String {
    std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "boardbench".to_string())
}

/// Prints a line on stderr like `eprintln!`, but a closed or broken stderr is ignored
/// instead of panicking: losing a message must not stop a run, least of all the
/// watchdog's that ends a stuck one.
#[macro_export]
macro_rules! stderr {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Prints a warning on stderr (`model::Warning`, or any message).
pub fn warn(w: &dyn fmt::Display) {
    crate::stderr!("{}: warning: {w}", program_name());
}
