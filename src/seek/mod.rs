//! bb-seek's pieces, from the bottom up: generated objects and their manifest ([`data`]),
//! read patterns as data ([`pattern`]), the positioned-read `source` interface with its
//! two kinds, local files (`file`, read with pread or through a `mapping`) and HTTP
//! ranges ([`http`], over [`tls`] for https, to a plain prefix or an S3 bucket, [`s3`]),
//! and where the objects live ([`spec`], above both); the two clients that read through
//! a source ([`client`]: plain, and the seekable stream with its bounded block `cache`);
//! the measured operation ([`workload`]) and the objects made ready before a run
//! ([`gen`]).

pub(crate) mod cache;
pub mod client;
pub mod data;
pub(crate) mod file;
pub mod gen;
pub mod http;
pub(crate) mod mapping;
pub mod pattern;
pub mod s3;
pub(crate) mod source;
pub mod spec;
pub mod workload;
