//! Saving a model with its weights moved to one external data file, as
//! `onnx.save_model(onnx.load(path), out, save_as_external_data=True,
//! all_tensors_to_one_file=True, location=..., size_threshold=...,
//! convert_attribute=...)` writes them: the same tensors chosen, in the same
//! order, at the same offsets, so both files come out byte for byte as
//! onnx's.
//!
//! onnx's rules, which this follows:
//! - the tensors considered are its `_get_all_tensors`: each graph's
//!   initializers, then those of its subgraphs (a node attribute whose
//!   declared `type` is GRAPH or GRAPHS), depth first; then the attribute
//!   tensors (`t`, `tensors`) of the main graph's nodes, their subgraphs'
//!   and the functions' nodes. Sparse tensors are not among them;
//! - a tensor is moved when it has `raw_data` and `sys.getsizeof(raw_data)`
//!   (its length plus the 33-byte header of a CPython `bytes` object) is at
//!   least `size_threshold`; attribute tensors only with `convert_attribute`;
//! - the moved tensors are written one after another from offset 0, with no
//!   padding, and each gets the entries `location`, `offset`, `length`.
//!
//! Beyond onnx, `alignment` (a power of two) starts each moved tensor of at
//! least that many bytes at a multiple of it, zeros before it (4096: each
//! on pages of its own, which a runtime can map without its neighbours);
//! smaller tensors stay packed.
//!
//! External tensors of the source are first made inline, as `onnx.load`
//! does by default ([`super::inline_all`]), so a moved tensor's bytes come
//! from the source's data files (slices of their maps, never copied).

use bytes::Bytes;

use crate::proto::{
    attribute_proto::AttributeType, tensor_proto::DataLocation, AttributeProto, GraphProto,
    ModelProto, NodeProto, StringStringEntryProto, TensorProto,
};

/// What `sys.getsizeof` adds to a `bytes` object's length (CPython, 64-bit):
/// onnx compares that sum with `size_threshold`.
pub const BYTES_OBJECT_OVERHEAD: u64 = 33;

/// Where and which tensors go (onnx's `save_model` arguments).
#[derive(Debug, Clone, Copy)]
pub struct ExternalSave<'a> {
    /// The data file, relative to the saved model's folder.
    pub location: &'a str,
    /// onnx's `size_threshold` (a negative one moves every tensor with
    /// `raw_data`).
    pub size_threshold: i64,
    /// Move attribute tensors (`Constant`'s value, ...) too.
    pub convert_attribute: bool,
    /// Offsets of moved tensors of at least this many bytes are multiples
    /// of it (a power of two; 1: packed, as onnx writes them).
    pub alignment: u64,
}

/// The largest `alignment` taken (1 GiB).
pub const MAX_ALIGNMENT: u64 = 1 << 30;

/// Zeros that padding chunks are slices of.
static ZEROS: [u8; 64 << 10] = [0; 64 << 10];

impl ExternalSave<'_> {
    fn moves(&self, raw: &Bytes) -> bool {
        let size = i128::from(raw.len() as u64) + i128::from(BYTES_OBJECT_OVERHEAD);
        size >= i128::from(self.size_threshold)
    }
}

/// Rewrites the tensors of `model` (whose external tensors are inline
/// already) that `how` moves: their `raw_data` taken out, `data_location`
/// EXTERNAL and `external_data` naming `how.location` at their offset.
/// Returns the data file's chunks in order (the moved bytes, and zeros
/// where `how.alignment` pads): the file is their concatenation.
///
/// `how.alignment` must be a power of two no larger than [`MAX_ALIGNMENT`]
/// (callers check; anything else is taken as 1).
pub fn move_to_external(model: &mut ModelProto, how: &ExternalSave<'_>) -> Vec<Bytes> {
    let mut chunks = Vec::new();
    let mut offset: u64 = 0;
    let alignment = match how.alignment {
        a if a.is_power_of_two() && a <= MAX_ALIGNMENT => a,
        _ => 1,
    };
    let mut visit = |t: &mut TensorProto, is_initializer: bool| {
        if !(is_initializer || how.convert_attribute) {
            return;
        }
        let Some(raw) = t.raw_data.take_if(|raw| how.moves(raw)) else {
            return;
        };
        let length = raw.len() as u64;
        if alignment > 1 && length >= alignment {
            let mut pad = offset.next_multiple_of(alignment) - offset;
            offset += pad;
            while pad > 0 {
                let n = pad.min(ZEROS.len() as u64);
                chunks.push(Bytes::from_static(&ZEROS[..n as usize]));
                pad -= n;
            }
        }
        t.data_location = Some(DataLocation::External as i32);
        t.external_data = vec![
            entry("location", how.location.to_string()),
            entry("offset", offset.to_string()),
            entry("length", length.to_string()),
        ];
        // The data of a model in memory fits in the address space, so the
        // running sum of its lengths fits in 64 bits.
        offset = offset.saturating_add(length);
        chunks.push(raw);
    };
    if let Some(graph) = model.graph.as_mut() {
        initializers(graph, &mut |t| visit(t, true));
        attribute_tensors(&mut graph.node, &mut |t| visit(t, false));
    }
    for function in &mut model.functions {
        attribute_tensors(&mut function.node, &mut |t| visit(t, false));
    }
    chunks
}

