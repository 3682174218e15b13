//! onnx's write-back ([`super::annotate`]) for a model loaded for decode
//! on touch: nothing of the main graph's long lists is built. The inferred
//! types become two [`Edit`]s of the source's lists, applied as elements
//! are decoded: `value_info` entries merged with (or given) their node's
//! type, and the entries onnx appends, built from a name and a type id on
//! first touch; and the nodes whose subgraphs were written back.
//!
//! The result is the same as [`super::annotate::annotate`] on the decoded
//! model, `unk__N` names included: an entry whose type needs fresh names
//! (an unknown dim, a fresh symbol) is written when the plan is made, in
//! onnx's order, and kept; every other entry is written on touch, which
//! names nothing, so the order of touches cannot change a name.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use super::annotate::{self, Annotated, FreshNames, Slot};
use super::{Inference, MainTypes};
use crate::decode::lazy::Edit;
use crate::ir::types::{Dim, Symbols, Type};
use crate::ir::view::{same_declared, DeclaredType, GraphView, NodeHeads};
use crate::names::{NameTable, PROBE_AHEAD};
use crate::proto::{GraphProto, ModelProto, NodeProto, TypeProto, ValueInfoProto};

/// Declared names from which the planner's table is probed ahead.
const PREFETCH_FROM: usize = 4096;

/// What [`annotate_lazy`] gives: the model's decoded part and the edits of
/// its main graph's lists.
pub struct LazyAnnotated {
    /// The model's decoded part, its main graph's inputs and outputs
    /// written back (they are not decode-on-touch lists).
    pub model: ModelProto,
    /// For the main graph's `value_info` list.
    pub value_info: Arc<ValueInfoEdit>,
    /// For the main graph's `node` list, when a subgraph was written back.
    pub node: Option<Arc<NodeEdit>>,
    pub done: Annotated,
}

/// What becomes of one entry's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fill {
    Keep,
    /// Declared without a type: onnx gives it an empty one.
    Empty,
    /// Merged with type `types[k]` (which names nothing).
    Merge(u32),
    /// Set to type `types[k]` (which names nothing).
    Set(u32),
    /// Set to `protos[k]`, written when the plan was made.
    Proto(u32),
}

/// The main graph's `value_info` after write-back, as an [`Edit`] of the
/// source's list.
#[derive(Default)]
pub struct ValueInfoEdit {
    /// By source entry (shorter than the list: the rest are kept).
    fills: Vec<Fill>,
    /// The appended entries' names: a [`NameSpan`] each, of `source` or
    /// of `names` (those read from elsewhere, one after the other).
    spans: Vec<u64>,
    source: bytes::Bytes,
    names: String,
    /// The appended entries' types (`Set` or `Proto`).
    added: Vec<Fill>,
    protos: Vec<TypeProto>,
    types: Vec<Type>,
    symbols: Symbols,
}

impl std::fmt::Debug for ValueInfoEdit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ValueInfoEdit({} appended)", self.added.len())
    }
}

/// Applies `fill` to an entry's type.
fn apply(
    fill: Fill,
    t: &mut Option<TypeProto>,
    types: &[Type],
    protos: &[TypeProto],
    names: &mut FreshNames<'_>,
) {
    match fill {
        Fill::Keep => {}
        Fill::Empty => {
            t.get_or_insert_with(TypeProto::default);
        }
        Fill::Merge(k) => {
            if let (Some(existing), Some(inferred)) = (t.as_mut(), types.get(k as usize)) {
                annotate::merge_proto(inferred, existing, names);
            }
        }
        Fill::Set(k) => {
            if let Some(inferred) = types.get(k as usize) {
                *t = Some(names.proto_of(inferred));
            }
        }
        Fill::Proto(k) => {
            if let Some(p) = protos.get(k as usize) {
                *t = Some(p.clone());
            }
        }
    }
}

impl ValueInfoEdit {
    fn apply(&self, fill: Fill, t: &mut Option<TypeProto>) {
        // Only fills that name nothing are left for touch time: no
        // fresh name is ever asked for here.
        let mut names = FreshNames::gathering(&self.symbols, Box::new(Default::default));
        apply(fill, t, &self.types, &self.protos, &mut names);
    }

