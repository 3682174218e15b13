//! Decode on touch: a model whose main graph's long lists (nodes,
//! initializers, value_info, sparse initializers) stay in the source bytes,
//! indexed by where each element lies, until something reads them.
//!
//! Loading scans the whole file once (framing, nesting, UTF-8: nothing can
//! fail later), decodes everything else (the model's header, functions,
//! the graph's inputs and outputs), and records 12 bytes per list element.
//! An element is decoded when first read ([`LazyList::get`], kept for
//! later reads) or on the fly for a pass over the whole list
//! ([`LazyList::decode`], [`LazyList::decode_all`]), so memory follows what
//! is touched, not the size of the graph.

use std::sync::OnceLock;

use bytes::{Buf, Bytes};
use prost::Message;

use super::scan;
use super::source::PageReleaser;
use super::spans::{List, Spans};
use super::{Cursor, DecodeOptions, Malformed, SpanMerge};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::proto::schema::{fields, ids, wire_type, MESSAGES};
use crate::proto::{
    AttributeProto, GraphProto, ModelProto, NodeFields, NodeHead, NodeProto, SparseTensorProto,
    TensorProto, ValueInfoProto,
};

/// Elements are decoded and cached in chunks of this many: touching one
/// decodes its chunk (one pass, one cursor), so a walk pays a chunk's setup
/// once per 64 elements and a random access at most 63 neighbours.
pub const CHUNK: usize = 64;

/// One chunk of decoded elements, or why it could not be decoded.
type Chunk<T> = OnceLock<Result<Box<[T]>, DecodeError>>;

/// A message type a list can hold.
pub trait ListElement: SpanMerge + Sync {
    /// Its index in the schema table.
    const SCHEMA: usize;

    /// Makes this element empty again for the next decode of a pass
    /// (keeping what buffers it can: as `Self::default()` otherwise).
    fn reset(&mut self) {
        *self = Self::default();
    }
}

impl ListElement for NodeProto {
    const SCHEMA: usize = ids::NODE_PROTO;
}
impl ListElement for TensorProto {
    const SCHEMA: usize = ids::TENSOR_PROTO;

    /// Keeps the numeric lists' buffers (a pass over many small tensors
    /// then allocates only their names).
    fn reset(&mut self) {
        fn emptied<X>(v: &mut Vec<X>) -> Vec<X> {
            let mut v = std::mem::take(v);
            v.clear();
            v
        }
        *self = TensorProto {
            dims: emptied(&mut self.dims),
            float_data: emptied(&mut self.float_data),
            int32_data: emptied(&mut self.int32_data),
            int64_data: emptied(&mut self.int64_data),
            ..TensorProto::default()
        };
    }
}
impl ListElement for ValueInfoProto {
    const SCHEMA: usize = ids::VALUE_INFO_PROTO;
}
impl ListElement for SparseTensorProto {
    const SCHEMA: usize = ids::SPARSE_TENSOR_PROTO;
}

/// Changes to a decode-on-touch list, applied as its elements are
/// decoded: each source element can be patched, and elements can be
/// appended after them (built on touch). What [`LazyList::names`] and
/// [`LazyList::name`] read from the source bytes (a node's inputs and
/// outputs and whether it holds a graph, a tensor's name) must not be
/// changed by a patch.
pub trait Edit<T>: Send + Sync {
    /// How many elements follow the source's.
    fn appended(&self) -> usize {
        0
    }
    /// Changes source element `index` after it is decoded.
    fn patch(&self, index: usize, element: &mut T);
    /// Appended element `index` (0 is the first after the source's).
    fn build(&self, index: usize) -> T;
}

/// One edit after another: `then` sees the list `first` made (`source`:
/// how many elements the source has).
struct Chain<T> {
    first: std::sync::Arc<dyn Edit<T>>,
    then: std::sync::Arc<dyn Edit<T>>,
    source: usize,
}

impl<T> Edit<T> for Chain<T> {
    fn appended(&self) -> usize {
        self.first.appended() + self.then.appended()
    }

    fn patch(&self, index: usize, element: &mut T) {
        self.first.patch(index, element);
        self.then.patch(index, element);
    }

    fn build(&self, index: usize) -> T {
        let before = self.first.appended();
        if index < before {
            let mut element = self.first.build(index);
            self.then.patch(self.source + index, &mut element);
            element
        } else {
            self.then.build(index - before)
        }
    }
}

/// Names copied out of a list's elements: runs of [`NAME_RUN`] names (the
/// last may be shorter), each run's text in one buffer. The runs are kept as
/// copied, not joined: joining grew two buffers to the table's size by
/// doubling (12.7 MiB of fresh memory for 200,000 names, about 5 MiB kept).
#[derive(Debug, Default)]
pub struct NameTable {
    runs: Vec<NameRun>,
}

/// Names a run of a [`NameTable`] holds (all but the last run).
const NAME_RUN: usize = 1024;

/// One run's names: their text back to back, and where each ends.
#[derive(Debug, Default)]
struct NameRun {
    text: String,
    /// Where each name ends in `text` (bits 0..63), and whether it was
    /// present (bit 63: a text is shorter than 2^63 bytes).
    ends: Vec<u64>,
}

const PRESENT: u64 = 1 << 63;

impl NameRun {
    fn push(&mut self, name: Option<&str>) {
        self.text.push_str(name.unwrap_or_default());
        let end = self.text.len() as u64;
        self.ends
            .push(if name.is_some() { end | PRESENT } else { end });
    }

    fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = match i.checked_sub(1) {
            Some(before) => self.ends.get(before)? & !PRESENT,
            None => 0,
        };
        let range = usize::try_from(start).ok()?..usize::try_from(end & !PRESENT).ok()?;
        (end & PRESENT != 0).then(|| self.text.get(range).unwrap_or_default())
    }
}

impl NameTable {
    pub fn len(&self) -> usize {
        match self.runs.split_last() {
            Some((last, full)) => full.len() * NAME_RUN + last.ends.len(),
            None => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Name `i` (`None`: the element has none, or there is no element `i`).
    pub fn get(&self, i: usize) -> Option<&str> {
        self.runs.get(i / NAME_RUN)?.get(i % NAME_RUN)
    }

    /// The names in order (`None`: the element has none).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<&str>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// A repeated message field decoded on touch.
pub struct LazyList<T> {
    source: Bytes,
    /// (Shared with the lists [`LazyList::edited`] makes of this one.)
    spans: std::sync::Arc<Spans>,
    /// Applied to every element decoded (see [`Edit`]).
    edit: Option<std::sync::Arc<dyn Edit<T>>>,
    /// The elements' names, copied out on first use (tensor lists).
    names: OnceLock<Result<NameTable, DecodeError>>,
    cache: Box<[Chunk<T>]>,
    max_depth: usize,
    /// Field path of the list from the model, for errors (`graph.node`).
    path: &'static str,
    /// For a mapped source: releases the pages a big element's decode
    /// touched (see [`RELEASE_AFTER`]).
    pages: Option<PageReleaser>,
    /// Set once every chunk a reader of heads and attributes keeps is
    /// kept (see `LazyList::keep_for_reader`): looking again finds none.
    kept_for_reader: std::sync::atomic::AtomicBool,
    /// Of a node list, a bit per node the scan found plain (see
    /// [`super::scan::Deferred::plain_nodes`]); empty for other lists.
    /// (Shared with the lists [`LazyList::edited`] makes of this one.)
    plain: std::sync::Arc<[u64]>,
    /// Whether the elements are 64 KiB or more on average (weights, whose
    /// headers each fault in a folio of their neighbours' data).
    weights: bool,
}

/// Decoding an element this long (a weight, typically) reads only its
/// header and leaves its data a slice of the map; the folio the header
/// faulted in (up to 2 MiB) is released afterwards, so touching every
/// initializer of a big model does not keep its weights in RSS.
const RELEASE_AFTER: usize = 1 << 20;

/// The size of the page-cache folios one touch can map.
const FOLIO: usize = 2 << 20;

impl<T> std::fmt::Debug for LazyList<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LazyList({} {})", self.path, self.spans.len())
    }
}

impl<T: ListElement> LazyList<T> {
    fn new(
        source: Bytes,
        mut spans: Spans,
        max_depth: usize,
        list: List,
        pages: Option<PageReleaser>,
        plain: Vec<u64>,
    ) -> Self {
        spans.shrink();
        let chunks = spans.len().div_ceil(CHUNK);
        let mut made = LazyList {
            source,
            spans: std::sync::Arc::new(spans),
            edit: None,
            names: OnceLock::new(),
            cache: (0..chunks).map(|_| OnceLock::new()).collect(),
            max_depth,
            path: list.path(),
            pages,
            kept_for_reader: Default::default(),
            plain: plain.into(),
            weights: false,
        };
        made.weights = made.behind_is_big(&(0..made.spans.len()));
        made
    }

