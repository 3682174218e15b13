//! The walk shared by the fast scan ([`super::scan`]) and the diagnosis
//! ([`super::diagnose`]): one iterative pass over a message's wire format,
//! driven by the generated schema table, counting what the decoder will
//! allocate; in diagnose mode it also tracks the field path.

use super::repeats::Repeats;
use super::scan::{Deferred, ScanStats, LIST_DEPTH};
use crate::decode::source::{PageReleaser, RELEASE_WINDOW};
use crate::decode::spans::{List, Lists};
use crate::error::DecodeErrorKind;
use crate::proto::schema::{
    fields, ids, wire_type, FieldSchema, Growth, Kind, MessageSchema, Text, MAX_FIELDS, MESSAGES,
};

/// Largest field number protobuf allows.
const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// The state of an enclosing message, saved while a child is scanned.
struct Saved {
    msg: usize,
    end: usize,
    /// Where the message's container counts start in [`Stack::counts`].
    base: usize,
}

/// The walk's stack: the enclosing messages and, for each open message,
/// how many values each of its containers holds so far. Reused across
/// walks so that scanning many small messages allocates nothing.
#[derive(Default)]
pub(super) struct Stack<'a> {
    saved: Vec<Saved>,
    counts: Vec<u64>,
    /// Children of the root already walked (scans of main-graph list
    /// elements only; see [`Repeats`]).
    repeats: Option<Repeats<'a>>,
}

impl Stack<'_> {
    /// A stack whose walks account a child of the root that repeats an
    /// earlier one without walking it again: for walks whose roots are
    /// main-graph list elements (where a child's accounting depends only on
    /// its type and bytes), all under one depth limit and counted into the
    /// same [`ScanStats`] (a repeat then cannot reach deeper than what was
    /// already counted).
    pub(super) fn remembering() -> Self {
        Stack {
            repeats: Some(Repeats::new()),
            ..Stack::default()
        }
    }
}

/// How a walk's root is decoded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Root {
    /// Through prost: every container grows by pushes.
    Plain,
    /// A node of a model's main graph, decoded by the span decoder, which
    /// reserves its attribute list exactly.
    MainNode,
}

/// A model walk's deferral of its main graph's list elements: where they
/// go, and what scans those deferred so far. The walk calls `flush` as it
/// crosses a release window (`Flush::Window(offset)`: every element so far
/// lies before `offset`) and at its end (`Flush::End`); the flusher, not
/// the walk, releases the pages behind, once the elements on them are
/// scanned, so each page is faulted in once. False when an element is
/// unsound.
pub(super) struct Deferring<'d> {
    pub(super) deferred: &'d mut Deferred,
    pub(super) flush: &'d mut dyn FnMut(&Lists, Flush) -> bool,
}

/// How far a deferring walk goes between two calls of its flusher (which
/// may wait for more). The same for every flusher, so the walk's budget
/// checks fall at the same places (a refusal names the same offset)
/// whichever scans the elements.
pub(super) const FLUSH_WINDOW: usize = RELEASE_WINDOW / 4;

/// Where a deferring walk is when it calls its flusher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flush {
    /// Past a release window: the walk has read everything before this
    /// offset, and will not read it again.
    Window(usize),
    /// At the end of the buffer.
    End,
}

impl Flush {
    /// The offset the walk has passed, in a buffer of `len` bytes.
    pub(super) fn passed(self, len: usize) -> usize {
        match self {
            Flush::Window(at) => at,
            Flush::End => len,
        }
    }
}

/// Whether the container of `field` in a message of type `msg` is
/// reserved to its final length rather than grown: the main graph's four
/// long lists (decoded by spans, eagerly or on touch) and a main-graph
/// node's attributes.
#[inline]
fn reserved_exactly(root: usize, kind: Root, msg: usize, depth: usize, number: u32) -> bool {
    match (depth, msg) {
        (1, ids::GRAPH_PROTO) if root == ids::MODEL_PROTO => matches!(
            number,
            fields::graph_proto::NODE
                | fields::graph_proto::INITIALIZER
                | fields::graph_proto::VALUE_INFO
                | fields::graph_proto::SPARSE_INITIALIZER
        ),
        (0, ids::NODE_PROTO) => kind == Root::MainNode && number == fields::node_proto::ATTRIBUTE,
        _ => false,
    }
}

/// Adds `n` values of `field` to the counts of its message's containers
/// (`counts`, indexed like `schema.slots`) and returns the heap bytes the
/// containers grow by.
#[inline]
fn grow(
    schema: &MessageSchema,
    field: &FieldSchema,
    counts: &mut [u64],
    n: u64,
    exact: bool,
) -> u64 {
    let mut added = 0u64;
    for &s in field.slots {
        let s = usize::from(s);
        let (Some(slot), Some(count)) = (schema.slots.get(s), counts.get_mut(s)) else {
            continue;
        };
        let exact = exact && slot.growth == Growth::Vec;
        let before = slot.heap(*count, exact);
        *count = count.saturating_add(n);
        added = added.saturating_add(slot.heap(*count, exact).saturating_sub(before));
    }
    added
}

