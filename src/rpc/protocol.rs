//! bb-rpc's methods on top of the shared wire format (`crate::wire`): their numbers, the
//! flag that says which codec a payload is in, and the payload of every request and
//! reply in both codecs, `raw` (fixed little-endian layouts) and `msgpack` (MessagePack).
//! The server and the clients both encode and decode through here.

use crate::wire::{self, msgpack, Header, HEADER_LEN};

pub const ECHO: u16 = 1;
pub const ADD: u16 = 2;
pub const STATS: u16 = 3;

/// `flags` bit: the payload is MessagePack (else the raw layout). A reply carries the
/// request's bit.
pub const FLAG_MSGPACK: u8 = 0x80;

/// The payload encoding, chosen per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    Raw,
    Msgpack,
}

impl Codec {
    pub fn parse(s: &str) -> Result<Codec, String> {
        match s {
            "raw" => Ok(Codec::Raw),
            "msgpack" => Ok(Codec::Msgpack),
            _ => Err(format!("unknown codec '{s}' (expected raw or msgpack)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Codec::Raw => "raw",
            Codec::Msgpack => "msgpack",
        }
    }

    pub fn flag(self) -> u8 {
        match self {
            Codec::Raw => 0,
            Codec::Msgpack => FLAG_MSGPACK,
        }
    }

    pub fn of_flags(flags: u8) -> Codec {
        if flags & FLAG_MSGPACK != 0 {
            Codec::Msgpack
        } else {
            Codec::Raw
        }
    }
}

/// A request's arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Call<'a> {
    Echo(&'a [u8]),
    Add(i64, i64),
    Stats,
}

impl Call<'_> {
    pub fn method(&self) -> u16 {
        match self {
            Call::Echo(_) => ECHO,
            Call::Add(..) => ADD,
            Call::Stats => STATS,
        }
    }
}

/// What `stats()` returns: the server's own CPU time (getrusage) and its counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStats {
    pub user_us: u64,
    pub sys_us: u64,
    /// Connections accepted since the server started.
    pub connections: u64,
    pub echo_calls: u64,
    pub add_calls: u64,
    /// `stats()` calls answered, this one included.
    pub stats_calls: u64,
    /// Error replies sent and connections closed for a fault.
    pub errors: u64,
}

/// The field names of `stats()`'s MessagePack map, in the raw layout's order.
pub const STATS_FIELDS: [&str; 7] = [
    "user_us",
    "sys_us",
    "connections",
    "echo_calls",
    "add_calls",
    "stats_calls",
    "errors",
];

impl ServerStats {
    fn fields(&self) -> [u64; 7] {
        [
            self.user_us,
            self.sys_us,
            self.connections,
            self.echo_calls,
            self.add_calls,
            self.stats_calls,
            self.errors,
        ]
    }

    fn from_fields(f: [u64; 7]) -> ServerStats {
        ServerStats {
            user_us: f[0],
            sys_us: f[1],
            connections: f[2],
            echo_calls: f[3],
            add_calls: f[4],
            stats_calls: f[5],
            errors: f[6],
        }
    }

    /// echo and add calls: the calls a benchmark makes.
    pub fn work_calls(&self) -> u64 {
        self.echo_calls + self.add_calls
    }
}

/// A reply's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply<'a> {
    Echo(&'a [u8]),
    Add(i64),
    Stats(ServerStats),
}

/// Appends a frame to `out`: the header, then the payload that `body` writes; the
/// length is filled in afterwards, so the payload is written once, in place.
pub fn push_frame(out: &mut Vec<u8>, header: Header, body: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.extend_from_slice(&[0u8; HEADER_LEN]);
    body(out);
    let len = (out.len() - start - HEADER_LEN) as u32;
    out[start..start + HEADER_LEN].copy_from_slice(&Header { len, ..header }.encode());
}

/// Appends a request frame.
pub fn push_request(out: &mut Vec<u8>, id: u32, codec: Codec, call: &Call) {
    let header = Header {
        id,
        method: call.method(),
        flags: codec.flag(),
        ..Header::default()
    };
    push_frame(out, header, |b| match (codec, call) {
        (Codec::Raw, Call::Echo(data)) => b.extend_from_slice(data),
        (Codec::Raw, Call::Add(x, y)) => {
            b.extend_from_slice(&x.to_le_bytes());
            b.extend_from_slice(&y.to_le_bytes());
        }
        (Codec::Raw, Call::Stats) => {}
        (Codec::Msgpack, Call::Echo(data)) => msgpack::write_bin(b, data),
        (Codec::Msgpack, Call::Add(x, y)) => {
            msgpack::write_array_len(b, 2);
            msgpack::write_int(b, *x);
            msgpack::write_int(b, *y);
        }
        (Codec::Msgpack, Call::Stats) => b.push(0xc0),
    });
}

