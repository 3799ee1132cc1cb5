//! Read patterns as data: a pattern is the list of (offset, length) reads it makes of an
//! object. The four of the original (sequential, forward, backward, parquet) are computed
//! from the object's size; a person's own comes from a file of `offset,length` lines. A
//! run holds them as [`Reads`], where `sequential` is made as it is read rather than
//! listed, so that its memory does not grow with the object.

use crate::util::error::{Error, Result};

/// One read: `len` bytes from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    pub offset: u64,
    pub len: u64,
}

/// The built-in pattern names, in the order the reports list them.
pub const BUILT_IN: [&str; 4] = ["sequential", "forward", "backward", "parquet"];

/// The smallest object built-in pattern `name` reads: `forward` and `backward` read
/// tenths of the object, so under 10 bytes some or all of their reads are empty (a 5-byte
/// object has none at all); `sequential` and `parquet` read any object of a byte or more.
pub fn min_size(name: &str) -> u64 {
    match name {
        "forward" | "backward" => 10,
        _ => 1,
    }
}

/// The reads of built-in pattern `name` over an object of `size` bytes; `read_size` is the
/// length of each read of `sequential` (the others read each range in one call).
pub fn built_in(name: &str, size: u64, read_size: u64) -> Vec<Read> {
    let percent = |p: u64| size * p / 100;
    let tenth = |p: u64| Read {
        offset: percent(p),
        len: percent(p + 10) - percent(p),
    };
    match name {
        "sequential" => Reads::built_in(name, size, read_size).iter().collect(),
        "forward" => [0, 20, 40, 60, 80].map(tenth).to_vec(),
        "backward" => [80, 60, 40, 20, 0].map(tenth).to_vec(),
        "parquet" => {
            let footer = 8 << 10;
            vec![
                // The footer's length, then the footer, then two column chunks.
                Read {
                    offset: size.saturating_sub(5),
                    len: 4.min(size),
                },
                Read {
                    offset: size.saturating_sub(footer),
                    len: footer.min(size),
                },
                Read {
                    offset: percent(50),
                    len: percent(80) - percent(50),
                },
                Read {
                    offset: 0,
                    len: percent(20),
                },
            ]
        }
        _ => panic!("unknown built-in pattern {name}"),
    }
    .into_iter()
    .filter(|r| r.len > 0)
    .collect()
}

/// A pattern file: `offset,length` per line, offsets negative from the end, `#` comments
/// and blank lines ignored. Checked against an object of `size` bytes.
pub fn parse_file(text: &str, size: u64, what: &str) -> Result<Vec<Read>> {
    let mut reads = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| {
            Error::usage(format!(
                "{what} line {}: {why}: '{}'",
                number + 1,
                crate::util::format::printable(line)
            ))
        };
        let (offset, len) = line
            .split_once(',')
            .ok_or_else(|| bad("expected offset,length"))?;
        let offset: i64 = offset
            .trim()
            .parse()
            .map_err(|_| bad("the offset is not a whole number"))?;
        let len: u64 = len
            .trim()
            .parse()
            .map_err(|_| bad("the length is not a whole number"))?;
        let start = if offset < 0 {
            size.checked_sub(offset.unsigned_abs())
        } else {
            Some(offset as u64)
        };
        let read = match start {
            Some(offset) if len > 0 && offset.checked_add(len).is_some_and(|e| e <= size) => {
                Read { offset, len }
            }
            _ => {
                return Err(bad(&format!(
                    "the read is empty or falls outside the {size}-byte object"
                )))
            }
        };
        reads.push(read);
    }
    if reads.is_empty() {
        return Err(Error::usage(format!("{what}: no reads in the file")));
    }
    Ok(reads)
}

/// The bytes a pattern asks for.
pub fn asked(reads: &[Read]) -> u64 {
    reads.iter().map(|r| r.len).sum()
}

/// A pattern's reads as a run holds them: a list, or the reads of `sequential`, made as
/// they are needed (listed, they would take 16 bytes a read: 4 MiB for a 1 GiB object in
/// 4 KiB reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reads {
    List(Vec<Read>),
    /// The whole object of `size` bytes, `read_size` bytes a read (the last one shorter).
    Sequential {
        size: u64,
        read_size: u64,
    },
}

impl Reads {
    /// The reads of built-in pattern `name` (see [`built_in`]).
    pub fn built_in(name: &str, size: u64, read_size: u64) -> Reads {
        match name {
            "sequential" => Reads::Sequential {
                size,
                read_size: read_size.max(1),
            },
            _ => Reads::List(built_in(name, size, read_size)),
        }
    }

    pub fn iter(&self) -> ReadsIter<'_> {
        match self {
            Reads::List(reads) => ReadsIter::List(reads.iter()),
            &Reads::Sequential { size, read_size } => ReadsIter::Sequential {
                next: 0,
                size,
                read_size,
            },
        }
    }

    /// How many reads a shot makes.
    pub fn count(&self) -> u64 {
        match self {
            Reads::List(reads) => reads.len() as u64,
            Reads::Sequential { size, read_size } => size.div_ceil(*read_size),
        }
    }

    /// The length of its largest read.
    pub fn largest(&self) -> u64 {
        match self {
            Reads::List(reads) => reads.iter().map(|r| r.len).max().unwrap_or(0),
            Reads::Sequential { size, read_size } => (*read_size).min(*size),
        }
    }

    /// The bytes a shot asks for.
    pub fn asked(&self) -> u64 {
        match self {
            Reads::List(reads) => asked(reads),
            Reads::Sequential { size, .. } => *size,
        }
    }
}

