//! What an operator's inference rule sees: the node's input types, its
//! attributes (the schema's defaults filled in), the values of constant
//! inputs, and slots for its output types. A rule is a short function
//! `fn(&mut NodeCtx) -> Result<(), InferError>`.

use crate::diag::codes::{self, Code};
use crate::ir::types::{Dim, Dims, Symbols, TensorType, Type};
use crate::opset::OpSchema;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, GraphProto, NodeHead};

use super::constant::{self, Const};
use super::engine::{Engine, Run};
use super::ops::controlflow::{elem_type_from_input, has_shape, top_level_known};

/// Where in the node a defect is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum At {
    Node,
    Input(usize),
    Output(usize),
    Attribute(String),
}

/// A defect found while inferring a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defect {
    pub code: Code,
    pub message: String,
    pub at: At,
    /// How far onnx's failure reaches: what an unknown operator hides.
    pub reach: Reach,
}

/// How far one of onnx's failures reaches, so what an unknown operator
/// earlier in a graph hides (ordered: each reaches further).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// An inference error onnx collects per node: hidden after an unknown
    /// operator in the graph.
    Collected,
    /// onnx fails at once (a runtime error, a type-constraint failure):
    /// not hidden in its graph; inside a subgraph or function body of a
    /// node a graph hides, it fails that node, which is hidden.
    Node,
    /// A type onnx cannot name (its std::invalid_argument, which none of
    /// its inference's catches takes): it ends onnx's whole run, wherever
    /// it is.
    Run,
}

/// Why a rule stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InferError {
    /// A defect of the model (reported). Boxed: rules return results on
    /// every node, and an 8-byte result moves without the partial copies
    /// of a 72-byte one (which stalled on store forwarding).
    Defect(Box<Defect>),
    /// Nothing more can be inferred (an input's type is missing because of
    /// an earlier finding): the outputs stay unknown, nothing is reported.
    Skip,
    /// Already reported (e.g. inside a subgraph); the node failed.
    Reported,
    /// onnx's rule returns here without an error: an input it reads is
    /// declared with a type that sets nothing (a `TypeProto` with no
    /// value), which its helpers pass over where they fail on a missing
    /// type. The outputs inferred so far are kept, as after `Ok`.
    Pass,
}

pub type InferResult<T = ()> = Result<T, InferError>;

/// Builds a defect.
pub fn defect(code: Code, at: At, message: impl Into<String>) -> InferError {
    InferError::Defect(Box::new(Defect {
        code,
        message: message.into(),
        at,
        reach: Reach::Collected,
    }))
}

/// Builds a defect onnx raises outside its per-node error collection (a
/// runtime error, a type-constraint failure): an earlier unknown operator
/// does not hide it.
pub fn fatal(code: Code, at: At, message: impl Into<String>) -> InferError {
    InferError::Defect(Box::new(Defect {
        code,
        message: message.into(),
        at,
        reach: Reach::Node,
    }))
}

impl InferError {
    /// The same, a defect reaching at least as far as `reach`.
    #[must_use]
    pub fn reaching(self, reach: Reach) -> Self {
        match self {
            InferError::Defect(mut d) => {
                d.reach = d.reach.max(reach);
                InferError::Defect(d)
            }
            other => other,
        }
    }
}

/// The attributes a rule sees: the node's own (kept by the model, or read
/// from its bytes for this call), or inside a function body, the node's
/// with references (`ref_attr_name`) bound to the caller's.
pub(crate) enum Attrs<'a, 'm> {
    Direct(&'m [AttributeProto]),
    Bound(Vec<(&'m str, &'m AttributeProto)>),
    /// Read from the node's bytes, for this call only: never a tensor or
    /// a graph (a node holding one is kept, see `ir::view::NodeHeads`),
    /// and never a function's caller (the engine reads its node kept).
    Read(&'a [AttributeProto]),
}

impl<'a, 'm: 'a> Attrs<'a, 'm> {
    pub(crate) fn get(&self, name: &str) -> Option<&'a AttributeProto> {
        match self {
            Attrs::Direct(list) => list.iter().find(|a| a.name() == name),
            Attrs::Read(list) => list.iter().find(|a| a.name() == name),
            Attrs::Bound(list) => list.iter().find(|(n, _)| *n == name).map(|(_, a)| *a),
        }
    }

    /// [`Attrs::get`] for what outlives the call (a graph, a function's
    /// bindings): `None` for attributes read for the call only.
    pub(crate) fn get_kept(&self, name: &str) -> Option<&'m AttributeProto> {
        match self {
            Attrs::Direct(list) => list.iter().find(|a| a.name() == name),
            Attrs::Read(_) => None,
            Attrs::Bound(list) => list.iter().find(|(n, _)| *n == name).map(|(_, a)| *a),
        }
    }

    /// Whether the attributes were read for the call only (and any).
    pub(crate) fn is_read(&self) -> bool {
        matches!(self, Attrs::Read(list) if !list.is_empty())
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'a str, &'a AttributeProto)> + '_ {
        let (direct, bound): (&'a [AttributeProto], _) = match self {
            Attrs::Direct(list) => (*list, &[][..]),
            Attrs::Read(list) => (*list, &[][..]),
            Attrs::Bound(list) => (&[][..], list.as_slice()),
        };
        direct
            .iter()
            .map(|a| (a.name(), a))
            .chain(bound.iter().map(|&(n, a)| (n, a)))
    }
}

