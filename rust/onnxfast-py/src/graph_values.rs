//! `Graph.values`: a graph's values as objects, like the `Value` of onnx's
//! in-memory IR (`ir.h`): name, type (declared, completed by inference),
//! producer and consumers, inside subgraphs too, where the values of
//! enclosing graphs are visible.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use onnxfast_core::ir::evaluate::{evaluate, Unevaluated};
use onnxfast_core::ir::memory;
use onnxfast_core::ir::{Declared, Def, DefUse, Key};
use onnxfast_core::proto;
use onnxfast_core::proto::schema::fields;
use onnxfast_core::proto::{tensor_shape_proto, type_proto, Str};

use crate::graph_index;
use crate::handle::Access;
use crate::messages::{node_at, Graph, Node, Type};
use crate::root::Ptr;
use crate::untracked::{self, Acyclic};

fn decode_err(py: Python<'_>) -> impl FnOnce(onnxfast_core::error::DecodeError) -> PyErr + '_ {
    move |e| crate::errors::decode_error(py, &e)
}

/// A graph and its value index.
#[derive(Clone)]
struct Indexed {
    graph: Ptr<proto::GraphProto>,
    index: Arc<DefUse>,
}

impl Indexed {
    fn of(py: Python<'_>, graph: &Ptr<proto::GraphProto>) -> PyResult<Indexed> {
        Ok(Indexed {
            graph: graph.clone(),
            index: graph_index::index(graph).map_err(decode_err(py))?,
        })
    }

    fn value(&self, name: &str) -> Option<Value> {
        self.index.def_key(name).map(|(def, key)| Value {
            name: Str::from(name),
            at: self.clone(),
            def,
            key,
        })
    }
}

/// The values of a graph, by name: a read-only mapping (`values["x"]`,
/// `in`, `len`, iteration over names, `keys()`, `values()`, `items()`,
/// `get()`). Holds the graph's own values (its inputs, initializers, sparse
/// initializers and node outputs, in that order) and then the values of
/// enclosing graphs that this graph reads (for a subgraph), in first-use
/// order. Lookups are O(1) after the graph's index is built (on first use,
/// cached with the model).
#[pyclass(module = "onnxfast", name = "Values", frozen, mapping)]
pub struct Values {
    at: Indexed,
    /// Enclosing graphs, innermost first.
    outer: Vec<Indexed>,
    /// Captured names that resolve, in first-use order, with the index of
    /// the enclosing graph defining each.
    captured: Vec<(Str, usize)>,
    captured_at: HashMap<Str, usize>,
}

impl Values {
    pub fn of(py: Python<'_>, graph: &Ptr<proto::GraphProto>) -> PyResult<Values> {
        let at = Indexed::of(py, graph)?;
        let mut outer = Vec::new();
        let mut captured = Vec::new();
        let mut captured_at = HashMap::new();
        if at.index.captured().next().is_some() {
            if let Some(steps) = graph_index::steps_of(graph) {
                for depth in (0..steps.len()).rev() {
                    let Some(g) = graph_index::graph_at(graph.root(), &steps[..depth]) else {
                        break;
                    };
                    outer.push(Indexed::of(py, &g)?);
                }
            }
            for name in at.index.captured() {
                if let Some(k) = outer.iter().position(|o| o.index.def(name).is_some()) {
                    captured.push((name.clone(), k));
                    captured_at.insert(name.clone(), k);
                }
            }
        }
        Ok(Values {
            at,
            outer,
            captured,
            captured_at,
        })
    }

    fn lookup(&self, name: &str) -> Option<Value> {
        match self.at.value(name) {
            Some(v) => Some(v),
            None => self.outer.get(*self.captured_at.get(name)?)?.value(name),
        }
    }

    /// Every value, in the order of [`Values::names`].
    fn in_order(&self) -> impl Iterator<Item = Value> + '_ {
        let own = self.at.index.own_defs().map(|(name, def, key)| Value {
            name: name.clone(),
            at: self.at.clone(),
            def,
            key,
        });
        let captured = self.captured.iter().filter_map(|(n, _)| self.lookup(n));
        own.chain(captured)
    }

    fn names(&self) -> impl Iterator<Item = &Str> {
        self.at
            .index
            .own()
            .chain(self.captured.iter().map(|(n, _)| n))
    }
}

