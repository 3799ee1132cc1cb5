//! The one error type of boardbench: a message that names the operation, flag, path or
//! peer involved, whether it was bad input (exit 2) or a failed measurement (exit 1), and
//! the error that caused it, where there is one (an I/O error, a wire error), so that
//! callers and tests can match on its kind rather than on words of the message.

use crate::wire::WireError;
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

/// The error that caused an [`Error`]: an I/O error, or one on the wire. A closed set
/// rather than any error type, so that no binary carries a table of every error type's
/// methods for it.
#[derive(Debug)]
pub enum Cause {
    Io(std::io::Error),
    Wire(WireError),
}

impl From<std::io::Error> for Cause {
    fn from(e: std::io::Error) -> Cause {
        Cause::Io(e)
    }
}

impl From<WireError> for Cause {
    fn from(e: WireError) -> Cause {
        Cause::Wire(e)
    }
}

/// An error with a complete, human-readable message, and its cause where it has one.
/// Boxed, so that a `Result` carrying it is no larger than its value.
#[derive(Debug)]
pub struct Error(Box<Inner>);

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    message: String,
    cause: Option<Cause>,
}

/// The result type used throughout boardbench.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Bad input from the user (exit code 2).
    pub fn usage(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Usage, message.into(), None)
    }

    /// A failed measurement (exit code 1).
    pub fn failed(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Failed, message.into(), None)
    }

    fn new(kind: ErrorKind, message: String, cause: Option<Cause>) -> Error {
        Error(Box::new(Inner {
            kind,
            message,
            cause,
        }))
    }

    /// A failure while doing `what` (for example "reading /tmp/x.json", naming the path or
    /// the peer), caused by `cause`: the message is `what: cause`, and the cause is kept as
    /// the error's [`source`](std::error::Error::source).
    pub fn caused(what: impl fmt::Display, cause: impl Into<Cause> + fmt::Display) -> Error {
        let message = format!("{what}: {cause}");
        Error::new(ErrorKind::Failed, message, Some(cause.into()))
    }

    /// A failure that its cause says all about: the message is the cause's.
    pub fn from_cause(cause: impl Into<Cause> + fmt::Display) -> Error {
        let message = cause.to_string();
        Error::new(ErrorKind::Failed, message, Some(cause.into()))
    }

    /// An I/O failure while doing `what` (for example "reading /tmp/x.json").
    pub fn io(what: impl fmt::Display, err: std::io::Error) -> Error {
        Error::caused(what, err)
    }

    /// This error as a step of `what`: the message becomes `what: message`; the kind and
    /// the cause stay.
    pub fn within(mut self, what: impl fmt::Display) -> Error {
        self.0.message = format!("{what}: {}", self.0.message);
        self
    }

    /// This error as bad input (exit 2), its message and cause kept: a file the user
    /// named that cannot be read is a bad setting, not a failed measurement.
    pub fn as_usage(mut self) -> Error {
        self.0.kind = ErrorKind::Usage;
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// What caused this error, if anything did.
    pub fn cause(&self) -> Option<&Cause> {
        self.0.cause.as_ref()
    }

    /// The kind of the I/O error that caused this one, if one did.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self.cause()? {
            Cause::Io(e) => Some(e.kind()),
            Cause::Wire(WireError::Io(e)) => Some(e.kind()),
            Cause::Wire(_) => None,
        }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self.0.kind {
            ErrorKind::Usage => 2,
            ErrorKind::Failed => 1,
        }
    }
}

/// Two errors are equal when they are of one kind with one message (the causes, which
/// the message names, are not compared).
impl PartialEq for Error {
    fn eq(&self, other: &Error) -> bool {
        self.0.kind == other.0.kind && self.0.message == other.0.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.cause()? {
            Cause::Io(e) => Some(e),
            Cause::Wire(e) => Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_is_kept_named_and_matched_by_kind() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = Error::io("reading /x.json", io).within("bb-compare");
        assert!(
            e.to_string().starts_with("bb-compare: reading /x.json: "),
            "{e}"
        );
        assert_eq!(e.io_kind(), Some(std::io::ErrorKind::NotFound));
        assert_eq!(e.exit_code(), 1);
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(Error::failed("x").io_kind(), None);
        assert_eq!(Error::usage("x").within("--flag").to_string(), "--flag: x");
    }
}
