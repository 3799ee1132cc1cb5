//! Response bodies: by Content-Length, chunked (trailers bounded like a head) or to the
//! close, delivered piece by piece into a [`Sink`] and never past the bytes asked for;
//! small bodies (error documents, S3's answers) read whole; and [`read_response`], the
//! reader as the fuzzer drives it.

use super::head::{quoted, read_head, Head, MAX_HEAD};
use super::network_error;
use crate::net::sink::{Buffers, Sink};
use std::io::{BufRead, Read};

/// The most bytes of a body read whole: an error document, an S3 answer.
pub(crate) const MAX_SMALL_BODY: u64 = 1 << 20;

/// Writes incoming bytes into a sink, counting them.
struct Filler<'s> {
    sink: &'s mut dyn Sink,
    wanted: u64,
    total: u64,
}

impl Filler<'_> {
    /// Reads exactly `n` bytes of `r` into the sink (`None`: until the end of `r`).
    fn take_from<R: Read>(&mut self, r: &mut R, n: Option<u64>) -> std::result::Result<(), String> {
        let mut left = n.unwrap_or(u64::MAX);
        while left > 0 {
            if self.total == self.wanted {
                if n.is_none() {
                    let mut probe = [0u8; 1];
                    if matches!(r.read(&mut probe), Ok(0)) {
                        return Ok(());
                    }
                }
                return Err(format!(
                    "the body is longer than the {} bytes asked for",
                    self.wanted
                ));
            }
            let max = (self.wanted - self.total).min(left);
            let buf = self.sink.space(usize::try_from(max).unwrap_or(usize::MAX));
            let got = r
                .read(buf)
                .map_err(|e| network_error("reading the body", e))?;
            if got == 0 {
                if n.is_none() {
                    return Ok(());
                }
                return Err(format!(
                    "the server closed the connection after {} of the body's bytes (truncated body)",
                    self.total
                ));
            }
            self.sink.advance(got);
            self.total += got as u64;
            left -= got as u64;
        }
        Ok(())
    }
}

