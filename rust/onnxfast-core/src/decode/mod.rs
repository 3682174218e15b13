//! Decoding: the source (memory map or bytes), the wire-format scan
//! (framing, depth, memory projection, fault diagnosis), then prost.

mod diagnose;
pub mod lazy;
mod repeats;
pub mod scan;
pub mod source;
pub mod spans;
pub mod varint;
mod walk;
pub use diagnose::diagnose;

use bytes::{Buf, Bytes};
use prost::Message;

use crate::decode::source::{Behind, PageReleaser};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::proto;
use crate::proto::schema::{self, fields, ids, wire_type, MESSAGES};
use scan::{Deferred, ScanStats, DEFAULT_MAX_DEPTH};
use spans::Spans;

/// Why prost (or our fast paths) refused the input. Only used to trigger
/// [`diagnose`], which reports the fault with its offset and path.
#[derive(Debug)]
pub struct Malformed(pub(crate) String);

impl From<prost::DecodeError> for Malformed {
    fn from(e: prost::DecodeError) -> Self {
        Malformed(e.to_string())
    }
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Limits applied while decoding untrusted bytes.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// Deepest message nesting accepted (the root is depth 0).
    pub max_depth: usize,
    /// Upper bound on the memory the decoded message may take, in bytes;
    /// `None` means no bound.
    pub max_memory: Option<u64>,
    /// For memory-mapped input: releases pages behind the walk (see
    /// [`PageReleaser`]).
    pub pages: Option<PageReleaser>,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            max_memory: None,
            pages: None,
        }
    }
}

/// A message type that can be decoded on its own from a buffer.
pub trait RootMessage: Message + Default + Sized {
    /// Its index in the schema table.
    const SCHEMA: usize;

    /// Decodes `buf` into `self` (protobuf merge semantics); `deferred` is
    /// what its scan left for the decoder.
    fn merge_from(
        &mut self,
        buf: Bytes,
        _deferred: Deferred,
        _pages: Option<&PageReleaser>,
    ) -> Result<(), Malformed> {
        Ok(self.merge(buf)?)
    }
}

macro_rules! roots {
    ($($ty:ty => $id:expr),* $(,)?) => {
        $(impl RootMessage for $ty { const SCHEMA: usize = $id; })*
    };
}

impl RootMessage for proto::ModelProto {
    const SCHEMA: usize = ids::MODEL_PROTO;

    fn merge_from(
        &mut self,
        buf: Bytes,
        deferred: Deferred,
        pages: Option<&PageReleaser>,
    ) -> Result<(), Malformed> {
        merge_model(self, buf, deferred, pages)
    }
}

roots! {
    proto::GraphProto => ids::GRAPH_PROTO,
    proto::NodeProto => ids::NODE_PROTO,
    proto::TensorProto => ids::TENSOR_PROTO,
    proto::SparseTensorProto => ids::SPARSE_TENSOR_PROTO,
    proto::TypeProto => ids::TYPE_PROTO,
    proto::ValueInfoProto => ids::VALUE_INFO_PROTO,
    proto::AttributeProto => ids::ATTRIBUTE_PROTO,
    proto::FunctionProto => ids::FUNCTION_PROTO,
    proto::SequenceProto => ids::SEQUENCE_PROTO,
    proto::MapProto => ids::MAP_PROTO,
    proto::OptionalProto => ids::OPTIONAL_PROTO,
}

/// Drops a large decoded tree on a worker thread, so the caller (for example
/// a Python thread holding the GIL) does not wait for a million frees.
pub fn drop_in_background<T: Send + 'static>(value: T) {
    rayon::spawn(move || drop(value));
}

/// Below this many nodes (or initializers) a graph decodes on one thread.
pub const PARALLEL_MIN: usize = 2048;

/// The heap the decoded tree will take, as the scan projected it (see
/// [`ScanStats::heap`]): within a few percent above what decoding then
/// allocates for real graphs (`tests/memory_projection.rs`).
pub fn projected_memory(stats: &ScanStats) -> u64 {
    // Plus where the elements of the main graph's long lists lie, held
    // while they decode (eagerly) or for as long as the model lives (on
    // touch): 4 bytes an element (8 past 4 GiB), at most twice that while
    // the index grows; there are no more elements than messages of their
    // types.
    let elements = [
        ids::NODE_PROTO,
        ids::TENSOR_PROTO,
        ids::VALUE_INFO_PROTO,
        ids::SPARSE_TENSOR_PROTO,
    ]
    .iter()
    .map(|&id| stats.messages[id])
    .fold(0u64, u64::saturating_add);
    stats
        .heap
        .saturating_add(elements.saturating_mul(16))
        .saturating_add(WORKING_MEMORY)
}

