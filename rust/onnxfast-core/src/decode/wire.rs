//! A non-allocating walk over the protobuf wire format, driven by the schema
//! table of `onnx.proto`.
//!
//! The scanner runs before prost decodes anything, in one of two modes:
//! - **fast** ([`scan`]): proves the framing is sound (tags, varints,
//!   lengths, wire types, nesting depth, UTF-8 of string fields, so that a
//!   message decoded later, on touch, cannot fail) and projects the heap the
//!   decoded tree will take (each container's capacity as the decoder grows
//!   it, each string's allocation), so a caller can refuse a memory bomb
//!   before allocating anything;
//! - **diagnose** ([`diagnose`]): the same walk, also validating UTF-8 and
//!   tracking the field path, run only once something has failed, to report
//!   the byte offset and path (`graph.node[41].attribute[2].t.raw_data`) of
//!   the first fault.
//!
//! Both are iterative (no recursion on input depth) and never read the bytes
//! of `bytes` fields (tensor `raw_data`): scanning a memory-mapped
//! multi-gigabyte model touches only its small fields.

use crate::decode::source::{Behind, PageReleaser, RELEASE_WINDOW};
use crate::decode::spans::{List, Lists};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::proto::schema::{
    fields, ids, wire_type, FieldSchema, Growth, Kind, MessageSchema, MAX_FIELDS, MESSAGES,
};

/// Protobuf's own default recursion limit, also onnx's (C++ protobuf).
pub const DEFAULT_MAX_DEPTH: usize = 100;

/// Largest field number protobuf allows.
const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// What the scan counted.
#[derive(Debug, Clone)]
pub struct ScanStats {
    /// Messages of each type (indexed like [`MESSAGES`]), the root included.
    pub messages: Vec<u64>,
    /// Heap bytes of the decoded tree (the root struct itself aside): every
    /// container at the capacity the decoder grows it to (a `Vec` filled
    /// by pushes doubles from 4; the main graph's lists and a main-graph
    /// node's attributes are reserved exactly; `SmallVec`s spill past their
    /// inline length; boxes once), and every string's allocation. Bytes
    /// fields are slices of the source and take none.
    pub heap: u64,
    /// Deepest nesting seen (the root is depth 0).
    pub max_depth: usize,
}

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
struct Stack {
    saved: Vec<Saved>,
    counts: Vec<u64>,
}

/// How a walk's root is decoded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Root {
    /// Through prost: every container grows by pushes.
    Plain,
    /// A node of a model's main graph, decoded by the span decoder, which
    /// reserves its attribute list exactly.
    MainNode,
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

/// Where a nested message sits in its parent (diagnose mode only).
struct PathStep {
    field_index: usize,
    elem_index: u32,
    counts: [u32; MAX_FIELDS],
}

/// Walks `buf` as a message of type `root` (an index into [`MESSAGES`]).
///
/// Does not validate UTF-8 (prost does while decoding); on any fault, the
/// buffer is re-walked by [`diagnose`] to report the field path.
pub fn scan(buf: &[u8], root: usize, max_depth: usize) -> Result<ScanStats, DecodeError> {
    scan_releasing(buf, root, max_depth, None, None)
}

/// [`scan`], releasing the pages of a mapped buffer behind the walk, and
/// refusing a projection over `budget`.
pub fn scan_releasing(
    buf: &[u8],
    root: usize,
    max_depth: usize,
    pages: Option<&PageReleaser>,
    budget: Option<u64>,
) -> Result<ScanStats, DecodeError> {
    scan_deferring(buf, root, max_depth, pages, budget).map(|(stats, _)| stats)
}

/// What a model's scan leaves for the decoder: where the elements of the
/// main graph's long lists lie (the index decode on touch reads), and where
/// the graph's other fields start.
#[derive(Debug, Default)]
pub struct Deferred {
    pub lists: Lists,
    /// Offsets of the keys of the main graph's other known fields (name,
    /// inputs, outputs, ...), in order.
    pub graph_fields: Vec<usize>,
}

/// [`scan_releasing`] for a model, also returning what it deferred.
pub fn scan_model(
    buf: &[u8],
    max_depth: usize,
    pages: Option<&PageReleaser>,
    budget: Option<u64>,
) -> Result<(ScanStats, Deferred), DecodeError> {
    scan_deferring(buf, ids::MODEL_PROTO, max_depth, pages, budget)
}

