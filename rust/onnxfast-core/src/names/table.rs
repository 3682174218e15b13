//! A table of names whose probe can be started early.
//!
//! The checker's SSA proof and the inference engine each keep one entry per
//! value of a graph: 200,000 and more in exporter graphs, several MiB, so
//! nearly every probe misses the caches and waits for memory (a third of
//! inference on a 200,000-node chain was that wait). The callers know the
//! names they will look up a few nodes ahead; [`NameTable::prefetch`] starts
//! loading the line a name's probe will read, and the probe finds it there.
//! `std`'s map has no such call, hence this table.
//!
//! Layout: open addressing with linear probing over 8-byte slots (eight to
//! a cache line), each holding a tag from the name's hash and the index of
//! its entry; entries (name, value) are kept in insertion order, so values
//! defined in node order and read back in node order are read in order.

use std::hash::BuildHasher;

use super::same;

/// Low bits of a slot: the entry's index + 1 (0: the slot is empty).
const INDEX_BITS: u32 = 40;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;
const EMPTY: u64 = 0;
/// A removed entry's slot: probes go on past it.
const REMOVED: u64 = INDEX_MASK;
/// Slots per table at least (one cache line).
const MIN_SLOTS: usize = 8;

/// How far ahead (nodes, entries) callers start probes with
/// [`NameTable::prefetch`]: far enough for a load from memory to land
/// (a node's rules take ~200 ns), near enough to stay in the caches.
pub(crate) const PROBE_AHEAD: usize = 4;

/// Items in order, each handed out with the one [`PROBE_AHEAD`] places
/// after it, whose probes the caller starts then (the reader of a long list
/// of names inserted into, or looked up in, a table too large for the
/// caches).
pub(crate) struct Lookahead<I: Iterator> {
    items: I,
    window: std::collections::VecDeque<I::Item>,
}

impl<I: Iterator> Lookahead<I> {
    pub(crate) fn new(mut items: I) -> Self {
        let window = items.by_ref().take(PROBE_AHEAD).collect();
        Lookahead { items, window }
    }

    /// The next item, and the item [`PROBE_AHEAD`] places after it.
    pub(crate) fn next_ahead(&mut self) -> Option<(I::Item, Option<&I::Item>)> {
        let item = self.window.pop_front()?;
        let ahead = match self.items.next() {
            Some(later) => {
                self.window.push_back(later);
                self.window.back()
            }
            None => None,
        };
        Some((item, ahead))
    }
}

/// Names (borrowed from the model) to values, with [`NameTable::prefetch`].
#[derive(Clone)]
pub(crate) struct NameTable<'a, V> {
    hasher: foldhash::fast::FixedState,
    /// A power of two long (or empty); tag << INDEX_BITS | (index + 1).
    slots: Vec<u64>,
    entries: Vec<(&'a str, V)>,
    /// Slots not empty (entries and removed ones).
    used: usize,
    removed: usize,
}

impl<V> Default for NameTable<'_, V> {
    fn default() -> Self {
        NameTable {
            hasher: foldhash::fast::FixedState::with_seed(0x6e61_6d65),
            slots: Vec::new(),
            entries: Vec::new(),
            used: 0,
            removed: 0,
        }
    }
}

impl<V: std::fmt::Debug> std::fmt::Debug for NameTable<'_, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Where a probe ended: at the name's slot, or at the empty slot ending
/// its run (where it would go).
enum Probe {
    Found(usize),
    Vacant(usize),
}

impl<'a, V> NameTable<'a, V> {
    pub(crate) fn with_capacity(n: usize) -> Self {
        let mut t = Self::default();
        t.reserve(n);
        t
    }

    /// Names in the table.
    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.removed
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Room for `more` names without growing.
    pub(crate) fn reserve(&mut self, more: usize) {
        let want = self.used.saturating_add(more);
        if !fits(want, self.slots.len()) {
            self.grow_to(want);
        }
        self.entries.reserve(more);
    }

    fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    fn home(&self, hash: u64) -> usize {
        // Truncation wanted: the low bits pick the slot.
        #[allow(clippy::cast_possible_truncation)]
        let low = hash as usize;
        low & (self.slots.len() - 1)
    }

    /// Starts loading the memory a probe of `name` reads first (nothing
    /// else happens: no effect on the table's contents).
    #[inline]
    pub(crate) fn prefetch(&self, name: &str) {
        if self.slots.is_empty() {
            return;
        }
        let at = self.home(self.hash(name));
        prefetch_line(&self.slots[at]);
    }

