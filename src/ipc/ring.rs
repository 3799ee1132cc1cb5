//! The shm transport's memory: two byte rings, one each way, in a mapping of a memfd that
//! the server child inherits (it is a fresh exec of this binary, so nothing mapped before
//! the fork would survive; a memfd has no name under /dev/shm, and no exit, SIGKILL
//! included, can leave one behind). Each side's [`RingEnd`] reads one ring and writes the
//! other, a `Read` and a `Write` like a socket's, so frames, calls and checks run over it
//! unchanged.
//!
//! A ring is a counter of bytes written (`head`, the writer's) and of bytes read (`tail`,
//! the reader's). A side with nothing to read (or no room to write) sleeps in a futex
//! wait on the other's counter, having said so in a flag the other reads after each
//! advance: a wake costs a syscall only when someone sleeps. The spinning variant polls
//! the counter for a while first. Each wait ends after [`SLICE`] to look whether the peer
//! is still there: a socketpair whose one end the peer holds reads as hung up once the
//! peer's process is gone, however it ended. A side that closes its end says so in the
//! mapping and wakes the other.

use super::futex;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Each ring's bytes: room for the largest frame with its header, twice over.
pub(crate) const CAPACITY: usize = 256 << 10;
/// The control block's size: a page, ahead of the two rings.
const CONTROL: usize = 4096;
/// The mapping: the control block, then the ring to the server, then the one back.
const SIZE: usize = CONTROL + 2 * CAPACITY;
/// How long a futex wait lasts before it looks whether the peer is still there.
const SLICE: Duration = Duration::from_millis(10);
/// How long the spinning variant polls before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

/// One ring's counters, each word on a cache line of its own.
#[repr(C, align(64))]
struct Line(AtomicU32);

#[repr(C)]
struct Counters {
    /// Bytes written, ever (wrapping).
    head: Line,
    /// Bytes read, ever (wrapping).
    tail: Line,
    /// 1 while the reader waits (or is about to) on `head`.
    reader_waiting: Line,
    /// 1 while the writer waits on `tail` for room.
    writer_waiting: Line,
}

/// The start of the mapping.
#[repr(C)]
struct Control {
    /// 1 once either side has closed its end.
    closed: Line,
    rings: [Counters; 2],
}

/// Which end of the rings: the client writes ring 0 and reads ring 1, the server the other
/// way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Client,
    Server,
}

/// The mapping, unmapped when both halves of a side's end are gone.
struct Mapping {
    base: *mut u8,
    /// This side's end of the socketpair that shows whether the peer is alive.
    peer: OwnedFd,
    spin: bool,
}

