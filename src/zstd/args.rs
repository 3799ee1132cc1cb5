//! bb-zstd's flags, with the common ones.

crate::bench_args! {
    /// Measure zstd streaming compression and decompression across threads.
    #[argh(
        example = "bb-zstd --quick\nbb-zstd --input city.json --threads 1,2,4 --level 3\nTHREADS=4 GUESSES=1000 bb-zstd --input city.json --op compress"
    )]
    pub struct Args {
        /// compress, decompress or both (default both)
        #[argh(option, default = "String::from(\"both\")")]
        pub op: String,
        /// jobs per single shot in --mode ss, as the original's GUESSES (default: $GUESSES, else 1000; 50 with --quick); timed modes queue jobs for as long as an iteration lasts
        #[argh(option)]
        pub jobs: Option<u64>,
        /// thread counts, a list such as 1,2,4 (default: $THREADS, else 1 and the online CPUs: how it scales)
        #[argh(option, from_str_fn(crate::harness::cli::parse_usize_list))]
        pub threads: Option<Vec<usize>>,
        /// input file (default: a generated JSON corpus like city.json)
        #[argh(option)]
        pub input: Option<std::path::PathBuf>,
        /// size of the generated corpus (default 1779136 bytes, city.json's size)
        #[argh(option, from_str_fn(crate::harness::cli::parse_size))]
        pub size: Option<u64>,
        /// zstd level, negative fast levels up to 22 (default 3)
        #[argh(option, default = "3")]
        pub level: i32,
        /// allow more than 64 threads per online CPU (up to 65536)
        #[argh(switch)]
        pub oversubscribe: bool,
        /// one encoder/decoder per thread, reset between jobs, instead of one per job
        #[argh(switch)]
        pub reuse_context: bool,
        /// none or global, or a list such as none,global: global holds one process-wide lock around each streaming call, as Ruby's GVL before zstd-ruby released it (default none,global: what releasing it gains)
        #[argh(option, default = "String::from(\"none,global\")")]
        pub lock: String,
    }
}