/// The heap bytes of a message's containers holding `counts` values
/// (indexed like `schema.slots`): what [`grow`] adds up for them, one
/// value at a time, from empty (each container's size only grows with its
/// count, so the steps add up to the size at the final count). `exact`:
/// the containers reserved to their final length.
#[inline]
fn settle(schema: &MessageSchema, counts: &[u64], exact: impl Fn(usize) -> bool) -> u64 {
    let mut heap = 0u64;
    for (s, (slot, &count)) in schema.slots.iter().zip(counts).enumerate() {
        if count > 0 {
            let exact = exact(s) && slot.growth == Growth::Vec;
            heap = heap.saturating_add(slot.heap(count, exact));
        }
    }
    heap
}

/// Counts one occurrence (`n` values) of `field` in `counts`.
#[inline(always)]
fn count(field: &FieldSchema, counts: &mut [u64], n: u64) {
    for &s in field.slots {
        if let Some(c) = counts.get_mut(usize::from(s)) {
            *c = c.saturating_add(n);
        }
    }
}

/// Elements of the main graph's lists indexed by one [`defer_run`] at
/// most, so the projection is checked against the budget as it grows.
const DEFER_RUN: u64 = 4096;

/// The keys of the main graph's four list fields (each one byte).
const LIST_KEYS: [u8; 4] = {
    let mut keys = [0u8; 4];
    let mut i = 0;
    while i < 4 {
        let key = crate::proto::schema::key(List::ALL[i].field_and_message().0, wire_type::LEN);
        assert!(key < 0x80, "a list field's key is one byte");
        keys[i] = key as u8;
        i += 1;
    }
    keys
};

/// Indexes consecutive elements of the main graph's lists starting at
/// `*pos` (inside the graph, which ends at `end`): each one's length prefix
/// offset goes to `deferred`. Stops before anything else (another field, a
/// fault, the end; the walk then takes it), after [`DEFER_RUN`] elements,
/// or before an element starting at or past `window` (returned: the walk
/// releases pages there first). Returns how many elements of each list it
/// indexed and where the last one's key lies.
#[inline]
fn defer_run(
    buf: &[u8],
    pos: &mut usize,
    end: usize,
    deferred: &mut Deferred,
    window: usize,
) -> ([u64; 4], usize, Option<usize>) {
    let mut found = [0u64; 4];
    let mut last = *pos;
    let mut total = 0u64;
    while *pos < end && total < DEFER_RUN {
        let Some(&key) = buf.get(*pos) else {
            break;
        };
        let Some(list) = LIST_KEYS.iter().position(|&k| k == key) else {
            break;
        };
        let len_at = *pos + 1;
        let mut at = len_at;
        let Ok(len) = super::varint::read(buf, &mut at, end) else {
            break;
        };
        match usize::try_from(len) {
            Ok(_) if at >= window => return (found, last, Some(at)),
            Ok(len) if len <= end - at => {
                deferred.lists[list].push_element(len_at, at + len, end);
                last = *pos;
                *pos = at + len;
                found[list] += 1;
                total += 1;
            }
            _ => break,
        }
    }
    (found, last, None)
}

/// Where a nested message sits in its parent (diagnose mode only).
pub(super) struct PathStep {
    pub(super) field_index: usize,
    pub(super) elem_index: u32,
    counts: [u32; MAX_FIELDS],
}

/// Counts a node made only of string fields (inputs, outputs, name, op_type,
/// domain, doc_string, overload: the common case in large graphs) exactly as
/// [`walk`] would, without its generic per-field machinery. Returns `false`,
/// leaving `stats` untouched, for anything else (attributes, metadata,
/// unknown fields, any framing fault): [`walk`] then scans the node, and
/// reports the fault if there is one.
#[inline]
pub(super) fn scan_plain_node(node: &[u8], stats: &mut ScanStats) -> bool {
    scan_node::<false>(node, stats)
}

/// [`scan_plain_node`] for a node of the main graph that may also hold
/// attributes without message fields (a `perm`, an `alpha`: most
/// attributes of exported graphs), each counted by [`scan_flat`] as the
/// walk counts a child of its root (the node's attribute list reserved
/// exactly, as the span decoder reserves it).
pub(super) fn scan_main_node(node: &[u8], stats: &mut ScanStats) -> bool {
    scan_node::<true>(node, stats)
}

