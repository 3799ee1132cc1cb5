//! bb-ipc's parts: the call table that both sides share, framed connections over every
//! transport, the server child, and the client workloads the harness measures.

pub mod calls;
pub mod client;
pub(crate) mod conn;
#[cfg(feature = "fault-injection")]
mod fault;
pub mod server;
pub mod transport;
