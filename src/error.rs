//! The one error type of boardbench: a message that names the operation, flag or path
//! involved, and whether it was bad input (exit 2) or a failed measurement (exit 1).

use std::fmt;

/// What kind of failure an [`Error`] is; it decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A bad flag, value or input file given by the person running the binary: exit 2.
    Usage,
    /// A measurement that could not be completed (a verification mismatch, a dead peer,
    /// an I/O error, a timeout): exit 1.
    Failed,
}

/// An error with a complete, human-readable message.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// The result type used throughout boardbench.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Bad input from the user (exit code 2).
    pub fn usage(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Usage,
            message: message.into(),
        }
    }

    /// A failed measurement (exit code 1).
    pub fn failed(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Failed,
            message: message.into(),
        }
    }

    /// An I/O failure while doing `what` (for example "reading /tmp/x.json").
    pub fn io(what: impl fmt::Display, err: std::io::Error) -> Error {
        Error::failed(format!("{what}: {err}"))
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::Usage => 2,
            ErrorKind::Failed => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
