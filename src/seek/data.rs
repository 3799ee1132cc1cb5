//! bb-seek's objects: their names (`random-1mb.txt`, `random-1gb.txt`, as the original),
//! their bytes (text computed from the seed and the position, so the expected bytes of any
//! range are produced directly, without the file or the rest of the object), and the
//! directory generator that keeps valid objects, rewrites wrong ones atomically, and
//! records a manifest of sizes, checksums and the generator's version. Objects of any size
//! are written, checked and summed in bounded chunks, never held whole.

use crate::util::error::{Error, Result};
use crate::util::json::Json;
use crate::util::rng::{Fnv1a64, Rng};
use std::io::{Read, Write};
use std::path::Path;

/// The manifest's file name, beside the objects.
pub(crate) const MANIFEST: &str = "manifest.json";

/// The version of the bytes [`Object::fill`] makes, recorded in the manifest. Version 1 is
/// the generator of the first bb-seek (manifests without a version were written by it):
/// objects made by it stay valid. A change to the bytes must bump it.
pub(crate) const GENERATOR_VERSION: u64 = 1;

/// The piece objects are generated, written, uploaded and checked in: memory stays this,
/// whatever the object's size.
pub(crate) const CHUNK: usize = 1 << 20;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .";

/// One object: its name and size, and for a generated one the key its bytes derive
/// from (an existing object's bytes are not known here: see [`Fingerprint`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub name: String,
    pub size: u64,
    key: Option<u64>,
}

impl Object {
    pub fn new(size: u64, seed: u64) -> Object {
        Object {
            name: object_name(size),
            size,
            // Each size gets its own bytes, so reading the wrong object is caught.
            key: Some(Rng::new(seed ^ size.rotate_left(29)).next_u64()),
        }
    }

    /// An object bb-seek did not make (`--object`), named `name` at its place.
    pub fn existing(name: &str, size: u64) -> Object {
        Object {
            name: name.to_string(),
            size,
            key: None,
        }
    }

    /// Whether its bytes are the generator's, known here.
    pub fn generated(&self) -> bool {
        self.key.is_some()
    }

    /// Writes the object's bytes from `offset` into `out`: lines of 63 random letters,
    /// digits, spaces and dots. Counter-based: the 8 bytes of word `i` (bytes `8i..8i+8`)
    /// are one SplitMix64 output seeded with `key ^ i`, so any range is made directly.
    pub(crate) fn fill(&self, offset: u64, out: &mut [u8]) {
        let key = self
            .key
            .expect("only a generated object's bytes are made (Object::generated)");
        let mut pos = offset;
        let mut done = 0;
        while done < out.len() {
            let index = pos / 8;
            let first = (pos % 8) as usize;
            if first == 0 && out.len() - done >= 8 {
                Self::put_word(key, index, out, done);
                done += 8;
                pos += 8;
                continue;
            }
            let mut word = [0u8; 8];
            Self::put_word(key, index, &mut word, 0);
            let n = (8 - first).min(out.len() - done);
            out[done..done + n].copy_from_slice(&word[first..first + n]);
            done += n;
            pos += n as u64;
        }
    }

    /// Writes word `index` of the object (8 bytes of text, the last one a newline in
    /// every eighth word: byte 63 of each 64-byte line) to `out[at..at + 8]`. Written out
    /// byte by byte, inlined, with no call: unoptimised builds (the tests') make GiBs of it.
    #[inline(always)]
    fn put_word(key: u64, index: u64, out: &mut [u8], at: usize) {
        let random = Rng::new(key ^ index).next_u64();
        macro_rules! letter {
            ($k:expr) => {
                out[at + $k] = ALPHABET[((random >> (8 * $k)) & 63) as usize]
            };
        }
        letter!(0);
        letter!(1);
        letter!(2);
        letter!(3);
        letter!(4);
        letter!(5);
        letter!(6);
        if index % 8 == 7 {
            out[at + 7] = b'\n';
        } else {
            letter!(7);
        }
    }