#[pymethods]
impl Values {
    fn __len__(&self) -> usize {
        self.at.index.own_len() + self.captured.len()
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<Py<Value>> {
        let v = self
            .lookup(name)
            .ok_or_else(|| PyKeyError::new_err(name.to_string()))?;
        untracked::new(py, v)
    }

    fn __contains__(&self, name: &Bound<'_, PyAny>) -> bool {
        // Not a str: not a key (as a dict of str keys answers).
        name.extract::<String>().is_ok_and(|s| {
            self.at.index.def(&s).is_some() || self.captured_at.contains_key(s.as_str())
        })
    }

    /// Iterates over the names (lazily: no list of a big graph's names).
    fn __iter__(&self) -> ValuesIter {
        ValuesIter {
            index: Arc::clone(&self.at.index),
            captured: self.captured.iter().map(|(n, _)| n.clone()).collect(),
            next: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The names, in order (a new list).
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.names().map(|n| n.as_str()))
    }

    /// The values, in order (a new list).
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let objects = self
            .in_order()
            .map(|v| untracked::new(py, v))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, objects)
    }

    /// (name, value) pairs, in order (a new list).
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let pairs = self
            .in_order()
            .map(|v| Ok((PyString::new(py, &v.name), untracked::new(py, v)?)))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, pairs)
    }

    #[pyo3(signature = (name, default = None))]
    fn get(&self, py: Python<'_>, name: &str, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        match self.lookup(name) {
            Some(v) => Ok(untracked::new(py, v)?.into_any()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    fn __repr__(&self) -> String {
        let total = self.__len__();
        let plural = if total == 1 { "" } else { "s" };
        match self.captured.len() {
            0 => format!("Values(<{total} value{plural}>)"),
            n => format!("Values(<{total} value{plural}, {n} from enclosing graphs>)"),
        }
    }
}

/// Iterator over the names of a [`Values`].
#[pyclass(module = "onnxfast", name = "ValuesIterator", frozen)]
pub struct ValuesIter {
    index: Arc<DefUse>,
    captured: Vec<Str>,
    next: std::sync::atomic::AtomicUsize,
}

#[pymethods]
impl ValuesIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self) -> Option<String> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match self.index.own_at(i) {
            Some(n) => Some(n.to_string()),
            None => self
                .captured
                .get(i.checked_sub(self.index.own_len())?)
                .map(ToString::to_string),
        }
    }
}

/// One value of a graph (read-only): where it is defined, its type, and the
/// nodes that read it.
#[pyclass(module = "onnxfast", name = "Value", frozen)]
pub struct Value {
    name: Str,
    /// The graph defining the value.
    at: Indexed,
    def: Def,
    /// Its entry in `at`'s index.
    key: Key,
}

// Names, indexes and the shared root: Rust data only.
impl Acyclic for Value {}

