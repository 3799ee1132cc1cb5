//! bb-seek's pieces, from the bottom up: generated objects and their manifest ([`data`]),
//! read patterns as data ([`pattern`]), the positioned-read `source` interface with its
//! two kinds, local files (`file`, read with pread or through a `mapping`) and HTTP
//! ranges ([`http`], over [`tls`](crate::net::tls) for https, to a plain prefix or an S3 bucket, [`s3`]),
//! and where the objects live ([`spec`], above both); the two clients that read through
//! a source ([`client`]: plain, and the seekable stream with its bounded block `cache`);
//! the measured operation ([`workload`]), the objects made ready before a run
//! ([`gen`]), and existing objects, checked before a run ([`existing`]). On top, the binary's flags ([`args`]), checked ([`options`]), and its
//! benchmarks ([`suite`]), which [`run`] hands to the harness; here, `Row`: what one
//! benchmark reads, how and where, which the suite makes its params of and the answer
//! reads.

mod answer;
pub mod args;
pub(crate) mod cache;
pub mod client;
pub mod data;
pub mod existing;
pub(crate) mod file;
pub mod gen;
pub mod http;
pub(crate) mod mapping;
pub mod options;
pub mod pattern;
pub(crate) mod probe;
pub mod s3;
pub(crate) mod source;
pub mod spec;
pub mod suite;
pub mod workload;

use crate::util::error::Result;
use args::{Args, Command};
use options::{GenOptions, Options};

/// bb-seek: `gen`, or a run of the suite its flags ask for.
pub fn run(args: &Args) -> Result<()> {
    crate::net::tls::configure(args.ca_file.as_deref())?;
    match &args.command {
        Some(Command::Gen(gen)) => gen::run(&GenOptions::from_args(gen, args)?),
        None => {
            let options = Options::from_args(args)?;
            crate::harness::run_suite(suite::suite(&options)?, &options.flags)
        }
    }
}

/// One benchmark of the suite: a pattern read through a client from an object where
/// it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    /// The pattern's name: a built-in one, or `custom`.
    pattern: String,
    /// The sequential pattern's read size.
    read_size: Option<u64>,
    /// The object's name.
    key: String,
    /// An existing object's size (`--object`); None for one of ours.
    size: Option<u64>,
    /// `plain` or `stream`.
    client: String,
    /// Where the object is, as the `source` param names it.
    source: String,
    /// Whether each shot starts with the cache dropped (`--cold`).
    cold: bool,
    /// How an existing object's bytes were checked before the run.
    check: Option<String>,
}

impl Row {
    /// The benchmark's params: `key`, an existing object's `size`, `client`, `source`,
    /// `read-size` (`-` for a pattern of its own sizes), `cache`, an existing object's
    /// `check`.
    fn params(&self) -> Vec<(&'static str, String)> {
        let mut params = vec![("key", self.key.clone())];
        params.extend(self.size.map(|s| ("size", s.to_string())));
        params.extend([
            ("client", self.client.clone()),
            ("source", self.source.clone()),
            (
                "read-size",
                self.read_size.map_or("-".to_string(), size_label),
            ),
            ("cache", if self.cold { "cold" } else { "hot" }.to_string()),
        ]);
        params.extend(self.check.clone().map(|c| ("check", c)));
        params
    }
}

/// `4k`, `1m`, `1g`, or bytes.
fn size_label(size: u64) -> String {
    match size {
        s if s.is_multiple_of(1 << 30) => format!("{}g", s >> 30),
        s if s.is_multiple_of(1 << 20) => format!("{}m", s >> 20),
        s if s.is_multiple_of(1 << 10) => format!("{}k", s >> 10),
        s => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_labelled_in_their_largest_whole_unit() {
        assert_eq!(size_label(4096), "4k");
        assert_eq!(size_label(1 << 20), "1m");
        assert_eq!(size_label(3 << 30), "3g");
        assert_eq!(size_label(1000), "1000");
    }
}
