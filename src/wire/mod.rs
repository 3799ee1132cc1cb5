//! The wire format that bb-ipc and bb-rpc share: a version handshake and length-prefixed
//! frames with a fixed little-endian header (`frame`'s items, re-exported here), and
//! MessagePack for arguments and results ([`msgpack`]).

mod error;
mod frame;
pub mod msgpack;

pub use self::error::WireError;
pub use self::frame::{
    buffered_frame, expect_hello, is_timeout, read_exact_bytes, read_frame, send_hello, status,
    write_frame, Header, DEFAULT_MAX_FRAME, FLAG_CALLBACK, FLAG_RESPONSE, HEADER_LEN, MAGIC,
    VERSION,
};
