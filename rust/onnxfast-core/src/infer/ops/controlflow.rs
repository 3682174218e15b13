//! Rules of onnx's `controlflow` family: If, Loop, Scan. Each infers its
//! subgraphs with the types the node gives them and builds its outputs
//! from theirs. The type helpers at the top follow onnx's helpers on
//! `TypeProto` (element-type propagation, shape merge and union, `hasShape`)
//! and serve the sequence and optional families too.

use super::{onnx, Entry};
use crate::diag::codes;
use crate::infer::context::{defect, At, InferError, InferResult, NodeCtx, Reach};
use crate::infer::util::fatal_failure;
use crate::infer::util::{bad_attr, union_dims};
use crate::ir::types::{elem_name, Dim, Dims, TensorType, Type};

// ---- type helpers (onnx's TypeProto semantics) -----------------------------

/// onnx's `hasShape`: a tensor or sparse tensor with a shape, or a sequence
/// or optional whose element type has one.
pub(crate) fn has_shape(t: &Type) -> bool {
    match t {
        Type::Tensor(x) | Type::SparseTensor(x) => x.shape.is_some(),
        Type::Sequence(Some(e)) | Type::Optional(Some(e)) => has_shape(e),
        _ => false,
    }
}

/// The dims onnx reads as `tensor_type().shape()`: a tensor's shape, or no
/// dims at all (rank 0) when the value is no tensor or has no shape.
pub(crate) fn tensor_dims(t: &Type) -> &[Dim] {
    match t {
        Type::Tensor(TensorType {
            shape: Some(dims), ..
        }) => dims,
        _ => &[],
    }
}

/// The element type onnx reads as `tensor_type().elem_type()` (0 when the
/// value is no tensor).
pub(crate) fn tensor_elem(t: &Type) -> i32 {
    match t {
        Type::Tensor(x) => x.elem,
        _ => 0,
    }
}

fn elem_str(code: i32) -> String {
    match elem_name(code) {
        Some(n) => n.to_string(),
        None if code == 0 => "undefined".to_string(),
        None => format!("<{code}>"),
    }
}

/// The type of a fresh output that takes input `i`'s element type (onnx's
/// propagateElemTypeFromInputToOutput): a tensor's element type without
/// its shape; a sequence's, optional's or map's whole element type. `None`
/// for an opaque input (onnx sets nothing).
pub(crate) fn elem_type_from_input(ctx: &NodeCtx<'_, '_>, i: usize) -> InferResult<Option<Type>> {
    let t = ctx.need(i)?;
    top_level_known(t, i)?;
    Ok(match t {
        Type::Tensor(x) => Some(Type::tensor(x.elem, None)),
        Type::SparseTensor(x) => Some(Type::SparseTensor(TensorType::new(x.elem, None))),
        Type::Sequence(e) => Some(Type::Sequence(e.clone())),
        Type::Optional(e) => Some(Type::Optional(e.clone())),
        Type::Map(k, v) => Some(Type::Map(*k, v.clone())),
        Type::Opaque { .. } => None,
    })
}

/// What onnx's element type propagation checks of input `i`'s type `t`:
/// a tensor's element type, a sequence's or optional's element, a map's
/// key and value types are known (not what a container's element holds).
pub(crate) fn top_level_known(t: &Type, i: usize) -> InferResult {
    let unknown = match t {
        Type::Tensor(x) | Type::SparseTensor(x) if x.elem == 0 => "element type",
        Type::Sequence(None) | Type::Optional(None) => "element type",
        Type::Map(0, _) => "key type",
        Type::Map(_, None) => "value type",
        _ => return Ok(()),
    };
    Err(defect(
        codes::MISSING_INPUT_TYPE,
        At::Input(i),
        format!("the {unknown} of input {i} is unknown"),
    ))
}

