//! The response head: the status line and headers of the final response (interim 1xx
//! ones skipped), within [`MAX_HEAD`] bytes; what a head says of its body's framing; and
//! whether it answers a ranged GET as asked, or why not.

use super::network_error;
use crate::util::format::quoted_cut;
use std::io::{BufRead, Read};

/// The most bytes a response head may have.
pub(crate) const MAX_HEAD: usize = 64 << 10;

/// A response's status line and headers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Head {
    pub status: u16,
    pub reason: String,
    /// Whether the server will keep the connection open after this response.
    pub keep_alive: bool,
    headers: Vec<(String, String)>,
}

impl Head {
    /// A header's value (names compare case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body's length; two Content-Length headers that disagree are an error (which
    /// one framed the body is anybody's guess), equal ones are one.
    pub(crate) fn content_length(&self) -> std::result::Result<Option<u64>, String> {
        let mut length: Option<u64> = None;
        for (_, v) in self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        {
            // Digits only (RFC 9110 §8.6): Rust's parse would take a leading `+`.
            let digits = v.trim();
            let n: u64 = digits
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| digits.parse().ok())
                .flatten()
                .ok_or_else(|| format!("invalid Content-Length '{}'", quoted(v)))?;
            match length {
                Some(m) if m != n => {
                    return Err(format!(
                        "two different Content-Length headers ({m} and {n})"
                    ))
                }
                _ => length = Some(n),
            }
        }
        Ok(length)
    }

    pub(crate) fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    }

    pub fn status_line(&self) -> String {
        format!("{} {}", self.status, quoted(&self.reason))
    }
}

/// What a message quotes of a server's line (a head may be 64 KiB): escaped, and cut
/// past a line's worth.
pub(crate) fn quoted(line: &str) -> String {
    quoted_cut(line, 80)
}

/// Interim (1xx) responses skipped before the final one, at most.
pub(crate) const MAX_INTERIM: usize = 8;

/// Reads the final response's status line and headers: interim responses (100 Continue,
/// 103 Early Hints), which have no body, are skipped.
pub(crate) fn read_head<R: BufRead>(r: &mut R) -> std::result::Result<Head, String> {
    for _ in 0..=MAX_INTERIM {
        let head = read_one_head(r)?;
        if !(100..=199).contains(&head.status) || head.status == 101 {
            return Ok(head);
        }
    }
    Err(format!(
        "more than {MAX_INTERIM} interim (1xx) responses before the answer"
    ))
}

/// Reads one response's status line and headers.
fn read_one_head<R: BufRead>(r: &mut R) -> std::result::Result<Head, String> {
    let mut taken = 0;
    let mut line = |first: bool| -> std::result::Result<String, String> {
        let mut buf = Vec::new();
        let n = r
            .by_ref()
            .take((MAX_HEAD - taken) as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| network_error("reading the response", e))?;
        taken += n;
        if n == 0 {
            return Err(if first {
                "the server closed the connection without answering".to_string()
            } else {
                "the server closed the connection in the middle of the response head".to_string()
            });
        }
        if taken > MAX_HEAD {
            return Err(format!("the response head is longer than {MAX_HEAD} bytes"));
        }
        if !buf.ends_with(b"\n") {
            return Err(
                "the server closed the connection in the middle of the response head".into(),
            );
        }
        Ok(String::from_utf8_lossy(&buf)
            .trim_end_matches(['\r', '\n'])
            .to_string())
    };
    let status_line = line(true)?;
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    // Exactly three digits, 100 to 599 (RFC 9110, 9112): "21", "+206" or "020" is none.
    let status = parts
        .next()
        .filter(|s| s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..=599).contains(s));
    let (Some(status), true) = (status, version.starts_with("HTTP/1.")) else {
        return Err(format!(
            "not an HTTP/1.x response: '{}'",
            quoted(&status_line)
        ));
    };
    let reason = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let l = line(false)?;
        if l.is_empty() {
            break;
        }
        let (name, value) = l
            .split_once(':')
            .ok_or_else(|| format!("malformed header line '{}'", quoted(&l)))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let mut head = Head {
        status,
        reason,
        keep_alive: true,
        headers,
    };
    let connection = head.header("connection").unwrap_or("").to_ascii_lowercase();
    head.keep_alive = if version == "HTTP/1.0" {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close")
    };
    Ok(head)
}

