//! Decode on touch gives exactly the eager decoder's model: element by
//! element, materialized whole, on the corpus and on hand-made edge cases
//! (repeated graph fields, unknown fields, bad UTF-8, memory budgets).

#![allow(clippy::expect_used, clippy::panic)] // a test harness: panicking is how it fails
use std::path::PathBuf;

use bytes::Bytes;
use prost::Message;

use onnxfast_core::checker::{check_lazy, check_model, CheckOptions};
use onnxfast_core::decode::lazy::decode_lazy;
use onnxfast_core::error::DecodeErrorKind;
use onnxfast_core::opset::SchemaRegistry;
use onnxfast_core::proto::{GraphProto, ModelProto, NodeProto, TensorProto, ValueInfoProto};
use onnxfast_core::{decode, DecodeOptions};

fn corpus_dir() -> PathBuf {
    let version = &SchemaRegistry::global().onnx_version;
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/.corpus")
        .join(format!("onnx-{version}"))
}

/// The checker over decode-on-touch lists (streaming where it can) reports
/// exactly what it reports over the eagerly decoded model, in order, and
/// counts the same, with and without a cap on the findings kept, in each
/// mode (structural, strict, full: inference over the kept lists).
fn checks_as_eager(bytes: &[u8]) {
    let options = DecodeOptions::default();
    let (Ok(eager), Ok(lazy)) = (
        decode::<ModelProto>(Bytes::copy_from_slice(bytes), &options),
        decode_lazy(Bytes::copy_from_slice(bytes), &options),
    ) else {
        return;
    };
    let modes = [(false, false), (true, false), (false, true)];
    for ((strict, full), max) in modes
        .into_iter()
        .flat_map(|m| [None, Some(0), Some(1), Some(3)].map(|max| (m, max)))
    {
        let check = CheckOptions {
            max_diagnostics: max,
            strict,
            full,
            ..CheckOptions::default()
        };
        let want = check_model(&eager, &check);
        let got = check_lazy(&lazy.model, &lazy.lists, &check).expect("lazy check");
        let show = |r: &onnxfast_core::checker::Report| -> Vec<String> {
            r.diagnostics
                .iter()
                .map(|d| format!("{} {} {}", d.code, d.location, d.message))
                .collect()
        };
        assert_eq!(show(&got), show(&want));
        assert_eq!((got.counts, got.omitted), (want.counts, want.omitted));
    }
}

fn same_as_eager(bytes: &[u8]) {
    checks_as_eager(bytes);
    let options = DecodeOptions::default();
    let eager = decode::<ModelProto>(Bytes::copy_from_slice(bytes), &options);
    let lazy = decode_lazy(Bytes::copy_from_slice(bytes), &options);
    match (eager, lazy) {
        (Ok(eager), Ok(lazy)) => {
            let g = eager.graph.clone().unwrap_or_default();
            assert_eq!(lazy.lists.node.len(), g.node.len());
            // (Encodings are compared: NaN attribute values make `==` false.)
            for (i, n) in g.node.iter().enumerate() {
                let got = lazy.lists.node.get(i).expect("node");
                assert_eq!(got.encode_to_vec(), n.encode_to_vec());
                // What readers take from the bytes alone (Python's node
                // objects, before anything else is asked of them).
                use onnxfast_core::proto::schema::fields::node_proto as F;
                let strings = |number| lazy.lists.node.strings(i, number).expect("scanned");
                let last = |number| strings(number).last().copied().unwrap_or_default();
                assert_eq!(
                    (last(F::NAME), last(F::OP_TYPE), last(F::DOMAIN)),
                    (n.name(), n.op_type(), n.domain())
                );
                assert!(strings(F::INPUT)
                    .iter()
                    .copied()
                    .eq(n.input.iter().map(|s| s.as_str())));
                assert!(strings(F::OUTPUT)
                    .iter()
                    .copied()
                    .eq(n.output.iter().map(|s| s.as_str())));
            }
            for (i, t) in g.initializer.iter().enumerate() {
                let got = lazy.lists.initializer.decode(i).expect("initializer");
                assert_eq!(got.encode_to_vec(), t.encode_to_vec());
                let header = lazy.lists.initializer.header(i).expect("a scanned header");
                assert_eq!(
                    (
                        header.name,
                        header.data_type.unwrap_or_default(),
                        &header.dims[..]
                    ),
                    (t.name(), t.data_type(), &t.dims[..])
                );
            }
            // The initializers' names as copied out (in runs of 1,024).
            let table = lazy.lists.initializer.name_table().expect("names");
            let names: Vec<Option<&str>> =
                g.initializer.iter().map(|t| t.name.as_deref()).collect();
            assert_eq!(table.len(), names.len());
            assert_eq!(table.iter().collect::<Vec<_>>(), names);
            assert_eq!(table.get(names.len()), None);
            for (i, v) in g.value_info.iter().enumerate() {
                if let Some((name, _)) = lazy.lists.value_info.declaration(i) {
                    assert_eq!(name, v.name());
                }
            }
            let whole = lazy.materialize().expect("materialize");
            assert_eq!(whole.encode_to_vec(), eager.encode_to_vec());
        }
        (Err(a), Err(b)) => assert_eq!(a.path, b.path),
        (a, b) => panic!("eager {:?} but lazy {:?}", a.err(), b.err()),
    }
}

#[test]
fn corpus_models_decode_the_same_on_touch() {
    let dir = corpus_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: {} not found (run pytest first)", dir.display());
        return;
    };
    let mut n = 0;
    for case in entries.flatten() {
        let path = case.path().join("model.onnx");
        if let Ok(bytes) = std::fs::read(&path) {
            same_as_eager(&bytes);
            n += 1;
        }
    }
    eprintln!("{n} corpus models");
}