    fn added_name(&self, j: usize) -> &str {
        let Some(&span) = self.spans.get(j) else {
            return "";
        };
        let (own, range) = NameSpan::range(span);
        let bytes = match own {
            true => self.names.as_bytes().get(range),
            false => self.source.get(range),
        };
        // (Text checked when the name was read; a span of it stays text.)
        bytes
            .and_then(|b| crate::decode::utf8(b).ok())
            .unwrap_or_default()
    }

    /// The appended entries' names, in order (entry `j` of them is
    /// element `source + j` of the edited list).
    pub fn appended_names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.spans.len()).map(|j| self.added_name(j))
    }
}

impl Edit<ValueInfoProto> for ValueInfoEdit {
    fn appended(&self) -> usize {
        self.added.len()
    }

    fn patch(&self, index: usize, element: &mut ValueInfoProto) {
        if let Some(&fill) = self.fills.get(index) {
            self.apply(fill, &mut element.r#type);
        }
    }

    fn build(&self, index: usize) -> ValueInfoProto {
        let mut t = None;
        if let Some(&fill) = self.added.get(index) {
            self.apply(fill, &mut t);
        }
        ValueInfoProto {
            name: Some(self.added_name(index).to_string()),
            r#type: t,
            ..ValueInfoProto::default()
        }
    }
}

/// Main-graph nodes whose subgraphs were written back, replacing the
/// decoded ones.
#[derive(Debug, Default)]
pub struct NodeEdit {
    nodes: HashMap<usize, NodeProto>,
}

impl NodeEdit {
    /// The written-back nodes by index in the main graph, in no order.
    pub fn nodes(&self) -> impl Iterator<Item = (usize, &NodeProto)> + '_ {
        self.nodes.iter().map(|(&i, n)| (i, n))
    }
}

impl Edit<NodeProto> for NodeEdit {
    fn patch(&self, index: usize, element: &mut NodeProto) {
        if let Some(n) = self.nodes.get(&index) {
            element.clone_from(n);
        }
    }

    fn build(&self, _: usize) -> NodeProto {
        NodeProto::default()
    }
}

/// Whether writing `t` asks for fresh names: an unknown dim, or a symbol
/// the model does not name.
fn needs_names(t: &Type, symbols: &Symbols) -> bool {
    let dims = match t {
        Type::Tensor(x) | Type::SparseTensor(x) => x.shape.as_deref().unwrap_or_default(),
        Type::Sequence(e) | Type::Optional(e) | Type::Map(_, e) => {
            return e.as_deref().is_some_and(|e| needs_names(e, symbols))
        }
        Type::Opaque { .. } => &[],
    };
    dims.iter().any(|d| match d {
        Dim::Value(_) => false,
        Dim::Unknown => true,
        Dim::Sym(s) => symbols.name(*s).is_none(),
    })
}

