//! Type and shape inference on adversarial graphs ends with diagnostics, in
//! bounded work: huge ranks, dims near 2^63, recursive and exponentially
//! nested function calls, deep subgraphs, millions of symbolic dims.
//! (No timing is asserted; each case would not terminate, or would exhaust
//! memory, without the engine's bounds.)

use onnxfast_core::checker::{check_model, CheckOptions, Report};
use onnxfast_core::infer::{infer_model, InferOptions};
use onnxfast_core::proto::{
    attribute_proto::AttributeType, tensor_shape_proto, type_proto, AttributeProto, FunctionProto,
    GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto, TypeProto,
    ValueInfoProto,
};

fn dim_value(v: i64) -> tensor_shape_proto::Dimension {
    tensor_shape_proto::Dimension {
        denotation: None,
        value: Some(tensor_shape_proto::dimension::Value::DimValue(v)),
    }
}

fn dim_param(p: &str) -> tensor_shape_proto::Dimension {
    tensor_shape_proto::Dimension {
        denotation: None,
        value: Some(tensor_shape_proto::dimension::Value::DimParam(
            p.to_string(),
        )),
    }
}

fn tensor_vi(
    name: &str,
    elem: i32,
    dims: Option<Vec<tensor_shape_proto::Dimension>>,
) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(TypeProto {
            denotation: None,
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem),
                shape: dims.map(|dim| TensorShapeProto { dim }),
            })),
        }),
        ..ValueInfoProto::default()
    }
}

fn node(op: &str, domain: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        domain: (!domain.is_empty()).then(|| domain.into()),
        input: inputs.iter().map(|s| (*s).into()).collect(),
        output: outputs.iter().map(|s| (*s).into()).collect(),
        ..NodeProto::default()
    }
}

fn opset(domain: &str, version: i64) -> OperatorSetIdProto {
    OperatorSetIdProto {
        domain: Some(domain.to_string()),
        version: Some(version),
    }
}

fn model(graph: GraphProto, functions: Vec<FunctionProto>) -> ModelProto {
    ModelProto {
        ir_version: Some(10),
        opset_import: vec![opset("", 21), opset("local", 1)],
        graph: Some(graph),
        functions,
        ..ModelProto::default()
    }
}

fn full(m: &ModelProto) -> Report {
    check_model(
        m,
        &CheckOptions {
            full: true,
            ..CheckOptions::default()
        },
    )
}

fn codes(r: &Report) -> Vec<&'static str> {
    r.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn a_rank_of_a_million_is_an_unknown_shape() {
    let dims: Vec<_> = (0..1_000_000).map(|_| dim_value(1)).collect();
    let g = GraphProto {
        name: Some("g".into()),
        node: (0..50)
            .map(|i| {
                let input = if i == 0 {
                    "x".to_string()
                } else {
                    format!("t{}", i - 1)
                };
                node("Relu", "", &[&input], &[&format!("t{i}")])
            })
            .collect(),
        input: vec![tensor_vi("x", 1, Some(dims.clone()))],
        output: vec![tensor_vi("t49", 1, Some(dims))],
        ..GraphProto::default()
    };
    let m = model(g, Vec::new());
    let report = full(&m);
    assert!(report.ok(), "{:?}", codes(&report));
    let inferred = infer_model(
        &m,
        &InferOptions {
            collect_types: true,
            report_unfit: false,
            ..InferOptions::default()
        },
    );
    let t10 = inferred.graphs[0].values.iter().find(|(n, _)| n == "t10");
    let shown = t10.map(|(_, t)| inferred.symbols.show(t));
    assert_eq!(shown.as_deref(), Some("tensor(float)"));
}

#[test]
fn dims_near_i64_max_do_not_overflow() {
    let big = i64::MAX;
    let g = GraphProto {
        name: Some("g".into()),
        node: vec![
            node("MatMul", "", &["a", "b"], &["mm"]),
            node("Add", "", &["a", "c"], &["sum"]),
        ],
        input: vec![
            tensor_vi("a", 1, Some(vec![dim_value(big), dim_value(big)])),
            tensor_vi("b", 1, Some(vec![dim_value(big), dim_value(3)])),
            tensor_vi("c", 1, Some(vec![dim_value(big - 1), dim_value(big)])),
        ],
        output: vec![
            tensor_vi("mm", 1, Some(vec![dim_param("p"), dim_param("q")])),
            tensor_vi("sum", 1, Some(vec![dim_param("p"), dim_param("q")])),
        ],
        ..GraphProto::default()
    };
    let report = full(&model(g, Vec::new()));
    assert_eq!(codes(&report), ["E720"], "{report:?}");
}

fn call(f: &str, input: &str, output: &str) -> NodeProto {
    node(f, "local", &[input], &[output])
}

