//! bb-seek's pieces: generated objects and their manifest, read patterns as data, the
//! positioned-read sources (local files, HTTP ranges) and the two clients that read
//! through them (plain, and the seekable stream with its bounded block cache).

pub mod cache;
pub mod client;
pub mod data;
pub mod file;
pub mod http;
pub mod pattern;
pub mod source;