#[pymethods]
impl Value {
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// How the value is defined: "input", "initializer",
    /// "sparse_initializer" or "node" (a node output).
    #[getter]
    fn kind(&self) -> &'static str {
        match self.def {
            Def::Input(_) => "input",
            Def::Initializer(_) => "initializer",
            Def::SparseInitializer(_) => "sparse_initializer",
            Def::Node { .. } => "node",
        }
    }

    /// The graph that defines the value (an enclosing graph for a value
    /// a subgraph reads from outside).
    #[getter]
    fn graph(&self) -> Graph {
        Graph(self.at.graph.clone())
    }

    /// True when the value is one of its graph's outputs.
    #[getter]
    fn is_output(&self) -> bool {
        matches!(
            self.at.index.declared(&self.name),
            Some(Declared::Output(_))
        )
    }

    /// `(node, output index)` of the node computing the value, or None for
    /// graph inputs and initializers.
    #[getter]
    fn producer(&self, py: Python<'_>) -> PyResult<Option<(Py<Node>, usize)>> {
        match self.def {
            Def::Node { node, output } => {
                let node = untracked::new(py, node_at(&self.at.graph, node)?)?;
                Ok(Some((node, output)))
            }
            _ => Ok(None),
        }
    }

    /// Every use of the value: `(node, input index)` in graph order, a node
    /// reading it twice listed twice; uses by nodes of subgraphs (which read
    /// the value from their enclosing graph) are listed where the node
    /// holding the subgraph is, the subgraph's own nodes in their order.
    #[getter]
    fn consumers(&self, py: Python<'_>) -> PyResult<Vec<(Py<Node>, usize)>> {
        let mut out = Vec::new();
        uses(py, &self.at, &self.name, self.key, &mut out)?;
        Ok(out)
    }

    /// The type the graph declares for the value (an input, output or
    /// `value_info` entry), or None.
    #[getter]
    fn declared_type(&self, py: Python<'_>) -> PyResult<Option<Type>> {
        let g = &self.at.graph;
        let Some(declared) = self.at.index.declared(&self.name) else {
            return Ok(None);
        };
        if let (Declared::ValueInfo(i), Some(lists)) = (declared, g.root().lists_of(g)) {
            lists.value_info.get(i).map_err(decode_err(py))?;
            let graph: &proto::GraphProto = g;
            return Ok(Ptr::try_new(Arc::clone(g.root()), |r| {
                r.lists_of(graph)?.value_info.cached(i)?.r#type.as_ref()
            })
            .map(Type));
        }
        Ok(g.try_project(|g| {
            let entry = match declared {
                Declared::ValueInfo(i) => g.value_info.get(i),
                Declared::Input(i) => g.input.get(i),
                Declared::Output(i) => g.output.get(i),
            };
            entry?.r#type.as_ref()
        })
        .map(Type))
    }

    /// The value's type: what the graph declares, completed by shape
    /// inference (the type `onnxfast.infer_shapes` gives it; an
    /// initializer's tensor type). Inference runs once per model, on the
    /// first `type` or `shape` asked for. For graphs that are not below the
    /// main graph (in function bodies), the declared type.
    #[getter(r#type)]
    fn type_(&self, py: Python<'_>) -> PyResult<Option<Type>> {
        let Some(steps) = graph_index::steps_of(&self.at.graph) else {
            return self.declared_type(py);
        };
        let root = self.at.graph.root();
        let store = graph_index::types(py, root).map_err(decode_err(py))?;
        let declared = self.at.index.declared(&self.name);
        // Reads (and keeps) the entry that holds the type, then points at it.
        store
            .get(&steps, &self.name, declared)
            .map_err(decode_err(py))?;
        let found = Ptr::try_new(Arc::clone(root), |r| {
            let store = r.types.get()?;
            store.get(&steps, &self.name, declared).ok().flatten()
        });
        match found {
            Some(t) => Ok(Some(Type(t))),
            None => self.declared_type(py),
        }
    }

    /// The dims of the value's tensor type (`type`): an int, a symbol (str)
    /// or None for each; None when the type has no shape or is not a tensor.
    #[getter]
    fn shape(&self, py: Python<'_>) -> PyResult<Option<Vec<Py<PyAny>>>> {
        let Some(t) = self.type_(py)? else {
            return Ok(None);
        };
        let Some(shape) = shape_of(&t.0) else {
            return Ok(None);
        };
        shape
            .dim
            .iter()
            .map(|d| {
                Ok(match &d.value {
                    Some(tensor_shape_proto::dimension::Value::DimValue(v)) => {
                        v.into_pyobject(py)?.into_any().unbind()
                    }
                    Some(tensor_shape_proto::dimension::Value::DimParam(p)) => {
                        PyString::new(py, p).into_any().unbind()
                    }
                    None => py.None(),
                })
            })
            .collect::<PyResult<Vec<_>>>()
            .map(Some)
    }

    /// `shape` with each dim evaluated at `sizes` (a mapping of the
    /// model's symbols to ints): an int for a dim whose value follows (a
    /// given symbol, or an expression of given symbols, `floor((h + 1)/2)`),
    /// None for one that names a symbol without a size (a fresh `unk__N`)
    /// or is not an expression onnxfast reads.
    fn shape_at(
        &self,
        py: Python<'_>,
        sizes: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Vec<Option<i64>>>> {
        let sizes = sizes_of(sizes)?;
        let Some(t) = self.type_(py)? else {
            return Ok(None);
        };
        Ok(dims_at(&t.0, &sizes))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Value>().is_ok_and(|o| {
            let o = o.get();
            o.name == self.name
                && o.at.graph.addr() == self.at.graph.addr()
                && Arc::ptr_eq(o.at.graph.root(), self.at.graph.root())
        })
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.name.hash(&mut h);
        self.at.graph.addr().hash(&mut h);
        h.finish()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let ty = match self.type_(py) {
            Ok(Some(t)) => crate::values::describe_type(&t.0),
            Ok(None) => "?".to_string(),
            Err(_) => "<unreadable>".to_string(),
        };
        let from = match self.def {
            Def::Node { node, output } => format!("node {node} output {output}"),
            _ => self.kind().to_string(),
        };
        format!("Value({}, {ty}, {from})", crate::repr::quote(&self.name))
    }
}