fn function(name: &str, nodes: Vec<NodeProto>) -> FunctionProto {
    FunctionProto {
        name: Some(name.into()),
        domain: Some("local".into()),
        input: vec!["x".into()],
        output: vec!["y".into()],
        node: nodes,
        opset_import: vec![opset("", 21), opset("local", 1)],
        ..FunctionProto::default()
    }
}

fn main_calling(f: &str) -> GraphProto {
    GraphProto {
        name: Some("g".into()),
        node: vec![call(f, "x", "y")],
        input: vec![tensor_vi("x", 1, Some(vec![dim_value(2)]))],
        output: vec![tensor_vi("y", 1, Some(vec![dim_param("n")]))],
        ..GraphProto::default()
    }
}

#[test]
fn recursive_functions_end() {
    let f = function("f", vec![call("g", "x", "y")]);
    let g = function("g", vec![call("f", "x", "y")]);
    let report = full(&model(main_calling("f"), vec![f, g]));
    assert!(codes(&report).contains(&"E603"), "{report:?}");
}

#[test]
fn exponential_function_calls_stop_at_the_budget() {
    // f0 calls f1 twice, f1 calls f2 twice, ... f59 is a Relu: 2^60 calls.
    let depth = 60;
    let mut functions = Vec::new();
    for k in 0..depth {
        let next = format!("f{}", k + 1);
        functions.push(function(
            &format!("f{k}"),
            vec![call(&next, "x", "h"), call(&next, "h", "y")],
        ));
    }
    functions.push(function(
        &format!("f{depth}"),
        vec![node("Relu", "", &["x"], &["y"])],
    ));
    let report = full(&model(main_calling("f0"), functions));
    assert!(codes(&report).contains(&"W792"), "{:?}", codes(&report));
    assert!(report.ok());
}

#[test]
fn a_million_symbolic_dims() {
    let inputs: Vec<ValueInfoProto> = (0..1000)
        .map(|i| {
            let dims = (0..1000).map(|j| dim_param(&format!("s{i}_{j}"))).collect();
            tensor_vi(&format!("x{i}"), 1, Some(dims))
        })
        .collect();
    let nodes = (0..1000)
        .map(|i| node("Relu", "", &[&format!("x{i}")], &[&format!("y{i}")]))
        .collect();
    let outputs = (0..1000)
        .map(|i| tensor_vi(&format!("y{i}"), 1, None))
        .collect();
    let g = GraphProto {
        name: Some("g".into()),
        node: nodes,
        input: inputs,
        output: outputs,
        ..GraphProto::default()
    };
    let m = model(g, Vec::new());
    let inferred = infer_model(&m, &InferOptions::default());
    assert!(inferred.diagnostics.is_empty());
    assert!(inferred.symbols.len() >= 1_000_000);
}

#[test]
fn a_cast_to_an_unknown_type_is_one_finding() {
    let to = AttributeProto {
        name: Some("to".into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(0),
        ..AttributeProto::default()
    };
    let mut cast = node("Cast", "", &["x"], &["c"]);
    cast.attribute.push(to);
    let g = GraphProto {
        name: Some("g".into()),
        node: vec![cast, node("Relu", "", &["c"], &["y"])],
        input: vec![tensor_vi("x", 1, Some(vec![dim_value(2)]))],
        output: vec![tensor_vi("y", 1, Some(vec![dim_param("n")]))],
        ..GraphProto::default()
    };
    // onnx types the output UNDEFINED and its type check cannot name it
    // (E704, ending the run): one finding, none at the Relu after it.
    let report = full(&model(g, Vec::new()));
    assert_eq!(codes(&report), ["E704"], "{report:?}");
}

/// An If whose then-branch holds an If, and so on: `depth` levels (each
/// else-branch is a single Relu).
fn nested_if(depth: usize) -> GraphProto {
    let leaf = |out: &str| GraphProto {
        name: Some("leaf".into()),
        node: vec![node("Relu", "", &["x"], &[out])],
        output: vec![tensor_vi(out, 1, None)],
        ..GraphProto::default()
    };
    let mut inner = leaf("y0");
    for level in 1..=depth {
        let out = format!("y{level}");
        let mut n = node("If", "", &["c"], &[&out]);
        let branches = [
            ("then_branch", std::mem::take(&mut inner)),
            ("else_branch", leaf(&format!("e{level}"))),
        ];
        for (branch, g) in branches {
            n.attribute.push(
                AttributeProto {
                    name: Some(branch.into()),
                    r#type: Some(AttributeType::Graph as i32),
                    ..AttributeProto::default()
                }
                .with_extras(|e| e.g = Some(Box::new(g))),
            );
        }
        inner = GraphProto {
            name: Some(format!("level{level}")),
            node: vec![n],
            output: vec![tensor_vi(&out, 1, None)],
            ..GraphProto::default()
        };
    }
    inner
}

#[test]
fn subgraphs_as_deep_as_a_file_can_nest() {
    // Decoding refuses messages nested deeper than 100 levels, and each If
    // level takes three (node, attribute, graph): 33 levels is the most a
    // file can hold. Run on a thread with a small stack, like a Python
    // worker thread's.
    let depth = 33;
    let mut g = nested_if(depth);
    g.name = Some("g".into());
    g.input = vec![
        tensor_vi("x", 1, Some(vec![dim_value(2)])),
        tensor_vi("c", 9, Some(vec![])),
    ];
    g.output = vec![tensor_vi(
        &format!("y{depth}"),
        1,
        Some(vec![dim_param("n")]),
    )];
    let m = model(g, Vec::new());
    let report = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || full(&m))
        .expect("thread")
        .join()
        .expect("no stack overflow");
    assert!(report.ok(), "{:?}", codes(&report));
}

