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
        // Of the text searched (bytes that are not UTF-8 became U+FFFD, 3 bytes each):
        // unescaping makes a new String for each of six entities, the last one held as the
        // next grows, and a String that grows is held twice as it moves (the fuzzer saw up
        // to 10.4 times the text): linear, never what the text announces.
        assert_bounded("xml::element", held, body.len(), 16, 4096);
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

/// Fails when a message shows a control byte or is longer than `most` characters: what a
/// peer or a file sent is quoted escaped and cut, never whole.
fn assert_short_and_printable(what: &str, message: &str, most: usize) {
    assert_printable(what, message);
    let n = message.chars().count();
    assert!(
        n <= most,
        "{what}: a message of {n} characters quotes too much: {message}"
    );
}

/// A fork's report as its parent reads it (`harness::fork::decode`: the lines before
/// `end`), bytes that are not UTF-8 replaced as the parent replaces them, and the same
/// bytes as a build's description of itself ([`description`]).
pub fn fork_report(data: &[u8]) {
    use boardbench::harness::fork::{decode, encode};
    let text = String::from_utf8_lossy(data);
    // A histogram is its 7,424 counters (58 KiB), however short its line ("ihist empty"):
    // that much is allowed per histogram line, and a multiple of the input besides.
    let histograms = text
        .lines()
        .filter(|l| l.starts_with("hist ") || l.starts_with("ihist "))
        .count();
    let (decoded, held) = peak_during(|| decode(&text));
    assert_bounded(
        "fork::decode",
        held,
        text.len(),
        80,
        4096 + histograms * (60 << 10),
    );
    match decoded {
        // The parent prints it after "fork N sent a bad report: ".
        Err(e) => assert_short_and_printable("fork::decode", &e, 200),
        Ok(r) => {
            let items =
                r.scores.len() + r.metrics.len() + r.iteration_histograms.len() + r.pairs.len();
            assert!(items <= text.lines().count(), "{r:?}");
            assert!(r.metrics.iter().all(|(_, _, v)| !v.is_empty()), "{r:?}");
            // Encoded again, it decodes to what encodes the same: a fixed point after one
            // round (a histogram without counts is "empty", "+5" is 5).
            let once = encode(&r);
            let again = decode(&once).unwrap_or_else(|e| panic!("encoded again: {e}\n{once}"));
            assert_eq!(encode(&again), once);
        }
    }
    description(data);
}

/// A build's description of itself (`fork::Description::parse`): what `--against` reads
/// from the other build's stdout, bytes that are not UTF-8 replaced as the parent
/// replaces them. None exactly where the first line does not claim to be one; a refusal
/// short and printable; one read back the same once written.
pub fn description(data: &[u8]) {
    use boardbench::harness::fork::Description;
    let text = String::from_utf8_lossy(data);
    let (described, held) = peak_during(|| Description::parse(&text));
    assert_bounded("Description::parse", held, text.len(), 80, 4096);
    let claims = text
        .lines()
        .next()
        .is_some_and(|l| l.starts_with("boardbench-fork "));
    match described {
        // No description at all exactly where the first line does not claim to be one.
        Err(None) => assert!(!claims, "a description read as none"),
        // --against prints it after "its description has ".
        Err(Some(why)) => {
            assert!(claims);
            assert_short_and_printable("Description::parse", &why, 200);
        }
        Ok(d) => {
            assert!(claims);
            assert!(d.labels.len() <= text.lines().count(), "{d:?}");
            assert!(
                !d.program.contains('\n') && d.labels.iter().all(|l| !l.contains('\n')),
                "{d:?}"
            );
            // Written as a copy prints it, it reads back the same, CRs as spaces (a CR
            // before the LF would be taken for the line's end).
            let one_line = |s: &String| s.replace('\r', " ");
            let want = Description {
                protocol: d.protocol,
                program: one_line(&d.program),
                labels: d.labels.iter().map(one_line).collect(),
            };
            assert_eq!(Description::parse(&d.text()), Ok(want), "{}", d.text());
        }
    }
}

/// What the kernel means by a CPU list (`0-3,6`): each range low to high, counted
/// without overflow; None for anything else.
fn cpu_list_count(list: &str) -> Option<usize> {
    let mut n: usize = 0;
    for part in list.split(',') {
        let (low, high) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<usize>().ok()?, b.trim().parse().ok()?),
            None => {
                let c = part.trim().parse::<usize>().ok()?;
                (c, c)
            }
        };
        n = n.checked_add(high.checked_sub(low)?)?.checked_add(1)?;
    }
    Some(n)
}

