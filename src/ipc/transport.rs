//! The transports a call can travel over, each opened the same way: the client's end
//! connected at once (a listening socket queues the connection until the server child
//! accepts it), and the descriptors the server child inherits. A Unix socket file gets a
//! unique name under `$TMPDIR`, is removed as soon as the client is connected, and until
//! then on every abnormal exit. The shm transports need no kernel socket for a call: the
//! server child inherits a memfd holding the rings ([`super::ring`]) and its end of a
//! socketpair that only says whether either side has gone.

use super::conn::Conn;
use super::ring::{self, Side};
use crate::net::addr::{Addr, Listener};
use crate::util::error::{Error, Result};
use nix::sys::socket::{
    accept4, bind, connect, listen, socket, socketpair, AddressFamily, Backlog, SockFlag, SockType,
    UnixAddr,
};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// How long the client's end waits to connect to a listener made a moment before.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A Unix stream socket bound to a file (dRuby's `drbunix:`).
    Unix,
    /// A Unix seqpacket socket bound to a file: messages, kept whole.
    Seqpacket,
    /// An unnamed pair of connected Unix stream sockets.
    Socketpair,
    /// Two pipes, one each way.
    Pipes,
    /// TCP over 127.0.0.1 with TCP_NODELAY.
    Tcp,
    /// Rings in shared memory, the waiting side woken by a futex.
    Shm,
    /// The same rings, each wait polled for a while before it sleeps (for a spare core).
    ShmSpin,
}