/// onnx's propagateElemTypeWithValidation: `out` takes `src`'s element
/// type(s), which must agree with those `out` already has. `Err` with the
/// reason.
pub(crate) fn propagate_elem_checked(src: &Type, out: &mut Option<Type>) -> Result<(), String> {
    fn inner(
        src: &Option<Box<Type>>,
        out: &mut Option<Box<Type>>,
        what: &str,
    ) -> Result<(), String> {
        let Some(src) = src else {
            return Err(format!("the {what} element type is unknown"));
        };
        let mut slot = out.take().map(|b| *b);
        let result = propagate_elem_checked(src, &mut slot);
        *out = slot.map(Box::new);
        result
    }
    match src {
        Type::Tensor(s) | Type::SparseTensor(s) => {
            if s.elem == 0 {
                return Err("the element type is unknown".into());
            }
            match out {
                None => {
                    *out = Some(match src {
                        Type::SparseTensor(_) => Type::SparseTensor(TensorType::new(s.elem, None)),
                        _ => Type::tensor(s.elem, None),
                    })
                }
                Some(Type::Tensor(o) | Type::SparseTensor(o)) => {
                    if o.elem == 0 {
                        o.elem = s.elem;
                    } else if o.elem != s.elem {
                        return Err(format!(
                            "element type {} where {} is expected",
                            elem_str(s.elem),
                            elem_str(o.elem)
                        ));
                    }
                }
                Some(other) => {
                    return Err(format!(
                        "a {} where a {} is expected",
                        src.kind_name(),
                        other.kind_name()
                    ))
                }
            }
            Ok(())
        }
        Type::Sequence(e) => {
            if !matches!(out, Some(Type::Sequence(_))) {
                *out = Some(Type::Sequence(None));
            }
            match out {
                Some(Type::Sequence(o)) => inner(e, o, "sequence"),
                _ => Ok(()),
            }
        }
        Type::Optional(e) => {
            if !matches!(out, Some(Type::Optional(_))) {
                *out = Some(Type::Optional(None));
            }
            match out {
                Some(Type::Optional(o)) => inner(e, o, "optional"),
                _ => Ok(()),
            }
        }
        Type::Map(k, v) => {
            if *k == 0 {
                return Err("the map key type is unknown".into());
            }
            if v.is_none() {
                return Err("the map value type is unknown".into());
            }
            match out {
                Some(Type::Map(ok, ov)) => {
                    *ok = *k;
                    inner(v, ov, "map value")
                }
                _ => {
                    let mut ov = None;
                    inner(v, &mut ov, "map value")?;
                    *out = Some(Type::Map(*k, ov));
                    Ok(())
                }
            }
        }
        Type::Opaque { .. } => Err("an opaque type has no element type to propagate".into()),
    }
}

/// onnx's mergeInDimensionInfo: a static dim wins (two must agree), else
/// the target keeps what it knows, else takes the source's symbol.
pub(crate) fn merge_dim(source: Dim, target: &mut Dim) -> Result<(), String> {
    match (source, *target) {
        (Dim::Value(s), Dim::Value(t)) if s != t => Err(format!("dimensions {s} and {t} differ")),
        (Dim::Value(_), _) => {
            *target = source;
            Ok(())
        }
        (_, Dim::Value(_) | Dim::Sym(_)) => Ok(()),
        (Dim::Sym(_), Dim::Unknown) => {
            *target = source;
            Ok(())
        }
        (Dim::Unknown, Dim::Unknown) => Ok(()),
    }
}

/// onnx's mergeInShapeInfo: the target takes the source's dims when it has
/// no shape; otherwise ranks must agree and dims are merged one by one.
pub(crate) fn merge_shape(source: &[Dim], target: &mut Option<Dims>) -> Result<(), String> {
    match target {
        None => {
            *target = Some(source.iter().copied().collect());
            Ok(())
        }
        Some(t) => {
            if t.len() != source.len() {
                return Err(format!("ranks {} and {} differ", source.len(), t.len()));
            }
            for (k, (s, d)) in source.iter().zip(t.iter_mut()).enumerate() {
                merge_dim(*s, d).map_err(|e| format!("dimension {k}: {e}"))?;
            }
            Ok(())
        }
    }
}

/// onnx's UnionShapeInfo of a source shape into a target tensor type: a
/// target without shape stays so; different ranks lose the shape; dims
/// that differ become unknown.
pub(crate) fn union_shape_into(source: &[Dim], target: &mut TensorType) {
    if let Some(t) = &target.shape {
        target.shape = union_dims(source, t);
    }
}

/// Why two types have no union (onnx's UnionTypeInfo failing).
#[derive(Debug)]
pub(crate) struct NoUnion {
    pub why: String,
    /// Differing element types of which one is not an ONNX data type:
    /// onnx fails to name it in its message, which ends its whole run.
    pub unnameable: bool,
}

impl From<String> for NoUnion {
    fn from(why: String) -> Self {
        NoUnion {
            why,
            unnameable: false,
        }
    }
}