    /// A new list with the same elements (none of them decoded yet),
    /// changed further by `edit` (this list's own edit applies first).
    pub fn edited(&self, edit: Option<std::sync::Arc<dyn Edit<T>>>) -> Self
    where
        T: 'static,
    {
        let edit = match (&self.edit, edit) {
            (None, e) => e,
            (Some(first), None) => Some(std::sync::Arc::clone(first)),
            (Some(first), Some(then)) => Some(std::sync::Arc::new(Chain {
                first: std::sync::Arc::clone(first),
                then,
                source: self.spans.len(),
            }) as std::sync::Arc<dyn Edit<T>>),
        };
        let len = self.spans.len() + edit.as_ref().map_or(0, |e| e.appended());
        LazyList {
            source: self.source.clone(),
            spans: std::sync::Arc::clone(&self.spans),
            edit,
            names: OnceLock::new(),
            cache: (0..len.div_ceil(CHUNK)).map(|_| OnceLock::new()).collect(),
            max_depth: self.max_depth,
            path: self.path,
            pages: self.pages.clone(),
            kept_for_reader: Default::default(),
            plain: std::sync::Arc::clone(&self.plain),
            weights: self.weights,
        }
    }

    /// Whether the scan found element `i`'s bytes plain (a node of names,
    /// texts and attributes without message fields; see
    /// [`super::scan::Deferred::plain_nodes`]). False when it cannot tell.
    #[inline]
    fn plain(&self, i: usize) -> bool {
        self.plain
            .get(i / 64)
            .is_some_and(|w| (w >> (i % 64)) & 1 == 1)
    }

    /// [`LazyList::plain`] of every element of `range`.
    fn all_plain(&self, range: std::ops::Range<usize>) -> bool {
        super::spans::range_masks(range)
            .all(|(word, mask)| self.plain.get(word).is_some_and(|w| w & mask == mask))
    }

    /// (For tests: [`LazyList::plain`].)
    #[doc(hidden)]
    pub fn is_plain(&self, i: usize) -> bool {
        self.plain(i)
    }

    pub fn len(&self) -> usize {
        self.spans.len() + self.edit.as_ref().map_or(0, |e| e.appended())
    }

    /// The bytes the elements are read from (the model's, shared).
    pub fn source(&self) -> &Bytes {
        &self.source
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// (offset, length) of element `i` in the source.
    pub fn span(&self, i: usize) -> Option<(usize, usize)> {
        self.spans.get(i, &self.source)
    }

    /// Heap bytes of the index (not of cached elements).
    pub fn index_bytes(&self) -> usize {
        self.spans.heap_bytes() + self.cache.len() * std::mem::size_of::<Chunk<T>>()
    }

    fn fault(&self, i: usize, offset: usize, kind: DecodeErrorKind) -> DecodeError {
        DecodeError {
            offset: offset as u64,
            path: format!("{}[{i}]", self.path),
            root: MESSAGES[ids::MODEL_PROTO].name,
            kind,
        }
    }

    /// Decodes element `i` (not kept).
    pub fn decode(&self, i: usize) -> Result<T, DecodeError> {
        let mut cursor = Cursor {
            bytes: self.source.clone(),
            at: 0,
        };
        self.decode_with(&mut cursor, i)
    }

    /// Decodes element `i` through `cursor` (a clone of the source, shared
    /// by a run of decodes so no reference count is touched per element).
    fn decode_with(&self, cursor: &mut Cursor, i: usize) -> Result<T, DecodeError> {
        let mut value = T::default();
        self.decode_into(cursor, i, &mut value)?;
        Ok(value)
    }

    /// Decodes element `i` into `value` (empty, as [`ListElement::reset`]
    /// leaves it) through `cursor`.
    fn decode_into(&self, cursor: &mut Cursor, i: usize, value: &mut T) -> Result<(), DecodeError> {
        let source_len = self.spans.len();
        if let Some(edit) = self.edit.as_ref().filter(|_| i >= source_len) {
            if i - source_len < edit.appended() {
                *value = edit.build(i - source_len);
                return Ok(());
            }
        }
        let (offset, len) = self.span(i).ok_or_else(|| {
            self.fault(
                i,
                0,
                DecodeErrorKind::Internal {
                    detail: format!("index {i} is past the end of {}", self.path),
                },
            )
        })?;
        let body = self
            .source
            .get(offset..offset.saturating_add(len))
            .ok_or_else(|| {
                self.fault(
                    i,
                    offset,
                    DecodeErrorKind::Internal {
                        detail: "span past the source".into(),
                    },
                )
            })?;
        value
            .merge_span(&self.source, cursor, offset, len)
            .map_err(|e| match super::diagnose(body, T::SCHEMA, self.max_depth) {
                Some(found) => self.relocate(i, offset, found),
                None => self.fault(
                    i,
                    offset,
                    DecodeErrorKind::Internal {
                        detail: e.to_string(),
                    },
                ),
            })?;
        self.release_after_read(offset, len);
        if let Some(edit) = &self.edit {
            edit.patch(i, value);
        }
        Ok(())
    }

    /// After element bytes `[offset, offset + len)` were read: for a big
    /// element (see [`RELEASE_AFTER`]), releases the folio its header
    /// faulted in and the rest of its pages.
    fn release_after_read(&self, offset: usize, len: usize) {
        if let Some(pages) = self.pages.as_ref().filter(|_| len >= RELEASE_AFTER) {
            pages.release(offset / FOLIO * FOLIO, offset + len);
        }
    }

    /// For a caller done with what it read of element `i` from its bytes
    /// (a weight's name, type or dims; the strings [`LazyList::strings`]
    /// lent): in a list of weights, releases the folio the element's header
    /// is in and the rest of its pages, which the read faulted in (2 MiB
    /// where the file is cached in huge folios), small elements among big
    /// ones included. A pass over the list releases behind itself instead
    /// ([`LazyList::release_behind`]); a big element of another list is not
    /// read from its bytes by `strings`, and its header read releases it.
    #[inline]
    pub fn release_peeked(&self, i: usize) {
        let (Some(pages), true) = (self.pages.as_ref(), self.weights) else {
            return;
        };
        if let Some((offset, len)) = self.span(i) {
            let start = offset / FOLIO * FOLIO;
            pages.release(
                start,
                offset.saturating_add(len).max(start.saturating_add(FOLIO)),
            );
        }
    }

    /// Decodes chunk `k` whole.
    fn decode_chunk(&self, k: usize) -> Result<Box<[T]>, DecodeError> {
        let start = k * CHUNK;
        let end = (start + CHUNK).min(self.len());
        let mut cursor = Cursor {
            bytes: self.source.clone(),
            at: 0,
        };
        let mut out = Vec::with_capacity(end.saturating_sub(start));
        for i in start..end {
            out.push(self.decode_with(&mut cursor, i)?);
        }
        Ok(out.into_boxed_slice())
    }

    /// An error found inside element `i` (at `offset`), as seen from the model.
    fn relocate(&self, i: usize, offset: usize, e: DecodeError) -> DecodeError {
        let path = if e.path.is_empty() {
            format!("{}[{i}]", self.path)
        } else {
            format!("{}[{i}].{}", self.path, e.path)
        };
        DecodeError {
            offset: e.offset + offset as u64,
            path,
            root: MESSAGES[ids::MODEL_PROTO].name,
            kind: e.kind,
        }
    }

    /// Element `i`, decoded on first access (with the rest of its chunk)
    /// and kept for the list's life.
    pub fn get(&self, i: usize) -> Result<&T, DecodeError> {
        let k = i / CHUNK;
        let past_end = || {
            self.fault(
                i,
                0,
                DecodeErrorKind::Internal {
                    detail: format!("index {i} is past the end of {}", self.path),
                },
            )
        };
        let chunk = self.cache.get(k).ok_or_else(past_end)?;
        // Another thread decoding this chunk meanwhile: this one waits for it.
        match chunk.get_or_init(|| self.decode_chunk(k)) {
            Ok(elements) => elements.get(i % CHUNK).ok_or_else(past_end),
            Err(e) => Err(e.clone()),
        }
    }

    /// The elements in order, a decoded chunk at a time (decoded now where
    /// not yet), up to the first chunk that cannot be decoded.
    pub fn iter_decoded(&self) -> impl Iterator<Item = &T> + '_ {
        self.cache
            .iter()
            .enumerate()
            .map_while(|(k, chunk)| chunk.get_or_init(|| self.decode_chunk(k)).as_ref().ok())
            .flat_map(|elements| elements.iter())
    }

