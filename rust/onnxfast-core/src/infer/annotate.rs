//! Writing inferred types back into a model: what onnx's
//! `infer_shapes` returns.
//!
//! onnx's rule, per graph (main graph and every subgraph a rule inferred;
//! function bodies have no place for types): a node output whose name
//! already has a typed `value_info`, input or output entry (in that order of
//! lookup, the later kind winning) gets the inferred type merged into that
//! entry; any other node output with an inferred type is appended to
//! `value_info`, in node order, and an output or entry of the same name
//! declared without a type receives the type too. Merging keeps what the
//! entry says and fills in what it lacks: an unknown element type, a missing
//! shape, dims with neither value nor symbol, and symbols where the
//! inferred dim is a value. Everything else (denotations, doc strings,
//! metadata) is left as it is, except that an entry declared without a
//! type is given an empty one, as onnx does.
//!
//! Symbols: a dim the model names keeps its name. A dim the engine knows
//! only as "some size" is named `unk__N` (onnx's spelling), N counting from
//! 0 in the order the model's graphs are written back (main graph first,
//! node order), skipping names the model already uses. Where inference
//! knows two dims are the same unknown size (a Relu's output and its
//! input), they get the same name.

use compact_str::CompactString;
use foldhash::{HashMap, HashMapExt, HashSet};

use super::{GraphTypes, Inference};
use crate::ir::types::{Dim, Sym, Symbols, Type};
use crate::ir::view::GraphView;
use crate::proto::tensor_shape_proto::{dimension, Dimension};
use crate::proto::{
    type_proto, GraphProto, ModelProto, TensorShapeProto, TypeProto, ValueInfoProto,
};

/// What [`annotate`] wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Annotated {
    /// Graphs written back (the main graph and subgraphs).
    pub graphs: usize,
    /// `value_info` entries appended.
    pub added: usize,
    /// Existing entries (value_info, inputs, outputs) merged with an
    /// inferred type.
    pub merged: usize,
}

/// Writes the types `inference` collected (with
/// [`super::InferOptions::collect_types`]) into `model`, as onnx's
/// `infer_shapes` does. `inference` must come from this model.
pub fn annotate(model: &mut ModelProto, inference: &Inference) -> Annotated {
    let mut names = FreshNames::new(model, &inference.symbols);
    let mut done = Annotated::default();
    for (steps, types) in written_graphs(&inference.graphs) {
        let Some(graph) = model.graph.as_mut().and_then(|g| graph_at(g, steps)) else {
            continue;
        };
        write_back(graph, types, &mut names, &mut done);
        done.graphs += 1;
    }
    done
}

/// The graphs to write back, in the order they were first inferred, each
/// with its last run (a graph inferred more than once, not expected, takes
/// its last), by their steps from the main graph.
pub(super) fn written_graphs(graphs: &[GraphTypes]) -> Vec<(&[(usize, String)], &GraphTypes)> {
    let mut last: HashMap<&[(usize, String)], &GraphTypes> = HashMap::new();
    let mut order = Vec::new();
    for g in graphs {
        if let Some(steps) = &g.steps {
            if last.insert(steps.as_slice(), g).is_none() {
                order.push(steps.as_slice());
            }
        }
    }
    order
        .into_iter()
        .filter_map(|steps| Some((steps, *last.get(steps)?)))
        .collect()
}

/// The subgraph `steps` lead to from `g`.
pub(super) fn graph_at<'g>(
    mut g: &'g mut GraphProto,
    steps: &[(usize, String)],
) -> Option<&'g mut GraphProto> {
    for (index, attr) in steps {
        let node = g.node.get_mut(*index)?;
        g = node
            .attribute
            .iter_mut()
            .find(|a| a.name() == attr.as_str() && a.g().is_some())?
            .g_mut()?;
    }
    Some(g)
}

/// Where a name's type lives in a graph while writing back.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    Info(usize),
    Input(usize),
    Output(usize),
    /// An initializer's type (onnx keeps it aside: nothing is written).
    Aside,
}

impl Slot {
    /// The entry this slot names among a graph's lists.
    fn entry<'v>(
        self,
        value_info: &'v mut [ValueInfoProto],
        input: &'v mut [ValueInfoProto],
        output: &'v mut [ValueInfoProto],
    ) -> Option<&'v mut ValueInfoProto> {
        match self {
            Slot::Info(i) => value_info.get_mut(i),
            Slot::Input(i) => input.get_mut(i),
            Slot::Output(i) => output.get_mut(i),
            Slot::Aside => None,
        }
    }
}