/// Differing element types `a` and `b` (`what`: "element types", "map key
/// types"), as onnx's UnionTypeInfo refuses them.
fn differ(what: &str, a: i32, b: i32) -> NoUnion {
    NoUnion {
        why: format!("{what} {} and {}", elem_str(a), elem_str(b)),
        unnameable: elem_name(a).is_none() || elem_name(b).is_none(),
    }
}

/// onnx's UnionTypeInfo: the union of two types of one kind (`None`: no
/// type). Element types must agree, containers must have element types,
/// shapes are united. `Err` with the reason.
pub(crate) fn union_type_info(
    source: Option<&Type>,
    target: &mut Option<Type>,
) -> Result<(), NoUnion> {
    fn boxed(s: &Option<Box<Type>>, t: &mut Option<Box<Type>>, what: &str) -> Result<(), NoUnion> {
        let (Some(s), Some(t)) = (s, t) else {
            return Err(format!("a {what} has no element type").into());
        };
        let mut slot = Some((**t).clone());
        union_type_info(Some(s), &mut slot)?;
        if let Some(v) = slot {
            **t = v;
        }
        Ok(())
    }
    let (s, t) = match (source, target.as_mut()) {
        (None, None) => return Ok(()),
        (Some(s), Some(t)) if std::mem::discriminant(s) == std::mem::discriminant(t) => (s, t),
        (s, t) => {
            let kind = |x: Option<&Type>| x.map_or("value without type", Type::kind_name);
            return Err(format!("a {} and a {}", kind(s), kind(t.as_deref())).into());
        }
    };
    match (s, t) {
        (Type::Tensor(s), Type::Tensor(t)) | (Type::SparseTensor(s), Type::SparseTensor(t)) => {
            if s.elem != t.elem {
                return Err(differ("element types", s.elem, t.elem));
            }
            match &s.shape {
                Some(dims) => union_shape_into(dims, t),
                None => t.shape = None,
            }
            Ok(())
        }
        (Type::Sequence(s), Type::Sequence(t)) => boxed(s, t, "sequence"),
        (Type::Optional(s), Type::Optional(t)) => boxed(s, t, "optional"),
        (Type::Map(ks, vs), Type::Map(kt, vt)) => {
            if *ks == 0 || *kt == 0 {
                return Err(String::from("a map has no key type").into());
            }
            if ks != kt {
                return Err(differ("map key types", *ks, *kt));
            }
            boxed(vs, vt, "map")
        }
        _ => Ok(()),
    }
}

/// Infers the graph of attribute `attr` with these input types and returns
/// its output types as onnx gives them (see the engine's `output_types`).
pub(crate) fn infer_subgraph(
    ctx: &mut NodeCtx<'_, '_>,
    attr: &str,
    given: &[Option<Type>],
) -> InferResult<Vec<Option<Type>>> {
    ctx.infer_graph(attr, given)
}

fn subgraph(attr: &str, message: impl Into<String>) -> InferError {
    defect(
        codes::SUBGRAPH_SIGNATURE,
        At::Attribute(attr.to_string()),
        message,
    )
}

fn opt_show(ctx: &NodeCtx<'_, '_>, t: Option<&Type>) -> String {
    t.map_or_else(|| "no type".to_string(), |t| ctx.show(t))
}

// ---- If ----------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum IfStyle {
    /// If-1: same kinds, same element types, shapes merged (must agree).
    Merge,
    /// If-11: same kinds, same element types, tensor shapes united.
    UnionShape,
    /// If-13 and later: UnionTypeInfo.
    UnionType,
}

