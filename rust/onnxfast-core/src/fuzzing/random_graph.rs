//! Random graphs of real operators for the inference engine: every schema
//! of every domain and version, with inputs of odd types and shapes (rank 0
//! to 6, dims of 0, -1, 2^63 - 1, symbols, unknown), attributes of the right
//! and wrong values (axes out of range, huge ints, empty lists), constant
//! inputs with extreme values, subgraph attributes. The bytes are read as a
//! stream of choices, so a fuzzer can steer them and a PRNG can fill them.

use crate::opset::{OpSchema, SchemaRegistry};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{
    tensor_shape_proto, type_proto, AttributeProto, GraphProto, ModelProto, NodeProto,
    OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};

/// Choices read from the input bytes (zeros once they run out).
pub struct Choices<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Choices<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Choices { data, pos: 0 }
    }

    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let v = (usize::from(self.byte()) << 8) | usize::from(self.byte());
        v % n
    }

    fn pick<'t, T>(&mut self, items: &'t [T]) -> Option<&'t T> {
        items.get(self.below(items.len()))
    }

    fn chance(&mut self, in_256: u8) -> bool {
        self.byte() < in_256
    }
}

const INTS: &[i64] = &[
    0,
    1,
    2,
    3,
    4,
    -1,
    -2,
    7,
    64,
    i64::MAX,
    i64::MIN,
    i64::MAX - 1,
    1 << 32,
    -(1 << 31),
];
const DIMS: &[i64] = &[1, 2, 3, 4, 0, 5, 8, -1, i64::MAX, 1 << 40];
const ELEMS: &[i32] = &[1, 7, 6, 9, 10, 11, 2, 3, 8, 16, 0, 17, 21, 29, 1000];
const FLOATS: &[f32] = &[0.0, 1.0, -1.0, 0.5, f32::NAN, f32::INFINITY, 1e30];
const WORDS: &[&str] = &[
    "NOTSET",
    "SAME_UPPER",
    "SAME_LOWER",
    "VALID",
    "constant",
    "reflect",
    "edge",
    "wrap",
    "nearest",
    "linear",
    "cubic",
    "half_pixel",
    "asymmetric",
    "round_prefer_floor",
    "DCR",
    "CRD",
    "forward",
    "bidirectional",
    "ij,jk->ik",
    "...ii->...i",
    "i1->i",
    "",
    "bogus",
];
const SUB_OPS: &[&str] = &["Identity", "Relu", "Not", "Add", "Shape", "Cast"];

fn dim(c: &mut Choices<'_>) -> tensor_shape_proto::Dimension {
    use tensor_shape_proto::dimension::Value;
    let value = match c.below(8) {
        0 => Some(Value::DimParam(
            if c.chance(128) { "N" } else { "M" }.into(),
        )),
        1 => None,
        _ => Some(Value::DimValue(*c.pick(DIMS).unwrap_or(&1))),
    };
    tensor_shape_proto::Dimension {
        denotation: None,
        value,
    }
}

fn tensor_type(c: &mut Choices<'_>, elem: i32) -> TypeProto {
    let shape = (!c.chance(24)).then(|| TensorShapeProto {
        dim: (0..c.below(7)).map(|_| dim(c)).collect(),
    });
    TypeProto {
        denotation: None,
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem),
            shape,
        })),
    }
}

fn value_type(c: &mut Choices<'_>) -> TypeProto {
    // Now and then a type that sets nothing (onnx's rules read a type of
    // no kind, not a missing one).
    if c.chance(6) {
        return TypeProto::default();
    }
    let elem = *c.pick(ELEMS).unwrap_or(&1);
    let t = tensor_type(c, elem);
    let value = match c.below(12) {
        0 => type_proto::Value::SequenceType(Box::new(type_proto::Sequence {
            elem_type: Some(Box::new(t)),
        })),
        1 => type_proto::Value::OptionalType(Box::new(type_proto::Optional {
            elem_type: Some(Box::new(t)),
        })),
        2 => type_proto::Value::MapType(Box::new(type_proto::Map {
            key_type: Some(if c.chance(128) { 7 } else { 8 }),
            value_type: Some(Box::new(tensor_type(c, 1))),
        })),
        _ => return t,
    };
    TypeProto {
        denotation: None,
        value: Some(value),
    }
}

