//! boardbench: small benchmark binaries over one harness. Each module below is a folder
//! of `src/`; ARCHITECTURE.md draws the order of their layers and says what each folder
//! is for, and each file's own doc says what it holds.

pub mod compare;
pub mod harness;
pub mod ipc;
pub mod model;
pub mod net;
pub mod report;
pub mod rpc;
pub mod s3;
pub mod seek;
pub(crate) mod stats;
pub mod system;
pub mod util;
pub mod wire;
pub mod zstd;

/// Every binary's `main` (`src/bin/bb-*.rs`).
pub use harness::main_with;