/// cpufreq's stats/time_in_state as `Snapshot::take_at` reads it: `kHz time` a line,
/// other lines left out. (The parse is inline there; this is the same three lines, so
/// what they feed, `ClockStats`, `Health` and `ThrottleReport`, gets their rows.)
fn time_in_state(text: &str) -> Vec<(u64, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
        })
        .collect()
}

/// The parsers of /proc and /sys text: /proc/cpuinfo's CPU (`system::topology::cpu_model`),
/// each processor's core (`topology::core_names`), the online CPU list
/// (`topology::cpu_list`, at most 4,096 CPUs), /proc/stat (`activity::parse_stat`),
/// /proc/self/stat (`own_ticks`), cpufreq's time_in_state and `vcgencmd`'s
/// `measure_clock` and `get_throttled` (`system::throttle`). Each reads the whole input,
/// as a file read within bounds gives it (UTF-8, or nothing); where two readings are
/// compared (/proc/stat, time_in_state), a NUL byte parts the one before from the one
/// after (the same text twice without one): no /proc or /sys text holds a NUL.
pub fn sysfs(data: &[u8]) {
    use boardbench::system::activity::{between, own_ticks, parse_stat};
    use boardbench::system::throttle::{ClockStats, Snapshot, ThrottleReport};
    use boardbench::system::topology::{core_names, cpu_list, cpu_model};
    use boardbench::system::vcgencmd::parse_measure_clock;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (before, after) = text.split_once('\0').unwrap_or((text, text));
    // As `sysfs::read` gives a file: trimmed of white space and NULs, and never empty.
    let trimmed = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    let n = data.len();

    if !trimmed.is_empty() {
        // The CPU: one line's value (or "ARM part" and it), printable (the header line
        // shows it as it is), never empty.
        let (model, held) = peak_during(|| cpu_model(trimmed));
        assert_bounded("cpu_model", held, n, 16, 4096);
        if let Some(m) = model {
            assert!(!m.trim().is_empty(), "an empty CPU model from {trimmed:?}");
            assert!(m.chars().count() <= 6 * n + 16, "{m}");
            assert_printable("cpu_model", &m);
        }
        // The online CPUs: what the kernel's list means, at least one.
        let (cpus, held) = peak_during(|| cpu_list(trimmed));
        assert_bounded("cpu_list", held, n, 8, 4096 * 16 + 4096);
        let count = cpus.map(|c| c.len());
        let expected = cpu_list_count(trimmed).filter(|&c| c <= 4096);
        assert_eq!(count, expected, "{trimmed:?}");
        assert!(count.is_none_or(|c| c >= 1));
        // Each processor's core: as many as blocks at most, each printable.
        let (cores, held) = peak_during(|| core_names(trimmed));
        assert_bounded("core_names", held, n, 64, 4096);
        assert!(cores.len() <= trimmed.split("\n\n").count());
        for name in cores.values() {
            assert!(!name.trim().is_empty(), "an empty core from {trimmed:?}");
            assert_printable("core_names", name);
        }
    }

    // /proc/stat: busy ticks within all ticks, CPUs counted by their lines; between two
    // readings, other processes kept at most every CPU busy.
    let (stats, held) = peak_during(|| (parse_stat(before), parse_stat(after)));
    assert_bounded("parse_stat", held, n, 16, 4096);
    for (s, t) in [(stats.0, before), (stats.1, after)] {
        if let Some(s) = s {
            assert!(s.busy <= s.total && s.cpus >= 1, "{s:?}");
            assert!(s.cpus <= t.lines().count(), "{s:?}");
        }
    }
    // /proc/self/stat: the four fields from the 14th, counted after the name's last ')'.
    let (own, held) = peak_during(|| (own_ticks(before), own_ticks(after)));
    assert_bounded("own_ticks", held, n, 24, 4096);
    for (ticks, t) in [(own.0, before), (own.1, after)] {
        let want = t.rfind(')').and_then(|at| {
            let fields: Vec<&str> = t[at + 1..].split_whitespace().collect();
            (11..15).try_fold(0u64, |sum, i| sum.checked_add(fields.get(i)?.parse().ok()?))
        });
        assert_eq!(ticks, want, "{t:?}");
    }
    if let (Some(b), Some(a)) = stats {
        let mine = own.1.unwrap_or(0).saturating_sub(own.0.unwrap_or(0));
        if let Some(cores) = between(b, a, mine) {
            assert!(
                cores.is_finite() && cores >= 0.0 && cores <= a.cpus as f64,
                "{cores} cores busy of {} ({b:?} then {a:?}, {mine} our own)",
                a.cpus
            );
        }
    }

    // cpufreq's time_in_state, before and after: the mean clock within the table's, the
    // share below its maximum a percentage.
    let (tb, ta) = (time_in_state(before), time_in_state(after));
    let percent = |p: f64| (0.0..=100.0 * (1.0 + 1e-12)).contains(&p);
    let (clock, held) = peak_during(|| ClockStats::from_time_in_state(&tb, &ta));
    assert_bounded("from_time_in_state", held, n, 24, 4096);
    if let Some(c) = clock {
        let low = ta.iter().map(|&(f, _)| f).min().unwrap() as f64 / 1000.0;
        let high = ta.iter().map(|&(f, _)| f).max().unwrap() as f64 / 1000.0;
        assert!(
            c.mean_mhz >= low * (1.0 - 1e-9) && c.mean_mhz <= high * (1.0 + 1e-9),
            "{c:?} outside {low}..{high} MHz"
        );
        // 100 × below / total, rounded: 100.00000000000001 where all of it was below.
        assert!(percent(c.below_max_percent), "{c:?}");
    }
    // vcgencmd measure_clock arm: a clock, in MHz.
    let mhz = parse_measure_clock(text);
    assert!(mhz.is_none_or(|m| m.is_finite() && m > 0.0), "{mhz:?}");
    // vcgencmd get_throttled, as `vcgencmd_throttled` reads it (inline there too).
    let bits = |t: &str| {
        let hex = t
            .trim()
            .strip_prefix("throttled=")?
            .trim_start_matches("0x");
        u32::from_str_radix(hex, 16).ok()
    };
    // The report between the two snapshots, under the performance governor.
    let snapshot = |t: &str, rows: Vec<(u64, u64)>| Snapshot {
        time_in_state: rows,
        throttled_bits: bits(t),
        governor: Some("performance".into()),
        max_freq_khz: t.trim().parse().ok(),
        arm_clock_mhz: mhz,
        ..Snapshot::default()
    };
    let report = ThrottleReport::between(&snapshot(before, tb), &snapshot(after, ta));
    assert_eq!(report.throttled, !report.reasons.is_empty(), "{report:?}");
    for r in &report.reasons {
        assert_short_and_printable("ThrottleReport", r, 200);
    }
    let h = &report.health;
    assert!(h.below_max_percent.is_none_or(percent), "{h:?}");
    assert!(h.clock_mhz.is_none_or(f64::is_finite), "{h:?}");
}

