//! The frame format: a version handshake, then length-prefixed frames with a fixed
//! little-endian header, checked against a maximum size before any allocation.
//!
//! A connection opens with each side sending `HELLO` (`b"BBW"`, then the protocol
//! version as one byte). Then frames: a 12-byte header, `len: u32, id: u32, method: u16,
//! flags: u8, status: u8`, and `len` bytes of payload.

use super::error::WireError;
use std::io::{self, Read, Write};

pub const MAGIC: [u8; 3] = *b"BBW";
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 12;
/// The largest payload accepted unless configured otherwise (`--max-frame`).
pub const DEFAULT_MAX_FRAME: u32 = 16 << 20;

/// `flags` bit: this frame answers a request with the same id.
pub const FLAG_RESPONSE: u8 = 1;
/// `flags` bit: a call from the server back into the client (a block, a callback).
pub const FLAG_CALLBACK: u8 = 2;

/// The status of a response.
pub mod status {
    pub const OK: u8 = 0;
    /// The payload is an error message (UTF-8).
    pub const ERROR: u8 = 1;
    pub const UNKNOWN_METHOD: u8 = 2;
    pub const BAD_ARGUMENTS: u8 = 3;
    pub const TOO_LARGE: u8 = 4;

    /// A name for a status byte, for error messages.
    pub fn name(status: u8) -> &'static str {
        match status {
            OK => "ok",
            ERROR => "error",
            UNKNOWN_METHOD => "unknown method",
            BAD_ARGUMENTS => "bad arguments",
            TOO_LARGE => "too large",
            _ => "unknown status",
        }
    }
}

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub len: u32,
    pub id: u32,
    pub method: u16,
    pub flags: u8,
    pub status: u8,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&self.len.to_le_bytes());
        b[4..8].copy_from_slice(&self.id.to_le_bytes());
        b[8..10].copy_from_slice(&self.method.to_le_bytes());
        b[10] = self.flags;
        b[11] = self.status;
        b
    }

    /// Writes `id` into an encoded header, the front of `frame`: a frame encoded once
    /// serves every call.
    pub fn set_id(frame: &mut [u8], id: u32) {
        frame[4..8].copy_from_slice(&id.to_le_bytes());
    }

    /// Sets the flags in the encoded header at the front of `frame`.
    pub fn set_flags(frame: &mut [u8], flags: u8) {
        frame[10] = flags;
    }

    /// The payload length in the encoded header at the front of `frame`.
    pub fn len_of(frame: &[u8]) -> u32 {
        u32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]])
    }

    pub fn decode(b: &[u8; HEADER_LEN]) -> Header {
        Header {
            len: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            id: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            method: u16::from_le_bytes([b[8], b[9]]),
            flags: b[10],
            status: b[11],
        }
    }
}

/// Reads exactly `buf.len()` bytes; `Closed` if the stream ends before the first byte
/// and `at_boundary` is set, `Truncated` if it ends later. A read timeout is an `Io`
/// error only before the first byte at a boundary (the caller may wait on); anywhere
/// else it is `StalledInFrame`.
fn read_full(r: &mut impl Read, buf: &mut [u8], at_boundary: bool) -> Result<(), WireError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 && at_boundary => return Err(WireError::Closed),
            Ok(0) => {
                return Err(WireError::Truncated {
                    expected: buf.len(),
                    got,
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) && (got > 0 || !at_boundary) => {
                return Err(WireError::StalledInFrame {
                    expected: buf.len(),
                    got,
                })
            }
            Err(e) => return Err(WireError::Io(e)),
        }
    }
    Ok(())
}