pub(super) fn write_back(
    g: &mut GraphProto,
    types: &GraphTypes,
    names: &mut FreshNames,
    done: &mut Annotated,
) {
    let mut inferred: HashMap<&str, &Type> = HashMap::with_capacity(types.values.len());
    inferred.extend(types.values.iter().map(|(n, t)| (n.as_str(), t)));
    // Disjoint borrows: node names are read while the entries change.
    let GraphProto {
        node,
        input,
        output,
        value_info,
        initializer,
        sparse_initializer,
        ..
    } = g;
    // A subgraph's inputs the caller typed: merged with the declaration
    // (created when there is none), every unknown dim named.
    for (vi, _) in input
        .iter_mut()
        .zip(&types.given)
        .filter(|(_, given)| **given)
    {
        let t = inferred.get(vi.name()).copied();
        let existing = vi.r#type.get_or_insert_with(TypeProto::default);
        let Some(t) = t else {
            continue;
        };
        merge_proto(t, existing, names);
        names.name_unknown(existing);
        done.merged += 1;
    }
    if types.inputs_only {
        return;
    }
    // Declared entries by name (later kinds win, as in onnx's lookup).
    let declared = value_info.len() + input.len() + output.len();
    let mut typed: HashMap<CompactString, Slot> =
        HashMap::with_capacity(declared + initializer.len());
    let mut untyped: HashMap<CompactString, Slot> = HashMap::new();
    // onnx gives every entry declared without a type an empty one.
    let mut enter = |vi: &mut ValueInfoProto, slot: Slot| {
        if vi.r#type.is_some() {
            typed.insert(CompactString::from(vi.name()), slot);
        } else {
            vi.r#type = Some(TypeProto::default());
            untyped.insert(CompactString::from(vi.name()), slot);
        }
    };
    for (i, vi) in value_info.iter_mut().enumerate() {
        enter(vi, Slot::Info(i));
    }
    for (i, vi) in input.iter_mut().enumerate() {
        enter(vi, Slot::Input(i));
    }
    for (i, vi) in output.iter_mut().enumerate() {
        enter(vi, Slot::Output(i));
    }
    let names_aside = initializer.iter().map(|t| t.name()).chain(
        sparse_initializer
            .iter()
            .filter_map(|s| s.values.as_ref().map(|v| v.name())),
    );
    for name in names_aside {
        typed
            .entry(CompactString::from(name))
            .or_insert(Slot::Aside);
    }
    // Entries appended here, by name (a name output twice merges into its
    // first entry, as onnx's does).
    let outputs: usize = node.iter().map(|n| n.output.len()).sum();
    let mut added: Vec<ValueInfoProto> = Vec::with_capacity(outputs);
    let mut added_at: HashMap<&str, usize> = HashMap::with_capacity(outputs);
    for out in node.iter().flat_map(|n| n.output.iter()) {
        let out = out.as_str();
        if out.is_empty() {
            continue;
        }
        let Some(&t) = inferred.get(out) else {
            continue;
        };
        let existing = match typed.get(out) {
            Some(Slot::Aside) => continue,
            Some(&slot) => slot.entry(value_info, input, output),
            None => added_at.get(out).and_then(|&k| added.get_mut(k)),
        };
        if let Some(existing) = existing {
            if let Some(existing) = existing.r#type.as_mut() {
                merge_proto(t, existing, names);
                done.merged += 1;
            }
            continue;
        }
        let proto = names.proto_of(t);
        let entry = untyped
            .get(out)
            .and_then(|&slot| slot.entry(value_info, input, output));
        if let Some(vi) = entry {
            vi.r#type = Some(proto.clone());
        }
        added_at.insert(out, added.len());
        added.push(ValueInfoProto {
            name: Some(out.to_string()),
            r#type: Some(proto),
            ..ValueInfoProto::default()
        });
    }
    done.added += added.len();
    value_info.extend(added);
}

/// onnx's `mergeShapesAndTypes(inferred, existing)`, `t` being the inferred
/// type.
pub(super) fn merge_proto(t: &Type, existing: &mut TypeProto, names: &mut FreshNames) {
    use type_proto::Value;
    let Some(value) = existing.value.as_mut() else {
        *existing = TypeProto {
            denotation: existing.denotation.take(),
            ..names.proto_of(t)
        };
        return;
    };
    match (t, value) {
        (Type::Tensor(x), Value::TensorType(e)) => {
            merge_tensor(x, &mut e.elem_type, &mut e.shape, names)
        }
        (Type::SparseTensor(x), Value::SparseTensorType(e)) => {
            merge_tensor(x, &mut e.elem_type, &mut e.shape, names)
        }
        (Type::Sequence(Some(x)), Value::SequenceType(e)) => {
            merge_inner(x, &mut e.elem_type, names)
        }
        (Type::Optional(Some(x)), Value::OptionalType(e)) => {
            merge_inner(x, &mut e.elem_type, names)
        }
        (Type::Map(k, v), Value::MapType(e)) => {
            if e.key_type.unwrap_or(0) == 0 {
                e.key_type = Some(*k);
            }
            if let Some(v) = v {
                merge_inner(v, &mut e.value_type, names);
            }
        }
        (Type::Opaque { domain, name }, Value::OpaqueType(e)) => {
            if e.domain.is_none() {
                e.domain = domain.as_ref().map(|d| d.to_string());
            }
            if e.name.is_none() {
                e.name = name.as_ref().map(|n| n.to_string());
            }
        }
        // Different kinds: the engine reported the conflict; onnx keeps the
        // declaration.
        _ => {}
    }
}