fn int_tensor(c: &mut Choices<'_>, name: &str) -> TensorProto {
    let n = c.below(5);
    let scalar = n == 1 && c.chance(64);
    TensorProto {
        name: Some(name.into()),
        data_type: Some(7),
        dims: if scalar { Vec::new() } else { vec![n as i64] },
        int64_data: (0..n).map(|_| *c.pick(INTS).unwrap_or(&0)).collect(),
        ..TensorProto::default()
    }
}

fn vi(name: &str, t: Option<TypeProto>) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: t,
        ..ValueInfoProto::default()
    }
}

fn bytes(word: &str) -> bytes::Bytes {
    bytes::Bytes::copy_from_slice(word.as_bytes())
}

fn attribute(c: &mut Choices<'_>, name: &str, kind: i32, depth: usize) -> AttributeProto {
    let mut a = AttributeProto {
        name: Some(name.into()),
        r#type: Some(kind),
        ..AttributeProto::default()
    };
    match AttributeType::try_from(kind) {
        Ok(AttributeType::Int) => a.i = Some(*c.pick(INTS).unwrap_or(&0)),
        Ok(AttributeType::Float) => a.f = Some(*c.pick(FLOATS).unwrap_or(&0.0)),
        Ok(AttributeType::String) => a.s = Some(bytes(c.pick(WORDS).unwrap_or(&""))),
        Ok(AttributeType::Ints) => {
            a.ints = (0..c.below(6))
                .map(|_| *c.pick(INTS).unwrap_or(&0))
                .collect();
        }
        Ok(AttributeType::Floats) => a.floats = (0..c.below(4)).map(|i| i as f32 * 0.5).collect(),
        Ok(AttributeType::Strings) => {
            a.extras_mut().strings = (0..c.below(3))
                .map(|_| bytes(c.pick(WORDS).unwrap_or(&"")))
                .collect();
        }
        Ok(AttributeType::Tensor) => {
            let mut t = int_tensor(c, "");
            if c.chance(96) {
                t.data_type = Some(1);
                t.float_data = t.int64_data.iter().map(|&v| v as f32).collect();
                t.int64_data.clear();
            }
            a.extras_mut().t = Some(Box::new(t));
        }
        Ok(AttributeType::Graph) if depth < 3 => {
            a.extras_mut().g = Some(Box::new(subgraph(c, depth + 1)))
        }
        Ok(AttributeType::TypeProto) => a.extras_mut().tp = Some(Box::new(value_type(c))),
        _ => {}
    }
    a
}

/// A small graph for a GRAPH attribute: inputs (maybe untyped), a node of a
/// common operator, outputs (maybe passing an input through).
fn subgraph(c: &mut Choices<'_>, depth: usize) -> GraphProto {
    let inputs = c.below(4);
    let mut g = GraphProto {
        name: Some(format!("sub{depth}")),
        ..GraphProto::default()
    };
    for i in 0..inputs {
        let t = c.chance(192).then(|| value_type(c));
        g.input.push(vi(&format!("s{depth}_{i}"), t));
    }
    // With no input of its own, the subgraph reads an outer value.
    let source = if inputs > 0 {
        format!("s{depth}_0")
    } else {
        "x0".to_string()
    };
    let op = *c.pick(SUB_OPS).unwrap_or(&"Identity");
    let out = format!("o{depth}");
    let mut n = NodeProto {
        op_type: Some(op.into()),
        input: [source.as_str().into()].into_iter().collect(),
        output: [out.as_str().into()].into_iter().collect(),
        ..NodeProto::default()
    };
    if op == "Add" {
        n.input.push(source.as_str().into());
    }
    if op == "Cast" {
        n.attribute
            .push(attribute(c, "to", AttributeType::Int as i32, depth));
    }
    g.node.push(n);
    for k in 0..c.below(3) {
        let name = if k == 0 { &out } else { &source };
        let t = c.chance(96).then(|| value_type(c));
        g.output.push(vi(name, t));
    }
    g
}

/// onnxruntime's operators (`contrib_ops`): domain, operator, input
/// counts (least, most), outputs, attributes.
type ContribOp = (
    &'static str,
    &'static str,
    (usize, usize),
    usize,
    &'static [(&'static str, AttributeType)],
);