fn if_rule(ctx: &mut NodeCtx<'_, '_>, style: IfStyle) -> InferResult {
    let then_out = infer_subgraph(ctx, "then_branch", &[])?;
    let else_out = infer_subgraph(ctx, "else_branch", &[])?;
    if then_out.len() != else_out.len() {
        return Err(subgraph(
            "else_branch",
            format!(
                "then_branch has {} outputs and else_branch {}: they must have as many",
                then_out.len(),
                else_out.len()
            ),
        ));
    }
    if then_out.len() != ctx.n_outputs() {
        return Err(subgraph(
            "then_branch",
            format!(
                "the branches have {} outputs, the node {}",
                then_out.len(),
                ctx.n_outputs()
            ),
        ));
    }
    for (i, (t, e)) in then_out.into_iter().zip(else_out).enumerate() {
        let mut out = t;
        let mismatch =
            |what: String| subgraph("else_branch", format!("output {i} of the branches: {what}"));
        match style {
            IfStyle::UnionType => {
                let before = opt_show(ctx, out.as_ref());
                union_type_info(e.as_ref(), &mut out).map_err(|no| {
                    let e = mismatch(format!(
                        "then gives {before}, else {}: {}",
                        opt_show(ctx, e.as_ref()),
                        no.why
                    ));
                    if no.unnameable {
                        e.reaching(Reach::Run)
                    } else {
                        e
                    }
                })?;
            }
            IfStyle::Merge | IfStyle::UnionShape => {
                let same_kind = match (&out, &e) {
                    (Some(a), Some(b)) => std::mem::discriminant(a) == std::mem::discriminant(b),
                    (None, None) => true,
                    _ => false,
                };
                if !same_kind {
                    return Err(mismatch(format!(
                        "then gives {}, else {}: different kinds",
                        opt_show(ctx, out.as_ref()),
                        opt_show(ctx, e.as_ref())
                    )));
                }
                if let (Some(Type::Tensor(o)), Some(Type::Tensor(x))) = (&mut out, &e) {
                    if o.elem != x.elem {
                        return Err(mismatch(format!(
                            "element types {} (then) and {} (else) differ",
                            elem_str(o.elem),
                            elem_str(x.elem)
                        )));
                    }
                    if style == IfStyle::Merge {
                        if let Some(dims) = &x.shape {
                            let then_dims = o.shape.clone();
                            merge_shape(dims, &mut o.shape).map_err(|why| {
                                mismatch(format!(
                                    "shapes {} (then) and {} (else) do not agree: {why}",
                                    then_dims
                                        .as_deref()
                                        .map_or("?".into(), |d| ctx.show_dims(d)),
                                    ctx.show_dims(dims)
                                ))
                            })?;
                        }
                    } else {
                        // onnx unites with the else shape read as a shape
                        // even when it has none (rank 0).
                        union_shape_into(x.shape.as_deref().unwrap_or(&[]), o);
                    }
                }
            }
        }
        if let Some(t) = out {
            ctx.set(i, t);
        }
    }
    Ok(())
}

fn if_1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if_rule(ctx, IfStyle::Merge)
}

fn if_11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if_rule(ctx, IfStyle::UnionShape)
}

fn if_13(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if_rule(ctx, IfStyle::UnionType)
}

// ---- Loop --------------------------------------------------------------------

/// What each version of Loop accepts as loop-carried values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LoopStyle {
    /// Loop-1 and 11: tensors only.
    Tensors,
    /// Loop-13: tensors and sequences of tensors.
    Sequences,
    /// Loop-16 and later: tensors, sequences and optionals.
    Optionals,
}

/// A loop-carried value's type as the body sees it: without the shapes,
/// which may change from one iteration to the next.
fn without_shape(t: &Type, style: LoopStyle) -> Type {
    match (style, t) {
        (_, Type::Tensor(x)) => Type::tensor(x.elem, None),
        // onnx clears the shape through `mutable_tensor_type()`, which
        // turns any other kind into an empty tensor type.
        (LoopStyle::Tensors, _) => Type::tensor(0, None),
        (LoopStyle::Sequences, Type::Sequence(Some(e))) => match &**e {
            Type::Tensor(x) => Type::Sequence(Some(Box::new(Type::tensor(x.elem, None)))),
            _ => t.clone(),
        },
        (LoopStyle::Optionals, Type::Sequence(Some(e))) => {
            Type::Sequence(Some(Box::new(without_shape(e, style))))
        }
        (LoopStyle::Optionals, Type::Optional(Some(e))) => {
            Type::Optional(Some(Box::new(without_shape(e, style))))
        }
        _ => t.clone(),
    }
}