/// Checks that `head` answers a GET of `len` bytes from `offset` with exactly that range.
pub(crate) fn check_range(
    head: &Head,
    offset: u64,
    len: u64,
    size: u64,
) -> std::result::Result<(), String> {
    match head.status {
        206 => {}
        200 => {
            return Err(
                "the server ignores Range requests: it answered 200 with the whole object instead of 206 with the range \
                 (enable range support, or use another server)"
                    .into(),
            )
        }
        _ => return Err(unexpected(head)),
    }
    let expected = format!("bytes {}-{}/{size}", offset, offset + len - 1);
    match head.header("content-range") {
        Some(v) if v.trim() == expected => Ok(()),
        Some(v) => Err(format!(
            "the server sent Content-Range '{}', expected '{expected}'",
            quoted(v)
        )),
        None => Err(format!(
            "the 206 response has no Content-Range (expected '{expected}')"
        )),
    }
}

/// The message for a status that was not asked for: redirects say where to.
pub(crate) fn unexpected(head: &Head) -> String {
    match (head.status, head.header("location")) {
        (300..=399, Some(to)) => format!(
            "the server redirected ({}) to {}: redirects are not followed; point --source at the final URL",
            head.status_line(),
            quoted(to)
        ),
        (300..=399, None) => format!("the server redirected ({}) without a Location", head.status_line()),
        _ => format!("the server answered {}", head.status_line()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The head `text` begins with.
    pub(crate) fn head(text: &str) -> Head {
        read_head(&mut text.as_bytes()).unwrap()
    }

    /// Found by the http_response fuzz target: a 4 KiB status line of control bytes was
    /// quoted whole, each byte escaped, in 87 KB held for one message.
    #[test]
    fn a_servers_long_line_is_quoted_short() {
        let garbage = "\x0c".repeat(4000);
        let long_reason = format!("HTTP/1.1 500 {}\r\n\r\n", "x".repeat(10_000));
        let bad_header = format!("HTTP/1.1 200 OK\r\n{}\r\n\r\n", "y".repeat(10_000));
        for (text, says) in [
            (
                format!("{garbage}\r\n\r\n"),
                "not an HTTP/1.x response: '\\u{c}",
            ),
            (bad_header, "malformed header line 'yyy"),
        ] {
            let e = read_head(&mut text.as_bytes()).unwrap_err();
            assert!(e.starts_with(says), "{e}");
            assert!(e.ends_with("…'") && e.chars().count() < 500, "{e}");
        }
        let reason = head(&long_reason).status_line();
        assert_eq!(reason, format!("500 {}…", "x".repeat(80)));
    }

    #[test]
    fn a_server_ignoring_range_is_detected() {
        let h = head("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
        let e = check_range(&h, 10, 5, 100).unwrap_err();
        assert!(e.contains("ignores Range"), "{e}");
    }

    #[test]
    fn bad_content_range_redirects_and_errors_are_clear() {
        let h = head("HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\n\r\n");
        assert!(check_range(&h, 0, 5, 100)
            .unwrap_err()
            .contains("no Content-Range"));
        let h = head("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/99\r\n\r\n");
        assert!(check_range(&h, 0, 5, 100)
            .unwrap_err()
            .contains("'bytes 0-4/99'"));
        let h = head("HTTP/1.1 302 Found\r\nLocation: http://elsewhere/x\r\n\r\n");
        let e = check_range(&h, 0, 5, 100).unwrap_err();
        assert!(
            e.contains("redirected (302 Found) to http://elsewhere/x"),
            "{e}"
        );
        let h = head("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n");
        assert_eq!(
            check_range(&h, 0, 5, 100).unwrap_err(),
            "the server answered 403 Forbidden"
        );
        assert!(!h.keep_alive);
        assert!(!head("HTTP/1.0 206 OK\r\n\r\n").keep_alive);
    }
}