/// The reads of a [`Reads`], in order.
pub enum ReadsIter<'a> {
    List(std::slice::Iter<'a, Read>),
    Sequential {
        next: u64,
        size: u64,
        read_size: u64,
    },
}

impl Iterator for ReadsIter<'_> {
    type Item = Read;

    fn next(&mut self) -> Option<Read> {
        match self {
            ReadsIter::List(reads) => reads.next().copied(),
            ReadsIter::Sequential {
                next,
                size,
                read_size,
            } => {
                if *next >= *size {
                    return None;
                }
                let read = Read {
                    offset: *next,
                    len: (*read_size).min(*size - *next),
                };
                *next += read.len;
                Some(read)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(reads: &[Read]) -> Vec<(u64, u64)> {
        reads.iter().map(|r| (r.offset, r.len)).collect()
    }

    #[test]
    fn sequential_covers_the_object_in_read_size_steps() {
        for size in [1u64 << 20, 4 << 20, 16 << 20, 10_000] {
            for read_size in [4096u64, 1 << 20] {
                let reads = built_in("sequential", size, read_size);
                assert_eq!(reads.len() as u64, size.div_ceil(read_size));
                let mut next = 0;
                for r in &reads {
                    assert_eq!(r.offset, next);
                    next += r.len;
                }
                assert_eq!(next, size);
            }
        }
        assert_eq!(built_in("sequential", 16 << 20, 4096).len(), 4096);
        let held = Reads::built_in("sequential", 10_000, 4096);
        assert_eq!(
            held,
            Reads::Sequential {
                size: 10_000,
                read_size: 4096
            }
        );
        assert_eq!((held.count(), held.asked()), (3, 10_000));
        let forward = Reads::built_in("forward", 10_000, 4096);
        assert_eq!(
            forward.iter().collect::<Vec<_>>(),
            built_in("forward", 10_000, 4096)
        );
        assert_eq!((forward.count(), forward.asked()), (5, 5000));
    }

    #[test]
    fn forward_backward_and_parquet_offsets_for_each_size() {
        let mib = 1u64 << 20;
        assert_eq!(
            pairs(&built_in("forward", mib, 4096)),
            vec![
                (0, 104_857),
                (209_715, 104_857),
                (419_430, 104_858),
                (629_145, 104_858),
                (838_860, 104_858)
            ]
        );
        for size in [mib, 4 * mib, 16 * mib] {
            let forward = built_in("forward", size, 4096);
            let mut backward = built_in("backward", size, 4096);
            backward.reverse();
            assert_eq!(forward, backward, "backward is forward reversed");
            assert_eq!(forward[4].offset, size * 80 / 100);
            assert_eq!(forward[4].offset + forward[4].len, size * 90 / 100);
            assert_eq!(
                pairs(&built_in("parquet", size, 4096)),
                vec![
                    (size - 5, 4),
                    (size - 8192, 8192),
                    (size / 2, size * 80 / 100 - size / 2),
                    (0, size / 5)
                ]
            );
        }
        assert_eq!(
            pairs(&built_in("parquet", 16 * mib, 4096))[2],
            (8 * mib, 5_033_164)
        );
    }

    #[test]
    fn every_pattern_reads_something_from_its_smallest_object_on() {
        for name in BUILT_IN {
            let min = min_size(name);
            for size in min..min + 100 {
                let reads = Reads::built_in(name, size, 4096);
                assert!(reads.count() > 0 && reads.asked() > 0, "{name} over {size}");
                if min > 1 {
                    assert_eq!(built_in(name, size, 0).len(), 5, "{name} over {size}");
                }
            }
        }
        // Below it, tenths of the object are empty: a 5-byte object has no forward read.
        assert!(built_in("forward", 5, 0).is_empty());
        assert!(built_in("backward", 1, 0).is_empty());
        assert_eq!(built_in("forward", 9, 0).len(), 4);
    }

    #[test]
    fn pattern_files_take_negative_offsets_and_reject_reads_outside() {
        let reads = parse_file("# footer\n-8,4\n\n0,100 # head\n 50 , 10\n", 1000, "f").unwrap();
        assert_eq!(pairs(&reads), vec![(992, 4), (0, 100), (50, 10)]);
        assert_eq!(asked(&reads), 114);
        for (text, needle) in [
            ("5", "expected offset,length"),
            ("x,5", "offset is not"),
            ("0,-5", "length is not"),
            ("995,10", "outside the 1000-byte object"),
            ("-1001,1", "outside"),
            ("0,0", "empty"),
            ("# nothing\n", "no reads"),
        ] {
            let e = parse_file(text, 1000, "--pattern-file p.txt").unwrap_err();
            assert!(e.to_string().contains(needle), "{text}: {e}");
            assert!(e.to_string().contains("--pattern-file p.txt"), "{e}");
            assert_eq!(e.exit_code(), 2);
        }
    }
}