/// A xorshift64 generator from `seed` (not zero): tests' fixed "random"
/// sequences.
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// Field `field` of a message, length-delimited, holding `payload`.
fn ld(field: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(field, prost::encoding::WireType::LengthDelimited, &mut out);
    prost::encoding::encode_varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

/// Field `field` of a message, a varint holding `v`.
fn varint(field: u32, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(field, prost::encoding::WireType::Varint, &mut out);
    prost::encoding::encode_varint(v, &mut out);
    out
}

fn node(i: usize) -> NodeProto {
    NodeProto {
        op_type: Some("Relu".into()),
        input: [format!("v{i}").as_str().into()].into_iter().collect(),
        output: [format!("v{}", i + 1).as_str().into()]
            .into_iter()
            .collect(),
        ..NodeProto::default()
    }
}

#[test]
fn edge_cases_decode_the_same_on_touch() {
    let graph = GraphProto {
        name: Some("g".into()),
        node: (0..600).map(node).collect(),
        initializer: vec![TensorProto {
            name: Some("w".into()),
            data_type: Some(1),
            dims: vec![2],
            raw_data: Some(Bytes::from(vec![0u8; 8])),
            ..TensorProto::default()
        }],
        value_info: vec![ValueInfoProto {
            name: Some("v3".into()),
            ..ValueInfoProto::default()
        }],
        ..GraphProto::default()
    };
    let model = ModelProto {
        ir_version: Some(10),
        graph: Some(graph.clone()),
        ..ModelProto::default()
    };
    let mut bytes = model.encode_to_vec();
    same_as_eager(&bytes);
    // A second `graph` field merges into the first; an unknown field is skipped.
    let more = ModelProto {
        graph: Some(GraphProto {
            doc_string: Some("merged".into()),
            node: vec![node(1000)],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    };
    bytes.extend(more.encode_to_vec());
    bytes.extend([0xf8, 0x7f, 0x01]); // field 2047, varint 1
    same_as_eager(&bytes);
    // Bytes fields stay slices of the source.
    let source = Bytes::from(model.encode_to_vec());
    let lazy = decode_lazy(source.clone(), &DecodeOptions::default()).expect("lazy");
    let w = lazy.lists.initializer.get(0).expect("w");
    let raw = w.raw_data.as_ref().expect("raw");
    assert!(source.as_ptr_range().contains(&raw.as_ptr()));
}

#[test]
fn initializer_names_copied_in_runs_read_as_decoded() {
    // More than two runs of names: absent, empty, long and repeated ones
    // among them, and a run boundary at an absent name.
    let tensor = |i: usize| TensorProto {
        name: match i % 7 {
            0 => None,
            1 => Some(String::new()),
            2 => Some(format!("a name long enough to spill, number {i}")),
            3 => Some("same".into()),
            _ => Some(format!("w{i}")),
        },
        data_type: Some(1),
        dims: vec![1],
        float_data: vec![1.0],
        ..TensorProto::default()
    };
    for count in [0, 1, 1023, 1024, 1025, 2600] {
        let model = ModelProto {
            ir_version: Some(10),
            graph: Some(GraphProto {
                initializer: (0..count).map(tensor).collect(),
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        };
        same_as_eager(&model.encode_to_vec());
    }
}

#[test]
fn the_streaming_check_reports_what_the_eager_one_does() {
    use onnxfast_core::proto::{AttributeProto, OperatorSetIdProto};
    let tensor = |name: Option<&str>, bytes: usize| TensorProto {
        name: name.map(Into::into),
        data_type: Some(1),
        dims: vec![2],
        raw_data: Some(Bytes::from(vec![0u8; bytes])),
        ..TensorProto::default()
    };
    let io = |name: &str| ValueInfoProto {
        name: Some(name.into()),
        ..ValueInfoProto::default()
    };
    let base = |nodes: usize| GraphProto {
        name: Some("g".into()),
        node: (0..nodes).map(node).collect(),
        input: vec![io("v0")],
        output: vec![io(&format!("v{nodes}"))],
        initializer: (0..700)
            .map(|i| tensor(Some(&format!("w{i}")), 8))
            .collect(),
        ..GraphProto::default()
    };
    let model = |graph: GraphProto, ir: i64| ModelProto {
        ir_version: Some(ir),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        graph: Some(graph),
        ..ModelProto::default()
    };
    let attribute = |name: &str| AttributeProto {
        name: Some(name.into()),
        r#type: Some(2),
        i: Some(1),
        ..AttributeProto::default()
    };
    for nodes in [10, 3000] {
        // Valid: the streaming path from end to end.
        checks_as_eager(&model(base(nodes), 10).encode_to_vec());
        // Node-local and initializer defects, SSA intact: still streamed.
        let mut g = base(nodes);
        g.node[nodes / 2]
            .attribute
            .push(attribute("no_such_attribute"));
        g.node[nodes - 1].op_type = Some("NoSuchOp".into());
        g.initializer[5] = tensor(None, 8);
        g.initializer[6] = tensor(Some("w7"), 8);
        g.initializer[9] = tensor(Some("w9"), 3);
        g.input.push(io("v0"));
        checks_as_eager(&model(g.clone(), 10).encode_to_vec());
        // Initializers must be inputs up to IR 3.
        checks_as_eager(&model(g.clone(), 3).encode_to_vec());
        // Broken SSA: an undefined input, a name assigned twice, an
        // output not produced: the exact walk.
        let mut broken = g.clone();
        broken.node[nodes / 3].input[0] = "nowhere".into();
        broken.node[nodes / 4].output[0] = "v1".into();
        broken.output.push(io("never"));
        checks_as_eager(&model(broken, 10).encode_to_vec());
        // A subgraph, or a sparse initializer: the exact walk.
        let mut sub = g.clone();
        sub.node[1].attribute.push(
            AttributeProto {
                name: Some("body".into()),
                r#type: Some(5),
                ..AttributeProto::default()
            }
            .with_extras(|e| {
                e.g = Some(Box::new(GraphProto {
                    name: Some("inner".into()),
                    ..GraphProto::default()
                }))
            }),
        );
        checks_as_eager(&model(sub, 10).encode_to_vec());
        let mut sparse = g;
        sparse
            .sparse_initializer
            .push(onnxfast_core::proto::SparseTensorProto::default());
        checks_as_eager(&model(sparse, 10).encode_to_vec());
    }
}

#[test]
fn faults_are_found_at_load_with_their_path() {
    let graph = GraphProto {
        node: (0..5).map(node).collect(),
        ..GraphProto::default()
    };
    let mut bytes = ModelProto {
        graph: Some(graph),
        ..ModelProto::default()
    }
    .encode_to_vec();
    // Corrupt the name of node 3's output ("v4") into invalid UTF-8.
    let at = bytes.windows(2).position(|w| w == b"v4").expect("v4");
    bytes[at] = 0xff;
    let err = decode_lazy(Bytes::from(bytes), &DecodeOptions::default()).expect_err("utf8");
    assert_eq!(err.path, "graph.node[3].output[0]");
    assert!(matches!(err.kind, DecodeErrorKind::InvalidUtf8 { .. }));
}

#[test]
fn budget_bounds_the_whole_tree_before_anything_is_decoded() {
    // 200,000 empty nodes: 400 KB of file, ~38 MB decoded (192 bytes a
    // node), 12 bytes each indexed. The budget is decided on the whole tree,
    // as if every node were touched, so touching can never exceed it.
    let mut graph = Vec::new();
    for _ in 0..200_000 {
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
    let node_size = std::mem::size_of::<NodeProto>() as u64;
    let tight = DecodeOptions {
        max_memory: Some(200_000 * node_size - 1),
        ..DecodeOptions::default()
    };
    let err = decode_lazy(Bytes::from(model.clone()), &tight).expect_err("budget");
    let DecodeErrorKind::MemoryBudget { projected, .. } = err.kind else {
        panic!("{err}");
    };
    // The node list, reserved exactly, plus the index (at most 24 bytes a
    // node) and a fixed working allowance of 16 KiB.
    let most = 200_000 * (node_size + 24) + (16 << 10);
    assert!(projected >= 200_000 * node_size, "{projected}");
    assert!(projected <= most, "{projected}");
    let roomy = DecodeOptions {
        max_memory: Some(most),
        ..DecodeOptions::default()
    };
    let lazy = decode_lazy(Bytes::from(model), &roomy).expect("fits");
    assert_eq!(lazy.lists.node.len(), 200_000);
    assert!(lazy.index_bytes() < 200_000 * 16);
    assert_eq!(
        lazy.lists.node.decode_all().expect("touch all").len(),
        200_000
    );

    // One node of 100,000 empty attributes (200 KB): refused at load.
    let mut node = Vec::new();
    for _ in 0..100_000 {
        node.extend_from_slice(&[0x2a, 0x00]);
    }
    let bytes = ModelProto {
        graph: Some(GraphProto {
            node: vec![NodeProto::decode(node.as_slice()).expect("node")],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
    .encode_to_vec();
    let err = decode_lazy(
        Bytes::from(bytes),
        &DecodeOptions {
            max_memory: Some(4 << 20),
            ..DecodeOptions::default()
        },
    )
    .expect_err("bomb");
    assert!(matches!(err.kind, DecodeErrorKind::MemoryBudget { .. }));
}

/// Node views (checks over a node's bytes, without decoding it) read what
/// the decoded node holds, stand for every node but those with fields they
/// do not read or already decoded, and the streamed check through them
/// reports what the eager one does, attribute tensors small (copied) and
/// large (slices of the source) included.
#[test]
fn node_views_stand_for_decoded_nodes() {
    use onnxfast_core::decode::lazy::NodeRef;
    use onnxfast_core::proto::{
        AttributeProto, NodeExtras, NodeFields, OperatorSetIdProto, StringStringEntryProto,
    };
    let tensor_attribute = |bytes: usize| {
        AttributeProto {
            name: Some("value".into()),
            r#type: Some(4),
            ..AttributeProto::default()
        }
        .with_extras(|e| {
            e.t = Some(Box::new(TensorProto {
                data_type: Some(1),
                // Four floats declared: a defect unless `bytes` is 16.
                dims: vec![4],
                raw_data: Some(Bytes::from(vec![7u8; bytes])),
                ..TensorProto::default()
            }))
        })
    };
    let mut g = GraphProto {
        name: Some("g".into()),
        node: (0..700).map(node).collect(),
        input: vec![ValueInfoProto {
            name: Some("v0".into()),
            ..ValueInfoProto::default()
        }],
        output: vec![ValueInfoProto {
            name: Some("v700".into()),
            ..ValueInfoProto::default()
        }],
        ..GraphProto::default()
    };
    for (i, n) in g.node.iter_mut().enumerate() {
        n.name = Some(format!("node {i}").as_str().into());
        match i % 6 {
            0 => n.extras_mut().doc_string = Some("from layer".into()),
            1 => n.extras_mut().overload = Some("o".into()),
            2 => {
                n.extras = Some(Box::new(NodeExtras {
                    metadata_props: vec![StringStringEntryProto {
                        key: Some("k".into()),
                        value: Some("v".into()),
                    }],
                    ..NodeExtras::default()
                }))
            }
            3 => n.attribute.push(tensor_attribute(8)),
            4 => n.attribute.push(tensor_attribute(4096)),
            _ => n.domain = Some(String::new().as_str().into()),
        }
    }
    let bytes = ModelProto {
        ir_version: Some(10),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        graph: Some(g.clone()),
        ..ModelProto::default()
    }
    .encode_to_vec();
    checks_as_eager(&bytes);

    let lazy = decode_lazy(Bytes::from(bytes), &DecodeOptions::default()).expect("lazy");
    // Touching node 100 decodes and keeps its chunk (nodes 64..128).
    lazy.lists.node.get(100).expect("node 100");
    let mut seen = 0;
    lazy.lists
        .node
        .for_each_node_in(0..g.node.len(), |i, n| {
            let want = &g.node[i];
            let kept = (64..128).contains(&i);
            let (name, op, domain, inputs, outputs, attributes) = match n {
                NodeRef::View(v) => {
                    assert!(!kept && i % 6 != 2, "node {i} viewed");
                    (
                        v.node_name().to_string(),
                        v.node_op_type().to_string(),
                        v.node_domain().to_string(),
                        v.inputs().map(String::from).collect::<Vec<_>>(),
                        v.outputs().map(String::from).collect::<Vec<_>>(),
                        v.attributes().to_vec(),
                    )
                }
                NodeRef::Decoded(d) => {
                    assert!(kept || i % 6 == 2, "node {i} decoded");
                    assert_eq!(d.encode_to_vec(), want.encode_to_vec());
                    return;
                }
            };
            assert_eq!(name, want.name());
            assert_eq!(op, want.op_type());
            assert_eq!(domain, want.domain());
            assert_eq!(
                inputs,
                want.input.iter().map(|s| s.to_string()).collect::<Vec<_>>()
            );
            assert_eq!(
                outputs,
                want.output
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
            );
            assert_eq!(attributes, want.attribute);
            seen += 1;
        })
        .expect("pass");
    let viewed = (0..700)
        .filter(|i| !(64..128).contains(i) && i % 6 != 2)
        .count();
    assert_eq!(seen, viewed);
}

/// `value_info` entries read from their bytes by inference (not decoded)
/// declare what the decoded entries declare: runs of one type, symbols,
/// untyped entries, a conflicting one, and entries protobuf resolves by
/// merging (a `type` or a `name` given twice), which are decoded.
#[test]
fn declarations_read_from_bytes_infer_as_decoded_ones() {
    use onnxfast_core::proto::{
        tensor_shape_proto::{dimension::Value, Dimension},
        type_proto, OperatorSetIdProto, TensorShapeProto, TypeProto,
    };
    let tensor = |elem: i32, dims: Option<&[Value]>| TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem),
            shape: dims.map(|d| TensorShapeProto {
                dim: d
                    .iter()
                    .map(|v| Dimension {
                        value: Some(v.clone()),
                        ..Dimension::default()
                    })
                    .collect(),
            }),
        })),
        ..TypeProto::default()
    };
    let n = 3000;
    let batch = [Value::DimParam("b".into()), Value::DimValue(4)];
    let mut value_info = Vec::new();
    for i in 1..n {
        let ty = match i % 7 {
            0 => None,
            1 => Some(tensor(
                1,
                Some(&[Value::DimParam("k".into()), Value::DimValue(4)]),
            )),
            // A conflicting element type: a finding at this entry.
            2 if i % 500 == 2 => Some(tensor(7, Some(&batch))),
            _ => Some(tensor(1, Some(&batch))),
        };
        value_info.push(ValueInfoProto {
            name: Some(format!("v{i}")),
            r#type: ty,
            ..ValueInfoProto::default()
        });
    }
    let graph = GraphProto {
        name: Some("g".into()),
        node: (0..n).map(node).collect(),
        input: vec![ValueInfoProto {
            name: Some("v0".into()),
            r#type: Some(tensor(1, Some(&batch))),
            ..ValueInfoProto::default()
        }],
        output: vec![ValueInfoProto {
            name: Some(format!("v{n}")),
            ..ValueInfoProto::default()
        }],
        value_info,
        ..GraphProto::default()
    };
    let mut graph_bytes = graph.encode_to_vec();
    // Entries whose fields repeat: the type's two halves merged (an int64
    // element type: a conflict only the merged type has), the later name
    // kept.
    let elem_only = TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(7),
            shape: None,
        })),
        ..TypeProto::default()
    };
    let shape_only = TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: None,
            shape: tensor(1, Some(&batch)).value.and_then(|v| match v {
                type_proto::Value::TensorType(t) => t.shape,
                _ => None,
            }),
        })),
        ..TypeProto::default()
    };
    let mut twice = ld(1, b"v1500");
    twice.extend(ld(2, &elem_only.encode_to_vec()));
    twice.extend(ld(2, &shape_only.encode_to_vec()));
    graph_bytes.extend(ld(13, &twice));
    let mut renamed = ld(1, b"nowhere");
    renamed.extend(ld(2, &tensor(6, None).encode_to_vec()));
    renamed.extend(ld(1, b"v2001"));
    graph_bytes.extend(ld(13, &renamed));
    let header = ModelProto {
        ir_version: Some(10),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        ..ModelProto::default()
    };
    let mut bytes = header.encode_to_vec();
    bytes.extend(ld(7, &graph_bytes));
    same_as_eager(&bytes);
    checks_as_eager(&bytes);
    // The full check found the conflicts, at their entries.
    let lazy = decode_lazy(Bytes::from(bytes), &DecodeOptions::default()).expect("lazy");
    let full = CheckOptions {
        full: true,
        ..CheckOptions::default()
    };
    let report = check_lazy(&lazy.model, &lazy.lists, &full).expect("check");
    let found: Vec<String> = report
        .diagnostics
        .iter()
        .map(|d| d.location.to_string())
        .collect();
    assert!(found.iter().any(|l| l.contains("v2001")), "{found:?}");
    assert!(found.iter().any(|l| l.contains("'v2'")), "{found:?}");
    assert!(found.iter().any(|l| l.contains("'v1500'")), "{found:?}");
}