pub(crate) fn scan_deferring(
    buf: &[u8],
    root: usize,
    max_depth: usize,
    pages: Option<&PageReleaser>,
    budget: Option<u64>,
) -> Result<(ScanStats, Deferred), DecodeError> {
    match fast_scan(buf, root, max_depth, pages, budget) {
        Ok((stats, deferred)) => match budget {
            Some(budget) if stats.heap > budget => Err(DecodeError {
                offset: 0,
                path: String::new(),
                root: MESSAGES[root].name,
                kind: DecodeErrorKind::MemoryBudget {
                    projected: stats.heap,
                    budget,
                },
            }),
            _ => Ok((stats, deferred)),
        },
        Err(Some(budget_error)) => Err(budget_error),
        Err(None) => Err(
            diagnose(buf, root, max_depth).unwrap_or_else(|| DecodeError {
                offset: 0,
                path: String::new(),
                root: MESSAGES[root].name,
                kind: DecodeErrorKind::Internal {
                    detail: "fast and diagnostic scans disagree".to_string(),
                },
            }),
        ),
    }
}

/// Elements of a model's main graph lists are at this depth.
const LIST_DEPTH: usize = 2;

/// Elements scanned by one task, at least.
const MIN_RUN: usize = 512;

/// The fast scan; `None` on any fault. For a model, the elements of the
/// main graph's lists (the bulk of big graphs) are deferred by the walk and
/// then scanned in parallel, each as a root of its own.
fn fast_scan(
    buf: &[u8],
    root: usize,
    max_depth: usize,
    pages: Option<&PageReleaser>,
    budget: Option<u64>,
) -> Result<(ScanStats, Deferred), Option<DecodeError>> {
    use rayon::prelude::*;
    // A memory-budget fault is final (no need to diagnose); others are located by `diagnose`.
    let fault = |(offset, kind, _, _): DiagFault| match kind {
        DecodeErrorKind::MemoryBudget { .. } => Some(DecodeError {
            offset: offset as u64,
            path: String::new(),
            root: MESSAGES[root].name,
            kind,
        }),
        _ => None,
    };
    let mut stats = ScanStats::new();
    let mut deferred = Deferred::default();
    let defer = root == ids::MODEL_PROTO && max_depth >= LIST_DEPTH;
    walk::<false>(
        buf,
        (root, Root::Plain),
        max_depth,
        &mut Vec::new(),
        pages,
        defer.then_some(&mut deferred),
        budget,
        &mut stats,
        &mut Stack::default(),
    )
    .map_err(fault)?;
    if !defer {
        return Ok((stats, deferred));
    }
    let inner_depth = max_depth - LIST_DEPTH;
    // Scans elements `range` of `list`, each as a root; their own count is
    // already in `stats`. Releases the pages the run walked.
    let scan_run = |list: List, range: std::ops::Range<usize>| -> Option<ScanStats> {
        let spans = &deferred.lists[list as usize];
        let (id, kind) = match list {
            List::Node => (ids::NODE_PROTO, Root::MainNode),
            List::Initializer => (ids::TENSOR_PROTO, Root::Plain),
            List::ValueInfo => (ids::VALUE_INFO_PROTO, Root::Plain),
            List::SparseInitializer => (ids::SPARSE_TENSOR_PROTO, Root::Plain),
        };
        let mut acc = ScanStats::new();
        let mut stack = Stack::default();
        let mut behind = Behind::new(pages);
        for i in range.clone() {
            let (start, len) = spans.get(i, buf)?;
            let element = buf.get(start..start + len)?;
            behind.advance(start, start + len);
            if list == List::Node && scan_plain_node(element, &mut acc) {
                continue;
            }
            walk::<false>(
                element,
                (id, kind),
                inner_depth,
                &mut Vec::new(),
                None,
                None,
                None,
                &mut acc,
                &mut stack,
            )
            .ok()?;
        }
        behind.finish();
        acc.messages[id] -= range.len() as u64;
        acc.max_depth += LIST_DEPTH;
        Some(acc)
    };
    let threads = rayon::current_num_threads();
    let mut runs = Vec::new();
    for list in List::ALL {
        let n = deferred.lists[list as usize].len();
        let step = n.div_ceil(threads * 4).max(MIN_RUN);
        runs.extend(
            (0..n)
                .step_by(step)
                .map(|start| (list, start..(start + step).min(n))),
        );
    }
    let inner = runs
        .into_par_iter()
        .with_max_len(1)
        .map(|(list, range)| scan_run(list, range))
        .try_reduce(ScanStats::new, |a, b| Some(a.merged(b)))
        .ok_or(None)?;
    stats = stats.merged(inner);
    Ok((stats, deferred))
}

