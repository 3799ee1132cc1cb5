//! bb-ipc's flags: [`Args`], as argh parses them (their checks are
//! [`super::options`]'s).

use super::calls::Call;
use super::transport::Transport;
use crate::harness::cli;

crate::bench_args! {
    /// Measure a method call into another process against a local call.
    #[argh(
        example = "bb-ipc --quick\nbb-ipc --transport unix,pipes,tcp --calls method_no_args,method_block\nbb-ipc --transport shm,shm-spin --pin 0,1\nbb-ipc --pin 0,1 --format bm\nbb-ipc --pin 0 --mode sample"
    )]
    pub struct Args {
        /// transports, a list of unix, seqpacket, socketpair, pipes, tcp, shm, shm-spin (default unix,shm)
        #[argh(option, from_str_fn(parse_transports))]
        pub transport: Option<Vec<Transport>>,
        /// calls, a list (default all): method_no_args, method_default, method_a1, method_a2, method_a3, method_args, method_keywords, method_block
        #[argh(option, from_str_fn(parse_calls))]
        pub calls: Option<Vec<Call>>,
        /// leave out the local calls (and so the remote/local ratios)
        #[argh(switch)]
        pub no_local: bool,
    }
}

fn parse_transports(s: &str) -> std::result::Result<Vec<Transport>, String> {
    Ok(cli::parse_choices(s, &Transport::names())?
        .iter()
        .filter_map(|t| Transport::from_name(t))
        .collect())
}

fn parse_calls(s: &str) -> std::result::Result<Vec<Call>, String> {
    Ok(cli::parse_choices(s, &Call::names())?
        .iter()
        .filter_map(|c| Call::from_name(c))
        .collect())
}
