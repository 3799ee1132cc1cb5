//! The checksums object stores give for an object's bytes, over bytes that come in
//! pieces: MD5 (a single-part S3 object's ETag), SHA-1 (also a build's identity for
//! `--against`), and the CRCs of S3's `x-amz-checksum-*` (CRC32, CRC32C, CRC64NVME), with
//! base64 as those headers write them. The algorithms are crates' (RustCrypto's `md-5` and
//! `sha1`, the family `sha2` comes from; `crc`; `base64`: docs/building.md says what they
//! add); this file gives them the one shape every caller uses. SHA-256 is `sha2`'s (see
//! [`crate::s3::sigv4`]). None of them is used in measured code.

use base64::Engine as _;
use sha1::Digest as _;

/// MD5 (RFC 1321), fed in pieces.
#[derive(Clone)]
pub struct Md5(md5::Md5);

impl Default for Md5 {
    fn default() -> Md5 {
        Md5(md5::Md5::new())
    }
}

impl Md5 {
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    pub fn finish(self) -> [u8; 16] {
        self.0.finalize().into()
    }
}

/// SHA-1 (FIPS 180), fed in pieces.
#[derive(Clone)]
pub struct Sha1(sha1::Sha1);

impl Default for Sha1 {
    fn default() -> Sha1 {
        Sha1(sha1::Sha1::new())
    }
}

impl Sha1 {
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    pub fn finish(self) -> [u8; 20] {
        self.0.finalize().into()
    }
}

static CRC32: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
static CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
static CRC64NVME: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_NVME);

/// A CRC as S3 computes it, fed in pieces: `CRC32` (zlib's), `CRC32C` (Castagnoli) or
/// `CRC64NVME`.
#[derive(Clone)]
pub enum Crc {
    Bits32(crc::Digest<'static, u32>),
    Bits64(crc::Digest<'static, u64>),
}

impl Crc {
    pub fn crc32() -> Crc {
        Crc::Bits32(CRC32.digest())
    }

    pub fn crc32c() -> Crc {
        Crc::Bits32(CRC32C.digest())
    }

    pub fn crc64nvme() -> Crc {
        Crc::Bits64(CRC64NVME.digest())
    }

    pub fn update(&mut self, data: &[u8]) {
        match self {
            Crc::Bits32(d) => d.update(data),
            Crc::Bits64(d) => d.update(data),
        }
    }

    /// The CRC of everything fed.
    pub fn value(&self) -> u64 {
        match self {
            Crc::Bits32(d) => d.clone().finalize().into(),
            Crc::Bits64(d) => d.clone().finalize(),
        }
    }

    /// The CRC's bytes, most significant first, as S3's headers encode them.
    pub fn finish(&self) -> Vec<u8> {
        match self {
            Crc::Bits32(d) => d.clone().finalize().to_be_bytes().to_vec(),
            Crc::Bits64(d) => d.clone().finalize().to_be_bytes().to_vec(),
        }
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Standard base64 with padding (RFC 4648), as `x-amz-checksum-*` holds a digest.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
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
