//! MessagePack (<https://github.com/msgpack/msgpack/blob/master/spec.md>): the value type
//! and its encoder and decoder. Any MessagePack library reads what this writes.

use super::error::WireError;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    /// Only for unsigned values above i64::MAX.
    UInt(u64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
}

pub fn encode(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Nil => out.push(0xc0),
        Value::Bool(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Int(i) => write_int(out, *i),
        Value::UInt(u) => write_uint(out, *u),
        Value::Float(f) => {
            out.push(0xcb);
            out.extend_from_slice(&f.to_be_bytes());
        }
        Value::Str(s) => write_str(out, s),
        Value::Bin(b) => write_bin(out, b),
        Value::Array(items) => {
            write_array_len(out, items.len());
            for i in items {
                encode(i, out);
            }
        }
        Value::Map(pairs) => {
            write_len(out, pairs.len(), 0x80, 15, 0xde);
            for (k, v) in pairs {
                encode(k, out);
                encode(v, out);
            }
        }
    }
}

/// The shortest encoding of a signed integer, as the spec recommends.
pub fn write_int(out: &mut Vec<u8>, i: i64) {
    if i >= 0 {
        return write_uint(out, i as u64);
    }
    if i >= -32 {
        out.push(i as u8);
    } else if i >= i8::MIN as i64 {
        out.extend_from_slice(&[0xd0, i as u8]);
    } else if i >= i16::MIN as i64 {
        out.push(0xd1);
        out.extend_from_slice(&(i as i16).to_be_bytes());
    } else if i >= i32::MIN as i64 {
        out.push(0xd2);
        out.extend_from_slice(&(i as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&i.to_be_bytes());
    }
}

pub fn write_uint(out: &mut Vec<u8>, u: u64) {
    if u < 128 {
        out.push(u as u8);
    } else if u <= u8::MAX as u64 {
        out.extend_from_slice(&[0xcc, u as u8]);
    } else if u <= u16::MAX as u64 {
        out.push(0xcd);
        out.extend_from_slice(&(u as u16).to_be_bytes());
    } else if u <= u32::MAX as u64 {
        out.push(0xce);
        out.extend_from_slice(&(u as u32).to_be_bytes());
    } else {
        out.push(0xcf);
        out.extend_from_slice(&u.to_be_bytes());
    }
}

pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let n = s.len();
    if n < 32 {
        out.push(0xa0 | n as u8);
    } else if n <= u8::MAX as usize {
        out.extend_from_slice(&[0xd9, n as u8]);
    } else if n <= u16::MAX as usize {
        out.push(0xda);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
    out.extend_from_slice(s.as_bytes());
}

pub fn write_bin(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len();
    if n <= u8::MAX as usize {
        out.extend_from_slice(&[0xc4, n as u8]);
    } else if n <= u16::MAX as usize {
        out.push(0xc5);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0xc6);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
    out.extend_from_slice(b);
}

pub fn write_array_len(out: &mut Vec<u8>, n: usize) {
    write_len(out, n, 0x90, 15, 0xdc);
}

/// fixarray/fixmap (`fix | n` up to `fix_max`), else the 16- or 32-bit form.
fn write_len(out: &mut Vec<u8>, n: usize, fix: u8, fix_max: usize, marker16: u8) {
    if n <= fix_max {
        out.push(fix | n as u8);
    } else if n <= u16::MAX as usize {
        out.push(marker16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(marker16 + 1);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// Decodes one value from the front of `buf`; returns it and the bytes it used.
/// Lengths are checked against the bytes present before anything is allocated, and
/// nesting is limited, so hostile input cannot exhaust memory or the stack.
pub fn decode(buf: &[u8]) -> Result<(Value, usize), WireError> {
    let mut d = Decoder {
        buf,
        pos: 0,
        owed: 0,
    };
    let v = d.value(0)?;
    Ok((v, d.pos))
}

/// The element count of the array that starts `buf`, read from its header alone (None
/// when `buf` does not start with an array): a caller that knows how many elements it
/// takes refuses any other count before a single element is decoded.
pub fn array_len(buf: &[u8]) -> Option<usize> {
    let mut d = Decoder {
        buf,
        pos: 0,
        owed: 0,
    };
    match d.take(1).ok()?[0] {
        marker @ 0x90..=0x9f => Some((marker & 0x0f) as usize),
        marker @ (0xdc | 0xdd) => d.be(2 << (marker - 0xdc)).ok().map(|n| n as usize),
        _ => None,
    }
}

/// Decodes exactly one value that fills `buf`.
pub fn decode_all(buf: &[u8]) -> Result<Value, WireError> {
    let (v, used) = decode(buf)?;
    if used != buf.len() {
        return Err(WireError::Malformed(format!(
            "{} bytes after the value",
            buf.len() - used
        )));
    }
    Ok(v)
}

struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Elements that open containers have announced and not yet begun.
    owed: usize,
}

impl Decoder<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], WireError> {
        if self.buf.len() - self.pos < n {
            return Err(WireError::Malformed(format!(
                "needs {n} bytes at offset {}, has {}",
                self.pos,
                self.buf.len() - self.pos
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn be(&mut self, n: usize) -> Result<u64, WireError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | b as u64))
    }

    fn value(&mut self, depth: usize) -> Result<Value, WireError> {
        if depth > 64 {
            return Err(WireError::Malformed("nesting deeper than 64".into()));
        }
        let marker = self.take(1)?[0];
        Ok(match marker {
            0x00..=0x7f => Value::Int(marker as i64),
            0x80..=0x8f => self.map((marker & 0x0f) as usize, depth)?,
            0x90..=0x9f => self.array((marker & 0x0f) as usize, depth)?,
            0xa0..=0xbf => self.str((marker & 0x1f) as usize)?,
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.be(1 << (marker - 0xc4))? as usize;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xca => Value::Float(f32::from_bits(self.be(4)? as u32) as f64),
            0xcb => Value::Float(f64::from_bits(self.be(8)?)),
            0xcc..=0xcf => {
                let u = self.be(1 << (marker - 0xcc))?;
                i64::try_from(u).map_or(Value::UInt(u), Value::Int)
            }
            0xd0 => Value::Int(self.be(1)? as i8 as i64),
            0xd1 => Value::Int(self.be(2)? as i16 as i64),
            0xd2 => Value::Int(self.be(4)? as i32 as i64),
            0xd3 => Value::Int(self.be(8)? as i64),
            0xd9..=0xdb => {
                let n = self.be(1 << (marker - 0xd9))? as usize;
                self.str(n)?
            }
            0xdc | 0xdd => {
                let n = self.be(2 << (marker - 0xdc))? as usize;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.be(2 << (marker - 0xde))? as usize;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int(marker as i8 as i64),
            other => {
                return Err(WireError::Malformed(format!(
                    "unsupported MessagePack type 0x{other:02x}"
                )))
            }
        })
    }

    fn str(&mut self, n: usize) -> Result<Value, WireError> {
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec())
            .map(Value::Str)
            .map_err(|_| WireError::Malformed("string is not UTF-8".into()))
    }

    /// Promises `elements` more, each at least one byte: with the elements the enclosing
    /// containers still owe, they must fit in the bytes left. So the values allocated
    /// for (at their exact count) never outnumber the input's bytes, however deep the
    /// nesting (found by the messagepack fuzz target: twelve-pair maps nested eight deep
    /// each reserved against the whole rest of a 33-byte input).
    fn promise(&mut self, elements: usize, what: &str) -> Result<(), WireError> {
        let left = self.buf.len() - self.pos;
        match elements.checked_add(self.owed) {
            Some(owed) if owed <= left => {
                self.owed = owed;
                Ok(())
            }
            _ => Err(WireError::Malformed(format!(
                "{what} in {left} bytes, {} of them owed to enclosing containers",
                self.owed.min(left)
            ))),
        }
    }

    /// One promised element, decoded.
    fn element(&mut self, depth: usize) -> Result<Value, WireError> {
        self.owed -= 1;
        self.value(depth + 1)
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Value, WireError> {
        self.promise(n, &format!("array of {n} elements"))?;
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.element(depth)?);
        }
        Ok(Value::Array(items))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value, WireError> {
        self.promise(n.saturating_mul(2), &format!("map of {n} pairs"))?;
        let mut pairs = Vec::with_capacity(n);
        for _ in 0..n {
            pairs.push((self.element(depth)?, self.element(depth)?));
        }
        Ok(Value::Map(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msgpack_matches_the_spec_bytes() {
        let cases: Vec<(Value, Vec<u8>)> = vec![
            (Value::Nil, vec![0xc0]),
            (Value::Bool(true), vec![0xc3]),
            (Value::Int(5), vec![0x05]),
            (Value::Int(-1), vec![0xff]),
            (Value::Int(-33), vec![0xd0, 0xdf]),
            (Value::Int(200), vec![0xcc, 0xc8]),
            (Value::Int(70000), vec![0xce, 0x00, 0x01, 0x11, 0x70]),
            (
                Value::UInt(u64::MAX),
                vec![0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            ),
            (Value::Str("foo".into()), vec![0xa3, b'f', b'o', b'o']),
            (Value::Bin(vec![1, 2]), vec![0xc4, 0x02, 1, 2]),
            (
                Value::Array(vec![Value::Int(1), Value::Int(2)]),
                vec![0x92, 0x01, 0x02],
            ),
            (
                Value::Map(vec![(Value::Str("a".into()), Value::Int(1))]),
                vec![0x81, 0xa1, b'a', 0x01],
            ),
            (Value::Float(1.5), vec![0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0]),
        ];
        for (v, bytes) in cases {
            let mut out = Vec::new();
            encode(&v, &mut out);
            assert_eq!(out, bytes, "{v:?}");
            assert_eq!(decode_all(&bytes).unwrap(), v);
        }
        let long: Vec<Value> = (0..20).map(Value::Int).collect();
        let mut out = Vec::new();
        encode(&Value::Array(long.clone()), &mut out);
        assert_eq!(&out[..3], &[0xdc, 0x00, 20]);
        assert_eq!(decode_all(&out).unwrap(), Value::Array(long));
    }

    #[test]
    fn msgpack_rejects_hostile_input_without_allocating() {
        // An array claiming 4 billion elements in 5 bytes, a bin claiming 4 GiB.
        assert!(decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[0xc6, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[0xa5, b'a']).is_err());
        assert!(decode(&[0xc1]).is_err());
        assert!(decode(&[0xa2, 0xff, 0xfe])
            .unwrap_err()
            .to_string()
            .contains("UTF-8"));
        let deep = vec![0x91; 100];
        assert!(decode(&deep).unwrap_err().to_string().contains("nesting"));
        assert!(decode_all(&[0x01, 0x02]).is_err());
    }
}