    /// The whole object (for tests: objects are otherwise never held whole).
    #[cfg(test)]
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0; self.size as usize];
        self.fill(0, &mut out);
        out
    }

    /// Writes `len` bytes of the object from `offset` to `w` in chunks of at most
    /// [`CHUNK`]: the one writer behind files, checksums and uploads (a multipart upload
    /// writes each part's range with it).
    pub(crate) fn write_range(
        &self,
        offset: u64,
        len: u64,
        w: &mut dyn Write,
    ) -> std::io::Result<()> {
        let mut buf = vec![0; (len.min(CHUNK as u64)) as usize];
        let mut at = offset;
        let end = offset + len;
        while at < end {
            let n = (end - at).min(buf.len() as u64) as usize;
            self.fill(at, &mut buf[..n]);
            w.write_all(&buf[..n])?;
            at += n as u64;
        }
        Ok(())
    }

    /// The checksum the manifest records (FNV-1a 64 in hex), computed in chunks.
    pub(crate) fn checksum(&self) -> String {
        let mut hashing = Hashing::new(std::io::sink());
        self.write_range(0, self.size, &mut hashing)
            .expect("hashing cannot fail");
        hashing.hex()
    }

    /// Writes the object to `path` atomically, in chunks; returns its checksum.
    fn write_file(&self, path: &Path) -> Result<String> {
        let mut sum = String::new();
        crate::util::file::write_output_with(path, &mut |w| {
            let mut hashing = Hashing::new(w);
            self.write_range(0, self.size, &mut hashing)?;
            sum = hashing.hex();
            Ok(())
        })?;
        Ok(sum)
    }

    /// The checksum of the file at `path` when it holds exactly this object's bytes (read
    /// and compared in chunks), None otherwise.
    fn file_checksum_if_valid(&self, path: &Path) -> Option<String> {
        let mut file = std::fs::File::open(path).ok()?;
        let mut expected = Expected::new(self);
        let mut hashing = Hashing::new(std::io::sink());
        let mut buf = vec![0; (self.size.min(CHUNK as u64)) as usize];
        let mut at = 0;
        while at < self.size {
            let n = (self.size - at).min(buf.len() as u64) as usize;
            file.read_exact(&mut buf[..n]).ok()?;
            if expected.mismatch(at, &buf[..n]).is_some() {
                return None;
            }
            hashing.write_all(&buf[..n]).ok()?;
            at += n as u64;
        }
        (file.read(&mut [0]).ok()? == 0).then(|| hashing.hex())
    }
}

/// A writer that passes bytes on and sums them, so that writing or reading an object
/// gives its checksum in the same pass.
struct Hashing<W: Write> {
    inner: W,
    hash: Fnv1a64,
}

impl<W: Write> Hashing<W> {
    fn new(inner: W) -> Hashing<W> {
        Hashing {
            inner,
            hash: Fnv1a64::default(),
        }
    }

    /// The checksum the manifest records: FNV-1a 64 in hex.
    fn hex(&self) -> String {
        format!("{:016x}", self.hash.0)
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Compares bytes read with the object's expected bytes, regenerated piece by piece into
/// one small buffer.
pub(crate) struct Expected {
    object: Object,
    buf: Vec<u8>,
}

impl Expected {
    const PIECE: usize = 64 << 10;

    pub(crate) fn new(object: &Object) -> Expected {
        Expected {
            object: object.clone(),
            buf: vec![0; Self::PIECE],
        }
    }

    /// The index in `got` of the first byte that differs from the object's bytes at
    /// `offset` onwards; None when all are equal.
    pub(crate) fn mismatch(&mut self, offset: u64, got: &[u8]) -> Option<usize> {
        for (i, piece) in got.chunks(Self::PIECE).enumerate() {
            let at = i * Self::PIECE;
            let want = &mut self.buf[..piece.len()];
            self.object.fill(offset + at as u64, want);
            if piece != want {
                return Some(at + piece.iter().zip(want.iter()).position(|(a, b)| a != b)?);
            }
        }
        None
    }

    /// The expected byte at `offset`, for a message.
    pub(crate) fn byte_at(&self, offset: u64) -> u8 {
        let mut b = [0];
        self.object.fill(offset, &mut b);
        b[0]
    }
}

/// What a shot's bytes are checked by where the object's bytes are not known here (an
/// existing object): FNV-1a 64 of all the bytes a pattern's reads deliver, in order, and
/// of the last `hold` of them, what a shot's memory keeps. Made once before the run from
/// a read of the object that its store's checksum vouched for, where it gave one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    pub whole: u64,
    pub tail: u64,
}

impl Fingerprint {
    /// As four numbers of 32 bits, each exact as an `f64`: the harness hands a prelude's
    /// values to forks as `f64`s.
    pub(crate) fn values(&self) -> [f64; 4] {
        let halves = |v: u64| [(v >> 32) as f64, (v & 0xffff_ffff) as f64];
        let [a, b] = halves(self.whole);
        let [c, d] = halves(self.tail);
        [a, b, c, d]
    }

