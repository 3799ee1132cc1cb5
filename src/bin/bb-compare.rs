//! bb-compare: did it get faster, which board is faster, and is the difference more
//! than noise? Compares boardbench or JMH JSON results (files or run-all results
//! directories), each against the first, and exits 1 on a significant slowdown.

fn main() {
    boardbench::main_with(|| boardbench::compare::run(&boardbench::harness::cli::parse_args()))
}
