//! Checks onnx lacks, run with `strict=True` (codes S9xx / W9xx).

use crate::diag::codes;
use std::collections::HashSet;

use super::graph::{item, node_step};
use super::{q, Checker};
use crate::diag::{Location, Step};
use crate::proto::{type_proto, GraphProto, ModelProto, NodeProto, TensorProto, ValueInfoProto};

/// Tensor checks beyond onnx's: exact data sizes, known data types, and
/// external data that the loader can actually read.
pub(crate) fn check_tensor(
    c: &mut Checker<'_>,
    t: &TensorProto,
    loc: &Location,
    onnx_passed: bool,
) {
    if !onnx_passed {
        return;
    }
    let dt = t.data_type();
    if crate::tensor::elem_type(dt).is_none() {
        c.emit(
            codes::STRICT_DATA_TYPE,
            loc,
            format!(
                "tensor {} has data_type {dt}, which is not an ONNX element type",
                q(t.name())
            ),
        );
        return;
    }
    if crate::external::is_external(t) {
        let plan = match crate::tensor::plan(t) {
            Ok(p) => p,
            Err(e) => {
                c.emit(codes::STRICT_EXTERNAL_DATA, loc, e.to_string());
                return;
            }
        };
        let Some(expected) = plan.elem.raw_len(plan.count) else {
            return;
        };
        let store =
            crate::external::ExternalStore::new(c.options.model_dir.clone(), Default::default());
        if let Err(e) = store.read(t, expected) {
            c.emit(codes::STRICT_EXTERNAL_DATA, loc, e.to_string());
        }
        return;
    }
    // Sizes: onnx accepts data longer than the dims need; the loader does not.
    if let Err(e) = crate::tensor::plan(t) {
        c.emit(codes::STRICT_DATA_SIZE, loc, e.to_string());
    }
}

/// Model-wide strict checks: value_info types, unused initializers,
/// unreachable nodes, experimental operators.
pub(crate) fn check_model(c: &mut Checker<'_>, model: &ModelProto, _here: &Location) {
    let mut graphs: Vec<(&GraphProto, Location)> = Vec::new();
    if let Some(g) = &model.graph {
        graphs.push((g, Location::default()));
    }
    // Iterative walk over every graph and subgraph.
    let mut i = 0;
    while i < graphs.len() {
        let (g, parent) = (graphs[i].0, graphs[i].1.clone());
        let here = parent.child(Step::Graph(g.name().to_string()));
        for (k, n) in g.node.iter().enumerate() {
            for a in &n.attribute {
                let aloc = here
                    .child(node_step(k, n))
                    .child(Step::Attribute(a.name().to_string()));
                for sub in a.g().into_iter().chain(a.graphs().iter()) {
                    graphs.push((sub, aloc.clone()));
                }
            }
        }
        check_graph(c, g, &here);
        i += 1;
    }
}

fn check_graph(c: &mut Checker<'_>, g: &GraphProto, here: &Location) {
    for (k, vi) in g.value_info.iter().enumerate() {
        check_value_info(c, vi, &here.child(item("value_info", k, vi.name())));
    }
    for (field, list) in [
        ("input", &g.input),
        ("output", &g.output),
        ("value_info", &g.value_info),
    ] {
        for (k, vi) in list.iter().enumerate() {
            if let Some((i, v)) = vi.r#type.as_ref().and_then(negative_dim) {
                c.emit(
                    codes::STRICT_NEGATIVE_DIM,
                    &here.child(item(field, k, vi.name())),
                    format!(
                        "{} declares dim {i} as {v}, which is no size (a dynamic dim has a \
                         dim_param or no value)",
                        q(vi.name())
                    ),
                );
            }
        }
    }
    // Liveness from the graph outputs backwards; a node's subgraphs count
    // as reading every name they mention.
    let mut live: HashSet<&str> = g.output.iter().map(|o| o.name()).collect();
    let mut dead = Vec::new();
    for (k, n) in g.node.iter().enumerate().rev() {
        let used = n
            .output
            .iter()
            .any(|o| !o.is_empty() && live.contains(o.as_str()));
        if !used && !n.output.is_empty() {
            dead.push(k);
            continue;
        }
        live.extend(n.input.iter().map(|s| s.as_str()));
        collect_subgraph_reads(n, &mut live);
    }
    dead.reverse();
    for k in dead {
        let n = &g.node[k];
        c.emit(
            codes::DEAD_NODE,
            &here.child(node_step(k, n)),
            "no output of this node reaches a graph output (dead code)".into(),
        );
    }
    let mut read: HashSet<&str> = g.output.iter().map(|o| o.name()).collect();
    for n in &g.node {
        read.extend(n.input.iter().map(|s| s.as_str()));
        collect_subgraph_reads(n, &mut read);
    }
    for (k, t) in g.initializer.iter().enumerate() {
        if !t.name().is_empty() && !read.contains(t.name()) {
            c.emit(
                codes::UNUSED_INITIALIZER,
                &here.child(item("initializer", k, t.name())),
                format!("initializer {} is never used", q(t.name())),
            );
        }
    }
    for (k, n) in g.node.iter().enumerate() {
        if super::node::is_experimental(n) {
            c.emit(
                codes::EXPERIMENTAL_OPERATOR,
                &here.child(node_step(k, n)),
                format!(
                    "{} is an experimental operator (not checked against a schema)",
                    q(n.op_type())
                ),
            );
        }
    }
}