/// Counts a node made only of string fields (inputs, outputs, name, op_type,
/// domain, doc_string, overload: the common case in large graphs) exactly as
/// [`walk`] would, without its generic per-field machinery. Returns `false`,
/// leaving `stats` untouched, for anything else (attributes, metadata,
/// unknown fields, any framing fault): [`walk`] then scans the node, and
/// reports the fault if there is one.
#[inline]
fn scan_plain_node(node: &[u8], stats: &mut ScanStats) -> bool {
    let schema = &MESSAGES[ids::NODE_PROTO];
    let mut counts = [0u64; NODE_SLOTS];
    let mut pos = 0usize;
    let mut heap = 0u64;
    while pos < node.len() {
        let Ok(key) = read_varint(node, &mut pos, node.len()) else {
            return false;
        };
        let number = key >> 3;
        if key & 7 != wire_type::LEN || !crate::proto::is_string_field(number) {
            return false;
        }
        let Some((_, field)) = schema.field(number) else {
            return false;
        };
        let Ok(len) = read_varint(node, &mut pos, node.len()) else {
            return false;
        };
        match usize::try_from(len) {
            Ok(len) if len <= node.len() - pos => {
                if !utf8_ok(&node[pos..pos + len]) {
                    return false;
                }
                pos += len;
            }
            _ => return false,
        }
        heap = heap
            .saturating_add(field.text.heap(len))
            .saturating_add(grow(schema, field, &mut counts, 1, false));
    }
    stats.messages[ids::NODE_PROTO] += 1;
    stats.heap = stats.heap.saturating_add(heap);
    true
}

/// Containers of a `NodeProto` (checked against the schema in tests).
const NODE_SLOTS: usize = 6;

impl ScanStats {
    fn new() -> Self {
        ScanStats {
            messages: vec![0; MESSAGES.len()],
            heap: 0,
            max_depth: 0,
        }
    }

    fn merged(mut self, other: ScanStats) -> ScanStats {
        for (a, b) in self.messages.iter_mut().zip(other.messages) {
            *a += b;
        }
        self.heap = self.heap.saturating_add(other.heap);
        self.max_depth = self.max_depth.max(other.max_depth);
        self
    }
}

/// Re-walks `buf` validating everything (UTF-8 included) and returns the
/// first fault with its field path, or `None` when the buffer is sound.
pub fn diagnose(buf: &[u8], root: usize, max_depth: usize) -> Option<DecodeError> {
    let mut path = Vec::new();
    let mut stats = ScanStats::new();
    match walk::<true>(
        buf,
        (root, Root::Plain),
        max_depth,
        &mut path,
        None,
        None,
        None,
        &mut stats,
        &mut Stack::default(),
    ) {
        Ok(()) => None,
        Err((offset, kind, current, stack)) => {
            let mut text = String::new();
            let mut parent = root;
            for (step, &msg) in path.iter().zip(stack.iter()) {
                push_segment(
                    &mut text,
                    &MESSAGES[parent],
                    step.field_index,
                    step.elem_index,
                );
                parent = msg;
            }
            if let Some((index, count)) = current {
                push_segment(&mut text, &MESSAGES[parent], index, count);
            }
            Some(DecodeError {
                offset: offset as u64,
                path: text,
                root: MESSAGES[root].name,
                kind,
            })
        }
    }
}

/// True when `text` is valid UTF-8 (names are nearly always ASCII, which a
/// plain test checks much faster than the general validation).
#[inline]
pub(crate) fn utf8_ok(text: &[u8]) -> bool {
    text.is_ascii() || std::str::from_utf8(text).is_ok()
}

