//! The graph walk of type and shape inference, with onnx 1.23's semantics
//! (`shape_inference/implementation.cc`, strict mode, type checks on):
//!
//! - a graph's declared types come first (`value_info`, then inputs, then
//!   outputs: a later declaration of a name wins), then its initializers
//!   (whose types must agree with a declaration of the same name), then its
//!   nodes in order;
//! - for each node: the operator's rule (or its function body, or a
//!   model-local function), then the schema's type-constraint check, then
//!   each output type is merged into its declaration (a conflict is an
//!   error) and recorded; a Constant node's value is kept for later rules;
//! - subgraphs (If, Loop, Scan, ...) are inferred when their node's rule
//!   asks, seeing the enclosing graphs' types; function bodies are inferred
//!   per call, seeing only the caller's input types, constants and
//!   attributes.
//!
//! Where onnx stops at the first error, the engine records it and goes on:
//! the node that failed gets no output types (its declared types stay),
//! and nodes that need those types skip quietly, so one defect is reported
//! once. After a node of an unknown operator, onnx stops reporting
//! inference errors in that graph; the engine reports them as warnings
//! (W791) so the verdict stays onnx's.

use std::collections::HashMap;

use crate::diag::codes::{self, Code};
use crate::diag::{Diagnostic, Location, Severity, Step};
use crate::external::ExternalStore;
use crate::ir::types::{Dim, Dims, Symbols, Type};
use crate::ir::view::{
    same_declared, DeclaredType, GraphView, HeadFeed, Heads, NodeHeads, Seq, TensorRef, FEED_FROM,
};
use crate::names::{Lookahead, Name, NameMap, NameSet, NameTable, PROBE_AHEAD};
use crate::opset::{OpSchema, ParamOption, SchemaRegistry};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeHead, NodeProto, ValueInfoProto,
};
use smallvec::SmallVec;

use super::constant::Const;
use super::context::{
    defect, fatal, At, Attrs, InferError, InferResult, InputType, NodeCtx, Reach,
};
use super::merge;
use super::ops;
use super::propagate;
use super::{GraphTypes, InferOptions};

/// Nodes the engine processes at most in one run (main graph, subgraphs,
/// function bodies), beyond the main graph's own: function bodies can call
/// each other exponentially often; past this budget, calls are no longer
/// expanded (W792).
const MIN_WORK: u64 = 1 << 20;

/// The state of one inference run.
pub(crate) struct Engine<'m> {
    pub(crate) symbols: Symbols,
    schemas: &'static SchemaRegistry,
    functions: HashMap<String, &'m FunctionProto>,
    ir_version: i64,
    store: Option<&'m ExternalStore>,
    check_type: bool,
    findings: Vec<Diagnostic>,
    counts: crate::diag::Counts,
    limit: usize,
    /// Function bodies being expanded (recursion guard).
    active: Vec<*const FunctionProto>,
    work: u64,
    work_limit: u64,
    budget_reported: bool,
    /// Unknown operators already warned about (W790 once per operator).
    warned_ops: NameSet<'m>,
    pub(crate) collected: Option<Vec<GraphTypes>>,
    /// With `collected`: the main graph's types as type ids by node output
    /// (`InferOptions::compact_main`), filled at the end of its run.
    compact_main: bool,
    pub(crate) main_types: Option<super::MainTypes>,
    /// The write-back's room, made by the head feed's producer meanwhile.
    room: Option<super::annotate_lazy::PlanRoom>,
    /// Report nodes that do not fit their schema (no structural check runs
    /// beside this inference).
    report_unfit: bool,
    /// A cleared buffer for the next node's output types.
    spare_outputs: Vec<Option<Type>>,
    /// The last schemas looked up (graphs repeat a few operators).
    schema_cache: crate::opset::RecentSchemas<SCHEMA_CACHE>,
    /// Type checks that passed (see [`type_check_key`]).
    checked: PassedChecks,
    /// Follow the values of shape computations ([`propagate`]).
    pub(crate) data_prop: bool,
    pub(crate) symbolic: bool,
    /// Infer onnxruntime's operators ([`ops::contrib`]).
    pub(crate) contrib_ops: bool,
    /// A function call's output data (output index, values), handed from
    /// [`Engine::infer_call`] to the calling node (onnx's
    /// BindValuesOnReturn).
    returned_data: Vec<(usize, Dims)>,
    /// Values data propagation may still keep in this run (a hostile graph
    /// of many long shape values stays bounded in memory).
    data_left: usize,
}

const SCHEMA_CACHE: usize = 8;

/// Type-check results kept at most (distinct schema and type combinations).
const MAX_CHECKED: usize = 1 << 16;

/// The key of a passed type check: the schema id, the element type of each
/// input (absent or untyped: one code for both) and output. Most fit in
/// one word ([`CheckKey::Packed`]: 12 bits of schema id, 4 of input count,
/// eight 6-bit element codes), hashed far faster than the general form.
#[derive(Debug, PartialEq, Eq, Hash)]
enum CheckKey {
    Packed(u64),
    Long(usize, SmallVec<[i32; 6]>),
}

/// Element codes a packed key holds (onnx's are below 32); the largest
/// code stands for an absent or untyped input.
const PACKED_ELEM_BITS: u32 = 6;
const PACKED_ABSENT: u64 = (1 << PACKED_ELEM_BITS) - 1;
const PACKED_SLOTS: usize = 8;

/// The key of a type check whose inputs and outputs are all plain tensors
/// of known element type (or absent inputs); `None` otherwise.
fn type_check_key(
    s: &OpSchema,
    inputs: &[InputType<'_>],
    outputs: &[Option<Type>],
) -> Option<CheckKey> {
    let code = |t: &InputType<'_>| match t {
        InputType::Known(Type::Tensor(x)) if x.elem != 0 => Some(x.elem),
        InputType::Known(_) => None,
        _ => Some(-1),
    };
    let out_code = |t: &Option<Type>| match t {
        Some(Type::Tensor(x)) if x.elem != 0 => Some(x.elem),
        _ => None,
    };
    let fits = |elem: i32| elem == -1 || (0..PACKED_ABSENT as i32).contains(&elem);
    if s.id < 1 << 12 && inputs.len() < 16 && inputs.len() + outputs.len() <= PACKED_SLOTS {
        let mut key = (s.id as u64) | ((inputs.len() as u64) << 12);
        let mut shift = 16;
        let codes = inputs.iter().map(code).chain(outputs.iter().map(out_code));
        let mut packed = true;
        for elem in codes {
            let elem = elem?;
            if !fits(elem) {
                packed = false;
                break;
            }
            let bits = if elem == -1 {
                PACKED_ABSENT
            } else {
                elem as u64
            };
            key |= bits << shift;
            shift += PACKED_ELEM_BITS;
        }
        if packed {
            return Some(CheckKey::Packed(key));
        }
    }
    let mut key = SmallVec::new();
    for t in inputs {
        key.push(code(t)?);
    }
    for t in outputs {
        key.push(out_code(t)?);
    }
    Some(CheckKey::Long(s.id, key))
}

/// Passed type checks ([`type_check_key`]), packed keys in a set of words.
#[derive(Default)]
struct PassedChecks {
    packed: foldhash::HashSet<u64>,
    /// [`CheckKey::Long`] keys only.
    long: foldhash::HashSet<CheckKey>,
}

impl PassedChecks {
    fn contains(&self, key: &CheckKey) -> bool {
        match key {
            CheckKey::Packed(k) => self.packed.contains(k),
            CheckKey::Long(..) => self.long.contains(key),
        }
    }

    fn len(&self) -> usize {
        self.packed.len() + self.long.len()
    }

    fn insert(&mut self, key: CheckKey) {
        match key {
            CheckKey::Packed(k) => {
                self.packed.insert(k);
            }
            long => {
                self.long.insert(long);
            }
        }
    }
}

/// What a run knows of a value: its type (an index in the run's
/// [`TypeArena`], or [`UNTYPED`] / [`POISONED`]) and its constant value, if
/// any (an index in the run's constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    ty: u32,
    konst: u32,
}

/// Declared with a type that sets nothing (an empty `TypeProto`): a kind
/// of type for the declaration order (it replaces an earlier type, and an
/// initializer keeps it), none for the rules ([`InputType::Unset`]).
const UNSET: u32 = u32::MAX - 2;
/// Defined without a type (a rule needing it fails, as in onnx).
const UNTYPED: u32 = u32::MAX - 1;
/// Unknown because of an earlier finding: rules skip quietly.
const POISONED: u32 = u32::MAX;
const NO_CONST: u32 = u32::MAX;

impl Entry {
    const fn new(ty: u32) -> Entry {
        Entry {
            ty,
            konst: NO_CONST,
        }
    }
}

/// Most node inputs were produced a few nodes before: the last values a run
/// recorded are looked up first, without touching the (large) hash table.
const RECENT: usize = 8;

/// The types of a run, each distinct type stored once: most values of a
/// graph share a few types, so a value costs a name and two indexes.
#[derive(Default)]
struct TypeArena {
    types: Vec<Type>,
    index: foldhash::HashMap<Type, u32>,
    /// The type interned last (consecutive values often share a type).
    last: Option<u32>,
}

impl TypeArena {
    fn intern(&mut self, t: Type) -> u32 {
        self.intern_ref(&t)
    }

    /// [`TypeArena::intern`] of a borrowed type, cloned only when new
    /// (most are not: the move of a type into the arena was itself a cost).
    fn intern_ref(&mut self, t: &Type) -> u32 {
        if let Some(last) = self.last {
            if self.types.get(last as usize) == Some(t) {
                return last;
            }
        }
        let i = match self.index.get(t) {
            Some(&i) => i,
            None => {
                let i = u32::try_from(self.types.len())
                    .unwrap_or(POISONED)
                    .min(UNSET - 1);
                self.types.push(t.clone());
                self.index.insert(t.clone(), i);
                i
            }
        };
        self.last = Some(i);
        i
    }

    fn get(&self, i: u32) -> Option<&Type> {
        self.types.get(i as usize)
    }
}