    fn probe(&self, name: &str, hash: u64) -> Probe {
        let tag = hash >> INDEX_BITS;
        let mask = self.slots.len() - 1;
        let mut at = self.home(hash);
        // The table is never full (see `fits`): an empty slot ends the run.
        loop {
            let s = self.slots[at];
            if s == EMPTY {
                return Probe::Vacant(at);
            }
            if s != REMOVED && s >> INDEX_BITS == tag {
                if let Some((n, _)) = self.entries.get(index_of(s)) {
                    if same(n, name) {
                        return Probe::Found(at);
                    }
                }
            }
            at = (at + 1) & mask;
        }
    }

    fn find(&self, name: &str) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        match self.probe(name, self.hash(name)) {
            Probe::Found(at) => Some(index_of(self.slots[at])),
            Probe::Vacant(_) => None,
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        let i = self.find(name)?;
        self.entries.get(i).map(|(_, v)| v)
    }

    pub(crate) fn get_mut(&mut self, name: &str) -> Option<&mut V> {
        let i = self.find(name)?;
        self.entries.get_mut(i).map(|(_, v)| v)
    }

    /// The entry index of `name`, or where it goes (slot, hash); with room
    /// for one more name.
    fn place(&mut self, name: &str) -> Result<usize, (usize, u64)> {
        if !fits(self.used + 1, self.slots.len()) {
            self.grow_to(self.used + 1);
        }
        let hash = self.hash(name);
        match self.probe(name, hash) {
            Probe::Found(at) => Ok(index_of(self.slots[at])),
            Probe::Vacant(at) => Err((at, hash)),
        }
    }

    fn push(&mut self, (at, hash): (usize, u64), name: &'a str, value: V) -> usize {
        let i = self.entries.len();
        self.slots[at] = slot(hash, i);
        self.entries.push((name, value));
        self.used += 1;
        i
    }

    /// The value of `name`, inserted as `make()` if absent; and whether it
    /// was absent.
    pub(crate) fn get_or_insert_with(
        &mut self,
        name: &'a str,
        make: impl FnOnce() -> V,
    ) -> (&mut V, bool) {
        let (i, new) = match self.insert_or_index(name, make) {
            Ok(i) => (i, true),
            Err(i) => (i, false),
        };
        // `i` is an entry's index (found, or just pushed).
        (&mut self.entries[i].1, new)
    }

    /// Sets the value of `name`; true if the name was not there.
    pub(crate) fn insert(&mut self, name: &'a str, value: V) -> bool {
        match self.place(name) {
            Ok(i) => {
                self.entries[i].1 = value;
                false
            }
            Err(vacant) => {
                self.push(vacant, name, value);
                true
            }
        }
    }

    /// Inserts `name` (with `make()`) if absent: `Ok(index)` of its new
    /// entry, or `Err(index)` of the entry it already has. Entries are
    /// indexed in insertion order, so an index tells which names came first.
    pub(crate) fn insert_or_index(
        &mut self,
        name: &'a str,
        make: impl FnOnce() -> V,
    ) -> Result<usize, usize> {
        match self.place(name) {
            Ok(i) => Err(i),
            Err(vacant) => Ok(self.push(vacant, name, make())),
        }
    }

    /// The room for entries not made yet (see [`prefault`]).
    pub(crate) fn spare_room(&self) -> Room {
        let used = self.entries.len() * std::mem::size_of::<(&str, V)>();
        let room = self.entries.capacity() * std::mem::size_of::<(&str, V)>();
        Room {
            start: (self.entries.as_ptr() as usize).saturating_add(used),
            len: room.saturating_sub(used),
        }
    }

    /// Entries made so far (removed ones included): the index the next new
    /// name gets.
    pub(crate) fn entries_made(&self) -> usize {
        self.entries.len()
    }

    /// Takes `name` out; true if it was there. Its entry stays in place,
    /// unreachable (removals are rare: a proof taken back).
    pub(crate) fn remove(&mut self, name: &str) -> bool {
        if self.slots.is_empty() {
            return false;
        }
        match self.probe(name, self.hash(name)) {
            Probe::Found(at) => {
                self.slots[at] = REMOVED;
                self.removed += 1;
                true
            }
            Probe::Vacant(_) => false,
        }
    }

