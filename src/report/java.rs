//! Numbers as JMH prints them: Java's `String.format("%.Nf")` in the root locale (half-up
//! on the shortest decimal that reads back as the double) and JMH's `ScoreFormatter`
//! (three decimals, `≈ 10⁻⁴` for a score below half of the last one).

/// `String.format("%.{prec}f", v)`: the shortest decimal of `v` rounded half-up to
/// `prec` decimals (`8.2235` → `8.224`, where the double's exact value is below the half),
/// never an exponent; `NaN`, `Infinity`, `-Infinity`; a negative zero keeps its sign.
pub(crate) fn fixed(v: f64, prec: usize) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Rust's Display is the shortest decimal that reads back, without an exponent.
    let shortest = format!("{}", v.abs());
    let (int, frac) = shortest.split_once('.').unwrap_or((&shortest, ""));
    let mut digits: Vec<u8> = int.bytes().collect();
    digits.extend(frac.bytes().chain(std::iter::repeat(b'0')).take(prec));
    if frac.as_bytes().get(prec).is_some_and(|&d| d >= b'5') {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let point = digits.len() - prec;
    let mut out = String::new();
    if v.is_sign_negative() {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&digits[..point]).expect("ASCII digits"));
    if prec > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(&digits[point..]).expect("ASCII digits"));
    }
    out
}

/// JMH's score precision (`jmh.scorePrecision`'s default): three decimals.
const PRECISION: usize = 3;
/// The last printed decimal's unit, and half of it.
const ULP: f64 = 0.001;
const THRESHOLD: f64 = ULP / 2.0;

/// `ScoreFormatter.isApproximate`: below half of the last decimal (negative scores too).
pub(crate) fn is_approximate(score: f64) -> bool {
    score < THRESHOLD
}

/// `ScoreFormatter.format`: three decimals, or `≈ 10ⁿ` (n the rounded log10) for an
/// approximate score, `≈ 0` where that power is 0 or undefined (0, negative).
pub(crate) fn score(v: f64) -> String {
    if !is_approximate(v) {
        return fixed(v, PRECISION);
    }
    let log = v.log10();
    // Java's (int) Math.round: NaN is 0, and -Infinity's long minimum truncates to 0.
    let power = if log.is_finite() {
        (log + 0.5).floor() as i64 as i32
    } else {
        0
    };
    if power == 0 {
        "\u{2248} 0".into()
    } else {
        format!("\u{2248} 10{}", superscript(&power.to_string()))
    }
}

/// `ScoreFormatter.formatError`: three decimals, at least the last one (`0.001`), so that
/// an error that rounds to zero still shows.
pub(crate) fn error(v: f64) -> String {
    fixed(v.max(ULP), PRECISION)
}

fn superscript(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '-' => '\u{207b}',
            '0' => '\u{2070}',
            '1' => '\u{b9}',
            '2' => '\u{b2}',
            '3' => '\u{b3}',
            d => char::from_u32(0x2070 + d.to_digit(10).unwrap_or(0)).unwrap_or(d),
        })
        .collect()
}

/// A string's length as Java counts it (UTF-16 code units), by which `printf` pads.
pub(crate) fn len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// `%{width}s`: right-aligned in `width` Java characters.
pub(crate) fn right(s: &str, width: usize) -> String {
    format!("{}{s}", " ".repeat(width.saturating_sub(len(s))))
}

/// `%-{width}s`: left-aligned in `width` Java characters.
pub(crate) fn left(s: &str, width: usize) -> String {
    format!("{s}{}", " ".repeat(width.saturating_sub(len(s))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_rounds_half_up_on_the_shortest_decimal_as_java_does() {
        assert_eq!(fixed(8.2235, 3), "8.224", "Rust's {{:.3}} says 8.223");
        assert_eq!(format!("{:.3}", 8.2235), "8.223");
        assert_eq!(fixed(0.0005, 3), "0.001");
        assert_eq!(fixed(9.9995, 3), "10.000");
        assert_eq!(fixed(999.9999996, 6), "1000.000000");
        assert_eq!(fixed(1.5, 0), "2");
        assert_eq!(fixed(2e20, 3), "200000000000000000000.000");
        assert_eq!(fixed(1e-7, 6), "0.000000");
        assert_eq!(fixed(-0.0001, 3), "-0.000");
        assert_eq!(fixed(-12.3456, 3), "-12.346");
        assert_eq!(fixed(f64::NAN, 3), "NaN");
        assert_eq!(fixed(f64::NEG_INFINITY, 3), "-Infinity");
    }

    #[test]
    fn scores_and_errors_print_as_jmh_score_formatter_does() {
        assert_eq!(score(528.857142857), "528.857");
        assert_eq!(score(0.0005), "0.001");
        assert_eq!(score(0.0001), "\u{2248} 10\u{207b}\u{2074}");
        assert_eq!(score(0.00049), "\u{2248} 10\u{207b}\u{b3}");
        assert_eq!(score(0.0), "\u{2248} 0");
        assert_eq!(score(-3.0), "\u{2248} 0");
        assert_eq!(score(f64::NAN), "NaN");
        assert_eq!(error(0.0), "0.001");
        assert_eq!(error(0.00004), "0.001");
        assert_eq!(error(278.1416), "278.142");
        assert_eq!(len("\u{2248} 10\u{207b}\u{2074}"), 6);
        assert_eq!(right("ab", 4), "  ab");
        assert_eq!(left("ab", 4), "ab  ");
    }
}
