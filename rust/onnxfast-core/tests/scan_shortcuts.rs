//! The scan's shortcuts — the short loop indexing the main graph's list
//! elements, the plain-node loop, children of list elements accounted from
//! a byte-identical one walked before — count exactly what its generic
//! steps count (`scan_reference`), on graphs built to stress them: repeated
//! and varied children, more variants than the table holds, children too
//! long to compare, children with many message types below them, unknown
//! groups, depth limits. A graph over several release windows is scanned
//! beside the walk, on the thread pool, or on the calling thread from
//! inside the pool: the same counts, the same fault.

#![allow(clippy::expect_used)]

use bytes::Bytes;
use prost::Message;

use onnxfast_core::decode::scan::{scan, scan_reference, DEFAULT_MAX_DEPTH};
use onnxfast_core::proto::schema::ids;
use onnxfast_core::proto::{
    attribute_proto::AttributeType, tensor_shape_proto, type_proto, AttributeProto, GraphProto,
    ModelProto, NodeProto, SparseTensorProto, StringStringEntryProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto,
};

fn tensor_type(dims: &[i64]) -> TypeProto {
    TypeProto {
        denotation: None,
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(1),
            shape: Some(TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|&d| tensor_shape_proto::Dimension {
                        denotation: None,
                        value: Some(if d < 0 {
                            tensor_shape_proto::dimension::Value::DimParam(format!("s{}", -d))
                        } else {
                            tensor_shape_proto::dimension::Value::DimValue(d)
                        }),
                    })
                    .collect(),
            }),
        })),
    }
}

/// sequence<map<int64, optional<tensor>>>: seven message types below the
/// root type, more than a remembered child may list.
fn nested_type() -> TypeProto {
    let optional = TypeProto {
        denotation: None,
        value: Some(type_proto::Value::OptionalType(Box::new(
            type_proto::Optional {
                elem_type: Some(Box::new(tensor_type(&[2, -1]))),
            },
        ))),
    };
    let map = TypeProto {
        denotation: None,
        value: Some(type_proto::Value::MapType(Box::new(type_proto::Map {
            key_type: Some(7),
            value_type: Some(Box::new(optional)),
        }))),
    };
    TypeProto {
        denotation: Some("nested".into()),
        value: Some(type_proto::Value::SequenceType(Box::new(
            type_proto::Sequence {
                elem_type: Some(Box::new(map)),
            },
        ))),
    }
}

fn value_info(name: &str, ty: TypeProto) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(ty),
        ..ValueInfoProto::default()
    }
}

fn attribute(i: usize) -> AttributeProto {
    match i % 5 {
        // 100 variants: more than the table's 64 entries.
        0 => AttributeProto {
            name: Some("perm".into()),
            r#type: Some(AttributeType::Ints as i32),
            ints: vec![0, (i % 100) as i64, 2, 1],
            ..AttributeProto::default()
        },
        1 => AttributeProto {
            name: Some("alpha".into()),
            r#type: Some(AttributeType::Float as i32),
            f: Some(0.1),
            ..AttributeProto::default()
        },
        // Over 1 KiB: walked each time.
        2 => AttributeProto {
            name: Some("value".into()),
            r#type: Some(AttributeType::Tensor as i32),
            ..AttributeProto::default()
        }
        .with_extras(|e| {
            e.t = Some(Box::new(TensorProto {
                data_type: Some(1),
                dims: vec![512],
                raw_data: Some(Bytes::from(vec![7u8; 2048])),
                ..TensorProto::default()
            }))
        }),
        // A subgraph with its own node, attribute and types.
        3 => AttributeProto {
            name: Some("body".into()),
            r#type: Some(AttributeType::Graph as i32),
            ..AttributeProto::default()
        }
        .with_extras(|e| {
            e.g = Some(Box::new(GraphProto {
                name: Some("body".into()),
                node: vec![NodeProto {
                    op_type: Some("Transpose".into()),
                    input: ["a".into()].into_iter().collect(),
                    output: ["b".into()].into_iter().collect(),
                    attribute: vec![attribute(0)],
                    ..NodeProto::default()
                }],
                input: vec![value_info("a", tensor_type(&[1, 2, 3, 4]))],
                output: vec![value_info("b", nested_type())],
                ..GraphProto::default()
            }))
        }),
        _ => AttributeProto {
            name: Some("strings".into()),
            r#type: Some(AttributeType::Strings as i32),
            ..AttributeProto::default()
        }
        .with_extras(|e| e.strings = vec![Bytes::from_static(b"a"), Bytes::from(vec![b'x'; 40])]),
    }
}

