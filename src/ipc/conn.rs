//! A framed connection over any of bb-ipc's transports: a read side and a write side
//! (one socket twice, two pipes, or the shm transport's rings), frames in the shared wire format, and the 1-byte
//! ping-pong of the floor rows.
//!
//! Reads go through a buffer as large as the largest frame, so a frame usually costs one
//! read(2); on a seqpacket socket that also takes each message whole, as the kernel
//! never merges or splits them, and a message too long for the buffer is refused by its
//! header before its payload is read.

use super::ring::RingEnd;
use crate::wire::{self, Header, WireError, HEADER_LEN};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::os::fd::OwnedFd;

/// The largest payload bb-ipc's calls accept; theirs are a few bytes.
pub const MAX_FRAME: u32 = 64 << 10;

pub struct Conn {
    reader: BufReader<Box<dyn Read + Send>>,
    writer: Box<dyn Write + Send>,
    scratch: Vec<u8>,
}

impl Conn {
    /// A connection reading from `reader` and writing to `writer` (the same socket
    /// duplicated, or two pipes).
    pub fn new(reader: OwnedFd, writer: OwnedFd) -> Conn {
        Conn::of(Box::new(File::from(reader)), Box::new(File::from(writer)))
    }

    /// A connection over one end of the shared rings.
    pub(crate) fn over_ring(end: RingEnd) -> Conn {
        Conn::of(Box::new(end.clone()), Box::new(end))
    }

    fn of(reader: Box<dyn Read + Send>, writer: Box<dyn Write + Send>) -> Conn {
        Conn {
            reader: BufReader::with_capacity(HEADER_LEN + MAX_FRAME as usize, reader),
            writer,
            scratch: Vec::with_capacity(256),
        }
    }

    /// A connection over one socket.
    pub fn over_socket(socket: OwnedFd) -> std::io::Result<Conn> {
        let writer = socket.try_clone()?;
        Ok(Conn::new(socket, writer))
    }

    /// Both hellos: this side's sent, the peer's checked.
    pub fn handshake(&mut self) -> Result<(), WireError> {
        wire::send_hello(&mut self.writer)?;
        wire::expect_hello(&mut self.reader)
    }

    pub fn send(&mut self, header: Header, payload: &[u8]) -> Result<(), WireError> {
        wire::write_frame(&mut self.writer, header, payload, &mut self.scratch)
    }

    /// Reads one frame into `payload`.
    pub fn recv(&mut self, payload: &mut Vec<u8>) -> Result<Header, WireError> {
        wire::read_frame(&mut self.reader, MAX_FRAME, payload)
    }

    /// Writes raw bytes (the floor's ping, a usage record, a deliberately cut frame).
    pub fn write_raw(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        self.writer.write_all(bytes)?;
        Ok(())
    }

    /// Reads exactly `buf.len()` raw bytes; `Closed` at a clean end of the stream.
    pub fn read_raw(&mut self, buf: &mut [u8]) -> Result<(), WireError> {
        wire::read_exact_bytes(&mut self.reader, buf)
    }
}