    /// Element `i` if its chunk has been decoded.
    pub fn cached(&self, i: usize) -> Option<&T> {
        self.cache
            .get(i / CHUNK)?
            .get()?
            .as_ref()
            .ok()?
            .get(i % CHUNK)
    }

    /// Decodes and keeps chunks in order, claiming each from `next` (a
    /// counter several threads share, so they work ahead of a reader in
    /// step), until every chunk is claimed. A chunk already decoded, or
    /// being decoded by another thread, is passed over or waited for.
    /// Chunks for which `skip(k)` holds are passed over (their reader
    /// does not need them decoded).
    pub fn decode_ahead(
        &self,
        next: &std::sync::atomic::AtomicUsize,
        skip: impl Fn(usize) -> bool,
    ) {
        use std::sync::atomic::Ordering;
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(chunk) = self.cache.get(k) else {
                return;
            };
            if !skip(k) {
                chunk.get_or_init(|| self.decode_chunk(k));
            }
        }
    }

    /// Decodes every chunk not yet kept (in parallel) and keeps it.
    pub fn keep_all(&self) -> Result<(), DecodeError> {
        use rayon::prelude::*;
        let keep = |k: usize| self.get(k * CHUNK).map(|_| ());
        if self.len() < super::PARALLEL_MIN {
            (0..self.cache.len()).try_for_each(keep)
        } else {
            (0..self.cache.len()).into_par_iter().try_for_each(keep)
        }
    }

    /// Elements `range`, decoded now (kept ones are cloned), in order.
    pub fn decode_range(&self, range: std::ops::Range<usize>) -> Result<Vec<T>, DecodeError>
    where
        T: Clone,
    {
        use rayon::prelude::*;
        // Into a vector of exactly the range's length (what the memory
        // projection counts for these lists), filled in place, a run at a
        // time with one cursor each.
        let start = range.start;
        let mut out = Vec::with_capacity(range.len());
        out.resize_with(range.len(), T::default);
        let fill = |(r, slots): (usize, &mut [T])| -> Result<(), DecodeError> {
            let mut cursor = Cursor {
                bytes: self.source.clone(),
                at: 0,
            };
            for (k, slot) in slots.iter_mut().enumerate() {
                let i = start + r * RUN + k;
                *slot = match self.cached(i) {
                    Some(t) => t.clone(),
                    None => self.decode_with(&mut cursor, i)?,
                };
            }
            Ok(())
        };
        const RUN: usize = 256;
        if out.len() < super::PARALLEL_MIN {
            out.chunks_mut(RUN).enumerate().try_for_each(fill)?;
        } else {
            out.par_chunks_mut(RUN).enumerate().try_for_each(fill)?;
        }
        Ok(out)
    }

    /// Every element, decoded now (in parallel when many).
    pub fn decode_all(&self) -> Result<Vec<T>, DecodeError>
    where
        T: Clone,
    {
        self.decode_range(0..self.len())
    }
}

/// See [`LazyList::release_behind`].
pub struct ReleaseBehind<'a, T> {
    list: &'a LazyList<T>,
    behind: Option<super::source::Behind<'a>>,
}

impl<T: ListElement> ReleaseBehind<'_, T> {
    /// The reader is at element `i`.
    pub fn at(&mut self, i: usize) {
        if let (Some(behind), Some((offset, len))) = (&mut self.behind, self.list.span(i)) {
            behind.advance(offset, offset.saturating_add(len));
        }
    }
}

impl<T> Drop for ReleaseBehind<'_, T> {
    fn drop(&mut self) {
        if let Some(behind) = self.behind.take() {
            behind.finish();
        }
    }
}

/// The main graph's long lists, decoded on touch.
#[derive(Debug)]
pub struct GraphLists {
    pub node: LazyList<NodeProto>,
    pub initializer: LazyList<TensorProto>,
    pub value_info: LazyList<ValueInfoProto>,
    pub sparse_initializer: LazyList<SparseTensorProto>,
}

/// A model whose main graph's lists are decoded on touch.
#[derive(Debug)]
pub struct LazyModel {
    /// The model with everything but those lists: its `graph`, when
    /// present, holds the graph's other fields (name, inputs, outputs, ...)
    /// and empty `node`, `initializer`, `value_info` and
    /// `sparse_initializer`.
    pub model: ModelProto,
    pub lists: GraphLists,
}

impl GraphLists {
    /// New lists over the same source elements (none decoded), the nodes
    /// and value_info changed by `node` and `value_info`.
    pub fn edited(
        &self,
        node: Option<std::sync::Arc<dyn Edit<NodeProto>>>,
        value_info: Option<std::sync::Arc<dyn Edit<ValueInfoProto>>>,
    ) -> GraphLists {
        GraphLists {
            node: self.node.edited(node),
            initializer: self.initializer.edited(None),
            value_info: self.value_info.edited(value_info),
            sparse_initializer: self.sparse_initializer.edited(None),
        }
    }

    /// Decodes every element into `graph`'s lists (in parallel).
    pub fn fill(&self, graph: &mut GraphProto) -> Result<(), DecodeError> {
        graph.node = self.node.decode_all()?;
        graph.initializer = self.initializer.decode_all()?;
        graph.value_info = self.value_info.decode_all()?;
        graph.sparse_initializer = self.sparse_initializer.decode_all()?;
        Ok(())
    }

    /// `model` (the decoded part of the model these lists belong to) with
    /// every list decoded into its main graph (in parallel).
    pub fn whole_model(&self, model: &ModelProto) -> Result<ModelProto, DecodeError> {
        let mut whole = model.clone();
        if let Some(g) = whole.graph.as_mut() {
            self.fill(g)?;
        }
        Ok(whole)
    }

    /// Calls `f` on every tensor of the lists (initializers, sparse
    /// initializers, node attributes and their subgraphs), decoding one
    /// element at a time.
    pub fn for_each_tensor(&self, f: &mut dyn FnMut(&TensorProto)) -> Result<(), DecodeError> {
        for i in 0..self.initializer.len() {
            match self.initializer.cached(i) {
                Some(t) => f(t),
                None => f(&self.initializer.decode(i)?),
            }
        }
        for i in 0..self.sparse_initializer.len() {
            let s = self.sparse_initializer.decode(i)?;
            let graph = GraphProto {
                sparse_initializer: vec![s],
                ..GraphProto::default()
            };
            crate::ir::visit::for_each_graph_tensor(&graph, f);
        }
        for i in 0..self.node.len() {
            let n = self.node.decode(i)?;
            crate::ir::visit::for_each_node_tensor(&n, f);
        }
        Ok(())
    }
}

impl LazyModel {
    /// The model with every list decoded (in parallel): what
    /// [`super::decode`] would have given.
    pub fn materialize(&self) -> Result<ModelProto, DecodeError> {
        self.lists.whole_model(&self.model)
    }

    /// Heap bytes of the lists' indexes.
    pub fn index_bytes(&self) -> usize {
        self.lists.node.index_bytes()
            + self.lists.initializer.index_bytes()
            + self.lists.value_info.index_bytes()
            + self.lists.sparse_initializer.index_bytes()
    }
}

