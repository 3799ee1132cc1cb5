//! [`Deadlined`]: a socket whose every read and write must end by one deadline, however the other end
//! paces its bytes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// `30s`, `0.5s`: a timeout, for a message.
pub(crate) fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// A socket whose every read and write must end by one deadline, the request's, however
/// the server paces its bytes (a silent server, a body dripped a byte at a time).
///
/// Not bb-rpc's `DeadlineReader` (`rpc::deadline`), which does the same for reads alone:
/// this one bounds writes too, always has a deadline, and sets the socket's timeout to
/// what is left before every read and write, a system call each that a request over the
/// network does not notice. bb-rpc's measured calls would pay that system call per call,
/// so its reader changes the timeout only as a deadline nears.
pub(crate) struct Deadlined {
    stream: TcpStream,
    deadline: Instant,
    /// The whole request's time, for the message.
    allowed: Duration,
}

impl Deadlined {
    pub(crate) fn new(stream: TcpStream, deadline: Instant, allowed: Duration) -> Deadlined {
        Deadlined {
            stream,
            deadline,
            allowed,
        }
    }

    /// Bounds the reads and writes from now on by `deadline`, `allowed` being the whole
    /// request's time (for the message).
    pub(crate) fn set_deadline(&mut self, deadline: Instant, allowed: Duration) {
        self.deadline = deadline;
        self.allowed = allowed;
    }

    fn left(&self) -> std::io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(self.expired())
        } else {
            Ok(left)
        }
    }

    fn expired(&self) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "the request was not done within {} (--request-timeout)",
                seconds(self.allowed)
            ),
        )
    }

    /// The socket's own timeouts (EAGAIN) read as the deadline's.
    fn timed<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        match r {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(self.expired())
            }
            r => r,
        }
    }
}

impl Read for Deadlined {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream.set_read_timeout(Some(self.left()?))?;
        let r = self.stream.read(buf);
        self.timed(r)
    }
}

impl Write for Deadlined {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream.set_write_timeout(Some(self.left()?))?;
        let r = self.stream.write(buf);
        self.timed(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
