//! Decoding entry points: scan, budget, then prost.

use bytes::{Buf, Bytes};
use prost::Message;

use crate::error::{DecodeError, DecodeErrorKind};
use crate::proto;
use crate::schema::{ids, MESSAGES, STRUCT_SIZES};
use crate::source::{PageReleaser, RELEASE_WINDOW};
use crate::wire::{self, ScanStats, DEFAULT_MAX_DEPTH};

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

    /// Decodes `buf` into `self` (protobuf merge semantics).
    fn merge_from(
        &mut self,
        buf: Bytes,
        _pages: Option<&PageReleaser>,
    ) -> Result<(), prost::DecodeError> {
        self.merge(buf)
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
        pages: Option<&PageReleaser>,
    ) -> Result<(), prost::DecodeError> {
        merge_model(self, buf, pages)
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

/// Rough upper bound of the heap a decoded message takes, from scan counts.
///
/// Each message costs its struct size (held in a parent `Vec`, which may have
/// up to twice the capacity it needs), each repeated element a slot, and each
/// string its bytes. Bytes fields are slices of the source: no heap.
pub fn projected_memory(stats: &ScanStats) -> u64 {
    let structs: u64 = stats
        .messages
        .iter()
        .zip(STRUCT_SIZES.iter())
        .map(|(&n, &size)| n.saturating_mul(size as u64))
        .fold(0u64, u64::saturating_add);
    structs
        .saturating_mul(2)
        .saturating_add(stats.repeated_elements.saturating_mul(2 * 8))
        .saturating_add(stats.string_bytes.saturating_mul(2))
}

/// Decodes `buf` as an `M`, zero-copy for bytes fields.
pub fn decode<M: RootMessage>(buf: Bytes, options: &DecodeOptions) -> Result<M, DecodeError> {
    let stats = wire::scan_releasing(&buf, M::SCHEMA, options.max_depth, options.pages.as_ref())?;
    if let Some(budget) = options.max_memory {
        let projected = projected_memory(&stats);
        if projected > budget {
            return Err(DecodeError {
                offset: 0,
                path: String::new(),
                root: MESSAGES[M::SCHEMA].name,
                kind: DecodeErrorKind::MemoryBudget { projected, budget },
            });
        }
    }
    let scanned = buf.clone();
    let mut message = M::default();
    let merged = message.merge_from(buf, options.pages.as_ref());
    if let Some(pages) = &options.pages {
        pages.release_all();
    }
    merged.map(|()| message).map_err(|e| {
        // The fast scan checks framing only; prost also checks UTF-8. Locate
        // whatever prost refused.
        wire::diagnose(&scanned, M::SCHEMA, options.max_depth).unwrap_or_else(|| DecodeError {
            offset: 0,
            path: String::new(),
            root: MESSAGES[M::SCHEMA].name,
            kind: DecodeErrorKind::Internal {
                detail: e.to_string(),
            },
        })
    })
}

/// Decodes a model like prost would, except that the main graph's nodes and
/// initializers (independent messages) are decoded in parallel when numerous.
fn merge_model(
    model: &mut proto::ModelProto,
    mut buf: Bytes,
    pages: Option<&PageReleaser>,
) -> Result<(), prost::DecodeError> {
    use prost::encoding::{decode_key, DecodeContext, WireType};
    let base = buf.as_ptr() as usize;
    while buf.has_remaining() {
        let (tag, wire_type) = decode_key(&mut buf)?;
        if tag == 7 && wire_type == WireType::LengthDelimited {
            let len = length_prefix(&mut buf)?;
            let offset = buf.as_ptr() as usize - base;
            let body = buf.split_to(len);
            merge_graph(
                model.graph.get_or_insert_with(Default::default),
                body,
                offset,
                pages,
            )?;
        } else {
            model.merge_field(tag, wire_type, &mut buf, DecodeContext::default())?;
        }
    }
    Ok(())
}

/// Reads a length prefix and checks it against what is left.
fn length_prefix(buf: &mut Bytes) -> Result<usize, prost::DecodeError> {
    let len = prost::encoding::decode_varint(buf)?;
    match usize::try_from(len) {
        Ok(len) if len <= buf.remaining() => Ok(len),
        // Unreachable after a successful scan; prost's own wording.
        _ => prost::Message::decode(&[0x0a_u8, 0x05][..]).map(|_: proto::NodeProto| 0),
    }
}

/// Where each value of one repeated message field sits in a buffer.
struct Spans(Vec<(usize, usize)>);

/// `offset`: where the graph starts in the mapped buffer (for releasing pages).
fn merge_graph(
    graph: &mut proto::GraphProto,
    mut buf: Bytes,
    offset: usize,
    pages: Option<&PageReleaser>,
) -> Result<(), prost::DecodeError> {
    use prost::encoding::{decode_key, DecodeContext, WireType};
    let whole = buf.clone();
    let mut nodes = Spans(Vec::new());
    let mut inits = Spans(Vec::new());
    let mut released = 0usize;
    while buf.has_remaining() {
        let here = whole.len() - buf.remaining();
        if here - released >= RELEASE_WINDOW {
            if let Some(pages) = pages {
                pages.release(offset + released, offset + here);
            }
            released = here;
        }
        let (tag, wire_type) = decode_key(&mut buf)?;
        if (tag == 1 || tag == 5) && wire_type == WireType::LengthDelimited {
            let len = length_prefix(&mut buf)?;
            let offset = whole.len() - buf.remaining();
            buf.advance(len);
            if tag == 1 {
                nodes.0.push((offset, len));
            } else {
                inits.0.push((offset, len));
            }
        } else {
            graph.merge_field(tag, wire_type, &mut buf, DecodeContext::default())?;
        }
    }
    let release = pages.map(|p| (p, offset));
    decode_spans(&whole, &nodes, &mut graph.node, release)?;
    decode_spans(&whole, &inits, &mut graph.initializer, release)?;
    Ok(())
}

/// Decodes the messages at `spans` of `whole` and appends them to `out`, in
/// order, on several threads when there are many. Each thread walks one
/// clone of `whole`, so bytes fields stay zero-copy slices and no reference
/// count is touched per message.
fn decode_spans<M: Message + Default + Send>(
    whole: &Bytes,
    spans: &Spans,
    out: &mut Vec<M>,
    release: Option<(&PageReleaser, usize)>,
) -> Result<(), prost::DecodeError> {
    use rayon::prelude::*;
    let spans = &spans.0;
    let start = out.len();
    out.resize_with(start + spans.len(), M::default);
    let slots = &mut out[start..];
    let run = |slots: &mut [M], spans: &[(usize, usize)]| -> Result<(), prost::DecodeError> {
        let mut cursor = whole.clone();
        let mut consumed = 0;
        let mut released = spans.first().map_or(0, |s| s.0);
        for (slot, &(offset, len)) in slots.iter_mut().zip(spans) {
            cursor.advance(offset - consumed);
            slot.merge((&mut cursor).take(len))?;
            consumed = offset + len;
            if let Some((pages, base)) = release {
                if consumed - released >= RELEASE_WINDOW {
                    pages.release(base + released, base + consumed);
                    released = consumed;
                }
            }
        }
        Ok(())
    };
    if spans.len() < PARALLEL_MIN {
        return run(slots, spans);
    }
    let chunk = spans
        .len()
        .div_ceil(rayon::current_num_threads() * 4)
        .max(256);
    slots
        .par_chunks_mut(chunk)
        .zip(spans.par_chunks(chunk))
        .try_for_each(|(slots, spans)| run(slots, spans))
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