/// One field of a message being indexed: its tag, wire type, the value's
/// bytes (for length-delimited fields) and where the value starts.
struct FieldAt {
    tag: u32,
    wire: u64,
    /// Where the key ends (prost reads a length-delimited value's length
    /// itself, from there).
    key_end: usize,
    start: usize,
    len: usize,
}

/// Reads the next field key at `pos` of `buf[..end]`; for length-delimited
/// values, also the length (the value is then `buf[start..start + len]`).
#[inline]
fn next_field(buf: &[u8], pos: &mut usize, end: usize) -> Result<FieldAt, Malformed> {
    // Most fields of small messages: a one-byte key and, for a
    // length-delimited value, a one-byte length.
    if let Some(&[key, len]) = buf.get(*pos..*pos + 2) {
        if key < 0x80 && len < 0x80 && u64::from(key & 7) == wire_type::LEN {
            let start = *pos + 2;
            let len = usize::from(len);
            if start <= end && len <= end - start {
                *pos = start;
                return Ok(FieldAt {
                    tag: u32::from(key >> 3),
                    wire: wire_type::LEN,
                    key_end: start - 1,
                    start,
                    len,
                });
            }
        }
    }
    next_field_slow(buf, pos, end)
}

fn next_field_slow(buf: &[u8], pos: &mut usize, end: usize) -> Result<FieldAt, Malformed> {
    let key = super::varint::read(buf, pos, end).map_err(|_| Malformed("bad key".into()))?;
    let tag = u32::try_from(key >> 3).map_err(|_| Malformed("field number overflows".into()))?;
    let wire = key & 7;
    let key_end = *pos;
    let mut len = 0;
    if wire == wire_type::LEN {
        let n = super::varint::read(buf, pos, end).map_err(|_| Malformed("bad length".into()))?;
        len = usize::try_from(n).map_err(|_| Malformed("length overflows".into()))?;
        if len > end.saturating_sub(*pos) {
            return Err(Malformed("length past the end".into()));
        }
    }
    Ok(FieldAt {
        tag,
        wire,
        key_end,
        start: *pos,
        len,
    })
}

/// Merges the field at `at` (whose key was read) into `message` with prost,
/// from `source` (zero-copy for bytes fields); returns where it ends.
fn merge_with_prost<M: Message>(
    message: &mut M,
    source: &Bytes,
    at: &FieldAt,
    end: usize,
) -> Result<usize, Malformed> {
    use prost::encoding::{DecodeContext, WireType};
    let wire = WireType::try_from(at.wire).map_err(|_| Malformed("invalid wire type".into()))?;
    let mut rest = source.slice(at.key_end..end);
    let before = rest.remaining();
    message.merge_field(at.tag, wire, &mut rest, DecodeContext::default())?;
    Ok(at.key_end + (before - rest.remaining()))
}

/// Decodes a scanned model's fields but the main graph's long lists: the
/// model's own fields, and the graph's others (`graph_fields`: where the
/// scan found their keys).
pub(crate) fn merge_header(
    model: &mut ModelProto,
    buf: &Bytes,
    graph_fields: &[usize],
) -> Result<(), Malformed> {
    let data: &[u8] = buf;
    let end = data.len();
    let mut pos = 0;
    while pos < end {
        let at = next_field(data, &mut pos, end)?;
        if at.tag == fields::model_proto::GRAPH && at.wire == wire_type::LEN {
            // Its fields are merged below, from where the scan found them.
            model.graph.get_or_insert_with(Default::default);
            pos = at.start + at.len;
        } else {
            pos = merge_with_prost(model, buf, &at, end)?;
        }
    }
    if let Some(graph) = model.graph.as_mut() {
        for &key in graph_fields {
            let mut at_key = key;
            let at = next_field(data, &mut at_key, end)?;
            merge_with_prost(graph, buf, &at, end)?;
        }
    }
    Ok(())
}

fn internal(e: Malformed) -> DecodeError {
    DecodeError {
        offset: 0,
        path: String::new(),
        root: MESSAGES[ids::MODEL_PROTO].name,
        kind: DecodeErrorKind::Internal {
            detail: format!("indexing a scanned model: {e}"),
        },
    }
}

/// Loads a model for decode on touch: scans `buf` whole (which indexes
/// the main graph's long lists), then decodes everything else: the model's
/// fields and the graph's other fields. `options.max_memory` bounds the
/// whole tree, as if every element were touched, and the index: decided
/// before anything is allocated, so touching can never exceed it.
pub fn decode_lazy(buf: Bytes, options: &DecodeOptions) -> Result<LazyModel, DecodeError> {
    let (stats, deferred) = scan::scan_model(
        &buf,
        options.max_depth,
        options.pages.as_ref(),
        options.max_memory,
    )?;
    super::check_budget(&stats, options.max_memory, ids::MODEL_PROTO)?;
    let mut model = ModelProto::default();
    merge_header(&mut model, &buf, &deferred.graph_fields).map_err(internal)?;
    if let Some(pages) = &options.pages {
        pages.release_all();
    }
    let depth = options.max_depth;
    let pages = &options.pages;
    let [node, initializer, value_info, sparse] = deferred.lists;
    Ok(LazyModel {
        model,
        lists: GraphLists {
            node: LazyList::new(
                buf.clone(),
                node,
                depth,
                List::Node,
                pages.clone(),
                deferred.plain_nodes,
            ),
            initializer: LazyList::new(
                buf.clone(),
                initializer,
                depth,
                List::Initializer,
                pages.clone(),
                Vec::new(),
            ),
            value_info: LazyList::new(
                buf.clone(),
                value_info,
                depth,
                List::ValueInfo,
                pages.clone(),
                Vec::new(),
            ),
            sparse_initializer: LazyList::new(
                buf,
                sparse,
                depth,
                List::SparseInitializer,
                pages.clone(),
                Vec::new(),
            ),
        },
    })
}

/// The names of a node, read straight from its bytes (slices of the
/// source: nothing is decoded or allocated but these small vectors).
#[derive(Debug, Default)]
pub struct NodeNames<'a> {
    pub inputs: smallvec::SmallVec<[&'a str; 2]>,
    pub outputs: smallvec::SmallVec<[&'a str; 1]>,
    /// Whether an attribute holds a graph (`g` or `graphs`).
    pub has_subgraph: bool,
}

impl<'a> NodeNames<'a> {
    /// The same, of a decoded node.
    pub fn of(node: &'a NodeProto) -> Self {
        NodeNames {
            inputs: node.input.iter().map(|s| s.as_str()).collect(),
            outputs: node.output.iter().map(|s| s.as_str()).collect(),
            has_subgraph: node
                .attribute
                .iter()
                .any(|a| a.g().is_some() || !a.graphs().is_empty()),
        }
    }
}

/// A node as checks read it ([`NodeFields`]): its names are slices of the
/// source bytes, its attributes decoded (zero-copy for tensor bytes). Made
/// by [`LazyList::for_each_node_in`] for nodes not decoded yet: a decoded
/// node costs ~3× the reading of its names (its strings are copied into
/// the node), and a pass over a graph drops it at once.
#[derive(Debug, Default)]
pub struct NodeView<'a> {
    head: NodeHead<'a>,
    attribute: Vec<AttributeProto>,
}

impl NodeFields for NodeView<'_> {
    fn node_name(&self) -> &str {
        self.head.name
    }
    fn node_op_type(&self) -> &str {
        self.head.op_type
    }
    fn node_domain(&self) -> &str {
        self.head.domain
    }
    fn inputs(&self) -> impl ExactSizeIterator<Item = &str> {
        self.head.input.iter().copied()
    }
    fn outputs(&self) -> impl ExactSizeIterator<Item = &str> {
        self.head.output.iter().copied()
    }
    fn attributes(&self) -> &[AttributeProto] {
        &self.attribute
    }
}

/// [`read_head`]'s common case, a node of short string fields (a one-byte
/// key and length each: fields 1 to 8 but attributes, up to 127 bytes), in
/// one tight loop; `false` at anything else (`head` is then left partly
/// read: clear it and read the node with [`read_head`]).
/// The size up to which [`LazyList::read_into`] decodes an attribute
/// before it looks for a tensor or graph in it (copying at most this many
/// bytes for nothing), and a view copies an attribute's bytes fields
/// rather than slicing the source.
const SMALL_ATTRIBUTE: usize = 64;