const CONTRIB: &[ContribOp] = {
    use AttributeType::{Float, Floats, Graph, Int, Ints, String};
    &[
        (
            "com.microsoft",
            "SkipLayerNormalization",
            (3, 5),
            4,
            &[("epsilon", Float)],
        ),
        (
            "com.microsoft",
            "SkipSimplifiedLayerNormalization",
            (3, 4),
            4,
            &[],
        ),
        ("com.microsoft", "FastGelu", (1, 2), 1, &[]),
        ("com.microsoft", "BiasGelu", (2, 2), 1, &[]),
        ("com.microsoft", "Gelu", (1, 1), 1, &[]),
        ("com.microsoft", "QuickGelu", (1, 1), 1, &[("alpha", Float)]),
        ("com.microsoft", "BiasAdd", (3, 3), 1, &[]),
        (
            "com.microsoft",
            "GroupNorm",
            (3, 3),
            1,
            &[("groups", Int), ("activation", Int), ("channels_last", Int)],
        ),
        ("com.microsoft", "QLinearMul", (7, 8), 1, &[]),
        ("com.microsoft", "QLinearSigmoid", (4, 5), 1, &[]),
        (
            "com.microsoft",
            "QLinearLeakyRelu",
            (4, 5),
            1,
            &[("alpha", Float)],
        ),
        (
            "com.microsoft",
            "QLinearSoftmax",
            (4, 5),
            1,
            &[("axis", Int), ("opset", Int)],
        ),
        ("com.microsoft", "DynamicQuantizeMatMul", (3, 5), 1, &[]),
        ("com.microsoft", "MoE", (5, 8), 1, &[("k", Int)]),
        (
            "com.microsoft.nchwc",
            "ReorderInput",
            (1, 1),
            1,
            &[("channels_last", Int)],
        ),
        (
            "com.microsoft.nchwc",
            "ReorderOutput",
            (1, 1),
            1,
            &[("channels", Int), ("channels_last", Int)],
        ),
        (
            "com.microsoft.nchwc",
            "Conv",
            (2, 4),
            1,
            &[("pads", Ints), ("strides", Ints)],
        ),
        (
            "com.microsoft.nchwc",
            "MaxPool",
            (1, 1),
            1,
            &[("kernel_shape", Ints), ("ceil_mode", Int)],
        ),
        (
            "com.microsoft.nchwc",
            "AveragePool",
            (1, 1),
            1,
            &[("kernel_shape", Ints), ("strides", Ints)],
        ),
        ("com.microsoft.nchwc", "GlobalMaxPool", (1, 1), 1, &[]),
        ("com.microsoft.nchwc", "GlobalAveragePool", (1, 1), 1, &[]),
        (
            "com.microsoft.nchwc",
            "Upsample",
            (1, 1),
            1,
            &[("scales", Ints)],
        ),
        (
            "com.microsoft",
            "BeamSearch",
            (5, 7),
            3,
            &[("decoder", Graph), ("model_type", Int), ("vocab_size", Int)],
        ),
        (
            "com.microsoft",
            "WhisperBeamSearch",
            (5, 13),
            5,
            &[
                ("decoder", Graph),
                ("encoder", Graph),
                ("decoder_start_token_id", Int),
            ],
        ),
        (
            "com.microsoft",
            "GreedySearch",
            (2, 3),
            1,
            &[("decoder", Graph), ("encoder", Graph)],
        ),
        (
            "com.microsoft",
            "Sampling",
            (2, 3),
            2,
            &[("vocab_size", Int)],
        ),
        (
            "com.microsoft",
            "SparseAttention",
            (9, 11),
            3,
            &[
                ("num_heads", Int),
                ("kv_num_heads", Int),
                ("sparse_block_size", Int),
            ],
        ),
        (
            "com.microsoft",
            "PackedAttention",
            (5, 6),
            1,
            &[("num_heads", Int), ("qkv_hidden_sizes", Ints)],
        ),
        (
            "com.microsoft",
            "PackedMultiHeadAttention",
            (1, 8),
            1,
            &[("num_heads", Int)],
        ),
        (
            "com.microsoft",
            "DecoderMaskedMultiHeadAttention",
            (1, 10),
            3,
            &[("num_heads", Int), ("past_present_share_buffer", Int)],
        ),
        ("com.microsoft", "QMoE", (6, 8), 1, &[("k", Int)]),
        ("com.microsoft", "RemovePadding", (2, 2), 4, &[]),
        ("com.microsoft", "RestorePadding", (2, 2), 1, &[]),
        (
            "com.microsoft",
            "RelativePositionBias",
            (3, 3),
            1,
            &[("max_distance", Int), ("is_bidirectional", Int)],
        ),
        (
            "com.microsoft",
            "GatedRelativePositionBias",
            (6, 7),
            1,
            &[("num_heads", Int)],
        ),
        (
            "com.microsoft",
            "RotaryEmbedding",
            (4, 4),
            1,
            &[("num_heads", Int)],
        ),
        (
            "com.microsoft",
            "MatMulNBits",
            (3, 6),
            1,
            &[("K", Int), ("N", Int), ("block_size", Int), ("bits", Int)],
        ),
        (
            "com.microsoft",
            "GroupQueryAttention",
            (7, 9),
            3,
            &[
                ("num_heads", Int),
                ("kv_num_heads", Int),
                ("sliding_window_cache", Int),
            ],
        ),
        (
            "com.microsoft",
            "MultiHeadAttention",
            (1, 9),
            3,
            &[("num_heads", Int), ("past_present_share_buffer", Int)],
        ),
        (
            "com.microsoft",
            "Attention",
            (2, 7),
            2,
            &[
                ("num_heads", Int),
                ("qkv_hidden_sizes", Ints),
                ("past_present_share_buffer", Int),
            ],
        ),
        ("com.microsoft", "EmbedLayerNormalization", (7, 9), 3, &[]),
        (
            "com.microsoft",
            "SkipGroupNorm",
            (4, 5),
            2,
            &[("groups", Int)],
        ),
        ("com.microsoft", "BiasSplitGelu", (2, 2), 1, &[]),
        (
            "com.microsoft",
            "QuantizeLinear",
            (2, 3),
            1,
            &[("axis", Int)],
        ),
        (
            "com.microsoft",
            "DequantizeLinear",
            (2, 3),
            1,
            &[("axis", Int)],
        ),
        ("com.microsoft", "QLinearAdd", (7, 8), 1, &[]),
        (
            "com.microsoft",
            "QLinearConcat",
            (2, 11),
            1,
            &[("axis", Int)],
        ),
        (
            "com.microsoft",
            "QLinearGlobalAveragePool",
            (5, 5),
            1,
            &[("channels_last", Int)],
        ),
        ("com.microsoft", "MatMulIntegerToFloat", (4, 7), 1, &[]),
        (
            "com.microsoft",
            "QGemm",
            (6, 9),
            1,
            &[("transA", Int), ("transB", Int)],
        ),
        (
            "com.microsoft",
            "QAttention",
            (5, 9),
            2,
            &[("num_heads", Int), ("qkv_hidden_sizes", Ints)],
        ),
        ("com.microsoft", "GemmFastGelu", (2, 3), 1, &[]),
        (
            "com.microsoft",
            "FusedMatMul",
            (2, 2),
            1,
            &[
                ("transA", Int),
                ("transB", Int),
                ("transBatchA", Int),
                ("alpha", Float),
            ],
        ),
        (
            "com.microsoft",
            "GatherBlockQuantized",
            (3, 4),
            1,
            &[
                ("gather_axis", Int),
                ("quantize_axis", Int),
                ("bits", Int),
                ("block_size", Int),
            ],
        ),
        (
            "com.microsoft",
            "FusedConv",
            (2, 4),
            1,
            &[
                ("kernel_shape", Ints),
                ("pads", Ints),
                ("strides", Ints),
                ("dilations", Ints),
            ],
        ),
        (
            "com.microsoft",
            "FusedGemm",
            (2, 3),
            1,
            &[("transA", Int), ("transB", Int)],
        ),
        (
            "com.microsoft",
            "NhwcConv",
            (2, 3),
            1,
            &[("kernel_shape", Ints), ("pads", Ints), ("strides", Ints)],
        ),
        (
            "com.microsoft",
            "NhwcMaxPool",
            (1, 1),
            1,
            &[
                ("kernel_shape", Ints),
                ("pads", Ints),
                ("strides", Ints),
                ("ceil_mode", Int),
            ],
        ),
        (
            "com.microsoft",
            "QLinearConv",
            (8, 9),
            1,
            &[("channels_last", Int), ("pads", Ints), ("strides", Ints)],
        ),
        (
            "com.microsoft",
            "QLinearAveragePool",
            (4, 5),
            1,
            &[
                ("channels_last", Int),
                ("kernel_shape", Ints),
                ("strides", Ints),
                ("ceil_mode", Int),
            ],
        ),
        ("com.microsoft", "QLinearWhere", (9, 9), 1, &[]),
        // contrib_extra.rs: legacy default-domain operators (opset 9 when
        // the graph imports the domain first), tensor utilities, integer
        // matmuls, LLM building blocks.
        (
            "",
            "ImageScaler",
            (1, 1),
            1,
            &[("bias", Floats), ("scale", Float)],
        ),
        ("", "Scale", (1, 1), 1, &[("scale", Float)]),
        (
            "",
            "Affine",
            (1, 1),
            1,
            &[("alpha", Float), ("beta", Float)],
        ),
        (
            "",
            "ScaledTanh",
            (1, 1),
            1,
            &[("alpha", Float), ("beta", Float)],
        ),
        (
            "",
            "ParametricSoftplus",
            (1, 1),
            1,
            &[("alpha", Float), ("beta", Float)],
        ),
        ("", "Crop", (1, 1), 1, &[("border", Ints), ("scale", Ints)]),
        ("", "DynamicSlice", (3, 4), 1, &[]),
        (
            "com.microsoft",
            "GridSample",
            (2, 2),
            1,
            &[("mode", String), ("align_corners", Int)],
        ),
        ("com.microsoft", "Inverse", (1, 1), 1, &[]),
        ("com.microsoft", "Trilu", (1, 2), 1, &[("upper", Int)]),
        ("com.microsoft", "ExpandDims", (2, 2), 1, &[]),
        ("com.microsoft", "GatherND", (2, 2), 1, &[]),
        ("com.microsoft", "Pad", (2, 3), 1, &[("mode", String)]),
        ("com.microsoft", "Range", (2, 3), 1, &[]),
        ("com.microsoft", "Unique", (1, 1), 3, &[]),
        ("com.microsoft", "CDist", (2, 2), 1, &[("metric", String)]),
        (
            "com.microsoft",
            "CropAndResize",
            (4, 4),
            1,
            &[("mode", String)],
        ),
        (
            "com.microsoft",
            "UnfoldTensor",
            (1, 1),
            1,
            &[("dim", Int), ("size", Int), ("step", Int)],
        ),
        (
            "com.microsoft",
            "MaxpoolWithMask",
            (2, 2),
            1,
            &[("kernel_shape", Ints), ("strides", Ints), ("pads", Ints)],
        ),
        (
            "com.microsoft",
            "DynamicQuantizeLSTM",
            (12, 12),
            3,
            &[("hidden_size", Int), ("direction", String)],
        ),
        ("com.microsoft", "MatMulInteger16", (2, 2), 1, &[]),
        (
            "com.microsoft",
            "MatMulBnb4",
            (3, 3),
            1,
            &[
                ("K", Int),
                ("N", Int),
                ("block_size", Int),
                ("quant_type", Int),
            ],
        ),
        (
            "com.microsoft",
            "TransposeMatMul",
            (2, 2),
            1,
            &[("transA", Int), ("transB", Int)],
        ),
        (
            "com.microsoft",
            "NGramRepeatBlock",
            (2, 2),
            1,
            &[("ngram_size", Int)],
        ),
        (
            "com.microsoft",
            "MurmurHash3",
            (1, 1),
            1,
            &[("positive", Int), ("seed", Int)],
        ),
        (
            "com.microsoft",
            "WordConvEmbedding",
            (4, 4),
            1,
            &[("embedding_size", Int)],
        ),
        (
            "com.microsoft",
            "GatedRMSNorm",
            (3, 3),
            1,
            &[("epsilon", Float)],
        ),
        ("com.microsoft", "GatedAdd", (3, 4), 1, &[]),
        (
            "com.microsoft",
            "ScaledSiLU",
            (1, 2),
            1,
            &[("alpha", Float)],
        ),
        (
            "com.microsoft",
            "BranchwiseRMSNorm",
            (1, 2),
            1,
            &[("num_branches", Int)],
        ),
        (
            "com.microsoft",
            "MRotaryEmbedding",
            (4, 4),
            1,
            &[("mrope_section", Ints), ("num_heads", Int)],
        ),
        ("com.microsoft", "SampleOp", (1, 1), 1, &[]),
        ("com.microsoft", "LinearAttentionGate", (3, 4), 2, &[]),
        (
            "com.microsoft",
            "LinearAttention",
            (3, 6),
            2,
            &[("q_num_heads", Int), ("kv_num_heads", Int)],
        ),
        (
            "com.microsoft",
            "CausalConvWithState",
            (2, 4),
            2,
            &[("dilation", Int), ("channels_last", Int)],
        ),
        (
            "com.microsoft",
            "QEmbedLayerNormalization",
            (13, 18),
            2,
            &[],
        ),
        (
            "com.microsoft",
            "HyperConnectionPreMix",
            (2, 2),
            1,
            &[("num_branches", Int)],
        ),
        ("com.microsoft", "HyperConnectionPostMix", (3, 4), 1, &[]),
        (
            "com.microsoft",
            "EngramGate",
            (5, 6),
            2,
            &[("epsilon", Float)],
        ),
        (
            "com.microsoft",
            "NGramHashMapping",
            (3, 7),
            2,
            &[
                ("max_ngram_size", Int),
                ("n_head_per_ngram", Int),
                ("pad_id", Int),
            ],
        ),
        ("com.microsoft", "BifurcationDetector", (3, 4), 2, &[]),
        (
            "",
            "SimplifiedLayerNormalization",
            (2, 2),
            2,
            &[("axis", Int), ("stash_type", Int)],
        ),
        (
            "",
            "LayerNormalization",
            (2, 3),
            3,
            &[("axis", Int), ("stash_type", Int)],
        ),
    ]
};