fn merge_inner(t: &Type, existing: &mut Option<Box<TypeProto>>, names: &mut FreshNames) {
    match existing {
        Some(e) => merge_proto(t, e, names),
        None => *existing = Some(Box::new(names.proto_of(t))),
    }
}

fn merge_tensor(
    t: &crate::ir::types::TensorType,
    elem: &mut Option<i32>,
    shape: &mut Option<TensorShapeProto>,
    names: &mut FreshNames,
) {
    if elem.unwrap_or(0) == 0 {
        *elem = Some(t.elem);
    }
    let Some(dims) = &t.shape else {
        return;
    };
    let Some(existing) = shape else {
        *shape = Some(names.shape(dims));
        return;
    };
    for (d, e) in dims.iter().zip(existing.dim.iter_mut()) {
        // An unknown dim in the result: nothing was inferred for it (onnx
        // merges no shape then); the entry keeps its own.
        if *d == Dim::Unknown {
            continue;
        }
        if e.value.is_none() || matches!(d, Dim::Value(_)) {
            *e = Dimension {
                denotation: None,
                value: Some(names.dim(*d)),
            };
        }
    }
}

/// The `dim_param`s a model uses, gathered when the first fresh name is
/// needed (most models never need one).
pub(super) type Taken<'s> = Box<dyn FnOnce() -> HashSet<String> + 's>;

/// Names for the engine's fresh symbols and unknown dims.
pub(super) struct FreshNames<'s> {
    symbols: &'s Symbols,
    taken: Option<HashSet<String>>,
    gather: Option<Taken<'s>>,
    given: HashMap<Sym, String>,
    next: u64,
}

impl<'s> FreshNames<'s> {
    /// For a model about to change (its names are gathered now).
    fn new(model: &ModelProto, symbols: &'s Symbols) -> Self {
        let mut taken = HashSet::default();
        if let Some(g) = &model.graph {
            model_symbols(GraphView::whole(g), &mut taken, 0);
        }
        function_symbols(model, &mut taken);
        Self::gathering(symbols, Box::new(move || taken))
    }

    pub(super) fn gathering(symbols: &'s Symbols, gather: Taken<'s>) -> Self {
        FreshNames {
            symbols,
            taken: None,
            gather: Some(gather),
            given: HashMap::new(),
            next: 0,
        }
    }

