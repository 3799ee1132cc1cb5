//! The stream's block cache: a fixed arena of equal slots, allocated once and reused, so
//! its memory never grows past the bound it was given. Blocks are the object's
//! block-aligned pieces; a fetch fills several slots with one vectored read; the least
//! recently used blocks make room.

use crate::error::Result;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    block: Option<u64>,
    len: usize,
    last_use: u64,
}

pub struct BlockCache {
    block_size: usize,
    arena: Vec<u8>,
    slots: Vec<Slot>,
    index: HashMap<u64, usize>,
    clock: u64,
}

impl BlockCache {
    /// A cache of `capacity` bytes (at least one block) in blocks of `block_size` bytes.
    pub fn new(block_size: usize, capacity: usize) -> BlockCache {
        let count = (capacity / block_size).max(1);
        BlockCache {
            block_size,
            arena: vec![0; count * block_size],
            slots: vec![Slot::default(); count],
            index: HashMap::with_capacity(count),
            clock: 0,
        }
    }

    /// How many blocks it holds at most.
    pub fn capacity_blocks(&self) -> usize {
        self.slots.len()
    }

    /// The bytes it holds in memory: fixed at creation.
    pub fn memory(&self) -> usize {
        self.arena.len()
    }

    /// How many blocks it holds now.
    #[cfg(test)]
    pub fn cached_blocks(&self) -> usize {
        self.index.len()
    }

    /// Forgets every block, keeping the memory for the next stream.
    pub fn clear(&mut self) {
        self.index.clear();
        self.slots.fill(Slot::default());
    }

    pub fn contains(&self, block: u64) -> bool {
        self.index.contains_key(&block)
    }

    /// The cached bytes of `block`, marked as just used.
    pub fn get(&mut self, block: u64) -> Option<&[u8]> {
        let &slot = self.index.get(&block)?;
        self.clock += 1;
        self.slots[slot].last_use = self.clock;
        let start = slot * self.block_size;
        Some(&self.arena[start..start + self.slots[slot].len])
    }

    /// Fetches blocks `first .. first + count` (at most the capacity, none of them cached)
    /// of an object of `object_len` bytes with one call of `read(offset, buffers)`,
    /// evicting the least recently used blocks to make room.
    pub fn fill(
        &mut self,
        first: u64,
        count: usize,
        object_len: u64,
        read: impl FnOnce(u64, &mut [&mut [u8]]) -> Result<()>,
    ) -> Result<()> {
        let count = count.min(self.slots.len());
        let mut victims: Vec<usize> = (0..self.slots.len()).collect();
        victims.sort_by_key(|&s| (self.slots[s].block.is_some(), self.slots[s].last_use));
        victims.truncate(count);
        for &s in &victims {
            if let Some(b) = self.slots[s].block.take() {
                self.index.remove(&b);
            }
        }
        let bs = self.block_size as u64;
        let lens: Vec<usize> = (0..count as u64)
            .map(|i| (object_len - (first + i) * bs).min(bs) as usize)
            .collect();
        let mut chunks: Vec<Option<&mut [u8]>> =
            self.arena.chunks_mut(self.block_size).map(Some).collect();
        let mut bufs: Vec<&mut [u8]> = victims
            .iter()
            .zip(&lens)
            .map(|(&s, &len)| &mut chunks[s].take().expect("victims are distinct")[..len])
            .collect();
        read(first * bs, &mut bufs)?;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 256) as u8).collect()
    }

    fn fill_from(cache: &mut BlockCache, data: &[u8], first: u64, count: usize) {
        cache
            .fill(first, count, data.len() as u64, |offset, bufs| {
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
}