/// onnxruntime's default-domain operators deprecated at opset 10.
const LEGACY: &[&str] = &[
    "ImageScaler",
    "Scale",
    "Affine",
    "ScaledTanh",
    "ParametricSoftplus",
    "Crop",
    "DynamicSlice",
];

/// A node of one of onnxruntime's operators, inputs picked from `values`.
fn contrib_node(
    c: &mut Choices<'_>,
    i: usize,
    values: &mut Vec<String>,
    opsets: &mut Vec<OperatorSetIdProto>,
    g: &mut GraphProto,
) {
    let Some(&(domain, op, (least, most), outputs, attributes)) = c.pick(CONTRIB) else {
        return;
    };
    if !opsets.iter().any(|o| o.domain() == domain) {
        opsets.push(OperatorSetIdProto {
            domain: Some(domain.into()),
            // onnxruntime keeps its experimental default-domain operators
            // to opset 9.
            version: Some(match domain {
                "" if LEGACY.contains(&op) => 9,
                "" => 14,
                _ => 1,
            }),
        });
    }
    let mut n = NodeProto {
        op_type: Some(op.into()),
        domain: (!domain.is_empty()).then(|| domain.into()),
        ..NodeProto::default()
    };
    for _ in 0..least + c.below(most + 1 - least) {
        let name = if c.chance(40) {
            String::new()
        } else {
            c.pick(values).cloned().unwrap_or_default()
        };
        n.input.push(name.as_str().into());
    }
    for k in 0..outputs {
        let name = if k > 0 && c.chance(64) {
            String::new()
        } else {
            format!("c{i}_{k}")
        };
        if !name.is_empty() {
            values.push(name.clone());
        }
        n.output.push(name.as_str().into());
    }
    for &(name, kind) in attributes {
        if c.chance(200) {
            n.attribute.push(attribute(c, name, kind as i32, 0));
        }
    }
    g.node.push(n);
}

