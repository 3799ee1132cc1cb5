//! The network below the measurements: TLS for HTTPS (`tls`, behind the feature `tls`).

pub mod tls;
