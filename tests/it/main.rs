//! boardbench's integration tests: one crate (as cargo and rust-analyzer lay theirs
//! out), so `support/` (the old tests/common) and the dev-dependencies are compiled and
//! linked once, not once per file. One module per area; `cargo test --test it -- seek::`
//! runs one area, `cargo test NAME` one test as before.
//!
//! The tests whose pass depends on this machine's speed sit in a `timing` module of their
//! area and retry a failing attempt a bounded number of times, one at a time: the list
//! is in [`support::timing`]. Tests that need what `make test` sets up first (the cross
//! builds, qemu-user, nginx, moto, sshd, ansible, chromium) are `#[ignore]`d, and run by
//! its release pass (`--ignored`).

mod support;

mod ab;
mod ansible;
mod answers;
mod architecture;
mod aws_settings;
mod board;
mod boards;
mod compare;
mod cross;
mod defaults;
mod docs;
mod fuzz_corpus;
mod health;
mod hostile;
mod hostile_ab;
mod ipc;
mod jmh;
mod noise;
mod outputs;
mod plan;
mod progress;
mod repository;
mod rpc;
mod rpc_open_loop;
mod rpc_sweep;
mod s3;
mod seek;
mod seek_s3;
mod setup;
mod suite;
mod zstd;