/// Builds a random model from `data` (see the module documentation).
pub fn random_model(data: &[u8]) -> ModelProto {
    let mut c = Choices::new(data);
    let reg = SchemaRegistry::global();
    let schemas: Vec<&OpSchema> = reg.all().collect();
    let mut g = GraphProto {
        name: Some("random".into()),
        ..GraphProto::default()
    };
    let mut values: Vec<String> = Vec::new();
    for i in 0..1 + c.below(4) {
        let name = format!("x{i}");
        g.input.push(vi(&name, Some(value_type(&mut c))));
        values.push(name);
    }
    for i in 0..c.below(4) {
        let name = format!("k{i}");
        g.initializer.push(int_tensor(&mut c, &name));
        values.push(name);
    }
    let mut opsets: Vec<OperatorSetIdProto> = Vec::new();
    for i in 0..1 + c.below(6) {
        if c.chance(24) {
            contrib_node(&mut c, i, &mut values, &mut opsets, &mut g);
            continue;
        }
        let Some(s) = c.pick(&schemas).copied() else {
            break;
        };
        if !opsets.iter().any(|o| o.domain() == s.domain) {
            opsets.push(OperatorSetIdProto {
                domain: Some(s.domain.clone()),
                version: Some(s.since_version),
            });
        }
        let mut n = NodeProto {
            op_type: Some(s.name.as_str().into()),
            domain: (!s.domain.is_empty()).then(|| s.domain.as_str().into()),
            ..NodeProto::default()
        };
        let min_in = s.min_input as usize;
        let max_in = (s.max_input as usize).min(min_in + 3);
        for _ in 0..min_in + c.below(max_in + 1 - min_in) {
            let name = if c.chance(16) {
                String::new()
            } else {
                c.pick(&values).cloned().unwrap_or_default()
            };
            n.input.push(name.as_str().into());
        }
        let min_out = s.min_output as usize;
        let max_out = (s.max_output as usize).min(min_out + 2);
        let n_out = min_out + c.below(max_out + 1 - min_out);
        for k in 0..n_out.max(1) {
            let name = format!("v{i}_{k}");
            n.output.push(name.as_str().into());
            values.push(name);
        }
        for spec in &s.attributes {
            if spec.required || c.chance(100) {
                let kind = if c.chance(8) {
                    AttributeType::Int as i32
                } else {
                    spec.attr_type
                };
                n.attribute.push(attribute(&mut c, &spec.name, kind, 0));
            }
        }
        g.node.push(n);
    }
    for name in values.iter().rev().take(1 + c.below(3)) {
        let t = c.chance(128).then(|| value_type(&mut c));
        g.output.push(vi(name, t));
    }
    if c.chance(64) {
        let name = values.last().cloned().unwrap_or_default();
        g.value_info.push(vi(&name, Some(value_type(&mut c))));
    }
    ModelProto {
        ir_version: Some(if c.chance(16) { 3 } else { 10 }),
        opset_import: opsets,
        graph: Some(g),
        ..ModelProto::default()
    }
}