/// A fault in diagnose mode: offset, kind, the field being read (index in
/// the innermost message, element index) and the message types on the path.
type DiagFault = (usize, DecodeErrorKind, Option<(usize, u32)>, Vec<usize>);

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
fn walk<const DIAG: bool>(
    buf: &[u8],
    (root, root_kind): (usize, Root),
    max_depth: usize,
    path: &mut Vec<PathStep>,
    pages: Option<&PageReleaser>,
    mut defer: Option<&mut Deferred>,
    budget: Option<u64>,
    stats: &mut ScanStats,
    stack: &mut Stack,
) -> Result<(), DiagFault> {
    // The projection so far, checked against the budget as the walk goes,
    // so a memory bomb is refused before the walk itself allocates much
    // (the deferred node list).
    let mut heap: u64 = 0;
    let mut released = 0usize;
    let mut next_release = RELEASE_WINDOW;
    stats.messages[root] += 1;
    let Stack { saved, counts } = stack;
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

    loop {
        if pos >= end {
            match saved.pop() {
                None => {
                    if let Some(pages) = pages {
                        pages.release(released, buf.len());
                    }
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
            if let Some(deferred) = defer.as_deref_mut() {
                deferred.graph_fields.push(key_at);
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
                if start >= next_release {
                    if let Some(pages) = pages {
                        pages.release(released, start);
                    }
                    released = start;
                    next_release = start.saturating_add(RELEASE_WINDOW);
                }
                if depth == LIST_DEPTH && msg == ids::GRAPH_PROTO {
                    if let Some(deferred) = defer.as_deref_mut() {
                        if let Some(list) = List::of_graph_field(number) {
                            // Scanned later (in parallel) as a root of its own.
                            deferred.lists[list as usize].push(len_at);
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

fn push_segment(path: &mut String, parent: &MessageSchema, field_index: usize, elem: u32) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::schema::ids;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn ld(field: u64, payload: &[u8], out: &mut Vec<u8>) {
        varint((field << 3) | 2, out);
        varint(payload.len() as u64, out);
        out.extend_from_slice(payload);
    }

    /// The plain-node shortcut counts exactly what the generic walk counts,
    /// and declines every node it does not fully understand.
    #[test]
    fn plain_node_scan_matches_walk() {
        let mut plain = Vec::new();
        for (field, text) in [
            (1, "x"),
            (1, ""),
            (2, "y"),
            (3, "n0"),
            (4, "Add"),
            (7, "ai.onnx"),
            (6, "doc \u{e9}"),
            (8, "o"),
            (1, "z"),
        ] {
            ld(field, text.as_bytes(), &mut plain);
        }
        let mut with_attr = plain.clone();
        ld(5, &[], &mut with_attr);
        let mut unknown = plain.clone();
        ld(99, b"?", &mut unknown);
        let mut varint_field = plain.clone();
        varint(3 << 3, &mut varint_field);
        varint(1, &mut varint_field);
        let mut truncated = plain.clone();
        truncated.extend_from_slice(&[(1 << 3) | 2, 5, b'a']);
        let cases: [(&[u8], bool); 6] = [
            (&[], true),
            (&plain, true),
            (&with_attr, false),
            (&unknown, false),
            (&varint_field, false),
            (&truncated, false),
        ];
        for (node, accepted) in cases {
            let mut fast = ScanStats::new();
            assert_eq!(scan_plain_node(node, &mut fast), accepted, "{node:?}");
            if !accepted {
                assert_eq!(fast.messages, ScanStats::new().messages);
                assert_eq!(fast.heap, 0);
                continue;
            }
            let walked = scan(node, ids::NODE_PROTO, DEFAULT_MAX_DEPTH).expect("plain node");
            assert_eq!(fast.messages, walked.messages);
            assert_eq!(fast.heap, walked.heap);
            assert_eq!(fast.max_depth, walked.max_depth);
        }
        // Three inputs spill the SmallVec (4 slots), a doc string allocates
        // the extras: the projection sees both.
        let mut fast = ScanStats::new();
        assert!(scan_plain_node(&plain, &mut fast));
        let extras = std::mem::size_of::<crate::proto::NodeExtras>() as u64;
        assert_eq!(fast.heap, 4 * 24 + extras);
    }

    #[test]
    fn node_slots_match_the_schema() {
        assert_eq!(MESSAGES[ids::NODE_PROTO].slots.len(), NODE_SLOTS);
    }

    #[test]
    fn empty_is_valid() {
        let stats = scan(&[], ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect("empty model");
        assert_eq!(stats.messages[ids::MODEL_PROTO], 1);
    }

    #[test]
    fn reports_path_and_offset() {
        // graph { node { } node { attribute { t { raw_data: <len 4096, 2 bytes> } } } }
        let mut tensor = Vec::new();
        varint((9 << 3) | 2, &mut tensor);
        varint(4096, &mut tensor);
        tensor.extend_from_slice(&[1, 2]);
        let mut attr = Vec::new();
        ld(5, &tensor, &mut attr);
        let mut node = Vec::new();
        ld(5, &attr, &mut node);
        let mut graph = Vec::new();
        ld(1, &[], &mut graph);
        ld(1, &node, &mut graph);
        let mut model = Vec::new();
        ld(7, &graph, &mut model);
        let err =
            scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("truncated raw_data");
        assert_eq!(err.path, "graph.node[1].attribute[0].t.raw_data");
        assert!(
            matches!(
                err.kind,
                DecodeErrorKind::LengthPastEnd { length: 4096, .. }
            ),
            "{err}"
        );
        assert_eq!(err.offset as usize, model.len() - 2 - 2);
    }

    fn nested(levels: usize) -> Vec<u8> {
        // Under a ValueInfoProto root: type (TypeProto) -> sequence_type
        // (Sequence) -> elem_type (TypeProto) -> ... `levels` messages deep.
        let mut inner: Vec<u8> = Vec::new();
        for i in (0..levels).rev() {
            let mut out = Vec::new();
            let field = if i == 0 {
                2
            } else if i % 2 == 1 {
                4
            } else {
                1
            };
            ld(field, &inner, &mut out);
            inner = out;
        }
        inner
    }

    #[test]
    fn depth_limit_is_exact() {
        assert!(scan(&nested(100), ids::VALUE_INFO_PROTO, 100).is_ok());
        let err = scan(&nested(101), ids::VALUE_INFO_PROTO, 100).expect_err("too deep");
        assert_eq!(err.kind, DecodeErrorKind::TooDeep { limit: 100 });
        assert!(
            err.path.starts_with("type.sequence_type.elem_type."),
            "{}",
            err.path
        );
    }

    #[test]
    fn unknown_fields_and_groups_are_skipped() {
        let mut model = Vec::new();
        varint(99 << 3, &mut model);
        varint(5, &mut model);
        varint((98 << 3) | 3, &mut model);
        varint((1 << 3) | 5, &mut model);
        model.extend_from_slice(&[0; 4]);
        varint((98 << 3) | 4, &mut model);
        ld(97, b"xyz", &mut model);
        assert!(scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).is_ok());
    }

    #[test]
    fn wrong_wire_type_and_overlong_varint() {
        let mut model = Vec::new();
        varint(7 << 3, &mut model); // graph as a varint
        varint(1, &mut model);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("wire type");
        assert_eq!(err.path, "graph");
        assert!(matches!(
            err.kind,
            DecodeErrorKind::WrongWireType { wire_type: 0, .. }
        ));

        let mut model = vec![(1 << 3) as u8];
        model.extend_from_slice(&[0xff; 11]);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("varint");
        assert_eq!(err.kind, DecodeErrorKind::VarintOverflow);
        assert_eq!(err.path, "ir_version");
        assert_eq!(err.offset, 1);
    }

    #[test]
    fn invalid_utf8_is_found_by_the_scan() {
        let mut model = Vec::new();
        ld(2, &[b'a', 0xff], &mut model);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("utf8 fault");
        assert_eq!(err.kind, DecodeErrorKind::InvalidUtf8 { valid_up_to: 1 });
        assert_eq!(err.path, "producer_name");
        assert_eq!(err.offset, 2);
        let err = diagnose(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect("utf8 fault");
        assert_eq!(err.kind, DecodeErrorKind::InvalidUtf8 { valid_up_to: 1 });
        assert_eq!(err.path, "producer_name");
        assert_eq!(err.offset, 2);
    }
}