/// A value of tensor type `elem` with static `dims`.
fn typed(name: &str, elem: i32, dims: &[i64]) -> ValueInfoProto {
    use onnxfast_core::proto::{
        tensor_shape_proto::{dimension::Value, Dimension},
        type_proto, TensorShapeProto, TypeProto,
    };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem),
                shape: Some(TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|&d| Dimension {
                            value: Some(Value::DimValue(d)),
                            ..Dimension::default()
                        })
                        .collect(),
                }),
            })),
            ..TypeProto::default()
        }),
        ..ValueInfoProto::default()
    }
}

/// Inference over decode-on-touch lists (`written`, `lists` and
/// `inference`, what `infer_shapes_lazy` gave) against the eager
/// inference of the decoded model `eager`: the same findings and the same
/// written-back model. Returns that model and the findings.
fn infers_as_eager(
    (written, lists, inference): (
        ModelProto,
        Option<onnxfast_core::decode::lazy::GraphLists>,
        onnxfast_core::infer::Inference,
    ),
    eager: ModelProto,
) -> (ModelProto, Vec<String>) {
    use onnxfast_core::infer::{infer_shapes, InferOptions};
    let (want, want_inference, _) = infer_shapes(eager, &InferOptions::default());
    let show = |ds: &[onnxfast_core::diag::Diagnostic]| -> Vec<String> {
        ds.iter()
            .map(|d| format!("{} {} {}", d.code, d.location, d.message))
            .collect()
    };
    let found = show(&inference.diagnostics);
    assert_eq!(found, show(&want_inference.diagnostics));
    let got = match lists {
        Some(lists) => lists.whole_model(&written).expect("whole"),
        None => written,
    };
    assert_eq!(got.encode_to_vec(), want.encode_to_vec());
    (got, found)
}

