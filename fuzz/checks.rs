//! The invariants each fuzz target asserts, shared by the cargo-fuzz targets
//! (fuzz/fuzz_targets/) and by the replay of their corpora that `make test` runs on
//! stable Rust (tests/it/fuzz_corpus.rs): decoded lengths within the input, memory bounded
//! by a multiple of the input (a counting allocator), and encode → decode round trips.

#![allow(dead_code)] // each fuzz target uses one of these checks

use boardbench::rpc::protocol::{self, Codec};
use boardbench::util::json::Json;
use boardbench::wire::{self, msgpack, Header, HEADER_LEN};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting this thread's live bytes and their peak.
pub struct Counting;

thread_local! {
    // Const-initialised cells without destructors: touching them never allocates.
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn grew(by: usize) {
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + by);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
}

fn shrank(by: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(by)));
}

// SAFETY: every call is passed to the system allocator unchanged; only counters move.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size);
        let p = System.realloc(ptr, layout, new_size);
        shrank(layout.size());
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns what it returned and the most bytes it held at once.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, PEAK.with(Cell::get) - base)
}

/// Fails when `held` bytes is more than `per_byte` bytes per input byte plus `fixed`.
fn assert_bounded(what: &str, held: usize, input: usize, per_byte: usize, fixed: usize) {
    assert!(
        held <= input * per_byte + fixed,
        "{what}: {held} bytes held for {input} bytes of input"
    );
}

/// Frames as bb-rpc's server reads them (a 1 MiB maximum), and each frame's payload
/// decoded as the call its header names.
pub fn frames(data: &[u8]) {
    let max = 1 << 20;
    let mut rest = data;
    let mut payload = Vec::new();
    let mut frames = Vec::new();
    let (_, held) = peak_during(|| {
        let _ = wire::expect_hello(&mut &data[..data.len().min(4)]);
        while let Ok(h) = wire::read_frame(&mut rest, max, &mut payload) {
            assert!(h.len <= max && payload.len() == h.len as usize, "{h:?}");
            frames.push((h, payload.clone()));
        }
    });
    // The frame buffer grows 64 KiB at a time as bytes arrive, whatever is announced.
    assert_bounded("read_frame", held, data.len(), 3, 256 << 10);
    let mut consumed = 0;
    let mut scratch = Vec::new();
    for (h, payload) in &frames {
        // Re-encoded, a frame is the bytes it was read from.
        let mut again = Vec::new();
        wire::write_frame(&mut again, *h, payload, &mut scratch).unwrap();
        assert_eq!(again, data[consumed..consumed + HEADER_LEN + payload.len()]);
        consumed += again.len();
        call_round_trip(h, payload);
    }
}

/// A payload decoded as the call its header names; a decoded call, encoded again with
/// the same codec, decodes to the same call.
fn call_round_trip(h: &Header, payload: &[u8]) {
    let (call, held) = peak_during(|| protocol::decode_call(h, payload));
    assert_bounded("decode_call", held, payload.len(), 64, 4096);
    let Ok(call) = call else { return };
    let mut out = Vec::new();
    protocol::push_request(&mut out, h.id, Codec::of_flags(h.flags), &call);
    let again = wire::read_frame(&mut &out[..], u32::MAX, &mut Vec::new()).unwrap();
    let redecoded = protocol::decode_call(&again, &out[HEADER_LEN..]).unwrap();
    assert_eq!(redecoded, call);
}

/// One MessagePack value: within the input, memory bounded, and its encoding decodes
/// to a value that encodes the same.
pub fn messagepack(data: &[u8]) {
    let (decoded, held) = peak_during(|| msgpack::decode(data));
    // A value tree costs more than its bytes (an element of one byte is a 32-byte Value)
    // but a fixed multiple of them: lengths are checked against the bytes present.
    assert_bounded("msgpack::decode", held, data.len(), 80, 4096);
    let _ = msgpack::array_len(data);
    let Ok((value, used)) = decoded else { return };
    assert!(used <= data.len());
    let mut encoded = Vec::new();
    msgpack::encode(&value, &mut encoded);
    let again = msgpack::decode_all(&encoded).expect("an encoded value decodes");
    let mut re_encoded = Vec::new();
    msgpack::encode(&again, &mut re_encoded);
    assert_eq!(encoded, re_encoded);
}