/// Whether an attribute's bytes hold a tensor or a graph, or a list of
/// them (see `AttributeProto::holds_message`); bytes that are not well
/// formed are taken to.
fn holds_message(attribute: &[u8]) -> bool {
    use fields::attribute_proto as A;
    for_each_field(attribute, |n, _, _| match n {
        A::T | A::G | A::TENSORS | A::GRAPHS | A::SPARSE_TENSOR | A::SPARSE_TENSORS => {
            Err(Malformed(String::new()))
        }
        _ => Ok(()),
    })
    .is_err()
}

fn read_plain_head<'a>(
    body: &'a [u8],
    head: &mut NodeHead<'a>,
    mut attribute: impl FnMut(&'a [u8]) -> bool,
) -> bool {
    use fields::node_proto as F;
    let mut pos = 0;
    while let (Some(&key), Some(&len)) = (body.get(pos), body.get(pos + 1)) {
        if key & 0x87 != wire_type::LEN as u8 || len & 0x80 != 0 {
            return false;
        }
        let start = pos + 2;
        pos = start + usize::from(len);
        let Some(value) = body.get(start..pos) else {
            return false;
        };
        let number = u32::from(key >> 3);
        if number == F::ATTRIBUTE {
            if !attribute(value) {
                return false;
            }
            continue;
        }
        let Ok(value) = text(value) else {
            return false;
        };
        match number {
            F::INPUT => head.input.push(value),
            F::OUTPUT => head.output.push(value),
            F::NAME => head.name = value,
            F::OP_TYPE => head.op_type = value,
            F::DOMAIN => head.domain = value,
            F::OVERLOAD => head.overload = value,
            F::DOC_STRING => {}
            _ => return false,
        }
    }
    pos == body.len()
}

/// Reads a node's fields from its bytes `body` into `head` (its names;
/// singular ones last-wins, as decoding), calling `attribute(bytes)` for
/// each attribute. Fails where a read of the bytes cannot stand for the
/// decoded node: metadata_props or device_configurations (not read), a
/// known field of another wire type, text that is not UTF-8 (decoding
/// then reports what is wrong). Unknown fields are skipped, as decoding
/// skips them.
fn read_head<'a>(
    body: &'a [u8],
    head: &mut NodeHead<'a>,
    mut attribute: impl FnMut(&'a [u8]) -> Result<(), Malformed>,
) -> Result<(), Malformed> {
    use fields::node_proto as F;
    for_each_field(body, |number, wire, value| {
        let known = matches!(
            number,
            F::INPUT
                | F::OUTPUT
                | F::NAME
                | F::OP_TYPE
                | F::ATTRIBUTE
                | F::DOC_STRING
                | F::DOMAIN
                | F::OVERLOAD
                | F::METADATA_PROPS
                | F::DEVICE_CONFIGURATIONS
        );
        if known && wire != wire_type::LEN {
            return Err(Malformed("a node field of the wrong wire type".into()));
        }
        match number {
            F::INPUT => head.input.push(text(value)?),
            F::OUTPUT => head.output.push(text(value)?),
            F::NAME => head.name = text(value)?,
            F::OP_TYPE => head.op_type = text(value)?,
            F::DOMAIN => head.domain = text(value)?,
            F::OVERLOAD => head.overload = text(value)?,
            F::DOC_STRING => {
                text(value)?;
            }
            F::ATTRIBUTE => attribute(value)?,
            F::METADATA_PROPS | F::DEVICE_CONFIGURATIONS => {
                return Err(Malformed("fields a view does not read".into()));
            }
            _ => {}
        }
        Ok(())
    })
}

/// A node of a pass ([`LazyList::for_each_node_in`]): a view over its
/// bytes, or the decoded node (kept, edited, or holding fields a view does
/// not read).
#[derive(Debug)]
pub enum NodeRef<'r, 'a> {
    View(&'r NodeView<'a>),
    Decoded(&'r NodeProto),
}

/// Calls `f(number, wire type, value)` for each field of `buf` (the value's
/// bytes for length-delimited fields, empty otherwise). Groups (unknown
/// fields the scan let through) are skipped whole, as when decoding.
fn for_each_field<'a>(
    buf: &'a [u8],
    mut f: impl FnMut(u32, u64, &'a [u8]) -> Result<(), Malformed>,
) -> Result<(), Malformed> {
    let end = buf.len();
    let mut pos = 0;
    while pos < end {
        let at = next_field(buf, &mut pos, end)?;
        let value = match at.wire {
            wire_type::LEN => {
                pos = at.start + at.len;
                &buf[at.start..pos]
            }
            wire_type::START_GROUP => {
                skip_group(buf, &mut pos, end, at.tag)?;
                &[]
            }
            wire => {
                skip_scalar(buf, &mut pos, end, wire)?;
                &[]
            }
        };
        f(at.tag, at.wire, value)?;
    }
    Ok(())
}

/// Skips a varint or fixed-width value at `pos`.
fn skip_scalar(buf: &[u8], pos: &mut usize, end: usize, wire: u64) -> Result<(), Malformed> {
    match wire {
        wire_type::VARINT => {
            super::varint::read(buf, pos, end).map_err(|_| Malformed("bad varint".into()))?;
        }
        wire_type::FIXED64 | wire_type::FIXED32 => {
            *pos += if wire == wire_type::FIXED64 { 8 } else { 4 };
            if *pos > end {
                return Err(Malformed("fixed-width value past the end".into()));
            }
        }
        _ => return Err(Malformed("unexpected wire type".into())),
    }
    Ok(())
}

/// Skips the rest of group `number` (whose start tag was read), nested
/// groups included, up to its matching end tag.
fn skip_group(buf: &[u8], pos: &mut usize, end: usize, number: u32) -> Result<(), Malformed> {
    let mut open = vec![number];
    while let Some(&innermost) = open.last() {
        if *pos >= end {
            return Err(Malformed("group not closed".into()));
        }
        let at = next_field(buf, pos, end)?;
        match at.wire {
            wire_type::LEN => *pos = at.start + at.len,
            wire_type::START_GROUP => open.push(at.tag),
            wire_type::END_GROUP if at.tag == innermost => {
                open.pop();
            }
            wire_type::END_GROUP => return Err(Malformed("mismatched end-group tag".into())),
            wire => skip_scalar(buf, pos, end, wire)?,
        }
    }
    Ok(())
}

/// A name read by a view (the ASCII shortcut of decoding's [`super::utf8`]).
#[inline]
fn text(value: &[u8]) -> Result<&str, Malformed> {
    super::utf8(value)
}

impl<T: ListElement> LazyList<T> {
    /// The bytes of element `i` (its body, without key and length).
    fn body(&self, i: usize) -> Result<(usize, &[u8]), DecodeError> {
        self.span(i)
            .and_then(|(offset, len)| Some((offset, self.source.get(offset..offset + len)?)))
            .ok_or_else(|| {
                self.fault(
                    i,
                    0,
                    DecodeErrorKind::Internal {
                        detail: format!("index {i} is past the end of {}", self.path),
                    },
                )
            })
    }

    /// What releases the pages behind a pass over `range`: on a list of
    /// weights (elements of 64 KiB or more on average), whose headers each
    /// fault in a page-cache folio (2 MiB where the file is cached in huge
    /// folios) that would otherwise stay mapped until the pass ends; on a
    /// list of small elements nothing (its pages are read again by the
    /// passes beside it, and re-faulting them costs more than they weigh).
    fn behind(&self, range: &std::ops::Range<usize>) -> super::source::Behind<'_> {
        let big = self.behind_is_big(range);
        super::source::Behind::new(self.pages.as_ref().filter(|_| big))
    }

    /// Whether elements `range` are 64 KiB or more on average.
    fn behind_is_big(&self, range: &std::ops::Range<usize>) -> bool {
        let first = self.span(range.start).map(|(o, _)| o);
        let last = range.end.checked_sub(1).and_then(|i| self.span(i));
        let spread = match (first, last) {
            (Some(a), Some((o, l))) => o.saturating_add(l).saturating_sub(a),
            _ => 0,
        };
        spread / range.len().max(1) >= 64 << 10
    }

