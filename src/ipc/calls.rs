//! The call table, named as in the original dRuby benchmark: the functions themselves
//! (called directly for the local baseline, and by the server's dispatcher), the arguments
//! a benchmark passes, the result each call must return, and the checks of both sides.

// foo, bar and baz are the original benchmark's keyword names.
#![allow(clippy::disallowed_names)]

use crate::wire::msgpack::{self, Value};
use crate::wire::status;

/// One of the benchmarked calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    NoArgs,
    Default,
    A1,
    A2,
    A3,
    Args,
    Keywords,
    Block,
}

/// Every call, in the original's order.
pub const ALL: [Call; 8] = [
    Call::NoArgs,
    Call::Default,
    Call::A1,
    Call::A2,
    Call::A3,
    Call::Args,
    Call::Keywords,
    Call::Block,
];

/// The method id of the server's own CPU usage (`[user_us, sys_us]`), outside the table.
pub(crate) const USAGE_METHOD: u16 = 0xffff;

/// What `method_default` returns when its argument is left out.
pub(crate) const DEFAULT_ARGUMENT: i64 = 7;
/// What `method_block` yields to its block.
pub(crate) const YIELDED: i64 = 41;

impl Call {
    pub fn name(self) -> &'static str {
        match self {
            Call::NoArgs => "method_no_args",
            Call::Default => "method_default",
            Call::A1 => "method_a1",
            Call::A2 => "method_a2",
            Call::A3 => "method_a3",
            Call::Args => "method_args",
            Call::Keywords => "method_keywords",
            Call::Block => "method_block",
        }
    }

    pub fn names() -> Vec<&'static str> {
        ALL.iter().map(|c| c.name()).collect()
    }

    pub fn from_name(name: &str) -> Option<Call> {
        ALL.into_iter().find(|c| c.name() == name)
    }

    /// The method id on the wire (1 to 8).
    pub(crate) fn id(self) -> u16 {
        ALL.iter().position(|&c| c == self).unwrap_or(0) as u16 + 1
    }

    pub(crate) fn from_id(id: u16) -> Option<Call> {
        ALL.get((id as usize).checked_sub(1)?).copied()
    }

    /// The arguments a benchmark passes, as the original did: `method_a3(1, 2, 3)`,
    /// `method_args(1, 2, 3)`, `method_keywords(foo: 1, bar: 2, baz: 3)`, the default left out.
    pub(crate) fn encode_args(self, out: &mut Vec<u8>) {
        let positional: &[i64] = match self {
            Call::NoArgs | Call::Default | Call::Block => &[],
            Call::A1 => &[1],
            Call::A2 => &[1, 2],
            Call::A3 | Call::Args => &[1, 2, 3],
            Call::Keywords => {
                out.push(0x83);
                for (key, value) in [("foo", 1), ("bar", 2), ("baz", 3)] {
                    msgpack::write_str(out, key);
                    msgpack::write_int(out, value);
                }
                return;
            }
        };
        msgpack::write_array_len(out, positional.len());
        for &a in positional {
            msgpack::write_int(out, a);
        }
    }

    /// The result the call must return for [`Call::encode_args`]'s arguments.
    pub(crate) fn expected(self) -> i64 {
        match self {
            Call::NoArgs => 0,
            Call::Default => DEFAULT_ARGUMENT,
            Call::A1 => 1,
            Call::A2 => 12,
            Call::A3 | Call::Args | Call::Keywords => 123,
            Call::Block => block(YIELDED),
        }
    }
}

pub(crate) fn method_no_args() -> i64 {
    0
}

pub(crate) fn method_default(a: Option<i64>) -> i64 {
    a.unwrap_or(DEFAULT_ARGUMENT)
}

pub(crate) fn method_a1(a: i64) -> i64 {
    a
}

pub(crate) fn method_a2(a: i64, b: i64) -> i64 {
    digits(&[a, b])
}

pub(crate) fn method_a3(a: i64, b: i64, c: i64) -> i64 {
    digits(&[a, b, c])
}

pub(crate) fn method_args(args: &[i64]) -> i64 {
    digits(args)
}

pub(crate) fn method_keywords(foo: i64, bar: i64, baz: i64) -> i64 {
    digits(&[foo, bar, baz])
}

/// Yields [`YIELDED`] to the block once and returns what the block returned.
pub(crate) fn method_block<E>(block: impl FnOnce(i64) -> Result<i64, E>) -> Result<i64, E> {
    block(YIELDED)
}

/// The block every caller passes to `method_block`.
pub(crate) fn block(x: i64) -> i64 {
    x.wrapping_add(1)
}

/// The arguments read as decimal digits (1, 2, 3 → 123), so that each argument and its
/// position show in the result; wrapping, as hostile arguments must not panic the server.
fn digits(args: &[i64]) -> i64 {
    args.iter()
        .fold(0i64, |acc, &d| acc.wrapping_mul(10).wrapping_add(d))
}