#[inline(always)]
fn scan_node<const ATTRIBUTES: bool>(node: &[u8], stats: &mut ScanStats) -> bool {
    use fields::node_proto as F;
    let schema = &MESSAGES[ids::NODE_PROTO];
    // The containers each field fills, counted in locals (one per slot of
    // the schema: inputs, outputs, the extras box, attributes); the key
    // byte alone picks the field (every field here has a one-byte key).
    let (mut inputs, mut outputs, mut extras, mut attrs) = (0u64, 0u64, 0u64, 0u64);
    let mut pos = 0usize;
    let mut heap = 0u64;
    let end = node.len();
    while pos < end {
        let key = u64::from(node[pos]);
        pos += 1;
        let number = key >> 3;
        // A key of more than one byte, or any wire type but LEN: no field
        // this shortcut takes.
        if key & 0x80 != 0 || key & 7 != wire_type::LEN {
            return false;
        }
        let len = match node.get(pos) {
            Some(&b) if b < 0x80 => {
                pos += 1;
                usize::from(b)
            }
            _ => match read_varint(node, &mut pos, end).map(usize::try_from) {
                Ok(Ok(len)) => len,
                _ => return false,
            },
        };
        if len > end - pos {
            return false;
        }
        let body = &node[pos..pos + len];
        pos += len;
        let text = match number as u32 {
            F::INPUT => {
                inputs += 1;
                true
            }
            F::OUTPUT => {
                outputs += 1;
                true
            }
            F::NAME | F::OP_TYPE | F::DOMAIN => true,
            F::DOC_STRING | F::OVERLOAD => {
                extras += 1;
                true
            }
            F::ATTRIBUTE if ATTRIBUTES => false,
            _ => return false,
        };
        if text {
            if !utf8_ok(body) {
                return false;
            }
            // Every string field of a node is a compact string.
            heap = heap.saturating_add(Text::Compact.heap(len as u64));
            continue;
        }
        let inner = attribute_heap(body).or_else(|| flat_heap(ids::ATTRIBUTE_PROTO, body));
        let Some(inner) = inner else {
            return false;
        };
        attrs += 1;
        heap = heap.saturating_add(inner);
    }
    let counts: [u64; NODE_SLOTS] = [inputs, outputs, extras, attrs, 0, 0];
    // The attribute list is reserved exactly (a main-graph node).
    heap = heap.saturating_add(settle(schema, &counts, |s| {
        ATTRIBUTES && s == NODE_ATTRIBUTE_SLOT
    }));
    stats.messages[ids::NODE_PROTO] += 1;
    if attrs > 0 {
        // Children of the root: depth 1.
        stats.messages[ids::ATTRIBUTE_PROTO] += attrs;
        stats.max_depth = stats.max_depth.max(1);
    }
    stats.heap = stats.heap.saturating_add(heap);
    true
}

/// Containers a message scanned by [`scan_flat`] may have.
const FLAT_SLOTS: usize = 16;

/// Counts a message of type `msg` that holds no message field (a plain
/// list element: most initializers are a name, a type, dims and a packed
/// run of values) exactly as [`walk`] would, as a root, without its
/// stack, paths and budget. Returns `false`, leaving `stats` untouched, for
/// anything else (a message field, an unknown field, any framing fault):
/// [`walk`] then scans the element, and reports the fault if there is one.
pub(super) fn scan_flat(msg: usize, bytes: &[u8], stats: &mut ScanStats) -> bool {
    let heap = match msg {
        ids::TENSOR_PROTO => tensor_heap(bytes).or_else(|| flat_heap(msg, bytes)),
        _ => flat_heap(msg, bytes),
    };
    let Some(heap) = heap else {
        return false;
    };
    stats.messages[msg] += 1;
    stats.heap = stats.heap.saturating_add(heap);
    true
}

/// What [`scan_flat`] adds to the projection for one message, or `None`.
pub(super) fn flat_heap(msg: usize, bytes: &[u8]) -> Option<u64> {
    let schema = MESSAGES.get(msg)?;
    let mut counts = [0u64; FLAT_SLOTS];
    let counts = counts.get_mut(..schema.slots.len())?;
    let end = bytes.len();
    let mut pos = 0usize;
    let mut heap = 0u64;
    // The bytes of a length-delimited value at `pos`, and where it ends.
    let span = |pos: &mut usize| -> Option<(usize, usize)> {
        let len = read_varint(bytes, pos, end).ok()?;
        let len = usize::try_from(len).ok().filter(|&l| l <= end - *pos)?;
        let start = *pos;
        *pos += len;
        Some((start, start + len))
    };
    while pos < end {
        let Ok(key) = read_varint(bytes, &mut pos, end) else {
            return None;
        };
        let wire = key & 7;
        let (_, field) = schema.field(key >> 3)?;
        let packed = wire == wire_type::LEN && field.repeated && field.kind.is_scalar_numeric();
        if !packed {
            count(field, counts, 1);
        }
        let values = match field.kind {
            Kind::Message(_) => return None,
            Kind::String | Kind::Bytes => {
                if wire != wire_type::LEN {
                    return None;
                }
                let (start, stop) = span(&mut pos)?;
                if field.kind == Kind::String {
                    if !utf8_ok(&bytes[start..stop]) {
                        return None;
                    }
                    heap = heap.saturating_add(field.text.heap((stop - start) as u64));
                }
                continue;
            }
            Kind::Int32 | Kind::Int64 | Kind::Uint64 | Kind::Enum if packed => {
                let (mut at, stop) = span(&mut pos)?;
                let mut values = 0u64;
                while at < stop {
                    if read_varint(bytes, &mut at, stop).is_err() {
                        return None;
                    }
                    values += 1;
                }
                values
            }
            Kind::Int32 | Kind::Int64 | Kind::Uint64 | Kind::Enum => {
                if wire != wire_type::VARINT || read_varint(bytes, &mut pos, end).is_err() {
                    return None;
                }
                continue;
            }
            Kind::Float | Kind::Double => {
                let (width, fixed) = if field.kind == Kind::Float {
                    (4, wire_type::FIXED32)
                } else {
                    (8, wire_type::FIXED64)
                };
                if !packed {
                    if wire != fixed || end - pos < width {
                        return None;
                    }
                    pos += width;
                    continue;
                }
                let (start, stop) = span(&mut pos)?;
                if (stop - start) % width != 0 {
                    return None;
                }
                ((stop - start) / width) as u64
            }
        };
        count(field, counts, values);
    }
    Some(heap.saturating_add(settle(schema, counts, |_| false)))
}