/// bb-compare's JSON reader: the value parser and the JMH document reader on top of it.
pub fn compare_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (parsed, held) = peak_during(|| Json::parse(text));
    assert_bounded("Json::parse", held, data.len(), 80, 4096);
    if let Ok(value) = parsed {
        // Printing is a fixed point after one round (a number too large for f64 reads
        // as infinity, which prints as JMH's "Infinity" string).
        let printed = value.to_pretty();
        let reprinted = Json::parse(&printed)
            .expect("printed JSON parses")
            .to_pretty();
        assert_eq!(Json::parse(&reprinted).unwrap().to_pretty(), reprinted);
    }
    let (measurements, held) = peak_during(|| boardbench::compare::load::parse(text));
    assert_bounded("compare::load::parse", held, data.len(), 80, 4096);
    match measurements {
        Ok(m) => assert!(m.len() <= data.len()),
        Err(e) => assert_printable("compare::load::parse", &e),
    }
}

/// Fails when a message shows a control byte: a hostile peer's bytes are escaped before
/// they reach a terminal.
fn assert_printable(what: &str, message: &str) {
    assert!(
        !message.chars().any(char::is_control),
        "{what}: a control byte in the message {message:?}"
    );
}

/// bb-seek's HTTP response reader (status line, headers, interim responses, a body by
/// Content-Length, chunked or to the close): the first two bytes are the body length the
/// request wants (little-endian), the rest is what the server sent.
pub fn http_response(data: &[u8]) {
    let Some((want, response)) = data.split_first_chunk::<2>() else {
        return;
    };
    let want = u16::from_le_bytes(*want) as usize;
    let (read, held) = peak_during(|| boardbench::net::http::read_response(response, want));
    assert_bounded("read_response", held, data.len(), 4, want + (64 << 10));
    match read {
        Ok((status, body)) => {
            assert!((100..=599).contains(&status), "status {status}");
            assert_eq!(body.len(), want);
        }
        Err(e) => assert_printable("read_response", &e),
    }
}

/// bb-seek's pattern files: the first eight bytes are the object's size (little-endian),
/// the rest the file.
pub fn pattern_file(data: &[u8]) {
    let Some((size, text)) = data.split_first_chunk::<8>() else {
        return;
    };
    let size = u64::from_le_bytes(*size);
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let (parsed, held) =
        peak_during(|| boardbench::seek::pattern::parse_file(text, size, "the pattern file"));
    assert_bounded("parse_file", held, data.len(), 80, 4096);
    match parsed {
        Ok(reads) => {
            assert!(!reads.is_empty() && reads.len() <= text.lines().count());
            for r in &reads {
                assert!(r.len > 0 && r.offset.checked_add(r.len).is_some_and(|end| end <= size));
            }
        }
        Err(e) => assert_printable("parse_file", &e.to_string()),
    }
}