/// data_prop over 20,000 Identity nodes of a 1-D input of 1,024 values: each
/// would keep 1,024 values (330 MB in all); the run's budget stops keeping
/// them, and the last Reshape still gets its rank from the type alone.
#[test]
fn data_prop_keeps_a_bounded_number_of_values() {
    let n = 20_000;
    let mut nodes = Vec::new();
    let mut prev = "s".to_string();
    for i in 0..n {
        let out = format!("s{i}");
        nodes.push(node("Identity", "", &[&prev], &[&out]));
        prev = out;
    }
    nodes.push(node("Reshape", "", &["x", &prev], &["y"]));
    let graph = GraphProto {
        node: nodes,
        input: vec![
            tensor_vi("x", 1, None),
            tensor_vi("s", 7, Some(vec![dim_value(1024)])),
        ],
        output: vec![tensor_vi("y", 1, None)],
        ..GraphProto::default()
    };
    let m = model(graph, Vec::new());
    let inference = infer_model(
        &m,
        &InferOptions {
            data_prop: true,
            collect_types: true,
            ..InferOptions::default()
        },
    );
    assert!(
        inference.diagnostics.is_empty(),
        "{:?}",
        inference.diagnostics
    );
    let main = &inference.graphs[0];
    let (_, y) = main
        .values
        .iter()
        .find(|(name, _)| name == "y")
        .expect("y typed");
    match y {
        onnxfast_core::ir::types::Type::Tensor(t) => {
            assert_eq!(t.shape.as_ref().map(|s| s.len()), Some(1024));
        }
        other => panic!("{other:?}"),
    }
}

/// symbolic over 20,000 pooling nodes of a symbolic size: the windows'
/// expressions nest floor divisions (`floor((floor((L + 1)/2) + 1)/2)`); past the nesting bound dims fall back
/// to unknown, so the run and the write-back stay shallow and fast.
#[test]
fn symbolic_chains_stay_bounded() {
    let n = 20_000;
    let ints = |name: &str, v: Vec<i64>| AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v,
        ..AttributeProto::default()
    };
    let mut nodes = Vec::new();
    let mut prev = "x".to_string();
    for i in 0..n {
        let out = format!("p{i}");
        let mut pool = node("MaxPool", "", &[&prev], &[&out]);
        pool.attribute.push(ints("kernel_shape", vec![2]));
        pool.attribute.push(ints("strides", vec![2]));
        pool.attribute.push(ints("pads", vec![1, 0]));
        nodes.push(pool);
        prev = out;
    }
    let graph = GraphProto {
        node: nodes,
        input: vec![tensor_vi(
            "x",
            1,
            Some(vec![dim_value(1), dim_value(3), dim_param("L")]),
        )],
        output: vec![tensor_vi(&prev, 1, None)],
        ..GraphProto::default()
    };
    let m = model(graph, Vec::new());
    let (annotated, inference, _) = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            onnxfast_core::infer::infer_shapes(
                m,
                &InferOptions {
                    symbolic: true,
                    ..InferOptions::default()
                },
            )
        })
        .expect("thread")
        .join()
        .expect("no stack overflow");
    assert!(
        inference.diagnostics.is_empty(),
        "{:?}",
        inference.diagnostics
    );
    let g = annotated.graph.expect("graph");
    let text = |name: &str| {
        let vi = g
            .value_info
            .iter()
            .chain(&g.output)
            .find(|v| v.name() == name)
            .expect("typed");
        format!("{:?}", vi.r#type)
    };
    assert!(text("p0").contains("floor((L + 1)/2)"), "{}", text("p0"));
    assert!(text("p19999").contains("unk__"), "{}", text("p19999"));
}