/// Appends a successful reply frame to request `request`.
pub fn push_reply(out: &mut Vec<u8>, request: &Header, reply: &Reply) {
    let codec = Codec::of_flags(request.flags);
    let header = Header {
        id: request.id,
        method: request.method,
        flags: wire::FLAG_RESPONSE | codec.flag(),
        status: wire::status::OK,
        len: 0,
    };
    push_frame(out, header, |b| match (codec, reply) {
        (Codec::Raw, Reply::Echo(data)) => b.extend_from_slice(data),
        (Codec::Raw, Reply::Add(sum)) => b.extend_from_slice(&sum.to_le_bytes()),
        (Codec::Raw, Reply::Stats(s)) => {
            for f in s.fields() {
                b.extend_from_slice(&f.to_le_bytes());
            }
        }
        (Codec::Msgpack, Reply::Echo(data)) => msgpack::write_bin(b, data),
        (Codec::Msgpack, Reply::Add(sum)) => msgpack::write_int(b, *sum),
        (Codec::Msgpack, Reply::Stats(s)) => {
            b.push(0x80 | STATS_FIELDS.len() as u8);
            for (name, value) in STATS_FIELDS.iter().zip(s.fields()) {
                msgpack::write_str(b, name);
                msgpack::write_uint(b, value);
            }
        }
    });
}

/// The raw echo requests at the front of `buf`, whole and well formed (no flags, status
/// 0, payloads of at most `max` bytes): how many, and how many bytes together. Their
/// replies are the same bytes with the response flag in each header, so a server
/// answers such a run with one copy ([`push_raw_echo_replies`]).
pub fn raw_echo_run(buf: &[u8], max: u32) -> (u64, usize) {
    let (mut calls, mut at) = (0, 0);
    while let Some((h, length)) = buf.get(at..).and_then(|b| wire::buffered_frame(b, max)) {
        if h.method != ECHO || h.flags != 0 || h.status != 0 {
            break;
        }
        calls += 1;
        at += length;
    }
    (calls, at)
}

/// Appends the replies to `run`, raw echo requests found by [`raw_echo_run`]: what
/// [`push_reply`] appends for each, in one copy.
pub fn push_raw_echo_replies(out: &mut Vec<u8>, run: &[u8]) {
    let start = out.len();
    out.extend_from_slice(run);
    let mut at = start;
    while at < out.len() {
        Header::set_flags(&mut out[at..], wire::FLAG_RESPONSE);
        at += HEADER_LEN + Header::len_of(&out[at..]) as usize;
    }
}

/// Appends an error reply: `status` and a UTF-8 message as the payload, in either codec.
pub fn push_error(out: &mut Vec<u8>, request: &Header, status: u8, message: &str) {
    let header = Header {
        id: request.id,
        method: request.method,
        flags: wire::FLAG_RESPONSE | (request.flags & FLAG_MSGPACK),
        status,
        len: 0,
    };
    push_frame(out, header, |b| b.extend_from_slice(message.as_bytes()));
}

/// A MessagePack bin that fills `buf` exactly: the fast path of echo, without building a
/// `Value`.
fn whole_bin(buf: &[u8]) -> Option<&[u8]> {
    let (&marker, rest) = buf.split_first()?;
    let width = match marker {
        0xc4 => 1,
        0xc5 => 2,
        0xc6 => 4,
        _ => return None,
    };
    let (len, data) = rest.split_at_checked(width)?;
    let n = len.iter().fold(0usize, |acc, &b| acc << 8 | b as usize);
    (data.len() == n).then_some(data)
}

fn le_i64(b: &[u8]) -> i64 {
    i64::from_le_bytes(b.try_into().expect("8 bytes"))
}

/// `add`'s MessagePack arguments, an array whose header said two elements.
fn add_msgpack(payload: &[u8]) -> Result<Call<'_>, String> {
    match msgpack::decode_all(payload).map_err(|e| e.to_string())? {
        msgpack::Value::Array(v) if v.len() == 2 => match (v[0].as_i64(), v[1].as_i64()) {
            (Some(a), Some(b)) => Ok(Call::Add(a, b)),
            _ => Err("add takes two integers".into()),
        },
        _ => Err("add takes an array of two integers".into()),
    }
}