    /// The fingerprint [`Fingerprint::values`] gave: None for values no fingerprint
    /// gives.
    pub(crate) fn from_values(v: &[f64]) -> Option<Fingerprint> {
        let half =
            |x: f64| (x.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&x)).then_some(x as u64);
        let join = |hi: f64, lo: f64| Some(half(hi)? << 32 | half(lo)?);
        match v {
            [a, b, c, d] => Some(Fingerprint {
                whole: join(*a, *b)?,
                tail: join(*c, *d)?,
            }),
            _ => None,
        }
    }

    /// FNV-1a 64 in hex, for messages.
    pub(crate) fn hex(v: u64) -> String {
        format!("{v:016x}")
    }
}

/// A [`Fingerprint`] made of bytes that come in pieces: `len` bytes in all, the last
/// `hold` of them its tail.
pub(crate) struct Fingerprinting {
    whole: Fnv1a64,
    tail: Fnv1a64,
    at: u64,
    tail_from: u64,
}

impl Fingerprinting {
    pub(crate) fn new(len: u64, hold: u64) -> Fingerprinting {
        Fingerprinting {
            whole: Fnv1a64::default(),
            tail: Fnv1a64::default(),
            at: 0,
            tail_from: len - len.min(hold),
        }
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.whole.update(bytes);
        let end = self.at + bytes.len() as u64;
        if end > self.tail_from {
            let skip = self.tail_from.saturating_sub(self.at) as usize;
            self.tail.update(&bytes[skip..]);
        }
        self.at = end;
    }

    pub(crate) fn finish(&self) -> Fingerprint {
        Fingerprint {
            whole: self.whole.0,
            tail: self.tail.0,
        }
    }
}

/// FNV-1a 64 of `pieces` one after the other: a ring's bytes in the order they came.
pub(crate) fn fnv_of(pieces: &[&[u8]]) -> u64 {
    let mut hash = Fnv1a64::default();
    for p in pieces {
        hash.update(p);
    }
    hash.0
}

/// `random-1gb.txt` for 1 GiB, `random-1mb.txt` for 1 MiB, `random-64kb.txt` for 64 KiB,
/// `random-1000b.txt` otherwise: the largest unit that divides the size.
pub(crate) fn object_name(size: u64) -> String {
    let units = [(30, "gb"), (20, "mb"), (10, "kb")];
    match units
        .iter()
        .find(|(shift, _)| size > 0 && size.is_multiple_of(1 << shift))
    {
        Some((shift, unit)) => format!("random-{}{unit}.txt", size >> shift),
        None => format!("random-{size}b.txt"),
    }
}

/// What [`ensure_dir`] did with each object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Kept,
    Written,
}

/// What [`ensure_dir`] did: each object's outcome, and a line saying why the manifest's
/// entries were not trusted (written by another generator version), if so.
pub(crate) struct Ensured {
    pub outcomes: Vec<(Object, Outcome)>,
    pub stale: Option<String>,
}

