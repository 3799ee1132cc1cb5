//! The calls a pipeline has in flight, by id. A pipeline hands out ids in order, so a
//! ring indexed by `id - oldest` finds a reply's call without hashing or allocating per
//! call, and the oldest call still in flight (the one whose deadline comes first) is
//! always at its front. Ids wrap round at `u32::MAX` like the wire's.

use std::collections::VecDeque;

/// Calls in flight, each a `T`, keyed by consecutive ids from the first one pushed.
pub(crate) struct InFlight<T> {
    /// The calls from the oldest in flight to the newest sent; a call answered out of
    /// order leaves a hole (None) until every call before it is answered too.
    slots: VecDeque<Option<T>>,
    /// The id the next call gets; the front slot's id is this less `slots.len()`.
    next: u32,
    /// Calls still waiting (slots that are not holes).
    waiting: usize,
}

impl<T> InFlight<T> {
    /// An empty ring whose first call gets id `first`.
    pub(crate) fn new(first: u32) -> InFlight<T> {
        InFlight {
            slots: VecDeque::new(),
            next: first,
            waiting: 0,
        }
    }

    /// Adds a call with the next id, and returns that id.
    pub(crate) fn push(&mut self, call: T) -> u32 {
        let id = self.next;
        self.next = self.next.wrapping_add(1);
        self.slots.push_back(Some(call));
        self.waiting += 1;
        id
    }

    /// The id the next call pushed gets.
    pub(crate) fn next_id(&self) -> u32 {
        self.next
    }

    /// Calls still waiting for their reply.
    pub(crate) fn len(&self) -> usize {
        self.waiting
    }

    /// The id of the front slot.
    fn base(&self) -> u32 {
        self.next.wrapping_sub(self.slots.len() as u32)
    }

    /// Takes call `id` out, or None when no call with that id is waiting (never sent,
    /// or answered already).
    pub(crate) fn remove(&mut self, id: u32) -> Option<T> {
        let index = self.index(id);
        let call = self.slots.get_mut(index)?.take()?;
        self.waiting -= 1;
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
        }
        Some(call)
    }

    /// Call `id`, while it waits.
    pub(crate) fn get(&self, id: u32) -> Option<&T> {
        self.slots.get(self.index(id))?.as_ref()
    }

    /// Call `id`, while it waits, to change.
    pub(crate) fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        let index = self.index(id);
        self.slots.get_mut(index)?.as_mut()
    }

    /// Where call `id` is in the ring, if it is (an id before the oldest wraps round to
    /// an index far beyond the end).
    fn index(&self, id: u32) -> usize {
        id.wrapping_sub(self.base()) as usize
    }

    /// The oldest call still waiting, and its id.
    pub(crate) fn oldest(&self) -> Option<(u32, &T)> {
        // Holes never stay at the front: `remove` drops them.
        let call = self.slots.front()?.as_ref()?;
        Some((self.base(), call))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_out_of_order_leave_the_oldest_call_at_the_front() {
        let mut ring = InFlight::new(1);
        let ids: Vec<u32> = (0..5).map(|i| ring.push(i * 10)).collect();
        assert_eq!(ids, [1, 2, 3, 4, 5]);
        assert_eq!(ring.remove(3), Some(20));
        assert_eq!(ring.remove(5), Some(40));
        assert_eq!((ring.len(), ring.oldest()), (3, Some((1, &0))));
        assert_eq!(ring.remove(1), Some(0));
        assert_eq!(
            ring.oldest(),
            Some((2, &10)),
            "the hole at 3 stays behind 2"
        );
        assert_eq!(ring.remove(2), Some(10));
        assert_eq!(
            ring.oldest(),
            Some((4, &30)),
            "holes at the front are dropped"
        );
        assert_eq!(ring.remove(4), Some(30));
        assert_eq!((ring.len(), ring.oldest()), (0, None));
        assert_eq!(ring.push(50), 6, "ids go on after the ring emptied");
        assert_eq!(ring.oldest(), Some((6, &50)));
    }

    #[test]
    fn ids_wrap_round_past_u32_max() {
        let mut ring = InFlight::new(u32::MAX - 1);
        let ids: Vec<u32> = (0..4).map(|i| ring.push(i)).collect();
        assert_eq!(ids, [u32::MAX - 1, u32::MAX, 0, 1]);
        assert_eq!(ring.remove(0), Some(2));
        assert_eq!(ring.remove(u32::MAX - 1), Some(0));
        assert_eq!(ring.oldest(), Some((u32::MAX, &1)));
        assert_eq!(ring.remove(u32::MAX), Some(1));
        assert_eq!(ring.oldest(), Some((1, &3)));
        assert_eq!(ring.len(), 1);
    }

    #[test]
    fn an_unknown_or_repeated_id_finds_nothing_and_changes_nothing() {
        let mut ring = InFlight::new(10);
        ring.push('a');
        ring.push('b');
        for id in [9, 12, 1000, u32::MAX, 0] {
            assert_eq!(ring.remove(id), None, "id {id}");
        }
        assert_eq!(
            (ring.get(11), ring.get(12), ring.get(9)),
            (Some(&'b'), None, None)
        );
        *ring.get_mut(11).unwrap() = 'c';
        assert_eq!(ring.remove(11), Some('c'));
        assert_eq!(ring.remove(11), None, "answered already");
        assert_eq!(ring.get(11), None);
        assert_eq!((ring.len(), ring.oldest()), (1, Some((10, &'a'))));
        assert_eq!(ring.remove(10), Some('a'));
        assert_eq!((ring.len(), ring.oldest()), (0, None));
        assert_eq!(ring.remove(10), None);
    }
}
