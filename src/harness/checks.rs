//! Checks of flag values before anything is allocated for them, each a usage error that
//! names the flag: at least one, at most a bound, within the memory this machine has.

use crate::util::error::{Error, Result};

/// Rejects a zero where at least one is needed: `check_positive("--threads", 0)`.
pub fn check_positive(flag: &str, value: u64) -> Result<()> {
    if value == 0 {
        Err(Error::usage(format!("{flag} must be at least 1")))
    } else {
        Ok(())
    }
}

/// In tests: the message of `result`'s usage error (exit code 2), where `what` (the
/// arguments given) must be refused.
#[cfg(test)]
pub(crate) fn usage_message<T>(result: Result<T>, what: &dyn std::fmt::Debug) -> String {
    match result {
        Ok(_) => panic!("{what:?} passed"),
        Err(e) => {
            assert_eq!(e.exit_code(), 2, "{what:?}: {e}");
            e.to_string()
        }
    }
}

/// Rejects a value above `max` before anything is allocated for it:
/// `check_at_most("--depth", d, 65536, "calls in flight per connection")`.
pub fn check_at_most(flag: &str, value: u64, max: u64, what: &str) -> Result<()> {
    if value > max {
        Err(Error::usage(format!(
            "{flag} {value}: at most {max} {what}"
        )))
    } else {
        Ok(())
    }
}

/// Rejects a value whose run would need `needed` bytes of memory when this machine has
/// less available (MemAvailable, or what the address-space limit leaves where lower),
/// before anything is allocated.
pub fn check_fits_in_memory(flag: &str, value: &str, needed: u64) -> Result<()> {
    match crate::system::cpu::memory_room() {
        Some((room, whose)) if needed > room => Err(Error::usage(format!(
            "{flag} {value}: the run would need about {} MiB of memory and {whose} {} MiB",
            needed >> 20,
            room >> 20
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_one_clear_usage_error() {
        assert!(check_at_most("--depth", 65536, 65536, "calls").is_ok());
        let e = check_at_most("--depth", 65537, 65536, "calls in flight").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.to_string(),
            "--depth 65537: at most 65536 calls in flight"
        );
        assert!(check_fits_in_memory("--size", "1k", 1024).is_ok());
        let e = check_fits_in_memory("--size", "100g", u64::MAX).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().starts_with("--size 100g: the run would need"),
            "{e}"
        );
    }
}
