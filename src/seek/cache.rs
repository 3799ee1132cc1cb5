//! The stream's block cache: a fixed number of equal slots, so its memory never grows past
//! the bound it was given. Blocks are the object's block-aligned pieces; a fetch fills
//! several slots with one request; the least recently used blocks make room. The slots are
//! either an arena allocated once and reused (a fetch is one vectored read into it), or,
//! for a mapped local file, ranges of the mapping itself (a fetch brings the pages in, an
//! eviction lets them go), so that reads are served from the page cache with one copy.

use crate::error::Result;
use crate::seek::mapping::Mapping;
use std::collections::HashMap;

/// The piece of a mapping whose pages go together when none of its blocks is cached: the
/// mapping's alignment, so the kernel's large folios (up to 2 MiB) never straddle two.
const REGION: u64 = crate::seek::mapping::ALIGN as u64;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    block: Option<u64>,
    len: usize,
    last_use: u64,
}

/// Where the cached blocks' bytes are.
enum Storage {
    /// Slot `i` is `arena[i * block_size..]`: fetches copy into it.
    Arena(Vec<u8>),
    /// A cached block is a populated range of the object's mapping.
    Mapped(Mapping),
}

/// Where one fetch puts its bytes.
pub enum Destination<'a, 'b> {
    /// Buffers to fill in order.
    Buffers(&'a mut [&'b mut [u8]]),
    /// This many bytes of the mapping to bring in.
    Mapped(&'a Mapping, usize),
}

pub struct BlockCache {
    block_size: usize,
    storage: Storage,
    slots: Vec<Slot>,
    index: HashMap<u64, usize>,
    clock: u64,
}

impl BlockCache {
    /// A cache of `capacity` bytes (at least one block) in blocks of `block_size` bytes.
    pub fn new(block_size: usize, capacity: usize) -> BlockCache {
        let count = (capacity / block_size).max(1);
        BlockCache::with_storage(
            block_size,
            count,
            Storage::Arena(vec![0; count * block_size]),
        )
    }

    /// A cache of the same bound over `mapping`, the whole object mapped: `block_size` must
    /// be a multiple of the page size, so blocks are brought in and let go page by page.
    pub fn mapped(block_size: usize, capacity: usize, mapping: Mapping) -> BlockCache {
        debug_assert_eq!(block_size % crate::seek::mapping::page_size(), 0);
        let count = (capacity / block_size).max(1);
        BlockCache::with_storage(block_size, count, Storage::Mapped(mapping))
    }

    fn with_storage(block_size: usize, count: usize, storage: Storage) -> BlockCache {
        BlockCache {
            block_size,
            storage,
            slots: vec![Slot::default(); count],
            index: HashMap::with_capacity(count),
            clock: 0,
        }
    }

    /// The mapping it serves from, if it does.
    #[cfg(test)]
    pub fn mapping(&self) -> Option<&Mapping> {
        match &self.storage {
            Storage::Mapped(m) => Some(m),
            Storage::Arena(_) => None,
        }
    }

    /// How many blocks it holds at most.
    pub fn capacity_blocks(&self) -> usize {
        self.slots.len()
    }

    /// The bytes it holds in memory at most: fixed at creation.
    pub fn memory(&self) -> usize {
        self.slots.len() * self.block_size
    }

    /// How many blocks it holds now.
    #[cfg(test)]
    pub fn cached_blocks(&self) -> usize {
        self.index.len()
    }

    /// Forgets every block, keeping the memory for the next stream (a mapping's pages go,
    /// all of them at once: also any the kernel mapped around a fetch).
    pub fn clear(&mut self) {
        self.index.clear();
        self.slots.fill(Slot::default());
        if let Storage::Mapped(m) = &self.storage {
            m.release(0, m.len());
        }
    }

    pub fn contains(&self, block: u64) -> bool {
        self.index.contains_key(&block)
    }

    /// The cached bytes of `block`, marked as just used.
    pub fn get(&mut self, block: u64) -> Option<&[u8]> {
        let &slot = self.index.get(&block)?;
        self.clock += 1;
        self.slots[slot].last_use = self.clock;
        let len = self.slots[slot].len;
        Some(match &self.storage {
            Storage::Arena(arena) => &arena[slot * self.block_size..][..len],
            Storage::Mapped(m) => m.bytes(block * self.block_size as u64, len),
        })
    }