/// How an input's type is known.
#[derive(Debug, Clone, Copy)]
pub(crate) enum InputType<'a> {
    /// The input is omitted (empty name, or an unbound function parameter).
    Absent,
    Known(&'a Type),
    /// Present, defined without a type (onnx fails when a rule needs it).
    Untyped,
    /// Present, but no value of that name is defined before the node (in
    /// this graph or an enclosing one): a rule reads it as onnx's reads
    /// its null type, like [`InputType::Untyped`].
    Undefined,
    /// Unknown because of an earlier finding: skip quietly.
    Poisoned,
    /// Present, declared with a type that sets nothing (an empty
    /// `TypeProto`): onnx's rules read a type of no kind, not a missing
    /// one. Most pass over it ([`InferError::Pass`]); those that need a
    /// tensor fail on it.
    Unset,
}

/// The context of one node's inference.
pub struct NodeCtx<'a, 'm> {
    pub node: &'a NodeHead<'m>,
    pub schema: &'static OpSchema,
    /// The opset version of the node's domain.
    pub opset: i64,
    pub(crate) attrs: &'a Attrs<'a, 'm>,
    pub(crate) inputs: smallvec::SmallVec<[InputType<'a>; 4]>,
    pub(crate) consts: smallvec::SmallVec<[Option<&'a Const<'m>>; 4]>,
    /// Output types as inferred so far (`None`: not set).
    pub outputs: Vec<Option<Type>>,
    pub(crate) node_index: usize,
    pub(crate) engine: &'a mut Engine<'m>,
    pub(crate) run: &'a Run<'m, 'a>,
    /// Where onnx's helpers would first have failed on a sequence, map or
    /// optional value (is an output, index, the value's kind), kept only
    /// where onnx hides
    /// the node's inference errors (after an unknown operator): there its
    /// rule stops at that point, before the type check that would refuse
    /// the value (see [`NodeCtx::note_container_fault`]).
    pub(crate) container_fault: std::cell::Cell<Option<(bool, usize, &'static str)>>,
    /// The rule read values onnx does not have (computed by data
    /// propagation beyond onnx's steps): a failure it finds with them may be
    /// one onnx's rule does not reach.
    pub(crate) read_beyond: std::cell::Cell<bool>,
    /// Outputs onnx's element propagation left of no kind (from an input
    /// declared with an empty type), one bit each (the first 64), and the
    /// first shape onnx's propagateShape then refuses to give one of them
    /// (output, input): a tensor's shape into a type of no kind.
    pub(crate) no_kind: std::cell::Cell<u64>,
    pub(crate) kind_fault: std::cell::Cell<Option<(usize, usize)>>,
}

impl<'a, 'm> NodeCtx<'a, 'm> {
    // ---- inputs ------------------------------------------------------------

    /// Number of inputs the node lists (including empty ones).
    pub fn n_inputs(&self) -> usize {
        self.inputs.len()
    }

    pub fn n_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// True when input `i` is given (listed and not empty).
    pub fn has_input(&self, i: usize) -> bool {
        !matches!(self.inputs.get(i), None | Some(InputType::Absent))
    }

    /// True when output `i` is wanted (listed and not empty).
    pub fn has_output(&self, i: usize) -> bool {
        self.node.output.get(i).is_some_and(|o| !o.is_empty())
    }

    /// onnx's `getInputType(i) != nullptr`: input `i` has a type, perhaps
    /// one declared empty.
    pub fn has_type(&self, i: usize) -> bool {
        self.ty(i).is_some() || self.is_unset(i)
    }

    /// True when input `i` is declared with an empty type
    /// ([`InputType::Unset`]).
    pub fn is_unset(&self, i: usize) -> bool {
        matches!(self.inputs.get(i), Some(InputType::Unset))
    }

    /// The name of input `i` ("" when absent).
    pub fn input_name(&self, i: usize) -> &str {
        self.node.input.get(i).copied().unwrap_or("")
    }

    /// The type of input `i`, when known.
    pub fn ty(&self, i: usize) -> Option<&'a Type> {
        match self.inputs.get(i) {
            Some(InputType::Known(t)) => Some(t),
            _ => None,
        }
    }

    /// The type of input `i`, which the rule needs: a defect when it is
    /// absent or has no type, a quiet stop when an earlier finding is why.
    pub fn need(&self, i: usize) -> InferResult<&'a Type> {
        match self.inputs.get(i) {
            Some(InputType::Known(t)) => Ok(t),
            Some(InputType::Poisoned) => Err(InferError::Skip),
            Some(InputType::Unset) => Err(InferError::Pass),
            Some(InputType::Untyped) => Err(defect(
                codes::MISSING_INPUT_TYPE,
                At::Input(i),
                format!("input {i} has no type, which this operator's inference needs"),
            )),
            Some(InputType::Undefined) => Err(defect(
                codes::MISSING_INPUT_TYPE,
                At::Input(i),
                format!(
                    "input {i} is not defined before this node (are the nodes in topological \
                     order?), so it has no type, which this operator's inference needs"
                ),
            )),
            None | Some(InputType::Absent) => Err(defect(
                codes::MISSING_INPUT_TYPE,
                At::Input(i),
                format!("input {i} is needed to infer the outputs, but it is not given"),
            )),
        }
    }

