//! Where a server listens and a client connects: `unix:PATH` or `tcp:HOST:PORT`, and one
//! stream and one listener type over both transports (connecting within a timeout,
//! listening where a stale socket file is replaced and a live one is not), so bb-rpc's
//! server and clients and bb-ipc's TCP transport are written once.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A transport address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addr {
    Unix(PathBuf),
    /// `host:port`, as given (a name, an IPv4 or a bracketed IPv6 address).
    Tcp(String),
}

impl Addr {
    /// Parses `unix:PATH` or `tcp:HOST:PORT`.
    pub fn parse(s: &str) -> Result<Addr, String> {
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!("'{s}': the unix: address needs a path"));
            }
            return Ok(Addr::Unix(PathBuf::from(path)));
        }
        if let Some(hostport) = s.strip_prefix("tcp:") {
            let ok = hostport
                .rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
            if !ok {
                return Err(format!("'{s}': expected tcp:HOST:PORT"));
            }
            return Ok(Addr::Tcp(hostport.to_string()));
        }
        Err(format!(
            "'{s}': expected unix:PATH or tcp:HOST:PORT (tcp:127.0.0.1:7700)"
        ))
    }

    /// The transport's name, as benchmarks show it: `unix` or `tcp`.
    pub fn transport(&self) -> &'static str {
        match self {
            Addr::Unix(_) => "unix",
            Addr::Tcp(_) => "tcp",
        }
    }

    /// Connects, giving up after `timeout`.
    pub(crate) fn connect(&self, timeout: Duration) -> io::Result<SocketStream> {
        match self {
            Addr::Unix(path) => connect_unix(path, timeout).map(SocketStream::Unix),
            Addr::Tcp(hostport) => {
                let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
                for sa in hostport.to_socket_addrs()? {
                    match TcpStream::connect_timeout(&sa, timeout) {
                        Ok(s) => {
                            s.set_nodelay(true)?;
                            return Ok(SocketStream::Tcp(s));
                        }
                        Err(e) => last = e,
                    }
                }
                Err(last)
            }
        }
    }

    /// Binds a listener here. Something already at a unix path is replaced only when it
    /// is a socket left by a dead server (connecting to it is refused); a live server's
    /// socket fails with `AddrInUse`, and anything that is not a socket (somebody's file)
    /// with `AlreadyExists`, both left as they are.
    pub(crate) fn listen(&self) -> io::Result<Listener> {
        match self {
            Addr::Unix(path) => {
                remove_stale_socket(path)?;
                UnixListener::bind(path).map(|l| Listener::Unix(l, path.clone()))
            }
            Addr::Tcp(hostport) => TcpListener::bind(hostport.as_str()).map(Listener::Tcp),
        }
    }
}

/// Connects to a Unix socket, giving up after `timeout`. A blocking connect to a
/// listener whose backlog is full waits until it accepts, however long; a non-blocking
/// one fails at once with EAGAIN, so it is retried with a growing pause until `timeout`.
fn connect_unix(path: &Path, timeout: Duration) -> io::Result<UnixStream> {
    use nix::sys::socket::{connect, socket, AddressFamily, SockFlag, SockType, UnixAddr};
    use std::os::fd::AsRawFd;
    let until = std::time::Instant::now() + timeout;
    let fd = socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    let to = UnixAddr::new(path)?;
    let mut pause = Duration::from_millis(1);
    loop {
        match connect(fd.as_raw_fd(), &to) {
            Ok(()) => break,
            Err(nix::errno::Errno::EAGAIN) if std::time::Instant::now() < until => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(nix::errno::Errno::EAGAIN) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the listener's backlog stayed full for {}",
                        crate::util::format::format_duration(timeout)
                    ),
                ))
            }
            Err(e) => return Err(e.into()),
        }
    }
    let stream = UnixStream::from(fd);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// Removes the socket at `path` if nobody accepts on it; see [`Addr::listen`].
fn remove_stale_socket(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    if !meta.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "the path exists and is not a socket; refusing to replace it",
        ));
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            "already in use (a server accepts connections on this socket)",
        )),
        Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => std::fs::remove_file(path),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("the socket exists and connecting to it failed ({e}); refusing to replace it"),
        )),
    }
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Addr::Unix(p) => write!(f, "unix:{}", p.display()),
            Addr::Tcp(hp) => write!(f, "tcp:{hp}"),
        }
    }
}

/// A connected stream over either transport.
#[derive(Debug)]
pub(crate) enum SocketStream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl SocketStream {
    pub(crate) fn try_clone(&self) -> io::Result<SocketStream> {
        match self {
            SocketStream::Unix(s) => s.try_clone().map(SocketStream::Unix),
            SocketStream::Tcp(s) => s.try_clone().map(SocketStream::Tcp),
        }
    }

