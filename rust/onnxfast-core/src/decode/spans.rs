//! Where the elements of a model's main graph lists lie in its source
//! buffer: the index the scan builds and decode on touch reads.

use super::varint;
use crate::proto::schema::fields;

/// One of the main graph's long lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    Node = 0,
    Initializer = 1,
    ValueInfo = 2,
    SparseInitializer = 3,
}

impl List {
    /// Every list, in the order of [`Lists`]' array.
    pub const ALL: [List; 4] = [
        List::Node,
        List::Initializer,
        List::ValueInfo,
        List::SparseInitializer,
    ];

    /// The list `GraphProto`'s field `number` is, if it is one.
    #[inline]
    pub fn of_graph_field(number: u64) -> Option<List> {
        List::ALL
            .into_iter()
            .find(|list| u64::from(list.field_and_message().0) == number)
    }

    /// The list's field number in `GraphProto` and its elements' message
    /// type (an index into the schema table).
    pub const fn field_and_message(self) -> (u32, usize) {
        use crate::proto::schema::ids;
        match self {
            List::Node => (fields::graph_proto::NODE, ids::NODE_PROTO),
            List::Initializer => (fields::graph_proto::INITIALIZER, ids::TENSOR_PROTO),
            List::ValueInfo => (fields::graph_proto::VALUE_INFO, ids::VALUE_INFO_PROTO),
            List::SparseInitializer => (
                fields::graph_proto::SPARSE_INITIALIZER,
                ids::SPARSE_TENSOR_PROTO,
            ),
        }
    }

    /// Field path from the model, for error messages.
    pub fn path(self) -> &'static str {
        match self {
            List::Node => "graph.node",
            List::Initializer => "graph.initializer",
            List::ValueInfo => "graph.value_info",
            List::SparseInitializer => "graph.sparse_initializer",
        }
    }
}

/// Where each element of one list lies: the offset of its length prefix,
/// 4 bytes an element while the source is under 4 GiB (8 beyond). The
/// length is read back from the source when the element is wanted.
#[derive(Debug, Clone)]
pub enum Spans {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Default for Spans {
    fn default() -> Self {
        Spans::Narrow(Vec::new())
    }
}

impl Spans {
    /// Records an element whose length prefix starts at `offset`.
    #[inline]
    pub fn push(&mut self, offset: usize) {
        match self {
            Spans::Narrow(v) => match u32::try_from(offset) {
                Ok(o) => v.push(o),
                Err(_) => self.widen(offset),
            },
            Spans::Wide(v) => v.push(offset as u64),
        }
    }

    /// [`Spans::push`] of the first offset past 4 GiB: the index turns wide.
    #[cold]
    fn widen(&mut self, offset: usize) {
        if let Spans::Narrow(v) = self {
            let mut wide: Vec<u64> = v.iter().map(|&o| u64::from(o)).collect();
            wide.push(offset as u64);
            *self = Spans::Wide(wide);
        }
    }

    /// Records an element of a graph's list (length prefix at `offset`, the
    /// element ending at `element_end`, the graph's bytes at `graph_end`).
    /// The list's first element makes room for as many elements as the rest
    /// of the graph would hold were they all of its size (a list's elements
    /// are alike in exported graphs): the index then fills one allocation,
    /// where growing by doubling copied it again and again and faulted in
    /// about twice its pages. The room is capped at 1M elements (4 MiB; past
    /// that the index grows as before) and taken only if the allocator grants
    /// it; pages past what is filled are never touched. (The memory budget
    /// charges 16 bytes an element for the index: room for twice the
    /// elements there are stays within it, as for the list of a graph whose
    /// other lists follow it.)
    #[inline]
    pub fn push_element(&mut self, offset: usize, element_end: usize, graph_end: usize) {
        if self.is_empty() {
            self.make_room(offset, element_end, graph_end);
        }
        self.push(offset);
    }

    #[cold]
    fn make_room(&mut self, offset: usize, element_end: usize, graph_end: usize) {
        /// Elements of room at most (4 MiB of narrow entries).
        const MAX_ROOM: usize = 1 << 20;
        // The element's key (one byte) and length prefix lie from
        // `offset - 1`: at least 2 bytes an element.
        let size = element_end.saturating_sub(offset).saturating_add(1).max(2);
        let room = (graph_end.saturating_sub(offset) / size)
            .saturating_add(1)
            .min(MAX_ROOM);
        // Room is a saving, not a need: without it the index grows.
        let _ = match self {
            Spans::Narrow(v) => v.try_reserve_exact(room),
            Spans::Wide(v) => v.try_reserve_exact(room),
        };
    }

