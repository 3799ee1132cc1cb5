//! The network below the measurements: a socket within a deadline (`deadline`), the sinks
//! received bytes go into (`sink`), the HTTP/1.1 client (`http`), and TLS for HTTPS
//! (`tls`, behind the feature `tls`).

pub(crate) mod deadline;
pub mod http;
pub mod sink;
pub mod tls;
