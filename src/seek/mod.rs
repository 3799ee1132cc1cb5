//! bb-seek's pieces, from the bottom up: generated objects and their manifest ([`data`]),
//! read patterns as data ([`pattern`]), the positioned-read `source` interface with its
//! two kinds, local files (`file`, read with pread or through a `mapping`) and HTTP
//! ranges ([`http`], over [`tls`](crate::net::tls) for https, to a plain prefix or an S3 bucket, [`s3`]),
//! and where the objects live ([`spec`], above both); the two clients that read through
//! a source ([`client`]: plain, and the seekable stream with its bounded block `cache`);
//! the measured operation ([`workload`]), the objects made ready before a run
//! ([`gen`]), and existing objects, checked before a run ([`existing`]). On top, the binary's flags ([`args`]), checked ([`options`]), and its
//! benchmarks ([`suite`]), which [`run`] hands to the harness.

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