/// One graph (or one function-body call) being inferred.
pub(crate) struct Run<'m, 'o> {
    outer: Option<&'o Run<'m, 'o>>,
    values: NameTable<'m, Entry>,
    arena: TypeArena,
    consts: Vec<Const<'m>>,
    /// The last values recorded, newest at `recent_next - 1` (a ring).
    recent: [(&'m str, Entry); RECENT],
    recent_next: usize,
    opsets: NameMap<'m, i64>,
    last_opset: Option<(&'m str, Option<i64>)>,
    /// Function parameters the caller did not give.
    unbound: NameSet<'m>,
    /// In a subgraph: node outputs named like a typed value of an enclosing
    /// graph (an SSA violation). onnx's map of types holds the enclosing
    /// graphs' values, so its UpdateType merges the inferred type into that
    /// value's type (refusing a conflict) and adds no `value_info` entry to
    /// the subgraph; an output declared without a type stays untyped.
    shadowing: NameSet<'m>,
    /// A function call's attributes, by the function's attribute names.
    bindings: Option<&'o [(&'m str, &'m AttributeProto)]>,
    /// An unknown operator was met in this graph (onnx's
    /// `has_unsupported_op`): later inference errors of its nodes are
    /// hidden.
    masked: bool,
    /// A subgraph or function body run for a node of a masked (or hidden)
    /// graph: a failure here fails that node, as in onnx, where it surfaces
    /// as the node's inference error, which the masked graph hides,
    /// whatever its kind; so it is reported as a warning.
    hidden: bool,
    /// A finding that makes this run fail (onnx throws at its end).
    failed: bool,
    loc: Location,
    path: String,
    /// Where this run's graph is in the model: (node index, attribute name)
    /// at each level below the main graph; `None` inside a function body
    /// (a graph the model does not hold at a fixed place).
    steps: Option<Vec<(usize, String)>>,
    /// For a subgraph: which of its inputs the caller gave a type.
    given: Vec<bool>,
    /// With data propagation: the values computed for this run's values.
    data: NameMap<'m, Dims>,
    /// With data propagation: the names onnx's map of propagated values
    /// holds in this graph (written by a step onnx takes, or cached there
    /// when such a step read a constant or a 1-D input of static length):
    /// onnx refuses a second write of one ("Data for input 0 already
    /// exists"). Per graph: onnx's map is shared by every graph of the
    /// model, so it also refuses sibling subgraphs that each define a name
    /// (a valid model), which onnxfast does not follow.
    onnx_data: NameSet<'m>,
    /// With `compact_main`, in the main graph: each node output's state
    /// after its node, in node order (see [`Capture`]).
    capture: Option<Capture>,
}

/// What each node output of the main graph became, captured as its node
/// is done (a type id per output; looking the names up again afterwards
/// costs a random probe of the whole table each).
#[derive(Default)]
struct Capture {
    ty: Vec<u32>,
    /// The name was new to the run: not declared, not an initializer, not
    /// an earlier output.
    first: Vec<bool>,
}

/// `existing` with `inferred` merged in (onnx's mergeShapesAndTypes), or a
/// conflict; `None` when the merge changes nothing.
fn merged_type(
    inferred: &Type,
    existing: &Type,
    symbols: &Symbols,
) -> Result<Option<Type>, merge::Conflict> {
    merge::check(inferred, existing, symbols)?;
    let mut merged = existing.clone();
    merge::merge_into(inferred, &mut merged);
    Ok((merged != *existing).then_some(merged))
}

/// What an enclosing graph's value gives a subgraph's node output of its
/// name (see [`Run::outer_type`]).
enum OuterType<'s> {
    Typed(&'s Type),
    Unset,
}

impl<'m, 'o> Run<'m, 'o> {
    fn new(outer: Option<&'o Run<'m, 'o>>, loc: Location, path: String) -> Self {
        Run {
            outer,
            values: NameTable::default(),
            arena: TypeArena::default(),
            consts: Vec::new(),
            recent: [("", Entry::new(POISONED)); RECENT],
            recent_next: 0,
            opsets: NameMap::default(),
            last_opset: None,
            unbound: NameSet::default(),
            shadowing: NameSet::default(),
            bindings: None,
            masked: false,
            hidden: false,
            failed: false,
            loc,
            path,
            steps: Some(Vec::new()),
            given: Vec::new(),
            data: NameMap::default(),
            onnx_data: NameSet::default(),
            capture: None,
        }
    }

    /// Whether `name` is new to this run, when outputs are captured.
    fn is_new(&self, name: &str) -> bool {
        self.capture.is_some() && self.entry(name).is_none()
    }

    /// Captures the state of output `name` (`None`: an empty name) after
    /// its node; `first`: it was new before.
    fn capture_output(&mut self, name: Option<&str>, first: bool) {
        if self.capture.is_none() {
            return;
        }
        let ty = name
            .and_then(|n| self.entry(n))
            .map_or(super::MainTypes::NONE, |e| {
                if self.arena.get(e.ty).is_some() {
                    e.ty
                } else {
                    super::MainTypes::NONE
                }
            });
        if let Some(c) = &mut self.capture {
            c.ty.push(ty);
            c.first.push(first);
        }
    }

    /// Makes the capture hold exactly `outputs` entries from `start` (a
    /// node's outputs, whatever path its inference took).
    fn capture_align(&mut self, start: usize, outputs: usize) {
        if let Some(c) = &mut self.capture {
            // Almost always aligned already (one entry per output).
            let want = start + outputs;
            if c.ty.len() != want || c.first.len() != want {
                c.ty.resize(want, super::MainTypes::NONE);
                c.first.resize(want, false);
            }
        }
    }

    /// Whether onnx's map of propagated values holds `name` (here or in an
    /// enclosing graph): values its own steps computed or cached.
    pub(crate) fn onnx_has_data(&self, name: &str) -> bool {
        let mut run = Some(self);
        while let Some(r) = run {
            if r.onnx_data.contains(&Name(name)) {
                return true;
            }
            run = r.outer;
        }
        false
    }

    /// The propagated values of a name, here or in an enclosing graph (onnx
    /// keeps one table for a graph and its subgraphs; a function body has
    /// its own).
    pub(crate) fn data_of<'s>(&'s self, name: &'s str) -> Option<&'s Dims> {
        let mut run = Some(self);
        while let Some(r) = run {
            if let Some(d) = r.data.get(&Name(name)) {
                return Some(d);
            }
            run = r.outer;
        }
        None
    }

    /// Whether onnx hides the inference errors of this run's nodes: an
    /// unknown operator came before in this graph, or in the graph of a
    /// node this run is inferred for.
    pub(crate) fn errors_hidden(&self) -> bool {
        self.masked || self.hidden
    }

    /// The model's main graph (not a subgraph, not a function body).
    fn is_main(&self) -> bool {
        // Subgraphs have steps, function bodies (and what is below them) none.
        self.steps.as_ref().is_some_and(|s| s.is_empty())
    }

    /// This run's entry of a value (recent values first).
    fn entry(&self, name: &str) -> Option<Entry> {
        for k in 1..=RECENT {
            let (n, e) = self.recent[(self.recent_next + RECENT - k) % RECENT];
            if !n.is_empty() && crate::names::same(n, name) {
                return Some(e);
            }
        }
        self.values.get(name).copied()
    }

    fn put(&mut self, name: &'m str, e: Entry) {
        self.values.insert(name, e);
        self.remember(name, e);
    }

    fn remember(&mut self, name: &'m str, e: Entry) {
        self.recent[self.recent_next % RECENT] = (name, e);
        self.recent_next = (self.recent_next + 1) % RECENT;
    }

    fn input_type<'s>(&'s self, e: Entry) -> InputType<'s> {
        // A type first (the states are past the arena's end).
        if let Some(t) = self.arena.get(e.ty) {
            return InputType::Known(t);
        }
        match e.ty {
            UNSET => InputType::Unset,
            UNTYPED => InputType::Untyped,
            _ => InputType::Poisoned,
        }
    }

    /// How a value is known here or in an enclosing graph, and its constant
    /// value when it is one of this run's.
    fn lookup<'s>(&'s self, name: &'s str) -> (InputType<'s>, Option<&'s Const<'m>>) {
        if let Some(e) = self.entry(name) {
            let konst = self.consts.get(e.konst as usize);
            return (self.input_type(e), konst);
        }
        let mut run: Option<&'s Run<'m, 'o>> = self.outer;
        while let Some(r) = run {
            if let Some(e) = r.values.get(name) {
                return (r.input_type(*e), None);
            }
            run = r.outer;
        }
        (InputType::Undefined, None)
    }

    /// The type onnx's map of types holds for `name` in this graph or an
    /// enclosing one (nearest first): a typed value, or one declared with a
    /// type of no kind; `None` for a name it does not hold (undefined, or
    /// defined without a type).
    fn outer_type<'s>(&'s self, name: &str) -> Option<OuterType<'s>> {
        let mut run = Some(self);
        while let Some(r) = run {
            if let Some(e) = r.values.get(name) {
                if let Some(t) = r.arena.get(e.ty) {
                    return Some(OuterType::Typed(t));
                }
                if e.ty == UNSET {
                    return Some(OuterType::Unset);
                }
            }
            run = r.outer;
        }
        None
    }

    /// The type of a value of this run.
    fn get(&self, name: &str) -> Option<&Type> {
        self.arena.get(self.entry(name)?.ty)
    }

    fn set_type(&mut self, name: &'m str, t: Type) {
        let ty = self.arena.intern(t);
        self.set_type_id(name, ty);
    }

    /// [`Run::set_type`] by the type's index in the arena.
    fn set_type_id(&mut self, name: &'m str, ty: u32) {
        let konst = self.entry(name).map_or(NO_CONST, |e| e.konst);
        self.put(name, Entry { ty, konst });
    }

    /// Marks a value defined without a type (unless it has one).
    fn set_untyped(&mut self, name: &'m str) {
        self.set_state(name, UNTYPED);
    }

    /// Marks a value unknown because of a finding (unless it has a type).
    fn poison(&mut self, name: &'m str) {
        self.set_state(name, POISONED);
    }

    fn set_state(&mut self, name: &'m str, state: u32) {
        match self.entry(name) {
            Some(e) if e.ty < UNTYPED => {}
            Some(e) => self.put(name, Entry { ty: state, ..e }),
            None => self.put(name, Entry::new(state)),
        }
    }

    /// Records an inferred output type, merged into the value's declared
    /// type if it has one (onnx's UpdateType): one probe of the table.
    /// True when the name was new (not in the table before).
    fn record_type(
        &mut self,
        name: &'m str,
        inferred: &Type,
        symbols: &Symbols,
    ) -> Result<bool, merge::Conflict> {
        let Run {
            values,
            arena,
            outer,
            shadowing,
            ..
        } = self;
        let (slot, new) = values.get_or_insert_with(name, || Entry::new(POISONED));
        match arena.get(slot.ty) {
            Some(existing) => {
                if let Some(merged) = merged_type(inferred, existing, symbols)? {
                    slot.ty = arena.intern(merged);
                }
            }
            // A type of no kind is this graph's: the inferred type fills it.
            None if slot.ty == UNSET => slot.ty = arena.intern_ref(inferred),
            None => match outer.and_then(|o| o.outer_type(name)) {
                Some(outer_type) => {
                    slot.ty = match outer_type {
                        OuterType::Typed(existing) => {
                            let merged =
                                merged_type(inferred, existing, symbols).map_err(|mut c| {
                                    c.message.push_str(
                                        " (the type of an enclosing graph's value of this name)",
                                    );
                                    c
                                })?;
                            arena.intern(merged.unwrap_or_else(|| existing.clone()))
                        }
                        OuterType::Unset => arena.intern_ref(inferred),
                    };
                    shadowing.insert(Name(name));
                }
                None => slot.ty = arena.intern_ref(inferred),
            },
        }
        let e = *slot;
        self.remember(name, e);
        Ok(new)
    }

    /// Records a constant value of a name.
    fn set_const(&mut self, name: &'m str, c: Const<'m>) {
        let Ok(k) = u32::try_from(self.consts.len()) else {
            return;
        };
        if k == NO_CONST {
            return;
        }
        self.consts.push(c);
        let e = self.entry(name).unwrap_or(Entry::new(POISONED));
        self.put(name, Entry { konst: k, ..e });
    }

    /// The opset version of a domain ('' falls back to 'ai.onnx'); the last
    /// answer is kept (most nodes of a graph share a domain).
    fn opset(&mut self, domain: &'m str) -> Option<i64> {
        if let Some((d, v)) = self.last_opset {
            if crate::names::same(d, domain) {
                return v;
            }
        }
        let v = self.opsets.get(&Name(domain)).copied().or_else(|| {
            if domain.is_empty() {
                self.opsets.get(&Name("ai.onnx")).copied()
            } else {
                None
            }
        });
        self.last_opset = Some((domain, v));
        v
    }

    fn bindings(&self) -> Option<&'o [(&'m str, &'m AttributeProto)]> {
        let mut run = Some(self);
        while let Some(r) = run {
            if r.bindings.is_some() {
                return r.bindings;
            }
            run = r.outer;
        }
        None
    }
}