// SAFETY: the mapping is plain shared memory; every access to it goes through atomics (the
// counters) or copies into ranges that the counters hand to one side at a time.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn control(&self) -> &Control {
        // SAFETY: the mapping starts with CONTROL bytes, page-aligned, zeroed at creation
        // (a fresh memfd reads as zeros), and lives as long as `self`; a Control is only
        // atomics, valid at any bit pattern.
        unsafe { &*(self.base as *const Control) }
    }

    fn data(&self, ring: usize) -> *mut u8 {
        // SAFETY: within the mapping of SIZE bytes.
        unsafe { self.base.add(CONTROL + ring * CAPACITY) }
    }

    fn closed(&self) -> bool {
        self.control().closed.0.load(Ordering::SeqCst) != 0
    }

    /// Whether the peer's process is gone: its end of the socketpair reads as hung up.
    fn peer_gone(&self) -> bool {
        let mut fds = [nix::poll::PollFd::new(
            self.peer.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        match nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO) {
            Ok(0) => false,
            Ok(_) => true,
            Err(e) => e != nix::errno::Errno::EINTR,
        }
    }

    /// Waits until `word` no longer holds `seen`, with `flag` raised while it sleeps:
    /// false if the peer closed its end or is gone.
    fn wait(&self, word: &AtomicU32, seen: u32, flag: &AtomicU32) -> bool {
        if self.spin {
            let until = Instant::now() + SPIN;
            loop {
                for _ in 0..64 {
                    if word.load(Ordering::Acquire) != seen {
                        return true;
                    }
                    std::hint::spin_loop();
                }
                if Instant::now() >= until {
                    break;
                }
            }
        }
        loop {
            // The flag is raised before the word is read again, and the other side reads
            // the flag after it moves the word (both SeqCst): either this side sees the
            // word moved or the other sees the flag and wakes it.
            flag.store(1, Ordering::SeqCst);
            if word.load(Ordering::SeqCst) != seen {
                flag.store(0, Ordering::Relaxed);
                return true;
            }
            if self.closed() {
                flag.store(0, Ordering::Relaxed);
                return false;
            }
            let woken = futex::wait(word, seen, SLICE);
            flag.store(0, Ordering::Relaxed);
            if word.load(Ordering::Acquire) != seen {
                return true;
            }
            if self.closed() || (!woken && self.peer_gone()) {
                return false;
            }
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        let control = self.control();
        control.closed.0.store(1, Ordering::SeqCst);
        for ring in &control.rings {
            futex::wake(&ring.head.0);
            futex::wake(&ring.tail.0);
        }
        // SAFETY: `base` was mapped with SIZE bytes by `map`, and nothing refers to it
        // once the last end is dropped.
        unsafe { libc::munmap(self.base.cast(), SIZE) };
    }
}

/// What the server child inherits: the memfd and its end of the liveness socketpair.
pub(crate) struct ForServer {
    pub memfd: OwnedFd,
    pub peer: OwnedFd,
}

/// Makes the mapping on a fresh memfd: the client's end, and what the server needs.
pub(crate) fn create(spin: bool) -> io::Result<(RingEnd, ForServer)> {
    let memfd = memfd(SIZE)?;
    let (client, server) = nix::sys::socket::socketpair(
        nix::sys::socket::AddressFamily::Unix,
        nix::sys::socket::SockType::Stream,
        None,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
    )?;
    let end = open(&memfd, client, Side::Client, spin)?;
    Ok((
        end,
        ForServer {
            memfd,
            peer: server,
        },
    ))
}

/// A fresh memfd of `len` bytes (zeros), closed on exec.
fn memfd(len: usize) -> io::Result<OwnedFd> {
    // SAFETY: the name is a NUL-terminated literal; the result is checked.
    let fd = unsafe { libc::memfd_create(c"bb-ipc-shm".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: memfd_create just returned this descriptor; nothing else owns it.
    let memfd = unsafe { OwnedFd::from_raw_fd(fd) };
    std::fs::File::from(memfd.try_clone()?).set_len(len as u64)?;
    Ok(memfd)
}

/// Maps the rings of `memfd` (then no longer needed) as `side`, with `peer` the end of
/// the liveness socketpair that the other side's process holds the other of.
pub(crate) fn open(memfd: &OwnedFd, peer: OwnedFd, side: Side, spin: bool) -> io::Result<RingEnd> {
    let len = std::fs::File::from(memfd.try_clone()?).metadata()?.len();
    if len != SIZE as u64 {
        return Err(io::Error::other(format!(
            "the shared memory is {len} bytes, not {SIZE}"
        )));
    }
    // SAFETY: a fresh shared mapping of the whole memfd, checked for failure below; the
    // memory is only touched through Mapping's accessors.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            memfd.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let mapping = Arc::new(Mapping {
        base: base.cast(),
        peer,
        spin,
    });
    let (outbound, inbound) = match side {
        Side::Client => (0, 1),
        Side::Server => (1, 0),
    };
    Ok(RingEnd {
        mapping,
        inbound,
        outbound,
    })
}

/// One side's end: reads its inbound ring, writes its outbound one. Cloned into a read
/// half and a write half; the mapping goes with the last.
#[derive(Clone)]
pub(crate) struct RingEnd {
    mapping: Arc<Mapping>,
    inbound: usize,
    outbound: usize,
}

impl RingEnd {
    /// Moves this side's counter of `ring` past up to `len` bytes once the other side's
    /// allows any (bytes to read, or room to write), `copy` taking them at their position
    /// first; wakes the other side if it sleeps. None once the peer has closed or is gone.
    fn advance(
        &self,
        ring: usize,
        reading: bool,
        len: usize,
        copy: impl FnOnce(usize, usize),
    ) -> Option<usize> {
        let c = &self.mapping.control().rings[ring];
        let (mine, theirs, my_flag, their_flag) = if reading {
            (
                &c.tail.0,
                &c.head.0,
                &c.reader_waiting.0,
                &c.writer_waiting.0,
            )
        } else {
            (
                &c.head.0,
                &c.tail.0,
                &c.writer_waiting.0,
                &c.reader_waiting.0,
            )
        };
        loop {
            let at = mine.load(Ordering::Relaxed);
            let other = theirs.load(Ordering::Acquire);
            // Clamped, so that counters a broken peer wrote can only ever give garbage
            // bytes (which the frame's checks refuse), never a copy outside the ring.
            let ready = if reading {
                (other.wrapping_sub(at) as usize).min(CAPACITY)
            } else {
                CAPACITY.saturating_sub(at.wrapping_sub(other) as usize)
            };
            if ready == 0 {
                if !self.mapping.wait(theirs, other, my_flag) {
                    return None;
                }
                continue;
            }
            let n = ready.min(len);
            copy(at as usize, n);
            mine.store(at.wrapping_add(n as u32), Ordering::SeqCst);
            if their_flag.load(Ordering::SeqCst) != 0 {
                futex::wake(mine);
            }
            return Some(n);
        }
    }
}

impl Read for RingEnd {
    /// Whatever has arrived, up to `buf.len()` bytes, once there is any; 0 once the peer
    /// has closed or is gone and nothing is left.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let data = self.mapping.data(self.inbound);
        let got = self.advance(self.inbound, true, buf.len(), |at, n| {
            copy_out(data, at, &mut buf[..n])
        });
        Ok(got.unwrap_or(0))
    }
}