/// Whether an I/O error is a read or write timeout (`SO_RCVTIMEO` reports `WouldBlock`).
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Reads exactly `buf.len()` bytes that are not a frame (a raw ping, a fixed-size
/// record): `Closed` if the stream ends before the first byte, `Truncated` after it.
pub fn read_exact_bytes(r: &mut impl Read, buf: &mut [u8]) -> Result<(), WireError> {
    read_full(r, buf, true)
}

/// Sends this side's hello.
pub fn send_hello(w: &mut impl Write) -> Result<(), WireError> {
    let mut hello = [0u8; 4];
    hello[..3].copy_from_slice(&MAGIC);
    hello[3] = VERSION;
    w.write_all(&hello)?;
    Ok(())
}

/// Reads and checks the peer's hello.
pub fn expect_hello(r: &mut impl Read) -> Result<(), WireError> {
    let mut hello = [0u8; 4];
    read_full(r, &mut hello, true).map_err(|e| match e {
        WireError::Closed | WireError::Truncated { .. } => {
            WireError::Handshake("the peer closed the connection before its hello".into())
        }
        other => other,
    })?;
    if hello[..3] != MAGIC {
        return Err(WireError::Handshake(format!(
            "not a boardbench peer (hello {:02x?})",
            &hello
        )));
    }
    if hello[3] != VERSION {
        return Err(WireError::Handshake(format!(
            "peer speaks protocol version {}, this side {VERSION}",
            hello[3]
        )));
    }
    Ok(())
}

/// Writes one frame (header and payload in a single write where possible).
pub fn write_frame(
    w: &mut impl Write,
    header: Header,
    payload: &[u8],
    scratch: &mut Vec<u8>,
) -> Result<(), WireError> {
    let header = Header {
        len: payload.len() as u32,
        ..header
    };
    scratch.clear();
    scratch.extend_from_slice(&header.encode());
    scratch.extend_from_slice(payload);
    w.write_all(scratch)?;
    Ok(())
}

/// Reads one frame into `payload` (reusing its allocation); refuses a frame larger than
/// `max` before allocating anything for it.
pub fn read_frame(r: &mut impl Read, max: u32, payload: &mut Vec<u8>) -> Result<Header, WireError> {
    let mut h = [0u8; HEADER_LEN];
    read_full(r, &mut h, true)?;
    let header = Header::decode(&h);
    if header.len > max {
        return Err(WireError::TooLarge {
            len: header.len,
            max,
        });
    }
    // The buffer grows as bytes arrive, a chunk at a time, not to the length the header
    // announces: a peer that announces 16 MiB and sends nothing costs nothing.
    let len = header.len as usize;
    payload.clear();
    while payload.len() < len {
        let got = payload.len();
        let chunk = (len - got).min(GROW_CHUNK);
        payload.resize(got + chunk, 0);
        read_full(r, &mut payload[got..], false).map_err(|e| match e {
            WireError::Truncated { got: more, .. } => WireError::Truncated {
                expected: HEADER_LEN + len,
                got: HEADER_LEN + got + more,
            },
            WireError::StalledInFrame { got: more, .. } => WireError::StalledInFrame {
                expected: HEADER_LEN + len,
                got: HEADER_LEN + got + more,
            },
            other => other,
        })?;
    }
    Ok(header)
}

/// How much a frame's buffer grows at a time while its payload arrives.
const GROW_CHUNK: usize = 64 << 10;

/// The frame at the front of `buf` when it is there whole and within `max`: its header
/// and its length with the header, so the payload is `buf[HEADER_LEN..length]`, read in
/// place. None for anything else (part of a frame, an oversized one): [`read_frame`]
/// then reads it, or reports it, from the stream. Many frames read in one go are parsed
/// without a copy or a call each.
pub fn buffered_frame(buf: &[u8], max: u32) -> Option<(Header, usize)> {
    let header = Header::decode(buf.get(..HEADER_LEN)?.try_into().expect("12 bytes"));
    let length = HEADER_LEN + header.len as usize;
    (header.len <= max && buf.len() >= length).then_some((header, length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_limits_hold() {
        let mut wire = Vec::new();
        let mut scratch = Vec::new();
        send_hello(&mut wire).unwrap();
        write_frame(
            &mut wire,
            Header {
                id: 7,
                method: 3,
                flags: FLAG_RESPONSE,
                status: status::OK,
                len: 0,
            },
            b"hello",
            &mut scratch,
        )
        .unwrap();
        let mut r = &wire[..];
        expect_hello(&mut r).unwrap();
        let mut payload = Vec::new();
        let h = read_frame(&mut r, 1024, &mut payload).unwrap();
        assert_eq!((h.id, h.method, h.flags, h.len), (7, 3, FLAG_RESPONSE, 5));
        assert_eq!(payload, b"hello");
        assert!(matches!(
            read_frame(&mut r, 1024, &mut payload),
            Err(WireError::Closed)
        ));
        // Oversized: refused from the header alone.
        let big = Header {
            len: 1 << 30,
            ..Default::default()
        }
        .encode();
        assert!(
            matches!(read_frame(&mut &big[..], 1024, &mut payload), Err(WireError::TooLarge { len, max: 1024 }) if len == 1 << 30)
        );
        assert!(
            payload.capacity() < 1 << 20,
            "nothing allocated for the oversized frame"
        );
        // Truncated inside the payload and inside the header.
        let cut = &wire[4..4 + HEADER_LEN + 2];
        assert!(matches!(
            read_frame(&mut &cut[..], 1024, &mut payload),
            Err(WireError::Truncated {
                expected: 17,
                got: 14
            })
        ));
        assert!(matches!(
            read_frame(&mut &wire[4..10], 1024, &mut payload),
            Err(WireError::Truncated { .. })
        ));
    }

    /// Gives its bytes, then times out as a socket with `SO_RCVTIMEO` does.
    struct ThenTimeout<'a>(&'a [u8]);

    impl Read for ThenTimeout<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.0.len()).min(3);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn only_whole_frames_within_the_limit_are_taken_from_a_buffer() {
        let mut wire = Vec::new();
        let mut scratch = Vec::new();
        for (id, payload) in [(1, &b"abc"[..]), (2, b""), (3, b"defgh")] {
            let header = Header {
                id,
                ..Default::default()
            };
            write_frame(&mut wire, header, payload, &mut scratch).unwrap();
        }
        let mut rest = &wire[..];
        let mut seen = Vec::new();
        while let Some((h, length)) = buffered_frame(rest, 5) {
            seen.push((h.id, rest[HEADER_LEN..length].to_vec()));
            rest = &rest[length..];
        }
        assert_eq!(
            seen,
            [(1, b"abc".to_vec()), (2, vec![]), (3, b"defgh".to_vec())]
        );
        assert!(rest.is_empty());
        // Part of a header, part of a payload, and a frame over the limit: left to
        // read_frame, which reads on or reports the frame.
        assert_eq!(buffered_frame(&wire[..HEADER_LEN - 1], 5), None);
        assert_eq!(buffered_frame(&wire[..HEADER_LEN + 2], 5), None);
        assert_eq!(
            buffered_frame(&wire[HEADER_LEN + 3 + HEADER_LEN..], 4),
            None
        );
    }

    #[test]
    fn a_timeout_between_frames_is_idle_but_inside_one_ends_the_stream() {
        let mut payload = Vec::new();
        let idle = read_frame(&mut ThenTimeout(b""), 1024, &mut payload);
        assert!(matches!(idle, Err(WireError::Io(e)) if is_timeout(&e)));
        let header = Header {
            len: 10,
            ..Default::default()
        }
        .encode();
        let mut wire = header.to_vec();
        wire.extend_from_slice(b"abcd");
        for cut in [5, HEADER_LEN, wire.len()] {
            let stalled = read_frame(&mut ThenTimeout(&wire[..cut]), 1024, &mut payload);
            assert!(
                matches!(stalled, Err(WireError::StalledInFrame { got, expected }) if got == cut && expected == if cut < HEADER_LEN { HEADER_LEN } else { HEADER_LEN + 10 }),
                "cut at {cut}: {stalled:?}"
            );
        }
    }

    #[test]
    fn handshake_rejects_strangers_and_other_versions() {
        assert!(expect_hello(&mut &b"GET / HTTP/1.1\r\n"[..])
            .unwrap_err()
            .to_string()
            .contains("not a boardbench peer"));
        assert!(expect_hello(&mut &b"BBW\x02"[..])
            .unwrap_err()
            .to_string()
            .contains("version 2"));
        assert!(expect_hello(&mut &b""[..])
            .unwrap_err()
            .to_string()
            .contains("before its hello"));
    }
}