pub const ALL: [Transport; 7] = [
    Transport::Unix,
    Transport::Seqpacket,
    Transport::Socketpair,
    Transport::Pipes,
    Transport::Tcp,
    Transport::Shm,
    Transport::ShmSpin,
];

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Unix => "unix",
            Transport::Seqpacket => "seqpacket",
            Transport::Socketpair => "socketpair",
            Transport::Pipes => "pipes",
            Transport::Tcp => "tcp",
            Transport::Shm => "shm",
            Transport::ShmSpin => "shm-spin",
        }
    }

    pub fn names() -> Vec<&'static str> {
        ALL.iter().map(|t| t.name()).collect()
    }

    pub fn from_name(name: &str) -> Option<Transport> {
        ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A socket file that exists for as long as this value: removed on drop, and by an exit
/// hook if the process ends first (a signal, a timeout).
pub(crate) struct SocketFile {
    path: PathBuf,
    hook: u64,
}

impl SocketFile {
    /// A fresh unique path under the temporary directory, with its clean-up registered
    /// before anything is created there.
    fn reserve() -> SocketFile {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "bb-ipc-{}-{}.sock",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let for_hook = path.clone();
        let hook = crate::harness::watchdog::add_exit_hook(move || {
            let _ = std::fs::remove_file(&for_hook);
        });
        SocketFile { path, hook }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        crate::harness::watchdog::remove_exit_hook(self.hook);
    }
}

/// A transport opened: the client's connected end, what the server child inherits, and
/// the socket file if there is one.
pub(crate) struct Opened {
    pub client: Conn,
    pub server_fds: Vec<OwnedFd>,
    pub socket_file: Option<SocketFile>,
}

fn os_err(what: String) -> impl FnOnce(nix::errno::Errno) -> Error {
    move |e| Error::failed(format!("{what}: {e}"))
}

/// Opens `transport` from the client's side.
pub(crate) fn open(transport: Transport) -> Result<Opened> {
    let io_err = |what: &str| {
        let what = format!("{} transport: {what}", transport.name());
        move |e: std::io::Error| Error::io(what, e)
    };
    match transport {
        Transport::Unix | Transport::Seqpacket => {
            let kind = if transport == Transport::Unix {
                SockType::Stream
            } else {
                SockType::SeqPacket
            };
            let file = SocketFile::reserve();
            let shown = file.path().display().to_string();
            let addr = UnixAddr::new(file.path()).map_err(|_| {
                Error::failed(format!(
                    "socket path {shown} is too long for a Unix socket; set TMPDIR to a shorter directory"
                ))
            })?;
            let new_socket = || {
                socket(AddressFamily::Unix, kind, SockFlag::SOCK_CLOEXEC, None)
                    .map_err(os_err("creating a Unix socket".into()))
            };
            let listener = new_socket()?;
            bind(listener.as_raw_fd(), &addr).map_err(os_err(format!("binding {shown}")))?;
            listen(&listener, Backlog::new(1).unwrap_or(Backlog::MAXCONN))
                .map_err(os_err(format!("listening on {shown}")))?;
            let client = new_socket()?;
            connect(client.as_raw_fd(), &addr).map_err(os_err(format!("connecting to {shown}")))?;
            // Connected, the name has done its work: the listener the server child
            // inherits accepts without it. Removed now, no SIGKILL of this process, before
            // or after the child starts, can leave the file behind.
            let _ = std::fs::remove_file(file.path());
            Ok(Opened {
                client: Conn::over_socket(client).map_err(io_err("duplicating the socket"))?,
                server_fds: vec![listener],
                socket_file: Some(file),
            })
        }
        Transport::Tcp => {
            let listener = Addr::Tcp("127.0.0.1:0".to_string())
                .listen()
                .map_err(io_err("binding 127.0.0.1"))?;
            let addr = listener.local_addr().map_err(io_err("reading the port"))?;
            let client = addr
                .connect(CONNECT_TIMEOUT)
                .map_err(io_err(&format!("connecting to {addr}")))?;
            Ok(Opened {
                client: Conn::over_socket(client.into())
                    .map_err(io_err("duplicating the socket"))?,
                server_fds: vec![listener.into()],
                socket_file: None,
            })
        }
        Transport::Socketpair => {
            let (client, server) = socketpair(
                AddressFamily::Unix,
                SockType::Stream,
                None,
                SockFlag::SOCK_CLOEXEC,
            )
            .map_err(os_err("creating a socketpair".into()))?;
            Ok(Opened {
                client: Conn::over_socket(client).map_err(io_err("duplicating the socket"))?,
                server_fds: vec![server],
                socket_file: None,
            })
        }
        Transport::Pipes => {
            let pipe = || {
                nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
                    .map_err(os_err("creating a pipe".into()))
            };
            let (to_server_read, to_server_write) = pipe()?;
            let (to_client_read, to_client_write) = pipe()?;
            Ok(Opened {
                client: Conn::new(to_client_read, to_server_write),
                server_fds: vec![to_server_read, to_client_write],
                socket_file: None,
            })
        }
        Transport::Shm | Transport::ShmSpin => {
            let (end, for_server) = ring::create(transport == Transport::ShmSpin)
                .map_err(io_err("creating the shared memory"))?;
            Ok(Opened {
                client: Conn::over_ring(end),
                server_fds: vec![for_server.memfd, for_server.peer],
                socket_file: None,
            })
        }
    }
}

/// The server child's end of `transport`, from the descriptors it inherited: a listening
/// socket accepts its one connection (the client's, queued before the child started).
pub(crate) fn server_end(transport: Transport, mut fds: Vec<OwnedFd>) -> std::io::Result<Conn> {
    let wrong = || std::io::Error::other(format!("wrong descriptors for {}", transport.name()));
    match (transport, fds.len()) {
        (Transport::Unix | Transport::Seqpacket, 1) => {
            let listener = fds.remove(0);
            let fd = accept4(listener.as_raw_fd(), SockFlag::SOCK_CLOEXEC)?;
            // SAFETY: accept4 just returned this descriptor; nothing else owns it.
            let socket = unsafe { OwnedFd::from_raw_fd(fd) };
            Conn::over_socket(socket)
        }
        (Transport::Tcp, 1) => {
            let listener = Listener::Tcp(std::net::TcpListener::from(fds.remove(0)));
            Conn::over_socket(listener.accept()?.into())
        }
        (Transport::Socketpair, 1) => Conn::over_socket(fds.remove(0)),
        (Transport::Pipes, 2) => {
            let write = fds.remove(1);
            Ok(Conn::new(fds.remove(0), write))
        }
        (Transport::Shm | Transport::ShmSpin, 2) => {
            let peer = fds.remove(1);
            let spin = transport == Transport::ShmSpin;
            Ok(Conn::over_ring(ring::open(
                &fds[0],
                peer,
                Side::Server,
                spin,
            )?))
        }
        _ => Err(wrong()),
    }
}