/// What decoding needs besides the tree and the index, whatever the
/// model's size: the span lists' first slots, temporary strings, a lazy
/// list's chunk table.
const WORKING_MEMORY: u64 = 16 << 10;

/// Refuses a projection over `budget`.
pub(crate) fn check_budget(
    stats: &ScanStats,
    budget: Option<u64>,
    root: usize,
) -> Result<(), DecodeError> {
    let projected = projected_memory(stats);
    match budget {
        Some(budget) if projected > budget => Err(DecodeError {
            offset: 0,
            path: String::new(),
            root: MESSAGES[root].name,
            kind: DecodeErrorKind::MemoryBudget { projected, budget },
        }),
        _ => Ok(()),
    }
}

/// Decodes `buf` as an `M`, zero-copy for bytes fields.
pub fn decode<M: RootMessage>(buf: Bytes, options: &DecodeOptions) -> Result<M, DecodeError> {
    let (stats, deferred) = scan::scan_deferring(
        &buf,
        M::SCHEMA,
        options.max_depth,
        options.pages.as_ref(),
        options.max_memory,
    )?;
    check_budget(&stats, options.max_memory, M::SCHEMA)?;
    let scanned = buf.clone();
    let mut message = M::default();
    let merged = message.merge_from(buf, deferred, options.pages.as_ref());
    if let Some(pages) = &options.pages {
        pages.release_all();
    }
    merged.map(|()| message).map_err(|e| {
        // The fast scan checks framing only; prost also checks UTF-8. Locate
        // whatever prost refused.
        diagnose(&scanned, M::SCHEMA, options.max_depth).unwrap_or_else(|| DecodeError {
            offset: 0,
            path: String::new(),
            root: MESSAGES[M::SCHEMA].name,
            kind: DecodeErrorKind::Internal {
                detail: e.to_string(),
            },
        })
    })
}

/// Decodes a model like prost would, except that the main graph's long
/// lists (which the scan indexed) decode in parallel into vectors of
/// exactly their length.
fn merge_model(
    model: &mut proto::ModelProto,
    buf: Bytes,
    deferred: Deferred,
    pages: Option<&PageReleaser>,
) -> Result<(), Malformed> {
    lazy::merge_header(model, &buf, &deferred.graph_fields)?;
    if let Some(graph) = model.graph.as_mut() {
        let [node, initializer, value_info, sparse] = &deferred.lists;
        decode_spans(&buf, node, &mut graph.node, pages)?;
        decode_spans(&buf, initializer, &mut graph.initializer, pages)?;
        decode_spans(&buf, value_info, &mut graph.value_info, pages)?;
        decode_spans(&buf, sparse, &mut graph.sparse_initializer, pages)?;
    }
    Ok(())
}

/// Decodes the messages at `spans` of `whole` and appends them to `out`, in
/// order, on several threads when there are many. Each thread walks one
/// clone of `whole`, so bytes fields stay zero-copy slices and no reference
/// count is touched per message. Releases the pages of each run once
/// decoded.
fn decode_spans<M: SpanMerge>(
    whole: &Bytes,
    spans: &Spans,
    out: &mut Vec<M>,
    pages: Option<&PageReleaser>,
) -> Result<(), Malformed> {
    use rayon::prelude::*;
    let start = out.len();
    out.reserve_exact(spans.len());
    out.resize_with(start + spans.len(), M::default);
    let slots = &mut out[start..];
    let run = |first: usize, slots: &mut [M]| -> Result<(), Malformed> {
        let mut cursor = Cursor {
            bytes: whole.clone(),
            at: 0,
        };
        let mut behind = Behind::new(pages);
        for (k, slot) in slots.iter_mut().enumerate() {
            let (offset, len) = spans
                .get(first + k, whole)
                .ok_or_else(|| Malformed("span past the buffer".into()))?;
            behind.advance(offset, offset + len);
            slot.merge_span(whole, &mut cursor, offset, len)?;
        }
        behind.finish();
        Ok(())
    };
    if spans.len() < PARALLEL_MIN {
        return run(0, slots);
    }
    let chunk = spans
        .len()
        .div_ceil(rayon::current_num_threads() * 4)
        .max(256);
    slots
        .par_chunks_mut(chunk)
        .enumerate()
        .try_for_each(|(c, slots)| run(c * chunk, slots))
}

