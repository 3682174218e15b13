//! Large graphs (the parallel path: a silent SSA proof beside the node
//! checks) whose proof fails part-way: the exact walk that follows must
//! report what it would have reported alone. The proof adds outputs to
//! the scope as it goes and takes them back when it fails; a name left
//! behind would show as "assigned twice" or hide an undefined input.
//! Eager and streamed (decode on touch) checks must agree.
#![allow(clippy::expect_used)] // a test harness: panicking is how it fails

use onnxfast_core::checker::{check_lazy, check_model, CheckOptions};
use onnxfast_core::decode::lazy::decode_lazy;
use onnxfast_core::proto::{
    type_proto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto,
};
use onnxfast_core::DecodeOptions;
use prost::Message;

const NODES: usize = 1200;

fn float() -> TypeProto {
    TypeProto {
        denotation: None,
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(1),
            shape: Some(TensorShapeProto { dim: Vec::new() }),
        })),
    }
}

fn vi(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(float()),
        ..ValueInfoProto::default()
    }
}

/// A Relu chain x -> v0 -> v1 -> ... ; `edit` changes node `i`'s input
/// and output names.
fn chain(edit: impl Fn(usize, &mut String, &mut String)) -> ModelProto {
    let node = (0..NODES)
        .map(|i| {
            let mut input = if i == 0 {
                "x".to_string()
            } else {
                format!("v{}", i - 1)
            };
            let mut output = format!("v{i}");
            edit(i, &mut input, &mut output);
            NodeProto {
                op_type: Some("Relu".into()),
                input: vec![input.into()].into(),
                output: vec![output.into()].into(),
                ..NodeProto::default()
            }
        })
        .collect();
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(GraphProto {
            name: Some("g".into()),
            node,
            input: vec![vi("x")],
            output: vec![vi(&format!("v{}", NODES - 1))],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
}

/// Every finding as "code at node index", eager and streamed (equal).
fn findings(m: &ModelProto) -> Vec<String> {
    let options = CheckOptions::default();
    let eager: Vec<String> = check_model(m, &options)
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.location))
        .collect();
    let lazy = decode_lazy(m.encode_to_vec().into(), &DecodeOptions::default()).expect("decodes");
    let streamed: Vec<String> = check_lazy(&lazy.model, &lazy.lists, &options)
        .expect("checks")
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.location))
        .collect();
    assert_eq!(eager, streamed);
    eager
}

fn codes(found: &[String]) -> Vec<&str> {
    found.iter().filter_map(|f| f.split(' ').next()).collect()
}

#[test]
fn a_valid_chain_has_no_findings() {
    assert!(findings(&chain(|_, _, _| {})).is_empty());
}

#[test]
fn an_undefined_input_late_in_the_graph_is_the_only_finding() {
    let found = findings(&chain(|i, input, _| {
        if i == 1000 {
            *input = "nowhere".into();
        }
    }));
    assert_eq!(codes(&found), ["E212"], "{found:?}");
    assert!(found[0].contains("1000"), "{found:?}");
}

#[test]
fn a_name_assigned_twice_late_in_the_graph_is_the_only_finding() {
    // Node 1100 writes v5 again (and node 1101 reads v1099, still defined).
    let found = findings(&chain(|i, _, output| {
        if i == 1100 {
            *output = "v5".into();
        }
    }));
    assert!(codes(&found).contains(&"E213"), "{found:?}");
    assert!(
        codes(&found).iter().all(|c| *c == "E213" || *c == "E212"),
        "{found:?}"
    );
    assert_eq!(codes(&found).iter().filter(|c| **c == "E213").count(), 1);
}

#[test]
fn nodes_out_of_order_are_found_by_the_exact_walk() {
    // Node 600 reads v900, produced later.
    let found = findings(&chain(|i, input, _| {
        if i == 600 {
            *input = "v900".into();
        }
    }));
    assert_eq!(codes(&found), ["E212"], "{found:?}");
}

#[test]
fn initializer_names_are_checked_beside_the_proof() {
    // Initializers: one each node could read, one repeated, one without a
    // name and one giving the graph input a default (allowed from IR 4).
    let mut m = chain(|i, input, _| {
        if i == 700 {
            *input = "w3".into();
        }
    });
    let tensor = |name: Option<&str>| TensorProto {
        name: name.map(Into::into),
        data_type: Some(1),
        dims: vec![1],
        float_data: vec![1.0],
        ..TensorProto::default()
    };
    let g = m.graph.as_mut().expect("a graph");
    g.initializer = (0..NODES).map(|i| tensor(Some(&format!("w{i}")))).collect();
    g.initializer.push(tensor(Some("w5")));
    g.initializer.push(tensor(None));
    g.initializer.push(tensor(Some("x")));
    let found = findings(&m);
    assert_eq!(codes(&found), ["E208", "E207"], "{found:?}");
    assert!(
        found[0].contains(&format!("initializer[{NODES}]")),
        "{found:?}"
    );
}

#[test]
fn an_input_given_twice_by_initializers_is_a_repeated_name() {
    // From IR 4 repeated names are found in the scope (inputs first, then
    // each initializer); up to IR 3 in a table of the initializers' own.
    // Both ways: the second initializer of a name repeats it, whether the
    // name is a graph input or not.
    let tensor = |name: &str| TensorProto {
        name: Some(name.into()),
        data_type: Some(1),
        dims: vec![1],
        float_data: vec![1.0],
        ..TensorProto::default()
    };
    let mut m = chain(|_, _, _| {});
    let g = m.graph.as_mut().expect("a graph");
    g.initializer = vec![
        tensor("x"),
        tensor("w"),
        tensor("x"),
        tensor("w"),
        tensor("x"),
    ];
    let found = findings(&m);
    assert_eq!(codes(&found), ["E208", "E208", "E208"], "{found:?}");
    for (f, at) in found.iter().zip([2, 3, 4]) {
        assert!(f.contains(&format!("initializer[{at}]")), "{found:?}");
    }
    // Up to IR 3, 'w' is not a graph input: reported once, at its first
    // initializer.
    m.ir_version = Some(3);
    let found = findings(&m);
    assert_eq!(codes(&found), ["E209", "E208", "E208", "E208"], "{found:?}");
}
