//! Decoding entry points: scan, budget, then prost.

use bytes::Bytes;
use prost::Message;

use crate::error::{DecodeError, DecodeErrorKind};
use crate::proto;
use crate::schema::{ids, MESSAGES, STRUCT_SIZES};
use crate::wire::{self, ScanStats, DEFAULT_MAX_DEPTH};

/// Limits applied while decoding untrusted bytes.
#[derive(Debug, Clone, Copy)]
pub struct DecodeOptions {
    /// Deepest message nesting accepted (the root is depth 0).
    pub max_depth: usize,
    /// Upper bound on the memory the decoded message may take, in bytes;
    /// `None` means no bound.
    pub max_memory: Option<u64>,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            max_memory: None,
        }
    }
}

/// A message type that can be decoded on its own from a buffer.
pub trait RootMessage: Message + Default + Sized {
    /// Its index in the schema table.
    const SCHEMA: usize;
}

macro_rules! roots {
    ($($ty:ty => $id:expr),* $(,)?) => {
        $(impl RootMessage for $ty { const SCHEMA: usize = $id; })*
    };
}

roots! {
    proto::ModelProto => ids::MODEL_PROTO,
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
    let stats = wire::scan(&buf, M::SCHEMA, options.max_depth)?;
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
    M::decode(buf).map_err(|e| DecodeError {
        offset: 0,
        path: String::new(),
        root: MESSAGES[M::SCHEMA].name,
        kind: DecodeErrorKind::Internal { detail: e.to_string() },
    })
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
        let decoded: proto::ModelProto = decode(buf.clone(), &DecodeOptions::default()).expect("decode");
        assert_eq!(decoded, model);
        let raw = decoded.graph.as_ref().and_then(|g| g.initializer[0].raw_data.as_ref()).expect("raw");
        assert!(range.contains(&raw.as_ptr()), "raw_data must point into the source buffer");
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
