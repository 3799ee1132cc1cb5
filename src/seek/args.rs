//! bb-seek's flags: [`Args`] and its `gen` subcommand, [`GenArgs`], as argh parses them
//! (their checks are [`super::options`]'s).

use super::client;
use super::pattern;
use super::spec::{ObjectSpec, SourceSpec};
use crate::harness::cli;
use crate::s3::Addressing;
use std::path::PathBuf;
use std::time::Duration;

crate::bench_args! {
    /// Measure read patterns through a seekable stream against a plain client, on local
    /// files, over HTTP ranges and on S3. Generates its objects when they are missing, or
    /// reads existing ones with --object.
    #[argh(
        example = "bb-seek --quick\nbb-seek --source file:/mnt/usb/data --cold --sizes 16m\nbb-seek --object s3://my-bucket/tables/orders.parquet,file:/mnt/usb/disk.img\nbb-seek gen --dest http://nas.local:8080/bench/ && bb-seek --source http://nas.local:8080/bench/"
    )]
    pub struct Args {
        /// object sizes, a list, any size (default 1m,4m,16m: random-1mb.txt, random-4mb.txt, random-16mb.txt; 1g is random-1gb.txt)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size_list))]
        pub sizes: Option<Vec<u64>>,
        /// patterns, a list of sequential, forward, backward, parquet (default all)
        #[argh(option, from_str_fn(parse_patterns))]
        pub pattern: Option<Vec<String>>,
        /// your own pattern instead: a file of offset,length lines (negative offsets count from the end)
        #[argh(option)]
        pub pattern_file: Option<PathBuf>,
        /// clients, a list of plain, stream (default both)
        #[argh(option, from_str_fn(parse_clients))]
        pub client: Option<Vec<String>>,
        /// read sizes of the sequential pattern, a list (default 4k,1m)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size_list))]
        pub read_size: Option<Vec<u64>>,
        /// where the objects are, a list of file:DIR, http(s)://HOST:PORT/PREFIX/ and s3://BUCKET/PREFIX/ (default s3://$BUCKET/$PREFIX when BUCKET is set, else file:./data)
        #[argh(option, from_str_fn(crate::seek::spec::parse_source_list))]
        pub source: Option<Vec<SourceSpec>>,
        /// existing objects to measure instead of generated ones, a list of s3://BUCKET/KEY, http(s)://HOST:PORT/PATH/NAME and file:PATH (a bare path is a file): each read at its own size, its bytes checked against its store's checksum where it gives one (S3's ETag, x-amz-checksum-*) and both clients' against each other; not with --sizes or --source
        #[argh(option, from_str_fn(crate::seek::spec::parse_object_list))]
        pub object: Option<Vec<ObjectSpec>>,
        /// drop each object's cached pages before every shot (posix_fadvise DONTNEED), so reads come from the storage
        #[argh(switch)]
        pub cold: bool,
        /// stream: fetches are aligned to and cached in blocks of this size (default 64k)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
        pub block_size: Option<u64>,
        /// stream: the block cache's bound (default 8m for HTTP, 256k for files)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
        pub cache_size: Option<u64>,
        /// stream: the first read-ahead of a sequential run (default 128k for HTTP, 64k for files)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
        pub readahead_min: Option<u64>,
        /// stream: the read-ahead doubles per sequential fetch up to this (default 4m for HTTP, 128k for files)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
        pub readahead_max: Option<u64>,
        /// stream: a first read this close to the end fetches this much of the tail (default 64k, 0 = off)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
        pub tail_prefetch: Option<u64>,
        /// stream: objects up to this size are fetched whole on the first read (default 256k, 0 = off)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
        pub whole_object_max: Option<u64>,
        /// HTTP: how long one request may take, connect, answer, body, one retry on a fresh connection and S3's retries together (default 30s; uploads a second more per MiB)
        #[argh(option, from_str_fn(crate::harness::cli::parse_duration))]
        pub request_timeout: Option<Duration>,
        /// S3: send requests unsigned, for public buckets
        #[argh(switch)]
        pub no_sign: bool,
        /// S3: address the bucket as virtual (BUCKET.HOST/KEY), path (HOST/BUCKET/KEY) or auto (default: the AWS config's addressing_style, else virtual on AWS, path elsewhere)
        #[argh(option, from_str_fn(parse_addressing))]
        pub addressing: Option<Option<Addressing>>,
        /// HTTPS: trust only the certificate authorities of this PEM file (a private CA), instead of the system's (as curl's --cacert)
        #[argh(option)]
        pub ca_file: Option<PathBuf>,
        #[argh(subcommand)]
        pub command: Option<Command>,
    }
}

#[derive(argh::FromArgs, Debug)]
#[argh(subcommand)]
pub enum Command {
    Gen(GenArgs),
}

/// Write the objects (random-1mb.txt, ...) and a manifest of sizes and checksums to a
/// directory, keeping valid ones; or upload them to an HTTP server with PUT, or to an S3
/// bucket (made when missing; large objects in parts).
#[derive(argh::FromArgs, Debug)]
#[argh(
    subcommand,
    name = "gen",
    example = "bb-seek gen --dir ./data\nbb-seek gen --dest http://127.0.0.1:8080/bench/ --sizes 1m\nbb-seek gen --dest s3://my-bucket/bench/ --sizes 1m,4m,16m,1g"
)]
pub struct GenArgs {
    /// the directory to write to (default ./data)
    #[argh(option)]
    pub dir: Option<PathBuf>,
    /// upload to this http(s)://HOST:PORT/PREFIX/ or s3://BUCKET/PREFIX/ instead, keeping objects already there that hold these bytes (S3: by the seed and checksum stored as metadata, else the ETag; HTTP: read back)
    #[argh(option)]
    pub dest: Option<String>,
    /// S3: objects larger than this are uploaded in parts (default 64m)
    #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
    pub multipart_threshold: Option<u64>,
    /// S3: the size of each part of a multipart upload, 5m to 5g (default 8m)
    #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
    pub part_size: Option<u64>,
    /// object sizes, a list (default 1m,4m,16m)
    #[argh(option, from_str_fn(crate::harness::cli::parse_size_list))]
    pub sizes: Option<Vec<u64>>,
    /// seed of the objects' bytes (default: --seed before gen, 42)
    #[argh(option)]
    pub seed: Option<u64>,
}

fn parse_patterns(s: &str) -> std::result::Result<Vec<String>, String> {
    cli::parse_choices(s, &pattern::BUILT_IN)
}

fn parse_addressing(s: &str) -> std::result::Result<Option<Addressing>, String> {
    Addressing::parse(s)
}

fn parse_clients(s: &str) -> std::result::Result<Vec<String>, String> {
    cli::parse_choices(s, &client::CLIENTS)
}