/// Calls `call` in this process with the benchmark's arguments behind `black_box`, so
/// nothing is computed ahead; counts the block's runs in `block_runs`.
#[inline(never)]
pub(crate) fn call_local(call: Call, block_runs: &mut u64) -> i64 {
    use std::hint::black_box;
    match call {
        Call::NoArgs => method_no_args(),
        Call::Default => method_default(black_box(None)),
        Call::A1 => method_a1(black_box(1)),
        Call::A2 => method_a2(black_box(1), black_box(2)),
        Call::A3 => method_a3(black_box(1), black_box(2), black_box(3)),
        Call::Args => method_args(black_box(&[1, 2, 3])),
        Call::Keywords => method_keywords(black_box(1), black_box(2), black_box(3)),
        Call::Block => method_block(|x| -> Result<i64, ()> {
            *block_runs += 1;
            Ok(block(black_box(x)))
        })
        .unwrap_or(0),
    }
}

/// Why the server refused a call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rejection {
    UnknownMethod(u16),
    BadArguments(String),
}

impl Rejection {
    pub fn status(&self) -> u8 {
        match self {
            Rejection::UnknownMethod(_) => status::UNKNOWN_METHOD,
            Rejection::BadArguments(_) => status::BAD_ARGUMENTS,
        }
    }

    pub fn message(&self) -> String {
        match self {
            Rejection::UnknownMethod(id) => format!("unknown method {id}"),
            Rejection::BadArguments(why) => format!("bad arguments: {why}"),
        }
    }
}

/// The server's dispatcher: decodes `args` for method `id` and calls the function.
/// `block` runs `method_block`'s block in the client; its error (a vanished client) ends
/// the dispatch as the outer error.
pub(crate) fn dispatch<E>(
    id: u16,
    args: &Value,
    block: impl FnOnce(i64) -> Result<i64, E>,
) -> Result<Result<i64, Rejection>, E> {
    let Some(call) = Call::from_id(id) else {
        return Ok(Err(Rejection::UnknownMethod(id)));
    };
    let ints = |n: std::ops::RangeInclusive<usize>| -> Result<Vec<i64>, Rejection> {
        let items = match args {
            Value::Array(items) => items,
            other => {
                return Err(Rejection::BadArguments(format!(
                    "{} takes an argument list, got {other:?}",
                    call.name()
                )))
            }
        };
        if !n.contains(&items.len()) {
            return Err(Rejection::BadArguments(format!(
                "{} takes {} to {} arguments, got {}",
                call.name(),
                n.start(),
                n.end(),
                items.len()
            )));
        }
        items
            .iter()
            .map(|v| {
                v.as_i64().ok_or_else(|| {
                    Rejection::BadArguments(format!("{} takes integers, got {v:?}", call.name()))
                })
            })
            .collect()
    };
    let result = match call {
        Call::NoArgs => ints(0..=0).map(|_| method_no_args()),
        Call::Default => ints(0..=1).map(|a| method_default(a.first().copied())),
        Call::A1 => ints(1..=1).map(|a| method_a1(a[0])),
        Call::A2 => ints(2..=2).map(|a| method_a2(a[0], a[1])),
        Call::A3 => ints(3..=3).map(|a| method_a3(a[0], a[1], a[2])),
        Call::Args => ints(0..=64).map(|a| method_args(&a)),
        Call::Keywords => keywords(args).map(|[foo, bar, baz]| method_keywords(foo, bar, baz)),
        Call::Block => match ints(0..=0) {
            Ok(_) => return method_block(block).map(Ok),
            Err(e) => Err(e),
        },
    };
    Ok(result)
}

/// `method_keywords`' arguments: a map with exactly the integer keys foo, bar and baz.
fn keywords(args: &Value) -> Result<[i64; 3], Rejection> {
    let bad = |why: String| Rejection::BadArguments(format!("method_keywords {why}"));
    let Value::Map(pairs) = args else {
        return Err(bad(format!("takes a map of keywords, got {args:?}")));
    };
    let mut values = [None; 3];
    for (k, v) in pairs {
        let slot = match k {
            Value::Str(s) if s == "foo" => 0,
            Value::Str(s) if s == "bar" => 1,
            Value::Str(s) if s == "baz" => 2,
            other => return Err(bad(format!("has no keyword {other:?}"))),
        };
        values[slot] = Some(
            v.as_i64()
                .ok_or_else(|| bad(format!("takes integers, got {v:?}")))?,
        );
    }
    match values {
        [Some(foo), Some(bar), Some(baz)] => Ok([foo, bar, baz]),
        _ => Err(bad("needs foo, bar and baz".to_string())),
    }
}