    /// How a message names what [`NodeCtx::need_or_empty`] gave: "a
    /// tensor_type", ..., or "declared with an empty type".
    pub fn kind_text(t: Option<&Type>) -> String {
        t.map_or_else(
            || "declared with an empty type".to_string(),
            |t| format!("a {}", t.kind_name()),
        )
    }

    /// Input `i`'s type as onnx's rules read `getInputType(i)` where they
    /// read its kind or its `tensor_type()` without testing it further: as
    /// [`NodeCtx::need`], but a type declared empty is `None` (a type of
    /// no kind, whose tensor element type reads as 0).
    pub fn need_or_empty(&self, i: usize) -> InferResult<Option<&'a Type>> {
        if self.is_unset(i) {
            return Ok(None);
        }
        self.need(i).map(Some)
    }

    fn mark_no_kind(&self, i: usize) {
        if i < 64 {
            self.no_kind.set(self.no_kind.get() | 1 << i);
        }
    }

    /// onnx's propagateShape of input `j` into output `i` where its element
    /// propagation left that output of no kind (and nothing set it since):
    /// a tensor into a type of no kind fails ("Mismatch between inferred
    /// and declared type"), as onnx's does. `guarded`: onnx's rule calls it
    /// only when input `j` has a shape.
    fn check_shape_target(&self, j: usize, i: usize, guarded: bool) {
        let marked = i < 64 && self.no_kind.get() & (1 << i) != 0;
        if !marked || self.outputs.get(i).is_some_and(Option::is_some) {
            return;
        }
        let from_kind = match self.ty(j) {
            Some(t) if guarded => has_shape(t),
            Some(_) => true,
            None => false,
        };
        if from_kind && self.kind_fault.get().is_none() {
            self.kind_fault.set(Some((i, j)));
        }
    }

    /// The failure [`NodeCtx::check_shape_target`] kept.
    pub(crate) fn take_kind_fault(&self) -> Option<InferError> {
        let (i, j) = self.kind_fault.take()?;
        Some(defect(
            codes::INPUT_KIND,
            At::Output(i),
            format!(
                "output {i} has no type (the input its element type comes from is declared with \
                 an empty type), so input {j}'s shape cannot be given to it"
            ),
        ))
    }

    /// onnx's propagateShapeFromInputToOutput(`j`, `i`) where a rule calls
    /// it without a `hasInputShape` guard, on an input declared with an
    /// empty type: its propagateShape fails (a type of no kind has no shape
    /// to copy; into an output already given a kind, the kinds differ).
    /// Any other input passes here: the rule's propagate_shape or
    /// propagate_type copies its shape.
    pub fn shape_copy_unguarded(&self, j: usize, i: usize) -> InferResult {
        if !self.is_unset(j) {
            self.check_shape_target(j, i, false);
            return Ok(());
        }
        let message = match self.outputs.get(i).and_then(Option::as_ref) {
            Some(t) => format!(
                "input {j}'s declared type is empty: it has no shape to give output {i} (a {})",
                t.kind_name()
            ),
            None => {
                format!("input {j}'s declared type is empty: it has no shape to give output {i}")
            }
        };
        Err(defect(codes::INPUT_KIND, At::Input(j), message))
    }

    /// Input `i` as a tensor type (which the rule needs).
    pub fn tensor(&self, i: usize) -> InferResult<&'a TensorType> {
        match self.need(i)? {
            Type::Tensor(t) => Ok(t),
            other => Err(defect(
                codes::INPUT_KIND,
                At::Input(i),
                format!("input {i} must be a tensor, it is a {}", other.kind_name()),
            )),
        }
    }

    /// The element type of input `i` (which the rule needs, known).
    pub fn elem(&self, i: usize) -> InferResult<i32> {
        if self.is_unset(i) {
            // onnx's propagateElemTypeFromTensorInputToOutput: a type of
            // no kind is not a tensor.
            return Err(defect(
                codes::INPUT_KIND,
                At::Input(i),
                format!("input {i} must be a tensor or sparse tensor, its declared type is empty"),
            ));
        }
        let t = match self.need(i)? {
            Type::Tensor(t) | Type::SparseTensor(t) => t,
            other => {
                return Err(defect(
                    codes::INPUT_KIND,
                    At::Input(i),
                    format!(
                        "input {i} must be a tensor or sparse tensor, it is a {}",
                        other.kind_name()
                    ),
                ))
            }
        };
        if t.elem == 0 {
            return Err(defect(
                codes::MISSING_INPUT_TYPE,
                At::Input(i),
                format!("the element type of input {i} is unknown"),
            ));
        }
        Ok(t.elem)
    }

    /// The dims of input `i`, when it is a tensor of known rank, read as
    /// onnx's rules mostly read them (`hasInputShape`, then
    /// `tensor_type().shape()`): a sequence or optional of a shaped tensor
    /// has a shape for the former and no dims for the latter, so it reads
    /// as a scalar, which the rule may refuse (hidden after an unknown
    /// operator, as in onnx). See [`NodeCtx::input_shape`] for rules that
    /// read it by `getInputShape`.
    pub fn shape(&self, i: usize) -> Option<&'a [Dim]> {
        match self.ty(i)? {
            Type::Tensor(t) | Type::SparseTensor(t) => t.shape.as_deref(),
            other if has_shape(other) && self.run.errors_hidden() => Some(&[]),
            _ => None,
        }
    }

    /// [`NodeCtx::shape`] for a rule that reads it as onnx's
    /// `tensor_type().has_shape()` and `shape()`, without `hasInputShape`:
    /// a sequence, map or optional has none.
    pub fn tensor_shape(&self, i: usize) -> Option<&'a [Dim]> {
        match self.ty(i)? {
            Type::Tensor(t) | Type::SparseTensor(t) => t.shape.as_deref(),
            _ => None,
        }
    }

    /// [`NodeCtx::shape`] for a rule that reads it as onnx's
    /// `hasInputShape` then `getInputShape` do: on a sequence or optional
    /// of a shaped tensor the latter fails (`note_container_fault`).
    pub fn input_shape(&self, i: usize) -> Option<&'a [Dim]> {
        match self.ty(i)? {
            other if is_container(other) && has_shape(other) => {
                self.note_container_fault(false, i, other.kind_name());
                None
            }
            _ => self.tensor_shape(i),
        }
    }

    /// onnx's `hasNInputShapes(N)` then `getInputShape` of each input in
    /// order: the first `N` inputs' dims when every one has a shape (see
    /// [`NodeCtx::input_shape`]).
    pub fn input_shapes<const N: usize>(&self) -> Option<[&'a [Dim]; N]> {
        if !(0..N).all(|i| self.ty(i).is_some_and(has_shape)) {
            return None;
        }
        let mut out: [&'a [Dim]; N] = [&[]; N];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = self.input_shape(i)?;
        }
        Some(out)
    }

    /// Notes where onnx's helpers fail on a sequence, map or optional value
    /// (input `k`, or output `k` when `output`), where onnx hides the
    /// node's inference errors (after an unknown operator); the first
    /// point is kept. A rule of tensors reads such a value where onnx's
    /// does: `getInputShape` on one with a shape ([`NodeCtx::input_shape`]),
    /// `propagateShape` from one into an output of another kind
    /// ([`NodeCtx::propagate_shape`]), a tensor's shape or element type
    /// set on an output that `propagateElemTypeFromInputToOutput` made a
    /// container ([`NodeCtx::propagate_elem`]). Whether onnx's rule fails
    /// there or lets the value through to its type check (which refuses
    /// it, and which no unknown operator hides) decides onnx's verdict.
    pub(crate) fn note_container_fault(&self, output: bool, k: usize, kind: &'static str) {
        if self.run.errors_hidden() && self.container_fault.get().is_none() {
            self.container_fault.set(Some((output, k, kind)));
        }
    }

    /// The point [`NodeCtx::note_container_fault`] kept, as the hidden
    /// inference error onnx raises there.
    pub(crate) fn take_container_fault(&self) -> Option<InferError> {
        let (output, k, kind) = self.container_fault.take()?;
        let (at, what) = match output {
            true => (At::Output(k), format!("output {k}")),
            false => (At::Input(k), format!("input {k}")),
        };
        Some(defect(
            codes::INPUT_KIND,
            at,
            format!("{what} is a {kind}, which this operator's inference reads as a tensor"),
        ))
    }

    /// The rank of input `i`, when known.
    pub fn rank(&self, i: usize) -> Option<usize> {
        self.shape(i).map(<[Dim]>::len)
    }

    /// The value of a constant input (an initializer or a Constant node's
    /// output), read from that tensor alone.
    pub(crate) fn constant(&self, i: usize) -> Option<&'a Const<'m>> {
        let c = self.consts.get(i).copied().flatten();
        if matches!(c, Some(Const::Computed { .. })) {
            // Values data propagation computed: onnx's getInputData has
            // only initializers and Constant nodes.
            self.read_beyond.set(true);
        }
        c
    }

    /// A constant input as integers: `Ok(None)` when the input is not
    /// constant, a defect when its data cannot be read as integers.
    pub fn const_ints(&mut self, i: usize) -> InferResult<Option<Vec<i64>>> {
        let Some(c) = self.constant(i) else {
            return Ok(None);
        };
        constant::ints(c, self.engine.external())
            .map(Some)
            .map_err(|e| defect(codes::BAD_CONSTANT_INPUT, At::Input(i), e))
    }

    /// A constant input as floats (any numeric type, converted).
    pub fn const_floats(&mut self, i: usize) -> InferResult<Option<Vec<f64>>> {
        let Some(c) = self.constant(i) else {
            return Ok(None);
        };
        constant::floats(c, self.engine.external())
            .map(Some)
            .map_err(|e| defect(codes::BAD_CONSTANT_INPUT, At::Input(i), e))
    }

    /// Whether onnx's rule has input `i`'s values: an initializer's or a
    /// Constant node's (getInputData), or values its own data propagation
    /// computed (getSymbolicInput). Values only onnxfast follows are not.
    pub fn onnx_has_values(&self, i: usize) -> bool {
        if let Some(c) = self.consts.get(i).copied().flatten() {
            if !matches!(c, Const::Computed { .. }) {
                return true;
            }
        }
        self.engine.data_prop
            && self
                .node
                .input
                .get(i)
                .filter(|n| !n.is_empty())
                .is_some_and(|n| self.run.onnx_has_data(n))
    }

    /// The values data propagation computed for input `i` (onnx's
    /// `getSymbolicInput`); `None` without `data_prop`.
    pub fn data(&self, i: usize) -> Option<&'a crate::ir::types::Dims> {
        if !self.engine.data_prop {
            return None;
        }
        let name = self.node.input.get(i).filter(|n| !n.is_empty())?;
        let d = self.run.data_of(name)?;
        if !self.run.onnx_has_data(name) {
            self.read_beyond.set(true);
        }
        Some(d)
    }

    /// The one value data propagation computed for input `i` (a scalar or
    /// one-element size: `seq`), `None` without it.
    pub fn data_one(&self, i: usize) -> Option<Dim> {
        match self.data(i)?.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// The dims of a constant input (its tensor's dims), without reading data.
    pub fn const_dims(&self, i: usize) -> Option<Vec<i64>> {
        self.constant(i).map(Const::dims)
    }

    // ---- attributes --------------------------------------------------------

    /// The type of input `i` as onnx's `getInputType` gives it: `None` when
    /// the input is absent or untyped; a quiet stop when an earlier finding
    /// is why it is unknown.
    pub fn typed(&self, i: usize) -> InferResult<Option<&'a Type>> {
        match self.inputs.get(i) {
            Some(InputType::Known(t)) => Ok(Some(t)),
            Some(InputType::Poisoned) => Err(InferError::Skip),
            _ => Ok(None),
        }
    }

    /// The element type of a constant input, without reading its data.
    pub fn const_elem(&self, i: usize) -> Option<i32> {
        self.constant(i).map(Const::elem)
    }

    /// An INT attribute as onnx's inference reads it (`getAttribute(ctx,
    /// name, default)`): the node's own value (0 when it holds none), else
    /// `default`; the schema's default does not apply.
    pub fn own_int(&self, name: &str, default: i64) -> i64 {
        self.attr(name).map_or(default, |a| a.i.unwrap_or(0))
    }

    /// A FLOAT attribute as onnx's inference reads it.
    pub fn own_float(&self, name: &str, default: f32) -> f32 {
        self.attr(name).map_or(default, |a| a.f.unwrap_or(0.0))
    }

    /// The node's own INTS attribute (onnx's getRepeatedAttribute): `None`
    /// when absent.
    pub fn own_ints(&self, name: &str) -> Option<&'a [i64]> {
        self.attr(name).map(|a| a.ints.as_slice())
    }

    /// The node's own STRING attribute as bytes (empty when it holds none),
    /// `None` when absent.
    pub fn own_str(&self, name: &str) -> Option<&'a [u8]> {
        self.attr(name).map(|a| a.s.as_deref().unwrap_or(&[]))
    }

    /// The node's attribute `name` (no default).
    pub fn attr(&self, name: &str) -> Option<&'a AttributeProto> {
        self.attrs.get(name)
    }

    /// The attribute `name` of the node, else the schema's default.
    pub fn attr_or_default(&self, name: &str) -> Option<&'a AttributeProto> {
        self.attrs
            .get(name)
            .or_else(|| self.schema.attribute(name)?.default.as_ref())
    }

    /// INT attribute (or its default).
    pub fn int(&self, name: &str) -> Option<i64> {
        self.attr_or_default(name).and_then(|a| a.i)
    }

    /// INT attribute, else `default`.
    pub fn int_or(&self, name: &str, default: i64) -> i64 {
        self.int(name).unwrap_or(default)
    }

    /// FLOAT attribute (or its default).
    pub fn float(&self, name: &str) -> Option<f32> {
        self.attr_or_default(name).and_then(|a| a.f)
    }

    /// INTS attribute (or its default). A present attribute of the right
    /// type with no values is an empty list.
    pub fn ints(&self, name: &str) -> Option<&'a [i64]> {
        let a = self.attr_or_default(name)?;
        if a.r#type == Some(AttributeType::Ints as i32) || !a.ints.is_empty() {
            Some(&a.ints)
        } else {
            None
        }
    }

    /// FLOATS attribute (or its default).
    pub fn floats(&self, name: &str) -> Option<&'a [f32]> {
        let a = self.attr_or_default(name)?;
        if a.r#type == Some(AttributeType::Floats as i32) || !a.floats.is_empty() {
            Some(&a.floats)
        } else {
            None
        }
    }

    /// STRING attribute (or its default), as text (lossy for non-UTF-8).
    pub fn string(&self, name: &str) -> Option<String> {
        self.attr_or_default(name)
            .and_then(|a| a.s.as_ref())
            .map(|s| String::from_utf8_lossy(s).into_owned())
    }

    /// STRINGS attribute (or its default).
    pub fn strings(&self, name: &str) -> Option<Vec<String>> {
        let a = self.attr_or_default(name)?;
        if a.r#type == Some(AttributeType::Strings as i32) || !a.strings().is_empty() {
            Some(
                a.strings()
                    .iter()
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .collect(),
            )
        } else {
            None
        }
    }

    // ---- outputs -----------------------------------------------------------

    /// Sets output `i`'s type (ignored for outputs the node does not list).
    pub fn set(&mut self, i: usize, t: Type) {
        if let Some(slot) = self.outputs.get_mut(i) {
            *slot = Some(t);
        }
    }

    /// Sets output `i` to a tensor type.
    pub fn set_tensor(&mut self, i: usize, elem: i32, shape: Option<Dims>) {
        self.set(i, Type::tensor(elem, shape));
    }

    /// [`NodeCtx::set_shape`] for a rule that writes it as onnx's
    /// `mutable_tensor_type()->mutable_shape()`, not by getOutputShape: an
    /// output a container input made a container silently becomes a tensor.
    pub fn set_tensor_shape(&mut self, i: usize, dims: Dims) {
        if let Some(slot) = self.outputs.get_mut(i) {
            match slot {
                Some(Type::Tensor(t)) => t.shape = Some(dims),
                _ => *slot = Some(Type::tensor(0, Some(dims))),
            }
        }
    }

    /// Sets output `i`'s element type (keeping a shape already set).
    pub fn set_elem(&mut self, i: usize, elem: i32) {
        if let Some(Some(t)) = self.outputs.get(i) {
            if is_container(t) {
                self.note_container_fault(true, i, t.kind_name());
            }
        }
        if let Some(slot) = self.outputs.get_mut(i) {
            match slot {
                Some(Type::Tensor(t)) => t.elem = elem,
                _ => *slot = Some(Type::tensor(elem, None)),
            }
        }
    }

    /// Sets output `i`'s shape (keeping an element type already set).
    pub fn set_shape(&mut self, i: usize, dims: Dims) {
        if let Some(Some(t)) = self.outputs.get(i) {
            if is_container(t) {
                self.note_container_fault(true, i, t.kind_name());
            }
        }
        self.set_tensor_shape(i, dims);
    }

    /// The element type set for output `i` so far (0 when none).
    pub fn out_elem(&self, i: usize) -> i32 {
        match self.outputs.get(i) {
            Some(Some(Type::Tensor(t))) => t.elem,
            _ => 0,
        }
    }

    /// Output `i` gets input `j`'s element type (input needed). Where onnx
    /// hides the node's inference errors, a sequence, map or optional input
    /// is copied as onnx's propagateElemTypeFromInputToOutput copies it
    /// (its type check then refuses it, unless the rule fails on it first:
    /// `note_container_fault`); elsewhere it is a defect here.
    pub fn propagate_elem(&mut self, j: usize, i: usize) -> InferResult {
        if self.is_unset(j) {
            // onnx's helper sets nothing for a type of no kind.
            self.mark_no_kind(i);
            return Ok(());
        }
        if self.run.errors_hidden() && self.ty(j).is_some_and(is_container) {
            let t = elem_type_from_input(self, j)?;
            if let Some(slot) = self.outputs.get_mut(i) {
                *slot = t;
            }
            return Ok(());
        }
        let elem = self.elem(j)?;
        self.set_elem(i, elem);
        Ok(())
    }

    /// Output `i` gets input `j`'s whole type (shapes included): onnx's
    /// propagateShapeAndTypeFromFirstInput for any kind of value. Its
    /// element type must be known at the top, as onnx's helper checks it
    /// (a sequence's element is copied as it is: onnx's type check
    /// refuses an unknown element type inside).
    pub fn propagate_type(&mut self, j: usize, i: usize) -> InferResult {
        if self.is_unset(j) {
            // Its propagateElemTypeFromInputToOutput sets nothing, and a
            // type of no kind has no shape.
            self.mark_no_kind(i);
            return Ok(());
        }
        let t = self.need(j)?;
        top_level_known(t, j)?;
        set_copy(&mut self.outputs, i, t);
        Ok(())
    }

    /// Output `i` gets input `j`'s shape, when known. (onnx's
    /// propagateShape from a sequence or optional with a shape into an
    /// output of another kind fails: `note_container_fault`.)
    pub fn propagate_shape(&mut self, j: usize, i: usize) {
        self.check_shape_target(j, i, true);
        if let Some(t) = self.ty(j).filter(|t| is_container(t)) {
            // Into the same kind (made by propagate_elem), onnx copies the
            // element's shape, which that copy already holds.
            let same = matches!(
                (t, self.outputs.get(i)),
                (Type::Sequence(_), Some(Some(Type::Sequence(_))))
                    | (Type::Optional(_), Some(Some(Type::Optional(_))))
            );
            if has_shape(t) && !same {
                self.note_container_fault(false, j, t.kind_name());
            }
            return;
        }
        if let Some(s) = self.shape(j) {
            let dims: Dims = s.iter().copied().collect();
            self.set_shape(i, dims);
        }
    }

    /// Output `i` gets input `j`'s shape as onnx's `if (hasInputShape(j))
    /// updateOutputShape(i, getInputShape(j))` gives it: unlike
    /// [`NodeCtx::propagate_shape`], a sequence or optional input with a
    /// shape fails (getInputShape), even into an output of the same kind.
    pub fn update_shape_from_input(&mut self, j: usize, i: usize) {
        // (updateOutputShape makes an output of no kind a tensor: no
        // check_shape_target here.)
        if let Some(s) = self.input_shape(j) {
            let dims: Dims = s.iter().copied().collect();
            self.set_shape(i, dims);
        }
    }

    /// The engine's view of a `TypeProto` (an attribute's `tp`), `None` when
    /// it sets no type.
    pub fn type_from_proto(&mut self, t: &crate::proto::TypeProto) -> Option<Type> {
        self.engine.symbols.type_from_proto(t)
    }

    /// `f` over the symbol table, with `symbolic` only: `None` without
    /// it (and when `f` gives none: an unknown operand, or past the
    /// expression bounds), so the rule does what it does without
    /// `symbolic`.
    fn symbolic(&mut self, f: impl FnOnce(&mut Symbols) -> Option<Dim>) -> Option<Dim> {
        if !self.engine.symbolic {
            return None;
        }
        f(&mut self.engine.symbols)
    }

    /// `a + b` as an expression (see [`NodeCtx::symbolic`]).
    pub fn sym_add(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        self.symbolic(|s| s.dim_add(a, b))
    }

    /// `a - b` as an expression.
    pub fn sym_sub(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        self.symbolic(|s| s.dim_sub(a, b))
    }

    /// With `symbolic`: whether `d` is at least 0 for sizes large enough
    /// (see `Symbols::dim_sign`).
    pub fn sym_sign(&self, d: Dim) -> Option<bool> {
        if !self.engine.symbolic {
            return None;
        }
        self.engine.symbols.dim_sign(d)
    }

    /// Whether dims are computed as expressions (`symbolic`).
    pub fn is_symbolic(&self) -> bool {
        self.engine.symbolic
    }

    /// Whether the model is checked as onnxruntime runs it (`contrib_ops`):
    /// a rule may then refuse what onnxruntime's kernel refuses where the
    /// types tell, beyond onnx's rule.
    pub fn runtime_checks(&self) -> bool {
        self.engine.contrib_ops
    }

    /// `a * b` as an expression.
    pub fn sym_mul(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        self.symbolic(|s| s.dim_mul(a, b))
    }

    /// `a / b` when `b` divides `a` exactly as polynomials.
    pub fn sym_div_exact(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        self.symbolic(|s| s.dim_div_exact(a, b))
    }

    /// `floor(a / b)` of two sizes as an expression (see
    /// `Symbols::dim_floor_div_by`).
    pub fn sym_floor_div_by(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        self.symbolic(|s| s.dim_floor_div_by(a, b))
    }

    /// `min(a, b)` as an expression (see `Symbols::dim_min`).
    pub fn sym_min(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        self.symbolic(|s| s.dim_min(a, b))
    }

    /// `floor(a / d)`, `d > 0`, as an expression.
    pub fn sym_floor_div(&mut self, a: Dim, d: i64) -> Option<Dim> {
        self.symbolic(|s| s.dim_floor_div(a, d))
    }

    /// `ceil(a / d)`, `d > 0`, as an expression.
    pub fn sym_ceil_div(&mut self, a: Dim, d: i64) -> Option<Dim> {
        self.symbolic(|s| s.dim_ceil_div(a, d))
    }

    /// A symbol different from every other (an unknown dim with identity).
    pub fn fresh(&mut self) -> Dim {
        self.engine.symbols.fresh()
    }

    /// Formats a type for a message.
    pub fn show(&self, t: &Type) -> String {
        self.engine.symbols.show(t)
    }

    /// Formats dims for a message.
    pub fn show_dims(&self, dims: &[Dim]) -> String {
        self.engine.symbols.show_dims(dims)
    }

    // ---- subgraphs ---------------------------------------------------------

    /// Infers the graph of attribute `name` with these types for its inputs
    /// (onnx's GraphInferencer): returns the types of its outputs. Findings
    /// inside the graph are reported there; when there are any, the node
    /// fails ([`InferError::Reported`]).
    pub fn infer_graph(
        &mut self,
        name: &str,
        input_types: &[Option<Type>],
    ) -> InferResult<Vec<Option<Type>>> {
        let Some(g) = self.graph_of(name) else {
            return Err(defect(
                codes::INFERENCE_FAILED,
                At::Attribute(name.to_string()),
                format!("attribute '{name}' does not hold a graph"),
            ));
        };
        self.engine
            .infer_subgraph(g, name, input_types, self.run, self.node, self.node_index)
    }

    /// Infers the graph of attribute `name`, when the node has one, with
    /// its own declared input types (for operators that feed their graphs
    /// inputs they make themselves: onnxruntime's generation loops).
    pub fn infer_graph_as_declared(&mut self, name: &str) -> InferResult {
        let Some(g) = self.graph_of(name) else {
            return Ok(());
        };
        let given = vec![None; g.input.len()];
        self.infer_graph(name, &given).map(|_| ())
    }

    fn graph_of(&self, name: &str) -> Option<&'m GraphProto> {
        self.attrs.get_kept(name).and_then(|a| a.g())
    }

    /// Infers the node through a function body (an operator's, or a
    /// model-local function) and takes its output types.
    pub(crate) fn call_function(&mut self, f: &'m crate::proto::FunctionProto) -> InferResult {
        let outs = self.engine.infer_call(
            f,
            self.run,
            self.node,
            self.node_index,
            &self.inputs,
            &self.consts,
            self.attrs,
        )?;
        let n_out = self.node.output.len();
        for (i, t) in outs.into_iter().enumerate() {
            if let Some(t) = t {
                // onnx hands a typed function output to the node's output
                // of the same index, and fails when the node has none.
                if i >= n_out {
                    return Err(defect(
                        codes::INFERENCE_FAILED,
                        At::Node,
                        format!(
                            "function {} gives a type to its output {i}, the node has {n_out} output{}",
                            super::engine::q(f.name()),
                            if n_out == 1 { "" } else { "s" }
                        ),
                    ));
                }
                self.set(i, t);
            }
        }
        Ok(())
    }

    /// The schema's type-constraint check (onnx's CheckInputOutputType).
    pub(crate) fn type_check(&mut self, s: &OpSchema) -> InferResult {
        let inputs: smallvec::SmallVec<[Option<&Type>; 4]> =
            (0..self.inputs.len()).map(|i| self.ty(i)).collect();
        let symbols = &self.engine.symbols;
        let node = self.node;
        super::typecheck::check(
            s,
            &inputs,
            &mut self.outputs,
            &|t| symbols.show(t),
            &|output, i| {
                let name = if output {
                    node.output.get(i)
                } else {
                    node.input.get(i)
                };
                super::engine::q(name.copied().unwrap_or(""))
            },
        )
    }
}

/// Sets output `i` of `outputs` to a copy of `t`. A tensor type is built in
/// the slot (its dims copied there) rather than cloned on the stack and
/// moved in: the move reads the fresh clone back with wide loads its
/// narrower stores cannot forward to, a stall on every elementwise node.
fn set_copy(outputs: &mut [Option<Type>], i: usize, t: &Type) {
    let Some(slot) = outputs.get_mut(i) else {
        return;
    };
    let Type::Tensor(src) = t else {
        *slot = Some(t.clone());
        return;
    };
    let dst = slot.insert(Type::Tensor(TensorType {
        elem: src.elem,
        shape: None,
    }));
    if let (Type::Tensor(dst), Some(dims)) = (dst, &src.shape) {
        dst.shape
            .get_or_insert_with(Dims::new)
            .extend_from_slice(dims);
    }
}

/// A sequence, map or optional type (what a rule of tensors cannot read).
fn is_container(t: &Type) -> bool {
    matches!(t, Type::Sequence(_) | Type::Optional(_) | Type::Map(..))
}