fn loop_rule(ctx: &mut NodeCtx<'_, '_>, style: LoopStyle) -> InferResult {
    let n_in = ctx.n_inputs();
    let n_state = n_in.saturating_sub(2);
    let mut given: Vec<Option<Type>> = Vec::with_capacity(n_in);
    given.push(Some(Type::tensor(7, None)));
    given.push(ctx.ty(1).cloned());
    for i in 2..n_in {
        if ctx.is_unset(i) {
            // A type declared empty: onnx's propagation sets nothing, and
            // the body's input keeps its declaration (the older Loops make
            // it an empty tensor type first, as `without_shape` says).
            given.push((style == LoopStyle::Tensors).then(|| Type::tensor(0, None)));
            continue;
        }
        if let Some(t) = elem_type_from_input(ctx, i)? {
            if i - 2 >= ctx.n_outputs() {
                return Err(fatal_failure(format!(
                    "loop-carried input {i} has no matching output: the node has {} inputs and \
                     only {} outputs",
                    n_in,
                    ctx.n_outputs()
                )));
            }
            ctx.set(i - 2, t);
        }
        let t = ctx.need(i)?;
        given.push(Some(without_shape(t, style)));
    }
    let outs = infer_subgraph(ctx, "body", &given)?;
    if outs.is_empty() {
        return Ok(());
    }
    let n_out = ctx.n_outputs();
    if outs.len() != n_out + 1 {
        return Err(subgraph(
            "body",
            format!(
                "the body has {} outputs; the node's {n_out} outputs need {} (the condition first)",
                outs.len(),
                n_out + 1
            ),
        ));
    }
    for (i, sub) in outs.iter().skip(1).enumerate() {
        let is_state = i < n_state;
        let kind_ok = match (style, sub) {
            (_, Some(Type::Tensor(_))) => true,
            (LoopStyle::Sequences | LoopStyle::Optionals, Some(Type::Sequence(_))) => is_state,
            (LoopStyle::Optionals, Some(Type::Optional(_))) => is_state,
            _ => false,
        };
        if !kind_ok {
            let allowed = match (style, is_state) {
                (LoopStyle::Tensors, _) | (_, false) => "a tensor",
                (LoopStyle::Sequences, true) => "a tensor or a sequence",
                (LoopStyle::Optionals, true) => "a tensor, a sequence or an optional",
            };
            return Err(subgraph(
                "body",
                format!(
                    "body output {} ({} {i} of the node) must be {allowed}, it is {}",
                    i + 1,
                    if is_state {
                        "loop-carried value"
                    } else {
                        "scan output"
                    },
                    opt_show(ctx, sub.as_ref())
                ),
            ));
        }
        let Some(sub) = sub else {
            continue;
        };
        let mut out = ctx.outputs.get(i).cloned().flatten();
        let before = opt_show(ctx, out.as_ref());
        propagate_elem_checked(sub, &mut out).map_err(|why| {
            subgraph(
                "body",
                format!(
                    "body output {} is {}, but output {i} of the node is {before}: {why}",
                    i + 1,
                    ctx.show(sub)
                ),
            )
        })?;
        if !is_state {
            if let (Type::Tensor(s), Some(Type::Tensor(o))) = (sub, &mut out) {
                if let Some(dims) = &s.shape {
                    let mut stacked = Dims::with_capacity(dims.len() + 1);
                    stacked.push(Dim::Unknown);
                    stacked.extend(dims.iter().copied());
                    let shown = o.shape.as_deref().map(|d| ctx.show_dims(d));
                    merge_shape(&stacked, &mut o.shape).map_err(|why| {
                        subgraph(
                            "body",
                            format!(
                                "scan output {i}: {} and {} do not agree: {why}",
                                ctx.show_dims(&stacked),
                                shown.unwrap_or_default()
                            ),
                        )
                    })?;
                }
            }
        }
        if let Some(t) = out {
            ctx.set(i, t);
        }
    }
    Ok(())
}

fn loop_1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    loop_rule(ctx, LoopStyle::Tensors)
}

fn loop_13(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    loop_rule(ctx, LoopStyle::Sequences)
}

fn loop_16(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    loop_rule(ctx, LoopStyle::Optionals)
}

// ---- Scan --------------------------------------------------------------------

/// `num_scan_inputs` as a count (required, not negative).
fn num_scan_inputs(ctx: &NodeCtx<'_, '_>) -> InferResult<usize> {
    let Some(v) = ctx.attr("num_scan_inputs").and_then(|a| a.i) else {
        return Err(bad_attr(
            "num_scan_inputs",
            "the required attribute num_scan_inputs has no integer value",
        ));
    };
    usize::try_from(v).map_err(|_| {
        bad_attr(
            "num_scan_inputs",
            format!("num_scan_inputs is {v}; it must not be negative"),
        )
    })
}

