//! Reads that end at a deadline, not after a quiet spell: a socket's read timeout
//! restarts with every byte, so a peer dripping one byte a second would hold a
//! 10-second timeout open forever. Here the timeout shrinks to what is left of the
//! deadline as it nears, and a read past it fails at once.

use crate::net::addr::SocketStream;
use std::io::{self, Read};
use std::time::{Duration, Instant};

/// A stream whose reads, while a deadline is set, fail with `TimedOut` once it passes.
///
/// Not `net::deadline::Deadlined` (HTTP's: reads and writes, a deadline always set, the
/// socket's timeout set before each): a call's deadline is set at its send and cleared
/// between calls, only reads wait on it (Unix sockets too), and the socket's timeout is
/// changed only within [`SLACK`] of the deadline, as a system call per read would cost
/// every measured call.
pub(crate) struct DeadlineReader {
    stream: SocketStream,
    deadline: Option<Instant>,
    /// The socket's read timeout as last set (`timeout` until a deadline nears).
    socket_timeout: Duration,
    /// The longest wait: the socket's timeout when no deadline is near.
    timeout: Duration,
}

/// How far the socket's timeout may overshoot the deadline before it is shortened: a
/// setsockopt per read would cost the measured calls a system call each.
const SLACK: Duration = Duration::from_millis(20);

impl DeadlineReader {
    /// Wraps `stream`, setting its read timeout to `timeout`.
    pub(crate) fn new(stream: SocketStream, timeout: Duration) -> io::Result<DeadlineReader> {
        stream.set_read_timeout(Some(timeout))?;
        Ok(DeadlineReader {
            stream,
            deadline: None,
            socket_timeout: timeout,
            timeout,
        })
    }

    /// From now on reads fail once `deadline` has passed.
    pub(crate) fn set_deadline(&mut self, deadline: Instant) {
        self.deadline = Some(deadline);
    }

    /// Reads wait on, each bounded by the timeout alone.
    pub(crate) fn clear_deadline(&mut self) -> io::Result<()> {
        self.deadline = None;
        self.restore_timeout()
    }

    fn restore_timeout(&mut self) -> io::Result<()> {
        if self.socket_timeout != self.timeout {
            self.stream.set_read_timeout(Some(self.timeout))?;
            self.socket_timeout = self.timeout;
        }
        Ok(())
    }
}

impl Read for DeadlineReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(deadline) = self.deadline else {
            return self.stream.read(buf);
        };
        let now = Instant::now();
        if now >= deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
        }
        let left = deadline - now;
        if self.socket_timeout > left + SLACK {
            // A zero timeout means "none" to setsockopt: never ask for less than 1 ms.
            let t = left.max(Duration::from_millis(1));
            self.stream.set_read_timeout(Some(t))?;
            self.socket_timeout = t;
        } else if self.socket_timeout < self.timeout && left > self.socket_timeout + SLACK {
            // A new, later deadline after a short one.
            self.restore_timeout()?;
        }
        self.stream.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_dripping_peer_cannot_outlast_the_deadline() {
        let (mine, mut theirs) = UnixStream::pair().unwrap();
        let dripper = std::thread::spawn(move || {
            for _ in 0..40 {
                if theirs.write_all(b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        // Each byte comes well within the 1 s timeout; the 300 ms deadline still holds.
        let mut r = DeadlineReader::new(SocketStream::Unix(mine), Duration::from_secs(1)).unwrap();
        let start = Instant::now();
        r.set_deadline(start + Duration::from_millis(300));
        let mut buf = [0u8; 1];
        let mut got = 0;
        let err = loop {
            match r.read(&mut buf) {
                Ok(n) => got += n,
                // Another test's signal, delivered to this thread: read again, as
                // read_exact does.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break e,
            }
        };
        let took = start.elapsed();
        assert!(crate::wire::is_timeout(&err), "{err}");
        assert!(got >= 1, "bytes arrived before the deadline");
        // Far short of the 2 s the drip lasts, with room for a loaded machine.
        assert!(
            took < Duration::from_millis(1500),
            "ended {took:?} after the start, deadline 300 ms"
        );
        // Without a deadline the next byte is read again.
        r.clear_deadline().unwrap();
        assert_eq!(r.read(&mut buf).unwrap(), 1);
        drop(r);
        dripper.join().unwrap();
    }
}