/// Decodes a request's arguments; an error is the message of a BAD_ARGUMENTS reply.
pub fn decode_call<'a>(header: &Header, payload: &'a [u8]) -> Result<Call<'a>, String> {
    let codec = Codec::of_flags(header.flags);
    match (header.method, codec) {
        (ECHO, Codec::Raw) => Ok(Call::Echo(payload)),
        (ECHO, Codec::Msgpack) => whole_bin(payload)
            .map(Call::Echo)
            .ok_or_else(|| "echo takes one MessagePack bin".to_string()),
        (ADD, Codec::Raw) if payload.len() == 16 => {
            Ok(Call::Add(le_i64(&payload[..8]), le_i64(&payload[8..])))
        }
        (ADD, Codec::Raw) => Err(format!(
            "add takes 16 bytes (two i64), got {}",
            payload.len()
        )),
        // Two ints, known from the array's header: a longer array (16M one-byte ints
        // would decode to 32 times the frame) is refused before it is decoded.
        (ADD, Codec::Msgpack) => match msgpack::array_len(payload) {
            Some(2) => add_msgpack(payload),
            Some(n) => Err(format!(
                "add takes an array of two integers, got {n} elements"
            )),
            None => Err("add takes an array of two integers".into()),
        },
        (STATS, Codec::Raw) if payload.is_empty() => Ok(Call::Stats),
        (STATS, Codec::Msgpack) if payload == [0xc0] || payload.is_empty() => Ok(Call::Stats),
        (STATS, _) => Err("stats takes no arguments".into()),
        (other, _) => Err(format!("unknown method {other}")),
    }
}

