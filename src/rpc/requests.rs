//! The calls a benchmark makes, echo made from the request id, and the check of each
//! reply against its request; and the same calls encoded once as frames, so that a
//! pipeline stamps ids into copies instead of encoding every call.

use super::protocol::{self, Call, Codec, Reply};
use crate::wire::Header;

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
        stamp(scratch, id);
        Call::Echo(scratch)
    }

    /// Checks that `reply` answers request `id`.
    pub(crate) fn check(&self, id: u32, reply: &Reply) -> std::result::Result<(), String> {
        let ok = match reply {
            Reply::Echo(data) => is_stamped(data, &self.base, id),
            Reply::Add(_) | Reply::Stats(_) => false,
        };
        if ok {
            Ok(())
        } else {
            Err(format!("the reply to call {id} does not match its request"))
        }
    }

    /// These calls encoded in `codec`, with the replies they expect.
    pub(crate) fn encoded(&self, codec: Codec) -> Encoded {
        let mut frame = Vec::new();
        protocol::push_request(&mut frame, 0, codec, &Call::Echo(&self.base));
        let request = Header::decode(
            frame[..crate::wire::HEADER_LEN]
                .try_into()
                .expect("a header"),
        );
        let mut reply = Vec::new();
        protocol::push_reply(&mut reply, &request, &Reply::Echo(&self.base));
        let reply_header = Header::decode(
            reply[..crate::wire::HEADER_LEN]
                .try_into()
                .expect("a header"),
        );
        let reply_payload = reply.split_off(crate::wire::HEADER_LEN);
        // Small frames are kept many times over, so that a batch is one copy.
        let copies = (ENCODED_BYTES / frame.len()).max(1);
        Encoded {
            frame_len: frame.len(),
            // echo's data ends each frame and each reply, behind any codec header.
            request_stamp: frame.len() - self.base.len(),
            frames: frame.repeat(copies),
            reply_header,
            reply_stamp: reply_payload.len() - self.base.len(),
            reply_payload,
        }
    }
}

/// About how many bytes of request frames an [`Encoded`] keeps ready.
const ENCODED_BYTES: usize = 4 << 10;

/// Stamps `id` over the front of an echo payload.
fn stamp(data: &mut [u8], id: u32) {
    let stamp = id.to_le_bytes();
    let n = stamp.len().min(data.len());
    data[..n].copy_from_slice(&stamp[..n]);
}

/// Whether `data` is `base` with `id` stamped over its front.
fn is_stamped(data: &[u8], base: &[u8], id: u32) -> bool {
    let stamp = id.to_le_bytes();
    let n = stamp.len().min(base.len());
    data.len() == base.len() && same(&data[..n], &stamp[..n]) && same(&data[n..], &base[n..])
}

/// Whether two slices of the same length hold the same bytes: folded, without a call
/// into the C library or an early exit, since the benchmark's replies are short and
/// match.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// [`Requests`] encoded in one codec: request frames ready to copy, each given its id
/// in the header and over the front of its data, and the reply each must get.
#[derive(Debug, Clone)]
pub(crate) struct Encoded {
    /// Request frames, id 0 and unstamped, back to back.
    frames: Vec<u8>,
    frame_len: usize,
    /// Where the echoed data starts in a request frame.
    request_stamp: usize,
    /// The header of a right reply, id 0.
    reply_header: Header,
    /// A right reply's payload, unstamped, and where its echoed data starts.
    reply_payload: Vec<u8>,
    reply_stamp: usize,
}

impl Encoded {
    /// Appends the request frames of calls `first` to `first + count - 1`.
    pub(crate) fn push(&self, out: &mut Vec<u8>, first: u32, count: usize) {
        let start = out.len();
        let mut left = count * self.frame_len;
        out.reserve(left);
        while left > 0 {
            let take = left.min(self.frames.len());
            out.extend_from_slice(&self.frames[..take]);
            left -= take;
        }
        for (i, frame) in out[start..].chunks_exact_mut(self.frame_len).enumerate() {
            let id = first.wrapping_add(i as u32);
            Header::set_id(frame, id);
            stamp(&mut frame[self.request_stamp..], id);
        }
    }

    /// How many frames at the front of `buf`, at most `most`, are byte for byte the
    /// replies to calls `first`, `first + 1`, … in that order; each is
    /// [`Encoded::reply_len`] bytes long.
    pub(crate) fn reply_run(&self, buf: &[u8], first: u32, most: usize) -> usize {
        buf.chunks_exact(self.reply_len())
            .take(most)
            .zip(0u32..)
            .take_while(|(frame, k)| {
                let (head, payload) = frame.split_at(crate::wire::HEADER_LEN);
                let h = Header::decode(head.try_into().expect("a header"));
                self.is_reply(&h, payload, first.wrapping_add(*k))
            })
            .count()
    }