/// Reads the body that follows `head`, which must be exactly `wanted` bytes (`exact`) or
/// at most that many, into `sink`; returns its length.
pub(crate) fn read_body<R: BufRead>(
    r: &mut R,
    head: &Head,
    wanted: u64,
    exact: bool,
    sink: &mut dyn Sink,
) -> std::result::Result<u64, String> {
    let mut filler = Filler {
        sink,
        wanted,
        total: 0,
    };
    if head.chunked() {
        loop {
            let mut size_line = String::new();
            r.by_ref()
                .take(1024)
                .read_line(&mut size_line)
                .map_err(|e| network_error("reading a chunk size", e))?;
            if !size_line.ends_with('\n') {
                return Err(format!(
                    "the server closed the connection after {} of the body's bytes (truncated chunked body)",
                    filler.total
                ));
            }
            let hex = size_line.split(';').next().unwrap_or("").trim();
            let size = u64::from_str_radix(hex, 16)
                .map_err(|_| format!("malformed chunk size '{}'", quoted(size_line.trim())))?;
            if size == 0 {
                // Trailers, up to the empty line: as much as a response head, at most.
                let mut trailers = 0;
                loop {
                    let mut t = String::new();
                    let n = r
                        .by_ref()
                        .take((MAX_HEAD - trailers) as u64 + 1)
                        .read_line(&mut t)
                        .map_err(|e| network_error("reading the trailers", e))?;
                    trailers += n;
                    if trailers > MAX_HEAD {
                        return Err(format!("the trailers are longer than {MAX_HEAD} bytes"));
                    }
                    if n == 0 || t.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            if size > wanted - filler.total {
                return Err(format!(
                    "the body is longer than the {wanted} bytes asked for"
                ));
            }
            filler.take_from(r, Some(size))?;
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf)
                .map_err(|_| "the chunked body is truncated after a chunk".to_string())?;
            if &crlf != b"\r\n" {
                return Err("malformed chunked body (no CRLF after a chunk)".into());
            }
        }
    } else {
        match head.content_length()? {
            Some(n) if n != wanted && (exact || n > wanted) => {
                return Err(format!(
                    "the body has {n} bytes (Content-Length), expected {wanted}"
                ))
            }
            Some(n) => filler.take_from(r, Some(n))?,
            // Without a length, only the end of the connection ends the body: on one that
            // stays open that would be a wait for the timeout.
            None if head.keep_alive => {
                return Err(format!(
                    "{}: a body without Content-Length or chunked encoding on a kept-alive connection has no end",
                    head.status_line()
                ))
            }
            None => filler.take_from(r, None)?,
        }
    }
    if exact && filler.total != wanted {
        return Err(format!(
            "the body has {} bytes, expected {wanted} (truncated body)",
            filler.total
        ));
    }
    Ok(filler.total)
}

/// A sink that grows a vector, up to its capacity.
struct Growing(Vec<u8>, usize);

impl Sink for Growing {
    fn space(&mut self, max: usize) -> &mut [u8] {
        let at = self.0.len();
        let n = max.min(self.0.capacity() - at).min(64 << 10);
        self.0.resize(at + n, 0);
        self.1 = at;
        &mut self.0[at..]
    }

    fn advance(&mut self, n: usize) {
        self.0.truncate(self.1 + n);
    }
}

/// Reads a body of at most [`MAX_SMALL_BODY`] bytes whole.
pub(crate) fn read_small_body<R: BufRead>(
    r: &mut R,
    head: &Head,
) -> std::result::Result<Vec<u8>, String> {
    let max = match head.content_length()? {
        Some(n) if n > MAX_SMALL_BODY => {
            return Err(format!(
                "{}: a body of {n} bytes where a short answer was expected",
                head.status_line()
            ))
        }
        Some(n) => n,
        None => MAX_SMALL_BODY,
    };
    let mut sink = Growing(Vec::with_capacity(max as usize), 0);
    read_body(r, head, max, false, &mut sink)?;
    Ok(sink.0)
}

/// Reads a response (interim ones skipped) and a body of `want` bytes from `bytes`, as a
/// ranged GET's answer is read: the entry of the `http_response` fuzz target.
#[doc(hidden)]
pub fn read_response(bytes: &[u8], want: usize) -> std::result::Result<(u16, Vec<u8>), String> {
    let mut r = bytes;
    let head = read_head(&mut r)?;
    let mut body = vec![0; want];
    read_body(
        &mut r,
        &head,
        want as u64,
        true,
        &mut Buffers::new(&mut [&mut body[..]]),
    )?;
    Ok((head.status, body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::http::head::tests::head;
    use crate::net::http::head::{check_range, MAX_INTERIM};

    fn body(text: &str, want: usize) -> std::result::Result<Vec<u8>, String> {
        let mut r = text.as_bytes();
        let h = read_head(&mut r)?;
        let mut out = vec![0; want];
        let (a, b) = out.split_at_mut(want / 2);
        read_body(
            &mut r,
            &h,
            want as u64,
            true,
            &mut Buffers::new(&mut [a, b]),
        )?;
        Ok(out)
    }

    #[test]
    fn interim_responses_are_skipped_and_hostile_heads_are_clear_errors() {
        let text = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
                    HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/10\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(body(text, 5).unwrap(), b"hello");
        let endless = "HTTP/1.1 100 Continue\r\n\r\n".repeat(MAX_INTERIM + 2);
        assert!(read_head(&mut endless.as_bytes())
            .unwrap_err()
            .contains("interim"));
        // Found by the http_response fuzz target: a status of two digits was taken.
        for bad in [
            "HTTP/1.1 21 206 Partial\r\n\r\n",
            "HTTP/1.1 +20 OK\r\n\r\n",
            "HTTP/1.1 020 OK\r\n\r\n",
        ] {
            let e = read_head(&mut bad.as_bytes()).unwrap_err();
            assert!(e.contains("not an HTTP/1.x response"), "{e}");
        }
        let two = head("HTTP/1.1 206 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n");
        assert_eq!(
            two.content_length().unwrap_err(),
            "two different Content-Length headers (5 and 7)"
        );
        let same = head("HTTP/1.1 206 OK\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n");
        assert_eq!(same.content_length(), Ok(Some(5)));
        for bad in ["+100", "0x100", "-1", "", "1 0", "99999999999999999999999"] {
            let h = head(&format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n"));
            let e = h.content_length().unwrap_err();
            assert!(e.starts_with("invalid Content-Length"), "{bad}: {e}");
        }
        let e = read_head(&mut "HTTP/2 \x1b[2J200\r\n\r\n".as_bytes()).unwrap_err();
        assert!(!e.contains('\x1b') && e.contains("\\u{1b}"), "{e}");
        let e = body("HTTP/1.1 206 OK\r\n\r\nhello", 5).unwrap_err();
        assert!(e.contains("has no end"), "{e}");
        assert_eq!(
            body("HTTP/1.1 206 OK\r\nConnection: close\r\n\r\nhello", 5).unwrap(),
            b"hello"
        );
        let trailers = format!(
            "HTTP/1.1 206 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n{}\r\n",
            "X-T: y\r\n".repeat(MAX_HEAD)
        );
        assert!(body(&trailers, 5)
            .unwrap_err()
            .contains("trailers are longer"));
        let odd = head("HTTP/1.1 500 \x07bell\r\n\r\n");
        assert_eq!(odd.status_line(), "500 \\u{7}bell");
    }

    #[test]
    fn content_length_body_206_with_its_range() {
        let h = head("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 10-14/100\r\nContent-Length: 5\r\n\r\n");
        check_range(&h, 10, 5, 100).unwrap();
        assert!(h.keep_alive);
        let e = check_range(&h, 10, 6, 100).unwrap_err();
        assert!(
            e.contains("Content-Range 'bytes 10-14/100', expected 'bytes 10-15/100'"),
            "{e}"
        );
        assert_eq!(
            body("HTTP/1.1 206 OK\r\ncontent-length: 5\r\n\r\nhello", 5).unwrap(),
            b"hello"
        );
    }

    #[test]
    fn chunked_bodies_are_decoded_across_buffers() {
        let text = "HTTP/1.1 206 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nhel\r\n4\r\nlo w\r\n0\r\nX-Trailer: t\r\n\r\n";
        assert_eq!(body(text, 7).unwrap(), b"hello w");
        let e = body(text, 6).unwrap_err();
        assert!(e.contains("longer than the 6 bytes"), "{e}");
        let e = body(
            "HTTP/1.1 206 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n",
            7,
        )
        .unwrap_err();
        assert!(e.contains("truncated"), "{e}");
        let e = body(
            "HTTP/1.1 206 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            7,
        )
        .unwrap_err();
        assert!(e.contains("malformed chunk size 'zz'"), "{e}");
    }

    #[test]
    fn truncated_bodies_and_early_closes_are_errors() {
        let e = body("HTTP/1.1 206 OK\r\nContent-Length: 5\r\n\r\nhel", 5).unwrap_err();
        assert!(
            e.contains("after 3 of the body's bytes (truncated body)"),
            "{e}"
        );
        let e = body("HTTP/1.1 206 OK\r\nContent-Length: 9\r\n\r\nhello", 5).unwrap_err();
        assert!(e.contains("9 bytes (Content-Length), expected 5"), "{e}");
        // No length and no chunks on a connection the server closes: the body runs to
        // the close, and must be exact (on a kept-alive one it is an error at once).
        let close = |rest: &str| format!("HTTP/1.1 206 OK\r\nConnection: close\r\n\r\n{rest}");
        assert_eq!(body(&close("hello"), 5).unwrap(), b"hello");
        assert!(body(&close("hell"), 5).unwrap_err().contains("truncated"));
        assert!(body(&close("hello!"), 5).unwrap_err().contains("longer"));
        let e = read_head(&mut &b""[..]).unwrap_err();
        assert!(e.contains("closed the connection without answering"), "{e}");
        let e = read_head(&mut &b"HTTP/1.1 206 OK\r\nContent-Le"[..]).unwrap_err();
        assert!(e.contains("in the middle of the response head"), "{e}");
        let e = read_head(&mut &b"SSH-2.0-OpenSSH\r\n\r\n"[..]).unwrap_err();
        assert!(e.contains("not an HTTP/1.x response"), "{e}");
    }
}