    pub fn len(&self) -> usize {
        match self {
            Spans::Narrow(v) => v.len(),
            Spans::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(start, length)` of element `i`'s bytes in `source`; `None` past
    /// the end or if the prefix does not hold a length inside `source`.
    #[inline]
    pub fn get(&self, i: usize, source: &[u8]) -> Option<(usize, usize)> {
        let mut pos = match self {
            Spans::Narrow(v) => usize::try_from(*v.get(i)?).ok()?,
            Spans::Wide(v) => usize::try_from(*v.get(i)?).ok()?,
        };
        let len = varint::read(source, &mut pos, source.len()).ok()?;
        let len = usize::try_from(len).ok()?;
        (len <= source.len() - pos).then_some((pos, len))
    }

    /// A copy of the entries from element `from` on.
    pub fn tail(&self, from: usize) -> Spans {
        match self {
            Spans::Narrow(v) => Spans::Narrow(v.get(from..).unwrap_or_default().to_vec()),
            Spans::Wide(v) => Spans::Wide(v.get(from..).unwrap_or_default().to_vec()),
        }
    }

    /// Heap bytes the index takes.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Spans::Narrow(v) => v.capacity() * 4,
            Spans::Wide(v) => v.capacity() * 8,
        }
    }

    /// Gives back the room left by growing.
    pub fn shrink(&mut self) {
        match self {
            Spans::Narrow(v) => v.shrink_to_fit(),
            Spans::Wide(v) => v.shrink_to_fit(),
        }
    }
}

/// The words of a bit set (bit `i % 64` of word `i / 64` for element `i`)
/// that `range` covers, each with the mask of its bits in the range: what
/// the scan sets and readers test in the plain-node bits
/// ([`super::scan::Deferred::plain_nodes`]).
pub(crate) fn range_masks(range: std::ops::Range<usize>) -> impl Iterator<Item = (usize, u64)> {
    let mut i = range.start;
    std::iter::from_fn(move || {
        if i >= range.end {
            return None;
        }
        let (word, from) = (i / 64, i % 64);
        let n = (64 - from).min(range.end - i);
        i += n;
        Some((word, (u64::MAX >> (64 - n)) << from))
    })
}

/// The main graph's four lists, indexed by [`List`].
pub type Lists = [Spans; 4];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lengths_back_and_widens_past_4_gib() {
        // Two elements: "abc" at 1 and "" at 5 (length prefixes at 0 and 4).
        let source = [3u8, b'a', b'b', b'c', 0];
        let mut spans = Spans::default();
        spans.push(0);
        spans.push(4);
        assert_eq!(spans.get(0, &source), Some((1, 3)));
        assert_eq!(spans.get(1, &source), Some((5, 0)));
        assert_eq!(spans.get(2, &source), None);
        assert_eq!(spans.heap_bytes() % 4, 0);
        // A prefix whose length runs past the source.
        let mut bad = Spans::default();
        bad.push(0);
        assert_eq!(bad.get(0, &[9u8, 1, 2]), None);
        // An offset over u32::MAX turns the index wide, keeping the others.
        spans.push(1 << 33);
        assert!(matches!(spans, Spans::Wide(_)));
        assert_eq!(spans.len(), 3);
        assert_eq!(spans.get(1, &source), Some((5, 0)));
        assert_eq!(spans.get(2, &source), None);
    }

    fn capacity(spans: &Spans) -> usize {
        match spans {
            Spans::Narrow(v) => v.capacity(),
            Spans::Wide(v) => v.capacity(),
        }
    }

    #[test]
    fn the_first_element_makes_room_for_the_rest_of_its_graph() {
        // A 10-byte element (its length prefix at 1, its body ending at 10,
        // the key before it): a graph ending at 1,001 holds ~100 of them.
        let mut spans = Spans::default();
        spans.push_element(1, 10, 1_001);
        assert_eq!(spans.len(), 1);
        assert!(
            (100..=101).contains(&capacity(&spans)),
            "{}",
            capacity(&spans)
        );
        // The next ones fill that room, without growing it.
        for k in 1..100 {
            spans.push_element(1 + 10 * k, 10 + 10 * k, 1_001);
        }
        assert_eq!(spans.len(), 100);
        assert!((100..=101).contains(&capacity(&spans)));
        // A graph claiming far more than it can hold: the room is capped.
        let mut huge = Spans::default();
        huge.push_element(1, 1, usize::MAX);
        assert_eq!(huge.len(), 1);
        assert!(capacity(&huge) <= 1 << 20, "{}", capacity(&huge));
        // Past 4 GiB the index still widens.
        huge.push_element(1 << 33, (1 << 33) + 4, usize::MAX);
        assert!(matches!(huge, Spans::Wide(_)));
        assert_eq!(huge.len(), 2);
    }
}