/// Makes sure `dir` holds valid objects of `sizes` for `seed`: present and valid ones are
/// kept, missing or wrong ones (re)written atomically in chunks, and the manifest updated.
/// With `check_content`, "valid" means every byte; otherwise the manifest (same seed, same
/// generator version, same size) and the file's size, which is what a run checks before it
/// starts (it checks the bytes it reads anyway).
pub(crate) fn ensure_dir(
    dir: &Path,
    sizes: &[u64],
    seed: u64,
    check_content: bool,
) -> Result<Ensured> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let manifest_path = dir.join(MANIFEST);
    let (listed, stale) = match read_manifest(&manifest_path, seed) {
        Listed::Entries(entries) => (entries, None),
        Listed::OtherVersion(v) => (
            Vec::new(),
            Some(format!(
                "{} was written by generator version {v}, and this bb-seek makes version {GENERATOR_VERSION}: its objects are made again",
                manifest_path.display()
            )),
        ),
    };
    let mut outcomes = Vec::new();
    let mut sums = Vec::new();
    for &size in sizes {
        let object = Object::new(size, seed);
        let path = dir.join(&object.name);
        let on_disk = std::fs::metadata(&path).map(|m| m.len()).ok();
        let listed_sum = listed
            .iter()
            .find(|(n, s, _)| *n == object.name && *s == size)
            .map(|(_, _, sum)| sum.clone());
        let valid = match (on_disk == Some(size), check_content) {
            (false, _) => None,
            (true, true) => object.file_checksum_if_valid(&path),
            (true, false) => listed_sum,
        };
        match valid {
            Some(sum) => {
                sums.push(sum);
                outcomes.push((object, Outcome::Kept));
            }
            None => {
                sums.push(object.write_file(&path)?);
                outcomes.push((object, Outcome::Written));
            }
        }
    }
    let unlisted = outcomes
        .iter()
        .any(|(o, _)| !listed.iter().any(|(n, s, _)| *n == o.name && *s == o.size));
    // The other objects it lists stay listed while they are there with their size.
    let others = listed.len();
    let listed: Vec<(String, u64, String)> = listed
        .into_iter()
        .filter(|(n, size, _)| {
            outcomes.iter().any(|(o, _)| o.name == *n)
                || std::fs::metadata(dir.join(n)).is_ok_and(|m| m.is_file() && m.len() == *size)
        })
        .collect();
    let gone = listed.len() < others;
    if outcomes.iter().any(|(_, o)| *o == Outcome::Written) || unlisted || gone || stale.is_some() {
        let mut entries: Vec<(String, u64, String)> = listed
            .into_iter()
            .filter(|(n, _, _)| !outcomes.iter().any(|(o, _)| o.name == *n))
            .collect();
        for ((object, _), sum) in outcomes.iter().zip(sums) {
            entries.push((object.name.clone(), object.size, sum));
        }
        entries.sort_by_key(|(_, size, _)| *size);
        crate::util::file::write_output(&manifest_path, manifest(seed, &entries).as_bytes())?;
    }
    Ok(Ensured { outcomes, stale })
}

/// The checksum of bytes held in memory (a manifest's), as [`Object::checksum`] writes it.
#[cfg(test)]
pub(crate) fn checksum(bytes: &[u8]) -> String {
    format!("{:016x}", crate::util::rng::fnv1a64(bytes))
}

/// The manifest's text: the seed, the generator's version, and each object's name, size
/// and checksum.
pub(crate) fn manifest(seed: u64, entries: &[(String, u64, String)]) -> String {
    let objects = entries
        .iter()
        .map(|(name, size, sum)| {
            Json::obj([
                ("name", Json::str(name)),
                ("size", Json::Num(*size as f64)),
                ("fnv1a64", Json::str(sum)),
            ])
        })
        .collect();
    let mut text = Json::obj([
        ("generator", Json::str("bb-seek gen")),
        ("generatorVersion", Json::Num(GENERATOR_VERSION as f64)),
        ("seed", Json::str(seed.to_string())),
        ("objects", Json::Arr(objects)),
    ])
    .to_pretty();
    text.push('\n');
    text
}

/// What a manifest lists.
pub(crate) enum Listed {
    /// Its entries (none when it is missing, unreadable or for another seed).
    Entries(Vec<(String, u64, String)>),
    /// It was written by another generator version: its entries say nothing.
    OtherVersion(u64),
}

fn read_manifest(path: &Path, seed: u64) -> Listed {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_manifest(&text, seed),
        Err(_) => Listed::Entries(Vec::new()),
    }
}