/// An axis of a scan input or output (onnx reads it as a 32-bit int), in
/// `[-rank, rank)`.
fn scan_axis(value: i64, rank: usize, name: &str) -> InferResult<usize> {
    let a = i64::from(value as i32);
    let r = i64::try_from(rank).unwrap_or(i64::MAX);
    if a < -r || a >= r {
        return Err(bad_attr(
            name,
            format!(
                "{name} has axis {a}, out of range for rank {rank} (expected [{}, {}))",
                -r, r
            ),
        ));
    }
    Ok(usize::try_from(if a < 0 { a + r } else { a }).unwrap_or(0))
}

/// The tensor type of Scan input `i` (onnx needs every input typed as a
/// tensor).
fn scan_input<'a>(ctx: &NodeCtx<'a, '_>, i: usize) -> InferResult<&'a TensorType> {
    match ctx.need_or_empty(i)? {
        Some(Type::Tensor(t)) => Ok(t),
        other => Err(defect(
            codes::INPUT_KIND,
            At::Input(i),
            format!(
                "Scan input {i} must be a tensor, it is {}",
                NodeCtx::kind_text(other)
            ),
        )),
    }
}

/// The axes attribute `name` (one per scan input or output), when given.
fn scan_axes<'a>(
    ctx: &NodeCtx<'a, '_>,
    name: &str,
    count: usize,
    what: &str,
) -> InferResult<Option<&'a [i64]>> {
    match ctx.attr(name) {
        Some(a) if a.ints.len() != count => Err(bad_attr(
            name,
            format!("{name} has {} values for {count} {what}", a.ints.len()),
        )),
        Some(a) => Ok(Some(&a.ints)),
        None => Ok(None),
    }
}

fn body_output_not_tensor(ctx: &NodeCtx<'_, '_>, i: usize, sub: Option<&Type>) -> InferError {
    subgraph(
        "body",
        format!(
            "body output {i} must be a tensor, it is {}",
            opt_show(ctx, sub)
        ),
    )
}

/// Scan-9 and later: state variables, then scan inputs along their axes.
fn scan_9(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let n_in = ctx.n_inputs();
    let n_out = ctx.n_outputs();
    let m = num_scan_inputs(ctx)?;
    if m > n_in {
        return Err(bad_attr(
            "num_scan_inputs",
            format!("num_scan_inputs is {m}, more than the node's {n_in} inputs"),
        ));
    }
    let n_state = n_in - m;
    if n_state > n_out {
        return Err(bad_attr(
            "num_scan_inputs",
            format!(
                "{n_state} state variables ({n_in} inputs, {m} scanned) need as many outputs, \
                 the node has {n_out}"
            ),
        ));
    }
    let k = n_out - n_state;
    let in_axes = scan_axes(ctx, "scan_input_axes", m, "scan inputs")?;
    let out_axes = scan_axes(ctx, "scan_output_axes", k, "scan outputs")?;
    let mut seq_len = Dim::Unknown;
    let mut given = Vec::with_capacity(n_in);
    for i in 0..n_in {
        let t = scan_input(ctx, i)?;
        if i < n_state {
            if t.elem == 0 {
                return Err(defect(
                    codes::MISSING_INPUT_TYPE,
                    At::Input(i),
                    format!("the element type of input {i} is unknown"),
                ));
            }
            ctx.set(i, Type::Tensor(t.clone()));
            given.push(Some(Type::Tensor(t.clone())));
            continue;
        }
        let Some(dims) = &t.shape else {
            given.push(Some(Type::Tensor(t.clone())));
            continue;
        };
        let value = in_axes
            .and_then(|a| a.get(i - n_state))
            .copied()
            .unwrap_or(0);
        let axis = scan_axis(value, dims.len(), "scan_input_axes")?;
        let d = dims.get(axis).copied().unwrap_or(Dim::Unknown);
        merge_dim(d, &mut seq_len).map_err(|why| {
            defect(
                codes::INCOMPATIBLE_SHAPES,
                At::Input(i),
                format!(
                    "the scan inputs have different sequence lengths: {why} (input {i} is {})",
                    ctx.show_dims(dims)
                ),
            )
        })?;
        let rest: Dims = dims
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != axis)
            .map(|(_, d)| *d)
            .collect();
        given.push(Some(Type::tensor(t.elem, Some(rest))));
    }
    let outs = infer_subgraph(ctx, "body", &given)?;
    if outs.is_empty() {
        return Ok(());
    }
    if outs.len() != n_out {
        return Err(subgraph(
            "body",
            format!("the body has {} outputs, the node {n_out}", outs.len()),
        ));
    }
    for (i, sub) in outs.iter().enumerate() {
        let Some(Type::Tensor(s)) = sub else {
            return Err(body_output_not_tensor(ctx, i, sub.as_ref()));
        };
        if i < n_state {
            let Some(dims) = &s.shape else {
                continue;
            };
            let mut out = match ctx.outputs.get(i).cloned().flatten() {
                Some(Type::Tensor(o)) => o,
                _ => TensorType::default(),
            };
            let shown = out.shape.as_deref().map(|d| ctx.show_dims(d));
            merge_shape(dims, &mut out.shape).map_err(|why| {
                subgraph(
                    "body",
                    format!(
                        "state variable {i}: the body gives {}, the input is {}: {why}",
                        ctx.show_dims(dims),
                        shown.unwrap_or_default()
                    ),
                )
            })?;
            ctx.set(i, Type::Tensor(out));
            continue;
        }
        let shape = match &s.shape {
            Some(dims) => {
                let value = out_axes
                    .and_then(|a| a.get(i - n_state))
                    .copied()
                    .unwrap_or(0);
                let axis = scan_axis(value, dims.len() + 1, "scan_output_axes")?;
                let mut out = Dims::with_capacity(dims.len() + 1);
                out.extend(dims.iter().take(axis).copied());
                out.push(seq_len);
                out.extend(dims.iter().skip(axis).copied());
                Some(out)
            }
            None => None,
        };
        ctx.set_tensor(i, s.elem, shape);
    }
    Ok(())
}