/// The AWS CLI's INI files (`~/.aws/credentials` and `~/.aws/config`, `s3::ini::parse`),
/// which may hold secrets: an error names a line and at most a key, never the line's text
/// (so it is short and has no control byte); what parses has lowercase keys, no control
/// byte anywhere (values go into request headers), nesting one level deep, lines within
/// the text; and written out again, it parses to the same sections.
pub fn aws_ini(data: &[u8]) {
    use boardbench::s3::ini::{parse, Entry, Section};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (parsed, held) = peak_during(|| parse(text));
    assert_bounded("ini::parse", held, data.len(), 80, 4096);
    let sections = match parsed {
        Ok(s) => s,
        Err(e) => {
            assert_printable("ini::parse", &e);
            // A line number, a key of at most 32 characters and the words around them.
            assert!(
                e.len() <= 200,
                "ini::parse: an error this long may quote a line: {e}"
            );
            return;
        }
    };
    let lines = text.lines().count();
    let clean = |s: &str| !s.chars().any(char::is_control);
    let check = |e: &Entry| {
        assert!(
            !e.key.is_empty() && e.key == e.key.to_ascii_lowercase(),
            "{e:?}"
        );
        assert!(clean(&e.key) && clean(&e.value), "{e:?}");
        assert!(e.line >= 1 && e.line <= lines, "{e:?}");
    };
    for s in &sections {
        assert!(!s.name.is_empty() && clean(&s.name), "{s:?}");
        for e in &s.entries {
            check(e);
            assert!(e.nested.is_empty() || e.value.is_empty(), "{e:?}");
            for n in &e.nested {
                check(n);
                assert!(n.nested.is_empty(), "{n:?}");
            }
        }
    }
    // Written out again (as `[name]`, `key = value`, nested keys indented), the same
    // sections, keys and values, line numbers aside.
    let mut again = String::new();
    for s in &sections {
        again.push_str(&format!("[{}]\n", s.name));
        for e in &s.entries {
            again.push_str(&format!("{} = {}\n", e.key, e.value));
            for n in &e.nested {
                again.push_str(&format!("  {} = {}\n", n.key, n.value));
            }
        }
    }
    type Shape = Vec<(String, Vec<(String, String, Vec<(String, String)>)>)>;
    let shape = |sections: &[Section]| -> Shape {
        sections
            .iter()
            .map(|s| {
                let entries = s.entries.iter().map(|e| {
                    let nested = e.nested.iter().map(|n| (n.key.clone(), n.value.clone()));
                    (e.key.clone(), e.value.clone(), nested.collect())
                });
                (s.name.clone(), entries.collect())
            })
            .collect()
    };
    let reparsed = parse(&again).unwrap_or_else(|e| panic!("written out again: {e}\n{again}"));
    assert_eq!(
        shape(&reparsed),
        shape(&sections),
        "written out again:\n{again}"
    );
}

/// The elements bb-seek reads from S3's XML answers (`s3::xml::element`): found only
/// where the element is, never longer than its raw text, memory bounded, and its text
/// escaped and unescaped again is itself.
pub fn s3_xml(data: &[u8]) {
    use boardbench::s3::xml::element;
    use boardbench::util::xml::{escape, unescape};
    let body = String::from_utf8_lossy(data);
    for name in [
        "UploadId",
        "Code",
        "Message",
        "Region",
        "LocationConstraint",
        "AccessKeyId",
    ] {
        let (found, held) = peak_during(|| element(&body, name));
        assert_bounded("xml::element", held, data.len(), 4, 4096);
        let Some(text) = found else { continue };
        let open = format!("<{name}>");
        let start = body.find(&open).expect("found where its opening tag is") + open.len();
        let raw = body[start..]
            .find(&format!("</{name}>"))
            .expect("and its closing tag");
        assert!(
            text.len() <= raw,
            "{name}: {text:?} longer than its raw text"
        );
        assert_eq!(unescape(&escape(&text)), text, "{name}");
    }
}

/// credential_process's JSON (`s3::process::parse`), what a configured command prints: an
/// error is printable and short (it may name a field, never quote the keys or megabytes
/// of a value); what parses has both keys, no control byte in a key or the token (they go
/// into request headers), and an Expiration that is RFC 3339 and later than `now`.
pub fn credential_process(data: &[u8]) {
    use boardbench::s3::process::{parse, rfc3339};
    let now = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
    let (parsed, held) = peak_during(|| parse(data, now));
    assert_bounded("process::parse", held, data.len(), 80, 4096);
    match parsed {
        Err(e) => {
            assert_printable("process::parse", &e);
            assert!(
                e.chars().count() <= 200,
                "process::parse: an error this long: {e}"
            );
        }
        Ok(answer) => {
            let c = &answer.credentials;
            let clean = |s: &str| !s.is_empty() && !s.chars().any(char::is_control);
            assert!(
                clean(&c.access_key_id) && clean(&c.secret_access_key),
                "{c:?}"
            );
            assert!(c.session_token.as_deref().is_none_or(clean), "{c:?}");
            if let Some(e) = &answer.expiration {
                assert!(rfc3339(e).is_some_and(|at| at > now), "{e}");
            }
        }
    }
}