fn graph(n: usize) -> GraphProto {
    let mut g = GraphProto {
        name: Some("stress".into()),
        ..GraphProto::default()
    };
    for i in 0..n {
        let mut node = NodeProto {
            op_type: Some("Op".into()),
            name: Some(format!("n{i}").as_str().into()),
            input: [format!("t{i}").as_str().into()].into_iter().collect(),
            output: [format!("t{}", i + 1).as_str().into()]
                .into_iter()
                .collect(),
            ..NodeProto::default()
        };
        // None, one or two attributes; the same child twice in a node too.
        for _ in 0..(i % 3) {
            node.attribute.push(attribute(i));
        }
        g.node.push(node);
        let ty = match i % 4 {
            0 => tensor_type(&[1, 64, 8, 8]),
            1 => tensor_type(&[(i % 70) as i64, -((i % 3) as i64 + 1)]),
            2 => nested_type(),
            _ => TypeProto::default(),
        };
        g.value_info.push(value_info(&format!("t{i}"), ty));
        g.initializer.push(TensorProto {
            name: Some(format!("w{i}")),
            data_type: Some(1),
            dims: vec![4],
            data_location: Some(1),
            external_data: vec![
                StringStringEntryProto {
                    key: Some("location".into()),
                    value: Some("weights.bin".into()),
                },
                StringStringEntryProto {
                    key: Some("offset".into()),
                    value: Some(format!("{}", 16 * (i % 8))),
                },
            ],
            ..TensorProto::default()
        });
        if i % 10 == 0 {
            g.sparse_initializer.push(SparseTensorProto {
                values: Some(Box::new(TensorProto {
                    name: Some(format!("s{i}")),
                    data_type: Some(1),
                    dims: vec![2],
                    float_data: vec![1.0, 2.0],
                    ..TensorProto::default()
                })),
                indices: Some(Box::new(TensorProto {
                    data_type: Some(7),
                    dims: vec![2],
                    int64_data: vec![0, 3],
                    ..TensorProto::default()
                })),
                dims: vec![8],
            });
        }
    }
    g
}

fn model(g: GraphProto) -> Vec<u8> {
    ModelProto {
        ir_version: Some(10),
        graph: Some(g),
        ..ModelProto::default()
    }
    .encode_to_vec()
}

fn varint(v: u64, out: &mut Vec<u8>) {
    prost::encoding::encode_varint(v, out);
}