    /// For a reader that goes through this list's elements in order
    /// reading small parts of them (headers): releases the pages behind it
    /// a window at a time, and the rest when dropped, when the elements are
    /// big (see [`LazyList::behind`]). Without it, each header of a small
    /// tensor between big ones keeps the page-cache folio it is in mapped.
    pub fn release_behind(&self) -> ReleaseBehind<'_, T> {
        ReleaseBehind {
            list: self,
            behind: Some(self.behind(&(0..self.spans.len()))),
        }
    }

    /// Calls `f(i, element)` for each element of `range` in order: kept
    /// elements as they are, the others decoded for the call and dropped
    /// (one cursor for the run), so a pass costs no more memory than one
    /// element.
    pub fn for_each_in(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(usize, &T),
    ) -> Result<(), DecodeError> {
        // One element decoded into again and again (its buffers kept).
        let mut slot = T::default();
        self.pass(range, |i, cursor| {
            match self.cached(i) {
                Some(t) => f(i, t),
                None => {
                    slot.reset();
                    self.decode_into(cursor, i, &mut slot)?;
                    f(i, &slot);
                }
            }
            Ok(())
        })
    }

    /// The frame of a pass over `range`: `step(i, cursor)` for each
    /// element in order, with one cursor for the run and the pages behind
    /// the pass released as it goes (see [`LazyList::behind`]).
    fn pass(
        &self,
        range: std::ops::Range<usize>,
        mut step: impl FnMut(usize, &mut Cursor) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        let mut cursor = Cursor {
            bytes: self.source.clone(),
            at: 0,
        };
        let mut behind = self.behind(&range);
        for i in range {
            if let Some((offset, len)) = self.span(i) {
                behind.advance(offset, offset.saturating_add(len));
            }
            step(i, &mut cursor)?;
        }
        behind.finish();
        Ok(())
    }
}

impl LazyList<NodeProto> {
    /// Calls `f(i, node)` for each node of `range`, in order, as
    /// [`LazyList::for_each_in`] does, but without decoding the nodes that
    /// a view can stand for: those not kept, in a list without edits,
    /// whose fields are names, attributes, doc_string and overload (a node
    /// with metadata_props or device_configurations, or whose bytes a view
    /// cannot read, is decoded, and decoding reports what is wrong).
    pub fn for_each_node_in(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(usize, NodeRef<'_, '_>),
    ) -> Result<(), DecodeError> {
        if self.edit.is_some() {
            return self.for_each_in(range, |i, n| f(i, NodeRef::Decoded(n)));
        }
        // One view for the pass, read into in place (its lists keep their
        // room; a view is ~250 bytes, not moved).
        let mut view = NodeView::default();
        self.pass(range, |i, cursor| {
            if let Some(t) = self.cached(i) {
                f(i, NodeRef::Decoded(t));
            } else if self.view_into(i, &mut view) {
                f(i, NodeRef::View(&view));
                if let Some((offset, len)) = self.span(i) {
                    self.release_after_read(offset, len);
                }
            } else {
                f(i, NodeRef::Decoded(&self.decode_with(cursor, i)?));
            }
            Ok(())
        })
    }

    /// Reads node `i` into `view`, in place: `false` (and `view` left
    /// unspecified) when a view cannot stand for it (see
    /// [`LazyList::for_each_node_in`]).
    fn view_into<'s>(&'s self, i: usize, view: &mut NodeView<'s>) -> bool {
        match self.read_parts(i, &mut view.head, &mut view.attribute, false) {
            Some(n) => {
                view.attribute.truncate(n);
                true
            }
            None => false,
        }
    }

    /// Reads node `i`'s head into `head` and decodes its attributes into
    /// the first elements of `attribute`, in place (the head's lists and
    /// the elements keep their room; elements past the node's are left as
    /// they are), nothing kept: how many attributes the node has, `None`
    /// (both left unspecified) where this read cannot stand for the node:
    /// a view's cannot (see [`LazyList::for_each_node_in`]), or an
    /// attribute holds a tensor or a graph (which a reader may borrow for
    /// longer: such a node is read kept). Nothing of the attributes borrows
    /// the source (their few bytes fields are copies).
    pub fn read_into<'s>(
        &'s self,
        i: usize,
        head: &mut NodeHead<'s>,
        attribute: &mut Vec<AttributeProto>,
    ) -> Option<usize> {
        self.read_parts(i, head, attribute, true)
    }

    /// [`LazyList::read_into`]; `plain`: fails on an attribute holding a
    /// tensor or a graph, and copies bytes fields (otherwise they are
    /// slices of the source, tensor bytes not copied, but in attributes of
    /// at most `SMALL_ATTRIBUTE` bytes).
    fn read_parts<'s>(
        &'s self,
        i: usize,
        head: &mut NodeHead<'s>,
        attribute: &mut Vec<AttributeProto>,
        plain: bool,
    ) -> Option<usize> {
        if self.edit.is_some() {
            return None;
        }
        let (offset, body) = self.body(i).ok()?;
        // How many attributes are read (set again for a second read).
        let used = std::cell::Cell::new(0);
        let mut read = |value: &[u8]| -> Result<(), Malformed> {
            let k = used.get();
            if k == attribute.len() {
                attribute.push(AttributeProto::default());
            }
            let Some(a) = attribute.get_mut(k) else {
                return Err(Malformed(String::new()));
            };
            used.set(k + 1);
            a.clear();
            if plain {
                // A few bytes hold no tensor worth a look first: decoded,
                // then looked at.
                if value.len() > SMALL_ATTRIBUTE && holds_message(value) {
                    return Err(Malformed(String::new()));
                }
                a.merge(value).map_err(|e| Malformed(e.to_string()))?;
                return match a.holds_message() {
                    true => Err(Malformed(String::new())),
                    false => Ok(()),
                };
            }
            if value.len() <= SMALL_ATTRIBUTE {
                // A few bytes: copied (no count of the source's references
                // taken and dropped for each attribute).
                return a.merge(value).map_err(|e| Malformed(e.to_string()));
            }
            // `value` lies inside `body`, which starts at `offset`.
            let start = offset + (value.as_ptr() as usize - body.as_ptr() as usize);
            let end = start
                .checked_add(value.len())
                .filter(|&e| e <= self.source.len())
                .ok_or_else(|| Malformed("attribute past the source".into()))?;
            a.merge(self.source.slice(start..end))
                .map_err(|e| Malformed(e.to_string()))
        };
        head.clear();
        if read_plain_head(body, head, |value| read(value).is_ok()) {
            return Some(used.get());
        }
        head.clear();
        used.set(0);
        read_head(body, head, &mut read).ok()?;
        Some(used.get())
    }

    /// Decodes and keeps (in parallel when many) the chunks a reader of
    /// heads and attributes keeps ([`LazyList::chunk_kept_by_reader`]);
    /// the others stay bytes.
    pub fn keep_for_reader(&self) -> Result<(), DecodeError> {
        use rayon::prelude::*;
        use std::sync::atomic::Ordering;
        if self.kept_for_reader.load(Ordering::Acquire) {
            return Ok(());
        }
        let keep = |k: usize| {
            if self.chunk_kept_by_reader(k) {
                self.get(k * CHUNK).map(|_| ())
            } else {
                Ok(())
            }
        };
        if self.len() < super::PARALLEL_MIN {
            (0..self.cache.len()).try_for_each(keep)?;
        } else {
            (0..self.cache.len()).into_par_iter().try_for_each(keep)?;
        }
        self.kept_for_reader.store(true, Ordering::Release);
        Ok(())
    }

    /// Whether chunk `k` is one a reader of heads and attributes still
    /// needs decoded and kept: it holds such a node
    /// ([`LazyList::chunk_kept_by_reader`]) and is not kept yet (none is
    /// after [`LazyList::keep_for_reader`]).
    pub fn chunk_to_keep_for_reader(&self, k: usize) -> bool {
        !self
            .kept_for_reader
            .load(std::sync::atomic::Ordering::Acquire)
            && self.cache.get(k).is_some_and(|c| c.get().is_none())
            && self.chunk_kept_by_reader(k)
    }

    /// Whether chunk `k` holds a node a reader of heads and attributes
    /// keeps decoded (see [`LazyList::kept_by_reader`]).
    pub fn chunk_kept_by_reader(&self, k: usize) -> bool {
        let start = k.saturating_mul(CHUNK);
        let mut range = start..start.saturating_add(CHUNK).min(self.len());
        if self.edit.is_none() && self.all_plain(range.clone()) {
            return false;
        }
        range.any(|i| self.kept_by_reader(i))
    }

    /// Whether node `i` is one a reader of heads and attributes
    /// ([`LazyList::read_into`]) decodes and keeps: an attribute holds a
    /// value the reader may keep a reference to (a tensor or graph, or
    /// lists of them), it has metadata_props or device_configurations
    /// (which a view does not read), its list has edits, or its bytes are
    /// not well formed (a quick look: text is not checked).
    pub fn kept_by_reader(&self, i: usize) -> bool {
        use fields::node_proto as F;
        if self.edit.is_some() {
            return true;
        }
        if self.plain(i) {
            return false;
        }
        let Ok((_, body)) = self.body(i) else {
            return true;
        };
        for_each_field(body, |number, _, value| match number {
            F::METADATA_PROPS | F::DEVICE_CONFIGURATIONS => Err(Malformed(String::new())),
            F::ATTRIBUTE if holds_message(value) => Err(Malformed(String::new())),
            _ => Ok(()),
        })
        .is_err()
    }

    /// The names of node `i`, read from its bytes (an appended node's from
    /// the node, built and kept).
    pub fn names(&self, i: usize) -> Result<NodeNames<'_>, DecodeError> {
        use fields::{attribute_proto, node_proto};
        if i >= self.spans.len() {
            return Ok(NodeNames::of(self.get(i)?));
        }
        let (offset, body) = self.body(i)?;
        let mut names = NodeNames::default();
        // A plain node's attributes hold no graph: not looked into.
        let plain = self.plain(i);
        for_each_field(body, |number, wire, value| {
            if wire != wire_type::LEN {
                return Ok(());
            }
            match number {
                node_proto::INPUT => names.inputs.push(text(value)?),
                node_proto::OUTPUT => names.outputs.push(text(value)?),
                node_proto::ATTRIBUTE if !names.has_subgraph && !plain => {
                    for_each_field(value, |n, w, _| {
                        if w == wire_type::LEN
                            && (n == attribute_proto::G || n == attribute_proto::GRAPHS)
                        {
                            names.has_subgraph = true;
                        }
                        Ok(())
                    })?;
                }
                _ => {}
            }
            Ok(())
        })
        .map_err(|e| {
            self.fault(
                i,
                offset,
                DecodeErrorKind::Internal {
                    detail: format!("reading a scanned node's names: {e}"),
                },
            )
        })?;
        Ok(names)
    }
}

