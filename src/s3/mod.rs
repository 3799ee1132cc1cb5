//! S3 for bb-seek: where objects are (`s3://BUCKET/PREFIX/`), the endpoint and its
//! addressing, and signed requests ready for an HTTP transport.

pub mod sigv4;
