//! boardbench: small benchmark binaries over one harness. Each module is one folder of
//! `src/` and one layer; ARCHITECTURE.md draws their order and says what each folder is
//! for, and each file's own doc says what it holds.

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
