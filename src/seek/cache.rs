//! The stream's block cache: a fixed number of equal slots, so its memory never grows past
//! the bound it was given. Blocks are the object's block-aligned pieces; a fetch fills
//! several slots with one request; the least recently used blocks make room. A slot's bytes
//! are in an arena allocated once and reused (a fetch is one vectored read into it), or,
//! for a mapped local file whose fetched range is all in the page cache, in the mapping
//! itself (a fetch brings the pages in, an eviction lets them go), so that reads are
//! served from the page cache with one copy. A range not cached yet is read into the
//! arena, with the kernel's asynchronous read-ahead (faulting pages into a mapping
//! waits for the storage at each fetch: 1.5 to 2 times slower from a cold disk here).

use crate::seek::mapping::Mapping;
use crate::util::error::Result;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The piece of a mapping whose pages go together when none of its blocks is mapped: the
/// mapping's alignment, so the kernel's large folios (up to 2 MiB) never straddle two.
const REGION: u64 = crate::seek::mapping::ALIGN as u64;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    block: Option<u64>,
    len: usize,
    last_use: u64,
    /// Its bytes are in the mapping, not the arena.
    mapped: bool,
}

/// Where one fetch puts its bytes.
pub enum Destination<'a, 'b> {
    /// Buffers to fill in order.
    Buffers(&'a mut [&'b mut [u8]]),
    /// This many bytes of the mapping, all in the page cache: the copies out of them
    /// fault them in.
    Mapped(usize),
}

/// The block index's hash: a block number times an odd constant (Fibonacci hashing).
/// SipHash, the default, took more of a 4 KiB read's time than the rest of its
/// bookkeeping; block numbers come from the reads, not from anyone choosing collisions.
#[derive(Default)]
struct BlockHasher(u64);

impl Hasher for BlockHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub struct BlockCache {
    block_size: usize,
    /// Slot `i` is `arena[i * block_size..]` unless it is mapped.
    arena: Vec<u8>,
    /// The whole object, for blocks whose pages are cached.
    mapping: Option<Mapping>,
    slots: Vec<Slot>,
    index: HashMap<u64, usize, BuildHasherDefault<BlockHasher>>,
    clock: u64,
}

impl BlockCache {
    /// A cache of `capacity` bytes (at least one block) in blocks of `block_size` bytes.
    pub fn new(block_size: usize, capacity: usize) -> BlockCache {
        let count = (capacity / block_size).max(1);
        BlockCache {
            block_size,
            arena: vec![0; count * block_size],
            mapping: None,
            slots: vec![Slot::default(); count],
            index: HashMap::with_capacity_and_hasher(count, Default::default()),
            clock: 0,
        }
    }

    /// The same, serving blocks whose pages are cached from `mapping`, the whole object
    /// mapped: `block_size` must be a multiple of the page size, so blocks are brought in
    /// and let go page by page.
    pub fn mapped(block_size: usize, capacity: usize, mapping: Mapping) -> BlockCache {
        debug_assert_eq!(block_size % crate::seek::mapping::page_size(), 0);
        BlockCache {
            mapping: Some(mapping),
            ..BlockCache::new(block_size, capacity)
        }
    }

    /// The mapping it serves from, if it does.
    #[cfg(test)]
    pub fn mapping(&self) -> Option<&Mapping> {
        self.mapping.as_ref()
    }

    /// How many blocks it holds at most.
    pub fn capacity_blocks(&self) -> usize {
        self.slots.len()
    }

    /// The bytes it holds in memory: fixed at creation (a mapping's pages come on top:
    /// the regions of its mapped blocks, see [`BlockCache::evict`]).
    pub fn memory(&self) -> usize {
        self.arena.len()
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
        if let Some(m) = &self.mapping {
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
        let Slot { len, mapped, .. } = self.slots[slot];
        Some(match (&self.mapping, mapped) {
            (Some(m), true) => m.bytes(block * self.block_size as u64, len),
            _ => &self.arena[slot * self.block_size..][..len],
        })
    }

    /// Fetches blocks `first .. first + count` (at most the capacity, none of them cached)
    /// of an object of `object_len` bytes with one call of `read(offset, destination)`
    /// (the mapping when all their pages are cached, the arena otherwise), evicting the
    /// least recently used blocks to make room.
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
        let total: usize = lens.iter().sum();
        let cached = |m: &Mapping| {
            let (cached, pages) = m.cached_pages(first * bs, total)?;
            Ok::<_, crate::util::error::Error>(cached == pages)
        };
        let mapped = match &self.mapping {
            Some(m) if cached(m)? => {
                read(first * bs, Destination::Mapped(total))?;
                true
            }
            _ => {
                let mut chunks: Vec<Option<&mut [u8]>> =
                    self.arena.chunks_mut(self.block_size).map(Some).collect();
                let mut bufs: Vec<&mut [u8]> = victims
                    .iter()
                    .zip(&lens)
                    .map(|(&s, &len)| &mut chunks[s].take().expect("victims are distinct")[..len])
                    .collect();
                read(first * bs, Destination::Buffers(&mut bufs))?;
                false
            }
        };
        self.clock += 1;
        for (i, (&s, &len)) in victims.iter().zip(&lens).enumerate() {
            let block = first + i as u64;
            self.slots[s] = Slot {
                block: Some(block),
                len,
                last_use: self.clock,
                mapped,
            };
            self.index.insert(block, s);
        }
        Ok(())
    }