/// A clone of the source positioned at `at`, moved forward only: zero-copy
/// bytes fields without touching a reference count per message.
#[doc(hidden)]
#[derive(Debug)]
pub struct Cursor {
    pub(crate) bytes: Bytes,
    pub(crate) at: usize,
}

impl Cursor {
    fn seek(&mut self, to: usize) -> Result<(), Malformed> {
        let step = to
            .checked_sub(self.at)
            .filter(|&s| s <= self.bytes.remaining())
            .ok_or_else(|| Malformed("cursor moved backwards".into()))?;
        self.bytes.advance(step);
        self.at = to;
        Ok(())
    }
}

/// Decoding one message found at a span of the source.
pub trait SpanMerge: Message + Default + Send {
    #[doc(hidden)]
    fn merge_span(
        &mut self,
        _whole: &Bytes,
        cursor: &mut Cursor,
        offset: usize,
        len: usize,
    ) -> Result<(), Malformed> {
        cursor.seek(offset)?;
        self.merge((&mut cursor.bytes).take(len))?;
        cursor.at = offset + len;
        Ok(())
    }
}

impl SpanMerge for proto::TensorProto {}
impl SpanMerge for proto::ValueInfoProto {}
impl SpanMerge for proto::SparseTensorProto {}

impl SpanMerge for proto::NodeProto {
    /// Nodes are the bulk of large graphs and mostly strings: their string
    /// fields are read straight from the slice; everything else (attributes,
    /// metadata, device configurations, unknown fields) goes through prost.
    fn merge_span(
        &mut self,
        whole: &Bytes,
        cursor: &mut Cursor,
        offset: usize,
        len: usize,
    ) -> Result<(), Malformed> {
        use prost::encoding::{DecodeContext, WireType};
        let end = offset
            .checked_add(len)
            .filter(|&e| e <= whole.len())
            .ok_or_else(|| Malformed("node span past the buffer".into()))?;
        let buf = &whole[offset..end];
        let mut pos = 0usize;
        while pos < buf.len() {
            let key = slice_varint(buf, &mut pos)?;
            let tag =
                u32::try_from(key >> 3).map_err(|_| Malformed("field number overflows".into()))?;
            let wire = key & 7;
            if wire == wire_type::LEN && proto::is_string_field(u64::from(tag)) {
                let n = usize::try_from(slice_varint(buf, &mut pos)?)
                    .map_err(|_| Malformed("length overflows".into()))?;
                let text = buf
                    .get(pos..pos.saturating_add(n))
                    .ok_or_else(|| Malformed("string past the end".into()))?;
                let text = proto::Str::from(utf8(text)?);
                pos += n;
                self.set_string(tag, text);
            } else {
                let wire_type =
                    WireType::try_from(wire).map_err(|_| Malformed("invalid wire type".into()))?;
                use fields::node_proto::ATTRIBUTE;
                if tag == ATTRIBUTE && self.attribute.capacity() == 0 {
                    // Room for exactly the node's attributes: a Vec grows to
                    // four slots for its first element otherwise.
                    self.attribute
                        .reserve_exact(count_field(buf, pos, ATTRIBUTE));
                }
                cursor.seek(offset + pos)?;
                let before = cursor.bytes.remaining();
                let mut limited = (&mut cursor.bytes).take(len - pos);
                self.merge_field(tag, wire_type, &mut limited, DecodeContext::default())?;
                let used = before - cursor.bytes.remaining();
                cursor.at += used;
                pos += used;
            }
        }
        Ok(())
    }
}

/// `text` as a `&str`. Names are nearly always ASCII and short, where a
/// plain ASCII test costs a fraction of the general validation (callgrind,
/// 200k-node graph: 63M instructions in `from_utf8` before); anything else
/// takes the full UTF-8 check.
#[inline]
pub(crate) fn utf8(text: &[u8]) -> Result<&str, Malformed> {
    if text.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(text) });
    }
    std::str::from_utf8(text).map_err(|_| Malformed("invalid UTF-8".into()))
}