/// The input positions at which node `i` of `graph` reads `name` (its
/// names read from its bytes when it is an undecoded list element).
fn reads_at(
    graph: &Ptr<proto::GraphProto>,
    i: usize,
    name: &str,
) -> Result<Vec<usize>, onnxfast_core::error::DecodeError> {
    let at = |inputs: &mut dyn Iterator<Item = &str>| {
        inputs
            .enumerate()
            .filter(|(_, x)| *x == name)
            .map(|(k, _)| k)
            .collect()
    };
    let Some(lists) = graph.root().lists_of(graph) else {
        let inputs = graph
            .node
            .get(i)
            .map(|n| n.input.as_slice())
            .unwrap_or_default();
        return Ok(at(&mut inputs.iter().map(|s| s.as_str())));
    };
    let list = &lists.node;
    if let Some(n) = list.cached(i) {
        return Ok(at(&mut n.input.iter().map(|s| s.as_str())));
    }
    match list.strings(i, fields::node_proto::INPUT) {
        Some(inputs) => Ok(at(&mut inputs.into_iter())),
        None => Ok(at(&mut list.get(i)?.input.iter().map(|s| s.as_str()))),
    }
}

/// Appends the uses of `name` in `at`'s graph (it defines the value, or
/// reads it from an enclosing graph): direct inputs of its nodes, and uses
/// inside their subgraphs that do not define the name again. Recursion
/// follows graph nesting, which decoding bounds.
fn uses(
    py: Python<'_>,
    at: &Indexed,
    name: &str,
    key: Key,
    out: &mut Vec<(Py<Node>, usize)>,
) -> PyResult<()> {
    for (i, inside) in at.index.uses_at(key) {
        for k in reads_at(&at.graph, i, name).map_err(decode_err(py))? {
            out.push((untracked::new(py, node_at(&at.graph, i)?)?, k));
        }
        if !inside {
            continue;
        }
        let node = node_at(&at.graph, i)?;
        let node = node.0.get(py)?;
        for a in 0..node.attribute.len() {
            let subgraphs = node.attribute.get(a).map_or(0, |x| x.graphs().len());
            let single = node.try_project(|n| n.attribute.get(a)?.g());
            let listed = (0..subgraphs)
                .filter_map(|j| node.try_project(|n| n.attribute.get(a)?.graphs().get(j)));
            for sub in single.into_iter().chain(listed) {
                let inner = Indexed::of(py, &sub)?;
                if inner.index.def(name).is_some() {
                    continue;
                }
                if let Some(key) = inner.index.key(name) {
                    uses(py, &inner, name, key, out)?;
                }
            }
        }
    }
    Ok(())
}

/// The shape of a tensor or sparse tensor type.
fn shape_of(t: &proto::TypeProto) -> Option<&proto::TensorShapeProto> {
    match &t.value {
        Some(type_proto::Value::TensorType(x)) => x.shape.as_ref(),
        Some(type_proto::Value::SparseTensorType(x)) => x.shape.as_ref(),
        _ => None,
    }
}