fn node_step(index: usize, n: &NodeHead<'_>) -> Step {
    Step::Node {
        index,
        name: n.name().to_string(),
        op_type: n.op_type().to_string(),
    }
}

fn item(field: &'static str, index: usize, name: &str) -> Step {
    Step::Item {
        field,
        index,
        name: name.to_string(),
    }
}

/// The opset map of a model or function (`opset_import`, last one wins).
fn opsets_of<'m>(imports: &'m [crate::proto::OperatorSetIdProto]) -> NameMap<'m, i64> {
    let mut map = NameMap::default();
    for o in imports {
        map.insert(Name(o.domain()), i64::from(o.version() as i32));
    }
    map
}

fn function_id(domain: &str, name: &str, overload: &str) -> String {
    if overload.is_empty() {
        format!("{domain}:{name}")
    } else {
        format!("{domain}:{name}:{overload}")
    }
}

/// Whether `node` has at least the inputs and outputs `s` requires and
/// more of one of them than it takes.
fn only_extra(node: &NodeHead<'_>, s: &OpSchema) -> bool {
    let (n_in, n_out) = (node.input.len(), node.output.len());
    n_in >= s.min_input as usize
        && n_out >= s.min_output as usize
        && (n_in > s.max_input as usize || n_out > s.max_output as usize)
}

/// Why a node does not fit its schema well enough for inference (input and
/// output counts, attribute types, required attributes), or `None` when it
/// fits: a node that does not is reported by the structural checker (see
/// [`Engine::refuse_unfit`] for what inference does with it). The flag: the
/// misfit is in the counts, which onnx's type check verifies (and fails at
/// once on) after the rule.
fn unfit(node: &NodeHead<'_>, attrs: &Attrs<'_, '_>, s: &OpSchema) -> Option<(String, bool)> {
    let (n_in, n_out) = (node.input.len(), node.output.len());
    if n_in < s.min_input as usize || n_in > s.max_input as usize {
        return Some((
            format!(
                "it has {n_in} inputs, the schema takes {} to {}",
                s.min_input, s.max_input
            ),
            true,
        ));
    }
    if n_out < s.min_output as usize || n_out > s.max_output as usize {
        return Some((
            format!(
                "it has {n_out} outputs, the schema gives {} to {}",
                s.min_output, s.max_output
            ),
            true,
        ));
    }
    if let Some(allowed) = crate::checker::node::allowed_outputs(s) {
        if !allowed.contains(&n_out) {
            return Some((
                format!("it has {n_out} outputs, the schema gives {allowed:?} (no other count)"),
                true,
            ));
        }
    }
    for (kind, names, params) in [
        ("input", &node.input[..], &s.inputs),
        ("output", &node.output[..], &s.outputs),
    ] {
        for (i, name) in names.iter().enumerate() {
            match params.get(i) {
                Some(p) if p.option == ParamOption::Single && name.is_empty() => {
                    return Some((format!("its {kind} {i} is required but empty"), false));
                }
                _ => {}
            }
        }
    }
    for (name, a) in attrs.iter() {
        if let Some(spec) = s.attribute(name) {
            if a.r#type != Some(spec.attr_type) {
                return Some((
                    format!("its attribute {} has the wrong type", q(name)),
                    false,
                ));
            }
        }
    }
    s.attributes
        .iter()
        .find(|a| a.required && attrs.get(&a.name).is_none())
        .map(|a| {
            let why = format!("it lacks the required attribute {}", q(&a.name));
            (why, false)
        })
}

/// A node's attributes in a run: references to a function's attributes
/// are bound to the caller's values, unbound ones dropped (onnx's
/// AttributeBinder).
fn bind_attrs<'a, 'm: 'a>(
    node: &NodeHead<'m>,
    bindings: Option<&[(&'m str, &'m AttributeProto)]>,
) -> Attrs<'a, 'm> {
    let Some(bindings) = bindings else {
        return Attrs::Direct(node.attribute);
    };
    if node
        .attribute
        .iter()
        .all(|a| a.ref_attr_name_opt().is_none())
    {
        return Attrs::Direct(node.attribute);
    }
    let mut out = Vec::with_capacity(node.attribute.len());
    for a in node.attribute {
        match a.ref_attr_name_opt() {
            None => out.push((a.name(), a)),
            Some(r) => {
                if let Some((_, bound)) = bindings.iter().find(|(n, _)| *n == r) {
                    out.push((a.name(), *bound));
                }
            }
        }
    }
    Attrs::Bound(out)
}

