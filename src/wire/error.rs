//! What can go wrong on the wire, framing and decoding alike.

use std::fmt;
use std::io;

/// What can go wrong on the wire.
#[derive(Debug)]
pub enum WireError {
    /// The peer closed the connection cleanly between frames.
    Closed,
    /// The connection ended inside a header or payload.
    Truncated {
        expected: usize,
        got: usize,
    },
    /// A read timed out after part of a frame had arrived: the stream is out of step
    /// (the next read would start inside this frame), so the connection must end.
    StalledInFrame {
        expected: usize,
        got: usize,
    },
    /// A frame announced more than the maximum size.
    TooLarge {
        len: u32,
        max: u32,
    },
    /// The peer's hello was not boardbench's, or of another version.
    Handshake(String),
    /// A payload that does not decode.
    Malformed(String),
    Io(io::Error),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Closed => f.write_str("the peer closed the connection"),
            WireError::Truncated { expected, got } => {
                write!(
                    f,
                    "truncated frame: the connection ended after {got} of {expected} bytes"
                )
            }
            WireError::StalledInFrame { expected, got } => {
                write!(
                    f,
                    "timed out inside a frame, after {got} of {expected} bytes"
                )
            }
            WireError::TooLarge { len, max } => {
                write!(f, "frame of {len} bytes exceeds the maximum of {max} bytes")
            }
            WireError::Handshake(s) => write!(f, "bad handshake: {s}"),
            WireError::Malformed(s) => write!(f, "malformed payload: {s}"),
            WireError::Io(e) if super::is_timeout(e) => {
                f.write_str("timed out waiting for the peer")
            }
            WireError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WireError {}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> WireError {
        WireError::Io(e)
    }
}