/// STS's AssumeRole answer (`s3::sts::parse_answer_at`): the first two bytes are the HTTP
/// status (little-endian), the rest the body, made UTF-8 as bb-seek makes it. What parses
/// came with a 2xx and has the three elements' text, non-empty and without a control byte
/// (they go into request headers), and an Expiration that is RFC 3339 and later than the
/// check's clock; an error is printable, short where it is about the answer, and quotes
/// nothing of a refusal but STS's Code and Message.
pub fn sts(data: &[u8]) {
    use boardbench::s3::process::rfc3339;
    use boardbench::s3::sts::parse_answer_at;
    use boardbench::s3::xml::element;
    let Some((status, body)) = data.split_first_chunk::<2>() else {
        return;
    };
    let status = u16::from_le_bytes(*status);
    let body = String::from_utf8_lossy(body);
    let now = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
    let (parsed, held) = peak_during(|| parse_answer_at(status, &body, now));
    assert_bounded("sts::parse_answer", held, body.len(), 80, 4096);
    let two_hundred = (200..=299).contains(&status);
    match parsed {
        // At most a cut Expiration, quoted: 40 characters, each escaped in up to 6.
        Err(e) if two_hundred => assert_short_and_printable("sts::parse_answer", &e, 300),
        // "403 Code: Message", the Code cut at 40 characters and the Message at 160, each
        // escaped in up to 6 a character, or the status alone.
        Err(e) => assert_short_and_printable("sts::parse_answer", &e, 1300),
        Ok((c, expiration)) => {
            assert!(two_hundred, "status {status} parsed");
            let clean = |s: &str| !s.is_empty() && !s.chars().any(char::is_control);
            for (name, value) in [
                ("AccessKeyId", Some(&c.access_key_id)),
                ("SecretAccessKey", Some(&c.secret_access_key)),
                ("SessionToken", c.session_token.as_ref()),
            ] {
                let value = value.unwrap_or_else(|| panic!("no {name}"));
                assert!(clean(value), "{name} {value:?}");
                assert_eq!(element(&body, name).as_ref(), Some(value), "{name}");
            }
            if let Some(e) = &expiration {
                assert!(rfc3339(e).is_some_and(|at| at > now), "{e}");
            }
        }
    }
}