/// Scan-8: an optional `sequence_lens` first, a batch axis 0 on every
/// input and output, the sequence axis 1 on scan inputs and outputs.
fn scan_8(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let n_in = ctx.n_inputs();
    let n_out = ctx.n_outputs();
    let m = num_scan_inputs(ctx)?;
    if m >= n_in {
        return Err(bad_attr(
            "num_scan_inputs",
            format!(
                "num_scan_inputs is {m}: with sequence_lens that is more than the node's {n_in} inputs"
            ),
        ));
    }
    let n_state = n_in - 1 - m;
    let mut batch = Dim::Unknown;
    let mut seq_len = Dim::Unknown;
    let mut given = Vec::with_capacity(n_in);
    for i in 1..n_in {
        let t = scan_input(ctx, i)?;
        if i - 1 < n_state {
            if t.elem == 0 {
                return Err(defect(
                    codes::MISSING_INPUT_TYPE,
                    At::Input(i),
                    format!("the element type of input {i} is unknown"),
                ));
            }
            if i > n_out {
                return Err(fatal_failure(format!(
                    "state variable input {i} has no matching output: the node has {n_out} outputs"
                )));
            }
            ctx.set(i - 1, Type::Tensor(t.clone()));
            given.push(Some(Type::tensor(
                t.elem,
                t.shape
                    .as_ref()
                    .map(|d| d.iter().skip(1).copied().collect()),
            )));
            continue;
        }
        let Some(dims) = &t.shape else {
            given.push(Some(Type::Tensor(t.clone())));
            continue;
        };
        if dims.len() > 2 {
            for (d, target, what) in [
                (dims[0], &mut batch, "batch sizes"),
                (dims[1], &mut seq_len, "sequence lengths"),
            ] {
                merge_dim(d, target).map_err(|why| {
                    defect(
                        codes::INCOMPATIBLE_SHAPES,
                        At::Input(i),
                        format!(
                            "the scan inputs have different {what}: {why} (input {i} is {})",
                            ctx.show_dims(dims)
                        ),
                    )
                })?;
            }
        }
        given.push(Some(Type::tensor(
            t.elem,
            Some(dims.iter().skip(2).copied().collect()),
        )));
    }
    let outs = infer_subgraph(ctx, "body", &given)?;
    if outs.is_empty() {
        return Ok(());
    }
    if outs.len() != n_out {
        return Err(subgraph(
            "body",
            format!("the body has {} outputs, the node {n_out}", outs.len()),
        ));
    }
    for (i, sub) in outs.iter().enumerate() {
        let Some(Type::Tensor(s)) = sub else {
            return Err(body_output_not_tensor(ctx, i, sub.as_ref()));
        };
        let is_state = i < n_state;
        let mut out = match ctx.outputs.get(i).cloned().flatten() {
            Some(Type::Tensor(o)) => o,
            _ => TensorType::default(),
        };
        if !is_state {
            out.elem = s.elem;
        }
        if let Some(dims) = &s.shape {
            let mut full = Dims::with_capacity(dims.len() + 2);
            full.push(batch);
            if !is_state {
                full.push(seq_len);
            }
            full.extend(dims.iter().copied());
            let shown = out.shape.as_deref().map(|d| ctx.show_dims(d));
            merge_shape(&full, &mut out.shape).map_err(|why| {
                subgraph(
                    "body",
                    format!(
                        "output {i}: the body gives {} (with batch and sequence axes), the node \
                         has {}: {why}",
                        ctx.show_dims(&full),
                        shown.unwrap_or_default()
                    ),
                )
            })?;
        }
        ctx.set(i, Type::Tensor(out));
    }
    Ok(())
}