impl<T: ListElement> LazyList<T> {
    /// Every value of string field `number` of element `i`, in order, read
    /// from the source without decoding the element (of a singular field
    /// the decoder keeps the last). `None` for an edited list, an appended
    /// element, or bytes the decoder would not read as such (a value of
    /// another wire type, text that is not UTF-8): decode the element then.
    ///
    /// The strings point into the source: a caller done with them calls
    /// [`LazyList::release_peeked`] (a weight's pages are not released
    /// here, since reading the strings would fault them back in). A big
    /// element (see [`RELEASE_AFTER`]) of a list of small ones, a node
    /// holding a weight, gives `None` too: decoding it releases what it
    /// maps, where the strings would keep its folio mapped.
    pub fn strings(&self, i: usize, number: u32) -> Option<smallvec::SmallVec<[&str; 2]>> {
        if self.edit.is_some() {
            return None;
        }
        let (_, body) = self.body(i).ok()?;
        if body.len() >= RELEASE_AFTER && !self.weights && self.pages.is_some() {
            return None;
        }
        let mut found: smallvec::SmallVec<[&str; 2]> = smallvec::SmallVec::new();
        for_each_field(body, |n, wire, value| {
            if n == number {
                // A string field holding another wire type: the decoder fails.
                if wire != wire_type::LEN {
                    return Err(Malformed("read decoded".into()));
                }
                found.push(text(value)?);
            }
            Ok(())
        })
        .ok()?;
        Some(found)
    }
}

impl LazyList<ValueInfoProto> {
    /// Entry `i`'s name and the bytes of its type (`None`: declared without
    /// one), read from the source without decoding the entry: what
    /// inference and its write-back read of a declaration. `None` when the
    /// bytes alone cannot say (an edited list, a name or type given twice,
    /// which protobuf resolves by merging, a field of the wrong wire type):
    /// read the decoded entry then.
    pub fn declaration(&self, i: usize) -> Option<(&str, Option<&[u8]>)> {
        use fields::value_info_proto as F;
        if self.edit.is_some() {
            return None;
        }
        let (_, body) = self.body(i).ok()?;
        let (mut name, mut ty) = (None, None);
        for_each_field(body, |number, wire, value| {
            let slot = match number {
                F::NAME => &mut name,
                F::TYPE => &mut ty,
                _ => return Ok(()),
            };
            if wire != wire_type::LEN || slot.is_some() {
                return Err(Malformed("read decoded".into()));
            }
            *slot = Some(value);
            Ok(())
        })
        .ok()?;
        let name = match name {
            Some(bytes) => text(bytes).ok()?,
            None => "",
        };
        Some((name, ty))
    }
}

/// A failure met decoding an element on read, if any chunk of `list`
/// failed (readers that skip an undecodable element report it after).
pub fn decode_failure<T: ListElement>(list: &LazyList<T>) -> Option<DecodeError> {
    list.cache
        .iter()
        .find_map(|chunk| chunk.get().and_then(|r| r.as_ref().err()).cloned())
}

impl LazyList<TensorProto> {
    /// The names of tensors `range`, in order, copied out of the source
    /// (see [`LazyList::name`]); the pages behind the pass are released a
    /// window at a time, so small tensors' folios (2 MiB each where the
    /// file is cached in huge folios) are never all mapped at once.
    fn copy_names(&self, range: std::ops::Range<usize>) -> Result<NameRun, DecodeError> {
        let mut behind = self.behind(&range);
        let mut table = NameRun::default();
        table.ends.reserve_exact(range.len());
        for i in range {
            if let Some((offset, len)) = self.span(i) {
                behind.advance(offset, offset.saturating_add(len));
            }
            table.push(self.name(i)?);
        }
        behind.finish();
        Ok(table)
    }

    /// Every tensor's name, copied out of the source on first use (in
    /// parallel runs) and kept: passes over the names (the checker's
    /// scope, its SSA proof) then never touch the mapped pages, where
    /// each name would fault in the folio its tensor starts in.
    pub fn name_table(&self) -> Result<&NameTable, DecodeError> {
        use rayon::prelude::*;
        let built = self.names.get_or_init(|| {
            let n = self.len();
            let runs = (0..n.div_ceil(NAME_RUN))
                .into_par_iter()
                .map(|r| self.copy_names(r * NAME_RUN..((r + 1) * NAME_RUN).min(n)))
                .collect::<Result<Vec<_>, _>>()?;
            // Only the last run may be shorter (`len` and `get` count on it).
            Ok(NameTable { runs })
        });
        built.as_ref().map_err(Clone::clone)
    }

    /// The `name` of tensor `i` (None when absent), read from its bytes.
    pub fn name(&self, i: usize) -> Result<Option<&str>, DecodeError> {
        if i >= self.spans.len() {
            return Ok(self.get(i)?.name.as_deref());
        }
        let (offset, body) = self.body(i)?;
        let mut name = None;
        for_each_field(body, |number, wire, value| {
            if number == fields::tensor_proto::NAME && wire == wire_type::LEN {
                // The last occurrence wins, as when decoding.
                name = Some(text(value)?);
            }
            Ok(())
        })
        .map_err(|e| {
            self.fault(
                i,
                offset,
                DecodeErrorKind::Internal {
                    detail: format!("reading a scanned tensor's name: {e}"),
                },
            )
        })?;
        self.release_after_read(offset, body.len());
        Ok(name)
    }
}

