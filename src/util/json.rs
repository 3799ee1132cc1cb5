//! A small JSON value with a pretty printer and a parser: enough for JMH's result layout,
//! without a serialization framework in every static binary. NaN and infinities are
//! written as the strings "NaN", "Infinity" and "-Infinity", as JMH writes them.

use std::fmt::Write;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    /// An array of numbers, from [`Json::parse_compact`] only: 8 bytes a number rather
    /// than a value each (JMH's rawData can hold millions). JMH's strings for the
    /// non-finite ("NaN", "+INF", ...) are numbers here, as [`Json::as_f64`] reads them.
    Nums(Vec<f64>),
    /// An array of two-number arrays (JMH's rawDataHistogram buckets, `[value, count]`),
    /// from [`Json::parse_compact`] only.
    Pairs(Vec<[f64; 2]>),
    /// An object, in insertion order.
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// Builds an object from (key, value) pairs.
    pub fn obj<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Json)>) -> Json {
        Json::Obj(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// A number, or null when absent.
    pub fn opt_num(v: Option<f64>) -> Json {
        v.map_or(Json::Null, Json::Num)
    }

    /// A string, or null when absent.
    pub fn opt_str(v: Option<&str>) -> Json {
        v.map_or(Json::Null, Json::str)
    }

    /// The value under `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        // A key given twice is its last, as Python's json.loads and JavaScript's
        // JSON.parse read it (botocore, the AWS CLI, the JMH viewers).
        match self {
            Json::Obj(pairs) => pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of `key` in an object, to change or take.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Obj(pairs) => pairs
                .iter_mut()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// A number, reading the strings JMH writes for the others back as numbers: "NaN",
    /// "+INF" and "-INF" (and "Infinity", "-Infinity", as this module writes them).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Num(n) => Some(*n),
            Json::Str(s) if s == "NaN" => Some(f64::NAN),
            Json::Str(s) if s == "Infinity" || s == "+INF" => Some(f64::INFINITY),
            Json::Str(s) if s == "-Infinity" || s == "-INF" => Some(f64::NEG_INFINITY),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Arr(a) => Some(a),
            _ => None,
        }
    }

    /// Pretty-printed with two-space indentation, ending in a newline.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn write(&self, out: &mut String, depth: usize) {
        let pad = |out: &mut String, d: usize| out.extend(std::iter::repeat_n("  ", d));
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => write_number(out, *n),
            Json::Str(s) => write_string(out, s),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Nums(v) => Json::Arr(v.iter().map(|&n| Json::Num(n)).collect()).write(out, depth),
            Json::Pairs(v) => Json::Arr(
                v.iter()
                    .map(|p| Json::Arr(vec![Json::Num(p[0]), Json::Num(p[1])]))
                    .collect(),
            )
            .write(out, depth),
            Json::Obj(pairs) if pairs.is_empty() => out.push_str("{}"),
            Json::Arr(items) => {
                // Arrays of plain numbers (raw data) stay on one line, as JMH writes them.
                let flat = items
                    .iter()
                    .all(|v| matches!(v, Json::Num(_) | Json::Str(_) | Json::Null));
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if flat {
                        out.push(' ');
                    } else {
                        out.push('\n');
                        pad(out, depth + 1);
                    }
                    v.write(out, depth + 1);
                }
                if flat {
                    out.push_str(" ]");
                } else {
                    out.push('\n');
                    pad(out, depth);
                    out.push(']');
                }
            }
            Json::Obj(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    out.push_str(if i > 0 { ",\n" } else { "\n" });
                    pad(out, depth + 1);
                    write_string(out, k);
                    out.push_str(" : ");
                    v.write(out, depth + 1);
                }
                out.push('\n');
                pad(out, depth);
                out.push('}');
            }
        }
    }

    /// Parses a JSON document (RFC 8259).
    pub fn parse(text: &str) -> Result<Json, String> {
        Json::parse_with(text, false)
    }

    /// As [`Json::parse`], with arrays of numbers as [`Json::Nums`] and arrays of
    /// two-number arrays as [`Json::Pairs`]: a document of millions of samples held in
    /// a small multiple of its size (a value each would take 32 bytes a number and more).
    pub fn parse_compact(text: &str) -> Result<Json, String> {
        Json::parse_with(text, true)
    }

    fn parse_with(text: &str, compact: bool) -> Result<Json, String> {
        let mut p = Parser {
            bytes: text.as_bytes(),
            pos: 0,
            compact,
        };
        let v = p.value(0)?;
        p.skip_ws();
        if p.pos != p.bytes.len() {
            return Err(p.error("trailing characters after the JSON value"));
        }
        Ok(v)
    }
}

