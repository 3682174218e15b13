//! Every tensor of a model: initializers, sparse tensors, attribute tensors,
//! in the main graph, subgraphs, training graphs and functions.
//!
//! Recursion follows graph nesting, which decoding bounds (message depth
//! ≤ 100), so it cannot overflow the stack on hostile input.

use crate::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, SparseTensorProto, TensorProto,
};

/// Calls `f` on every tensor of `model`, in file order within each graph.
pub fn for_each_tensor<'a>(model: &'a ModelProto, f: &mut dyn FnMut(&'a TensorProto)) {
    if let Some(g) = &model.graph {
        graph(g, f);
    }
    for t in &model.training_info {
        if let Some(g) = &t.initialization {
            graph(g, f);
        }
        if let Some(g) = &t.algorithm {
            graph(g, f);
        }
    }
    for func in &model.functions {
        nodes(&func.node, f);
        for a in &func.attribute_proto {
            attribute(a, f);
        }
    }
}

/// Calls `f` on every tensor of a graph and its subgraphs.
pub fn for_each_graph_tensor<'a>(g: &'a GraphProto, f: &mut dyn FnMut(&'a TensorProto)) {
    graph(g, f);
}

/// Calls `f` on every tensor of a node's attributes (subgraphs included).
pub fn for_each_node_tensor<'a>(n: &'a NodeProto, f: &mut dyn FnMut(&'a TensorProto)) {
    nodes(std::slice::from_ref(n), f);
}

fn sparse<'a>(s: &'a SparseTensorProto, f: &mut dyn FnMut(&'a TensorProto)) {
    if let Some(v) = &s.values {
        f(v);
    }
    if let Some(i) = &s.indices {
        f(i);
    }
}

fn graph<'a>(g: &'a GraphProto, f: &mut dyn FnMut(&'a TensorProto)) {
    for t in &g.initializer {
        f(t);
    }
    for s in &g.sparse_initializer {
        sparse(s, f);
    }
    nodes(&g.node, f);
}

fn nodes<'a>(ns: &'a [NodeProto], f: &mut dyn FnMut(&'a TensorProto)) {
    for n in ns {
        for a in &n.attribute {
            attribute(a, f);
        }
    }
}

fn attribute<'a>(a: &'a AttributeProto, f: &mut dyn FnMut(&'a TensorProto)) {
    if let Some(t) = a.t() {
        f(t);
    }
    for t in a.tensors() {
        f(t);
    }
    if let Some(s) = a.sparse_tensor() {
        sparse(s, f);
    }
    for s in a.sparse_tensors() {
        sparse(s, f);
    }
    if let Some(g) = a.g() {
        graph(g, f);
    }
    for g in a.graphs() {
        graph(g, f);
    }
}

/// Calls `f` on every tensor of `model`, mutably, stopping at the first error.
pub fn try_for_each_tensor_mut<E>(
    model: &mut ModelProto,
    f: &mut dyn FnMut(&mut TensorProto) -> Result<(), E>,
) -> Result<(), E> {
    fn sparse<E>(
        s: &mut SparseTensorProto,
        f: &mut dyn FnMut(&mut TensorProto) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some(v) = &mut s.values {
            f(v)?;
        }
        if let Some(i) = &mut s.indices {
            f(i)?;
        }
        Ok(())
    }
    fn attribute<E>(
        a: &mut AttributeProto,
        f: &mut dyn FnMut(&mut TensorProto) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some(t) = a.t_mut() {
            f(t)?;
        }
        for t in a.tensors_mut() {
            f(t)?;
        }
        if let Some(s) = a.sparse_tensor_mut() {
            sparse(s, f)?;
        }
        for s in a.sparse_tensors_mut() {
            sparse(s, f)?;
        }
        if let Some(g) = a.g_mut() {
            graph(g, f)?;
        }
        for g in a.graphs_mut() {
            graph(g, f)?;
        }
        Ok(())
    }
    fn graph<E>(
        g: &mut GraphProto,
        f: &mut dyn FnMut(&mut TensorProto) -> Result<(), E>,
    ) -> Result<(), E> {
        for t in &mut g.initializer {
            f(t)?;
        }
        for s in &mut g.sparse_initializer {
            sparse(s, f)?;
        }
        for n in &mut g.node {
            for a in &mut n.attribute {
                attribute(a, f)?;
            }
        }
        Ok(())
    }
    if let Some(g) = &mut model.graph {
        graph(g, f)?;
    }
    for t in &mut model.training_info {
        if let Some(g) = &mut t.initialization {
            graph(g, f)?;
        }
        if let Some(g) = &mut t.algorithm {
            graph(g, f)?;
        }
    }
    for func in &mut model.functions {
        for n in &mut func.node {
            for a in &mut n.attribute {
                attribute(a, f)?;
            }
        }
        for a in &mut func.attribute_proto {
            attribute(a, f)?;
        }
    }
    Ok(())
}