impl<'m> Engine<'m> {
    /// `nodes`: how many nodes the main graph has (sets the work budget).
    pub(crate) fn new(
        model: &'m ModelProto,
        nodes: usize,
        options: &InferOptions<'m>,
    ) -> Engine<'m> {
        let mut functions = HashMap::new();
        for f in &model.functions {
            functions
                .entry(function_id(f.domain(), f.name(), f.overload()))
                .or_insert(f);
        }
        let nodes = nodes as u64;
        Engine {
            symbols: {
                let mut symbols = Symbols::default();
                symbols.negative_dims_unknown = options.symbolic;
                symbols
            },
            schemas: SchemaRegistry::global(),
            functions,
            ir_version: model.ir_version(),
            store: options.store,
            check_type: options.check_type,
            findings: Vec::new(),
            counts: Default::default(),
            limit: options.max_diagnostics,
            active: Vec::new(),
            work: 0,
            work_limit: MIN_WORK.max(nodes.saturating_mul(64)),
            budget_reported: false,
            warned_ops: NameSet::default(),
            collected: options.collect_types.then(Vec::new),
            compact_main: options.collect_types && options.compact_main,
            main_types: None,
            room: None,
            report_unfit: options.report_unfit,
            spare_outputs: Vec::new(),
            schema_cache: Default::default(),
            checked: Default::default(),
            data_prop: options.data_prop,
            symbolic: options.symbolic,
            contrib_ops: options.contrib_ops,
            returned_data: Vec::new(),
            data_left: propagate::MAX_DATA_TOTAL,
        }
    }

    /// The schema of an operator at an opset version (cached).
    fn schema(&mut self, op: &'m str, domain: &'m str, version: i64) -> Option<&'static OpSchema> {
        self.schema_cache.get(self.schemas, op, version, domain)
    }

    pub(crate) fn external(&self) -> Option<&'m ExternalStore> {
        self.store
    }

    /// The diagnostics found, and how many were not kept.
    pub(crate) fn finish(
        self,
    ) -> (
        Vec<Diagnostic>,
        crate::diag::Counts,
        Option<Vec<GraphTypes>>,
    ) {
        (self.findings, self.counts, self.collected)
    }

    fn push(&mut self, diag: Diagnostic) {
        self.counts.add(diag.severity);
        if self.findings.len() < self.limit {
            self.findings.push(diag);
        }
    }

    /// Records a defect of a run, which an unknown operator hides as far
    /// as its `reach` says: a collected inference error after one in the
    /// graph; anything short of [`Reach::Run`] in a subgraph or function
    /// body of a node the caller's graph hides (`Run::hidden`).
    fn report(
        &mut self,
        run: &mut Run<'m, '_>,
        code: Code,
        loc: Location,
        message: String,
        reach: Reach,
    ) {
        let masked_here = reach == Reach::Collected && run.masked;
        if reach < Reach::Run && (run.hidden || masked_here) {
            let before = if masked_here {
                "an earlier node of this graph is an operator it cannot infer"
            } else {
                // This graph fails, which fails its node: hidden there.
                run.failed = true;
                "this subgraph or function body belongs to a node after an operator it cannot infer"
            };
            self.push(Diagnostic {
                code: codes::MASKED_BY_UNKNOWN_OP.id,
                severity: Severity::Warning,
                message: format!("{message} [{}; onnx does not report it: {before}]", code.id),
                location: loc,
                suggestion: None,
            });
            return;
        }
        run.failed = true;
        self.push(Diagnostic {
            code: code.id,
            severity: code.severity,
            message,
            location: loc,
            suggestion: None,
        });
    }

    fn warn(&mut self, code: Code, loc: Location, message: String) {
        self.warn_hint(code, loc, message, None);
    }

    fn warn_hint(&mut self, code: Code, loc: Location, message: String, hint: Option<String>) {
        self.push(Diagnostic {
            code: code.id,
            severity: code.severity,
            message,
            location: loc,
            suggestion: hint,
        });
    }

    /// Infers the model's main graph (`g`: it, with its lists).
    pub(crate) fn run_model(&mut self, model: &'m ModelProto, g: Option<GraphView<'m>>) {
        let Some(g) = g else {
            return;
        };
        let top = Location::default();
        let mut run = Run::new(
            None,
            top.child(Step::Graph(g.name().to_string())),
            "main".to_string(),
        );
        run.opsets = opsets_of(&model.opset_import);
        if self.compact_main {
            // An entry per node output: room for one a node, made once
            // (grown by doubling, each step copied the entries to fresh
            // pages).
            let nodes = g.node.len();
            run.capture = Some(Capture {
                ty: Vec::with_capacity(nodes),
                first: Vec::with_capacity(nodes),
            });
        }
        if Self::fed(g) {
            // The table's pages for the values to come are mapped in on the
            // other thread while this one declares and infers.
            run.values.reserve(Self::values_of(g));
            let room = run.values.spare_room();
            rayon::in_place_scope(|scope| {
                scope.spawn(move |_| {
                    crate::names::prefault(room);
                });
                self.declare(&mut run, g, &[]);
                self.run_graph(&mut run, g);
            });
        } else {
            self.declare(&mut run, g, &[]);
            self.run_graph(&mut run, g);
        }
    }

    /// How many values a graph has, about: its declarations, and one
    /// output a node (counting them would decode every node of a
    /// decode-on-touch graph before inference starts).
    fn values_of(g: GraphView<'_>) -> usize {
        g.node.len()
            + g.graph.input.len()
            + g.initializer.len()
            + g.value_info.len()
            + g.graph.output.len()
    }

    /// Whether a graph's nodes are read on another thread (see
    /// [`HeadFeed`]): a large decode-on-touch graph, with a pool thread to
    /// spare.
    fn fed(g: GraphView<'_>) -> bool {
        matches!(g.node, Seq::Kept(_))
            && g.node.len() >= FEED_FROM
            && rayon::current_num_threads() > 1
    }

    /// Declared types of a graph: value_info, inputs (merged with `given`
    /// types, for subgraphs), outputs.
    fn declare(&mut self, run: &mut Run<'m, '_>, g: GraphView<'m>, given: &[Option<Type>]) {
        // onnx's UpdateType: a declaration with a type (even one that sets
        // nothing) replaces what the name had; one without leaves it.
        fn declare<'m>(
            run: &mut Run<'m, '_>,
            vi: &'m ValueInfoProto,
            symbols: &mut Symbols,
        ) -> bool {
            let Some(t) = vi.r#type.as_ref() else {
                return false;
            };
            match symbols.type_from_proto(t) {
                Some(t) => run.set_type(vi.name(), t),
                None => run.set_type_id(vi.name(), UNSET),
            }
            true
        }
        run.values.reserve(Self::values_of(g));
        // Exporters declare long runs of one type: a declaration equal to
        // the one before (same bytes, or an equal message) reuses its
        // converted type (the conversion is deterministic: the same symbols
        // for the same names). A lazily loaded graph's entries are read
        // from their bytes, not decoded.
        let mut last: Option<(DeclaredType<'m>, u32)> = None;
        let mut declared = Lookahead::new(g.declarations());
        while let Some((d, ahead)) = declared.next_ahead() {
            if let Some(ahead) = ahead {
                run.values.prefetch(ahead.name);
            }
            if let Some((previous, ty)) = last {
                if same_declared(previous, d.ty) {
                    run.set_type_id(d.name, ty);
                    continue;
                }
            }
            last = None;
            let Some(proto) = d.type_proto() else {
                continue;
            };
            match self.symbols.type_from_proto(&proto) {
                Some(t) => run.set_type(d.name, t),
                None => run.set_type_id(d.name, UNSET),
            }
            last = run.entry(d.name).map(|e| (d.ty, e.ty));
        }
        for (i, vi) in g.graph.input.iter().enumerate() {
            let declared = declare(run, vi, &mut self.symbols);
            match given.get(i) {
                Some(Some(t)) => {
                    // Checked against the declaration by infer_subgraph.
                    let mut merged = match run.get(vi.name()) {
                        Some(existing) if declared => {
                            let mut existing = existing.clone();
                            merge::merge_into(t, &mut existing);
                            existing
                        }
                        _ => t.clone(),
                    };
                    merge::materialize(&mut merged, &mut self.symbols);
                    run.set_type(vi.name(), merged);
                }
                _ if !declared => run.set_untyped(vi.name()),
                _ => {}
            }
        }
        for vi in &g.graph.output {
            declare(run, vi, &mut self.symbols);
        }
    }

    /// Initializers, then nodes.
    fn run_graph(&mut self, run: &mut Run<'m, '_>, g: GraphView<'m>) {
        // A lazily loaded graph's initializers are read from their bytes,
        // and decoded only if a rule reads one's value.
        let mut initializers = Lookahead::new(g.initializers());
        while let Some((t, ahead)) = initializers.next_ahead() {
            if let Some(ahead) = ahead {
                run.values.prefetch(ahead.name);
            }
            let ty = Type::tensor_of(t.data_type.unwrap_or(0), &t.dims);
            self.dense_initializer(run, t.index, t.name, ty, Const::Tensor(t.tensor));
        }
        for (i, s) in g.sparse_initializer.iter().enumerate() {
            let Some(values) = &s.values else {
                continue;
            };
            let ty = Type::SparseTensor(crate::ir::types::TensorType::new(
                values.data_type(),
                Some(
                    s.dims
                        .iter()
                        .map(|&d| crate::ir::types::Dim::Value(d))
                        .collect(),
                ),
            ));
            self.initializer(
                run,
                values.name(),
                ty,
                &item("sparse_initializer", i, values.name()),
            );
        }
        // The nodes holding a graph, found while their bytes are at hand (a
        // second pass over a large graph's nodes waits on memory).
        let mut holders: Vec<(usize, &'m [AttributeProto])> = Vec::new();
        if Self::fed(g) {
            // A large graph's heads are read on another thread (when the
            // pool has one free), a few batches ahead.
            let feed = HeadFeed::new(g.node);
            // While ahead, the producer does the view's idle work (gathers
            // the node outputs for the write-back), then makes the
            // write-back's room.
            let mut room = (self.compact_main && run.is_main())
                .then(|| super::annotate_lazy::RoomMaker::new(g.node.len()));
            let idle = g.idle;
            rayon::in_place_scope(|scope| {
                let (feed, room) = (&feed, &mut room);
                scope.spawn(move |_| {
                    feed.produce_with(|| {
                        idle.is_some_and(|w| w.step()) || room.as_mut().is_some_and(|r| r.step())
                    })
                });
                self.read_nodes(run, g, &mut feed.reader(PROBE_AHEAD), &mut holders);
            });
            self.room = room.map(super::annotate_lazy::RoomMaker::finish);
        } else {
            let mut heads = NodeHeads::new(g.node, PROBE_AHEAD);
            self.read_nodes(run, g, &mut heads, &mut holders);
        }
        let mut holders = holders.into_iter();
        if self.compact_main && run.is_main() && self.collected.is_some() {
            self.main_types = Some(super::MainTypes {
                room: self.room.take(),
                ..Self::compact_types(run)
            });
            if let Some(collected) = &mut self.collected {
                collected.push(GraphTypes {
                    path: run.path.clone(),
                    steps: Some(Vec::new()),
                    given: Vec::new(),
                    values: Vec::new(),
                    inputs_only: false,
                });
            }
            self.collect_declared_subgraphs(&run.path.clone(), &mut holders);
        } else if let Some(collected) = &mut self.collected {
            let mut values = Vec::new();
            let mut seen = NameSet::default();
            // Outputs as onnx types them (an output can stay untyped even
            // when a value of its name has a type).
            let outputs = Self::output_types(run, g);
            for (vi, t) in g.graph.output.iter().zip(outputs) {
                if let Some(t) = t {
                    if !vi.name().is_empty() && seen.insert(Name(vi.name())) {
                        values.push((vi.name().to_string(), t));
                    }
                }
            }
            let names = g
                .input
                .iter()
                .map(|v| v.name())
                .chain(g.value_info.iter().map(|v| v.name()))
                .chain(
                    g.node
                        .iter()
                        .flat_map(|n| n.output.iter().map(|o| o.as_str())),
                );
            for name in names {
                if name.is_empty() || !seen.insert(Name(name)) {
                    continue;
                }
                // (A node output named like an enclosing graph's value
                // gets no entry: onnx merged its type into that value's.)
                if !run.shadowing.is_empty() && run.shadowing.contains(&Name(name)) {
                    continue;
                }
                if let Some(t) = run.get(name) {
                    values.push((name.to_string(), t.clone()));
                }
            }
            collected.push(GraphTypes {
                path: run.path.clone(),
                steps: run.steps.clone(),
                given: std::mem::take(&mut run.given),
                values,
                inputs_only: false,
            });
            self.collect_declared_subgraphs(&run.path, &mut holders);
        }
    }

    /// Infers `g`'s nodes in order, as `heads` lends them; the nodes
    /// holding a graph go to `holders` when types are collected.
    #[inline(always)]
    fn read_nodes(
        &mut self,
        run: &mut Run<'m, '_>,
        g: GraphView<'m>,
        heads: &mut impl Heads<'m>,
        holders: &mut Vec<(usize, &'m [AttributeProto])>,
    ) {
        while let Some(lent) = heads.next_head() {
            let (i, n) = (lent.index, lent.head);
            // The table's probes for a node a few ahead start now: most
            // outputs are new names, at random places of a large table.
            if let Some(ahead) = lent.ahead {
                for name in ahead.input.iter().chain(&ahead.output) {
                    run.values.prefetch(name);
                }
            }
            // (A node holding a graph is kept: its head's attributes.)
            if self.collected.is_some() && n.attribute.iter().any(|a| a.g().is_some()) {
                holders.push((i, n.attribute));
            }
            let start = run.capture.as_ref().map_or(0, |c| c.ty.len());
            self.process_node(run, i, n, lent.read, g.node);
            run.capture_align(start, n.output.len());
        }
    }

    /// The main graph's types by node output, as captured when each node
    /// was done (each name's final type unless a later node outputs it
    /// again, which the write-back detects), the distinct types once.
    fn compact_types(run: &mut Run<'m, '_>) -> super::MainTypes {
        let capture = run.capture.take().unwrap_or_default();
        super::MainTypes {
            types: std::mem::take(&mut run.arena.types),
            node_outputs: capture.ty,
            first: capture.first,
            room: None,
        }
    }

    /// With `collect_types`: the graphs held by `nodes` (a graph's nodes
    /// that hold one, with their indices) that no rule inferred (onnx
    /// leaves them as declared) are listed with their declared types.
    fn collect_declared_subgraphs(
        &mut self,
        path: &str,
        nodes: &mut dyn Iterator<Item = (usize, &[AttributeProto])>,
    ) {
        for (i, attributes) in nodes {
            for a in attributes {
                let Some(sub) = a.g() else {
                    continue;
                };
                let sub_path = format!("{path}/{i}.{}", a.name());
                let Some(collected) = &mut self.collected else {
                    return;
                };
                if let Some(c) = collected.iter().find(|c| c.path == sub_path) {
                    if c.inputs_only {
                        // Its own nodes were not inferred: the graphs they
                        // hold are listed as declared.
                        let mut nodes = sub.node.iter().map(|n| &n.attribute[..]).enumerate();
                        self.collect_declared_subgraphs(&sub_path, &mut nodes);
                    }
                    continue;
                }
                let mut values = Vec::new();
                let mut seen = NameSet::default();
                for vi in sub.input.iter().chain(&sub.value_info).chain(&sub.output) {
                    if vi.name().is_empty() || !seen.insert(Name(vi.name())) {
                        continue;
                    }
                    if let Some(t) = vi
                        .r#type
                        .as_ref()
                        .and_then(|t| self.symbols.type_from_proto(t))
                    {
                        values.push((vi.name().to_string(), t));
                    }
                }
                if let Some(collected) = &mut self.collected {
                    collected.push(GraphTypes {
                        path: sub_path.clone(),
                        // Nothing inferred: nothing to write back.
                        steps: None,
                        given: Vec::new(),
                        values,
                        inputs_only: false,
                    });
                }
                let mut nodes = sub.node.iter().map(|n| &n.attribute[..]).enumerate();
                self.collect_declared_subgraphs(&sub_path, &mut nodes);
            }
        }
    }

    /// An initializer of the `initializer` list: [`Engine::initializer`]
    /// and [`Run::set_const`] with one probe of the run's table (they took
    /// five, each hashing the name, for every one of a graph's weights),
    /// its location built only for a finding.
    fn dense_initializer(
        &mut self,
        run: &mut Run<'m, '_>,
        index: usize,
        name: &'m str,
        ty: Type,
        value: Const<'m>,
    ) {
        let Some(k) = u32::try_from(run.consts.len())
            .ok()
            .filter(|&k| k != NO_CONST)
        else {
            // No room for another constant: as set_const, nothing recorded.
            self.initializer(run, name, ty, &item("initializer", index, name));
            return;
        };
        let sets_type = self.initializer_sets_type(run);
        let Run {
            values,
            arena,
            consts,
            ..
        } = run;
        let (slot, _) = values.get_or_insert_with(name, || Entry::new(POISONED));
        let conflict = match arena.get(slot.ty) {
            Some(existing) => merge::check(&ty, existing, &self.symbols).err(),
            // A declared type that sets nothing: onnx checks nothing against
            // it, and keeps it (the declaration comes first).
            None if slot.ty == UNSET => None,
            None => {
                if sets_type {
                    slot.ty = arena.intern(ty);
                } else {
                    // Before IR 4 onnx types no undeclared initializer: a
                    // rule needing its type fails, as for an untyped input.
                    slot.ty = UNTYPED;
                }
                None
            }
        };
        consts.push(value);
        slot.konst = k;
        let e = *slot;
        run.remember(name, e);
        if let Some(c) = conflict {
            let loc = run.loc.child(item("initializer", index, name));
            self.initializer_conflict(run, loc, name, &c);
        }
    }

    /// An initializer whose type conflicts with its name's declaration.
    fn initializer_conflict(
        &mut self,
        run: &mut Run<'m, '_>,
        loc: Location,
        name: &str,
        c: &merge::Conflict,
    ) {
        self.report(
            run,
            codes::INITIALIZER_DECLARED_TYPE,
            loc,
            format!(
                "the initializer does not match the declared type of {}: {}",
                q(name),
                c.message
            ),
            Reach::Node,
        );
    }

    /// An initializer's type against a declaration of the same name.
    fn initializer(&mut self, run: &mut Run<'m, '_>, name: &'m str, ty: Type, step: &Step) {
        if run.entry(name).is_some_and(|e| e.ty == UNSET) {
            // As in dense_initializer: the empty declaration stays.
            return;
        }
        let checked = run
            .get(name)
            .map(|existing| merge::check(&ty, existing, &self.symbols));
        match checked {
            Some(Err(c)) => {
                let loc = run.loc.child(step.clone());
                self.initializer_conflict(run, loc, name, &c);
            }
            Some(Ok(())) => {}
            None => {
                if self.initializer_sets_type(run) {
                    run.set_type(name, ty);
                } else {
                    run.set_untyped(name);
                }
            }
        }
    }

    /// Whether an initializer without a declaration gives its name a type:
    /// from IR version 4 (onnx infers subgraphs and function bodies at the
    /// latest IR version: only the main graph's initializers follow the
    /// model's).
    fn initializer_sets_type(&self, run: &Run<'m, '_>) -> bool {
        self.ir_version >= 4 || !run.is_main()
    }

    fn spend(&mut self, nodes: usize, loc: &Location) -> bool {
        self.work = self.work.saturating_add(nodes as u64);
        if self.work <= self.work_limit {
            return true;
        }
        if !self.budget_reported {
            self.budget_reported = true;
            self.warn(
                codes::INFERENCE_BUDGET,
                loc.clone(),
                format!(
                    "inference stopped expanding function bodies and subgraphs here: more than \
                     {} nodes inferred in all (calls past this point are not inferred)",
                    self.work_limit
                ),
            );
        }
        false
    }

    fn poison_outputs(run: &mut Run<'m, '_>, node: &NodeHead<'m>) {
        for o in &node.output {
            if o.is_empty() {
                run.capture_output(None, false);
            } else {
                let first = run.is_new(o);
                run.poison(o);
                run.capture_output(Some(o), first);
            }
        }
    }

    /// Infers node `index` of `list`: `node`, its head, and `read`, its
    /// attributes when they were read from its bytes for this call (empty
    /// when the head's are kept). A node whose attributes must outlive
    /// the call (a function's caller binds them, a Constant gives its
    /// value) is read again, kept.
    fn process_node(
        &mut self,
        run: &mut Run<'m, '_>,
        index: usize,
        node: &NodeHead<'m>,
        read: &[AttributeProto],
        list: Seq<'m, NodeProto>,
    ) {
        self.work = self.work.saturating_add(1);
        let domain = node.domain();
        let version = run.opset(domain);
        let Some(version) = version else {
            // onnx's inference fails on such a node before its rule, where
            // an unknown operator hides nothing. The checker reports it
            // too (so the full check does not), but it accepts IR < 3
            // models without opset_import (opset 1 implied).
            let legacy = self.ir_version < 3 && run.outer.is_none();
            if (legacy || self.report_unfit) && run.bindings.is_none() {
                let loc = run.loc.child(node_step(index, node));
                let even = if legacy {
                    format!(", even for IR version {} (< 3)", self.ir_version)
                } else {
                    String::new()
                };
                self.report(
                    run,
                    codes::INFERENCE_FAILED,
                    loc,
                    format!(
                        "no opset import for the node's domain {}: onnx's inference needs one{even}",
                        q(if domain.is_empty() { "ai.onnx" } else { domain }),
                    ),
                    Reach::Node,
                );
            }
            Self::poison_outputs(run, node);
            return;
        };
        let attrs = if read.is_empty() {
            bind_attrs(node, run.bindings())
        } else {
            Attrs::Read(read)
        };
        let schema = self.schema(node.op_type(), domain, version);
        if attrs.is_read() && Self::keeps_attributes(node, schema) {
            self.work = self.work.saturating_sub(1);
            match list.get(index) {
                Some(kept) => self.process_node(run, index, &NodeHead::of(kept), &[], list),
                // Not decodable: GraphView::read_nodes reports it.
                None => Self::poison_outputs(run, node),
            }
            return;
        }
        let Some(schema) = schema else {
            let id = function_id(domain, node.op_type(), node.overload());
            if let Some(&f) = self.functions.get(&id) {
                self.call_node(run, index, node, attrs, version, Callee::Local(f), None);
            } else if let Some(rule) = self
                .contrib_ops
                .then(|| ops::contrib::rule(domain, node.op_type(), version))
                .flatten()
            {
                let typing = SchemaRegistry::contrib().get(node.op_type(), version, domain);
                if let Some(s) = typing {
                    // onnxruntime refuses any misfit at load.
                    if let Fit::Refused = self.refuse_unfit(run, index, node, &attrs, s, false) {
                        return;
                    }
                }
                self.call_node(
                    run,
                    index,
                    node,
                    attrs,
                    version,
                    Callee::Contrib(rule, typing),
                    None,
                );
            } else {
                self.unsupported(run, index, node);
            }
            return;
        };
        // A deprecated schema is inferred as any other (onnx's inference
        // runs its rule; the checker reports the deprecation, E406).
        let Fit::Infer(count_misfit) = self.refuse_unfit(run, index, node, &attrs, schema, true)
        else {
            return;
        };
        let callee = Callee::Schema(schema);
        self.call_node(run, index, node, attrs, version, callee, count_misfit);
    }

    /// A node its schema does not fit (counts, required inputs and
    /// attributes: the checker's findings) is not inferred in the full
    /// check, where the checker reports it: its outputs are poisoned. In
    /// standalone inference (`report_unfit`), where nothing else reports
    /// it, a node whose counts fit is inferred as onnx infers it (its rule
    /// reads what is there: an empty required input is absent, a missing
    /// or mistyped attribute is not read); one whose counts do not is
    /// refused (E731), after an unknown operator only once its rule has
    /// passed, as in onnx (the count misfit [`Fit::Infer`] hands to
    /// [`Engine::call_node`]). `as_onnx`: false for onnxruntime's
    /// operators, which it refuses at load whatever the misfit.
    fn refuse_unfit(
        &mut self,
        run: &mut Run<'m, '_>,
        index: usize,
        node: &NodeHead<'m>,
        attrs: &Attrs<'_, 'm>,
        schema: &OpSchema,
        as_onnx: bool,
    ) -> Fit {
        let Some((why, counts)) = unfit(node, attrs, schema) else {
            return Fit::Infer(None);
        };
        // Without the type check (check_type=False) onnx never verifies
        // the counts: it runs the rule on the inputs there are. Followed
        // where the node only has more inputs or outputs than the schema
        // (the rule reads none of those); with fewer, onnx's reads of the
        // missing ones fail, which is not followed read by read (E731).
        let extra_only = counts && !self.check_type && only_extra(node, schema);
        if self.report_unfit && as_onnx && (!counts || extra_only) {
            return Fit::Infer(None);
        }
        if self.report_unfit && as_onnx && self.check_type && (run.masked || run.hidden) {
            // onnx runs the rule, then its type check verifies the counts:
            // which fails first decides whether the unknown operator
            // hides the failure (call_node).
            return Fit::Infer(Some(why));
        }
        if self.report_unfit {
            let loc = run.loc.child(node_step(index, node));
            // onnx's type check fails at once on a count (after the rule,
            // which seldom fails first): not hidden by an unknown operator.
            let reach = if counts && self.check_type {
                Reach::Node
            } else {
                Reach::Collected
            };
            self.report(
                run,
                codes::UNFIT_NODE,
                loc,
                format!("the node is not inferred: {why}"),
                reach,
            );
        }
        Self::poison_outputs(run, node);
        Fit::Refused
    }

    /// Whether a node's attributes must outlive its inference: a function
    /// body's run binds them (an operator without a rule, or a node
    /// without a schema, maybe a model-local function's), a Constant's
    /// value is kept as the output's.
    fn keeps_attributes(node: &NodeHead<'_>, schema: Option<&'static OpSchema>) -> bool {
        match schema {
            None => true,
            Some(s) => ops::rule(s).is_none() || node.op_type() == "Constant",
        }
    }

    /// A node onnx cannot infer (no schema, no model-local function).
    fn unsupported(&mut self, run: &mut Run<'m, '_>, index: usize, node: &NodeHead<'m>) {
        run.masked = true;
        Self::poison_outputs(run, node);
        let builtin = matches!(
            node.domain(),
            "" | "ai.onnx" | "ai.onnx.ml" | "ai.onnx.training"
        );
        let experimental = crate::checker::is_experimental(node);
        if builtin && !experimental {
            // The checker reports the unknown operator (E405).
            return;
        }
        if self.warned_ops.insert(Name(node.op_type())) {
            let loc = run.loc.child(node_step(index, node));
            // One of onnxruntime's operators, which the option infers.
            let hint = ops::contrib::rule(node.domain(), node.op_type(), 1).map(|_| {
                "an operator of onnxruntime's: contrib_ops=True (--contrib-ops) infers it as \
                 onnxruntime does"
                    .to_string()
            });
            self.warn_hint(
                codes::NO_INFERENCE,
                loc,
                format!(
                    "no schema or model-local function for {}{}: its outputs get no types, and \
                     onnx stops reporting inference errors after it in this graph (the first \
                     node of this operator is shown)",
                    if node.domain().is_empty() {
                        String::new()
                    } else {
                        format!("'{}'::", crate::diag::clean(node.domain()))
                    },
                    q(node.op_type())
                ),
                hint,
            );
        }
    }

    /// Infers `node` by `callee`. `count_misfit`: why its input or output
    /// counts misfit its schema, when it is inferred anyway (after an
    /// unknown operator, as onnx does: its rule first, then the count
    /// check; see [`Engine::refuse_unfit`]).
    #[allow(clippy::too_many_arguments)]
    fn call_node(
        &mut self,
        run: &mut Run<'m, '_>,
        index: usize,
        node: &NodeHead<'m>,
        attrs: Attrs<'_, 'm>,
        version: i64,
        callee: Callee<'m>,
        count_misfit: Option<String>,
    ) {
        let schema = match callee {
            Callee::Schema(s) => Some(s),
            _ => None,
        };
        // The schema the node's types are checked against: its own, or
        // onnxruntime's for one of its operators.
        let typing = match callee {
            Callee::Contrib(_, s) => s,
            _ => schema,
        };
        let mut inputs: SmallVec<[InputType<'_>; 4]> = SmallVec::new();
        let mut consts: SmallVec<[Option<&Const<'m>>; 4]> = SmallVec::new();
        for name in &node.input {
            if name.is_empty() || (!run.unbound.is_empty() && run.unbound.contains(&Name(name))) {
                inputs.push(InputType::Absent);
                consts.push(None);
            } else {
                let (t, c) = match run.lookup(name) {
                    // The full check leaves an undefined input to the
                    // structural checks beside it (E212).
                    (InputType::Undefined, c) if !self.report_unfit => (InputType::Poisoned, c),
                    found => found,
                };
                inputs.push(t);
                consts.push(c);
            }
        }
        let mut outputs = std::mem::take(&mut self.spare_outputs);
        outputs.clear();
        outputs.resize_with(node.output.len(), || None);
        let run_ref: &Run<'m, '_> = run;
        let (result, mut outputs) = {
            let mut ctx = NodeCtx {
                node,
                schema: typing.unwrap_or_else(|| placeholder_schema()),
                opset: version,
                attrs: &attrs,
                inputs,
                consts,
                outputs,
                node_index: index,
                engine: self,
                run: run_ref,
                container_fault: std::cell::Cell::new(None),
                read_beyond: std::cell::Cell::new(false),
                no_kind: std::cell::Cell::new(0),
                kind_fault: std::cell::Cell::new(None),
            };
            let mut result = match callee {
                Callee::Schema(s) => match ops::rule(s) {
                    Some(rule) => rule(&mut ctx),
                    None => match &s.body {
                        Some(body) => ctx.call_function(body),
                        None => Ok(()),
                    },
                },
                Callee::Local(f) => ctx.call_function(f),
                Callee::Contrib(rule, _) => rule(&mut ctx),
            };
            // onnx's rule returned there, on an input declared with an
            // empty type: what it inferred before stands.
            if matches!(result, Err(InferError::Pass)) {
                result = Ok(());
            }
            // onnx's rule failed on a sequence, map or optional value
            // there (hidden after an unknown operator), before anything the
            // rule found later and before the type check.
            if let Some(fault) = ctx.take_container_fault() {
                result = Err(fault);
            }
            // onnx's rule failed there too: a shape into an output its
            // element propagation left of no kind.
            if let Some(fault) = ctx.take_kind_fault() {
                result = Err(fault);
            }
            if let Some(why) = count_misfit {
                result = match result {
                    // The rule passed: the count check fails, at once.
                    Ok(()) => Err(fatal(
                        codes::UNFIT_NODE,
                        At::Node,
                        format!("the node is not inferred: {why}"),
                    )),
                    // An input the node lacks: onnx's read of it fails at
                    // once too ("out of bounds").
                    Err(InferError::Defect(mut d)) => {
                        if matches!(d.at, At::Input(i) if i >= node.input.len()) {
                            d.reach = d.reach.max(Reach::Node);
                        }
                        Err(InferError::Defect(d))
                    }
                    other => other,
                };
            }
            // A failure onnx hides, found with values onnx does not have:
            // its rule, without them, may pass and reach the type check,
            // whose failure it does not hide. Checked here as it is.
            let hidden_beyond = ctx.read_beyond.get()
                && ctx.run.errors_hidden()
                && matches!(&result, Err(InferError::Defect(d)) if d.reach == Reach::Collected);
            if hidden_beyond && ctx.engine.check_type {
                if let Some(s) = typing {
                    if let Err(e) = ctx.type_check(s) {
                        result = Err(e.reaching(Reach::Node));
                    }
                }
            }
            if result.is_ok() && ctx.engine.check_type {
                if let Some(s) = typing {
                    // The check depends only on the schema and the type
                    // strings: a combination of plain tensors already found
                    // good is not checked again.
                    let key = type_check_key(s, &ctx.inputs, &ctx.outputs);
                    let known = key.as_ref().is_some_and(|k| ctx.engine.checked.contains(k));
                    if !known {
                        result = ctx.type_check(s).map_err(|e| e.reaching(Reach::Node));
                        if let (Ok(()), Some(k)) = (&result, key) {
                            if ctx.engine.checked.len() < MAX_CHECKED {
                                ctx.engine.checked.insert(k);
                            }
                        }
                    }
                }
            }
            (result, ctx.outputs)
        };
        let returned = std::mem::take(&mut self.returned_data);
        match result {
            // (Pass is Ok by now.)
            Ok(()) | Err(InferError::Pass) => {
                if self.record(run, index, node, &mut outputs) && self.data_prop {
                    for (i, d) in returned {
                        if let Some(name) = node.output.get(i).filter(|n| !n.is_empty()) {
                            run.data.insert(Name(name), d);
                        }
                    }
                    if let Some(s) = schema {
                        self.propagate(run, index, node, s, &attrs);
                    }
                }
            }
            Err(InferError::Defect(d)) => {
                let loc = self.defect_loc(run, index, node, &d.at);
                self.report(run, d.code, loc, d.message, d.reach);
                Self::poison_outputs(run, node);
            }
            Err(InferError::Reported) => {
                // A subgraph or function body failed (its findings are
                // reported); onnx hides that after an unknown operator.
                if !run.masked {
                    run.failed = true;
                }
                Self::poison_outputs(run, node);
            }
            Err(InferError::Skip) => {
                // An input without type because of an earlier finding or
                // an unknown operator: onnx's rule fails on it. In the main
                // graph that adds nothing (the cause is reported, or hidden
                // with this failure); in a subgraph or function body whose
                // own nodes hide nothing, it fails the body, so its node.
                let body = run.outer.is_some() || run.bindings.is_some();
                if body && !run.masked {
                    run.failed = true;
                }
                Self::poison_outputs(run, node);
            }
        }
        outputs.clear();
        self.spare_outputs = outputs;
    }

    fn defect_loc(
        &self,
        run: &Run<'m, '_>,
        index: usize,
        node: &NodeHead<'_>,
        at: &At,
    ) -> Location {
        let loc = run.loc.child(node_step(index, node));
        match at {
            At::Node => loc,
            At::Input(i) => loc.child(item("input", *i, node.input.get(*i).copied().unwrap_or(""))),
            At::Output(i) => loc.child(item(
                "output",
                *i,
                node.output.get(*i).copied().unwrap_or(""),
            )),
            At::Attribute(a) => loc.child(Step::Attribute(a.clone())),
        }
    }

    /// Records a node's inferred output types (onnx's UpdateType), then a
    /// Constant's value.
    fn record(
        &mut self,
        run: &mut Run<'m, '_>,
        index: usize,
        node: &NodeHead<'m>,
        outputs: &mut Vec<Option<Type>>,
    ) -> bool {
        let mut ok = true;
        // The types are read in place (a move of each through the frames
        // below stalled on store forwarding), then dropped.
        for (k, (name, inferred)) in node.output.iter().zip(outputs.iter_mut()).enumerate() {
            if name.is_empty() {
                run.capture_output(None, false);
                continue;
            }
            let first = match inferred {
                // onnx stops at the first conflict of a node.
                _ if !ok => {
                    let first = run.is_new(name);
                    run.poison(name);
                    first
                }
                None => {
                    let first = run.is_new(name);
                    run.set_untyped(name);
                    first
                }
                Some(inferred) => {
                    merge::materialize(inferred, &mut self.symbols);
                    // Whether the name was new, from the recording's own
                    // probe (a conflict is with a type the name had).
                    match run.record_type(name, inferred, &self.symbols) {
                        Ok(new) => new,
                        Err(c) => {
                            let loc = run
                                .loc
                                .child(node_step(index, node))
                                .child(item("output", k, name));
                            self.report(
                                run,
                                c.code,
                                loc,
                                format!("{}: {}", q(name), c.message),
                                Reach::Collected,
                            );
                            ok = false;
                            false
                        }
                    }
                }
            };
            run.capture_output(Some(name), first);
        }
        outputs.clear();
        if ok {
            self.constant(run, node);
        }
        ok
    }

    /// A node's data-propagation step (onnx's, after the node's types are
    /// recorded): the values of output 0 from the inputs' values. A
    /// failure of one of onnx's steps is reported at the node (its output
    /// types stay); of a step beyond onnx's, it only gives no values.
    fn propagate(
        &mut self,
        run: &mut Run<'m, '_>,
        index: usize,
        node: &NodeHead<'m>,
        schema: &'static OpSchema,
        attrs: &Attrs<'_, 'm>,
    ) {
        if !schema.domain.is_empty() {
            return;
        }
        let Some(kind) = propagate::step(&schema.name, schema.since_version) else {
            return;
        };
        let Some(out) = node.output.first().filter(|o| !o.is_empty()) else {
            return;
        };
        // The inputs read, each with whether onnx's read gives values too.
        let mut reads: SmallVec<[(usize, bool); 4]> = SmallVec::new();
        // The first read of a constant onnx cannot parse: its step fails
        // there, and with it the node.
        let mut fault: Option<String> = None;
        let result = {
            let run_ref: &Run<'m, '_> = run;
            let types: SmallVec<[Option<&Type>; 4]> = node
                .input
                .iter()
                .map(|name| match run_ref.lookup(name).0 {
                    InputType::Known(t) if !name.is_empty() => Some(t),
                    _ => None,
                })
                .collect();
            let out_elem = match run_ref.get(out) {
                Some(Type::Tensor(t)) if t.elem != 0 => Some(t.elem),
                _ => None,
            };
            let given: SmallVec<[bool; 4]> = node.input.iter().map(|n| !n.is_empty()).collect();
            let step = propagate::Node {
                op: &schema.name,
                since: schema.since_version,
                attrs,
                types: &types,
                given: &given,
                out_elem,
            };
            if self.symbolic {
                // Expressions need the symbol table: the inputs' data first.
                let inputs: SmallVec<[DataRead; 4]> = (0..node.input.len())
                    .map(|i| self.input_data(run_ref, node, i))
                    .collect();
                propagate::propagate(
                    &step,
                    &mut |i| {
                        let read = inputs.get(i).cloned().unwrap_or(Ok(None));
                        note_read(read, i, &mut reads, &mut fault)
                    },
                    Some(&mut self.symbols),
                )
            } else {
                propagate::propagate(
                    &step,
                    &mut |i| {
                        let read = self.input_data(run_ref, node, i);
                        note_read(read, i, &mut reads, &mut fault)
                    },
                    None,
                )
            }
        };
        let result = match fault {
            Some(why) => Err(why),
            None => result,
        };
        // onnx's step reads what this one reads (its map then holds each
        // value it found), and writes only from values it has too.
        let onnx_step = kind != propagate::Step::Beyond;
        if onnx_step {
            for &(i, onnx_sees) in &reads {
                if let Some(name) = node.input.get(i).filter(|_| onnx_sees) {
                    run.onnx_data.insert(Name(name));
                }
            }
        }
        let onnx_writes = onnx_step && reads.iter().all(|&(_, onnx_sees)| onnx_sees);
        match result {
            Ok(Some(d)) if onnx_writes => {
                // (onnx's one map holds the enclosing graphs' values too.)
                if !run.onnx_has_data(out) && run.onnx_data.insert(Name(out)) {
                    self.keep_data(run, out, d);
                } else {
                    // A value defined again (its first definition's values
                    // stay, as in onnx).
                    let loc = run.loc.child(node_step(index, node));
                    self.report(
                        run,
                        codes::DATA_PROPAGATION,
                        loc,
                        format!(
                            "values were already propagated for {} (it is defined more than \
                             once), and this node gives it values again",
                            q(out)
                        ),
                        Reach::Collected,
                    );
                }
            }
            // A step onnx does not take leaves the values a value defined
            // before had (computed, cached or constant; here or, for a
            // subgraph output named like an enclosing value, there), as
            // onnx does.
            Ok(Some(d))
                if run.data_of(out).is_none()
                    && !run.onnx_has_data(out)
                    && run.entry(out).is_none_or(|e| e.konst == NO_CONST) =>
            {
                self.keep_data(run, out, d)
            }
            Ok(_) => {}
            // A step onnx does not take reports nothing (onnx's verdict).
            Err(_) if kind == propagate::Step::Beyond => {}
            Err(message) => {
                let loc = run.loc.child(node_step(index, node));
                self.report(run, codes::DATA_PROPAGATION, loc, message, Reach::Collected);
            }
        }
    }

    /// Input `i`'s values as data propagation reads them (onnx's
    /// DataPropagationContext::getInputData): computed by an earlier step;
    /// else a small int64 / int32 constant of rank 0 or 1 (or, beyond
    /// onnx, a float one of whole numbers); else, for a 1-D input of static
    /// length, that many unknown values. With whether onnx's getInputData
    /// gives values too (then its map of propagated values holds the name
    /// after the read: it caches a constant's or the unknown values).
    fn input_data(&self, run: &Run<'m, '_>, node: &NodeHead<'m>, i: usize) -> DataRead {
        let Some(name) = node.input.get(i).filter(|n| !n.is_empty()) else {
            return Ok(None);
        };
        if !run.unbound.is_empty() && run.unbound.contains(&Name(name)) {
            return Ok(None);
        }
        let (t, c) = run.lookup(name);
        let ty = match t {
            InputType::Known(t) => Some(t),
            _ => None,
        };
        // onnx's constants are the initializers and Constant nodes' values.
        let c = c.filter(|c| !matches!(c, Const::Computed { .. }));
        let small = |c: &Const<'_>| {
            let dims = c.dims();
            let count = dims.first().copied().unwrap_or(1);
            dims.len() <= 1 && count as u64 <= propagate::MAX_DATA as u64
        };
        let static_length = match ty {
            Some(Type::Tensor(t)) => match t.shape.as_deref() {
                Some([Dim::Value(n)]) if (0..=propagate::MAX_DATA as i64).contains(n) => {
                    usize::try_from(*n).ok()
                }
                _ => None,
            },
            _ => None,
        };
        let onnx_sees = run.onnx_has_data(name)
            || match c {
                Some(c) if small(c) => matches!(c.elem(), 6 | 7),
                Some(_) => false,
                None => static_length.is_some(),
            };
        if let Some(d) = run.data_of(name) {
            // (Values onnx's steps did not compute: its read finds the
            // constant, or the unknown values of a static length, where this
            // type has one; a type refined by those values may not in onnx.)
            return Ok(fits(ty, d.len()).then(|| (d.clone(), onnx_sees)));
        }
        if let Some(c) = c.filter(|c| small(c)) {
            match c.elem() {
                6 | 7 => match super::constant::ints(c, self.store) {
                    Ok(v) => return Ok(Some((super::util::dims_of(&v), onnx_sees))),
                    // onnx's ParseData fails on data that does not fit the
                    // dims (its step, so the node, fails). External data
                    // it cannot read at all is read here (beyond onnx):
                    // its failure only leaves the values unknown.
                    Err(why) if !super::constant::is_external_data(c) => {
                        return Err(format!("the values of input {i} cannot be read: {why}"))
                    }
                    Err(_) => {}
                },
                // Beyond onnx: a float constant of whole numbers (the
                // `2.0` of `Cast(Shape(x)[2:], float) * 2.0`), exactly.
                1 | 10 | 11 => {
                    if let Ok(v) = super::constant::floats(c, self.store) {
                        if let Some(v) = propagate::whole_numbers(&v) {
                            return Ok(Some((super::util::dims_of(&v), false)));
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(static_length.map(|n| (std::iter::repeat_n(Dim::Unknown, n).collect(), onnx_sees)))
    }

    /// Keeps the values computed for `name` (unless they cannot be its:
    /// their count differs from its static element count). Values all
    /// known, of an int64 / int32 scalar or 1-D tensor, also become the
    /// name's constant, so that every rule reading a constant input (Tile's
    /// repeats, Slice's starts, Unsqueeze's axes, ...) reads them: onnx's
    /// own steps only serve Reshape, Expand, ConstantOfShape, Resize and
    /// AffineGrid.
    fn keep_data(&mut self, run: &mut Run<'m, '_>, name: &'m str, d: Dims) {
        let t = run.get(name);
        if !fits(t, d.len()) || d.len() > propagate::MAX_DATA || d.len() > self.data_left {
            return;
        }
        self.data_left -= d.len();
        let (elem, rank) = match t {
            Some(Type::Tensor(t)) => (t.elem, t.shape.as_ref().map(|s| s.len())),
            _ => (0, None),
        };
        let values: Option<Vec<i64>> = d.iter().map(|x| x.value()).collect();
        let has_const = run.entry(name).is_some_and(|e| e.konst != NO_CONST);
        if let (Some(values), Some(rank @ (0 | 1)), false) = (values, rank, has_const) {
            let fits_elem = match elem {
                7 => true,
                6 => values.iter().all(|&v| i32::try_from(v).is_ok()),
                _ => false,
            };
            if fits_elem {
                run.set_const(
                    name,
                    Const::Computed {
                        values,
                        elem,
                        scalar: rank == 0,
                    },
                );
            }
        }
        run.data.insert(Name(name), d);
    }

    /// Keeps a Constant node's value for later rules (onnx's ProcessConstant).
    fn constant(&mut self, run: &mut Run<'m, '_>, node: &NodeHead<'m>) {
        if node.op_type() != "Constant"
            || !matches!(node.domain(), "" | "ai.onnx")
            || node.output.len() != 1
        {
            return;
        }
        let out = Name(node.output[0]);
        for (name, a) in bind_attrs(node, run.bindings()).iter() {
            let kind = a.r#type.and_then(|t| AttributeType::try_from(t).ok());
            let value = match (name, kind) {
                ("value", Some(AttributeType::Tensor)) => {
                    a.t().map(|t| Const::Tensor(TensorRef::Decoded(t)))
                }
                ("value", _) => None,
                (_, Some(AttributeType::Ints)) => Some(Const::Ints {
                    values: a.ints.clone(),
                    scalar: false,
                }),
                (_, Some(AttributeType::Int)) => Some(Const::Ints {
                    values: vec![a.i.unwrap_or(0)],
                    scalar: true,
                }),
                (_, Some(AttributeType::Floats)) => Some(Const::Floats {
                    values: a.floats.clone(),
                    scalar: false,
                }),
                (_, Some(AttributeType::Float)) => Some(Const::Floats {
                    values: vec![a.f.unwrap_or(0.0)],
                    scalar: true,
                }),
                _ => None,
            };
            if let Some(v) = value {
                run.set_const(out.0, v);
            }
        }
    }

    /// Infers a subgraph of `node` (onnx's GraphInferencer::doInferencing).
    pub(crate) fn infer_subgraph(
        &mut self,
        g: &'m GraphProto,
        attr: &str,
        given: &[Option<Type>],
        parent: &Run<'m, '_>,
        node: &NodeHead<'m>,
        index: usize,
    ) -> InferResult<Vec<Option<Type>>> {
        let at = || At::Attribute(attr.to_string());
        let inits: NameSet<'_> = g.initializer.iter().map(|t| Name(t.name())).collect();
        // The signature rule of the graph the node is in: the model's IR
        // version in the main graph, the latest below (as onnx runs them).
        if self.ir_version >= 4 || !parent.is_main() {
            if g.input.len() != given.len() {
                return Err(defect(
                    codes::SUBGRAPH_SIGNATURE,
                    at(),
                    format!(
                        "the graph of attribute '{attr}' has {} inputs, but the node gives it {}",
                        g.input.len(),
                        given.len()
                    ),
                ));
            }
            if let Some(vi) = g.input.iter().find(|vi| inits.contains(&Name(vi.name()))) {
                return Err(defect(
                    codes::SUBGRAPH_SIGNATURE,
                    at(),
                    format!(
                        "{} is both an input and an initializer of the graph of attribute '{attr}'",
                        q(vi.name())
                    ),
                ));
            }
        } else if given.len() > g.input.len() {
            return Err(defect(
                codes::SUBGRAPH_SIGNATURE,
                at(),
                format!(
                    "the graph of attribute '{attr}' has {} inputs, but the node gives it {}",
                    g.input.len(),
                    given.len()
                ),
            ));
        } else {
            for (i, vi) in g.input.iter().enumerate() {
                let is_init = inits.contains(&Name(vi.name()));
                if i < given.len() && is_init {
                    return Err(defect(
                        codes::SUBGRAPH_SIGNATURE,
                        at(),
                        format!(
                            "initializer {} of the graph of attribute '{attr}' must come after \
                             the inputs the node gives",
                            q(vi.name())
                        ),
                    ));
                }
                if i >= given.len() && !is_init {
                    return Err(defect(
                        codes::SUBGRAPH_SIGNATURE,
                        at(),
                        format!(
                            "input {} of the graph of attribute '{attr}' is neither given by \
                             the node nor an initializer",
                            q(vi.name())
                        ),
                    ));
                }
            }
        }
        // Given types against the declared input types.
        for (i, (vi, t)) in g.input.iter().zip(given).enumerate() {
            let (Some(t), Some(declared)) = (t, vi.r#type.as_ref()) else {
                continue;
            };
            let Some(declared) = self.symbols.type_from_proto(declared) else {
                continue;
            };
            if let Err(c) = merge::check(t, &declared, &self.symbols) {
                self.collect_merged_inputs(g, given, i, parent, index, attr);
                return Err(defect(
                    c.code,
                    at(),
                    format!(
                        "input {i} {} of the graph of attribute '{attr}': {}",
                        q(vi.name()),
                        c.message
                    ),
                ));
            }
        }
        let loc = parent
            .loc
            .child(node_step(index, node))
            .child(Step::Attribute(attr.to_string()));
        if !self.spend(g.node.len(), &loc) {
            return Err(InferError::Skip);
        }
        let mut run = Run::new(
            Some(parent),
            loc.child(Step::Graph(g.name().to_string())),
            format!("{}/{index}.{attr}", parent.path),
        );
        run.steps = parent.steps.as_ref().map(|s| {
            let mut s = s.clone();
            s.push((index, attr.to_string()));
            s
        });
        run.opsets = parent.opsets.clone();
        run.hidden = parent.masked || parent.hidden;
        if self.collected.is_some() {
            run.given = given.iter().map(Option::is_some).collect();
        }
        self.declare(&mut run, GraphView::whole(g), given);
        self.run_graph(&mut run, GraphView::whole(g));
        if run.failed {
            return Err(InferError::Reported);
        }
        Ok(Self::output_types(&run, GraphView::whole(g)))
    }

    /// With `collect_types`: a subgraph whose inference stops at input
    /// `failed` (the node's type for it contradicts its declaration) keeps
    /// its inputs before that one merged with the node's types, as onnx's
    /// graph inferencer leaves them (it merges them one by one, in place).
    fn collect_merged_inputs(
        &mut self,
        g: &'m GraphProto,
        given: &[Option<Type>],
        failed: usize,
        parent: &Run<'m, '_>,
        index: usize,
        attr: &str,
    ) {
        if self.collected.is_none() {
            return;
        }
        // (A graph inside a function body is not written back.)
        let Some(mut steps) = parent.steps.clone() else {
            return;
        };
        steps.push((index, attr.to_string()));
        let mut flags = vec![false; g.input.len()];
        let mut values = Vec::new();
        for (j, (vi, t)) in g.input.iter().zip(given).enumerate().take(failed) {
            let Some(t) = t else {
                continue;
            };
            let declared = vi
                .r#type
                .as_ref()
                .and_then(|d| self.symbols.type_from_proto(d));
            let mut merged = match declared {
                Some(mut declared) => {
                    merge::merge_into(t, &mut declared);
                    declared
                }
                None => t.clone(),
            };
            merge::materialize(&mut merged, &mut self.symbols);
            if let Some(flag) = flags.get_mut(j) {
                *flag = true;
            }
            values.push((vi.name().to_string(), merged));
        }
        if let Some(collected) = &mut self.collected {
            collected.push(GraphTypes {
                path: format!("{}/{index}.{attr}", parent.path),
                steps: Some(steps),
                given: flags,
                values,
                inputs_only: true,
            });
        }
    }

    /// The types of a graph's outputs after inference, as onnx gives them:
    /// an output's own type (declared, merged with what its producer
    /// inferred). An output declared without a type gets one only from the
    /// node that produces it, and only when no typed `value_info` entry of
    /// the same name takes it instead: a graph input or initializer passed
    /// through as an output comes back untyped.
    fn output_types(run: &Run<'m, '_>, g: GraphView<'m>) -> Vec<Option<Type>> {
        let mut produced: Option<NameSet<'_>> = None;
        let mut typed_info: Option<NameSet<'_>> = None;
        g.output
            .iter()
            .map(|vi| {
                let t = run.get(vi.name())?;
                if vi.r#type.as_ref().is_some_and(|t| t.value.is_some()) {
                    return Some(t.clone());
                }
                let produced = produced.get_or_insert_with(|| {
                    g.node
                        .iter()
                        .flat_map(|n| n.output.iter().map(|o| Name(o.as_str())))
                        .collect()
                });
                if !produced.contains(&Name(vi.name())) {
                    return None;
                }
                // Its producer's type went to an enclosing graph's value.
                if run.shadowing.contains(&Name(vi.name())) {
                    return None;
                }
                if vi.r#type.is_none() {
                    let typed_info = typed_info.get_or_insert_with(|| {
                        g.value_info
                            .iter()
                            .filter(|v| v.r#type.is_some())
                            .map(|v| Name(v.name()))
                            .collect()
                    });
                    if typed_info.contains(&Name(vi.name())) {
                        return None;
                    }
                }
                Some(t.clone())
            })
            .collect()
    }

    /// Infers a call of a function body (an operator's, or a model-local
    /// function): returns its output types.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn infer_call(
        &mut self,
        f: &'m FunctionProto,
        caller: &Run<'m, '_>,
        node: &NodeHead<'m>,
        index: usize,
        inputs: &[InputType<'_>],
        consts: &[Option<&Const<'m>>],
        attrs: &Attrs<'_, 'm>,
    ) -> InferResult<Vec<Option<Type>>> {
        let key: *const FunctionProto = f;
        if self.active.contains(&key) {
            return Err(defect(
                codes::INFERENCE_FAILED,
                At::Node,
                format!(
                    "function {} is already being inferred in this call chain (recursion)",
                    q(f.name())
                ),
            ));
        }
        let loc = caller
            .loc
            .child(node_step(index, node))
            .child(Step::Function {
                domain: f.domain().to_string(),
                name: f.name().to_string(),
            });
        if !self.spend(f.node.len(), &loc) {
            return Err(InferError::Skip);
        }
        // The caller's attributes, by the function's attribute names; the
        // function's defaults for those the caller does not set.
        let mut bindings: Vec<(&'m str, &'m AttributeProto)> = Vec::new();
        // (A caller's attributes are kept: see Engine::process_node.)
        for name in &f.attribute {
            if let Some(a) = attrs.get_kept(name) {
                bindings.push((name.as_str(), a));
            }
        }
        for d in &f.attribute_proto {
            let value = attrs.get_kept(d.name()).unwrap_or(d);
            bindings.retain(|(n, _)| *n != d.name());
            bindings.push((d.name(), value));
        }
        let mut run = Run::new(None, loc, format!("{}/{index}.{}", caller.path, f.name()));
        run.steps = None;
        run.opsets = opsets_of(&f.opset_import);
        run.bindings = Some(&bindings);
        run.hidden = caller.masked || caller.hidden;
        for (i, formal) in f.input.iter().enumerate() {
            match inputs.get(i) {
                Some(InputType::Known(t)) => {
                    run.set_type(formal, (*t).clone());
                    if let Some(Some(c)) = consts.get(i) {
                        if matches!(t, Type::Tensor(_)) {
                            run.set_const(formal, (*c).clone());
                        }
                    }
                }
                Some(InputType::Untyped | InputType::Undefined) => run.set_untyped(formal),
                Some(InputType::Unset) => run.set_type_id(formal, UNSET),
                Some(InputType::Poisoned) => run.poison(formal),
                None | Some(InputType::Absent) => {
                    run.unbound.insert(Name(formal));
                }
            }
        }
        if self.data_prop {
            // onnx's BindValuesOnCall: the caller's data under the formal names.
            for (actual, formal) in node.input.iter().zip(&f.input) {
                if let Some(d) = (!actual.is_empty())
                    .then(|| caller.data_of(actual))
                    .flatten()
                {
                    run.data.insert(Name(formal), d.clone());
                }
            }
        }
        self.active.push(key);
        for (i, n) in f.node.iter().enumerate() {
            self.process_node(&mut run, i, &NodeHead::of(n), &[], Seq::Slice(&f.node));
        }
        self.active.pop();
        if run.failed {
            return Err(InferError::Reported);
        }
        if self.data_prop {
            // BindValuesOnReturn: the outputs' data, for the caller.
            let n = node.output.len().min(f.output.len());
            self.returned_data = (0..n)
                .filter_map(|i| Some((i, run.data.get(&Name(&f.output[i]))?.clone())))
                .collect();
        }
        Ok(f.output.iter().map(|o| run.get(o).cloned()).collect())
    }
}

/// An input's values as data propagation reads them: none, or the values
/// with whether onnx's read finds them too; an error where onnx's read fails.
type DataRead = Result<Option<(Dims, bool)>, String>;

/// One read of data propagation: the values found (kept in `reads` with
/// whether onnx's read finds them too), or none; the first read that fails
/// is kept in `fault`.
fn note_read(
    read: DataRead,
    i: usize,
    reads: &mut SmallVec<[(usize, bool); 4]>,
    fault: &mut Option<String>,
) -> Option<Dims> {
    match read {
        Ok(Some((d, onnx_sees))) => {
            reads.push((i, onnx_sees));
            Some(d)
        }
        Ok(None) => None,
        Err(why) => {
            fault.get_or_insert(why);
            None
        }
    }
}

/// False when a tensor type's static element count is not `len` (values
/// computed for it cannot be its).
fn fits(t: Option<&Type>, len: usize) -> bool {
    let Some(Type::Tensor(t)) = t else {
        return true;
    };
    let Some(shape) = &t.shape else {
        return true;
    };
    let mut n: u64 = 1;
    for d in shape {
        match d {
            Dim::Value(v) => match u64::try_from(*v).ok().and_then(|v| n.checked_mul(v)) {
                Some(m) => n = m,
                None => return false,
            },
            _ => return true,
        }
    }
    n == len as u64
}

/// Quotes an untrusted name for a message.
pub(crate) fn q(name: &str) -> String {
    format!("'{}'", crate::diag::clean(name))
}

/// What [`Engine::refuse_unfit`] decides for a node.
enum Fit {
    /// Not inferred: its outputs are poisoned (reported, or left to the
    /// checker).
    Refused,
    /// Inferred; with why its counts misfit when onnx checks them only
    /// after its rule (after an unknown operator).
    Infer(Option<String>),
}

/// What infers a node: its operator's schema (and the rule or function
/// body that serves it), a model-local function, or a rule for one of
/// onnxruntime's operators, which have no schema here.
#[derive(Clone, Copy)]
enum Callee<'m> {
    Schema(&'static OpSchema),
    Local(&'m FunctionProto),
    /// One of onnxruntime's operators (`contrib_ops`): its rule, and its
    /// schema when onnxruntime's table has it (types are checked against it).
    Contrib(ops::Rule, Option<&'static OpSchema>),
}

/// The schema a model-local function call runs under (no rule, no checks).
fn placeholder_schema() -> &'static OpSchema {
    static EMPTY: std::sync::OnceLock<OpSchema> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| OpSchema {
        id: usize::MAX,
        domain: String::new(),
        name: String::new(),
        since_version: 0,
        deprecated: false,
        min_input: 0,
        max_input: u32::MAX,
        min_output: 0,
        max_output: u32::MAX,
        inputs: Vec::new(),
        outputs: Vec::new(),
        attributes: Vec::new(),
        constraints: Vec::new(),
        inference: Default::default(),
        body: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opset::SchemaRegistry;

    fn tensor(elem: i32) -> Type {
        Type::Tensor(crate::ir::types::TensorType::new(elem, None))
    }

    #[test]
    fn check_keys_pack_and_keep_their_distinctions() {
        let reg = SchemaRegistry::global();
        let add = reg.get("Add", 21, "").expect("Add");
        let concat = reg.get("Concat", 13, "").expect("Concat");
        let (f, h) = (tensor(1), tensor(10));
        let key = |s: &OpSchema, ins: &[InputType<'_>], outs: &[Option<Type>]| {
            type_check_key(s, ins, outs)
        };
        fn k<'a>(ins: &[&'a Type], outs: &[&Type]) -> (Vec<InputType<'a>>, Vec<Option<Type>>) {
            let ins = ins.iter().map(|t| InputType::Known(t)).collect();
            let outs = outs.iter().map(|t| Some((*t).clone())).collect();
            (ins, outs)
        }
        let (i1, o1) = k(&[&f, &f], &[&f]);
        let (i2, o2) = k(&[&f, &h], &[&f]);
        let (i3, o3) = k(&[&f], &[&f, &f]);
        let a = key(add, &i1, &o1).expect("packed");
        assert!(matches!(a, CheckKey::Packed(_)));
        assert_ne!(Some(&a), key(add, &i2, &o2).as_ref());
        // The same codes split differently between inputs and outputs.
        assert_ne!(Some(&a), key(add, &i3, &o3).as_ref());
        // Another schema, the same types.
        assert_ne!(Some(&a), key(concat, &i1, &o1).as_ref());
        // Absent and untyped inputs share a code; a non-tensor input has no key.
        let absent = key(add, &[InputType::Known(&f), InputType::Absent], &o1);
        let untyped = key(add, &[InputType::Known(&f), InputType::Untyped], &o1);
        assert!(absent.is_some() && absent == untyped);
        let seq = Type::Sequence(Some(Box::new(f.clone())));
        assert_eq!(key(add, &[InputType::Known(&seq)], &o1), None);
        assert_eq!(key(add, &i1, &[None]), None);
        // Beyond eight slots: the general key, still exact.
        let many: Vec<InputType<'_>> = (0..9).map(|_| InputType::Known(&f)).collect();
        let long = key(concat, &many, &o1).expect("long");
        assert!(matches!(long, CheckKey::Long(..)));
        let mut passed = PassedChecks::default();
        passed.insert(long);
        passed.insert(a);
        assert!(passed.contains(&key(concat, &many, &o1).expect("long")));
        assert!(passed.contains(&key(add, &i1, &o1).expect("packed")));
        assert!(!passed.contains(&key(add, &i2, &o2).expect("packed")));
        assert_eq!(passed.len(), 2);
    }
}