    /// The names and values, in insertion order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'a str, &V)> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(|(i, (n, _))| self.removed == 0 || self.find(n) == Some(*i))
            .map(|(_, (n, v))| (*n, v))
    }

    /// Rebuilds the slots for `want` names (removed entries dropped from
    /// the slots; their entries stay, unreachable).
    fn grow_to(&mut self, want: usize) {
        let mut n = self.slots.len().max(MIN_SLOTS);
        while !fits(want, n) {
            n = n.saturating_mul(2);
        }
        let live: Vec<usize> = if self.removed == 0 {
            (0..self.entries.len()).collect()
        } else {
            self.slots
                .iter()
                .filter(|&&s| s != EMPTY && s != REMOVED)
                .map(|&s| index_of(s))
                .collect()
        };
        self.slots = written_empty(n);
        let mask = n - 1;
        for i in live {
            let hash = self.hash(self.entries[i].0);
            let mut at = self.home(hash);
            while self.slots[at] != EMPTY {
                at = (at + 1) & mask;
            }
            self.slots[at] = slot(hash, i);
        }
        self.used = self.entries.len() - self.removed;
        // Entries of removed names no longer have slots; counting them in
        // `removed` keeps `len` right.
    }
}

/// A range of memory a table will write (an address and a length: no
/// access through it, see [`prefault`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Room {
    start: usize,
    len: usize,
}

/// Maps in, ready for writing, the pages of `room` not mapped yet: on
/// another thread while the table's owner fills it, so that the owner does
/// not take a page fault on each fresh page of its entries (2,500 faults,
/// several ms, for the values of a 200,000-node graph), or at once for
/// fresh zeroed slots ([`written_empty`]). Linux 5.14 and later; elsewhere
/// nothing (the owner faults the pages in as before). Whether the pages
/// are mapped now.
pub(crate) fn prefault(room: Room) -> bool {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let first = room.start.div_ceil(PAGE) * PAGE;
        let last = room.start.saturating_add(room.len) / PAGE * PAGE;
        if last <= first {
            return true;
        }
        // SAFETY: MADV_POPULATE_WRITE reads and writes no byte of the
        // range: it maps each page not mapped yet as the first write would
        // (a fresh zeroed page of this private anonymous memory; a page
        // already mapped is left as it is), so it cannot race with the
        // owner's writes, and the contents are what they would have been.
        // Should the room be freed meanwhile (the table grew), the range is
        // still the allocator's, and mapping its pages in changes no data.
        // A failure (an older kernel, EINVAL) leaves the faults to the owner.
        unsafe {
            rustix::mm::madvise(
                first as *mut std::ffi::c_void,
                last - first,
                rustix::mm::Advice::LinuxPopulateWrite,
            )
        }
        .is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = room;
        false
    }
}

/// `n` empty slots, written now. `vec![EMPTY; n]` would take fresh zeroed
/// pages from the allocator untouched: a probe then reads each page first,
/// mapping the kernel's shared zero page, and the insert after it writes,
/// which replaces that mapping and flushes it from every CPU running this
/// process (an interrupt to each: with inference and the structural checks
/// side by side, 16 % of a full check's time). Written first, a page is
/// faulted in once, for writing.
///
/// A large table's slots are mapped in at once where the system can (see
/// [`prefault`]: one call instead of a fault a page), then written. (They
/// were taken zeroed, `EMPTY` being 0, meant to be zeroed by the kernel
/// alone; but mimalloc zeroes an aligned request itself, a fault a page.
/// Either way the kernel's zeroing of fresh pages is most of the cost: the
/// 200,000-node chain's inference, 4 MiB of slots, 21.8 -> 21.6 ms.)
fn written_empty(n: usize) -> Vec<u64> {
    const MAPPED_FROM: usize = 1 << 20;
    let mut slots = Vec::with_capacity(n);
    let bytes = slots.capacity().saturating_mul(std::mem::size_of::<u64>());
    if bytes >= MAPPED_FROM {
        prefault(Room {
            start: slots.as_ptr() as usize,
            len: bytes,
        });
    }
    slots.resize(n, EMPTY);
    slots
}

/// Whether `used` slots leave a table of `slots` under 70 % full (linear
/// probing's runs stay short; at least one slot stays empty).
fn fits(used: usize, slots: usize) -> bool {
    used.saturating_mul(10) < slots.saturating_mul(7)
}