    /// Fetches blocks `first .. first + count` (at most the capacity, none of them cached)
    /// of an object of `object_len` bytes with one call of `read(offset, destination)`,
    /// evicting the least recently used blocks to make room.
    pub fn fill(
        &mut self,
        first: u64,
        count: usize,
        object_len: u64,
        read: impl FnOnce(u64, Destination<'_, '_>) -> Result<()>,
    ) -> Result<()> {
        let count = count.min(self.slots.len());
        let mut victims: Vec<usize> = (0..self.slots.len()).collect();
        victims.sort_by_key(|&s| (self.slots[s].block.is_some(), self.slots[s].last_use));
        victims.truncate(count);
        self.evict(&victims);
        let bs = self.block_size as u64;
        let lens: Vec<usize> = (0..count as u64)
            .map(|i| (object_len - (first + i) * bs).min(bs) as usize)
            .collect();
        match &mut self.storage {
            Storage::Arena(arena) => {
                let mut chunks: Vec<Option<&mut [u8]>> =
                    arena.chunks_mut(self.block_size).map(Some).collect();
                let mut bufs: Vec<&mut [u8]> = victims
                    .iter()
                    .zip(&lens)
                    .map(|(&s, &len)| &mut chunks[s].take().expect("victims are distinct")[..len])
                    .collect();
                read(first * bs, Destination::Buffers(&mut bufs))?;
            }
            Storage::Mapped(m) => read(first * bs, Destination::Mapped(m, lens.iter().sum()))?,
        }
        self.clock += 1;
        for (i, (&s, &len)) in victims.iter().zip(&lens).enumerate() {
            let block = first + i as u64;
            self.slots[s] = Slot {
                block: Some(block),
                len,
                last_use: self.clock,
            };
            self.index.insert(block, s);
        }
        Ok(())
    }

    /// Empties `slots`. A mapping's pages of their blocks go, and with the last cached
    /// block of a [`REGION`], the whole region: the kernel may have mapped more of it than
    /// the blocks fetched (a whole large folio), and that goes too, so what stays mapped is
    /// the regions of cached blocks at most. Runs of adjacent ranges (what a sequential
    /// reader evicts) go in one call.
    fn evict(&mut self, slots: &[usize]) {
        let mut gone: Vec<u64> = Vec::with_capacity(slots.len());
        for &s in slots {
            if let Some(b) = self.slots[s].block.take() {
                self.index.remove(&b);
                gone.push(b);
            }
        }
        let Storage::Mapped(m) = &self.storage else {
            return;
        };
        let bs = self.block_size as u64;
        let region_of = |block: u64| block * bs / REGION;
        let mut ranges: Vec<(u64, u64)> = gone
            .iter()
            .map(|&b| {
                let region = region_of(b);
                if self.index.keys().any(|&c| region_of(c) == region) {
                    (b * bs, (b + 1) * bs)
                } else {
                    (region * REGION, (region + 1) * REGION)
                }
            })
            .collect();
        ranges.sort_unstable();
        let end = m.len() as u64;
        let mut run: Option<(u64, u64)> = None;
        for (from, to) in ranges {
            run = match run {
                Some((start, stop)) if from <= stop => Some((start, stop.max(to))),
                Some((start, stop)) => {
                    m.release(start, (stop.min(end) - start) as usize);
                    Some((from, to))
                }
                None => Some((from, to)),
            };
        }
        if let Some((start, stop)) = run {
            m.release(start, (stop.min(end) - start) as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 256) as u8).collect()
    }

