//! bb-zstd: how fast is zstd streaming compression and decompression here, and how does
//! it scale with threads? A queue of jobs consumed by THREADS threads, each job a
//! streaming compress (write, flush, write, finish) or a streaming decompress (a frame
//! decoded twice), as zstd-ruby's multi-threaded streaming benchmarks do.

fn main() {
    boardbench::main_with(|| boardbench::zstd::run(&boardbench::harness::cli::parse_args()))
}
