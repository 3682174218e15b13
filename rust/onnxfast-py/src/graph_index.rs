//! What the binding caches per loaded model to answer questions about its
//! graphs: each graph's value index (onnxfast-core's `ir::DefUse`,
//! built on first use), where each subgraph sits below the main graph, and
//! the types of every value after inference (built on the first question
//! about a type).

use std::sync::Arc;

use std::collections::HashMap;

use onnxfast_core::error::DecodeError;
use onnxfast_core::ir::{Declared, DefUse, DefUseBuilder};
use onnxfast_core::proto;
use onnxfast_core::proto::{tensor_shape_proto, type_proto, Str};

use crate::root::{Ptr, Root, RootMessage};

/// A subgraph's place below the main graph: (node index, attribute name)
/// at each level, as onnxfast-core's `GraphTypes::steps`.
pub type Steps = Vec<(usize, String)>;

/// Every value's type after inference, by graph (keyed by [`Steps`]): the
/// type onnx's `infer_shapes` leaves on the value (its declaration,
/// completed by what inference found), and initializers' tensor types.
#[derive(Default)]
pub struct TypeStore {
    graphs: HashMap<Steps, HashMap<Str, proto::TypeProto>>,
}

impl TypeStore {
    pub fn get(&self, steps: &Steps, name: &str) -> Option<&proto::TypeProto> {
        self.graphs.get(steps)?.get(name)
    }
}

/// The value index of `graph`, cached on its root.
pub fn index(graph: &Ptr<proto::GraphProto>) -> Result<Arc<DefUse>, DecodeError> {
    let key = graph.addr();
    let cache = &graph.root().graph_indexes;
    if let Ok(map) = cache.lock() {
        if let Some(found) = map.get(&key) {
            return Ok(Arc::clone(found));
        }
    }
    let built = match graph.root().lists_of(graph) {
        // A main graph decoded on touch: its lists are read once, not kept.
        Some(lists) => {
            let mut b = DefUseBuilder::new(graph);
            lists
                .initializer
                .for_each_in(0..lists.initializer.len(), |i, t| {
                    b.initializer(i, t.name())
                })?;
            lists
                .sparse_initializer
                .for_each_in(0..lists.sparse_initializer.len(), |i, s| {
                    b.sparse_initializer(i, s)
                })?;
            lists
                .value_info
                .for_each_in(0..lists.value_info.len(), |i, v| b.value_info(i, v))?;
            lists
                .node
                .for_each_in(0..lists.node.len(), |i, n| b.node(i, n))?;
            b.finish()
        }
        None => DefUse::of_graph(graph),
    };
    let built = Arc::new(built);
    if let Ok(mut map) = cache.lock() {
        map.insert(key, Arc::clone(&built));
    }
    Ok(built)
}

/// The main graph of `root`'s model.
fn main_graph(root: &Root) -> Option<&proto::GraphProto> {
    match &root.message {
        RootMessage::Model(m) => m.graph.as_ref(),
        _ => None,
    }
}

/// Node `i` of `g`, when it is in memory (nodes of a graph decoded on touch
/// that were never touched hold no subgraph anyone points at).
fn node_of<'a>(root: &'a Root, g: &'a proto::GraphProto, i: usize) -> Option<&'a proto::NodeProto> {
    match root.lists_of(g) {
        Some(lists) => lists.node.cached(i),
        None => g.node.get(i),
    }
}

fn node_count(root: &Root, g: &proto::GraphProto) -> usize {
    root.lists_of(g).map_or(g.node.len(), |l| l.node.len())
}

/// The subgraph attribute `attr` of `node`: the first attribute of that
/// name holding a graph (the one a step names).
fn subgraph<'a>(node: &'a proto::NodeProto, attr: &str) -> Option<&'a proto::GraphProto> {
    node.attribute
        .iter()
        .find(|a| a.name() == attr && a.g().is_some())?
        .g()
}