/// A cursor over a flat message's fields for the keyed shortcuts
/// ([`tensor_heap`], [`attribute_heap`]): each read is `None` on a framing
/// fault (the shortcut then declines).
struct Fields<'b> {
    bytes: &'b [u8],
    pos: usize,
}

impl Fields<'_> {
    #[inline(always)]
    fn more(&self) -> bool {
        self.pos < self.bytes.len()
    }

    /// The next byte (a key's first).
    #[inline(always)]
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// Takes the byte `b` if it comes next (a two-byte key's second).
    #[inline(always)]
    fn byte_is(&mut self, b: u8) -> bool {
        let next = self.bytes.get(self.pos) == Some(&b);
        self.pos += usize::from(next);
        next
    }

    /// A varint ending by `end` (one byte read inline).
    #[inline(always)]
    fn varint_to(&mut self, end: usize) -> Option<u64> {
        match self.bytes.get(self.pos) {
            Some(&b) if b < 0x80 && self.pos < end => {
                self.pos += 1;
                Some(u64::from(b))
            }
            _ => read_varint(self.bytes, &mut self.pos, end).ok(),
        }
    }

    /// A varint.
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        self.varint_to(self.bytes.len())
    }

    /// `width` bytes of a fixed-width value.
    #[inline(always)]
    fn fixed(&mut self, width: usize) -> Option<()> {
        (self.bytes.len() - self.pos >= width).then(|| self.pos += width)
    }

    /// A length-delimited value's bytes.
    #[inline(always)]
    fn span(&mut self) -> Option<&[u8]> {
        let len = usize::try_from(self.varint()?).ok()?;
        let start = self.pos;
        let value = self.bytes.get(start..start.checked_add(len)?)?;
        self.pos = start + len;
        Some(value)
    }

    /// A length-delimited value that is text: its length, if UTF-8.
    #[inline(always)]
    fn text(&mut self) -> Option<u64> {
        let value = self.span()?;
        utf8_ok(value).then_some(value.len() as u64)
    }

    /// How many varints a packed run holds.
    #[inline(always)]
    fn packed_varints(&mut self) -> Option<u64> {
        let len = usize::try_from(self.varint()?).ok()?;
        let stop = self
            .pos
            .checked_add(len)
            .filter(|&s| s <= self.bytes.len())?;
        let mut n = 0u64;
        while self.pos < stop {
            self.varint_to(stop)?;
            n += 1;
        }
        Some(n)
    }

    /// How many values of `width` bytes a packed run holds.
    #[inline(always)]
    fn packed_fixed(&mut self, width: usize) -> Option<u64> {
        let len = self.span()?.len();
        (len % width == 0).then_some((len / width) as u64)
    }
}

/// What a message's containers take, given how many values each holds
/// (grown by pushes, as the walk projects them).
fn containers_heap(msg: usize, counts: &[u64]) -> u64 {
    MESSAGES[msg]
        .slots
        .iter()
        .zip(counts)
        .fold(0, |heap, (slot, &n)| {
            heap.saturating_add(slot.heap(n, false))
        })
}

/// [`flat_heap`] for a tensor whose every field has a one-byte key and the
/// wire type it is written with (a typed list packed or not): the key byte
/// picks the field, its containers are counted in locals. `None` for
/// anything else (a message field, an unknown field, a wrong wire type, a
/// framing fault): [`flat_heap`] then decides.
pub(super) fn tensor_heap(bytes: &[u8]) -> Option<u64> {
    // Values in each container (the schema's slots, in order: dims,
    // float_data, int32_data, string_data, int64_data, external_data,
    // double_data, uint64_data, metadata_props).
    let mut counts = [0u64; TENSOR_SLOTS];
    let mut heap = 0u64;
    let mut f = Fields { bytes, pos: 0 };
    while f.more() {
        let key = f.byte()?;
        let (slot, n) = match key {
            // dims, int32_data, int64_data, uint64_data: one varint
            0x08 | 0x28 | 0x38 | 0x58 => {
                f.varint()?;
                (TENSOR_VARINT_SLOTS[usize::from(key >> 3)], 1)
            }
            // ... or a packed run of them
            0x0A | 0x2A | 0x3A | 0x5A => (
                TENSOR_VARINT_SLOTS[usize::from(key >> 3)],
                f.packed_varints()?,
            ),
            // data_type, data_location: a varint, no container
            0x10 | 0x70 => {
                f.varint()?;
                continue;
            }
            // float_data, double_data: one value, or a packed run
            0x25 => {
                f.fixed(4)?;
                (1, 1)
            }
            0x22 => (1, f.packed_fixed(4)?),
            0x51 => {
                f.fixed(8)?;
                (6, 1)
            }
            0x52 => (6, f.packed_fixed(8)?),
            // string_data: one bytes value
            0x32 => {
                f.span()?;
                (3, 1)
            }
            // raw_data: bytes, sliced from the source
            0x4A => {
                f.span()?;
                continue;
            }
            // name, doc_string: text
            0x42 | 0x62 => {
                heap = heap.saturating_add(Text::String.heap(f.text()?));
                continue;
            }
            _ => return None,
        };
        let c = counts.get_mut(slot)?;
        *c = c.saturating_add(n);
    }
    Some(heap.saturating_add(containers_heap(ids::TENSOR_PROTO, &counts)))
}

