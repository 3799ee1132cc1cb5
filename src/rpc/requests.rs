//! The calls a benchmark makes, echo made from the request id, and the check of each
//! reply against its request.

use super::protocol::{self, Call, Reply};

/// The calls a benchmark makes (echo), made from the request id so that every reply can
/// be checked against what its request asked without keeping the request.
#[derive(Debug, Clone)]
pub(crate) struct Requests {
    pub method: u16,
    /// echo's payload, bytes from the seed; each request stamps its id over the front.
    base: Vec<u8>,
}

impl Requests {
    pub(crate) fn echo(size: usize, seed: u64) -> Requests {
        let mut base = vec![0u8; size];
        crate::util::rng::Rng::new(seed).fill(&mut base);
        Requests {
            method: protocol::ECHO,
            base,
        }
    }

    /// The size of each request's payload.
    pub(crate) fn payload_len(&self) -> usize {
        self.base.len()
    }

    /// Request `id`'s call; its bytes are built in `scratch`.
    pub(crate) fn call<'a>(&self, id: u32, scratch: &'a mut Vec<u8>) -> Call<'a> {
        scratch.clear();
        scratch.extend_from_slice(&self.base);
        let stamp = id.to_le_bytes();
        let n = stamp.len().min(scratch.len());
        scratch[..n].copy_from_slice(&stamp[..n]);
        Call::Echo(scratch)
    }

    /// Checks that `reply` answers request `id`.
    pub(crate) fn check(&self, id: u32, reply: &Reply) -> std::result::Result<(), String> {
        let ok = match reply {
            Reply::Echo(data) => {
                let stamp = id.to_le_bytes();
                let n = stamp.len().min(self.base.len());
                data.len() == self.base.len()
                    && data[..n] == stamp[..n]
                    && data[n..] == self.base[n..]
            }
            Reply::Add(_) | Reply::Stats(_) => false,
        };
        if ok {
            Ok(())
        } else {
            Err(format!("the reply to call {id} does not match its request"))
        }
    }
}
