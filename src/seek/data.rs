//! bb-seek's objects: their names (`random-1mb.txt`, as the original), their bytes (text
//! computed from the seed, so any range's expected bytes are known without the file), and
//! the directory generator that keeps valid objects, rewrites wrong ones atomically, and
//! records a manifest of sizes and checksums.

use crate::error::{Error, Result};
use crate::output::json_value::Json;
use crate::rng::{fnv1a64, Rng};
use std::path::Path;

/// The manifest's file name, beside the objects.
pub(crate) const MANIFEST: &str = "manifest.json";

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .";

/// One generated object: its name and size, and the key its bytes derive from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub name: String,
    pub size: u64,
    key: u64,
}

impl Object {
    pub fn new(size: u64, seed: u64) -> Object {
        Object {
            name: object_name(size),
            size,
            // Each size gets its own bytes, so reading the wrong object is caught.
            key: Rng::new(seed ^ size.rotate_left(29)).next_u64(),
        }
    }

    /// Writes the object's bytes from `offset` into `out`: lines of 63 random letters,
    /// digits, spaces and dots, each byte a function of its position.
    pub(crate) fn fill(&self, offset: u64, out: &mut [u8]) {
        let mut pos = offset;
        let mut done = 0;
        while done < out.len() {
            let word = Rng::new(self.key ^ (pos / 8)).next_u64().to_le_bytes();
            let first = (pos % 8) as usize;
            let n = (8 - first).min(out.len() - done);
            for k in 0..n {
                let p = pos + k as u64;
                out[done + k] = if p % 64 == 63 {
                    b'\n'
                } else {
                    ALPHABET[(word[first + k] & 63) as usize]
                };
            }
            done += n;
            pos += n as u64;
        }
    }

    /// The whole object.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0; self.size as usize];
        self.fill(0, &mut out);
        out
    }
}

/// `random-1mb.txt` for 1 MiB, `random-64kb.txt` for 64 KiB, `random-1000b.txt` otherwise.
pub(crate) fn object_name(size: u64) -> String {
    if size > 0 && size.is_multiple_of(1 << 20) {
        format!("random-{}mb.txt", size >> 20)
    } else if size > 0 && size.is_multiple_of(1 << 10) {
        format!("random-{}kb.txt", size >> 10)
    } else {
        format!("random-{size}b.txt")
    }
}

/// What [`ensure_dir`] did with each object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Kept,
    Written,
}

/// Makes sure `dir` holds valid objects of `sizes` for `seed`: present and valid ones are
/// kept, missing or wrong ones (re)written atomically, and the manifest updated. With
/// `check_content`, "valid" means every byte; otherwise the manifest (same seed, same
/// size) and the file's size, which is what a run checks before it starts (it checks
/// every byte it reads anyway).
pub(crate) fn ensure_dir(
    dir: &Path,
    sizes: &[u64],
    seed: u64,
    check_content: bool,
) -> Result<Vec<(Object, Outcome)>> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let manifest_path = dir.join(MANIFEST);
    let listed = read_manifest(&manifest_path, seed);
    let mut outcomes = Vec::new();
    for &size in sizes {
        let object = Object::new(size, seed);
        let path = dir.join(&object.name);
        let on_disk = std::fs::metadata(&path).map(|m| m.len()).ok();
        let valid = on_disk == Some(size)
            && if check_content {
                std::fs::read(&path).is_ok_and(|b| b == object.bytes())
            } else {
                listed
                    .iter()
                    .any(|(n, s, _)| *n == object.name && *s == size)
            };
        if valid {
            outcomes.push((object, Outcome::Kept));
        } else {
            crate::output::write_output(&path, &object.bytes())?;
            outcomes.push((object, Outcome::Written));
        }
    }
    if outcomes.iter().any(|(_, o)| *o == Outcome::Written) || listed.len() < sizes.len() {
        let mut entries: Vec<(String, u64, String)> = listed
            .into_iter()
            .filter(|(n, _, _)| !outcomes.iter().any(|(o, _)| o.name == *n))
            .collect();
        for (object, _) in &outcomes {
            entries.push((object.name.clone(), object.size, checksum(&object.bytes())));
        }
        entries.sort_by_key(|(_, size, _)| *size);
        crate::output::write_output(&manifest_path, manifest(seed, &entries).as_bytes())?;
    }
    Ok(outcomes)
}

/// The checksum the manifest records: FNV-1a 64 in hex.
pub(crate) fn checksum(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a64(bytes))
}

/// The manifest's text: the seed, and each object's name, size and checksum.
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
        ("seed", Json::str(seed.to_string())),
        ("objects", Json::Arr(objects)),
    ])
    .to_pretty();
    text.push('\n');
    text
}

/// The entries of a manifest written for `seed`; none when it is missing, unreadable or
/// for another seed.
fn read_manifest(path: &Path, seed: u64) -> Vec<(String, u64, String)> {
    let Some(json) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| Json::parse(&t).ok())
    else {
        return Vec::new();
    };
    if json.get("seed").and_then(Json::as_str) != Some(seed.to_string().as_str()) {
        return Vec::new();
    }
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
        .collect()
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
        let dir = std::env::temp_dir().join(format!("bb-seek-data-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let sizes = [4096, 10_000];
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
        let listed = read_manifest(&dir.join(MANIFEST), 8);
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[1].0, "random-10000b.txt");
        assert_eq!(listed[1].2, checksum(&Object::new(10_000, 8).bytes()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