    /// The length of a right reply's frame.
    pub(crate) fn reply_len(&self) -> usize {
        crate::wire::HEADER_LEN + self.reply_payload.len()
    }

    /// Whether a reply (`h` and its payload) is, byte for byte, the one call `id`
    /// expects. A reply that is not may still be right (another encoding of the same
    /// value): the caller then decodes and checks it.
    pub(crate) fn is_reply(&self, h: &Header, payload: &[u8], id: u32) -> bool {
        let (head, data) = self.reply_payload.split_at(self.reply_stamp);
        *h == Header {
            id,
            ..self.reply_header
        } && payload.len() == self.reply_payload.len()
            && same(&payload[..head.len()], head)
            && is_stamped(&payload[head.len()..], data, id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{self, HEADER_LEN};

    #[test]
    fn encoded_calls_are_the_frames_encoding_each_call_makes() {
        for codec in [Codec::Raw, Codec::Msgpack] {
            for size in [0, 3, 16, 300, 5000] {
                let requests = Requests::echo(size, 9);
                let encoded = requests.encoded(codec);
                let (first, count) = (u32::MAX - 2, 7);
                let mut got = b"before".to_vec();
                encoded.push(&mut got, first, count);
                let mut want = b"before".to_vec();
                let mut scratch = Vec::new();
                for i in 0..count {
                    let id = first.wrapping_add(i as u32);
                    protocol::push_request(&mut want, id, codec, &requests.call(id, &mut scratch));
                }
                assert!(got == want, "{codec:?}, {size} B");
            }
        }
    }

    /// The server's replies to calls `first` to `first + count - 1`, as it makes them from
    /// each request.
    fn server_replies(encoded: &Encoded, first: u32, count: usize) -> Vec<u8> {
        let mut frames = Vec::new();
        encoded.push(&mut frames, first, count);
        let mut replies = Vec::new();
        for frame in frames.chunks_exact(encoded.frame_len) {
            let request = Header::decode(frame[..HEADER_LEN].try_into().unwrap());
            let data = &frame[encoded.request_stamp..];
            protocol::push_reply(&mut replies, &request, &Reply::Echo(data));
        }
        replies
    }

    #[test]
    fn only_the_reply_a_call_expects_is_taken_as_it_byte_for_byte() {
        for codec in [Codec::Raw, Codec::Msgpack] {
            let requests = Requests::echo(16, 9);
            let encoded = requests.encoded(codec);
            let reply = server_replies(&encoded, 5, 1);
            let h = Header::decode(reply[..HEADER_LEN].try_into().unwrap());
            let payload = &reply[HEADER_LEN..];
            assert!(encoded.is_reply(&h, payload, 5), "{codec:?}");
            assert!(!encoded.is_reply(&h, payload, 6), "another call's id");
            let other = Header { id: 6, ..h };
            assert!(
                !encoded.is_reply(&other, payload, 6),
                "call 5's data under id 6"
            );
            for at in 0..payload.len() {
                let mut changed = payload.to_vec();
                changed[at] ^= 1;
                assert!(
                    !encoded.is_reply(&h, &changed, 5),
                    "{codec:?}: byte {at} changed"
                );
            }
            for h in [
                Header {
                    status: wire::status::ERROR,
                    ..h
                },
                Header {
                    flags: h.flags & !wire::FLAG_RESPONSE,
                    ..h
                },
                Header {
                    method: protocol::ADD,
                    ..h
                },
            ] {
                assert!(!encoded.is_reply(&h, payload, 5), "{h:?}");
            }
            assert!(!encoded.is_reply(&h, &payload[..15], 5), "short");
        }
    }

    #[test]
    fn a_run_of_replies_counts_the_exact_ones_in_order() {
        for codec in [Codec::Raw, Codec::Msgpack] {
            let requests = Requests::echo(16, 9);
            let encoded = requests.encoded(codec);
            let replies = server_replies(&encoded, 5, 5);
            assert_eq!(replies.len(), 5 * encoded.reply_len());
            assert_eq!(encoded.reply_run(&replies, 5, 64), 5, "{codec:?}");
            assert_eq!(encoded.reply_run(&replies, 5, 3), 3, "at most as asked");
            assert_eq!(encoded.reply_run(&replies[..replies.len() - 1], 5, 64), 4);
            assert_eq!(encoded.reply_run(&replies, 6, 64), 0, "ids out of step");
            let mut changed = replies.clone();
            changed[3 * encoded.reply_len() + HEADER_LEN] ^= 1;
            assert_eq!(
                encoded.reply_run(&changed, 5, 64),
                3,
                "up to a changed byte"
            );
        }
    }
}