/// The entries of a manifest's text for `seed` (a destination's, read back).
pub(crate) fn parse_manifest(text: &str, seed: u64) -> Listed {
    let Ok(json) = Json::parse(text) else {
        return Listed::Entries(Vec::new());
    };
    // A manifest without a version is the first generator's: version 1.
    let version = json
        .get("generatorVersion")
        .map_or(Some(1.0), Json::as_f64)
        .map_or(0, |v| v as u64);
    if version != GENERATOR_VERSION {
        return Listed::OtherVersion(version);
    }
    if json.get("seed").and_then(Json::as_str) != Some(seed.to_string().as_str()) {
        return Listed::Entries(Vec::new());
    }
    Listed::Entries(
        json.get("objects")
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .filter_map(|o| {
                Some((
                    o.get("name")?.as_str()?.to_string(),
                    o.get("size")?.as_f64()? as u64,
                    o.get("fnv1a64")?.as_str()?.to_string(),
                ))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_original() {
        assert_eq!(object_name(1 << 20), "random-1mb.txt");
        assert_eq!(object_name(16 << 20), "random-16mb.txt");
        assert_eq!(object_name(64 << 10), "random-64kb.txt");
        assert_eq!(object_name(1000), "random-1000b.txt");
        assert_eq!(object_name(1 << 30), "random-1gb.txt");
        assert_eq!(object_name(100 << 20), "random-100mb.txt");
        assert_eq!(object_name(3584 << 20), "random-3584mb.txt");
    }

    #[test]
    fn ranges_written_summed_and_checked_in_chunks_equal_the_whole() {
        for seed in [0, 1, 42, u64::MAX] {
            let o = Object::new(3 * CHUNK as u64 + 4321, seed);
            let whole = o.bytes();
            let mut written = Vec::new();
            o.write_range(0, o.size, &mut written).unwrap();
            assert!(written == whole, "seed {seed}");
            assert_eq!(o.checksum(), checksum(&whole));
            let mut expected = Expected::new(&o);
            let mut state = seed;
            for _ in 0..50 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let offset = (state >> 11) % o.size;
                let len = ((state >> 3) % (200 << 10)).min(o.size - offset) as usize;
                let range = &whole[offset as usize..offset as usize + len];
                let mut part = vec![0; len];
                o.fill(offset, &mut part);
                assert!(part == range, "seed {seed}: {offset}+{len}");
                assert_eq!(expected.mismatch(offset, range), None);
                if len > 0 {
                    // A corrupted byte anywhere in the range is found where it is.
                    let at = (state as usize >> 7) % len;
                    let mut bad = range.to_vec();
                    bad[at] ^= 0x40;
                    assert_eq!(expected.mismatch(offset, &bad), Some(at));
                    assert_eq!(expected.byte_at(offset + at as u64), range[at]);
                }
            }
        }
    }

    #[test]
    fn any_range_equals_the_same_range_of_the_whole() {
        let o = Object::new(10_000, 42);
        let whole = o.bytes();
        assert_eq!(whole, Object::new(10_000, 42).bytes(), "deterministic");
        assert_ne!(whole, Object::new(10_000, 43).bytes(), "seeded");
        assert_ne!(whole[..1000], Object::new(20_000, 42).bytes()[..1000]);
        for (offset, len) in [(0, 1), (3, 17), (63, 2), (4093, 1000), (9999, 1)] {
            let mut part = vec![0; len];
            o.fill(offset as u64, &mut part);
            assert_eq!(part, whole[offset..offset + len], "{offset}+{len}");
        }
        assert_eq!(whole[63], b'\n');
        assert!(whole.iter().all(|b| ALPHABET.contains(b) || *b == b'\n'));
    }

    #[test]
    fn ensure_dir_keeps_valid_objects_and_rewrites_wrong_ones() {
        // Made by ensure_dir, in a directory removed when the test ends, failed or not.
        let tmp = crate::util::temp::TempDir::new("seek-data");
        let dir = tmp.join("objects");
        let sizes = [4096, 10_000];
        let ensure_dir = |dir: &Path, sizes: &[u64], seed, check| {
            ensure_dir(dir, sizes, seed, check).map(|e| {
                assert!(e.stale.is_none());
                e.outcomes
            })
        };
        let first = ensure_dir(&dir, &sizes, 7, true).unwrap();
        assert!(first.iter().all(|(_, o)| *o == Outcome::Written));
        let again = ensure_dir(&dir, &sizes, 7, true).unwrap();
        assert!(again.iter().all(|(_, o)| *o == Outcome::Kept));
        // A corrupted byte is caught by the content check, not by the quick one.
        let path = dir.join("random-4kb.txt");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[100] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(
            ensure_dir(&dir, &sizes, 7, false).unwrap()[0].1,
            Outcome::Kept
        );
        assert_eq!(
            ensure_dir(&dir, &sizes, 7, true).unwrap()[0].1,
            Outcome::Written
        );
        assert_eq!(std::fs::read(&path).unwrap(), Object::new(4096, 7).bytes());
        // A truncated object, and another seed, are rewritten even by the quick check.
        std::fs::write(dir.join("random-10000b.txt"), b"short").unwrap();
        assert_eq!(
            ensure_dir(&dir, &sizes, 7, false).unwrap()[1].1,
            Outcome::Written
        );
        assert!(ensure_dir(&dir, &sizes, 8, false)
            .unwrap()
            .iter()
            .all(|(_, o)| *o == Outcome::Written));
        let Listed::Entries(listed) = read_manifest(&dir.join(MANIFEST), 8) else {
            panic!("this version's manifest");
        };
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[1].0, "random-10000b.txt");
        assert_eq!(listed[1].2, checksum(&Object::new(10_000, 8).bytes()));
    }

    #[test]
    fn manifests_of_the_first_version_stay_valid_and_others_are_made_again() {
        // Made by ensure_dir, in a directory removed when the test ends, failed or not.
        let tmp = crate::util::temp::TempDir::new("seek-version");
        let dir = tmp.join("objects");
        let sizes = [4096];
        ensure_dir(&dir, &sizes, 7, false).unwrap();
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"generatorVersion\" : 1"), "{text}");
        // The first bb-seek wrote no version: the same bytes, kept.
        let first = text.replace("  \"generatorVersion\" : 1,\n", "");
        assert_ne!(first, text);
        std::fs::write(&path, &first).unwrap();
        let e = ensure_dir(&dir, &sizes, 7, false).unwrap();
        assert_eq!((e.outcomes[0].1.clone(), e.stale), (Outcome::Kept, None));
        // Another version's objects are made again, and the run says why.
        std::fs::write(
            &path,
            text.replace("\"generatorVersion\" : 1", "\"generatorVersion\" : 2"),
        )
        .unwrap();
        let e = ensure_dir(&dir, &sizes, 7, false).unwrap();
        assert_eq!(e.outcomes[0].1, Outcome::Written);
        let why = e.stale.unwrap();
        assert!(
            why.contains("generator version 2, and this bb-seek makes version 1"),
            "{why}"
        );
        let e = ensure_dir(&dir, &sizes, 7, false).unwrap();
        assert_eq!((e.outcomes[0].1.clone(), e.stale), (Outcome::Kept, None));
    }

    #[test]
    fn fingerprints_of_pieces_are_those_of_the_whole_and_its_tail() {
        let bytes = Object::new(10_000, 3).bytes();
        for (hold, piece) in [
            (10_000, 7),
            (4096, 1000),
            (4096, 4096),
            (1, 3),
            (20_000, 9999),
        ] {
            let mut f = Fingerprinting::new(bytes.len() as u64, hold);
            for p in bytes.chunks(piece) {
                f.update(p);
            }
            let tail = &bytes[bytes.len() - (hold as usize).min(bytes.len())..];
            let want = Fingerprint {
                whole: crate::util::rng::fnv1a64(&bytes),
                tail: fnv_of(&[&tail[..tail.len() / 2], &tail[tail.len() / 2..]]),
            };
            assert_eq!(f.finish(), want, "{hold} {piece}");
            assert_eq!(Fingerprint::from_values(&want.values()), Some(want));
        }
        assert_eq!(Fingerprint::from_values(&[1.0, 2.0, 3.0]), None);
        assert_eq!(Fingerprint::from_values(&[1.5, 2.0, 3.0, 4.0]), None);
        assert_eq!(Fingerprint::from_values(&[-1.0, 2.0, 3.0, 4.0]), None);
        assert!(!Object::existing("disk.img", 5).generated());
    }

    #[test]
    fn a_manifest_keeps_the_other_sizes_while_they_are_there() {
        // Made by ensure_dir, in a directory removed when the test ends, failed or not.
        let tmp = crate::util::temp::TempDir::new("seek-others");
        let dir = tmp.join("objects");
        ensure_dir(&dir, &[4096, 10_000], 7, false).unwrap();
        let names = |dir: &Path| -> Vec<String> {
            let Listed::Entries(listed) = read_manifest(&dir.join(MANIFEST), 7) else {
                panic!("this version's manifest");
            };
            listed.into_iter().map(|(n, _, _)| n).collect()
        };
        // gen --sizes 4k, then --sizes 10000b: each keeps the other listed.
        ensure_dir(&dir, &[4096], 7, true).unwrap();
        assert_eq!(names(&dir), ["random-4kb.txt", "random-10000b.txt"]);
        std::fs::remove_file(dir.join("random-4kb.txt")).unwrap();
        ensure_dir(&dir, &[10_000], 7, true).unwrap();
        assert_eq!(
            names(&dir),
            ["random-10000b.txt"],
            "gone, so no longer listed"
        );
    }
}