/// Checks the answer of a remote call: the expected integer, and for `method_block` a
/// callback that ran exactly once.
pub(crate) fn check_answer(call: Call, answer: &Value, callbacks: u64) -> Result<(), String> {
    let want_callbacks = u64::from(call == Call::Block);
    if callbacks != want_callbacks {
        return Err(format!(
            "verification mismatch: {} ran the client's block {callbacks} times, expected {want_callbacks}",
            call.name()
        ));
    }
    if answer.as_i64() != Some(call.expected()) {
        return Err(format!(
            "verification mismatch: {} returned {answer:?}, expected {}",
            call.name(),
            call.expected()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_of(call: Call) -> Value {
        let mut out = Vec::new();
        call.encode_args(&mut out);
        msgpack::decode_all(&out).unwrap()
    }

    #[test]
    fn every_call_dispatches_to_its_expected_result_and_matches_the_local_call() {
        for call in ALL {
            let mut yielded = Vec::new();
            let got = dispatch(call.id(), &args_of(call), |x| -> Result<i64, ()> {
                yielded.push(x);
                Ok(block(x))
            })
            .unwrap()
            .unwrap();
            assert_eq!(got, call.expected(), "{}", call.name());
            let mut runs = 0;
            assert_eq!(call_local(call, &mut runs), call.expected());
            let once = if call == Call::Block { 1 } else { 0 };
            assert_eq!(
                (yielded.len() as u64, runs),
                (once, once),
                "{}",
                call.name()
            );
            assert_eq!(Call::from_name(call.name()), Some(call));
            assert_eq!(Call::from_id(call.id()), Some(call));
            check_answer(call, &Value::Int(got), once).unwrap();
        }
        assert_eq!(Call::A3.expected(), 123);
        assert_eq!(Call::from_id(0), None);
        assert_eq!(Call::from_id(9), None);
    }

    #[test]
    fn the_checker_catches_wrong_answers_and_wrong_callback_counts() {
        let wrong = check_answer(Call::A3, &Value::Int(124), 0).unwrap_err();
        assert!(
            wrong.contains("method_a3 returned Int(124), expected 123"),
            "{wrong}"
        );
        assert!(check_answer(Call::NoArgs, &Value::Nil, 0).is_err());
        assert!(check_answer(Call::Block, &Value::Int(42), 0)
            .unwrap_err()
            .contains("0 times, expected 1"));
        assert!(check_answer(Call::Block, &Value::Int(42), 2).is_err());
        assert!(check_answer(Call::A1, &Value::Int(1), 1).is_err());
        check_answer(Call::Block, &Value::Int(42), 1).unwrap();
    }

    #[test]
    fn the_server_fills_in_the_default_and_reads_keywords_in_any_order() {
        let one = Value::Array(vec![Value::Int(5)]);
        assert_eq!(dispatch(Call::Default.id(), &one, |_| Err(())), Ok(Ok(5)));
        let kw = Value::Map(vec![
            (Value::Str("baz".into()), Value::Int(3)),
            (Value::Str("foo".into()), Value::Int(1)),
            (Value::Str("bar".into()), Value::Int(2)),
        ]);
        assert_eq!(dispatch(Call::Keywords.id(), &kw, |_| Err(())), Ok(Ok(123)));
    }

    #[test]
    fn unknown_methods_and_malformed_arguments_are_rejected() {
        let none = Value::Array(vec![]);
        let reject = |id: u16, args: &Value| dispatch(id, args, |_| Err(())).unwrap().unwrap_err();
        assert_eq!(reject(999, &none), Rejection::UnknownMethod(999));
        assert_eq!(reject(999, &none).status(), status::UNKNOWN_METHOD);
        let bad = reject(Call::A3.id(), &Value::Array(vec![Value::Int(1)]));
        assert_eq!(bad.status(), status::BAD_ARGUMENTS);
        assert!(
            bad.message()
                .contains("method_a3 takes 3 to 3 arguments, got 1"),
            "{bad:?}"
        );
        let text = Value::Array(vec![Value::Str("x".into())]);
        assert!(reject(Call::A1.id(), &text).message().contains("integers"));
        assert!(reject(Call::A1.id(), &Value::Nil)
            .message()
            .contains("argument list"));
        let kw = Value::Map(vec![(Value::Str("qux".into()), Value::Int(1))]);
        assert!(reject(Call::Keywords.id(), &kw).message().contains("qux"));
        assert!(reject(Call::Keywords.id(), &Value::Map(vec![]))
            .message()
            .contains("needs foo, bar and baz"));
        // A block call with arguments never reaches the block.
        assert!(dispatch(
            Call::Block.id(),
            &Value::Array(vec![Value::Int(1)]),
            |_| -> Result<i64, ()> { panic!("the block must not run") }
        )
        .unwrap()
        .is_err());
        // Overflowing arguments wrap instead of panicking.
        let huge = Value::Array(vec![Value::Int(i64::MAX), Value::Int(i64::MAX)]);
        assert!(dispatch(Call::A2.id(), &huge, |_| Err(())).unwrap().is_ok());
    }
}
