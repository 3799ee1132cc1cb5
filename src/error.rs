//! The one error type of boardbench: a message that names the operation, flag, path or
//! peer involved, whether it was bad input (exit 2) or a failed measurement (exit 1), and
//! the error that caused it, where there is one (an I/O error, a wire error), so that
//! callers and tests can match on its kind rather than on words of the message.

use std::fmt;
use std::sync::Arc;

/// What kind of failure an [`Error`] is; it decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A bad flag, value or input file given by the person running the binary: exit 2.
    Usage,
    /// A measurement that could not be completed (a verification mismatch, a dead peer,
    /// an I/O error, a timeout): exit 1.
    Failed,
}

/// The error that caused an [`Error`].
type Cause = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// An error with a complete, human-readable message, and its cause where it has one.
#[derive(Debug, Clone)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    cause: Option<Cause>,
}

/// The result type used throughout boardbench.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Bad input from the user (exit code 2).
    pub fn usage(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Usage,
            message: message.into(),
            cause: None,
        }
    }

    /// A failed measurement (exit code 1).
    pub fn failed(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Failed,
            message: message.into(),
            cause: None,
        }
    }

    /// A failure while doing `what` (for example "reading /tmp/x.json", naming the path or
    /// the peer), caused by `cause`: the message is `what: cause`, and the cause is kept as
    /// the error's [`source`](std::error::Error::source).
    pub fn caused(
        what: impl fmt::Display,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error {
            kind: ErrorKind::Failed,
            message: format!("{what}: {cause}"),
            cause: Some(Arc::new(cause)),
        }
    }

    /// A failure that its cause says all about: the message is the cause's.
    pub fn from_cause(cause: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error {
            kind: ErrorKind::Failed,
            message: cause.to_string(),
            cause: Some(Arc::new(cause)),
        }
    }

    /// An I/O failure while doing `what` (for example "reading /tmp/x.json").
    pub fn io(what: impl fmt::Display, err: std::io::Error) -> Error {
        Error::caused(what, err)
    }

    /// This error as a step of `what`: the message becomes `what: message`; the kind and
    /// the cause stay.
    pub fn within(self, what: impl fmt::Display) -> Error {
        Error {
            message: format!("{what}: {}", self.message),
            ..self
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The kind of the I/O error that caused this one, if one did.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        self.cause
            .as_deref()
            .and_then(|c| c.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind)
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::Usage => 2,
            ErrorKind::Failed => 1,
        }
    }
}

/// Two errors are equal when they are of one kind with one message (the causes, which
/// the message names, are not compared).
impl PartialEq for Error {
    fn eq(&self, other: &Error) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
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
