//! bb-rpc's library: addresses and transports, the methods and codecs on top of the
//! shared wire format, the server, the three client styles, the open loop and its sweep,
//! and the workload the harness measures.

pub mod addr;
pub mod client;
mod deadline;
mod in_flight;
pub mod open_loop;
mod pipeline;
pub mod protocol;
pub mod server;
pub mod sweep;
pub mod workload;