/// Nodes whose attributes inference reads from their bytes (decoded for
/// the read, the node not kept) infer as decoded ones: Transpose's `perm`,
/// LeakyRelu's `alpha`, Cast's `to`, a string attribute; a Constant's
/// `value_ints` (its value kept: the node is read kept), a model-local
/// function's caller (the body binds the attributes: kept), a Constant
/// holding a tensor and an If holding graphs (kept before inference, as
/// decode-ahead finds them). The written-back model and the findings equal
/// the eager inference's, and the plain nodes stay bytes.
#[test]
fn attributes_read_from_bytes_infer_as_decoded_ones() {
    use onnxfast_core::infer::{infer_shapes_lazy, InferOptions};
    use onnxfast_core::proto::{
        attribute_proto::AttributeType, tensor_shape_proto::dimension::Value, type_proto,
        AttributeProto, FunctionProto, OperatorSetIdProto,
    };
    let attr = |name: &str, kind: AttributeType| AttributeProto {
        name: Some(name.into()),
        r#type: Some(kind as i32),
        ..AttributeProto::default()
    };
    let ints = |name: &str, v: &[i64]| AttributeProto {
        ints: v.to_vec(),
        ..attr(name, AttributeType::Ints)
    };
    let node =
        |op: &str, inputs: &[&str], outputs: &[&str], attribute: Vec<AttributeProto>| NodeProto {
            op_type: Some(op.into()),
            input: inputs.iter().map(|&s| s.into()).collect(),
            output: outputs.iter().map(|&s| s.into()).collect(),
            attribute,
            ..NodeProto::default()
        };
    let branch = |out: &str| GraphProto {
        name: Some(format!("b_{out}")),
        node: vec![node("Identity", &["x"], &[out], vec![])],
        output: vec![ValueInfoProto {
            name: Some(out.into()),
            ..ValueInfoProto::default()
        }],
        ..GraphProto::default()
    };
    let graph_attr = |name: &str, g: GraphProto| AttributeProto {
        extras: Some(Box::new(onnxfast_core::proto::AttributeExtras {
            g: Some(Box::new(g)),
            ..Default::default()
        })),
        ..attr(name, AttributeType::Graph)
    };
    // First chunk: a Constant holding a tensor and an If holding graphs
    // (kept before inference reads them).
    let mut nodes = vec![
        node(
            "Constant",
            &[],
            &["k"],
            vec![AttributeProto {
                extras: Some(Box::new(onnxfast_core::proto::AttributeExtras {
                    t: Some(Box::new(TensorProto {
                        data_type: Some(7),
                        dims: vec![3],
                        int64_data: vec![1, 2, 3],
                        ..TensorProto::default()
                    })),
                    ..Default::default()
                })),
                ..attr("value", AttributeType::Tensor)
            }],
        ),
        node(
            "If",
            &["c0"],
            &["chosen"],
            vec![
                graph_attr("then_branch", branch("a")),
                graph_attr("else_branch", branch("b")),
            ],
        ),
    ];
    // Plain attributes, many of them (several chunks of the list; more
    // nodes than `FEED_FROM`: inference reads their heads in batches, on
    // the pool's other thread when it is free).
    let mut last = "x".to_string();
    for i in 0..2600 {
        let out = format!("t{i}");
        nodes.push(match i % 4 {
            0 => node(
                "Transpose",
                &[&last],
                &[&out],
                vec![ints("perm", &[1, 0, 2])],
            ),
            1 => node(
                "LeakyRelu",
                &[&last],
                &[&out],
                vec![AttributeProto {
                    f: Some(0.1),
                    ..attr("alpha", AttributeType::Float)
                }],
            ),
            2 => node(
                "Cast",
                &[&last],
                &[&out],
                vec![AttributeProto {
                    i: Some(1),
                    ..attr("to", AttributeType::Int)
                }],
            ),
            _ => node(
                "Gelu",
                &[&last],
                &[&out],
                vec![AttributeProto {
                    s: Some(Bytes::from_static(b"tanh")),
                    ..attr("approximate", AttributeType::String)
                }],
            ),
        });
        last = out;
    }
    // Last chunk: read from bytes, then read again kept: a Constant's
    // ints (its value is kept) and a function's caller.
    nodes.push(node(
        "Constant",
        &[],
        &["shape"],
        vec![ints("value_ints", &[-1, 6])],
    ));
    nodes.push(node("Reshape", &[&last, "shape"], &["flat"], vec![]));
    nodes.push(NodeProto {
        domain: Some("local".into()),
        ..node("Spin", &["flat"], &["spun"], vec![ints("order", &[1, 0])])
    });
    let n_nodes = nodes.len();
    let function = FunctionProto {
        name: Some("Spin".into()),
        domain: Some("local".into()),
        input: vec!["X".into()],
        output: vec!["Y".into()],
        attribute: vec!["order".into()],
        node: vec![NodeProto {
            attribute: vec![AttributeProto {
                extras: Some(Box::new(onnxfast_core::proto::AttributeExtras {
                    ref_attr_name: Some("order".into()),
                    ..Default::default()
                })),
                ..attr("perm", AttributeType::Ints)
            }],
            ..node("Transpose", &["X"], &["Y"], vec![])
        }],
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        ..FunctionProto::default()
    };
    let model = ModelProto {
        ir_version: Some(10),
        opset_import: vec![
            OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(21),
            },
            OperatorSetIdProto {
                domain: Some("local".into()),
                version: Some(1),
            },
        ],
        functions: vec![function],
        graph: Some(GraphProto {
            name: Some("g".into()),
            node: nodes,
            input: vec![typed("x", 1, &[2, 3, 4]), typed("c0", 9, &[])],
            output: vec![
                ValueInfoProto {
                    name: Some("spun".into()),
                    ..ValueInfoProto::default()
                },
                ValueInfoProto {
                    name: Some("chosen".into()),
                    ..ValueInfoProto::default()
                },
            ],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    };
    let bytes = model.encode_to_vec();
    same_as_eager(&bytes);
    let options = DecodeOptions::default();
    let lazy = decode_lazy(Bytes::copy_from_slice(&bytes), &options).expect("lazy");
    let infer = InferOptions::default();
    let (written, lists, inference, _) =
        infer_shapes_lazy(&lazy.model, &lazy.lists, &infer).expect("infer");
    let list = &lazy.lists.node;
    // The message holders' chunk and the re-read nodes' are kept (a chunk
    // is decoded whole), the plain one between them stays bytes.
    use onnxfast_core::decode::lazy::CHUNK;
    let kept: Vec<bool> = (0..n_nodes).map(|i| list.cached(i).is_some()).collect();
    let last_chunk = (n_nodes - 1) / CHUNK * CHUNK;
    assert!(kept[..CHUNK].iter().all(|&k| k), "the first chunk is kept");
    assert!(
        !kept[CHUNK..last_chunk].iter().any(|&k| k),
        "the plain chunks stay bytes"
    );
    assert!(
        kept[last_chunk..].iter().all(|&k| k),
        "the re-read nodes are kept"
    );
    let (got, _) = infers_as_eager((written, lists, inference), model);
    // What the attributes gave: Reshape by the Constant's ints (6 = 2*3*4
    // / 4), the function's transpose of it, a typed If.
    let output = |name: &str| -> Option<(i32, Vec<Option<Value>>)> {
        let g = got.graph.as_ref()?;
        let vi = g.output.iter().find(|o| o.name() == name)?;
        match &vi.r#type.as_ref()?.value {
            Some(type_proto::Value::TensorType(t)) => Some((
                t.elem_type.unwrap_or(0),
                t.shape
                    .as_ref()
                    .map(|s| s.dim.iter().map(|d| d.value.clone()).collect())
                    .unwrap_or_default(),
            )),
            _ => None,
        }
    };
    assert_eq!(
        output("spun"),
        Some((1, vec![Some(Value::DimValue(6)), Some(Value::DimValue(4))]))
    );
    assert_eq!(
        output("chosen"),
        Some((
            1,
            vec![2, 3, 4]
                .into_iter()
                .map(|d| Some(Value::DimValue(d)))
                .collect()
        ))
    );
}