/// The dims of `t`'s shape at `sizes` (see `Value.shape_at`); None when
/// it has no shape.
fn dims_at(t: &proto::TypeProto, sizes: &HashMap<String, i64>) -> Option<Vec<Option<i64>>> {
    let shape = shape_of(t)?;
    Some(
        shape
            .dim
            .iter()
            .map(|d| match &d.value {
                // A negative value (an exporter's -1 for "dynamic", which
                // onnx carries along) is no size.
                Some(tensor_shape_proto::dimension::Value::DimValue(v)) => (*v >= 0).then_some(*v),
                Some(tensor_shape_proto::dimension::Value::DimParam(p)) => {
                    evaluate(p, &|n| sizes.get(n).copied()).ok()
                }
                None => None,
            })
            .collect(),
    )
}

/// The element type of a tensor or sparse tensor type (0 for other types).
fn elem_of(t: &proto::TypeProto) -> i32 {
    match &t.value {
        Some(type_proto::Value::TensorType(x)) => x.elem_type.unwrap_or(0),
        Some(type_proto::Value::SparseTensorType(x)) => x.elem_type.unwrap_or(0),
        _ => 0,
    }
}

/// `Graph.memory_plan(sizes)`: what the graph's values take at `sizes`
/// (see [`onnxfast_core::ir::memory`]), each value's type as `Value.type`
/// gives it, read in one pass in Rust.
pub fn memory_plan(
    py: Python<'_>,
    graph: &Ptr<proto::GraphProto>,
    sizes: &Bound<'_, PyAny>,
) -> PyResult<MemoryPlan> {
    let sizes = sizes_of(sizes)?;
    let at = Indexed::of(py, graph)?;
    let steps = graph_index::steps_of(graph);
    let store = match steps {
        Some(_) => Some(graph_index::types(py, graph.root()).map_err(decode_err(py))?),
        None => None,
    };
    let nodes = graph
        .root()
        .lists_of(graph)
        .map_or(graph.node.len(), |l| l.node.len());
    // (name, dims at sizes, bytes, made by a node) of every own value, in
    // index order; `held` has the node outputs in the same order.
    let mut sized = Vec::with_capacity(at.index.own_len());
    let mut held = Vec::new();
    for (name, def, key) in at.index.own_defs() {
        let declared = at.index.declared_at(key);
        let inferred = match (&steps, store) {
            (Some(steps), Some(store)) => store
                .get(steps, name, declared)
                .map_err(decode_err(py))?
                .map(|t| (elem_of(t), dims_at(t, &sizes))),
            _ => None,
        };
        let (elem, dims) = match inferred {
            Some(found) => found,
            None => {
                let value = Value {
                    name: name.clone(),
                    at: at.clone(),
                    def,
                    key,
                };
                match value.declared_type(py)? {
                    Some(t) => (elem_of(&t.0), dims_at(&t.0, &sizes)),
                    None => (0, None),
                }
            }
        };
        let bytes = dims.as_deref().and_then(|d| memory::tensor_bytes(elem, d));
        if let Def::Node { node, .. } = def {
            held.push(memory::Held {
                made: node,
                last_read: at.index.last_use_at(key),
                output: matches!(declared, Some(Declared::Output(_))),
                bytes,
            });
        }
        sized.push((name.clone(), dims, bytes, matches!(def, Def::Node { .. })));
    }
    let plan = memory::plan(nodes, &held);
    let shapes = PyDict::new(py);
    let bytes = PyDict::new(py);
    let live = PyDict::new(py);
    let mut outputs = held.iter();
    for (name, dims, b, made) in &sized {
        let key = PyString::new(py, name);
        shapes.set_item(&key, dims)?;
        bytes.set_item(&key, b)?;
        if !*made {
            continue;
        }
        if let Some(h) = outputs.next() {
            live.set_item(&key, (h.made, h.freed_after()))?;
        }
    }
    Ok(MemoryPlan {
        plan,
        shapes: shapes.unbind(),
        bytes: bytes.unbind(),
        live: live.unbind(),
    })
}

/// What a graph's node outputs take when it runs at given sizes, in graph
/// order (`Graph.memory_plan`): each output held from the node making it
/// to the last node reading it (reads inside a node's subgraphs count as
/// that node's), or to its own node when none reads it; graph outputs to
/// the end. A lower bound of a runtime's need: no aliasing, in-place reuse
/// or workspace. Its dicts are its own (a new plan per call).
#[pyclass(module = "onnxfast", name = "MemoryPlan", frozen)]
pub struct MemoryPlan {
    plan: memory::Plan,
    shapes: Py<PyDict>,
    bytes: Py<PyDict>,
    live: Py<PyDict>,
}