/// [`flat_heap`] for an attribute without message fields whose fields have
/// their written keys and wire types (name, f, i, s, floats, ints,
/// strings, doc_string, type, ref_attr_name: `perm`, `alpha`, `axes` of
/// exported graphs), as [`tensor_heap`] for a tensor; `None` for anything
/// else ([`flat_heap`] then decides).
pub(super) fn attribute_heap(bytes: &[u8]) -> Option<u64> {
    // The schema's slots: the extras box (doc_string, ref_attr_name,
    // strings), the boxed t, g, sparse_tensor and tp, then the lists floats,
    // ints, strings, tensors, graphs, sparse_tensors, type_protos.
    let (mut extras, mut floats, mut ints, mut strings) = (0u64, 0u64, 0u64, 0u64);
    let mut heap = 0u64;
    let mut f = Fields { bytes, pos: 0 };
    while f.more() {
        match f.byte()? {
            // name: text
            0x0A => heap = heap.saturating_add(Text::Compact.heap(f.text()?)),
            // f, i, s
            0x15 => f.fixed(4)?,
            0x18 => {
                f.varint()?;
            }
            0x22 => {
                f.span()?;
            }
            // floats, ints: one value or a packed run
            0x3D => {
                f.fixed(4)?;
                floats += 1;
            }
            0x3A => floats += f.packed_fixed(4)?,
            0x40 => {
                f.varint()?;
                ints += 1;
            }
            0x42 => ints += f.packed_varints()?,
            // strings: bytes, in the list and the extras
            0x4A => {
                f.span()?;
                strings += 1;
                extras += 1;
            }
            // doc_string: text in the extras
            0x6A => {
                heap = heap.saturating_add(Text::Compact.heap(f.text()?));
                extras += 1;
            }
            // type (field 20, a varint): a two-byte key
            0xA0 if f.byte_is(0x01) => {
                f.varint()?;
            }
            // ref_attr_name (field 21, text in the extras): a two-byte key
            0xAA if f.byte_is(0x01) => {
                heap = heap.saturating_add(Text::Compact.heap(f.text()?));
                extras += 1;
            }
            _ => return None,
        }
    }
    let counts: [u64; ATTRIBUTE_SLOTS] = [extras, 0, 0, 0, 0, floats, ints, strings, 0, 0, 0, 0];
    Some(heap.saturating_add(containers_heap(ids::ATTRIBUTE_PROTO, &counts)))
}

/// Containers of an `AttributeProto` (checked against the schema in tests).
pub(super) const ATTRIBUTE_SLOTS: usize = 12;

/// Containers of a `TensorProto` (checked against the schema in tests).
pub(super) const TENSOR_SLOTS: usize = 9;

/// The container of each varint list of `TensorProto`, by field number
/// (dims 1, int32_data 5, int64_data 7, uint64_data 11; checked in tests).
pub(super) const TENSOR_VARINT_SLOTS: [usize; 12] = [0, 0, 0, 0, 0, 2, 0, 4, 0, 0, 0, 7];

/// Containers of a `NodeProto` (checked against the schema in tests):
/// inputs, outputs, the extras box (doc string, overload, metadata, device
/// configurations), attributes, metadata, device configurations.
pub(super) const NODE_SLOTS: usize = 6;

/// The slot of a `NodeProto`'s attribute list (checked in tests).
pub(super) const NODE_ATTRIBUTE_SLOT: usize = 3;

/// True when `text` is valid UTF-8 (names are nearly always ASCII, which a
/// plain test checks much faster than the general validation).
#[inline]
pub(crate) fn utf8_ok(text: &[u8]) -> bool {
    text.is_ascii() || std::str::from_utf8(text).is_ok()
}

/// A fault in diagnose mode: offset, kind, the field being read (index in
/// the innermost message, element index) and the message types on the path.
pub(super) type DiagFault = (usize, DecodeErrorKind, Option<(usize, u32)>, Vec<usize>);

/// The scan's view of [`varint::read`]: `Err(None)` when truncated,
/// `Err(Some(offset))` when it overflows.
#[inline(always)]
fn read_varint(buf: &[u8], pos: &mut usize, end: usize) -> Result<u64, Option<usize>> {
    super::varint::read(buf, pos, end).map_err(|e| match e {
        super::varint::VarintError::Truncated => None,
        super::varint::VarintError::Overflow(at) => Some(at),
    })
}

