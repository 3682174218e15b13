//! What the binding caches per loaded model to answer questions about its
//! graphs: each graph's value index (onnxfast-core's `ir::DefUse`,
//! built on first use), where each subgraph sits below the main graph, and
//! the types of every value after inference (built on the first question
//! about a type).

use std::sync::{Arc, OnceLock};

use std::collections::HashMap;

use onnxfast_core::decode::lazy::{GraphLists, LazyList};
use onnxfast_core::error::DecodeError;
use onnxfast_core::infer::{self, LazyWritten, WrittenBack};
use onnxfast_core::ir::{Declared, DefUse, DefUseBuilder};
use onnxfast_core::proto;
use onnxfast_core::proto::schema::fields;
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
    /// Graphs written back whole: every graph of a model decoded whole,
    /// the written-back subgraphs of one decoded on touch.
    graphs: HashMap<Steps, HashMap<Str, proto::TypeProto>>,
    /// The main graph of a model decoded on touch.
    main: Option<LazyMain>,
}

/// A main graph decoded on touch, after write-back: its lists write each
/// entry back as it is decoded, so a value's type is read from the one
/// entry that declares it; nothing is built for the others.
struct LazyMain {
    written: LazyWritten,
    /// The `value_info` entries inference appended, by name: their index
    /// in the written-back list.
    appended: HashMap<Str, usize>,
    /// Initializers' tensor types by name (the last of a name), built on
    /// the first question about a value no entry types.
    initializers: OnceLock<Result<HashMap<Str, proto::TypeProto>, DecodeError>>,
}

impl LazyMain {
    fn new(written: LazyWritten) -> LazyMain {
        let names = written.value_info.appended_names();
        let first = written.lists.value_info.len().saturating_sub(names.len());
        let appended = names
            .enumerate()
            .map(|(j, name)| (Str::from(name), first + j))
            .collect();
        LazyMain {
            written,
            appended,
            initializers: OnceLock::new(),
        }
    }

    fn get(
        &self,
        name: &str,
        declared: Option<Declared>,
    ) -> Result<Option<&proto::TypeProto>, DecodeError> {
        let graph = self.written.model.graph.as_ref();
        fn typed(list: Option<&[proto::ValueInfoProto]>, i: usize) -> Option<&proto::TypeProto> {
            list?.get(i)?.r#type.as_ref()
        }
        let declared = match declared {
            Some(Declared::Output(i)) => typed(graph.map(|g| g.output.as_slice()), i),
            Some(Declared::Input(i)) => typed(graph.map(|g| g.input.as_slice()), i),
            Some(Declared::ValueInfo(i)) => self.written.lists.value_info.get(i)?.r#type.as_ref(),
            None => match self.appended.get(name) {
                Some(&i) => self.written.lists.value_info.get(i)?.r#type.as_ref(),
                None => None,
            },
        };
        if declared.is_some() || self.written.lists.initializer.is_empty() {
            return Ok(declared);
        }
        let types = self
            .initializers
            .get_or_init(|| initializer_types(&self.written.lists.initializer));
        Ok(types.as_ref().map_err(Clone::clone)?.get(name))
    }
}

/// Every initializer's tensor type, by name (the last of a name), read
/// from the tensors' headers (decoded where the list cannot read one).
fn initializer_types(
    list: &LazyList<proto::TensorProto>,
) -> Result<HashMap<Str, proto::TypeProto>, DecodeError> {
    let mut out = HashMap::with_capacity(list.len());
    // A header's name is read after its pages were released: the reader
    // releases them again behind it, so weights do not stay mapped.
    let mut behind = list.release_behind();
    for i in 0..list.len() {
        behind.at(i);
        let (name, t) = match list.header(i) {
            Some(h) => (h.name, tensor_type_of(h.data_type.unwrap_or(0), &h.dims)),
            None => {
                let t = list.get(i)?;
                (t.name(), tensor_type(t))
            }
        };
        out.insert(Str::from(name), t);
    }
    Ok(out)
}

impl TypeStore {
    /// The type of `name` in the graph `steps` lead to, whose value index
    /// says which entry `declared` it.
    pub fn get(
        &self,
        steps: &Steps,
        name: &str,
        declared: Option<Declared>,
    ) -> Result<Option<&proto::TypeProto>, DecodeError> {
        if let (true, Some(main)) = (steps.is_empty(), &self.main) {
            return main.get(name, declared);
        }
        Ok(self.graphs.get(steps).and_then(|g| g.get(name)))
    }

    /// The types of a model written back whole.
    fn whole(mut model: proto::ModelProto) -> TypeStore {
        let mut store = TypeStore::default();
        if let Some(main) = model.graph.as_mut() {
            store.add_graphs(main, Vec::new());
        }
        store
    }