    fn fill_from(cache: &mut BlockCache, data: &[u8], first: u64, count: usize) {
        cache
            .fill(first, count, data.len() as u64, |offset, dest| {
                let Destination::Buffers(bufs) = dest else {
                    unreachable!("an arena")
                };
                let mut at = offset as usize;
                for b in bufs.iter_mut() {
                    b.copy_from_slice(&data[at..at + b.len()]);
                    at += b.len();
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn the_cache_never_holds_more_than_its_bound() {
        let data = object(100 * 1024 + 10);
        let mut cache = BlockCache::new(1024, 8 * 1024 + 100);
        assert_eq!((cache.capacity_blocks(), cache.memory()), (8, 8192));
        let mut state = 1u64;
        for _ in 0..500 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let first = (state >> 33) % 101;
            let count = 1 + ((state >> 20) % 12) as usize;
            let count = count.min((101 - first) as usize);
            let first_cached = (first..first + count as u64).find(|&b| cache.contains(b));
            let count = first_cached.map_or(count, |c| (c - first) as usize);
            if count == 0 {
                continue;
            }
            fill_from(&mut cache, &data, first, count);
            assert!(cache.cached_blocks() <= 8);
            assert_eq!(cache.memory(), 8192, "the arena never grows");
            for b in first..first + count.min(8) as u64 {
                let start = b as usize * 1024;
                let got = cache.get(b).expect("just fetched").to_vec();
                assert_eq!(
                    got,
                    data[start..(start + 1024).min(data.len())],
                    "block {b}"
                );
            }
        }
        assert_eq!(
            cache.get(100).map(|b| b.len()).unwrap_or(10),
            10,
            "the last block is short"
        );
    }

    #[test]
    fn the_least_recently_used_block_goes_first() {
        let data = object(10 * 1024);
        let mut cache = BlockCache::new(1024, 3 * 1024);
        fill_from(&mut cache, &data, 0, 3);
        cache.get(0);
        fill_from(&mut cache, &data, 5, 1);
        assert!(cache.contains(0) && !cache.contains(1) && cache.contains(2) && cache.contains(5));
        cache.clear();
        assert_eq!(cache.cached_blocks(), 0);
        assert!(cache.get(0).is_none());
    }

    /// Fills `count` blocks from `first` through the mapping, as the stream does.
    fn populate(cache: &mut BlockCache, len: u64, first: u64, count: usize) {
        cache
            .fill(first, count, len, |offset, dest| {
                let Destination::Mapped(m, n) = dest else {
                    unreachable!("a mapping")
                };
                m.populate(offset, n)
            })
            .unwrap();
    }

    #[test]
    fn a_mapped_cache_serves_every_block_and_keeps_only_its_regions_in_memory() {
        use crate::seek::mapping::tests::{resident_kib, TempFile};
        use crate::seek::source::Source;
        let f = TempFile::new("mapped-cache", (16 << 20) + 1000);
        let len = f.bytes.len() as u64;
        let source = crate::seek::file::FileSource::open(&f.path, len).unwrap();
        let mapping = source.map().expect("Linux 5.14 or later");
        let block = 64 << 10;
        let blocks = 257; // the last one 1000 bytes
        let mut cache = BlockCache::mapped(block, 4 * block, mapping);
        assert_eq!((cache.capacity_blocks(), cache.memory()), (4, 256 << 10));
        // What stays mapped: the 2 MiB regions that hold a cached block, at most.
        let check_bound = |c: &BlockCache| {
            let resident = resident_kib(c.mapping().unwrap());
            let mut regions: Vec<u64> =
                c.index.keys().map(|&b| b * block as u64 / REGION).collect();
            regions.sort_unstable();
            regions.dedup();
            assert!(c.cached_blocks() <= 4);
            assert!(
                resident <= regions.len() as u64 * (REGION >> 10),
                "{resident} KiB mapped for cached blocks {:?}",
                c.index.keys()
            );
        };
        // A sequential reader: two blocks per fetch.
        for first in (0..blocks).step_by(2) {
            let count = 2.min(blocks - first) as usize;
            populate(&mut cache, len, first, count);
            check_bound(&cache);
            for b in first..first + count as u64 {
                let start = b as usize * block;
                let end = (start + block).min(f.bytes.len());
                // Each block whole, and where consecutive 4 KiB reads cross into it.
                assert!(cache.get(b).unwrap() == &f.bytes[start..end], "block {b}");
                if b > 0 {
                    let prev = cache.get(b - 1).expect("the previous block stays");
                    assert_eq!(prev[block - 1], f.bytes[start - 1], "block {b} - 1");
                }
            }
        }
        assert_eq!(
            cache.get(256).unwrap().len(),
            1000,
            "the last block is short"
        );
        assert!(
            !cache.contains(252) && cache.contains(253),
            "the oldest went"
        );
        cache.clear();
        assert_eq!(resident_kib(cache.mapping().unwrap()), 0);
        // Random fills of a one-block cache: one region mapped at most, every block right.
        let mut cache = BlockCache::mapped(block, block, source.map().unwrap());
        let mut state = 3u64;
        for _ in 0..200 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let first = (state >> 33) % blocks;
            if cache.contains(first) {
                continue;
            }
            populate(&mut cache, len, first, 1);
            check_bound(&cache);
            let start = first as usize * block;
            let got = cache.get(first).unwrap();
            assert!(got == &f.bytes[start..start + got.len()], "block {first}");
        }
        cache.clear();
        assert_eq!(cache.cached_blocks(), 0);
        assert_eq!(resident_kib(cache.mapping().unwrap()), 0);
    }
}
