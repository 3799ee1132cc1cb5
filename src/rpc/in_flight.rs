//! The calls a pipeline has in flight, by id. A pipeline hands out ids in order, so a
//! ring indexed by `id - oldest` finds a reply's call without hashing or allocating per
//! call, and the oldest call still in flight (the one whose deadline comes first) is
//! always at its front. Ids wrap round at `u32::MAX` like the wire's.

/// Calls in flight, each a `T`, keyed by consecutive ids from the first one pushed.
pub(crate) struct InFlight<T> {
    /// A ring whose length is a power of two (or 0): the call `k` after the oldest in
    /// flight is in slot `(head + k) & (len - 1)`, for `k` below `used`. A call answered
    /// out of order leaves a hole (None) until every call before it is answered too.
    /// Slots are taken and filled in place: a call answered moves nothing else.
    slots: Vec<Option<T>>,
    head: usize,
    /// Slots from the oldest call in flight to the newest sent, holes included.
    used: usize,
    /// The id the next call gets; the oldest's is this less `used`.
    next: u32,
    /// Calls still waiting (slots that are not holes).
    waiting: usize,
}

impl<T> InFlight<T> {
    /// An empty ring whose first call gets id `first`.
    pub(crate) fn new(first: u32) -> InFlight<T> {
        InFlight {
            slots: Vec::new(),
            head: 0,
            used: 0,
            next: first,
            waiting: 0,
        }
    }

    /// Adds a call with the next id, and returns that id.
    #[inline]
    pub(crate) fn push(&mut self, call: T) -> u32 {
        if self.used == self.slots.len() {
            self.grow();
        }
        let at = (self.head + self.used) & (self.slots.len() - 1);
        self.slots[at] = Some(call);
        self.used += 1;
        self.waiting += 1;
        let id = self.next;
        self.next = self.next.wrapping_add(1);
        id
    }

    /// Doubles the ring (at least 8 slots), the oldest call first.
    #[cold]
    fn grow(&mut self) {
        let len = (self.slots.len() * 2).max(8);
        let mut slots = Vec::with_capacity(len);
        for k in 0..self.used {
            let at = (self.head + k) & (self.slots.len() - 1);
            slots.push(self.slots[at].take());
        }
        slots.resize_with(len, || None);
        self.slots = slots;
        self.head = 0;
    }

    /// The id the next call pushed gets.
    pub(crate) fn next_id(&self) -> u32 {
        self.next
    }

    /// Calls still waiting for their reply.
    pub(crate) fn len(&self) -> usize {
        self.waiting
    }

    /// Where call `id` is in the ring, if it is in its span (an id before the oldest
    /// wraps round to a distance far beyond it).
    #[inline]
    fn slot(&self, id: u32) -> Option<usize> {
        let k = id.wrapping_sub(self.next.wrapping_sub(self.used as u32)) as usize;
        (k < self.used).then(|| (self.head + k) & (self.slots.len() - 1))
    }

    /// Takes call `id` out, or None when no call with that id is waiting (never sent,
    /// or answered already).
    #[inline]
    pub(crate) fn remove(&mut self, id: u32) -> Option<T> {
        let at = self.slot(id)?;
        let call = self.slots[at].take()?;
        self.waiting -= 1;
        // Holes never stay at the front.
        while self.used > 0 && self.slots[self.head].is_none() {
            self.head = (self.head + 1) & (self.slots.len() - 1);
            self.used -= 1;
        }
        Some(call)
    }

    /// Takes out up to `n` of the oldest calls, consecutive ids from the oldest's, while
    /// each is waiting and `take` accepts it; returns how many it took.
    pub(crate) fn take_oldest(&mut self, n: usize, take: impl Fn(&T) -> bool) -> usize {
        let mut taken = 0;
        while taken < n && self.used > 0 {
            match &self.slots[self.head] {
                Some(call) if take(call) => self.slots[self.head] = None,
                _ => break,
            }
            self.head = (self.head + 1) & (self.slots.len() - 1);
            self.used -= 1;
            self.waiting -= 1;
            taken += 1;
            if self.used > 0 && self.slots[self.head].is_none() {
                // A hole at the front: the oldest's id jumps, and holes never stay there.
                while self.used > 0 && self.slots[self.head].is_none() {
                    self.head = (self.head + 1) & (self.slots.len() - 1);
                    self.used -= 1;
                }
                break;
            }
        }
        taken
    }

    /// Call `id`, while it waits.
    #[inline]
    pub(crate) fn get(&self, id: u32) -> Option<&T> {
        self.slots[self.slot(id)?].as_ref()
    }

    /// Call `id`, while it waits, to change.
    #[inline]
    pub(crate) fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        let at = self.slot(id)?;
        self.slots[at].as_mut()
    }

    /// The oldest call still waiting, and its id.
    pub(crate) fn oldest(&self) -> Option<(u32, &T)> {
        let call = self
            .slots
            .get(self.head)
            .filter(|_| self.used > 0)?
            .as_ref()?;
        Some((self.next.wrapping_sub(self.used as u32), call))
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
    fn the_ring_grows_round_its_holes_keeping_every_call_by_id() {
        let mut ring = InFlight::new(7);
        // Answer every third call as the ring fills, so that it wraps and grows with
        // holes inside it.
        let mut waiting = std::collections::BTreeMap::new();
        for i in 0..100u32 {
            let id = ring.push(i);
            waiting.insert(id, i);
            if i % 3 == 2 {
                let answered = id - 1;
                assert_eq!(ring.remove(answered), waiting.remove(&answered));
            }
            if i % 10 == 9 {
                let oldest = *waiting.keys().next().unwrap();
                assert_eq!(ring.remove(oldest), waiting.remove(&oldest));
            }
            assert_eq!(ring.len(), waiting.len());
            let (&id, call) = waiting.iter().next().unwrap();
            assert_eq!(ring.oldest(), Some((id, call)));
        }
        for (id, call) in std::mem::take(&mut waiting) {
            assert_eq!(ring.get(id), Some(&call));
            assert_eq!(ring.remove(id), Some(call));
        }
        assert_eq!((ring.len(), ring.oldest()), (0, None));
    }

    #[test]
    fn the_oldest_calls_are_taken_in_order_up_to_a_hole_or_a_refusal() {
        let mut ring = InFlight::new(u32::MAX - 2);
        for i in 0..8 {
            ring.push(i);
        }
        // Ids MAX-2, MAX-1, MAX, 0, 1, 2, 3, 4 hold 0 to 7; 2 is answered already.
        assert_eq!(ring.remove(2), Some(5));
        assert_eq!(ring.take_oldest(2, |_| true), 2, "as many as asked");
        assert_eq!(ring.oldest(), Some((u32::MAX, &2)));
        assert_eq!(ring.take_oldest(8, |&c| c != 3), 1, "up to one refused");
        assert_eq!(ring.oldest(), Some((0, &3)));
        assert_eq!(ring.take_oldest(8, |_| true), 2, "up to the hole");
        assert_eq!((ring.len(), ring.oldest()), (2, Some((3, &6))));
        assert_eq!(ring.take_oldest(8, |_| true), 2);
        assert_eq!((ring.len(), ring.oldest()), (0, None));
        assert_eq!(ring.take_oldest(8, |_| true), 0, "nothing left");
        assert_eq!(ring.push(8), 5);
        assert_eq!(ring.oldest(), Some((5, &8)));
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
