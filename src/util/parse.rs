//! Value parsers for the flags: durations (`500ms`, `3s`, `1m`), sizes (`4k`, `16mb`),
//! temperatures and lists, each answering a bad value with a message that quotes it.

use std::time::Duration;

/// Splits `1.5ms` into 1.5 and `ms`; None when there is no leading number.
fn number_and_unit(s: &str) -> Option<(f64, &str)> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    Some((number.parse().ok()?, unit))
}

/// Parses a duration such as `500ms`, `3s`, `1.5s`, `1m`, `2h`, `100us`, `0`.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let bad = || format!("invalid duration '{s}' (expected a number and a unit: 500ms, 3s, 1m)");
    let (value, unit) = number_and_unit(s).ok_or_else(bad)?;
    let seconds = match unit {
        "ns" => value / 1e9,
        "us" | "µs" => value / 1e6,
        "ms" => value / 1e3,
        "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        "" if value == 0.0 => 0.0,
        _ => return Err(bad()),
    };
    if !seconds.is_finite() || seconds > 1e9 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses a temperature in °C: `60C`, `60`, `62.5°C`.
pub fn parse_temperature(s: &str) -> std::result::Result<f64, String> {
    let bad = || format!("invalid temperature '{s}' (expected degrees Celsius up to 150: 60C, 60)");
    let (value, unit) = number_and_unit(s).ok_or_else(bad)?;
    let celsius = matches!(unit, "" | "C" | "c" | "°C");
    if celsius && value > 0.0 && value <= 150.0 {
        Ok(value)
    } else {
        Err(bad())
    }
}

/// Parses a size in bytes: `4096`, `4k`, `1m`, `16mb`, `1.5MiB`, `2g` (powers of 1024).
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let bad = || format!("invalid size '{s}' (expected bytes or a number with k, m or g: 4k, 1m)");
    let (value, unit) = number_and_unit(s).ok_or_else(bad)?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1u64,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 / 2.0 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

/// Parses a percentage, `5` or `5%`, below 1000%, as a fraction (0.05).
pub fn parse_percent(s: &str) -> std::result::Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..1000.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!("invalid percentage '{s}' (expected 5 or 5%)")),
    }
}

/// Parses a comma-separated list with `item` for each element (`1,2,4`).
pub fn parse_list<T>(
    s: &str,
    item: impl Fn(&str) -> std::result::Result<T, String>,
) -> std::result::Result<Vec<T>, String> {
    let items: Vec<T> = s
        .split(',')
        .map(|x| item(x.trim()))
        .collect::<std::result::Result<_, _>>()?;
    if items.is_empty() {
        return Err(format!("empty list '{s}'"));
    }
    Ok(items)
}

/// Parses a list of non-negative integers (`1,2,4`).
pub fn parse_usize_list(s: &str) -> std::result::Result<Vec<usize>, String> {
    parse_list(s, |x| {
        x.parse::<usize>()
            .map_err(|_| format!("invalid number '{x}' in list '{s}'"))
    })
}

/// Parses a list of sizes (`16,1k,64k`).
pub fn parse_size_list(s: &str) -> std::result::Result<Vec<u64>, String> {
    parse_list(s, parse_size)
}

/// Parses a list of words (`compress,decompress`), each checked against `allowed`.
pub fn parse_choices(s: &str, allowed: &[&str]) -> std::result::Result<Vec<String>, String> {
    parse_list(s, |x| {
        if allowed.contains(&x) {
            Ok(x.to_string())
        } else {
            Err(format!(
                "unknown value '{x}' (expected one of {})",
                allowed.join(", ")
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("3s"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "3", "s", "3x", "-1s", "1e3s", "3 s"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.contains(&format!("'{bad}'")), "{err}");
        }
    }

    #[test]
    fn sizes_and_lists() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("16mb"), Ok(16 << 20));
        assert_eq!(parse_size("1.5MiB"), Ok(3 << 19));
        assert!(parse_size("4q").is_err());
        assert!(parse_size("").is_err());
        assert_eq!(parse_usize_list("1,2, 4"), Ok(vec![1, 2, 4]));
        assert!(parse_usize_list("1,,2")
            .unwrap_err()
            .contains("invalid number ''"));
        assert_eq!(parse_size_list("16,1k"), Ok(vec![16, 1024]));
        assert_eq!(
            parse_choices("a,b", &["a", "b"]),
            Ok(vec!["a".to_string(), "b".to_string()])
        );
        assert!(parse_choices("a,c", &["a", "b"])
            .unwrap_err()
            .contains("'c'"));
    }

    #[test]
    fn temperatures() {
        assert_eq!(parse_temperature("60C"), Ok(60.0));
        assert_eq!(parse_temperature("60"), Ok(60.0));
        assert_eq!(parse_temperature("62.5°C"), Ok(62.5));
        for bad in ["", "hot", "60F", "0", "-5C", "200C", "60 C"] {
            let err = parse_temperature(bad).unwrap_err();
            assert!(err.contains(&format!("'{bad}'")), "{err}");
        }
    }
}