pub const OPS: &[Entry] = &[
    onnx("If", 1, 1, if_1),
    onnx("If", 11, 11, if_11),
    onnx("If", 13, 25, if_13),
    onnx("Loop", 1, 11, loop_1),
    onnx("Loop", 13, 13, loop_13),
    onnx("Loop", 16, 25, loop_16),
    onnx("Scan", 8, 8, scan_8),
    onnx("Scan", 9, 25, scan_9),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn t(elem: i32, dims: Option<&[Dim]>) -> Type {
        Type::tensor(elem, dims.map(|d| d.iter().copied().collect()))
    }

    #[test]
    fn merges_and_unions_follow_onnx() {
        let v = Dim::Value;
        let n = crate::ir::types::Symbols::default().intern("N");
        // A static dim wins; two must agree; the target keeps its symbol.
        let mut d = n;
        assert!(merge_dim(v(3), &mut d).is_ok());
        assert_eq!(d, v(3));
        assert!(merge_dim(v(4), &mut d).is_err());
        let mut d = Dim::Unknown;
        assert!(merge_dim(n, &mut d).is_ok());
        assert_eq!(d, n);
        let mut shape = Some([v(2)].into_iter().collect::<Dims>());
        assert!(merge_shape(&[v(2), v(3)], &mut shape).is_err());
        // Unions: differing dims become unknown, ranks must agree, a
        // missing shape wins, kinds and element types must agree.
        let mut out = Some(t(1, Some(&[v(2), n])));
        assert!(union_type_info(Some(&t(1, Some(&[v(3), n]))), &mut out).is_ok());
        assert_eq!(out, Some(t(1, Some(&[Dim::Unknown, n]))));
        assert!(union_type_info(Some(&t(1, None)), &mut out).is_ok());
        assert_eq!(out, Some(t(1, None)));
        assert!(union_type_info(Some(&t(7, None)), &mut out).is_err());
        assert!(union_type_info(None, &mut out).is_err());
        assert!(union_type_info(None, &mut None).is_ok());
        let s = |x| Type::Sequence(Some(Box::new(x)));
        let mut out = Some(s(t(1, Some(&[v(2)]))));
        assert!(union_type_info(Some(&s(t(1, Some(&[v(5)])))), &mut out).is_ok());
        assert_eq!(out, Some(s(t(1, Some(&[Dim::Unknown])))));
        assert!(union_type_info(Some(&Type::Sequence(None)), &mut out).is_err());
    }

    #[test]
    fn element_types_propagate_with_validation() {
        let mut out = None;
        assert!(propagate_elem_checked(&t(1, Some(&[Dim::Value(2)])), &mut out).is_ok());
        assert_eq!(out, Some(t(1, None)));
        assert!(propagate_elem_checked(&t(7, None), &mut out).is_err());
        assert!(propagate_elem_checked(&t(0, None), &mut None).is_err());
        // A sequence keeps the shape of the element it already has.
        let s = |x| Type::Sequence(Some(Box::new(x)));
        let mut out = Some(s(t(1, Some(&[Dim::Value(2)]))));
        assert!(propagate_elem_checked(&s(t(1, None)), &mut out).is_ok());
        assert_eq!(out, Some(s(t(1, Some(&[Dim::Value(2)])))));
        assert!(propagate_elem_checked(&Type::Sequence(None), &mut out).is_err());
    }
}