/// How many times the length-delimited field `number` occurs at the top
/// level of the message in `buf`, from `pos` on (which is at the value of
/// one occurrence: that one is counted).
fn count_field(buf: &[u8], mut pos: usize, number: u32) -> usize {
    let mut count = 1;
    let skip_value = |pos: &mut usize, wire: u64| -> Option<()> {
        match wire {
            wire_type::VARINT => {
                slice_varint(buf, pos).ok()?;
            }
            wire_type::FIXED64 => *pos = pos.checked_add(8)?,
            wire_type::LEN => {
                let n = usize::try_from(slice_varint(buf, pos).ok()?).ok()?;
                *pos = pos.checked_add(n)?;
            }
            wire_type::FIXED32 => *pos = pos.checked_add(4)?,
            _ => return None,
        }
        Some(())
    };
    // Skip the value of the occurrence `pos` is at.
    if skip_value(&mut pos, wire_type::LEN).is_none() {
        return count;
    }
    while pos < buf.len() {
        let Ok(key) = slice_varint(buf, &mut pos) else {
            break;
        };
        if key == schema::key(number, wire_type::LEN) {
            count += 1;
        }
        if skip_value(&mut pos, key & 7).is_none() {
            break;
        }
    }
    count
}

/// A varint from a slice (the scan has already checked it).
#[inline]
fn slice_varint(buf: &[u8], pos: &mut usize) -> Result<u64, Malformed> {
    varint::read(buf, pos, buf.len()).map_err(|_| Malformed("bad varint".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_keeps_bytes_zero_copy() {
        let tensor = proto::TensorProto {
            name: Some("w".into()),
            dims: vec![2, 2],
            data_type: Some(1),
            raw_data: Some(Bytes::from(vec![0u8; 16])),
            ..Default::default()
        };
        let model = proto::ModelProto {
            ir_version: Some(10),
            graph: Some(proto::GraphProto {
                initializer: vec![tensor],
                ..Default::default()
            }),
            ..Default::default()
        };
        let buf = Bytes::from(model.encode_to_vec());
        let range = buf.as_ptr_range();
        let decoded: proto::ModelProto =
            decode(buf.clone(), &DecodeOptions::default()).expect("decode");
        assert_eq!(decoded, model);
        let raw = decoded
            .graph
            .as_ref()
            .and_then(|g| g.initializer[0].raw_data.as_ref())
            .expect("raw");
        assert!(
            range.contains(&raw.as_ptr()),
            "raw_data must point into the source buffer"
        );
    }

    #[test]
    fn projection_covers_string_lists() {
        // One node with 100k empty inputs: 2 bytes each on the wire, a
        // 24-byte CompactString slot each in memory, in a SmallVec grown to
        // the next power of two: the projection is that capacity, exactly.
        let node = [0x0a, 0x00].repeat(100_000);
        let stats = scan::scan(&node, ids::NODE_PROTO, DEFAULT_MAX_DEPTH).expect("scan");
        let decoded: proto::NodeProto =
            decode(Bytes::from(node), &DecodeOptions::default()).expect("decode");
        assert_eq!(decoded.input.len(), 100_000);
        assert_eq!(decoded.input.capacity(), 131_072);
        assert_eq!(
            stats.heap,
            (decoded.input.capacity() * std::mem::size_of::<proto::Str>()) as u64
        );
    }

    #[test]
    fn memory_budget_refuses_bombs() {
        // 100k empty nodes: 2 bytes each on the wire, hundreds in memory.
        let mut graph = Vec::new();
        for _ in 0..100_000 {
            graph.extend_from_slice(&[0x0a, 0x00]);
        }
        let mut model = vec![0x3a];
        let mut len = graph.len();
        while len >= 0x80 {
            model.push((len as u8) | 0x80);
            len >>= 7;
        }
        model.push(len as u8);
        model.extend_from_slice(&graph);
        let opts = DecodeOptions {
            max_memory: Some(4 << 20),
            ..Default::default()
        };
        let err = decode::<proto::ModelProto>(Bytes::from(model), &opts).expect_err("bomb");
        assert!(matches!(err.kind, DecodeErrorKind::MemoryBudget { .. }));
    }
}
