//! S3 for bb-seek: where objects are (`s3://BUCKET/PREFIX/`), the endpoint and its
//! addressing, and signed requests ready for an HTTP transport.

pub mod credentials;
pub mod endpoint;
mod ini;
pub mod sigv4;