/// Where `graph` sits below its model's main graph (empty for the main
/// graph); `None` for graphs elsewhere (function bodies, training graphs,
/// lists of graphs).
pub fn steps_of(graph: &Ptr<proto::GraphProto>) -> Option<Steps> {
    let root = graph.root();
    let key = graph.addr();
    if let Ok(map) = root.graph_steps.lock() {
        if let Some(found) = map.get(&key) {
            return found.clone();
        }
    }
    // Not seen yet: record every subgraph in memory now (nodes decoded on
    // touch since the last walk may hold new ones).
    let mut found: Vec<(usize, Steps)> = Vec::new();
    if let Some(main) = main_graph(root) {
        found.push((main as *const _ as usize, Vec::new()));
        let mut stack: Vec<(&proto::GraphProto, Steps)> = vec![(main, Vec::new())];
        while let Some((g, steps)) = stack.pop() {
            for i in 0..node_count(root, g) {
                let Some(node) = node_of(root, g, i) else {
                    continue;
                };
                for a in &node.attribute {
                    let Some(sub) = a.g() else {
                        continue;
                    };
                    if !subgraph(node, a.name()).is_some_and(|s| std::ptr::eq(s, sub)) {
                        continue;
                    }
                    let mut below = steps.clone();
                    below.push((i, a.name().to_string()));
                    found.push((sub as *const _ as usize, below.clone()));
                    stack.push((sub, below));
                }
            }
        }
    }
    let mine = found
        .iter()
        .find(|(addr, _)| *addr == key)
        .map(|(_, s)| s.clone());
    if let Ok(mut map) = root.graph_steps.lock() {
        for (addr, steps) in found {
            map.insert(addr, Some(steps));
        }
        map.entry(key).or_insert(None);
    }
    mine
}

/// The graph `steps` lead to in `root`'s model.
pub fn graph_at(root: &Arc<Root>, steps: &[(usize, String)]) -> Option<Ptr<proto::GraphProto>> {
    Ptr::try_new(Arc::clone(root), |r| {
        let mut g = main_graph(r)?;
        for (i, attr) in steps {
            g = subgraph(node_of(r, g, *i)?, attr)?;
        }
        Some(g)
    })
}

/// The types of `root`'s values after inference (inferred once, on the
/// first call, with the GIL released for large models).
pub fn types<'r>(py: pyo3::Python<'_>, root: &'r Arc<Root>) -> Result<&'r TypeStore, DecodeError> {
    if let Some(done) = root.types.get() {
        return Ok(done);
    }
    let large = root.source.len() >= crate::GIL_RELEASE_BYTES;
    let owned = Arc::clone(root);
    let built = crate::maybe_detach(py, large, move || build_types(&owned))?;
    Ok(root.types.get_or_init(|| built))
}

fn build_types(root: &Root) -> Result<TypeStore, DecodeError> {
    let mut store = TypeStore::default();
    let RootMessage::Model(model) = &root.message else {
        return Ok(store);
    };
    let flags = crate::shapes::Flags {
        max_diagnostics: onnxfast_core::checker::DEFAULT_MAX_DIAGNOSTICS,
        ..Default::default()
    };
    let (mut annotated, _) = crate::shapes::annotated(root, model, flags)?;
    if let Some(main) = annotated.graph.as_mut() {
        let mut stack: Vec<(&mut proto::GraphProto, Steps)> = vec![(main, Vec::new())];
        while let Some((g, steps)) = stack.pop() {
            store.graphs.insert(steps.clone(), take_types(g));
            for (i, node) in g.node.iter_mut().enumerate() {
                let mut names: Vec<String> = Vec::new();
                for a in node.attribute.iter_mut() {
                    let name = a.name().to_string();
                    if names.contains(&name) {
                        continue;
                    }
                    if let Some(sub) = a.g_mut() {
                        names.push(name.clone());
                        let mut below = steps.clone();
                        below.push((i, name));
                        stack.push((sub, below));
                    }
                }
            }
        }
    }
    Ok(store)
}

/// The types of a graph's values, by name: the entry that declares each
/// (`DefUse::declared`: an output, else an input, else a `value_info`
/// entry), else an initializer's tensor type.
fn take_types(g: &mut proto::GraphProto) -> HashMap<Str, proto::TypeProto> {
    let index = DefUse::declarations(g);
    let mut out = HashMap::new();
    for t in &g.initializer {
        out.insert(Str::from(t.name()), tensor_type(t));
    }
    let lists = [
        (
            &mut g.value_info,
            Declared::ValueInfo as fn(usize) -> Declared,
        ),
        (&mut g.input, Declared::Input),
        (&mut g.output, Declared::Output),
    ];
    for (list, slot) in lists {
        for (i, v) in list.iter_mut().enumerate() {
            if index.declared(v.name()) != Some(slot(i)) {
                continue;
            }
            if let Some(t) = v.r#type.take() {
                out.insert(Str::from(v.name()), t);
            }
        }
    }
    out
}

/// The tensor type an initializer has: its element type and static shape.
fn tensor_type(t: &proto::TensorProto) -> proto::TypeProto {
    let dim = |d: i64| tensor_shape_proto::Dimension {
        value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
        ..Default::default()
    };
    proto::TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(t.data_type()),
            shape: Some(proto::TensorShapeProto {
                dim: t.dims.iter().map(|&d| dim(d)).collect(),
            }),
        })),
        ..Default::default()
    }
}