    /// The types of a model decoded on touch, after write-back: its main
    /// graph's read on demand, those of its subgraphs (below `source`'s
    /// nodes holding a graph, which inference decoded and kept, or their
    /// written-back versions) now.
    fn lazy(written: LazyWritten, source: &GraphLists) -> Result<TypeStore, DecodeError> {
        let mut store = TypeStore::default();
        let edited: HashMap<usize, &proto::NodeProto> = written
            .node
            .as_ref()
            .map(|e| e.nodes().collect())
            .unwrap_or_default();
        for i in 0..source.node.len() {
            let node = match edited.get(&i) {
                Some(&n) => n,
                None if source.node.cached(i).is_none() && !source.node.kept_by_reader(i) => {
                    // Read by inference from its bytes: no attribute holds
                    // a graph (decoding it would keep it for nothing).
                    continue;
                }
                None => source.node.get(i)?,
            };
            if !node.attribute.iter().any(|a| a.g().is_some()) {
                continue;
            }
            let mut node = node.clone();
            for (attr, sub) in subgraphs_of(&mut node) {
                store.add_graphs(sub, vec![(i, attr)]);
            }
        }
        store.main = Some(LazyMain::new(written));
        Ok(store)
    }

    /// `g`, at `steps`, and the subgraphs below it.
    fn add_graphs(&mut self, g: &mut proto::GraphProto, steps: Steps) {
        let mut stack: Vec<(&mut proto::GraphProto, Steps)> = vec![(g, steps)];
        while let Some((g, steps)) = stack.pop() {
            self.graphs.insert(steps.clone(), take_types(g));
            for (i, node) in g.node.iter_mut().enumerate() {
                for (attr, sub) in subgraphs_of(node) {
                    let mut below = steps.clone();
                    below.push((i, attr));
                    stack.push((sub, below));
                }
            }
        }
    }
}

/// A node's subgraphs as steps name them: the first attribute of each name
/// that holds a graph.
fn subgraphs_of(node: &mut proto::NodeProto) -> Vec<(String, &mut proto::GraphProto)> {
    let mut out: Vec<(String, &mut proto::GraphProto)> = Vec::new();
    for a in node.attribute.iter_mut() {
        let name = a.name().to_string();
        if out.iter().any(|(n, _)| *n == name) {
            continue;
        }
        if let Some(sub) = a.g_mut() {
            out.push((name, sub));
        }
    }
    out
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
            b.reserve(lists.initializer.len().saturating_add(lists.node.len()));
            // Copied out of the map with the pages behind released (each
            // weight's header would keep the folio it is in mapped).
            for (i, name) in lists.initializer.name_table()?.iter().enumerate() {
                b.initializer(i, name.unwrap_or(""));
            }
            lists
                .sparse_initializer
                .for_each_in(0..lists.sparse_initializer.len(), |i, s| {
                    b.sparse_initializer(i, s)
                })?;
            // Names are read from the entries' bytes; only a node with
            // subgraphs is decoded (and kept: its subgraphs are indexed).
            let vi = &lists.value_info;
            for i in 0..vi.len() {
                match vi.strings(i, fields::value_info_proto::NAME) {
                    Some(names) => b.value_info_named(i, names.last().copied().unwrap_or("")),
                    None => b.value_info(i, vi.get(i)?),
                }
            }
            for i in 0..lists.node.len() {
                let names = lists.node.names(i)?;
                if names.has_subgraph {
                    b.node(i, lists.node.get(i)?);
                } else {
                    b.node_names(i, &names);
                }
            }
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
    let RootMessage::Model(model) = &root.message else {
        return Ok(TypeStore::default());
    };
    let flags = root.flags;
    // Decoded on touch: written back as onnxfast.infer_shapes does, with
    // nothing of the main graph built beyond what inference keeps.
    if let Some(lists) = model.graph.as_ref().and_then(|g| root.lists_of(g)) {
        let options = crate::shapes::options(root, flags);
        let (written, _, _) = infer::write_back_lazy(model, lists, &options)?;
        return Ok(match written {
            WrittenBack::Lists(w) => TypeStore::lazy(*w, lists)?,
            WrittenBack::Whole(whole) => TypeStore::whole(*whole),
        });
    }
    let (annotated, _) = crate::shapes::annotated(root, model, flags)?;
    Ok(TypeStore::whole(annotated))
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
    tensor_type_of(t.data_type(), &t.dims)
}

fn tensor_type_of(elem_type: i32, dims: &[i64]) -> proto::TypeProto {
    let dim = |d: i64| tensor_shape_proto::Dimension {
        value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
        ..Default::default()
    };
    proto::TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem_type),
            shape: Some(proto::TensorShapeProto {
                dim: dims.iter().map(|&d| dim(d)).collect(),
            }),
        })),
        ..Default::default()
    }
}