/// Infers and fully checks a random model: must return, and every inferred
/// type and finding must be printable.
pub fn infer_random_model(data: &[u8]) {
    let model = random_model(data);
    let inferred = crate::infer::infer_model(
        &model,
        &crate::infer::InferOptions {
            collect_types: true,
            report_unfit: false,
            ..crate::infer::InferOptions::default()
        },
    );
    for g in &inferred.graphs {
        for (_, t) in &g.values {
            let _ = inferred.symbols.show(t);
            let _ = t.type_str();
        }
    }
    // Standalone inference with data propagation, written back; loaded
    // for decode on touch, the written-back lists must equal it.
    let with_data_options = crate::infer::InferOptions {
        data_prop: true,
        symbolic: true,
        ..crate::infer::InferOptions::default()
    };
    let with_data = write_back_agrees(&model, &with_data_options);
    for d in &with_data.diagnostics {
        let _ = d.to_string();
    }
    write_back_agrees(&model, &crate::infer::InferOptions::default());
    // onnxruntime's operators inferred too.
    write_back_agrees(
        &model,
        &crate::infer::InferOptions {
            contrib_ops: true,
            ..with_data_options
        },
    );
    // Without the type check (onnx's default): rules and data propagation
    // run on, and past, types their schemas do not allow.
    write_back_agrees(
        &model,
        &crate::infer::InferOptions {
            check_type: false,
            ..with_data_options
        },
    );
    for contrib_ops in [false, true] {
        let report = crate::checker::check_model(
            &model,
            &crate::checker::CheckOptions {
                full: true,
                contrib_ops,
                ..crate::checker::CheckOptions::default()
            },
        );
        for d in &report.diagnostics {
            let _ = d.to_string();
        }
    }
}

