//! The network below the measurements: the sinks received bytes go into (`sink`), and
//! TLS for HTTPS (`tls`, behind the feature `tls`).

pub mod sink;
pub mod tls;