/// A [`HeadFeed`]'s reader lends what [`NodeHeads`] lends (index, head,
/// attributes read or kept, the head a look-ahead places after it), over a
/// graph of plain nodes, nodes with attributes read from their bytes and
/// nodes kept (a tensor or graph attribute), in batches and across their
/// ends: with no producer, with one running beside the reader from the
/// start or from half-way, with one too slow to wait for (the reader
/// reads the batches it holds too long), with one that panics holding a
/// batch, under random schedules, and with a reader gone early (the
/// producer returns).
#[test]
fn fed_heads_lend_what_node_heads_lend() {
    use onnxfast_core::ir::view::{HeadFeed, Heads, Lent, NodeHeads, Seq};
    let cat = |parts: &[Vec<u8>]| parts.concat();
    let mut graph = Vec::new();
    let n_nodes = 3000; // 11 batches and part of one
    for i in 0..n_nodes {
        let mut body = cat(&[
            ld(1, format!("v{i}").as_bytes()),
            ld(2, format!("v{}", i + 1).as_bytes()),
            ld(3, format!("n{i}").as_bytes()),
        ]);
        body.extend(match i % 7 {
            0 | 3 => cat(&[
                ld(4, b"Transpose"),
                ld(5, &cat(&[ld(1, b"perm"), varint(20, 7), ld(8, &[1, 0])])),
            ]),
            1 => cat(&[
                ld(4, b"Constant"),
                ld(
                    5,
                    &cat(&[
                        ld(1, b"value"),
                        varint(20, 4),
                        ld(5, &cat(&[varint(2, 7), ld(8, b"c")])),
                    ]),
                ),
            ]),
            2 if i % 3 == 0 => cat(&[
                ld(4, b"Loop"),
                ld(
                    5,
                    &cat(&[ld(1, b"body"), varint(20, 5), ld(6, &ld(2, b"g"))]),
                ),
            ]),
            _ => ld(4, b"Relu"),
        });
        graph.extend(ld(1, &body));
    }
    let model = ld(7, &graph);
    type Seen = (
        usize,
        [String; 2],
        Vec<String>,
        Vec<String>,
        Vec<String>,
        Option<String>,
    );
    let seen = |n: &Lent<'_, '_>| -> Seen {
        (
            n.index,
            [n.head.name(), n.head.op_type()].map(String::from),
            n.head.input.iter().map(|s| s.to_string()).collect(),
            n.head.output.iter().map(|s| s.to_string()).collect(),
            n.attributes().iter().map(|a| format!("{a:?}")).collect(),
            n.ahead.map(|h| h.name().to_string()),
        )
    };
    let fresh =
        || decode_lazy(Bytes::from(model.clone()), &DecodeOptions::default()).expect("lazy");
    let lazy = fresh();
    let mut want = Vec::new();
    let mut heads = NodeHeads::new(Seq::Kept(&lazy.lists.node), 4);
    while let Some(n) = heads.next() {
        want.push(seen(&n));
    }
    assert_eq!(want.len(), n_nodes);
    // Look-ahead within a batch only (the end of one has none).
    let want_fed = |w: &[Seen]| -> Vec<Seen> {
        w.iter()
            .map(|s| {
                let mut s = s.clone();
                if s.0 % 256 >= 256 - 4 {
                    s.5 = None;
                }
                s
            })
            .collect()
    };
    let want = want_fed(&want);
    for start in ["never", "first", "half-way", "slow"] {
        // A fresh model each time: nothing decoded by an earlier read.
        let lazy = fresh();
        let feed = HeadFeed::new(Seq::Kept(&lazy.lists.node));
        let got = std::thread::scope(|s| {
            let mut reader = feed.reader(4);
            let mut got = Vec::new();
            if start == "first" {
                s.spawn(|| feed.produce());
            }
            if start == "slow" {
                // Every other batch held 2 ms: the reader reads it itself.
                s.spawn(|| {
                    feed.produce_pausing(
                        || false,
                        |b| {
                            if b % 2 == 1 {
                                std::thread::sleep(std::time::Duration::from_millis(2));
                            }
                        },
                    )
                });
            }
            while let Some(n) = reader.next_head() {
                got.push(seen(&n));
                if start == "half-way" && got.len() == n_nodes / 2 {
                    s.spawn(|| feed.produce());
                }
            }
            got
        });
        assert_eq!(got.len(), want.len(), "{start}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w, "{start}");
        }
    }
    // A batch the reader took from a slow producer, which hands it over
    // late, while the reader is still on the batches before the slot's
    // next: the slot goes to its next batch all the same (a reader that
    // waited on the slot's stale state would never finish: watched).
    let lazy: &'static _ = Box::leak(Box::new(fresh()));
    let (done, finished) = std::sync::mpsc::channel();
    let want_slow = want.clone();
    std::thread::spawn(move || {
        let feed = HeadFeed::new(Seq::Kept(&lazy.lists.node));
        let got = std::thread::scope(|s| {
            s.spawn(|| {
                feed.produce_pausing(
                    || false,
                    |b| {
                        if b == 1 {
                            std::thread::sleep(std::time::Duration::from_millis(1));
                        }
                    },
                )
            });
            let mut reader = feed.reader(4);
            let mut got = Vec::new();
            while let Some(n) = reader.next_head() {
                if n.index % 256 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(300));
                }
                got.push(seen(&n));
            }
            got
        });
        let _ = done.send(got == want_slow);
    });
    let same = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the reader of a slow producer finishes");
    assert!(same, "what a slow producer's reader lends");
    // Every node output in order, gathered as a producer's idle work, in
    // part, or not at all before the gathering is finished.
    {
        use onnxfast_core::ir::view::{Gathering, IdleWork};
        let outputs: Vec<String> = want.iter().flat_map(|w| w.3.clone()).collect();
        for steps in [0, 3, usize::MAX] {
            let lazy = fresh();
            let gathering = Gathering::new(&lazy.lists.node);
            let mut k = 0;
            while k < steps && gathering.step() {
                k += 1;
            }
            let got = gathering.finish().expect("outputs read from bytes");
            assert_eq!(got, outputs, "{steps} steps first");
        }
        let lazy = fresh();
        let gathering = Gathering::new(&lazy.lists.node);
        let feed = HeadFeed::new(Seq::Kept(&lazy.lists.node));
        std::thread::scope(|s| {
            let (feed, gathering) = (&feed, &gathering);
            s.spawn(move || feed.produce_with(|| gathering.step()));
            let mut reader = feed.reader(4);
            while let Some(n) = reader.next_head() {
                if n.index % 256 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(500));
                }
            }
        });
        // (What the producer did not gather, finish does.)
        assert_eq!(gathering.finish().expect("outputs"), outputs);
    }
    // A producer ahead of a slow reader does its other work meanwhile: the
    // reader stops at node 256 until it has (not a race against the clock:
    // a stopped reader leaves the producer ahead however they are
    // scheduled; the bound only ends a broken run).
    let lazy = fresh();
    let feed = HeadFeed::new(Seq::Kept(&lazy.lists.node));
    let idle_steps = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let (steps, feed) = (&idle_steps, &feed);
        s.spawn(move || {
            feed.produce_with(|| {
                steps.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 < 1000
            })
        });
        let mut reader = feed.reader(4);
        while let Some(n) = reader.next_head() {
            if n.index == 256 {
                for _ in 0..60_000 {
                    if idle_steps.load(std::sync::atomic::Ordering::Relaxed) > 0 {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        }
    });
    assert!(
        idle_steps.into_inner() > 0,
        "the producer worked while ahead"
    );
    // A reader gone after 700 nodes: the producer returns.
    let lazy = fresh();
    let feed = HeadFeed::new(Seq::Kept(&lazy.lists.node));
    std::thread::scope(|s| {
        s.spawn(|| feed.produce());
        let mut reader = feed.reader(4);
        for _ in 0..700 {
            assert!(reader.next_head().is_some());
        }
    });
    // A producer that panics holding its first batch (batch 0: the reader
    // starts once it holds it) leaves the batch to the reader.
    let lazy = fresh();
    let feed = HeadFeed::new(Seq::Kept(&lazy.lists.node));
    let holding = std::sync::atomic::AtomicBool::new(false);
    let (got, producer) = std::thread::scope(|s| {
        let producer = s.spawn(|| {
            feed.produce_pausing(
                || false,
                |b| {
                    holding.store(true, std::sync::atomic::Ordering::Release);
                    panic!("the producer fails on batch {b}");
                },
            )
        });
        let started = std::time::Instant::now();
        while !holding.load(std::sync::atomic::Ordering::Acquire) {
            assert!(started.elapsed().as_secs() < 60, "the producer starts");
            std::thread::yield_now();
        }
        let mut reader = feed.reader(4);
        let mut got = Vec::new();
        while let Some(n) = reader.next_head() {
            got.push(seen(&n));
        }
        drop(reader);
        (got, producer.join())
    });
    assert!(producer.is_err(), "the producer panicked");
    assert_eq!(got, want, "what the reader of a failed producer lends");
    // Schedules at random: producer and reader pausing here and there
    // (the producer while it holds a batch, past the reader's patience or
    // not), readers gone early. Each lends what NodeHeads lends, and ends.
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    for round in 0..40 {
        let lazy = fresh();
        let feed = HeadFeed::new(Seq::Kept(&lazy.lists.node));
        let (holds, waits, stop) = (next(), next(), next() % 4);
        let stop_at = if stop == 0 {
            (next() % n_nodes as u64) as usize
        } else {
            usize::MAX
        };
        let got = std::thread::scope(|s| {
            s.spawn(|| {
                feed.produce_pausing(
                    || false,
                    |b| {
                        if (holds >> (b % 64)) & 1 == 1 {
                            let micros = (holds >> 8).wrapping_mul(b as u64 + 1) % 60;
                            std::thread::sleep(std::time::Duration::from_micros(micros));
                        }
                    },
                )
            });
            let mut reader = feed.reader(4);
            let mut got = Vec::new();
            while let Some(n) = reader.next_head() {
                got.push(seen(&n));
                if got.len() == stop_at {
                    break;
                }
                if n.index % 256 == 0 && (waits >> (n.index / 256 % 64)) & 1 == 1 {
                    std::thread::sleep(std::time::Duration::from_micros(waits % 80));
                }
            }
            got
        });
        let expected = &want[..got.len()];
        assert_eq!(&got[..], expected, "round {round}");
        if stop_at == usize::MAX {
            assert_eq!(got.len(), want.len(), "round {round}");
        }
    }
}

/// Initializers read from their bytes by inference (name, element type and
/// dims; a tensor decoded only when a rule reads its value) give what the
/// decoded tensors give: the header of every encoding protobuf allows
/// (dims packed or not, in several runs; a name or type given twice, the
/// later kept; a negative or absent type), a constant read for its value
/// (a Reshape's shape), a conflict with a declared type, and the same
/// written-back model as the eager inference.
/// A gathering finished with many nodes left gathers them in two halves:
/// every node output still comes in order, whether a node has none, one
/// or two outputs, and whether it was decoded before or is read from its
/// bytes, wherever the halves meet.
#[test]
fn gathering_many_nodes_at_the_end_keeps_their_order() {
    use onnxfast_core::ir::view::{Gathering, IdleWork};
    let n_nodes = 20_000;
    let mut graph = Vec::new();
    let mut want = Vec::new();
    for i in 0..n_nodes {
        let mut body = [ld(1, format!("v{i}").as_bytes()), ld(4, b"Split")].concat();
        for k in 0..i % 3 {
            let name = format!("o{i}_{k}");
            body.extend(ld(2, name.as_bytes()));
            want.push(name);
        }
        graph.extend(ld(1, &body));
    }
    let model = ld(7, &graph);
    for (steps, decoded_every) in [(0, 0), (0, 7), (1, 5), (4, 0), (usize::MAX, 3)] {
        let lazy =
            decode_lazy(Bytes::from(model.clone()), &DecodeOptions::default()).expect("lazy");
        if decoded_every > 0 {
            for i in (0..n_nodes).step_by(decoded_every) {
                lazy.lists.node.get(i).expect("decoded");
            }
        }
        let gathering = Gathering::new(&lazy.lists.node);
        let mut k = 0;
        while k < steps && gathering.step() {
            k += 1;
        }
        let got = gathering.finish().expect("outputs read");
        assert!(
            got.iter().eq(want.iter()),
            "{steps} steps first, every {decoded_every} decoded"
        );
    }
}