/// bb-seek's `--object` (`seek::spec::ObjectSpec::parse`): `s3://BUCKET/KEY`,
/// `http(s)://HOST[:PORT]/PATH/NAME`, `file:PATH` or a bare path. An error is printable
/// and quotes the flag at most three times; an object has a name, one path segment
/// without a control byte, a printable label that ends with it (under its place's label,
/// for S3 and HTTP), and its label parses back to the same object.
pub fn object_spec(data: &[u8]) {
    use boardbench::seek::spec::{ObjectSpec, SourceSpec};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (parsed, held) = peak_during(|| ObjectSpec::parse(text));
    assert_bounded("ObjectSpec::parse", held, data.len(), 80, 4096);
    let o = match parsed {
        Err(e) => {
            assert_printable("ObjectSpec::parse", &e);
            let n = e.chars().count();
            // It quotes the flag (escaped: up to 6 characters a byte) at most four times.
            assert!(n <= 24 * text.len() + 400, "{n} characters: {e}");
            return;
        }
        Ok(o) => o,
    };
    let clean = |s: &str| !s.is_empty() && !s.chars().any(char::is_control);
    assert!(clean(&o.name) && !o.name.contains('/'), "{o:?}");
    assert!(clean(&o.label), "{o:?}");
    assert!(o.label.ends_with(&o.name), "{o:?}");
    if !matches!(o.place, SourceSpec::File(_)) {
        assert!(o.label.starts_with(&o.place.label()), "{o:?}");
    }
    let again = ObjectSpec::parse(&o.label)
        .unwrap_or_else(|e| panic!("{o:?}: its label does not parse: {e}"));
    assert_eq!(again, o);
}

/// The monitor's readers (`--monitor`): a thermal zone's `temp` (`monitor::celsius`),
/// /proc/vmstat's swap counters (`validity::VmCounts::parse`) and /proc/meminfo's
/// `MemAvailable` (`sysfs::meminfo_kib`), each given the whole input. A temperature is one
/// a sensor can give, read back the same from its millidegrees; the counters and the
/// memory are their lines' values; memory ≤ 8 × input + 4 KiB.
pub fn monitor(data: &[u8]) {
    use boardbench::system::monitor::celsius;
    use boardbench::system::sysfs::meminfo_kib;
    use boardbench::system::validity::VmCounts;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (temp, held) = peak_during(|| celsius(text));
    assert_bounded("celsius", held, data.len(), 8, 4096);
    if let Some(c) = temp {
        assert!((-273.15..=1000.0).contains(&c), "{c} °C from {text:?}");
        let milli = (c * 1000.0).round() as i64;
        assert_eq!(celsius(&milli.to_string()), Some(c), "{text:?}");
    }
    let (vm, held) = peak_during(|| VmCounts::parse(text));
    assert_bounded("VmCounts::parse", held, data.len(), 8, 4096);
    let value = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse::<u64>().ok())?
        })
    };
    if let Some(vm) = vm {
        assert!(
            value("pswpin").is_some() || value("pswpout").is_some(),
            "{text:?}"
        );
        assert_eq!(vm.swapped_in, value("pswpin").unwrap_or(0), "{text:?}");
        assert_eq!(vm.swapped_out, value("pswpout").unwrap_or(0), "{text:?}");
    } else {
        assert!(
            value("pswpin").is_none() && value("pswpout").is_none(),
            "{text:?}"
        );
    }
    let (available, held) = peak_during(|| meminfo_kib(text, "MemAvailable"));
    assert_bounded("meminfo_kib", held, data.len(), 8, 4096);
    if available.is_some() {
        assert!(
            text.lines().any(|l| l.starts_with("MemAvailable:")),
            "{text:?}"
        );
    }
}