fn wire_expectation(field: &FieldSchema, expected: u8) -> &'static str {
    let packable = field.repeated && field.kind.is_scalar_numeric();
    match (expected, packable) {
        (0, false) => "a varint",
        (0, true) => "a varint or a packed list",
        (1, false) => "a 64-bit value",
        (1, true) => "a 64-bit value or a packed list",
        (5, false) => "a 32-bit value",
        (5, true) => "a 32-bit value or a packed list",
        _ => "a length-delimited value",
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn walk<'a, const DIAG: bool>(
    buf: &'a [u8],
    (root, root_kind): (usize, Root),
    max_depth: usize,
    path: &mut Vec<PathStep>,
    pages: Option<&PageReleaser>,
    mut defer: Option<Deferring<'_>>,
    budget: Option<u64>,
    stats: &mut ScanStats,
    stack: &mut Stack<'a>,
) -> Result<(), DiagFault> {
    // The projection so far, checked against the budget as the walk goes,
    // so a memory bomb is refused before the walk itself allocates much
    // (the deferred node list).
    let mut heap: u64 = 0;
    let mut released = 0usize;
    let window = if defer.is_some() {
        FLUSH_WINDOW
    } else {
        RELEASE_WINDOW
    };
    let mut next_release = window;
    stats.messages[root] += 1;
    let Stack {
        saved,
        counts,
        repeats,
    } = stack;
    // Never in diagnose mode: a diagnosis tracks every field's path.
    let mut repeats = repeats.as_mut().filter(|_| !DIAG);
    if let Some(repeats) = repeats.as_deref_mut() {
        repeats.begin(max_depth);
    }
    saved.clear();
    counts.clear();
    counts.resize(MESSAGES[root].slots.len(), 0);
    let mut base = 0usize;
    let mut msg = root;
    let mut schema: &'static MessageSchema = &MESSAGES[root];
    let mut end = buf.len();
    let mut pos = 0usize;
    let mut root_counts = [0u32; MAX_FIELDS];
    // The field being read, for error paths (diagnose mode).
    let mut current: Option<(usize, u32)> = None;

    macro_rules! fail {
        ($at:expr, $kind:expr) => {{
            let stack: Vec<usize> = saved
                .iter()
                .skip(1)
                .map(|s| s.msg)
                .chain(std::iter::once(msg))
                .collect();
            return Err((
                $at,
                $kind,
                current,
                if saved.is_empty() { Vec::new() } else { stack },
            ));
        }};
    }
    macro_rules! truncated {
        ($what:expr, $at:expr) => {
            fail!(
                $at,
                DecodeErrorKind::Truncated {
                    what: $what,
                    end: end as u64,
                    in_buffer: saved.is_empty(),
                }
            )
        };
    }
    macro_rules! varint {
        ($what:expr) => {{
            let at = pos;
            match read_varint(buf, &mut pos, end) {
                Ok(v) => v,
                Err(None) => truncated!($what, at),
                Err(Some(_)) => fail!(at, DecodeErrorKind::VarintOverflow),
            }
        }};
    }
    macro_rules! length {
        () => {{
            let at = pos;
            let len = varint!("length");
            let room = (end - pos) as u64;
            if len > room {
                fail!(
                    at,
                    DecodeErrorKind::LengthPastEnd {
                        length: len,
                        end: end as u64,
                        in_buffer: saved.is_empty(),
                    }
                );
            }
            // `len <= room`: fits in usize and stays inside the message.
            let start = pos;
            (start, start + len as usize)
        }};
    }
    macro_rules! skip_fixed {
        ($width:expr, $what:expr) => {{
            if end - pos < $width {
                truncated!($what, pos);
            }
            pos += $width;
        }};
    }

    // Adds `$bytes` to the projection; refuses it past the budget.
    macro_rules! charge {
        ($bytes:expr, $at:expr) => {{
            heap = heap.saturating_add($bytes);
            if let Some(budget) = budget {
                if heap > budget {
                    fail!(
                        $at,
                        DecodeErrorKind::MemoryBudget {
                            projected: heap,
                            budget,
                        }
                    );
                }
            }
        }};
    }
    // Adds `$n` values of `field` to the open message's containers.
    macro_rules! grow {
        ($field:expr, $n:expr, $at:expr) => {{
            if !$field.slots.is_empty() {
                let exact = reserved_exactly(root, root_kind, msg, saved.len(), $field.number);
                let open = counts.get_mut(base..).unwrap_or_default();
                charge!(grow(schema, $field, open, $n, exact), $at);
            }
        }};
    }

    // Has the list elements deferred so far scanned and the pages behind
    // `$upto` released (a model walk); else releases them.
    macro_rules! flush {
        ($upto:expr, $at:expr) => {{
            let upto: Flush = $upto;
            match defer.as_mut() {
                Some(deferring) => {
                    if !(deferring.flush)(&deferring.deferred.lists, upto) {
                        fail!(
                            $at,
                            DecodeErrorKind::Internal {
                                detail: "a deferred list element is unsound".to_string(),
                            }
                        );
                    }
                }
                None => {
                    if let Some(pages) = pages {
                        pages.release(released, upto.passed(buf.len()));
                    }
                }
            }
        }};
    }
    // At a message starting at `$start`, a window or more past the last
    // release: scans what was deferred, releases the pages behind.
    macro_rules! release_to {
        ($start:expr, $at:expr) => {{
            let start = $start;
            if start >= next_release {
                flush!(Flush::Window(start), $at);
                released = start;
                next_release = start.saturating_add(window);
            }
        }};
    }

    loop {
        if pos >= end {
            match saved.pop() {
                None => {
                    flush!(Flush::End, pos);
                    stats.heap = stats.heap.saturating_add(heap);
                    return Ok(());
                }
                Some(parent) => {
                    counts.truncate(base);
                    msg = parent.msg;
                    end = parent.end;
                    base = parent.base;
                    schema = &MESSAGES[msg];
                    if DIAG {
                        path.pop();
                    }
                    if saved.is_empty() {
                        if let Some(repeats) = repeats.as_deref_mut() {
                            repeats.close(heap, stats);
                        }
                    }
                    continue;
                }
            }
        }
        if !DIAG && saved.len() == 1 && msg == ids::GRAPH_PROTO {
            if let Some(deferring) = defer.as_mut() {
                // A run of list elements: indexed by a short loop, counted
                // in bulk (what the generic steps below do one at a time).
                let (found, at, window) =
                    defer_run(buf, &mut pos, end, deferring.deferred, next_release);
                for (list, &n) in List::ALL.iter().zip(&found) {
                    if n == 0 {
                        continue;
                    }
                    let (number, id) = list.field_and_message();
                    if let Some((_, field)) = schema.field(u64::from(number)) {
                        grow!(field, n, at);
                    }
                    stats.messages[id] += n;
                }
                if let Some(start) = window {
                    release_to!(start, pos);
                    continue;
                }
                if pos >= end {
                    continue;
                }
            }
        }
        if DIAG {
            current = None;
        }
        let key_at = pos;
        let key = varint!("field tag");
        let number = key >> 3;
        let wire_type = (key & 7) as u8;
        if number == 0 || number > MAX_FIELD_NUMBER {
            fail!(key_at, DecodeErrorKind::InvalidFieldNumber { number });
        }
        let Some((index, field)) = schema.field(number) else {
            // Unknown field: skip it (forward compatibility).
            match wire_type {
                0 => {
                    varint!("varint");
                }
                1 => skip_fixed!(8, "64-bit value"),
                2 => {
                    let (_, stop) = length!();
                    pos = stop;
                }
                5 => skip_fixed!(4, "32-bit value"),
                3 => {
                    // A (deprecated) group: skip to its matching end tag.
                    let mut open: Vec<u64> = vec![number];
                    while let Some(&innermost) = open.last() {
                        if saved.len() + open.len() > max_depth {
                            fail!(key_at, DecodeErrorKind::TooDeep { limit: max_depth });
                        }
                        if pos >= end {
                            fail!(
                                key_at,
                                DecodeErrorKind::BadGroup {
                                    detail: "group is not closed before the end of its message",
                                }
                            );
                        }
                        let tag_at = pos;
                        let key = varint!("field tag");
                        let inner = key >> 3;
                        if inner == 0 || inner > MAX_FIELD_NUMBER {
                            fail!(
                                tag_at,
                                DecodeErrorKind::InvalidFieldNumber { number: inner }
                            );
                        }
                        match (key & 7) as u8 {
                            0 => {
                                varint!("varint");
                            }
                            1 => skip_fixed!(8, "64-bit value"),
                            2 => {
                                let (_, stop) = length!();
                                pos = stop;
                            }
                            5 => skip_fixed!(4, "32-bit value"),
                            3 => open.push(inner),
                            4 => {
                                if inner != innermost {
                                    fail!(
                                        tag_at,
                                        DecodeErrorKind::BadGroup {
                                            detail: "end-group tag does not match its start-group",
                                        }
                                    );
                                }
                                open.pop();
                            }
                            other => fail!(
                                tag_at,
                                DecodeErrorKind::UnknownWireType { wire_type: other }
                            ),
                        }
                    }
                }
                4 => fail!(
                    key_at,
                    DecodeErrorKind::BadGroup {
                        detail: "end-group tag without a start-group",
                    }
                ),
                other => fail!(
                    key_at,
                    DecodeErrorKind::UnknownWireType { wire_type: other }
                ),
            }
            continue;
        };

        if saved.len() == 1 && msg == ids::GRAPH_PROTO && List::of_graph_field(number).is_none() {
            if let Some(deferring) = defer.as_mut() {
                deferring.deferred.graph_fields.push(key_at);
            }
        }
        let mut elem = 0u32;
        if DIAG {
            let counts = match path.last_mut() {
                Some(step) => &mut step.counts,
                None => &mut root_counts,
            };
            elem = counts[index];
            counts[index] = elem.saturating_add(1);
            current = Some((index, elem));
        }
        let packed = wire_type == 2 && field.repeated && field.kind.is_scalar_numeric();
        if !packed {
            grow!(field, 1, key_at);
        }
        match field.kind {
            Kind::Message(id) => {
                if wire_type != 2 {
                    fail!(
                        key_at,
                        DecodeErrorKind::WrongWireType {
                            wire_type,
                            expected: wire_expectation(field, 2),
                        }
                    );
                }
                let len_at = pos;
                let (start, stop) = length!();
                let depth = saved.len() + 1;
                if depth > max_depth {
                    fail!(key_at, DecodeErrorKind::TooDeep { limit: max_depth });
                }
                stats.messages[id] += 1;
                // Release mapped pages behind us at message boundaries (where
                // a walk over weights jumps from one tensor to the next).
                release_to!(start, key_at);
                if depth == LIST_DEPTH && msg == ids::GRAPH_PROTO {
                    if let Some(deferring) = defer.as_mut() {
                        if let Some(list) = List::of_graph_field(number) {
                            // Scanned later (in parallel) as a root of its own.
                            deferring.deferred.lists[list as usize].push_element(len_at, stop, end);
                            pos = stop;
                            continue;
                        }
                    }
                }
                if saved.is_empty() {
                    if let (Some(repeats), Some(bytes)) =
                        (repeats.as_deref_mut(), buf.get(start..stop))
                    {
                        if let Some(known) = repeats.enter(id, bytes, heap, stats) {
                            known.count(stats);
                            charge!(known.heap, key_at);
                            pos = stop;
                            continue;
                        }
                    }
                }
                stats.max_depth = stats.max_depth.max(depth);
                saved.push(Saved { msg, end, base });
                base = counts.len();
                counts.resize(base + MESSAGES[id].slots.len(), 0);
                if DIAG {
                    path.push(PathStep {
                        field_index: index,
                        elem_index: elem,
                        counts: [0; MAX_FIELDS],
                    });
                }
                msg = id;
                schema = &MESSAGES[id];
                end = stop;
                pos = start;
            }
            Kind::String | Kind::Bytes => {
                if wire_type != 2 {
                    fail!(
                        key_at,
                        DecodeErrorKind::WrongWireType {
                            wire_type,
                            expected: wire_expectation(field, 2),
                        }
                    );
                }
                let (start, stop) = length!();
                if field.kind == Kind::String {
                    if !utf8_ok(&buf[start..stop]) {
                        if let Err(e) = std::str::from_utf8(&buf[start..stop]) {
                            fail!(
                                start,
                                DecodeErrorKind::InvalidUtf8 {
                                    valid_up_to: e.valid_up_to(),
                                }
                            );
                        }
                    }
                    charge!(field.text.heap((stop - start) as u64), start);
                }
                pos = stop;
            }
            Kind::Int32 | Kind::Int64 | Kind::Uint64 | Kind::Enum => {
                if packed {
                    let (start, stop) = length!();
                    let mut at = start;
                    let mut values = 0u64;
                    while at < stop {
                        let begin = at;
                        match read_varint(buf, &mut at, stop) {
                            Ok(_) => values += 1,
                            Err(None) => fail!(
                                begin,
                                DecodeErrorKind::Truncated {
                                    what: "packed varint",
                                    end: stop as u64,
                                    in_buffer: false,
                                }
                            ),
                            Err(Some(_)) => fail!(begin, DecodeErrorKind::VarintOverflow),
                        }
                    }
                    grow!(field, values, start);
                    pos = stop;
                } else {
                    if wire_type != 0 {
                        fail!(
                            key_at,
                            DecodeErrorKind::WrongWireType {
                                wire_type,
                                expected: wire_expectation(field, 0),
                            }
                        );
                    }
                    varint!("varint");
                }
            }
            Kind::Float | Kind::Double => {
                let (width, wire) = if field.kind == Kind::Float {
                    (4, 5)
                } else {
                    (8, 1)
                };
                if packed {
                    let at = pos;
                    let (start, stop) = length!();
                    let len = stop - start;
                    if len % width != 0 {
                        fail!(
                            at,
                            DecodeErrorKind::PackedLength {
                                length: len as u64,
                                width,
                            }
                        );
                    }
                    grow!(field, (len / width) as u64, start);
                    pos = stop;
                } else {
                    if wire_type != wire {
                        fail!(
                            key_at,
                            DecodeErrorKind::WrongWireType {
                                wire_type,
                                expected: wire_expectation(field, wire),
                            }
                        );
                    }
                    skip_fixed!(
                        width,
                        if width == 4 {
                            "32-bit value"
                        } else {
                            "64-bit value"
                        }
                    );
                }
            }
        }
    }
}

pub(super) fn push_segment(
    path: &mut String,
    parent: &MessageSchema,
    field_index: usize,
    elem: u32,
) {
    use std::fmt::Write as _;
    let Some(field) = parent.fields.get(field_index) else {
        return;
    };
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(field.name);
    if field.repeated && !field.kind.is_scalar_numeric() {
        let _ = write!(path, "[{elem}]");
    }
}