    /// Bounds every blocking read and write (None: wait forever). Clones share it.
    pub(crate) fn set_timeouts(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            SocketStream::Unix(s) => {
                s.set_read_timeout(timeout)?;
                s.set_write_timeout(timeout)
            }
            SocketStream::Tcp(s) => {
                s.set_read_timeout(timeout)?;
                s.set_write_timeout(timeout)
            }
        }
    }

    /// Bounds every blocking read alone.
    pub(crate) fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            SocketStream::Unix(s) => s.set_read_timeout(timeout),
            SocketStream::Tcp(s) => s.set_read_timeout(timeout),
        }
    }

    pub(crate) fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            SocketStream::Unix(s) => s.shutdown(how),
            SocketStream::Tcp(s) => s.shutdown(how),
        }
    }

    /// The peer, for log lines.
    pub(crate) fn peer(&self) -> String {
        match self {
            SocketStream::Unix(_) => "unix".to_string(),
            SocketStream::Tcp(s) => s
                .peer_addr()
                .map_or_else(|_| "tcp".to_string(), |a| format!("tcp:{a}")),
        }
    }
}

impl std::os::fd::AsFd for SocketStream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            SocketStream::Unix(s) => s.as_fd(),
            SocketStream::Tcp(s) => s.as_fd(),
        }
    }
}

impl From<SocketStream> for std::os::fd::OwnedFd {
    fn from(s: SocketStream) -> Self {
        match s {
            SocketStream::Unix(s) => s.into(),
            SocketStream::Tcp(s) => s.into(),
        }
    }
}

impl From<Listener> for std::os::fd::OwnedFd {
    fn from(l: Listener) -> Self {
        match l {
            Listener::Unix(l, _) => l.into(),
            Listener::Tcp(l) => l.into(),
        }
    }
}

impl Read for SocketStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            SocketStream::Unix(s) => s.read(buf),
            SocketStream::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for SocketStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            SocketStream::Unix(s) => s.write(buf),
            SocketStream::Tcp(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A bound listener over either transport.
pub(crate) enum Listener {
    /// The path is kept to remove the socket file when the server stops.
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
}

impl Listener {
    pub(crate) fn accept(&self) -> io::Result<SocketStream> {
        match self {
            Listener::Unix(l, _) => l.accept().map(|(s, _)| SocketStream::Unix(s)),
            Listener::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nodelay(true)?;
                Ok(SocketStream::Tcp(s))
            }
        }
    }

    /// The address it is bound to (with the real port where port 0 was asked for).
    pub(crate) fn local_addr(&self) -> io::Result<Addr> {
        match self {
            Listener::Unix(_, path) => Ok(Addr::Unix(path.clone())),
            Listener::Tcp(l) => Ok(Addr::Tcp(l.local_addr()?.to_string())),
        }
    }

    /// An address a local client can reach this listener at (0.0.0.0 becomes 127.0.0.1).
    pub(crate) fn reachable_addr(&self) -> io::Result<Addr> {
        match self {
            Listener::Tcp(l) => {
                let mut a = l.local_addr()?;
                if a.ip().is_unspecified() {
                    a.set_ip(if a.is_ipv4() {
                        std::net::Ipv4Addr::LOCALHOST.into()
                    } else {
                        std::net::Ipv6Addr::LOCALHOST.into()
                    });
                }
                Ok(Addr::Tcp(a.to_string()))
            }
            unix => unix.local_addr(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_print_back() {
        for s in [
            "unix:/tmp/x.sock",
            "tcp:127.0.0.1:7700",
            "tcp:[::1]:80",
            "tcp:pi.local:7700",
        ] {
            assert_eq!(Addr::parse(s).unwrap().to_string(), s);
        }
        for bad in [
            "",
            "unix:",
            "tcp:127.0.0.1",
            "tcp::80",
            "tcp:h:99999",
            "udp:x:1",
            "/tmp/x",
        ] {
            assert!(
                Addr::parse(bad).unwrap_err().contains(&format!("'{bad}'")),
                "{bad}"
            );
        }
        assert_eq!(Addr::parse("tcp:h:1").unwrap().transport(), "tcp");
    }

    #[test]
    fn a_stale_socket_file_is_replaced_but_a_live_one_is_not() {
        let dir = crate::util::temp::TempDir::new("addr");
        let addr = Addr::Unix(dir.join("s.sock"));
        let live = addr.listen().unwrap();
        assert!(addr.listen().is_err(), "a live server keeps its socket");
        drop(live);
        // Another test's process spawned just now holds a copy of every descriptor from
        // its fork to its exec: the closed socket can stay alive that long, so a few tries.
        let again = (0..50)
            .find_map(|_| {
                let tried = addr.listen().ok();
                if tried.is_none() {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                tried
            })
            .expect("the stale socket file is replaced");
        assert_eq!(again.local_addr().unwrap(), addr);
    }
}
