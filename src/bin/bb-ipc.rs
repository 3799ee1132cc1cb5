//! bb-ipc: what does a method call into another process cost here, by argument shape,
//! against a local call? A server child answers calls (no args, a default, 1/2/3 args,
//! varargs, keywords, a block that calls back) over a Unix socket or another transport,
//! as dRuby's `drbunix:` benchmark on a Raspberry Pi did; beside each transport, its bare
//! 1-byte round trip (the floor), and the same functions called in-process.

fn main() {
    // A server child serves and exits here, before any argument is parsed.
    boardbench::ipc::server::serve_if_child();
    boardbench::main_with(|| boardbench::ipc::run(&boardbench::harness::cli::parse_args()))
}