/// Infers `model` written back both ways, decoded
/// ([`crate::infer::infer_shapes`]) and loaded for decode on touch
/// ([`crate::infer::infer_shapes_lazy`]), twice in a row (the second time
/// over the first result: edits of edited lists); panics unless every
/// model and finding is the same.
pub fn write_back_agrees(
    model: &ModelProto,
    options: &crate::infer::InferOptions<'_>,
) -> crate::infer::Inference {
    use prost::Message;
    let (first, inference, done) = crate::infer::infer_shapes(model.clone(), options);
    // The dims written (expressions with `symbolic`) evaluate or fail cleanly.
    super::evaluate_dims(&first);
    let (second, again, _) = crate::infer::infer_shapes(first.clone(), options);
    let bytes = bytes::Bytes::from(model.encode_to_vec());
    let Ok(lazy) = crate::decode::lazy::decode_lazy(bytes, &crate::DecodeOptions::default()) else {
        // Random models may exceed what decoding accepts (nesting).
        return inference;
    };
    let (header, lists, lazy_inference, lazy_done) =
        match crate::infer::infer_shapes_lazy(&lazy.model, &lazy.lists, options) {
            Ok(r) => r,
            Err(e) => panic!("lazy write-back failed: {e}"),
        };
    assert_eq!(done, lazy_done, "what was written");
    assert_eq!(
        inference.diagnostics, lazy_inference.diagnostics,
        "findings of the lazy write-back"
    );
    let whole = match &lists {
        Some(lists) => match lists.whole_model(&header) {
            Ok(m) => m,
            Err(e) => panic!("written-back lists do not decode: {e}"),
        },
        None => header.clone(),
    };
    // Compared encoded: NaN attributes are not equal to themselves.
    assert!(
        whole.encode_to_vec() == first.encode_to_vec(),
        "lazy write-back differs from the eager one: {}",
        first_difference(&whole, &first)
    );
    let Some(lists) = lists else {
        return inference;
    };
    let (header2, lists2, again_lazy, _) =
        match crate::infer::infer_shapes_lazy(&header, &lists, options) {
            Ok(r) => r,
            Err(e) => panic!("second lazy write-back failed: {e}"),
        };
    assert_eq!(again.diagnostics, again_lazy.diagnostics);
    let whole2 = match &lists2 {
        Some(l) => match l.whole_model(&header2) {
            Ok(m) => m,
            Err(e) => panic!("edited lists do not decode: {e}"),
        },
        None => header2,
    };
    assert!(
        whole2.encode_to_vec() == second.encode_to_vec(),
        "lazy write-back of a written-back model differs: {}",
        first_difference(&whole2, &second)
    );
    inference
}