/// Decodes a successful reply to a call of `method` in `codec`.
pub fn decode_reply(method: u16, codec: Codec, payload: &[u8]) -> Result<Reply<'_>, String> {
    let bad = |what: &str| format!("malformed {what} reply ({} bytes)", payload.len());
    match (method, codec) {
        (ECHO, Codec::Raw) => Ok(Reply::Echo(payload)),
        (ECHO, Codec::Msgpack) => whole_bin(payload)
            .map(Reply::Echo)
            .ok_or_else(|| bad("echo")),
        (ADD, Codec::Raw) if payload.len() == 8 => Ok(Reply::Add(le_i64(payload))),
        (ADD, Codec::Msgpack) => msgpack::decode_all(payload)
            .ok()
            .and_then(|v| v.as_i64())
            .map(Reply::Add)
            .ok_or_else(|| bad("add")),
        (STATS, Codec::Raw) if payload.len() == 56 => {
            let mut f = [0u64; 7];
            for (i, chunk) in payload.chunks_exact(8).enumerate() {
                f[i] = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            }
            Ok(Reply::Stats(ServerStats::from_fields(f)))
        }
        (STATS, Codec::Msgpack) => {
            let Ok(msgpack::Value::Map(pairs)) = msgpack::decode_all(payload) else {
                return Err(bad("stats"));
            };
            let mut f = [0u64; 7];
            for (i, name) in STATS_FIELDS.iter().enumerate() {
                let value = pairs.iter().find_map(|(k, v)| match (k, v) {
                    (msgpack::Value::Str(k), msgpack::Value::Int(n)) if k == name => Some(*n),
                    _ => None,
                });
                f[i] = value
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| format!("stats reply lacks a non-negative integer '{name}'"))?;
            }
            Ok(Reply::Stats(ServerStats::from_fields(f)))
        }
        _ => Err(bad("unexpected")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_of(out: &[u8]) -> (Header, &[u8]) {
        let h = Header::decode(out[..HEADER_LEN].try_into().unwrap());
        assert_eq!(h.len as usize, out.len() - HEADER_LEN);
        (h, &out[HEADER_LEN..])
    }

    #[test]
    fn every_call_and_reply_round_trips_in_both_codecs() {
        let stats = ServerStats {
            user_us: 1,
            sys_us: 2,
            connections: 3,
            echo_calls: 4,
            add_calls: u64::MAX >> 1,
            stats_calls: 6,
            errors: 7,
        };
        for codec in [Codec::Raw, Codec::Msgpack] {
            let data = vec![7u8; 70_000];
            for (call, reply) in [
                (Call::Echo(b"hi"), Reply::Echo(b"hi")),
                (Call::Echo(&data), Reply::Echo(&data)),
                (
                    Call::Add(-5, i64::MAX),
                    Reply::Add(-5i64.wrapping_add(i64::MAX)),
                ),
                (Call::Stats, Reply::Stats(stats)),
            ] {
                let mut out = Vec::new();
                push_request(&mut out, 9, codec, &call);
                let (h, payload) = frame_of(&out);
                assert_eq!(
                    (h.id, h.method, Codec::of_flags(h.flags)),
                    (9, call.method(), codec)
                );
                assert_eq!(decode_call(&h, payload).unwrap(), call);
                let mut back = Vec::new();
                push_reply(&mut back, &h, &reply);
                let (rh, rp) = frame_of(&back);
                assert_eq!(
                    (rh.id, rh.flags & wire::FLAG_RESPONSE),
                    (9, wire::FLAG_RESPONSE)
                );
                assert_eq!(decode_reply(rh.method, codec, rp).unwrap(), reply);
            }
        }
    }

    #[test]
    fn a_run_of_raw_echoes_is_answered_as_each_would_be() {
        let mut buf = Vec::new();
        for (id, data) in [(7u32, &b"abc"[..]), (8, b""), (9, &[5u8; 300][..])] {
            push_request(&mut buf, id, Codec::Raw, &Call::Echo(data));
        }
        let run_bytes = buf.len();
        // What ends the run: a MessagePack echo, an add, a flag, a frame over the limit,
        // a frame not all there.
        let (mut msgpack_echo, mut add) = (Vec::new(), Vec::new());
        push_request(&mut msgpack_echo, 10, Codec::Msgpack, &Call::Echo(b"x"));
        push_request(&mut add, 11, Codec::Raw, &Call::Add(1, 2));
        for end in [msgpack_echo, add] {
            let all = [&buf[..], &end[..]].concat();
            assert_eq!(raw_echo_run(&all, 300), (3, run_bytes));
            assert_eq!(raw_echo_run(&all, 299), (2, run_bytes - HEADER_LEN - 300));
            assert_eq!(raw_echo_run(&all[..run_bytes - 1], 300).0, 2, "cut short");
            let mut flagged = all.clone();
            Header::set_flags(&mut flagged, wire::FLAG_RESPONSE);
            assert_eq!(raw_echo_run(&flagged, 300), (0, 0));
        }
        let mut got = b"before".to_vec();
        push_raw_echo_replies(&mut got, &buf);
        let mut want = b"before".to_vec();
        let mut at = 0;
        while let Some((h, length)) = wire::buffered_frame(&buf[at..], 300) {
            let data = &buf[at + HEADER_LEN..at + length];
            push_reply(&mut want, &h, &Reply::Echo(data));
            at += length;
        }
        assert!(got == want);
    }

    #[test]
    fn msgpack_payloads_are_the_spec_bytes() {
        let mut out = Vec::new();
        push_request(&mut out, 1, Codec::Msgpack, &Call::Add(1, -1));
        assert_eq!(&out[HEADER_LEN..], &[0x92, 0x01, 0xff]);
        out.clear();
        push_request(&mut out, 1, Codec::Msgpack, &Call::Echo(b"ab"));
        assert_eq!(&out[HEADER_LEN..], &[0xc4, 0x02, b'a', b'b']);
        assert_eq!(out[10], FLAG_MSGPACK);
    }

    #[test]
    fn bad_arguments_are_reported_not_panicked_on() {
        let h = |method, flags| Header {
            method,
            flags,
            ..Header::default()
        };
        assert!(decode_call(&h(ADD, 0), b"short")
            .unwrap_err()
            .contains("16 bytes"));
        assert!(decode_call(&h(ADD, FLAG_MSGPACK), &[0x92, 0x01]).is_err());
        assert!(decode_call(&h(ADD, FLAG_MSGPACK), &[0x92, 0xa1, b'x', 0x01]).is_err());
        assert!(decode_call(&h(ECHO, FLAG_MSGPACK), &[0xc4, 0x05, 1]).is_err());
        // An array of a million one-byte ints: refused from its header, by its count.
        let mut big = vec![0xdd, 0x00, 0x0f, 0x42, 0x40];
        big.resize(5 + 1_000_000, 0x01);
        assert_eq!(
            decode_call(&h(ADD, FLAG_MSGPACK), &big).unwrap_err(),
            "add takes an array of two integers, got 1000000 elements"
        );
        assert_eq!(
            decode_call(&h(ADD, FLAG_MSGPACK), &[0x92, 0x01, 0x02]).unwrap(),
            Call::Add(1, 2)
        );
        assert_eq!(msgpack::array_len(&[0xdc, 0x00, 0x02, 1, 2]), Some(2));
        assert_eq!(msgpack::array_len(&[0x01]), None);
        assert!(decode_call(&h(ECHO, FLAG_MSGPACK), &[0xc5]).is_err());
        assert!(decode_call(&h(STATS, 0), b"x").is_err());
        assert!(decode_call(&h(99, 0), b"")
            .unwrap_err()
            .contains("unknown method 99"));
        assert!(decode_reply(STATS, Codec::Msgpack, &[0x80])
            .unwrap_err()
            .contains("user_us"));
        assert!(decode_reply(ADD, Codec::Raw, &[1, 2]).is_err());
    }
}