    pub(super) fn symbols(&self) -> &'s Symbols {
        self.symbols
    }

    fn fresh(&mut self) -> String {
        if self.taken.is_none() {
            self.taken = Some(self.gather.take().map(|g| g()).unwrap_or_default());
        }
        loop {
            let name = format!("unk__{}", self.next);
            self.next += 1;
            if !self.taken.as_ref().is_some_and(|t| t.contains(&name)) {
                return name;
            }
        }
    }

    /// The name of fresh symbol `s` (`unk__N`, the same for each use).
    fn fresh_symbol(&mut self, s: Sym) -> String {
        if let Some(n) = self.given.get(&s) {
            return n.clone();
        }
        let n = self.fresh();
        self.given.insert(s, n.clone());
        n
    }

    fn dim(&mut self, d: Dim) -> dimension::Value {
        match d {
            Dim::Value(v) => dimension::Value::DimValue(v),
            Dim::Sym(s) => match self.symbols.name(s) {
                Some(n) => dimension::Value::DimParam(n.to_string()),
                None if self.symbols.expr(s).is_some() => {
                    // An expression: its fresh symbols named as elsewhere.
                    let symbols = self.symbols;
                    let text = symbols.text(s, &mut |a| self.fresh_symbol(a));
                    dimension::Value::DimParam(text.unwrap_or_else(|| self.fresh_symbol(s)))
                }
                None => dimension::Value::DimParam(self.fresh_symbol(s)),
            },
            Dim::Unknown => dimension::Value::DimParam(self.fresh()),
        }
    }

    /// Names every dim of `t` that has neither value nor symbol (onnx's
    /// `MaterializeSymbolicShape`).
    fn name_unknown(&mut self, t: &mut TypeProto) {
        use type_proto::Value;
        let shape = match t.value.as_mut() {
            Some(Value::TensorType(x)) => x.shape.as_mut(),
            Some(Value::SparseTensorType(x)) => x.shape.as_mut(),
            Some(Value::SequenceType(x)) => return self.name_unknown_in(&mut x.elem_type),
            Some(Value::OptionalType(x)) => return self.name_unknown_in(&mut x.elem_type),
            Some(Value::MapType(x)) => return self.name_unknown_in(&mut x.value_type),
            _ => None,
        };
        for d in shape.map(|s| s.dim.iter_mut()).into_iter().flatten() {
            if d.value.is_none() {
                d.value = Some(dimension::Value::DimParam(self.fresh()));
            }
        }
    }

    fn name_unknown_in(&mut self, t: &mut Option<Box<TypeProto>>) {
        if let Some(t) = t {
            self.name_unknown(t);
        }
    }

    fn shape(&mut self, dims: &[Dim]) -> TensorShapeProto {
        TensorShapeProto {
            dim: dims
                .iter()
                .map(|d| Dimension {
                    denotation: None,
                    value: Some(self.dim(*d)),
                })
                .collect(),
        }
    }

    pub(super) fn proto_of(&mut self, t: &Type) -> TypeProto {
        use type_proto::Value;
        let inner =
            |s: &mut Self, e: &Option<Box<Type>>| e.as_deref().map(|e| Box::new(s.proto_of(e)));
        let value = match t {
            Type::Tensor(x) => Value::TensorType(type_proto::Tensor {
                elem_type: Some(x.elem),
                shape: x.shape.as_deref().map(|d| self.shape(d)),
            }),
            Type::SparseTensor(x) => Value::SparseTensorType(type_proto::SparseTensor {
                elem_type: Some(x.elem),
                shape: x.shape.as_deref().map(|d| self.shape(d)),
            }),
            Type::Sequence(e) => Value::SequenceType(Box::new(type_proto::Sequence {
                elem_type: inner(self, e),
            })),
            Type::Optional(e) => Value::OptionalType(Box::new(type_proto::Optional {
                elem_type: inner(self, e),
            })),
            Type::Map(k, v) => Value::MapType(Box::new(type_proto::Map {
                key_type: Some(*k),
                value_type: inner(self, v),
            })),
            Type::Opaque { domain, name } => Value::OpaqueType(type_proto::Opaque {
                domain: domain.as_ref().map(|d| d.to_string()),
                name: name.as_ref().map(|n| n.to_string()),
            }),
        };
        TypeProto {
            denotation: None,
            value: Some(value),
        }
    }
}

/// Every `dim_param` a graph's declarations use (subgraphs included).
pub(super) fn model_symbols(g: GraphView<'_>, taken: &mut HashSet<String>, depth: usize) {
    if depth > 128 {
        return;
    }
    for vi in g
        .graph
        .input
        .iter()
        .chain(&g.graph.output)
        .chain(g.value_info.iter())
    {
        if let Some(t) = &vi.r#type {
            type_symbols(t, taken, 0);
        }
    }
    let mut heads = crate::ir::view::NodeHeads::new(g.node, 0);
    while let Some(n) = heads.next() {
        for a in n.attributes() {
            if let Some(sub) = a.g() {
                model_symbols(GraphView::whole(sub), taken, depth + 1);
            }
            for sub in a.graphs() {
                model_symbols(GraphView::whole(sub), taken, depth + 1);
            }
        }
    }
}

/// Every `dim_param` the model's functions declare.
pub(super) fn function_symbols(model: &ModelProto, taken: &mut HashSet<String>) {
    for f in &model.functions {
        for vi in f.value_info.iter() {
            if let Some(t) = &vi.r#type {
                type_symbols(t, taken, 0);
            }
        }
    }
}

fn type_symbols(t: &TypeProto, taken: &mut HashSet<String>, depth: usize) {
    use type_proto::Value;
    if depth > 128 {
        return;
    }
    let shape = match &t.value {
        Some(Value::TensorType(x)) => x.shape.as_ref(),
        Some(Value::SparseTensorType(x)) => x.shape.as_ref(),
        Some(Value::SequenceType(x)) => return inner(&x.elem_type, taken, depth),
        Some(Value::OptionalType(x)) => return inner(&x.elem_type, taken, depth),
        Some(Value::MapType(x)) => return inner(&x.value_type, taken, depth),
        _ => None,
    };
    fn inner(e: &Option<Box<TypeProto>>, taken: &mut HashSet<String>, depth: usize) {
        if let Some(e) = e {
            type_symbols(e, taken, depth + 1);
        }
    }
    for d in shape.map(|s| s.dim.as_slice()).unwrap_or_default() {
        if let Some(dimension::Value::DimParam(p)) = &d.value {
            if !taken.contains(p.as_str()) {
                taken.insert(p.clone());
            }
        }
    }
}