fn write_number(out: &mut String, n: f64) {
    if n.is_nan() {
        out.push_str("\"NaN\"");
    } else if n.is_infinite() {
        out.push_str(if n > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
    } else if n == n.trunc() && n.abs() < 1e15 {
        let _ = write!(out, "{}", n as i64);
    } else {
        let _ = write!(out, "{n}");
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Whether arrays of numbers are packed ([`Json::parse_compact`]).
    compact: bool,
}

/// A compact array as it is read: numbers, pairs of numbers, or values, whichever its
/// items so far all are.
enum Items {
    Empty,
    Nums(Vec<f64>),
    Pairs(Vec<[f64; 2]>),
    Values(Vec<Json>),
}

impl Items {
    fn push(&mut self, v: Json) {
        let pair = |v: &Json| match v {
            Json::Nums(p) if p.len() == 2 => Some([p[0], p[1]]),
            _ => None,
        };
        match self {
            Items::Values(vs) => return vs.push(v),
            Items::Empty => {
                if let Some(n) = v.as_f64() {
                    return *self = Items::Nums(vec![n]);
                }
                if let Some(p) = pair(&v) {
                    return *self = Items::Pairs(vec![p]);
                }
            }
            Items::Nums(ns) => {
                if let Some(n) = v.as_f64() {
                    return ns.push(n);
                }
            }
            Items::Pairs(ps) => {
                if let Some(p) = pair(&v) {
                    return ps.push(p);
                }
            }
        }
        let mut values = std::mem::replace(self, Items::Empty).into_values();
        values.push(v);
        *self = Items::Values(values);
    }

    fn into_values(self) -> Vec<Json> {
        match self {
            Items::Empty => Vec::new(),
            Items::Nums(ns) => ns.into_iter().map(Json::Num).collect(),
            Items::Pairs(ps) => ps.into_iter().map(|p| Json::Nums(p.to_vec())).collect(),
            Items::Values(vs) => vs,
        }
    }

    fn into_json(self) -> Json {
        match self {
            Items::Nums(mut ns) => {
                ns.shrink_to_fit();
                Json::Nums(ns)
            }
            Items::Pairs(mut ps) => {
                ps.shrink_to_fit();
                Json::Pairs(ps)
            }
            other => Json::Arr(other.into_values()),
        }
    }
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        let line = 1 + self.bytes[..self.pos.min(self.bytes.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        format!("{what} at line {line} (byte {})", self.pos)
    }

    fn skip_ws(&mut self) {
        while self.pos < self.bytes.len()
            && matches!(self.bytes[self.pos], b' ' | b'\t' | b'\n' | b'\r')
        {
            self.pos += 1;
        }
    }

    fn expect(&mut self, literal: &str, value: Json) -> Result<Json, String> {
        if self.bytes[self.pos..].starts_with(literal.as_bytes()) {
            self.pos += literal.len();
            Ok(value)
        } else {
            Err(self.error("invalid literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > 128 {
            return Err(self.error("nesting too deep"));
        }
        self.skip_ws();
        match self.bytes.get(self.pos) {
            None => Err(self.error("unexpected end of input")),
            Some(b'n') => self.expect("null", Json::Null),
            Some(b't') => self.expect("true", Json::Bool(true)),
            Some(b'f') => self.expect("false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::Str),
            Some(b'[') => {
                self.pos += 1;
                let mut items = if self.compact {
                    Items::Empty
                } else {
                    Items::Values(Vec::new())
                };
                self.skip_ws();
                if self.bytes.get(self.pos) == Some(&b']') {
                    self.pos += 1;
                    return Ok(Json::Arr(Vec::new()));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    match self.bytes.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(items.into_json());
                        }
                        _ => return Err(self.error("expected ',' or ']'")),
                    }
                }
            }
            Some(b'{') => {
                self.pos += 1;
                let mut pairs = Vec::new();
                self.skip_ws();
                if self.bytes.get(self.pos) == Some(&b'}') {
                    self.pos += 1;
                    return Ok(Json::Obj(pairs));
                }
                loop {
                    self.skip_ws();
                    if self.bytes.get(self.pos) != Some(&b'"') {
                        return Err(self.error("expected a string key"));
                    }
                    let key = self.string()?;
                    self.skip_ws();
                    if self.bytes.get(self.pos) != Some(&b':') {
                        return Err(self.error("expected ':'"));
                    }
                    self.pos += 1;
                    pairs.push((key, self.value(depth + 1)?));
                    self.skip_ws();
                    match self.bytes.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Json::Obj(pairs));
                        }
                        _ => return Err(self.error("expected ',' or '}'")),
                    }
                }
            }
            Some(_) => self.number(),
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        while self.pos < self.bytes.len()
            && matches!(
                self.bytes[self.pos],
                b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'
            )
        {
            self.pos += 1;
        }
        std::str::from_utf8(&self.bytes[start..self.pos])
            .ok()
            .filter(|s| !s.is_empty())
            .and_then(|s| s.parse::<f64>().ok())
            .map(Json::Num)
            .ok_or_else(|| {
                self.pos = start;
                self.error("invalid value")
            })
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while self.pos < self.bytes.len() && !matches!(self.bytes[self.pos], b'"' | b'\\') {
                self.pos += 1;
            }
            out.push_str(
                std::str::from_utf8(&self.bytes[start..self.pos])
                    .map_err(|_| self.error("invalid UTF-8"))?,
            );
            match self.bytes.get(self.pos) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(_) => {
                    let esc = *self
                        .bytes
                        .get(self.pos + 1)
                        .ok_or_else(|| self.error("unterminated string"))?;
                    self.pos += 2;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let mut code = self.hex4()?;
                            if (0xD800..0xDC00).contains(&code)
                                && self.bytes[self.pos..].starts_with(b"\\u")
                            {
                                self.pos += 2;
                                let low = self.hex4()?;
                                code = 0x10000
                                    + ((code - 0xD800) << 10)
                                    + (low.wrapping_sub(0xDC00) & 0x3ff);
                            }
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(self.error("invalid escape")),
                    }
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("short \\u escape"))?;
        let code = std::str::from_utf8(digits)
            .ok()
            .and_then(|s| u32::from_str_radix(s, 16).ok())
            .ok_or_else(|| self.error("invalid \\u escape"))?;
        self.pos += 4;
        Ok(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_its_last_as_python_and_javascript_read_it() {
        let mut v = Json::parse(r#"{"score": 1, "x": true, "score": 2}"#).unwrap();
        assert_eq!(v.get("score").and_then(Json::as_f64), Some(2.0));
        *v.get_mut("score").unwrap() = Json::Num(3.0);
        assert_eq!(v.get("score").and_then(Json::as_f64), Some(3.0));
    }

    #[test]
    fn compact_parsing_packs_numbers_and_pairs_and_reads_the_same() {
        let text = r#"{"raw":[[1,"NaN",2.5],[]],"h":[[[1,3],[2,"+INF"]]],"mixed":[1,"a",[2,3]],
            "pairs_then":[[1,2],3],"top":[1,2]}"#;
        let v = Json::parse_compact(text).unwrap();
        let raw = v.get("raw").unwrap().as_array().unwrap();
        assert!(matches!(&raw[0], Json::Nums(n) if n.len() == 3 && n[1].is_nan()));
        assert_eq!(raw[1], Json::Arr(vec![]));
        let h = &v.get("h").unwrap().as_array().unwrap()[0];
        assert_eq!(h, &Json::Pairs(vec![[1.0, 3.0], [2.0, f64::INFINITY]]));
        assert_eq!(
            v.get("mixed").unwrap(),
            &Json::Arr(vec![
                Json::Num(1.0),
                Json::str("a"),
                Json::Nums(vec![2.0, 3.0])
            ])
        );
        assert_eq!(
            v.get("pairs_then").unwrap(),
            &Json::Arr(vec![Json::Nums(vec![1.0, 2.0]), Json::Num(3.0)])
        );
        assert_eq!(v.get("top").unwrap(), &Json::Nums(vec![1.0, 2.0]));
        // Written back, the packed arrays are the arrays they were.
        let plain = Json::parse(text).unwrap();
        assert_eq!(
            Json::parse(&v.to_pretty()).unwrap().get("mixed"),
            plain.get("mixed")
        );
        assert_eq!(
            Json::parse(&v.to_pretty()).unwrap().get("top"),
            plain.get("top")
        );
        assert_eq!(
            Json::parse_compact("[1, x]").unwrap_err(),
            Json::parse("[1, x]").unwrap_err()
        );
    }

    #[test]
    fn prints_jmh_style_and_parses_back() {
        let v = Json::obj([
            ("benchmark", Json::str("bb.x")),
            (
                "rawData",
                Json::Arr(vec![Json::Arr(vec![Json::Num(1.5), Json::Num(2.0)])]),
            ),
            ("scoreError", Json::Num(f64::NAN)),
            ("note", Json::str("a \"quoted\"\nline\u{1}")),
            ("empty", Json::Arr(vec![])),
        ]);
        let text = v.to_pretty();
        assert_eq!(
            text,
            "{\n  \"benchmark\" : \"bb.x\",\n  \"rawData\" : [\n    [ 1.5, 2 ]\n  ],\n  \"scoreError\" : \"NaN\",\n  \"note\" : \"a \\\"quoted\\\"\\nline\\u0001\",\n  \"empty\" : []\n}\n"
        );
        let back = Json::parse(&text).unwrap();
        assert_eq!(back.get("note"), v.get("note"));
        assert!(back.get("scoreError").unwrap().as_f64().unwrap().is_nan());
        assert_eq!(Json::str("+INF").as_f64(), Some(f64::INFINITY));
        assert_eq!(Json::str("-INF").as_f64(), Some(f64::NEG_INFINITY));
        assert_eq!(back.get("rawData"), v.get("rawData"));
    }

    #[test]
    fn parser_rejects_malformed_input_with_position() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "tru",
            "\"abc",
            "[1] x",
            "{1:2}",
        ] {
            assert!(Json::parse(bad).is_err(), "{bad:?} parsed");
        }
        assert!(Json::parse("[1,\n x]").unwrap_err().contains("line 2"));
        assert_eq!(
            Json::parse(" [\"\\u00e9\\ud83d\\ude00\", -1.5e3] ").unwrap(),
            Json::Arr(vec![Json::str("é😀"), Json::Num(-1500.0)])
        );
    }
}