fn slot(hash: u64, index: usize) -> u64 {
    let tag = hash >> INDEX_BITS;
    // An index needs 40 bits: more entries than that cannot be in memory.
    (tag << INDEX_BITS) | ((index as u64 + 1) & INDEX_MASK)
}

fn index_of(slot: u64) -> usize {
    // At most 40 bits.
    #[allow(clippy::cast_possible_truncation)]
    let i = (slot & INDEX_MASK) as usize;
    i.wrapping_sub(1)
}

/// Asks the CPU to bring `at`'s cache line closer (a hint: it never faults
/// and changes nothing).
#[inline]
fn prefetch_line<T>(at: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing architecturally and cannot fault;
        // `at` is a valid reference besides. SSE is part of x86_64's base.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(at).cast::<i8>());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mapping in a table's spare room from another thread while its
    /// owner fills it changes nothing the owner wrote or reads.
    #[test]
    fn prefaulting_the_spare_room_changes_nothing() {
        let owned: Vec<String> = (0..300_000).map(|i| format!("value_{i}")).collect();
        let mut t: NameTable<'_, usize> = NameTable::with_capacity(owned.len());
        for (i, name) in owned.iter().take(1000).enumerate() {
            t.insert(name, i);
        }
        let room = t.spare_room();
        assert!(room.len >= (owned.len() - 1000) * std::mem::size_of::<(&str, usize)>());
        std::thread::scope(|s| {
            s.spawn(move || prefault(room));
            for (i, name) in owned.iter().enumerate().skip(1000) {
                t.insert(name, i);
            }
        });
        for (i, name) in owned.iter().enumerate() {
            assert_eq!(t.get(name), Some(&i));
        }
        // A large table's slots, taken zeroed and mapped in, are empty.
        assert!(written_empty(1 << 18).iter().all(|&s| s == EMPTY));
        // A full table has no spare room; prefaulting nothing is nothing.
        let full: NameTable<'_, usize> = NameTable::default();
        prefault(full.spare_room());
    }

    #[test]
    fn agrees_with_a_hash_map() {
        let owned: Vec<String> = (0..5000).map(|i| format!("v{}", i % 3001)).collect();
        let mut t: NameTable<'_, usize> = NameTable::default();
        let mut m = std::collections::HashMap::new();
        for (i, name) in owned.iter().enumerate() {
            t.prefetch(name);
            assert_eq!(t.insert(name, i), m.insert(name.as_str(), i).is_none());
            if i % 7 == 0 {
                let gone = format!("v{}", i / 3);
                assert_eq!(t.remove(&gone), m.remove(gone.as_str()).is_some());
            }
        }
        assert_eq!(t.len(), m.len());
        for i in 0..3100 {
            let name = format!("v{i}");
            assert_eq!(t.get(&name), m.get(name.as_str()), "{name}");
        }
        let mut listed: Vec<(&str, usize)> = t.iter().map(|(n, v)| (n, *v)).collect();
        let mut expected: Vec<(&str, usize)> = m.iter().map(|(n, v)| (*n, *v)).collect();
        listed.sort_unstable();
        expected.sort_unstable();
        assert_eq!(listed, expected);
    }

    #[test]
    fn indexes_follow_insertion_order() {
        let mut t: NameTable<'_, ()> = NameTable::default();
        assert_eq!(t.insert_or_index("a", || ()), Ok(0));
        assert_eq!(t.insert_or_index("b", || ()), Ok(1));
        assert_eq!(t.insert_or_index("a", || ()), Err(0));
        assert!(t.remove("a"));
        assert_eq!(t.entries_made(), 2);
        assert_eq!(t.insert_or_index("a", || ()), Ok(2));
        assert_eq!(t.insert_or_index("b", || ()), Err(1));
    }

    #[test]
    fn empty_names_and_empty_tables() {
        let mut t: NameTable<'_, ()> = NameTable::default();
        assert!(!t.contains(""));
        assert!(!t.remove("x"));
        t.prefetch("x");
        assert!(t.insert("", ()));
        assert!(!t.insert("", ()));
        assert!(t.contains(""));
        assert!(!t.contains("x"));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn reinserted_after_removal() {
        let mut t: NameTable<'_, u32> = NameTable::with_capacity(4);
        for round in 0..50 {
            assert!(t.insert("a", round));
            assert!(t.remove("a"));
        }
        assert!(t.is_empty());
        assert!(t.insert("a", 7));
        assert_eq!(t.get("a"), Some(&7));
        assert_eq!(t.iter().count(), 1);
    }
}
