//! Memory that received bytes are delivered into, through a cursor ([`Sink`], and
//! [`Buffers`], several buffers filled in order): the HTTP client's bodies, and bb-seek's
//! sources, which read into the same sinks.

/// Memory a read is delivered into, through a cursor.
pub trait Sink {
    /// The free memory at the cursor: at most `max` bytes, and not empty when `max` > 0.
    fn space(&mut self, max: usize) -> &mut [u8];

    /// Marks the first `n` bytes of the last [`Sink::space`] as filled.
    fn advance(&mut self, n: usize);
}

/// A sink over a list of buffers, filled in order.
pub struct Buffers<'a, 'b> {
    bufs: &'a mut [&'b mut [u8]],
    index: usize,
    filled: usize,
}

impl<'a, 'b> Buffers<'a, 'b> {
    pub fn new(bufs: &'a mut [&'b mut [u8]]) -> Buffers<'a, 'b> {
        Buffers {
            bufs,
            index: 0,
            filled: 0,
        }
    }

    /// The bytes the buffers hold in all.
    pub fn total(&self) -> u64 {
        self.bufs.iter().map(|b| b.len() as u64).sum()
    }
}

impl Sink for Buffers<'_, '_> {
    fn space(&mut self, max: usize) -> &mut [u8] {
        while self.index < self.bufs.len() && self.filled == self.bufs[self.index].len() {
            self.index += 1;
            self.filled = 0;
        }
        match self.bufs.get_mut(self.index) {
            Some(b) => {
                let end = b.len().min(self.filled.saturating_add(max));
                &mut b[self.filled..end]
            }
            None => &mut [],
        }
    }

    fn advance(&mut self, n: usize) {
        self.filled += n;
    }
}
