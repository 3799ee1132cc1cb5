//! bb-seek: how do read patterns (whole sequential, forward seeks, backward seeks,
//! Parquet-like) perform on objects of any size (1/4/16 MiB by default), through a
//! seekable stream with read-ahead against a plain ranged client, on local storage and
//! over HTTP ranges? Single shots as the original JMH benchmarks, the bytes read checked
//! against the generated data, in memory bounded by the cache, not by the object.

fn main() {
    boardbench::main_with(|| boardbench::seek::run(&boardbench::harness::cli::parse_args()))
}
