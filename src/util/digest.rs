//! The checksums object stores give for an object's bytes, computed here over bytes that
//! come in pieces: MD5 (a single-part S3 object's ETag), SHA-1, and the CRCs of S3's
//! `x-amz-checksum-*` (CRC32, CRC32C, CRC64NVME), with base64 as those headers write
//! them. Small table code rather than a dependency each; SHA-256 is `sha2`'s (see
//! [`crate::s3::sigv4`]). None of them is used in measured code.

/// MD5 (RFC 1321), fed in pieces.
#[derive(Clone)]
pub struct Md5 {
    state: [u32; 4],
    blocks: Blocks,
}

impl Default for Md5 {
    fn default() -> Md5 {
        Md5 {
            state: [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476],
            blocks: Blocks::default(),
        }
    }
}

/// MD5's shift amounts, per round.
const MD5_SHIFTS: [[u32; 4]; 4] = [
    [7, 12, 17, 22],
    [5, 9, 14, 20],
    [4, 11, 16, 23],
    [6, 10, 15, 21],
];

/// MD5's constants: the integer part of 2^32 × |sin(i + 1)|.
const MD5_K: [u32; 64] = [
    0xd76a_a478,
    0xe8c7_b756,
    0x2420_70db,
    0xc1bd_ceee,
    0xf57c_0faf,
    0x4787_c62a,
    0xa830_4613,
    0xfd46_9501,
    0x6980_98d8,
    0x8b44_f7af,
    0xffff_5bb1,
    0x895c_d7be,
    0x6b90_1122,
    0xfd98_7193,
    0xa679_438e,
    0x49b4_0821,
    0xf61e_2562,
    0xc040_b340,
    0x265e_5a51,
    0xe9b6_c7aa,
    0xd62f_105d,
    0x0244_1453,
    0xd8a1_e681,
    0xe7d3_fbc8,
    0x21e1_cde6,
    0xc337_07d6,
    0xf4d5_0d87,
    0x455a_14ed,
    0xa9e3_e905,
    0xfcef_a3f8,
    0x676f_02d9,
    0x8d2a_4c8a,
    0xfffa_3942,
    0x8771_f681,
    0x6d9d_6122,
    0xfde5_380c,
    0xa4be_ea44,
    0x4bde_cfa9,
    0xf6bb_4b60,
    0xbebf_bc70,
    0x289b_7ec6,
    0xeaa1_27fa,
    0xd4ef_3085,
    0x0488_1d05,
    0xd9d4_d039,
    0xe6db_99e5,
    0x1fa2_7cf8,
    0xc4ac_5665,
    0xf429_2244,
    0x432a_ff97,
    0xab94_23a7,
    0xfc93_a039,
    0x655b_59c3,
    0x8f0c_cc92,
    0xffef_f47d,
    0x8584_5dd1,
    0x6fa8_7e4f,
    0xfe2c_e6e0,
    0xa301_4314,
    0x4e08_11a1,
    0xf753_7e82,
    0xbd3a_f235,
    0x2ad7_d2bb,
    0xeb86_d391,
];

impl Md5 {
    pub fn update(&mut self, data: &[u8]) {
        let state = &mut self.state;
        self.blocks
            .update(data, &mut |block| md5_block(state, block));
    }

    /// The digest of everything fed.
    pub fn finish(mut self) -> [u8; 16] {
        let bits = self.blocks.len.wrapping_mul(8).to_le_bytes();
        let state = &mut self.state;
        self.blocks.pad(bits, &mut |block| md5_block(state, block));
        let mut out = [0; 16];
        for (i, word) in self.state.iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&word.to_le_bytes());
        }
        out
    }
}

fn md5_block(state: &mut [u32; 4], block: &[u8; 64]) {
    let m: [u32; 16] =
        std::array::from_fn(|i| u32::from_le_bytes(block[4 * i..4 * i + 4].try_into().unwrap()));
    let [mut a, mut b, mut c, mut d] = *state;
    for i in 0..64 {
        let (f, g) = match i / 16 {
            0 => ((b & c) | (!b & d), i),
            1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
            2 => (b ^ c ^ d, (3 * i + 5) % 16),
            _ => (c ^ (b | !d), (7 * i) % 16),
        };
        let f = f.wrapping_add(a).wrapping_add(MD5_K[i]).wrapping_add(m[g]);
        a = d;
        d = c;
        c = b;
        b = b.wrapping_add(f.rotate_left(MD5_SHIFTS[i / 16][i % 4]));
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d]) {
        *s = s.wrapping_add(v);
    }
}

/// SHA-1 (FIPS 180-4), fed in pieces: S3's `x-amz-checksum-sha1`.
#[derive(Clone)]
pub struct Sha1 {
    state: [u32; 5],
    blocks: Blocks,
}

