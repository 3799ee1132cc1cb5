//! The leaves every layer uses: the error type, number and duration formatting, value
//! parsers, the terminal (the program's name, `stderr!`, warnings), the progress line,
//! the atomic file writer, the JSON value type, the deterministic rng, and the checksums
//! object stores give for their bytes (`digest`), and threads started without a panic;
//! for the unit tests, a temporary directory removed when dropped (`temp`).

pub mod digest;
pub mod error;
pub mod file;
pub mod format;
pub mod json;
pub mod parse;
pub mod progress;
pub mod rng;
#[cfg(test)]
pub mod temp;
pub mod terminal;
pub mod thread;
pub mod xml;