fn field(number: u64, payload: &[u8], out: &mut Vec<u8>) {
    varint((number << 3) | 2, out);
    varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

fn agree(label: &str, file: &[u8]) {
    for depth in [DEFAULT_MAX_DEPTH, 12, 8, 6, 4, 2, 1] {
        let fast = scan(file, ids::MODEL_PROTO, depth).ok();
        let generic = scan_reference(file, ids::MODEL_PROTO, depth);
        assert_eq!(fast, generic, "{label}, depth limit {depth}");
    }
}

#[test]
fn shortcuts_count_what_the_generic_steps_count() {
    for n in [0, 1, 7, 300, 5_000] {
        agree(&format!("{n} nodes"), &model(graph(n)));
    }
}

#[test]
fn unknown_groups_and_fields_in_list_elements() {
    // Nodes and value_info entries carrying unknown fields (a group, a
    // varint, a length-delimited one) between their known fields, and the
    // graph's lists interleaved with its other fields.
    let g = graph(40);
    let mut graph_bytes = Vec::new();
    for (i, node) in g.node.iter().enumerate() {
        let mut bytes = node.encode_to_vec();
        if i % 2 == 0 {
            varint((99 << 3) | 3, &mut bytes);
            varint(1 << 3, &mut bytes);
            varint(5, &mut bytes);
            varint((99 << 3) | 4, &mut bytes);
        }
        varint(98 << 3, &mut bytes);
        varint(300, &mut bytes);
        field(97, b"unknown", &mut bytes);
        field(1, &bytes, &mut graph_bytes);
        if i % 7 == 0 {
            field(2, format!("name{i}").as_bytes(), &mut graph_bytes);
        }
        if let Some(vi) = g.value_info.get(i) {
            let mut bytes = vi.encode_to_vec();
            field(96, b"?", &mut bytes);
            field(13, &bytes, &mut graph_bytes);
        }
        if let Some(t) = g.initializer.get(i) {
            field(5, &t.encode_to_vec(), &mut graph_bytes);
        }
    }
    let mut file = Vec::new();
    varint(1 << 3, &mut file);
    varint(10, &mut file);
    field(7, &graph_bytes, &mut file);
    agree("unknown fields", &file);
    // A graph given twice (protobuf merges them): both deferred.
    let mut twice = file.clone();
    field(7, &graph_bytes, &mut twice);
    agree("graph twice", &twice);
    // Faults inside and between elements: both refuse.
    for cut in [file.len() - 1, file.len() / 2, file.len() / 3, 40, 5] {
        agree(&format!("cut at {cut}"), &file[..cut]);
    }
    let mut bad = file.clone();
    if let Some(b) = bad.iter_mut().rev().find(|b| **b == b'n') {
        *b = 0xff;
    }
    agree("invalid UTF-8 late", &bad);
}

#[test]
fn children_repeated_near_the_depth_limit() {
    // value_info types nested ever deeper, each repeated: under small
    // limits some are refused, the first time they are met.
    let mut g = GraphProto::default();
    let mut ty = tensor_type(&[1]);
    for level in 0..12 {
        for _ in 0..3 {
            g.value_info
                .push(value_info(&format!("v{level}"), ty.clone()));
        }
        ty = TypeProto {
            denotation: None,
            value: Some(type_proto::Value::SequenceType(Box::new(
                type_proto::Sequence {
                    elem_type: Some(Box::new(ty)),
                },
            ))),
        };
    }
    let file = model(g);
    agree("nested types", &file);
    for depth in 2..30 {
        let fast = scan(&file, ids::MODEL_PROTO, depth).ok();
        assert_eq!(
            fast,
            scan_reference(&file, ids::MODEL_PROTO, depth),
            "depth {depth}"
        );
    }
}

/// A model of several release windows: scanned with its windows beside the
/// walk (the calling thread is not the pool's) and from inside the pool
/// (each window before the walk goes on), it gives the generic steps'
/// counts; an unsound element in a middle window is the same fault, at the
/// same place, both ways.
#[test]
fn windows_scanned_beside_the_walk_or_before_it_agree() {
    let file = model(graph(60_000));
    assert!(
        file.len() > 2 * onnxfast_core::decode::source::RELEASE_WINDOW,
        "{} bytes: fewer than three windows",
        file.len()
    );
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool");
    let inside = |file: &[u8]| one.install(|| scan(file, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH));
    let beside = scan(&file, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect("a sound model");
    assert_eq!(
        Some(&beside),
        scan_reference(&file, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).as_ref()
    );
    assert_eq!(inside(&file).expect("a sound model"), beside);

    // A node's name (field 3) made invalid UTF-8: in the first window, a
    // middle one, the last node (the nodes come first, the other lists
    // after them).
    for node in [3, 40_000, 59_999] {
        let mut name = vec![0x1a];
        let text = format!("n{node}");
        name.push(text.len() as u8);
        name.extend_from_slice(text.as_bytes());
        let at = file
            .windows(name.len())
            .position(|w| w == name.as_slice())
            .expect("the node's name");
        let mut bad = file.clone();
        bad[at + 2] = 0xff;
        let fault = scan(&bad, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("invalid UTF-8");
        assert_eq!(inside(&bad).expect_err("invalid UTF-8"), fault);
        assert!(
            fault.path.starts_with(&format!("graph.node[{node}]")),
            "{fault:?} at {at}"
        );
    }
    // A budget the walk's own projection passes midway: refused, with
    // windows still being scanned on the pool (they are waited for).
    let budget = beside.heap / 8;
    let refusal = |file: &[u8]| {
        onnxfast_core::decode::scan::scan_model(file, DEFAULT_MAX_DEPTH, None, Some(budget))
            .expect_err("over the budget")
    };
    let refused = refusal(&file);
    assert!(
        matches!(
            refused.kind,
            onnxfast_core::error::DecodeErrorKind::MemoryBudget { .. }
        ),
        "{refused:?}"
    );
    assert_eq!(one.install(|| refusal(&file)), refused);

    // The last value_info entry's name (field 1), in the last window.
    let name = b"\x0a\x06t59999";
    let at = file
        .windows(name.len())
        .rposition(|w| w == name)
        .expect("the entry's name");
    assert!(at > file.len() - onnxfast_core::decode::source::RELEASE_WINDOW);
    let mut bad = file.clone();
    bad[at + 2] = 0xff;
    let fault = scan(&bad, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("invalid UTF-8");
    assert_eq!(inside(&bad).expect_err("invalid UTF-8"), fault);
    assert!(
        fault.path.starts_with("graph.value_info[59999]"),
        "{fault:?} at {at}"
    );
}