fn entry(key: &str, value: String) -> StringStringEntryProto {
    StringStringEntryProto {
        key: Some(key.to_string()),
        value: Some(value),
    }
}

/// The subgraphs onnx follows from an attribute: by its declared type.
fn subgraphs(a: &mut AttributeProto) -> &mut [GraphProto] {
    match a.r#type() {
        AttributeType::Graph => a.g_mut().map(std::slice::from_mut).unwrap_or_default(),
        AttributeType::Graphs => a.graphs_mut(),
        _ => &mut [],
    }
}

/// A graph's initializers, then its subgraphs' (onnx's
/// `_get_initializer_tensors_from_graph`). Nesting is bounded by decoding.
fn initializers(g: &mut GraphProto, f: &mut dyn FnMut(&mut TensorProto)) {
    for t in &mut g.initializer {
        f(t);
    }
    for node in &mut g.node {
        for a in &mut node.attribute {
            for sub in subgraphs(a) {
                initializers(sub, f);
            }
        }
    }
}

/// The attribute tensors of `nodes` and of their subgraphs' nodes (onnx's
/// `_get_attribute_tensors_from_graph`).
fn attribute_tensors(nodes: &mut [NodeProto], f: &mut dyn FnMut(&mut TensorProto)) {
    for node in nodes {
        for a in &mut node.attribute {
            if let Some(t) = a.t_mut() {
                f(t);
            }
            for t in a.tensors_mut() {
                f(t);
            }
            for sub in subgraphs(a) {
                attribute_tensors(&mut sub.node, f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{FunctionProto, NodeProto};

    fn tensor(name: &str, len: usize) -> TensorProto {
        TensorProto {
            name: Some(name.into()),
            dims: vec![len as i64],
            data_type: Some(2),
            raw_data: Some(Bytes::from(vec![name.as_bytes()[0]; len])),
            ..Default::default()
        }
    }

    fn attribute_with(t: TensorProto) -> AttributeProto {
        let mut a = AttributeProto {
            name: Some("value".into()),
            ..Default::default()
        };
        a.set_type(AttributeType::Tensor);
        a.extras_mut().t = Some(Box::new(t));
        a
    }

    fn graph_attribute(g: GraphProto, declared: AttributeType) -> AttributeProto {
        let mut a = AttributeProto {
            name: Some("body".into()),
            ..Default::default()
        };
        a.set_type(declared);
        a.extras_mut().g = Some(Box::new(g));
        a
    }

    fn node(attribute: Vec<AttributeProto>) -> NodeProto {
        NodeProto {
            op_type: Some("X".into()),
            attribute,
            ..Default::default()
        }
    }

    fn of_initializers(initializer: Vec<TensorProto>) -> ModelProto {
        ModelProto {
            graph: Some(GraphProto {
                initializer,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn locations(chunks: &[Bytes]) -> Vec<u8> {
        chunks.iter().map(|c| c[0]).collect()
    }

    #[test]
    fn onnx_order_and_threshold() {
        let sub = GraphProto {
            initializer: vec![tensor("s", 100)],
            node: vec![node(vec![attribute_with(tensor("c", 100))])],
            ..Default::default()
        };
        // A graph attribute declared as a tensor one: onnx does not follow it.
        let hidden = GraphProto {
            initializer: vec![tensor("h", 100)],
            ..Default::default()
        };
        let mut model = ModelProto {
            graph: Some(GraphProto {
                initializer: vec![tensor("a", 100), tensor("b", 66), tensor("d", 67)],
                node: vec![
                    node(vec![attribute_with(tensor("k", 100))]),
                    node(vec![
                        graph_attribute(sub, AttributeType::Graph),
                        graph_attribute(hidden, AttributeType::Tensor),
                    ]),
                ],
                ..Default::default()
            }),
            functions: vec![FunctionProto {
                node: vec![node(vec![attribute_with(tensor("f", 100))])],
                ..Default::default()
            }],
            ..Default::default()
        };
        let how = ExternalSave {
            location: "w.bin",
            size_threshold: 100,
            convert_attribute: false,
            alignment: 1,
        };
        // 66 + 33 < 100 <= 67 + 33.
        let chunks = move_to_external(&mut model.clone(), &how);
        assert_eq!(locations(&chunks), b"ads");
        let all = ExternalSave {
            convert_attribute: true,
            ..how
        };
        let chunks = move_to_external(&mut model, &all);
        assert_eq!(locations(&chunks), b"adskcf");
        let d = &model.graph.as_ref().unwrap().initializer[2];
        assert_eq!(d.raw_data, None);
        assert_eq!(d.data_location, Some(DataLocation::External as i32));
        let entries: Vec<(&str, &str)> = d
            .external_data
            .iter()
            .map(|e| (e.key(), e.value()))
            .collect();
        assert_eq!(
            entries,
            [("location", "w.bin"), ("offset", "100"), ("length", "67")]
        );
        let b = &model.graph.as_ref().unwrap().initializer[1];
        assert!(b.raw_data.is_some() && b.external_data.is_empty());
    }

    #[test]
    fn negative_threshold_and_empty_raw_data() {
        let mut model = ModelProto::default();
        assert!(move_to_external(
            &mut model,
            &ExternalSave {
                location: "w",
                size_threshold: -1,
                convert_attribute: true,
                alignment: 1,
            }
        )
        .is_empty());
        assert_eq!(model, ModelProto::default());
        let mut model = of_initializers(vec![tensor("e", 0)]);
        model.graph.as_mut().unwrap().initializer[0].raw_data = Some(Bytes::new());
        let chunks = move_to_external(
            &mut model,
            &ExternalSave {
                location: "w",
                size_threshold: 0,
                convert_attribute: false,
                alignment: 1,
            },
        );
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].is_empty());
    }

    #[test]
    fn alignment_pads_large_tensors_only() {
        let mut model = of_initializers(vec![
            tensor("a", 100),
            tensor("b", 5000),
            tensor("c", 10),
            tensor("d", 70_000),
        ]);
        let how = ExternalSave {
            location: "w",
            size_threshold: 0,
            convert_attribute: false,
            alignment: 4096,
        };
        let chunks = move_to_external(&mut model, &how);
        let file: Vec<u8> = chunks.concat();
        let offsets: Vec<(String, u64, u64)> = model
            .graph
            .as_ref()
            .unwrap()
            .initializer
            .iter()
            .map(|t| {
                let get = |k: &str| {
                    t.external_data
                        .iter()
                        .find(|e| e.key() == k)
                        .unwrap()
                        .value()
                        .parse::<u64>()
                        .unwrap()
                };
                (t.name().to_string(), get("offset"), get("length"))
            })
            .collect();
        // a packed at 0; b (at least 4096 bytes) at 4096; c packed after b;
        // d at the next multiple of 4096.
        assert_eq!(offsets[0], ("a".into(), 0, 100));
        assert_eq!(offsets[1], ("b".into(), 4096, 5000));
        assert_eq!(offsets[2], ("c".into(), 9096, 10));
        assert_eq!(offsets[3], ("d".into(), 12288, 70_000));
        assert_eq!(file.len(), 12288 + 70_000);
        assert!(file[100..4096].iter().all(|&b| b == 0));
        assert!(file[9106..12288].iter().all(|&b| b == 0));
        assert_eq!(&file[4096..9096], &[b'b'; 5000][..]);
        // A padding longer than the zero buffer, and a refused alignment.
        let mut model = of_initializers(vec![tensor("x", 1), tensor("y", 1 << 17)]);
        let wide = ExternalSave {
            alignment: 1 << 17,
            ..how
        };
        let file = move_to_external(&mut model, &wide).concat();
        assert_eq!(file.len(), (1 << 17) * 2);
        let mut model = of_initializers(vec![tensor("x", 1), tensor("y", 5000)]);
        let odd = ExternalSave {
            alignment: 3000,
            ..how
        };
        assert_eq!(move_to_external(&mut model, &odd).concat().len(), 5001);
    }
}
