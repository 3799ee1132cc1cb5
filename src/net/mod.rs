//! The network below the measurements: where a server listens and a client connects, Unix
//! or TCP (`addr`), a socket within a deadline (`deadline`), the sinks
//! received bytes go into (`sink`), the HTTP/1.1 client (`http`), and TLS for HTTPS
//! (`tls`, behind the feature `tls`).

pub mod addr;
pub(crate) mod deadline;
pub mod http;
pub mod sink;
pub mod tls;