/// Where two models' main graphs first differ (for a failure message).
fn first_difference(lazy: &ModelProto, eager: &ModelProto) -> String {
    let (Some(a), Some(b)) = (&lazy.graph, &eager.graph) else {
        return "graph presence".into();
    };
    fn list<T: PartialEq + std::fmt::Debug>(what: &str, a: &[T], b: &[T]) -> Option<String> {
        if a.len() != b.len() {
            return Some(format!("{what}: {} entries, eager {}", a.len(), b.len()));
        }
        let i = a
            .iter()
            .zip(b)
            .position(|(x, y)| format!("{x:?}") != format!("{y:?}"))?;
        Some(format!("{what}[{i}]: {:?}\neager: {:?}", a[i], b[i]))
    }
    list("value_info", &a.value_info, &b.value_info)
        .or_else(|| list("input", &a.input, &b.input))
        .or_else(|| list("output", &a.output, &b.output))
        .or_else(|| list("node", &a.node, &b.node))
        .unwrap_or_else(|| "outside the main graph's lists".into())
}

#[cfg(test)]
mod tests {
    use super::CONTRIB;
    use crate::infer::ops::contrib;
    use crate::opset::SchemaRegistry;

    /// onnxruntime's schema table (`data/ort_schemas.txt`) and the contrib
    /// rules name the same operators, and random graphs use every one.
    #[test]
    fn contrib_rules_schemas_and_random_operators_agree() {
        let schemas = SchemaRegistry::contrib();
        let mut named = 0;
        for s in schemas.all() {
            // Deprecated schemas (opset 10 of the legacy operators) have
            // no rule: they are refused.
            assert_eq!(
                contrib::rule(&s.domain, &s.name, s.since_version).is_some(),
                !s.deprecated,
                "a schema without a rule: {}",
                s.name
            );
            assert!(s.id >= SchemaRegistry::global().len());
            named += 1;
        }
        assert_eq!(named, schemas.len());
        for (domain, op, _, _, _) in CONTRIB {
            // LayerNormalization is onnxruntime's before opset 17.
            assert!(
                schemas.get(op, 16, domain).is_some(),
                "random graphs use {op}, which has no schema"
            );
        }
        let random: Vec<&str> = CONTRIB.iter().map(|c| c.1).collect();
        for s in schemas.all() {
            assert!(
                random.contains(&s.name.as_str()),
                "random graphs lack {}",
                s.name
            );
        }
    }
}