/// Writes the types `inference` collected (with
/// [`super::InferOptions::compact_main`]) into `model`, whose main graph
/// is `main` (the decoded part's graph with its kept lists): the decoded
/// part is written now, the lists' entries as they are decoded (the
/// returned edits). `inference.symbols` moves into the edit. `None` when
/// the main graph is not in SSA form (see `plan_main`). `outputs`: every
/// node output of `main` in order, if gathered already.
pub fn annotate_lazy<'a>(
    model: &ModelProto,
    main: GraphView<'a>,
    outputs: Option<&[&'a str]>,
    inference: &mut Inference,
) -> Option<LazyAnnotated> {
    let mut types = inference.main.take().unwrap_or_default();
    let mut room = types.room.take();
    let mut out = model.clone();
    let mut done = Annotated::default();
    let mut nodes: HashMap<usize, NodeProto> = HashMap::new();
    let plan = {
        let mut names = FreshNames::gathering(
            &inference.symbols,
            Box::new(move || {
                let mut taken = Default::default();
                annotate::model_symbols(main, &mut taken, 0);
                annotate::function_symbols(model, &mut taken);
                taken
            }),
        );
        let mut plan = None;
        for (steps, graph_types) in annotate::written_graphs(&inference.graphs) {
            let Some(((index, attr), below)) = steps.split_first() else {
                if plan.is_none() {
                    if let Some(g) = out.graph.as_mut() {
                        plan = Some(plan_main(
                            g,
                            main,
                            outputs,
                            room.take().unwrap_or_default(),
                            &types,
                            &mut names,
                            &mut done,
                        )?);
                        done.graphs += 1;
                    }
                }
                continue;
            };
            let Some(node) = main.node.get(*index) else {
                continue;
            };
            let node = nodes.entry(*index).or_insert_with(|| node.clone());
            let sub = node
                .attribute
                .iter_mut()
                .find(|a| a.name() == attr.as_str() && a.g().is_some())
                .and_then(|a| a.g_mut())
                .and_then(|g| annotate::graph_at(g, below));
            if let Some(sub) = sub {
                annotate::write_back(sub, graph_types, &mut names, &mut done);
                done.graphs += 1;
            }
        }
        plan
    };
    let plan = plan.unwrap_or_default();
    Some(LazyAnnotated {
        model: out,
        value_info: Arc::new(ValueInfoEdit {
            fills: plan.fills,
            spans: plan.spans,
            source: plan.source,
            names: plan.names,
            added: plan.added,
            protos: plan.protos,
            types: types.types,
            symbols: std::mem::take(&mut inference.symbols),
        }),
        node: (!nodes.is_empty()).then(|| Arc::new(NodeEdit { nodes })),
        done,
    })
}

/// The main graph's write-back, planned.
#[derive(Default)]
struct Plan {
    fills: Vec<Fill>,
    spans: Vec<u64>,
    source: bytes::Bytes,
    names: String,
    added: Vec<Fill>,
    protos: Vec<TypeProto>,
}

/// Room for the entries the write-back appends (about one per node
/// output), its pages written once beforehand by a thread with time to
/// spare (the head feed's producer, see [`RoomMaker`]), so that filling it
/// on the path the caller waits on takes no page fault.
#[derive(Debug, Clone, Default)]
pub struct PlanRoom {
    spans: Vec<u64>,
    added: Vec<Fill>,
}

/// Makes a [`PlanRoom`] a step at a time.
#[derive(Debug)]
pub(crate) struct RoomMaker {
    room: PlanRoom,
    want: usize,
}

/// Entries a [`RoomMaker`] step writes (128 KiB: a few tens of
/// microseconds).
const ROOM_STEP: usize = 8192;

impl RoomMaker {
    /// Room for `want` entries (reserved now, written by the steps).
    pub(crate) fn new(want: usize) -> Self {
        RoomMaker {
            room: PlanRoom {
                spans: Vec::with_capacity(want),
                added: Vec::with_capacity(want),
            },
            want,
        }
    }

    /// Writes the next entries' room; `false` once all of it is written.
    pub(crate) fn step(&mut self) -> bool {
        let to = self
            .room
            .spans
            .len()
            .saturating_add(ROOM_STEP)
            .min(self.want);
        if to == self.room.spans.len() {
            return false;
        }
        self.room.spans.resize(to, 0);
        self.room.added.resize(to, Fill::Keep);
        true
    }

    /// The room, empty (what the steps wrote is only room).
    pub(crate) fn finish(mut self) -> PlanRoom {
        self.room.spans.clear();
        self.room.added.clear();
        self.room
    }
}

/// Where an appended entry's name lies, in a `u64`: bit 63 set for the
/// plan's own copy (`names`), clear for the source's bytes; the start
/// (bits 20-62) and the length (bits 0-19). Names are read from the
/// source where they lie in it (not copied: a copy of each short name was
/// a call of its own), copied otherwise (a kept node's, a longer one).
struct NameSpan;

impl NameSpan {
    const OWN: u64 = 1 << 63;
    const LEN_BITS: u32 = 20;
    const MAX_START: u64 = (1 << 43) - 1;

