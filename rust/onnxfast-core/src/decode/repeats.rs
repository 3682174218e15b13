//! What the scan learnt from small submessages it has walked, so that a
//! byte-identical one is accounted without being walked again.
//!
//! Exported graphs repeat themselves: every `value_info` of a hidden state
//! carries the same `TypeProto` (`float[batch, seq, 768]`), every Transpose
//! the same `perm` attribute. The scan of a main-graph list element (a
//! node, a value_info, an initializer) therefore remembers, for each direct
//! child message it walks, what walking it added: projected heap, messages
//! of each type. A later child of the same type with the
//! same bytes adds the same, since the walk's accounting of a child below
//! an element's root depends on nothing but its type and bytes (the only
//! containers reserved exactly are the model's lists and a main-graph
//! node's own attributes, both above it), and identical bytes were already
//! proven sound under the same depth limit. The deepest level the scan
//! reports needs nothing: the child seen first was walked in the same run,
//! into the same counts.
//!
//! The table is direct-mapped (64 entries, chosen by the type, length and
//! the first and last eight bytes), so a lookup is one hash and one compare;
//! children over [`MAX_LEN`] bytes are always walked (a walk skips `bytes`
//! fields without reading them, a compare would read them).

use super::scan::ScanStats;
use crate::names::same_bytes;

/// Children longer than this are walked, never compared.
const MAX_LEN: usize = 1024;

/// Entries in the table (a power of two).
const ENTRIES: usize = 64;

/// Types of message a remembered child may hold below itself.
const MAX_TYPES: usize = 6;

/// A child walked before: its type and bytes, and what walking it added.
#[derive(Clone, Copy)]
struct Seen<'a> {
    id: usize,
    bytes: &'a [u8],
    added: Known,
}

/// A child being walked, to be remembered when the walk leaves it.
struct Open<'a> {
    id: usize,
    bytes: &'a [u8],
    entry: usize,
    heap_before: u64,
}

/// The table, reused by every walk of a run over one buffer.
pub(super) struct Repeats<'a> {
    seen: Vec<Option<Seen<'a>>>,
    open: Option<Open<'a>>,
    /// Message counts when the open child was entered.
    before: Vec<u64>,
    max_depth: usize,
}

/// What walking a child added, to be added again instead of walking a
/// byte-identical one.
#[derive(Clone, Copy)]
pub(super) struct Known {
    pub(super) heap: u64,
    /// Messages below the child, by type (the child itself is counted by
    /// the walk at the place it is met).
    below: [(u16, u32); MAX_TYPES],
    types: u8,
}

impl Known {
    /// Adds the child's descendants to the message counts.
    #[inline]
    pub(super) fn count(&self, stats: &mut ScanStats) {
        for &(id, n) in self.below.iter().take(usize::from(self.types)) {
            if let Some(count) = stats.messages.get_mut(usize::from(id)) {
                *count += u64::from(n);
            }
        }
    }
}

impl<'a> Repeats<'a> {
    pub(super) fn new() -> Self {
        Repeats {
            seen: vec![None; ENTRIES],
            open: None,
            before: Vec::new(),
            max_depth: 0,
        }
    }

    /// Starts a walk under the depth limit `max_depth` (what was learnt
    /// under another limit is forgotten).
    #[inline]
    pub(super) fn begin(&mut self, max_depth: usize) {
        self.open = None;
        if max_depth != self.max_depth {
            self.seen.iter_mut().for_each(|e| *e = None);
            self.max_depth = max_depth;
        }
    }

    /// Called as the walk enters a child of type `id` (already counted in
    /// `stats`) whose bytes are `bytes`: what it adds if it was seen before;
    /// otherwise `None`, and the child is remembered when [`Self::close`]
    /// is called as the walk leaves it.
    #[inline]
    pub(super) fn enter(
        &mut self,
        id: usize,
        bytes: &'a [u8],
        heap: u64,
        stats: &mut ScanStats,
    ) -> Option<Known> {
        if bytes.len() > MAX_LEN {
            return None;
        }
        let entry = slot(id, bytes);
        if let Some(Some(seen)) = self.seen.get(entry) {
            if seen.id == id && same_bytes(seen.bytes, bytes) {
                return Some(seen.added);
            }
        }
        self.before.clear();
        self.before.extend_from_slice(&stats.messages);
        self.open = Some(Open {
            id,
            bytes,
            entry,
            heap_before: heap,
        });
        None
    }

    /// Called as the walk leaves a child (back at the element's root):
    /// remembers what walking it added.
    #[inline]
    pub(super) fn close(&mut self, heap: u64, stats: &mut ScanStats) {
        let Some(open) = self.open.take() else {
            return;
        };
        let mut below = [(0u16, 0u32); MAX_TYPES];
        let mut types = 0usize;
        for (id, (&now, &then)) in stats.messages.iter().zip(&self.before).enumerate() {
            if now == then {
                continue;
            }
            let (Ok(id), Ok(n)) = (u16::try_from(id), u32::try_from(now - then)) else {
                return;
            };
            let Some(place) = below.get_mut(types) else {
                return;
            };
            *place = (id, n);
            types += 1;
        }
        if let Some(entry) = self.seen.get_mut(open.entry) {
            *entry = Some(Seen {
                id: open.id,
                bytes: open.bytes,
                added: Known {
                    heap: heap.saturating_sub(open.heap_before),
                    below,
                    types: types as u8,
                },
            });
        }
    }
}

/// The table entry of a child: its type, length, first and last words.
#[inline]
fn slot(id: usize, bytes: &[u8]) -> usize {
    let word = |part: &[u8]| match part.get(..8).map(<[u8; 8]>::try_from) {
        Some(Ok(word)) => u64::from_le_bytes(word),
        _ => part
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &b)| acc | (u64::from(b) << (8 * i))),
    };
    let head = word(bytes);
    let tail = word(
        bytes
            .get(bytes.len().saturating_sub(8)..)
            .unwrap_or_default(),
    );
    let mixed = head ^ tail.rotate_left(29) ^ ((bytes.len() as u64) << 40) ^ (id as u64);
    (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize & (ENTRIES - 1)
}