impl Write for RingEnd {
    /// As much of `buf` as there is room for, once there is any; a broken pipe once the
    /// peer has closed or is gone and the ring stays full.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let data = self.mapping.data(self.outbound);
        let put = self.advance(self.outbound, false, buf.len(), |at, n| {
            copy_in(data, at, &buf[..n])
        });
        put.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the peer closed the shared memory",
            )
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Copies the ring's bytes from position `at` (wrapping) into `out`.
fn copy_out(data: *const u8, at: usize, out: &mut [u8]) {
    let start = at % CAPACITY;
    let first = out.len().min(CAPACITY - start);
    // SAFETY: both ranges lie within the ring's CAPACITY bytes and `out`; the counters
    // give these bytes to the reader alone until its tail moves past them.
    unsafe {
        std::ptr::copy_nonoverlapping(data.add(start), out.as_mut_ptr(), first);
        std::ptr::copy_nonoverlapping(data, out.as_mut_ptr().add(first), out.len() - first);
    }
}

/// Copies `bytes` into the ring from position `at` (wrapping).
fn copy_in(data: *mut u8, at: usize, bytes: &[u8]) {
    let start = at % CAPACITY;
    let first = bytes.len().min(CAPACITY - start);
    // SAFETY: as for `copy_out`; these bytes are the writer's until its head moves past.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), data.add(start), first);
        std::ptr::copy_nonoverlapping(bytes.as_ptr().add(first), data, bytes.len() - first);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client's end and a server's end of one mapping, in this process.
    fn pair(spin: bool) -> (RingEnd, RingEnd) {
        let (client, for_server) = create(spin).unwrap();
        let server = open(&for_server.memfd, for_server.peer, Side::Server, spin).unwrap();
        (client, server)
    }

    #[test]
    fn bytes_written_on_one_side_are_read_on_the_other_in_order_across_the_wrap() {
        for spin in [false, true] {
            let (mut client, mut server) = pair(spin);
            client.write_all(b"ping").unwrap();
            let mut got = [0u8; 16];
            assert_eq!(server.read(&mut got).unwrap(), 4);
            assert_eq!(&got[..4], b"ping");
            server.write_all(b"p").unwrap();
            assert_eq!(client.read(&mut got).unwrap(), 1);
            // Frames larger than the ring, past its end many times over, from a thread.
            let big: Vec<u8> = (0..3 * CAPACITY + 17).map(|i| (i % 251) as u8).collect();
            let sent = big.clone();
            let writer = std::thread::spawn(move || {
                client.write_all(&sent).unwrap();
                client
            });
            let mut back = vec![0u8; big.len()];
            server.read_exact(&mut back).unwrap();
            assert!(back == big, "spin {spin}");
            drop(writer.join().unwrap());
        }
    }

    #[test]
    fn counters_a_broken_peer_wrote_never_copy_outside_the_ring() {
        let (mut client, mut server) = pair(false);
        let mapping = client.mapping.clone();
        let ring = &mapping.control().rings[0];
        ring.head.0.store(u32::MAX / 2, Ordering::SeqCst);
        let mut buf = vec![0u8; 2 * CAPACITY];
        assert_eq!(server.read(&mut buf).unwrap(), CAPACITY);
        // A tail past the head leaves no room: a writer whose peer has closed gives up.
        ring.tail
            .0
            .store(ring.head.0.load(Ordering::SeqCst) + 5, Ordering::SeqCst);
        drop(server);
        let e = client.write(b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn a_closed_end_reads_as_the_end_after_what_it_wrote_and_writes_break() {
        let (mut client, mut server) = pair(false);
        server.write_all(b"last").unwrap();
        drop(server);
        let mut got = Vec::new();
        client.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"last");
        let full = vec![0u8; CAPACITY + 1];
        let e = client.write_all(&full).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn a_peer_gone_without_closing_is_seen_within_a_few_slices() {
        // The server's process "dies": its liveness end closes, the mapping stays (as a
        // SIGKILL leaves it, with no closed flag set).
        let (mut client, for_server) = create(false).unwrap();
        drop(for_server.peer);
        let started = Instant::now();
        let mut got = [0u8; 1];
        assert_eq!(client.read(&mut got).unwrap(), 0);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_mapping_of_the_wrong_size_is_refused() {
        let (_client, for_server) = create(false).unwrap();
        let small = memfd(4096).unwrap();
        let e = open(&small, for_server.peer, Side::Server, false).err();
        assert!(e.unwrap().to_string().contains("not"), "refused");
    }
}