#[pymethods]
impl MemoryPlan {
    /// Bytes of every node output of known size.
    #[getter]
    fn total_bytes(&self) -> u128 {
        self.plan.total_bytes
    }

    /// The most bytes of node outputs held at once.
    #[getter]
    fn peak_bytes(&self) -> u128 {
        self.plan.peak_bytes
    }

    /// The index of the first node whose run holds the peak (None when no
    /// output of known size takes a byte).
    #[getter]
    fn peak_node(&self) -> Option<usize> {
        self.plan.peak_node
    }

    /// How many node outputs have no known size (left out of the bytes).
    #[getter]
    fn unknown(&self) -> usize {
        self.plan.unknown
    }

    /// Every value of the graph (inputs, initializers, node outputs) to its
    /// shape at the sizes (`Value.shape_at`).
    #[getter]
    fn shapes(&self, py: Python<'_>) -> Py<PyDict> {
        self.shapes.clone_ref(py)
    }

    /// Every value of the graph to its bytes at the sizes (sub-byte types
    /// packed), None when its element size or a dim is not known.
    #[getter]
    fn bytes(&self, py: Python<'_>) -> Py<PyDict> {
        self.bytes.clone_ref(py)
    }

    /// Every node output to `(made, freed_after)`: the index of the node
    /// making it and of the node after which it is freed (None for a graph
    /// output, held to the end).
    #[getter]
    fn live(&self, py: Python<'_>) -> Py<PyDict> {
        self.live.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        let p = &self.plan;
        let node = p.peak_node.map_or("None".to_string(), |n| n.to_string());
        format!(
            "MemoryPlan(total_bytes={}, peak_bytes={}, peak_node={node}, unknown={})",
            p.total_bytes, p.peak_bytes, p.unknown
        )
    }
}

/// Sizes of symbols from a mapping of names to ints (at least 0).
fn sizes_of(sizes: &Bound<'_, PyAny>) -> PyResult<HashMap<String, i64>> {
    let items = sizes
        .call_method0("items")
        .map_err(|_| PyTypeError::new_err("sizes must be a mapping of names to ints"))?;
    let mut out = HashMap::new();
    for item in items.try_iter()? {
        let (name, size): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let name: String = name
            .extract()
            .map_err(|_| PyTypeError::new_err("sizes: a name must be a str"))?;
        if size.is_instance_of::<pyo3::types::PyBool>() {
            return Err(PyTypeError::new_err(format!(
                "sizes: the size of {name:?} must be an int, not a bool"
            )));
        }
        let size: i64 = size.extract().map_err(|_| {
            PyValueError::new_err(format!(
                "sizes: the size of {name:?} must be an int from 0 to 2**63 - 1"
            ))
        })?;
        if size < 0 {
            return Err(PyValueError::new_err(format!(
                "sizes: the size of {name:?} is {size}, below 0"
            )));
        }
        out.insert(name, size);
    }
    Ok(out)
}

/// `onnxfast.evaluate_dim(dim, sizes)`: a dim (an int, a symbol or an
/// expression as `infer_shapes(symbolic=True)` writes it, or None) at
/// `sizes`; None when it names a symbol without a size.
#[pyfunction]
pub fn evaluate_dim(dim: &Bound<'_, PyAny>, sizes: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    let sizes = sizes_of(sizes)?;
    if dim.is_none() {
        return Ok(None);
    }
    if dim.is_instance_of::<PyString>() {
        let text: String = dim.extract()?;
        return match evaluate(&text, &|n| sizes.get(n).copied()) {
            Ok(v) => Ok(Some(v)),
            Err(Unevaluated::Unknown(_)) => Ok(None),
            Err(e) => Err(PyValueError::new_err(format!("dim {text:?}: {e}"))),
        };
    }
    if dim.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err("dim must be an int, a str or None"));
    }
    dim.extract::<i64>()
        .map(Some)
        .map_err(|_| PyTypeError::new_err("dim must be an int, a str or None"))
}