    /// Empties `slots`. The pages of their mapped blocks go, and with the last mapped block
    /// of a [`REGION`], the whole region: the kernel may have mapped more of it than the
    /// blocks fetched (a whole large folio), and that goes too, so what stays mapped is the
    /// regions of mapped blocks at most. Runs of adjacent ranges (what a sequential reader
    /// evicts) go in one call.
    fn evict(&mut self, slots: &[usize]) {
        let mut gone: Vec<u64> = Vec::with_capacity(slots.len());
        for &s in slots {
            let slot = &mut self.slots[s];
            if let Some(b) = slot.block.take() {
                self.index.remove(&b);
                if slot.mapped {
                    gone.push(b);
                }
            }
        }
        let (Some(m), false) = (&self.mapping, gone.is_empty()) else {
            return;
        };
        let bs = self.block_size as u64;
        let region_of = |block: u64| block * bs / REGION;
        let mapped_in = |region: u64| {
            self.slots
                .iter()
                .any(|s| s.mapped && s.block.is_some_and(|b| region_of(b) == region))
        };
        let mut ranges: Vec<(u64, u64)> = gone
            .iter()
            .map(|&b| {
                let region = region_of(b);
                if mapped_in(region) {
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
    use crate::seek::source::tests::copy_at;

    fn object(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 256) as u8).collect()
    }

    fn fill_from(cache: &mut BlockCache, data: &[u8], first: u64, count: usize) {
        cache
            .fill(first, count, data.len() as u64, |offset, dest| {
                let Destination::Buffers(bufs) = dest else {
                    unreachable!("an arena")
                };
                copy_at(data, offset, bufs);
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

    /// Fills `count` blocks from `first` of a mapped cache of the file holding `data`, as
    /// the stream does (a mapped fetch only counts: reading the blocks faults them in).
    fn populate(cache: &mut BlockCache, data: &[u8], first: u64, count: usize) {
        cache
            .fill(first, count, data.len() as u64, |offset, dest| match dest {
                Destination::Mapped(_) => Ok(()),
                Destination::Buffers(bufs) => {
                    copy_at(data, offset, bufs);
                    Ok(())
                }
            })
            .unwrap();
    }

    #[test]
    fn a_mapped_cache_serves_every_block_and_keeps_only_its_regions_in_memory() {
        use crate::seek::mapping::tests::{resident_kib, TempFile};
        use crate::seek::source::Source;
        use std::fs::File;
        let f = TempFile::new("mapped-cache", (16 << 20) + 1000);
        let len = f.bytes.len() as u64;
        let source = crate::seek::file::FileSource::open(&f.path, len).unwrap();
        let mapping = source.map().expect("Linux 5.14 or later");
        let block = 64 << 10;
        let blocks = 257; // the last one 1000 bytes
        let mut cache = BlockCache::mapped(block, 4 * block, mapping);
        assert_eq!((cache.capacity_blocks(), cache.memory()), (4, 256 << 10));
        // What stays mapped: the 2 MiB regions that hold a mapped block, at most.
        let check_bound = |c: &BlockCache| {
            let resident = resident_kib(c.mapping().unwrap());
            let mapped = c.slots.iter().filter(|s| s.mapped).filter_map(|s| s.block);
            let mut regions: Vec<u64> = mapped.map(|b| b * block as u64 / REGION).collect();
            regions.sort_unstable();
            regions.dedup();
            assert!(c.cached_blocks() <= c.capacity_blocks());
            assert!(
                resident <= regions.len() as u64 * (REGION >> 10),
                "{resident} KiB mapped for cached blocks {:?}",
                c.index.keys()
            );
        };
        // A sequential reader: two blocks per fetch.
        for first in (0..blocks).step_by(2) {
            let count = 2.min(blocks - first) as usize;
            populate(&mut cache, &f.bytes, first, count);
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
            populate(&mut cache, &f.bytes, first, 1);
            check_bound(&cache);
            let start = first as usize * block;
            let got = cache.get(first).unwrap();
            assert!(got == &f.bytes[start..start + got.len()], "block {first}");
        }
        cache.clear();
        assert_eq!(cache.cached_blocks(), 0);
        assert_eq!(resident_kib(cache.mapping().unwrap()), 0);
        // Pages not in the page cache are read into the arena, none mapped.
        File::open(&f.path).unwrap().sync_all().unwrap();
        if source.drop_cache().unwrap() == 0.0 {
            populate(&mut cache, &f.bytes, 10, 1);
            assert!(cache.slots.iter().all(|s| !s.mapped));
            assert_eq!(resident_kib(cache.mapping().unwrap()), 0);
            assert!(cache.get(10).unwrap() == &f.bytes[10 * block..11 * block]);
        } else {
            eprintln!("the file's pages could not be dropped: the arena path is not checked");
        }
    }
}