impl Default for Sha1 {
    fn default() -> Sha1 {
        Sha1 {
            state: [
                0x6745_2301,
                0xefcd_ab89,
                0x98ba_dcfe,
                0x1032_5476,
                0xc3d2_e1f0,
            ],
            blocks: Blocks::default(),
        }
    }
}

impl Sha1 {
    pub fn update(&mut self, data: &[u8]) {
        let state = &mut self.state;
        self.blocks
            .update(data, &mut |block| sha1_block(state, block));
    }

    pub fn finish(mut self) -> [u8; 20] {
        let bits = self.blocks.len.wrapping_mul(8).to_be_bytes();
        let state = &mut self.state;
        self.blocks.pad(bits, &mut |block| sha1_block(state, block));
        let mut out = [0; 20];
        for (i, word) in self.state.iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&word.to_be_bytes());
        }
        out
    }
}

fn sha1_block(state: &mut [u32; 5], block: &[u8; 64]) {
    let mut w = [0u32; 80];
    for i in 0..16 {
        w[i] = u32::from_be_bytes(block[4 * i..4 * i + 4].try_into().unwrap());
    }
    for i in 16..80 {
        w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
    }
    let [mut a, mut b, mut c, mut d, mut e] = *state;
    for (i, wi) in w.iter().enumerate() {
        let (f, k) = match i / 20 {
            0 => ((b & c) | (!b & d), 0x5a82_7999),
            1 => (b ^ c ^ d, 0x6ed9_eba1),
            2 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
            _ => (b ^ c ^ d, 0xca62_c1d6),
        };
        let t = a
            .rotate_left(5)
            .wrapping_add(f)
            .wrapping_add(e)
            .wrapping_add(k)
            .wrapping_add(*wi);
        e = d;
        d = c;
        c = b.rotate_left(30);
        b = a;
        a = t;
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e]) {
        *s = s.wrapping_add(v);
    }
}

/// The 64-byte blocks of MD5 and SHA-1: bytes held until a block is whole, and the
/// padding that ends the message (a 1 bit, zeros, the length in bits).
#[derive(Clone)]
struct Blocks {
    buf: [u8; 64],
    held: usize,
    /// Bytes fed in all.
    len: u64,
}

impl Default for Blocks {
    fn default() -> Blocks {
        Blocks {
            buf: [0; 64],
            held: 0,
            len: 0,
        }
    }
}

impl Blocks {
    fn update(&mut self, mut data: &[u8], block: &mut dyn FnMut(&[u8; 64])) {
        self.len = self.len.wrapping_add(data.len() as u64);
        if self.held > 0 {
            let n = (64 - self.held).min(data.len());
            self.buf[self.held..self.held + n].copy_from_slice(&data[..n]);
            self.held += n;
            data = &data[n..];
            if self.held < 64 {
                return;
            }
            block(&self.buf);
            self.held = 0;
        }
        let mut chunks = data.chunks_exact(64);
        for chunk in &mut chunks {
            block(chunk.try_into().unwrap());
        }
        let rest = chunks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
    }

    /// Ends the message with `bits`, its length in bits in the hash's byte order.
    fn pad(&mut self, bits: [u8; 8], block: &mut dyn FnMut(&[u8; 64])) {
        let mut tail = [0u8; 72];
        tail[0] = 0x80;
        // Padding to 56 bytes past a block's start, then the length.
        let zeros = (55 - self.held as i64).rem_euclid(64) as usize;
        tail[1 + zeros..9 + zeros].copy_from_slice(&bits);
        let len = self.len;
        self.update(&tail[..9 + zeros], block);
        debug_assert_eq!(self.held, 0);
        self.len = len;
    }
}

/// A reflected CRC of up to 64 bits, a byte at a time through a table: `CRC32` (zlib's),
/// `CRC32C` (Castagnoli) and `CRC64NVME`, as S3 computes them.
#[derive(Clone)]
pub struct Crc {
    table: &'static [u64; 256],
    value: u64,
    mask: u64,
}

static CRC32_TABLE: [u64; 256] = crc_table(0xedb8_8320);
static CRC32C_TABLE: [u64; 256] = crc_table(0x82f6_3b78);
static CRC64NVME_TABLE: [u64; 256] = crc_table(0x9a6c_9329_ac4b_c9b5);

/// The table of a reflected CRC of reflected polynomial `poly`.
const fn crc_table(poly: u64) -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 { (c >> 1) ^ poly } else { c >> 1 };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

impl Crc {
    pub fn crc32() -> Crc {
        Crc::new(&CRC32_TABLE, 32)
    }

