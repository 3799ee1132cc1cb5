//! Numbers and durations as boardbench prints them: durations as the flags read them
//! (`500ms`, `3s`, `1m`), estimates as people say them (`12 min 5 s`), and scores with
//! three decimals; text from a peer or a file made [`printable`]. A leaf: everything that prints uses it, it uses nothing.

use std::time::Duration;

/// `500ms`, `3s`, `90s`, `1m`: durations as the flags take them.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        if !d.as_micros().is_multiple_of(1000) {
            return format!("{}us", d.as_micros());
        }
        return format!("{ms}ms");
    }
    let s = d.as_secs_f64();
    if !ms.is_multiple_of(1000) {
        return format!("{s}s");
    }
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

/// A score with three decimals, or more significant digits for small values.
pub fn format_score(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    let a = v.abs();
    if a != 0.0 && a < 0.001 {
        format!("{v:.3e}")
    } else {
        format!("{v:.3}")
    }
}

/// A fraction as a percentage a person reads, without the `%`: three significant
/// digits at most, trailing zeros dropped (`0.02` → `2`, `0.000001` → `0.0001`,
/// `0.0123456` → `1.23`), never a float's binary tail (`0.00009999999999999999`).
pub fn percent(fraction: f64) -> String {
    let v = fraction * 100.0;
    if !v.is_finite() || v == 0.0 {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{v:.decimals$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

/// A duration as a person reads an estimate: `40 s`, `12 min 5 s`, `2 h 6 min`.
pub fn format_estimate(d: Duration) -> String {
    if d < Duration::from_secs(10) {
        return format!("{:.1} s", d.as_secs_f64());
    }
    let s = d.as_secs_f64().round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{} h {} min", s / 3600, s % 3600 / 60)
    }
}

/// `n` of a thing, with the plural for any count but one: `1 core`, `4 cores`,
/// `0 shots`.
pub fn count(n: impl Into<u64>, thing: &str) -> String {
    let n = n.into();
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// Text from a peer or a file, for a message: control bytes escaped, so a hostile
/// answer or a binary file cannot rewrite the terminal it is printed on.
pub(crate) fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// What a peer or a file sent, as a message quotes it: [`printable`], its first
/// `longest` characters and `…` where there were more, so that megabytes there cannot
/// fill the terminal (or the memory of the message).
pub(crate) fn quoted_cut(s: &str, longest: usize) -> String {
    let cut: String = s.chars().take(longest).collect();
    let more = match s.chars().nth(longest) {
        Some(_) => "…",
        None => "",
    };
    format!("{}{more}", printable(&cut))
}

/// The Gregorian date `days` after 1970-01-01 (Howard Hinnant's civil_from_days).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// `YYYY-MM-DD` in UTC, the day `time` falls on; a time before 1970 reads as 1970.
pub fn utc_date(time: std::time::SystemTime) -> String {
    let secs = time
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_value_is_escaped_and_cut() {
        assert_eq!(quoted_cut("ok", 5), "ok");
        assert_eq!(quoted_cut("abcdef", 5), "abcde…");
        // A terminal's escape, escaped; the cut counts characters, not bytes.
        assert_eq!(quoted_cut("a\x1b[2Jb", 5), "a\\u{1b}[2J…");
        assert_eq!(quoted_cut("ééééé", 3), "ééé…");
    }

    #[test]
    fn counts_are_singular_for_one_only() {
        assert_eq!(count(1u32, "core"), "1 core");
        assert_eq!(count(4u32, "core"), "4 cores");
        assert_eq!(count(0u32, "shot"), "0 shots");
    }

    #[test]
    fn durations_print_as_flags_read_them() {
        for (d, s) in [
            (500, "500ms"),
            (3000, "3s"),
            (60_000, "1m"),
            (90_000, "90s"),
            (1500, "1.5s"),
        ] {
            assert_eq!(format_duration(Duration::from_millis(d)), s);
            assert_eq!(
                crate::util::parse::parse_duration(s).unwrap(),
                Duration::from_millis(d)
            );
        }
        assert_eq!(format_duration(Duration::from_micros(250)), "250us");
    }

    #[test]
    fn estimates_read_as_people_say_them() {
        assert_eq!(format_estimate(Duration::from_millis(40_400)), "40 s");
        assert_eq!(format_estimate(Duration::from_millis(3_140)), "3.1 s");
        assert_eq!(format_estimate(Duration::from_secs(725)), "12 min 5 s");
        assert_eq!(format_estimate(Duration::from_secs(7560)), "2 h 6 min");
    }

    #[test]
    fn a_percentage_has_sane_significant_digits() {
        assert_eq!(percent(0.000001), "0.0001");
        assert_eq!(percent(0.02), "2");
        assert_eq!(percent(0.025), "2.5");
        assert_eq!(percent(0.0123456), "1.23");
        assert_eq!(percent(0.5), "50");
        assert_eq!(percent(0.9999), "100");
        assert_eq!(percent(0.0), "0");
    }
}