#[test]
fn initializers_read_from_bytes_infer_as_decoded_ones() {
    use onnxfast_core::infer::{infer_shapes_lazy, InferOptions};
    use onnxfast_core::proto::{
        tensor_shape_proto::dimension::Value, type_proto, OperatorSetIdProto,
    };
    let n = 300;
    let mut nodes: Vec<NodeProto> = (0..n).map(node).collect();
    // v{n} (2 x 3 x 4) reshaped by the constant `shape` (an initializer).
    nodes.push(NodeProto {
        op_type: Some("Reshape".into()),
        input: ["v300".into(), "shape".into()].into_iter().collect(),
        output: ["flat".into()].into_iter().collect(),
        ..NodeProto::default()
    });
    let mut initializer: Vec<TensorProto> = (0..200)
        .map(|i| TensorProto {
            name: Some(format!("w{i}")),
            data_type: Some(1),
            dims: vec![i % 5, 3],
            raw_data: Some(vec![0u8; (i % 5) as usize * 12].into()),
            ..TensorProto::default()
        })
        .collect();
    initializer.push(TensorProto {
        name: Some("shape".into()),
        data_type: Some(7),
        dims: vec![2],
        raw_data: Some(
            [6i64, 4]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
                .into(),
        ),
        ..TensorProto::default()
    });
    // An initializer that contradicts its declaration: a finding.
    initializer.push(TensorProto {
        name: Some("w_declared".into()),
        data_type: Some(7),
        dims: vec![5],
        int64_data: vec![1, 2, 3, 4, 5],
        ..TensorProto::default()
    });
    let graph = GraphProto {
        name: Some("g".into()),
        node: nodes,
        input: vec![typed("v0", 1, &[2, 3, 4])],
        output: vec![ValueInfoProto {
            name: Some("flat".into()),
            ..ValueInfoProto::default()
        }],
        value_info: vec![typed("w_declared", 1, &[5])],
        initializer,
        ..GraphProto::default()
    };
    let mut graph_bytes = graph.encode_to_vec();
    // Tensors of the encodings prost does not write (field 5: initializer).
    // dims unpacked, then a packed run: [2, 3, 7]
    let mut unpacked = varint(1, 2);
    unpacked.extend(varint(1, 3));
    unpacked.extend(ld(1, &[7]));
    unpacked.extend(ld(8, b"odd_dims"));
    unpacked.extend(varint(2, 1));
    graph_bytes.extend(ld(5, &unpacked));
    // A name and a type given twice (the later kept), the type negative.
    let mut twice = ld(8, b"first");
    twice.extend(varint(2, 7));
    twice.extend(ld(1, &[4]));
    twice.extend(ld(8, b"second"));
    twice.extend(varint(2, (-3i64) as u64));
    graph_bytes.extend(ld(5, &twice));
    // No type, no dims, no name.
    graph_bytes.extend(ld(5, &ld(9, &[1, 2, 3, 4])));
    let header = ModelProto {
        ir_version: Some(10),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        ..ModelProto::default()
    };
    let mut bytes = header.encode_to_vec();
    bytes.extend(ld(7, &graph_bytes));
    same_as_eager(&bytes);
    let options = DecodeOptions::default();
    let eager = decode::<ModelProto>(Bytes::copy_from_slice(&bytes), &options).expect("eager");
    let lazy = decode_lazy(Bytes::copy_from_slice(&bytes), &options).expect("lazy");
    let list = &lazy.lists.initializer;
    let decoded = &eager.graph.as_ref().expect("graph").initializer;
    assert_eq!(list.len(), decoded.len());
    for (i, t) in decoded.iter().enumerate() {
        let h = list.header(i).expect("a header read from the bytes");
        assert_eq!(
            (h.name, h.data_type, h.dims.to_vec()),
            (t.name(), t.data_type, t.dims.clone()),
            "initializer {i}"
        );
    }
    assert_eq!(list.header(decoded.len() - 2).expect("h").name, "second");
    // Inference reads no tensor but the one whose value it needs.
    let plain = InferOptions::default();
    let (written, lists, inference, _) =
        infer_shapes_lazy(&lazy.model, &lazy.lists, &plain).expect("infer");
    let touched = (0..list.len())
        .filter(|&i| list.cached(i).is_some())
        .count();
    assert!(touched <= 64, "{touched} initializers decoded");
    assert!(list.cached(200).is_some(), "the shape constant was read");
    let (got, found) = infers_as_eager((written, lists, inference), eager.clone());
    assert!(found.iter().any(|d| d.contains("w_declared")), "{found:?}");
    let flat = got
        .graph
        .as_ref()
        .and_then(|g| g.output.first())
        .and_then(|o| o.r#type.as_ref())
        .and_then(|t| match &t.value {
            Some(type_proto::Value::TensorType(t)) => t.shape.as_ref(),
            _ => None,
        })
        .map(|s| s.dim.iter().map(|d| d.value.clone()).collect::<Vec<_>>());
    assert_eq!(
        flat,
        Some(vec![Some(Value::DimValue(6)), Some(Value::DimValue(4))])
    );
}

#[test]
fn a_pass_decodes_each_tensor_as_a_fresh_decode_does() {
    // A pass decodes into one tensor again and again, keeping its lists'
    // buffers: nothing of one tensor may show in the next.
    let initializer: Vec<TensorProto> = (0..300)
        .map(|i| TensorProto {
            name: (i % 4 != 0).then(|| format!("w{i}")),
            data_type: (i % 5 != 0).then_some(1 + (i % 3) as i32 * 6),
            dims: (0..i % 4).map(|d| d as i64 + 1).collect(),
            float_data: vec![0.5; i % 3],
            int32_data: vec![7; (i + 1) % 3],
            int64_data: vec![9; (i + 2) % 3],
            raw_data: if i % 7 == 0 {
                Some(Bytes::from(vec![1u8; 8]))
            } else {
                None
            },
            ..TensorProto::default()
        })
        .collect();
    let model = ModelProto {
        ir_version: Some(9),
        graph: Some(GraphProto {
            name: Some("g".into()),
            initializer,
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    };
    let bytes = Bytes::from(model.encode_to_vec());
    let lazy = decode_lazy(bytes, &DecodeOptions::default()).expect("lazy");
    let list = &lazy.lists.initializer;
    let mut seen = 0;
    list.for_each_in(0..list.len(), |i, t| {
        let fresh = list.decode(i).expect("decode");
        assert_eq!(t.encode_to_vec(), fresh.encode_to_vec(), "tensor {i}");
        assert_eq!(*t, model.graph.as_ref().expect("graph").initializer[i]);
        seen += 1;
    })
    .expect("pass");
    assert_eq!(seen, 300);
}

/// Node heads read from a node's bytes (what inference reads of a node,
/// never decoding it) hold what the decoded node holds, over 20,000
/// generated nodes: every field of NodeProto, repeated singular fields
/// (the last wins), unknown fields, wrong wire types, text that is not
/// UTF-8, attributes. A head without attributes is read exactly for the
/// nodes that decode and hold no attributes, metadata_props or device
/// configurations, and `kept_by_reader` never passes over one. The
/// checker's views (attributes decoded) hold what the decoded node holds,
/// and so does a reader's read of head and attributes (`read_into`, into
/// lists holding another node's), which is refused exactly where the
/// decoded node holds a tensor or a graph (or fields a view does not
/// read), as `kept_by_reader` finds from the bytes.
#[test]
fn node_heads_read_what_decoding_gives() {
    use onnxfast_core::proto::NodeHead;
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let cat = |parts: &[Vec<u8>]| parts.concat();
    // Attributes: plain ones (short and past the 64 bytes read_into
    // decodes before looking), and ones holding a tensor or a graph (short
    // and long), which a reader of attributes keeps decoded.
    let packed: Vec<u8> = (0..70u8).collect();
    let attributes = [
        cat(&[ld(1, b"alpha"), varint(20, 1), varint(2, 0)]),
        cat(&[ld(1, b"perm"), varint(20, 7), ld(8, &[1, 0, 2])]),
        cat(&[ld(1, b"perm"), varint(20, 7), ld(8, &packed)]),
        cat(&[ld(1, b"mode"), varint(20, 3), ld(4, b"constant")]),
        cat(&[
            ld(1, b"value"),
            varint(20, 4),
            ld(5, &cat(&[varint(2, 1), ld(8, b"t")])),
        ]),
        cat(&[
            ld(1, b"value"),
            varint(20, 4),
            ld(5, &cat(&[varint(2, 2), ld(9, &packed)])),
        ]),
        cat(&[ld(1, b"body"), varint(20, 5), ld(6, &ld(2, b"g"))]),
        cat(&[ld(1, b"branches"), varint(20, 10), ld(11, &ld(2, b"g"))]),
    ];
    let (mut heads, mut decoded_only, mut views, mut read) = (0, 0, 0, 0usize);
    let (mut kept_by_reader, mut plain_nodes) = (0, 0);
    for _ in 0..20_000 {
        let mut body = Vec::new();
        for _ in 0..next() % 8 {
            // Fields 1-10 of NodeProto and one it does not have.
            let number = [1, 1, 2, 2, 3, 4, 4, 5, 6, 7, 8, 9, 10, 99][(next() % 14) as usize];
            if next() % 12 == 0 {
                body.extend(varint(number, next() % 300));
                continue;
            }
            let payload: Vec<u8> = match number {
                5 => attributes[(next() % attributes.len() as u64) as usize].clone(),
                9 => ld(1, b"k").into_iter().chain(ld(2, b"v")).collect(),
                10 => ld(1, b"config"),
                _ => (0..next() % 6)
                    .map(|_| match next() % 9 {
                        0 => 0xc3,
                        1 => 0x80 | (next() as u8 & 0x3f),
                        _ => b'a' + (next() % 26) as u8,
                    })
                    .collect(),
            };
            body.extend(ld(number, &payload));
        }
        let model = ld(7, &ld(1, &body));
        let Ok(lazy) = decode_lazy(Bytes::from(model), &DecodeOptions::default()) else {
            continue;
        };
        let list = &lazy.lists.node;
        // The checker's view of the node (read before anything decodes it).
        let mut viewed = None;
        let pass = list.for_each_node_in(0..1, |_, n| {
            if let onnxfast_core::decode::lazy::NodeRef::View(v) = n {
                use onnxfast_core::proto::NodeFields;
                viewed = Some((
                    [v.node_name(), v.node_op_type(), v.node_domain()].map(String::from),
                    v.inputs().map(String::from).collect::<Vec<_>>(),
                    v.outputs().map(String::from).collect::<Vec<_>>(),
                    v.attributes().to_vec(),
                ));
            }
        });
        // A reader's read of head and attributes, into lists holding
        // another node's (reused in place).
        let mut read_head = NodeHead::default();
        read_head.output.push("left over");
        let mut read_attributes = vec![
            onnxfast_core::proto::AttributeProto {
                name: Some("stale".into()),
                ints: vec![7, 7],
                floats: vec![1.0],
                i: Some(3),
                ..Default::default()
            };
            3
        ];
        let read_count = list.read_into(0, &mut read_head, &mut read_attributes);
        let read_attributes = read_attributes[..read_count.unwrap_or(0)].to_vec();
        // A head: a read that found no attribute; read again into a head
        // holding another node's names.
        let head = (read_count == Some(0)).then(|| read_head.clone());
        if head.is_some() {
            assert!(!list.kept_by_reader(0), "{body:?}");
        }
        let mut into = NodeHead::default();
        into.input.push("left over");
        let mut no_attributes = Vec::new();
        assert_eq!(
            list.read_into(0, &mut into, &mut no_attributes) == Some(0),
            head.is_some(),
            "{body:?}"
        );
        if let Some((names, inputs, outputs, attributes)) = viewed {
            let node = list.get(0).expect("a viewed node decodes");
            assert!(pass.is_ok());
            assert_eq!(
                names,
                [node.name(), node.op_type(), node.domain()].map(String::from)
            );
            assert_eq!(
                inputs,
                node.input.iter().map(|s| s.to_string()).collect::<Vec<_>>()
            );
            assert_eq!(
                outputs,
                node.output
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
            );
            assert_eq!(attributes, node.attribute, "{body:?}");
            views += 1;
        }
        // A node the scan calls plain holds no tensor, no graph, no
        // metadata_props or device_configurations (readers then skip
        // looking for them).
        if list.is_plain(0) {
            let node = list.get(0).expect("a plain node decodes");
            assert!(
                !node.attribute.iter().any(|a| a.holds_message())
                    && node.metadata_props().is_empty()
                    && node.device_configurations().is_empty(),
                "{body:?}"
            );
            plain_nodes += 1;
        }
        match (list.get(0), read_count) {
            (Ok(node), Some(_)) => {
                let want = NodeHead::of(node);
                assert_eq!(
                    (read_head.input.as_slice(), read_head.output.as_slice()),
                    (want.input.as_slice(), want.output.as_slice()),
                    "{body:?}"
                );
                assert_eq!(
                    (read_head.name(), read_head.op_type(), read_head.domain()),
                    (want.name(), want.op_type(), want.domain()),
                    "{body:?}"
                );
                assert_eq!(read_attributes, node.attribute, "{body:?}");
                assert!(!list.kept_by_reader(0), "{body:?}");
                read += usize::from(!read_attributes.is_empty());
            }
            (Ok(node), None) => {
                // Kept: what a reader may borrow for longer, or what a view
                // does not read.
                assert!(
                    node.attribute.iter().any(|a| a.holds_message())
                        || !node.metadata_props().is_empty()
                        || !node.device_configurations().is_empty(),
                    "{body:?}"
                );
                assert!(list.kept_by_reader(0), "{body:?}");
                kept_by_reader += 1;
            }
            (Err(_), Some(_)) => panic!("a read of a node that does not decode: {body:?}"),
            (Err(_), None) => {}
        }
        match (list.get(0), head) {
            (Ok(node), Some(head)) => {
                let want = NodeHead::of(node);
                for h in [&head, &into] {
                    assert_eq!(
                        (h.input.as_slice(), h.output.as_slice()),
                        (want.input.as_slice(), want.output.as_slice()),
                        "{body:?}"
                    );
                    assert_eq!(
                        (h.name(), h.op_type(), h.domain(), h.overload()),
                        (want.name(), want.op_type(), want.domain(), want.overload()),
                        "{body:?}"
                    );
                    assert!(h.attribute.is_empty() && want.attribute.is_empty());
                }
                heads += 1;
            }
            (Ok(node), None) => {
                let plain = node.attribute.is_empty()
                    && node.metadata_props().is_empty()
                    && node.device_configurations().is_empty();
                assert!(!plain, "a plain node without a head: {body:?}");
                decoded_only += 1;
            }
            (Err(_), Some(_)) => panic!("a head for a node that does not decode: {body:?}"),
            (Err(_), None) => {}
        };
    }
    // The stream reaches each case often.
    assert!(
        heads > 1_000 && decoded_only > 1_000 && views > 2_000,
        "{heads} {decoded_only} {views}"
    );
    assert!(
        read > 100 && kept_by_reader > 500 && plain_nodes > 500,
        "{read} {kept_by_reader} {plain_nodes}"
    );
}

/// The scan's plain bits of a model of many windows (scanned on the pool
/// beside the walk, each window's elements counted from its first): a
/// bit for exactly the nodes of names, texts and plain attributes, and
/// the checks of the model (whose nodes holding a graph lie in later
/// windows) what the eager checker finds.
#[test]
fn plain_nodes_are_found_in_every_window() {
    let doc = "d".repeat(120);
    let attribute = |i: usize| -> onnxfast_core::proto::AttributeProto {
        use onnxfast_core::proto::{AttributeExtras, AttributeProto};
        let named = |name: &str, r#type: i32| AttributeProto {
            name: Some(name.into()),
            r#type: Some(r#type),
            ..AttributeProto::default()
        };
        match i % 5 {
            0 => AttributeProto {
                ints: vec![1, 0, 2],
                ..named("perm", 7)
            },
            1 => AttributeProto {
                f: Some(0.1),
                ..named("alpha", 1)
            },
            2 => AttributeProto {
                extras: Some(Box::new(AttributeExtras {
                    t: Some(Box::new(TensorProto {
                        data_type: Some(7),
                        int64_data: vec![1],
                        ..TensorProto::default()
                    })),
                    ..AttributeExtras::default()
                })),
                ..named("value", 4)
            },
            3 => AttributeProto {
                extras: Some(Box::new(AttributeExtras {
                    g: Some(Box::new(GraphProto {
                        name: Some("body".into()),
                        ..GraphProto::default()
                    })),
                    ..AttributeExtras::default()
                })),
                ..named("body", 5)
            },
            _ => named("mode", 3),
        }
    };
    // Every 97th node holds a tensor or a graph or metadata; the others
    // a doc string and a plain attribute or none.
    let nodes: Vec<NodeProto> = (0..90_000)
        .map(|i| {
            let mut n = node(i);
            let mut extras = onnxfast_core::proto::NodeExtras {
                doc_string: Some(doc.as_str().into()),
                ..Default::default()
            };
            if i % 97 == 0 {
                match (i / 97) % 3 {
                    0 => n.attribute.push(attribute(2)),
                    1 => n.attribute.push(attribute(3)),
                    _ => extras.metadata_props.push(Default::default()),
                }
            }
            n.extras = Some(Box::new(extras));
            if i % 97 != 0 && i % 3 == 0 {
                n.attribute.push(attribute(i % 2));
            }
            n
        })
        .collect();
    let plain: Vec<bool> = (0..nodes.len()).map(|i| i % 97 != 0).collect();
    let model = ModelProto {
        ir_version: Some(10),
        opset_import: vec![onnxfast_core::proto::OperatorSetIdProto {
            version: Some(21),
            ..Default::default()
        }],
        graph: Some(GraphProto {
            name: Some("g".into()),
            node: nodes,
            input: vec![typed("v0", 1, &[2])],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    };
    let bytes = model.encode_to_vec();
    assert!(bytes.len() > 3 * onnxfast_core::decode::source::RELEASE_WINDOW);
    let lazy = decode_lazy(Bytes::from(bytes.clone()), &DecodeOptions::default()).expect("loads");
    let list = &lazy.lists.node;
    let found: Vec<bool> = (0..list.len()).map(|i| list.is_plain(i)).collect();
    assert_eq!(found, plain);
    let check = CheckOptions::default();
    let want = check_model(&model, &check);
    let got = check_lazy(&lazy.model, &lazy.lists, &check).expect("lazy check");
    let show = |r: &onnxfast_core::checker::Report| -> Vec<String> {
        r.diagnostics
            .iter()
            .map(|d| format!("{} {}", d.code, d.location))
            .collect()
    };
    assert_eq!(show(&got), show(&want));
    assert_eq!(got.counts, want.counts);
}

/// A field of `field` with wire type `wire` and raw `payload` (a varint's
/// bytes, fixed bytes, or a length-delimited value with its length).
fn raw_field(field: u32, wire: prost::encoding::WireType, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(field, wire, &mut out);
    if wire == prost::encoding::WireType::LengthDelimited {
        prost::encoding::encode_varint(payload.len() as u64, &mut out);
    }
    out.extend_from_slice(payload);
    out
}

fn varint_bytes(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_varint(v, &mut out);
    out
}

/// One random initializer's bytes: every field the checks read, written
/// packed or not, in one run or several, given twice (the last singular
/// value wins), absent, or holding what onnx refuses (negative dims, too
/// few values, two data fields, external data, unknown types), among
/// fields the checks do not read (doc string, segment, metadata, unknown).
fn random_initializer(next: &mut impl FnMut() -> u64, i: usize) -> Vec<u8> {
    use prost::encoding::WireType::{LengthDelimited as Len, SixtyFourBit, ThirtyTwoBit, Varint};
    let mut t = Vec::new();
    let pick = |next: &mut dyn FnMut() -> u64, n: u64| next() % n;
    for _ in 0..pick(next, 3) {
        t.extend(raw_field(
            8,
            Len,
            format!("w{}", i + pick(next, 2) as usize).as_bytes(),
        ));
    }
    const TYPES: [i64; 15] = [0, 1, 2, 3, 6, 7, 8, 10, 11, 12, 16, 21, 25, 27, 99];
    for _ in 0..pick(next, 3) {
        let dt = TYPES[pick(next, 15) as usize];
        t.extend(raw_field(2, Varint, &varint_bytes(dt as u64)));
    }
    let dims: Vec<i64> = (0..pick(next, 4))
        .map(|_| [-1, 0, 1, 2, 3][pick(next, 5) as usize])
        .collect();
    match pick(next, 3) {
        0 => {
            let packed: Vec<u8> = dims.iter().flat_map(|&d| varint_bytes(d as u64)).collect();
            t.extend(raw_field(1, Len, &packed));
        }
        1 => {
            for &d in &dims {
                t.extend(raw_field(1, Varint, &varint_bytes(d as u64)));
            }
        }
        _ => {
            if let Some((first, rest)) = dims.split_first() {
                t.extend(raw_field(1, Varint, &varint_bytes(*first as u64)));
                let packed: Vec<u8> = rest.iter().flat_map(|&d| varint_bytes(d as u64)).collect();
                t.extend(raw_field(1, Len, &packed));
            }
        }
    }
    // Data: none, one or two fields, some values or none.
    for _ in 0..pick(next, 3) {
        let n = pick(next, 7) as usize;
        let packed = pick(next, 2) == 0;
        let field = [4u32, 5, 6, 7, 9, 10, 11][pick(next, 7) as usize];
        match field {
            4 if packed => t.extend(raw_field(4, Len, &vec![0u8; 4 * n])),
            4 => (0..n).for_each(|_| t.extend(raw_field(4, ThirtyTwoBit, &[0, 0, 128, 63]))),
            10 if packed => t.extend(raw_field(10, Len, &vec![0u8; 8 * n])),
            10 => (0..n).for_each(|_| t.extend(raw_field(10, SixtyFourBit, &[0; 8]))),
            6 => (0..n).for_each(|_| t.extend(raw_field(6, Len, b"s"))),
            9 => t.extend(raw_field(9, Len, &vec![0x55u8; pick(next, 24) as usize])),
            f if packed => {
                let values: Vec<u8> = (0..n).flat_map(|k| varint_bytes(k as u64 * 40)).collect();
                t.extend(raw_field(f, Len, &values));
            }
            f => (0..n).for_each(|k| t.extend(raw_field(f, Varint, &varint_bytes(k as u64)))),
        }
    }
    match pick(next, 8) {
        0 => t.extend(raw_field(14, Varint, &[1])),
        1 => t.extend(raw_field(14, Varint, &[0])),
        2 => t.extend(raw_field(14, Varint, &[5])),
        _ => {}
    }
    if pick(next, 8) == 0 {
        let mut entry = raw_field(1, Len, b"location");
        entry.extend(raw_field(2, Len, b"../outside.bin"));
        t.extend(raw_field(13, Len, &entry));
    }
    match pick(next, 10) {
        0 => t.extend(raw_field(12, Len, b"a doc string")),
        1 => t.extend(raw_field(3, Len, &raw_field(1, Varint, &[3]))),
        2 => t.extend(raw_field(99, Varint, &[7])),
        3 => {
            let mut entry = raw_field(1, Len, b"k");
            entry.extend(raw_field(2, Len, b"v"));
            t.extend(raw_field(16, Len, &entry));
        }
        _ => {}
    }
    t
}

/// Initializers of a decode-on-touch graph are checked as sketched from
/// their bytes (decoded only where the bytes cannot tell): every finding,
/// its place and the counts are what the check of the decoded tensors
/// gives, in each mode.
#[test]
fn initializers_checked_from_bytes_as_decoded() {
    let mut next = xorshift(0x5eed_7e45_0a11_c0de);
    for round in 0..4 {
        let mut graph = raw_field(2, prost::encoding::WireType::LengthDelimited, b"g");
        // Enough initializers for the parallel runs in some rounds.
        let n = [40, 300, 3_000, 5_000][round];
        for i in 0..n {
            graph.extend(ld(5, &random_initializer(&mut next, i)));
        }
        let mut model = ModelProto {
            ir_version: Some(10),
            opset_import: vec![onnxfast_core::proto::OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(21),
            }],
            ..ModelProto::default()
        }
        .encode_to_vec();
        model.extend(ld(7, &graph));
        // (Every such model decodes: the comparison below is not skipped.)
        let lazy = decode_lazy(Bytes::copy_from_slice(&model), &DecodeOptions::default())
            .expect("a model of random initializers decodes");
        assert_eq!(lazy.lists.initializer.len(), n);
        // Each sketch holds what the decoded tensor holds, and only the
        // external and FLOAT6 tensors are left to decoding.
        let list = &lazy.lists.initializer;
        let mut sketched = 0;
        for i in 0..n {
            let t = list.get(i).expect("an initializer decodes");
            let left = t.data_location == Some(1) || matches!(t.data_type, Some(27 | 28));
            let Some(sketch) = list.sketch(i) else {
                assert!(left, "initializer {i} not sketched: {t:?}");
                continue;
            };
            assert!(!left, "initializer {i} sketched: {t:?}");
            sketched += 1;
            assert_eq!(sketch.header.name, t.name());
            assert_eq!(sketch.header.data_type, t.data_type);
            assert_eq!(sketch.header.dims.as_slice(), t.dims.as_slice());
            assert_eq!(sketch.raw_data, t.raw_data.as_deref());
            assert_eq!(sketch.data_location, t.data_location);
            let counts = [
                t.float_data.len(),
                t.int32_data.len(),
                t.string_data.len(),
                t.int64_data.len(),
                t.double_data.len(),
                t.uint64_data.len(),
            ];
            assert_eq!(sketch.counts, counts, "initializer {i}: {t:?}");
        }
        assert!(sketched * 4 > n * 3, "{sketched} of {n}");
        checks_as_eager(&model);
    }
}

/// Names of a 1 MiB+ node among small ones in a mapped file are not lent
/// from its bytes (reading them would keep its page-cache folio mapped):
/// `strings` gives `None` and the node decodes as it would; its small
/// neighbours, and the same big node from unmapped bytes, are read from
/// their bytes.
#[test]
fn a_big_mapped_node_is_decoded_for_its_names() {
    use onnxfast_core::decode::source;
    use onnxfast_core::proto::schema::fields::node_proto as F;
    use onnxfast_core::proto::{AttributeExtras, AttributeProto, NodeFields};

    let weight = TensorProto {
        name: Some("c".into()),
        dims: vec![1 << 19],
        data_type: Some(1),
        raw_data: Some(Bytes::from(vec![7u8; 2 << 20])),
        ..Default::default()
    };
    let constant = NodeProto {
        op_type: Some("Constant".into()),
        output: ["c".into()].into_iter().collect(),
        attribute: vec![AttributeProto {
            name: Some("value".into()),
            r#type: Some(4),
            extras: Some(Box::new(AttributeExtras {
                t: Some(Box::new(weight)),
                ..Default::default()
            })),
            ..Default::default()
        }],
        ..Default::default()
    };
    // Enough small nodes that the list is not one of weights (64 KiB an
    // element on average), whose elements are all read and released.
    let mut nodes: Vec<NodeProto> = (0..100).map(node).collect();
    nodes.insert(1, constant);
    let model = ModelProto {
        ir_version: Some(9),
        graph: Some(GraphProto {
            node: nodes,
            ..Default::default()
        }),
        ..Default::default()
    };
    let bytes = model.encode_to_vec();
    let path = std::env::temp_dir().join(format!("onnxfast-big-node-{}.onnx", std::process::id()));
    std::fs::write(&path, &bytes).expect("write");
    let mapped = source::map_file(&path).expect("map");
    let options = DecodeOptions {
        pages: mapped.pages.clone(),
        ..DecodeOptions::default()
    };
    let lazy = decode_lazy(mapped.bytes.clone(), &options).expect("lazy");
    let nodes = &lazy.lists.node;
    assert!(nodes.strings(1, F::OUTPUT).is_none());
    assert_eq!(nodes.get(1).expect("decoded").output[0], "c");
    for i in [0, 2, 100] {
        let read = nodes.strings(i, F::OUTPUT).expect("a small node is read");
        let decoded: Vec<&str> = nodes.get(i).expect("decoded").outputs().collect();
        assert_eq!(read[..], decoded[..]);
        nodes.release_peeked(i); // not a list of weights: nothing to do
    }
    let unmapped = decode_lazy(Bytes::from(bytes), &DecodeOptions::default()).expect("lazy");
    assert_eq!(
        unmapped.lists.node.strings(1, F::OUTPUT).expect("read")[..],
        ["c"]
    );
    std::fs::remove_file(&path).expect("remove");
}