/// What inference reads of an initializer: its name, element type and
/// dims, read from the source bytes by [`LazyList::header`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TensorHeader<'a> {
    /// "" when absent.
    pub name: &'a str,
    /// `None` when absent.
    pub data_type: Option<i32>,
    pub dims: smallvec::SmallVec<[i64; 4]>,
}

/// What the checks of a tensor read of it, from the source bytes (see
/// [`LazyList::sketch`]): name, element type, dims, `raw_data`, how many
/// values each typed list holds, and where the data is.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TensorSketch<'a> {
    /// Name, element type and dims, as [`LazyList::header`] reads them.
    pub header: TensorHeader<'a>,
    pub raw_data: Option<&'a [u8]>,
    /// Values of float_data, int32_data, string_data, int64_data,
    /// double_data and uint64_data.
    pub counts: [usize; 6],
    pub data_location: Option<i32>,
}

/// An element of a tensor list as a pass over it lends it: sketched from
/// its bytes, or decoded.
pub enum Sketched<'s, 'a> {
    Bytes(&'s TensorSketch<'a>),
    Decoded(&'s TensorProto),
}

impl LazyList<TensorProto> {
    /// Tensor `i` as the checks read it, from the source as the decoder
    /// would read it (the last name, type, raw_data and data location win;
    /// dims and typed lists, packed or not, in any number of runs, are
    /// appended), without decoding it. `None` for an edited list, bytes
    /// the decoder would not read as such (a wrong wire type, a group), a
    /// tensor whose data is external (the checks read its entries) or
    /// whose type is FLOAT6 (they read its int32 values): decode it then.
    pub fn sketch(&self, i: usize) -> Option<TensorSketch<'_>> {
        use super::varint::read;
        use fields::tensor_proto as F;
        if self.edit.is_some() {
            return None;
        }
        let (_, body) = self.body(i).ok()?;
        let mut t = TensorSketch::default();
        let end = body.len();
        let mut pos = 0;
        // Values of a typed list's field: one (unpacked) or a packed run.
        let values = |at: &FieldAt, pos: &mut usize, width: usize| -> Option<usize> {
            match (at.wire, width) {
                (wire_type::LEN, 0) => {
                    let stop = at.start + at.len;
                    let mut n = 0;
                    while *pos < stop {
                        read(body, pos, stop).ok()?;
                        n += 1;
                    }
                    Some(n)
                }
                (wire_type::LEN, w) => {
                    *pos = at.start + at.len;
                    (at.len % w == 0).then_some(at.len / w)
                }
                (wire_type::VARINT, 0) => read(body, pos, end).ok().map(|_| 1),
                (wire_type::FIXED32, 4) | (wire_type::FIXED64, 8) => {
                    skip_scalar(body, pos, end, at.wire).ok().map(|()| 1)
                }
                _ => None,
            }
        };
        while pos < end {
            let at = next_field(body, &mut pos, end).ok()?;
            let list = match at.tag {
                F::FLOAT_DATA => Some((0, 4)),
                F::INT32_DATA => Some((1, 0)),
                F::INT64_DATA => Some((3, 0)),
                F::DOUBLE_DATA => Some((4, 8)),
                F::UINT64_DATA => Some((5, 0)),
                _ => None,
            };
            if let Some((k, width)) = list {
                t.counts[k] += values(&at, &mut pos, width)?;
                continue;
            }
            if header_field(body, &at, &mut pos, &mut t.header)? {
                continue;
            }
            match (at.tag, at.wire) {
                (F::RAW_DATA, wire_type::LEN) => {
                    t.raw_data = Some(body.get(at.start..at.start + at.len)?);
                    pos = at.start + at.len;
                }
                (F::STRING_DATA, wire_type::LEN) => {
                    t.counts[2] += 1;
                    pos = at.start + at.len;
                }
                // An enum field: the low 32 bits of the varint, as prost
                // reads it.
                (F::DATA_LOCATION, wire_type::VARINT) => {
                    t.data_location = Some(read(body, &mut pos, end).ok()? as i32);
                }
                (F::RAW_DATA | F::STRING_DATA | F::DATA_LOCATION, _) => return None,
                (_, wire_type::LEN) => pos = at.start + at.len,
                (_, wire_type::START_GROUP) => return None,
                (_, wire) => skip_scalar(body, &mut pos, end, wire).ok()?,
            }
        }
        let external =
            t.data_location == Some(crate::proto::tensor_proto::DataLocation::External as i32);
        let float6 = matches!(t.header.data_type, Some(27 | 28));
        (!external && !float6).then_some(t)
    }

    /// Calls `f(i, tensor)` for each tensor of `range`, in order: a tensor
    /// kept decoded as it is, another sketched from its bytes
    /// ([`LazyList::sketch`]), or decoded (into one slot, again and again)
    /// where the bytes alone cannot tell; the pages behind the pass are
    /// released as [`LazyList::for_each_in`] releases them.
    pub fn for_each_sketched_in(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(usize, Sketched<'_, '_>),
    ) -> Result<(), DecodeError> {
        let mut slot = TensorProto::default();
        self.pass(range, |i, cursor| {
            if let Some(t) = self.cached(i) {
                f(i, Sketched::Decoded(t));
            } else if let Some(sketch) = self.sketch(i) {
                f(i, Sketched::Bytes(&sketch));
            } else {
                slot.reset();
                self.decode_into(cursor, i, &mut slot)?;
                f(i, Sketched::Decoded(&slot));
            }
            Ok(())
        })
    }

    /// Tensor `i`'s name, element type and dims, read from the source as
    /// the decoder would read them (the last name and type win; dims
    /// packed or not, in any number of runs, are appended in order)
    /// without decoding the tensor. `None` for an edited list, or where
    /// the bytes are not what the decoder reads as such (a field of the
    /// wrong wire type): decode the tensor then.
    pub fn header(&self, i: usize) -> Option<TensorHeader<'_>> {
        if self.edit.is_some() {
            return None;
        }
        let (offset, body) = self.body(i).ok()?;
        let mut header = TensorHeader::default();
        let end = body.len();
        let mut pos = 0;
        while pos < end {
            let at = next_field(body, &mut pos, end).ok()?;
            if header_field(body, &at, &mut pos, &mut header)? {
                continue;
            }
            match at.wire {
                wire_type::LEN => pos = at.start + at.len,
                wire_type::START_GROUP => skip_group(body, &mut pos, end, at.tag).ok()?,
                wire => skip_scalar(body, &mut pos, end, wire).ok()?,
            }
        }
        self.release_after_read(offset, body.len());
        Some(header)
    }
}

/// Reads tensor field `at` (its key read, `pos` past it) into `header` if
/// it is one of a header's, as the decoder reads it (the last name and
/// type win, dims packed or not are appended): `Some(true)`, `pos` past
/// the value; `Some(false)` for another field, `pos` untouched; `None`
/// where the bytes are not what the decoder reads as such.
fn header_field<'a>(
    body: &'a [u8],
    at: &FieldAt,
    pos: &mut usize,
    header: &mut TensorHeader<'a>,
) -> Option<bool> {
    use super::varint::read;
    use fields::tensor_proto as F;
    let end = body.len();
    match (at.tag, at.wire) {
        (F::NAME, wire_type::LEN) => {
            header.name = text(body.get(at.start..at.start + at.len)?).ok()?;
            *pos = at.start + at.len;
        }
        // An int32 field: the low 32 bits of the varint, as prost reads it.
        (F::DATA_TYPE, wire_type::VARINT) => {
            header.data_type = Some(read(body, pos, end).ok()? as i32);
        }
        (F::DIMS, wire_type::VARINT) => {
            header.dims.push(read(body, pos, end).ok()? as i64);
        }
        (F::DIMS, wire_type::LEN) => {
            let stop = at.start + at.len;
            while *pos < stop {
                header.dims.push(read(body, pos, stop).ok()? as i64);
            }
        }
        (F::NAME | F::DATA_TYPE | F::DIMS, _) => return None,
        _ => return Some(false),
    }
    Some(true)
}