    /// The span of `start..start + len`, if both fit.
    fn of(own: bool, start: usize, len: usize) -> Option<u64> {
        let (start, len) = (u64::try_from(start).ok()?, u64::try_from(len).ok()?);
        (start <= Self::MAX_START && len < 1 << Self::LEN_BITS)
            .then_some((if own { Self::OWN } else { 0 }) | (start << Self::LEN_BITS) | len)
    }

    /// Whether the span is of the plan's own copy, and its byte range.
    fn range(span: u64) -> (bool, std::ops::Range<usize>) {
        let len = span & ((1 << Self::LEN_BITS) - 1);
        let start = (span >> Self::LEN_BITS) & Self::MAX_START;
        // Both fit a usize: they were usizes.
        let (start, len) = (start as usize, len as usize);
        (span & Self::OWN != 0, start..start.saturating_add(len))
    }
}

impl Plan {
    /// Appends an entry named `name`: a span of the source where the name
    /// lies in it, else of a copy.
    fn name(&mut self, name: &str) {
        let base = self.source.as_ptr() as usize;
        let at = (name.as_ptr() as usize).wrapping_sub(base);
        let in_source = (name.as_ptr() as usize) >= base
            && at
                .checked_add(name.len())
                .is_some_and(|end| end <= self.source.len());
        let span = in_source
            .then(|| NameSpan::of(false, at, name.len()))
            .flatten()
            .or_else(|| {
                let start = self.names.len();
                self.names.push_str(name);
                NameSpan::of(true, start, name.len())
            });
        // A name past both limits (43-bit start, 1 MiB long) cannot be in
        // memory beside the rest: kept empty rather than wrong.
        self.spans.push(span.unwrap_or(Self::EMPTY_NAME));
    }

    const EMPTY_NAME: u64 = NameSpan::OWN;

    fn proto(&mut self, t: TypeProto) -> Fill {
        let k = u32::try_from(self.protos.len()).unwrap_or(u32::MAX);
        self.protos.push(t);
        Fill::Proto(k)
    }
}