/// Adds every input name of every node inside `n`'s subgraphs.
fn collect_subgraph_reads<'a>(n: &'a NodeProto, into: &mut HashSet<&'a str>) {
    let mut stack: Vec<&'a GraphProto> = n
        .attribute
        .iter()
        .flat_map(|a| a.g().into_iter().chain(a.graphs().iter()))
        .collect();
    while let Some(g) = stack.pop() {
        for inner in &g.node {
            into.extend(inner.input.iter().map(|s| s.as_str()));
            for a in &inner.attribute {
                stack.extend(a.g().into_iter().chain(a.graphs().iter()));
            }
        }
        into.extend(g.output.iter().map(|o| o.name()));
    }
}

/// The first negative dim value of a type's shape (index, value), the
/// element types of sequences, optionals and maps included.
fn negative_dim(t: &crate::proto::TypeProto) -> Option<(usize, i64)> {
    use crate::proto::tensor_shape_proto::dimension::Value as D;
    let shape = match &t.value {
        Some(type_proto::Value::TensorType(x)) => x.shape.as_ref(),
        Some(type_proto::Value::SparseTensorType(x)) => x.shape.as_ref(),
        Some(type_proto::Value::SequenceType(x)) => {
            return x.elem_type.as_deref().and_then(negative_dim)
        }
        Some(type_proto::Value::OptionalType(x)) => {
            return x.elem_type.as_deref().and_then(negative_dim)
        }
        Some(type_proto::Value::MapType(x)) => {
            return x.value_type.as_deref().and_then(negative_dim)
        }
        _ => None,
    };
    shape?
        .dim
        .iter()
        .enumerate()
        .find_map(|(i, d)| match d.value {
            Some(D::DimValue(v)) if v < 0 => Some((i, v)),
            _ => None,
        })
}

/// `graph.value_info` entries (never checked by onnx): a name and a
/// complete type.
fn check_value_info(c: &mut Checker<'_>, vi: &ValueInfoProto, loc: &Location) {
    if vi.name().is_empty() {
        c.emit(
            codes::STRICT_VALUE_INFO,
            loc,
            "a value_info entry has no name".into(),
        );
        return;
    }
    let Some(t) = &vi.r#type else {
        c.emit(
            codes::STRICT_VALUE_INFO,
            loc,
            format!("value_info {} has no type", q(vi.name())),
        );
        return;
    };
    let problem = match &t.value {
        Some(type_proto::Value::TensorType(x)) => match crate::tensor::elem_type(x.elem_type()) {
            None => Some(format!("an unknown elem_type {}", x.elem_type())),
            Some(_) => None,
        },
        Some(type_proto::Value::SparseTensorType(x)) => crate::tensor::elem_type(x.elem_type())
            .is_none()
            .then(|| format!("an unknown elem_type {}", x.elem_type())),
        Some(type_proto::Value::SequenceType(x)) => x
            .elem_type
            .is_none()
            .then(|| "a sequence type without elem_type".to_string()),
        Some(type_proto::Value::OptionalType(x)) => x
            .elem_type
            .is_none()
            .then(|| "an optional type without elem_type".to_string()),
        Some(type_proto::Value::MapType(x)) => (x.key_type.is_none() || x.value_type.is_none())
            .then(|| "a map type without key_type or value_type".to_string()),
        Some(type_proto::Value::OpaqueType(_)) => None,
        None => Some("an empty type".to_string()),
    };
    if let Some(p) = problem {
        c.emit(
            codes::STRICT_VALUE_INFO,
            loc,
            format!("value_info {} has {p}", q(vi.name())),
        );
    }
}