    pub fn crc32c() -> Crc {
        Crc::new(&CRC32C_TABLE, 32)
    }

    pub fn crc64nvme() -> Crc {
        Crc::new(&CRC64NVME_TABLE, 64)
    }

    fn new(table: &'static [u64; 256], bits: u32) -> Crc {
        let mask = u64::MAX >> (64 - bits);
        Crc {
            table,
            value: mask,
            mask,
        }
    }

    pub fn update(&mut self, data: &[u8]) {
        let mut c = self.value;
        for &b in data {
            c = self.table[((c ^ b as u64) & 0xff) as usize] ^ (c >> 8);
        }
        self.value = c;
    }

    /// The CRC of everything fed.
    pub fn value(&self) -> u64 {
        self.value ^ self.mask
    }

    /// The CRC's bytes, most significant first, as S3's headers encode them.
    pub fn finish(&self) -> Vec<u8> {
        let bytes = (self.mask.count_ones() / 8) as usize;
        self.value().to_be_bytes()[8 - bytes..].to_vec()
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Standard base64 with padding (RFC 4648), as `x-amz-checksum-*` holds a digest.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md5(data: &[u8]) -> String {
        let mut m = Md5::default();
        m.update(data);
        hex(&m.finish())
    }

    fn sha1(data: &[u8]) -> String {
        let mut s = Sha1::default();
        s.update(data);
        hex(&s.finish())
    }

    fn crc(mut c: Crc, data: &[u8]) -> u64 {
        c.update(data);
        c.value()
    }

    #[test]
    fn known_vectors() {
        // RFC 1321's test suite.
        assert_eq!(md5(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            md5(
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890"
            ),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
        assert_eq!(
            md5(b"The quick brown fox jumps over the lazy dog"),
            "9e107d9d372bb6826bd81d3542a419d6"
        );
        // FIPS 180's examples.
        assert_eq!(sha1(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(sha1(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            sha1(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        // The catalogue's check values (the CRC of "123456789").
        assert_eq!(crc(Crc::crc32(), b"123456789"), 0xcbf4_3926);
        assert_eq!(crc(Crc::crc32c(), b"123456789"), 0xe306_9283);
        assert_eq!(crc(Crc::crc64nvme(), b"123456789"), 0xae8b_1486_0a79_9888);
        assert_eq!(crc(Crc::crc32(), b""), 0);
        // S3's header for the CRC32 of "hello world" (the AWS CLI's), and RFC 4648's.
        let mut c = Crc::crc32();
        c.update(b"hello world");
        assert_eq!(base64(&c.finish()), "DUoRhQ==");
        for (text, b64) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(text.as_bytes()), b64, "{text}");
        }
    }

    #[test]
    fn pieces_of_any_size_give_the_digest_of_the_whole() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let (md5_whole, sha1_whole) = (md5(&data), sha1(&data));
        let crc_whole = crc(Crc::crc32c(), &data);
        for piece in [1, 3, 55, 56, 63, 64, 65, 127, 4096, 99_999] {
            let (mut m, mut s, mut c) = (Md5::default(), Sha1::default(), Crc::crc32c());
            for p in data.chunks(piece) {
                m.update(p);
                s.update(p);
                c.update(p);
            }
            assert_eq!(hex(&m.finish()), md5_whole, "{piece}");
            assert_eq!(hex(&s.finish()), sha1_whole, "{piece}");
            assert_eq!(c.value(), crc_whole, "{piece}");
        }
        // Python's hashlib and zlib on the same bytes, at the padding's edges and whole.
        for (n, md5_hex, sha1_hex, crc32) in [
            (
                55,
                "8d24280288a696559fd8d5aa1b6d8c6e",
                "aecd1643c9903b9bae8cb94f53c50f8a4e18605b",
                0xd551_cbc6,
            ),
            (
                56,
                "ef2c72b7254c92459e498eddd4ace573",
                "f5d65c621c02cc8e785159feff8088e3072da1bc",
                0x3a6f_6a75,
            ),
            (
                64,
                "a2fcb39a253b9b785b1f97518fa37683",
                "1e17ae1fc093e5daca033553c97a5192ca164486",
                0xd324_a7d4,
            ),
            (
                100_000,
                "d4daff469aac4cf8a8f2c0e812ced852",
                "e2302d6d30c391ab6cbab1bc008e1e4add094d77",
                0x72af_c085,
            ),
        ] {
            assert_eq!(md5(&data[..n]), md5_hex, "{n}");
            assert_eq!(sha1(&data[..n]), sha1_hex, "{n}");
            assert_eq!(crc(Crc::crc32(), &data[..n]), crc32, "{n}");
        }
    }
}