/// [`annotate::write_back`] for the main graph: `graph` (the result's
/// decoded part: inputs and outputs, changed here) and `main` (its lists,
/// kept), whose entries are planned instead of written. `None` when a name
/// is output by two nodes (not SSA form): the captured types are then not
/// all final, and the caller writes the decoded model back instead.
fn plan_main<'a>(
    graph: &mut GraphProto,
    main: GraphView<'a>,
    outputs: Option<&[&'a str]>,
    room: PlanRoom,
    types: &MainTypes,
    names: &mut FreshNames<'_>,
    done: &mut Annotated,
) -> Option<Plan> {
    let symbols = names.symbols();
    let naming: Vec<bool> = types
        .types
        .iter()
        .map(|t| needs_names(t, symbols))
        .collect();
    let mut plan = Plan {
        source: match main.node {
            crate::ir::view::Seq::Kept(list) => list.source().clone(),
            crate::ir::view::Seq::Slice(_) => bytes::Bytes::new(),
        },
        spans: room.spans,
        added: room.added,
        ..Plan::default()
    };
    // Declared entries by name (later kinds win), as write_back does, and
    // whether a node output the name yet.
    let declared = main.value_info.len() + main.graph.input.len() + main.graph.output.len();
    let mut typed: NameTable<'_, (Slot, bool)> =
        NameTable::with_capacity(declared + main.initializer.len());
    let mut untyped: NameTable<'_, (Slot, bool)> = NameTable::default();
    // A type without a value case: inference did not see the declaration,
    // so a name new to it may still be declared.
    let mut unseen_typed = false;
    // Entries are read from their bytes (a run of equal types is looked
    // at once).
    let mut last: Option<(DeclaredType<'_>, bool)> = None;
    for d in main.declarations() {
        let i = d.index;
        if let DeclaredType::None = d.ty {
            set_fill(&mut plan.fills, i, Fill::Empty);
            untyped.insert(d.name, (Slot::Info(i), false));
            continue;
        }
        let has_value = match last {
            Some((previous, has_value)) if same_declared(previous, d.ty) => has_value,
            _ => {
                let has_value = d.type_proto().is_some_and(|t| t.value.is_some());
                last = Some((d.ty, has_value));
                has_value
            }
        };
        unseen_typed |= !has_value;
        typed.insert(d.name, (Slot::Info(i), false));
    }
    let header = main.graph;
    for (list, slot) in [
        (&header.input, Slot::Input as fn(usize) -> Slot),
        (&header.output, Slot::Output),
    ] {
        for (i, vi) in list.iter().enumerate() {
            let map = match &vi.r#type {
                Some(t) => {
                    unseen_typed |= t.value.is_none();
                    &mut typed
                }
                None => &mut untyped,
            };
            map.insert(vi.name(), (slot(i), false));
        }
    }
    for vi in graph.input.iter_mut().chain(graph.output.iter_mut()) {
        vi.r#type.get_or_insert_with(TypeProto::default);
    }
    let aside = main.initializer_names().chain(
        main.sparse_initializer
            .iter()
            .filter_map(|s| s.values.as_ref().map(|v| v.name())),
    );
    for name in aside {
        typed.get_or_insert_with(name, || (Slot::Aside, false));
    }
    // Every node output in order: as gathered beside inference, or read
    // now as inference read the nodes (one without attributes from its
    // bytes).
    let read;
    let outputs: &[&str] = match outputs {
        Some(o) => o,
        None => {
            let mut heads = NodeHeads::new(main.node, 0);
            let mut all = Vec::with_capacity(main.node.len());
            while let Some(n) = heads.next() {
                all.extend_from_slice(&n.head.output);
            }
            read = all;
            &read
        }
    };
    // Room for every output appended, made once (growing by doubling
    // touched twice the memory, each fresh page a fault); what a graph
    // whose outputs are declared leaves unused is never touched, unless
    // the room was written beforehand (PlanRoom).
    plan.spans.reserve_exact(outputs.len());
    plan.added.reserve_exact(outputs.len());
    // The probes of names a few outputs ahead start early (see NameTable),
    // when the table is too large for the caches.
    let prefetch = typed.len() > PREFETCH_FROM;
    for (p, &out) in outputs.iter().enumerate() {
        if let Some(next) = outputs.get(p + PROBE_AHEAD).filter(|_| prefetch) {
            typed.prefetch(next);
        }
        if out.is_empty() {
            continue;
        }
        let first = types.first.get(p).copied().unwrap_or(false);
        let k = types
            .node_outputs
            .get(p)
            .copied()
            .unwrap_or(MainTypes::NONE);
        let t = types.types.get(k as usize);
        let plain = !naming.get(k as usize).copied().unwrap_or(true);
        // A name new to inference is no typed declaration (unless one
        // without a value case exists) and no earlier output.
        let declared = if first && !unseen_typed {
            None
        } else {
            typed.get_mut(out)
        };
        if let Some((slot, seen)) = declared {
            if std::mem::replace(seen, true) && !matches!(slot, Slot::Aside) {
                return None;
            }
            let Some(t) = t else {
                continue;
            };
            match *slot {
                Slot::Aside => {}
                Slot::Info(i) => {
                    let fill = plan.fills.get(i).copied().unwrap_or(Fill::Keep);
                    if plain {
                        set_fill(&mut plan.fills, i, Fill::Merge(k));
                    } else {
                        // Naming: written now.
                        let mut cur = main.value_info.get(i).and_then(|v| v.r#type.clone());
                        apply(fill, &mut cur, &types.types, &plan.protos, names);
                        let mut cur = cur.unwrap_or_default();
                        annotate::merge_proto(t, &mut cur, names);
                        let fill = plan.proto(cur);
                        set_fill(&mut plan.fills, i, fill);
                    }
                    done.merged += 1;
                }
                Slot::Input(i) | Slot::Output(i) => {
                    let list = if matches!(slot, Slot::Input(_)) {
                        &mut graph.input
                    } else {
                        &mut graph.output
                    };
                    if let Some(existing) = list.get_mut(i).and_then(|e| e.r#type.as_mut()) {
                        annotate::merge_proto(t, existing, names);
                        done.merged += 1;
                    }
                }
            }
            continue;
        }
        let untyped_slot = if untyped.is_empty() {
            None
        } else {
            untyped.get_mut(out)
        };
        let untyped_slot = match untyped_slot {
            Some((slot, seen)) => {
                if std::mem::replace(seen, true) {
                    return None;
                }
                Some(*slot)
            }
            // Known to inference before this node, and no declaration:
            // an earlier node's output.
            None if !first => return None,
            None => None,
        };
        let Some(t) = t else {
            continue;
        };
        // Written once: the appended entry and an untyped declaration of
        // the same name share it (and its fresh names).
        let fill = if plain {
            Fill::Set(k)
        } else {
            let proto = names.proto_of(t);
            plan.proto(proto)
        };
        match untyped_slot {
            Some(Slot::Info(i)) => set_fill(&mut plan.fills, i, fill),
            Some(Slot::Input(i)) => set_type(graph.input.get_mut(i), fill, types, &plan, names),
            Some(Slot::Output(i)) => set_type(graph.output.get_mut(i), fill, types, &plan, names),
            _ => {}
        }
        plan.name(out);
        plan.added.push(fill);
    }
    done.added += plan.added.len();
    Some(plan)
}

fn set_fill(fills: &mut Vec<Fill>, i: usize, fill: Fill) {
    if fills.len() <= i {
        fills.resize(i + 1, Fill::Keep);
    }
    fills[i] = fill;
}

/// Gives an input's or output's entry the type `fill` writes.
fn set_type(
    entry: Option<&mut ValueInfoProto>,
    fill: Fill,
    types: &MainTypes,
    plan: &Plan,
    names: &mut FreshNames<'_>,
) {
    if let Some(vi) = entry {
        let mut t = None;
        apply(fill, &mut t, &types.types, &plan.protos, names);
        vi.r#type = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::InferOptions;

    /// The steps write the whole room and stop; the room comes out empty,
    /// with room for every entry (a plan fills it without growing).
    #[test]
    fn room_maker_writes_the_room_in_steps() {
        let want = 3 * ROOM_STEP + 5;
        let mut maker = RoomMaker::new(want);
        let mut steps = 0;
        while maker.step() {
            steps += 1;
            assert!(maker.room.spans.len() <= want);
            assert_eq!(maker.room.spans.len(), maker.room.added.len());
        }
        assert_eq!(steps, 4);
        assert_eq!(maker.room.spans.len(), want);
        assert!(!maker.step(), "done stays done");
        let room = maker.finish();
        assert!(room.spans.is_empty() && room.added.is_empty());
        assert!(room.spans.capacity() >= want && room.added.capacity() >= want);
        // Nothing to make: no step.
        assert!(!RoomMaker::new(0).step());
    }
    use crate::proto::tensor_shape_proto::{dimension, Dimension};
    use crate::proto::{type_proto, OperatorSetIdProto, TensorShapeProto};
    use prost::Message;

    #[test]
    fn appended_names_are_spans_of_the_source_or_of_a_copy() {
        let source = bytes::Bytes::from_static(b"..t1..a_longer_name..");
        let mut plan = Plan {
            source: source.clone(),
            ..Plan::default()
        };
        let outside = String::from("kept_node_output");
        let text = std::str::from_utf8(&source).expect("text");
        plan.name(&text[2..4]);
        plan.name(&outside);
        plan.name(&text[6..19]);
        plan.name("");
        // The source's names are not copied.
        assert_eq!(plan.names, "kept_node_output");
        let edit = ValueInfoEdit {
            spans: plan.spans,
            source,
            names: plan.names,
            ..ValueInfoEdit::default()
        };
        let names: Vec<&str> = edit.appended_names().collect();
        assert_eq!(names, ["t1", "kept_node_output", "a_longer_name", ""]);
        assert_eq!(edit.added_name(9), "");
        // The limits: a start of 43 bits, a length under 2^20.
        let top = (1usize << 43) - 1;
        assert_eq!(
            NameSpan::range(NameSpan::of(false, top, 7).expect("fits")),
            (false, top..top + 7)
        );
        assert_eq!(NameSpan::of(true, top + 1, 1), None);
        assert_eq!(NameSpan::of(false, 0, 1 << 20), None);
        assert_eq!(
            NameSpan::range(NameSpan::of(true, 5, (1 << 20) - 1).expect("fits")),
            (true, 5..5 + (1 << 20) - 1)
        );
    }

    /// A float tensor type; dims: a number, a name, or "?" (no value).
    fn float(dims: &[&str]) -> TypeProto {
        let dim = |d: &&str| Dimension {
            denotation: None,
            value: match d.parse::<i64>() {
                Ok(v) => Some(dimension::Value::DimValue(v)),
                Err(_) if *d == "?" => None,
                Err(_) => Some(dimension::Value::DimParam(d.to_string())),
            },
        };
        TypeProto {
            denotation: None,
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(TensorShapeProto {
                    dim: dims.iter().map(dim).collect(),
                }),
            })),
        }
    }

    fn vi(name: &str, t: Option<TypeProto>) -> ValueInfoProto {
        ValueInfoProto {
            name: Some(name.into()),
            r#type: t,
            ..ValueInfoProto::default()
        }
    }

    fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            input: inputs.iter().map(|s| (*s).into()).collect(),
            output: outputs.iter().map(|s| (*s).into()).collect(),
            ..NodeProto::default()
        }
    }

    fn model(nodes: Vec<NodeProto>, value_info: Vec<ValueInfoProto>) -> ModelProto {
        ModelProto {
            ir_version: Some(8),
            opset_import: vec![OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(17),
            }],
            graph: Some(GraphProto {
                name: Some("g".into()),
                node: nodes,
                input: vec![vi("x", Some(float(&["batch", "?", "4"])))],
                output: vec![vi("z", None)],
                value_info,
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        }
    }

    /// Whether the lazy write-back kept lists (false: it wrote the decoded
    /// model back); panics unless it equals the eager one.
    fn lazily(m: &ModelProto) -> bool {
        let options = InferOptions::default();
        crate::fuzzing::write_back_agrees(m, &options);
        let bytes = bytes::Bytes::from(m.encode_to_vec());
        let lazy = crate::decode::lazy::decode_lazy(bytes, &Default::default()).expect("decodes");
        let (_, lists, _, _) =
            crate::infer::infer_shapes_lazy(&lazy.model, &lazy.lists, &options).expect("infers");
        lists.is_some()
    }

    #[test]
    fn ssa_graphs_stay_lazy_with_fresh_names_and_declarations() {
        // Relu keeps x's unknown dim (a fresh name, written at plan time),
        // y declared typed (merged), w declared without a type (given one),
        // v declared with an empty type (no value case).
        let m = model(
            vec![
                node("Relu", &["x"], &["y"]),
                node("Neg", &["y"], &["w"]),
                node("Abs", &["w"], &["v"]),
                node("Sigmoid", &["v"], &["z"]),
            ],
            vec![
                vi("y", Some(float(&["batch", "?", "?"]))),
                vi("w", None),
                vi(
                    "v",
                    Some(TypeProto {
                        denotation: None,
                        value: None,
                    }),
                ),
            ],
        );
        assert!(lazily(&m));
    }

    #[test]
    fn a_name_output_twice_is_written_back_decoded() {
        let twice = |value_info| {
            model(
                vec![
                    node("Relu", &["x"], &["y"]),
                    node("Neg", &["x"], &["y"]),
                    node("Abs", &["y"], &["z"]),
                ],
                value_info,
            )
        };
        // New to inference, declared typed, declared without a type.
        assert!(!lazily(&twice(vec![])));
        assert!(!lazily(&twice(vec![vi(
            "y",
            Some(float(&["batch", "?", "4"]))
        )])));
        assert!(!lazily(&twice(vec![vi("y", None)])));
        // An output named like an initializer is left alone, however often.
        let mut m = twice(vec![]);
        if let Some(g) = m.graph.as_mut() {
            g.initializer.push(crate::proto::TensorProto {
                name: Some("y".into()),
                data_type: Some(1),
                dims: vec![1],
                float_data: vec![1.0],
                ..Default::default()
            });
        }
        assert!(lazily(&m));
    }
}
