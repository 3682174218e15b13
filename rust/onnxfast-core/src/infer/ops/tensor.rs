//! Rules of onnx's `tensor` family: casts, shape manipulation (Reshape,
//! Squeeze, Transpose, Concat, Split, Slice, Pad, Tile, ...), indexing
//! (Gather*, Scatter*, OneHot, Compress, NonZero, Unique), resampling
//! (Resize, Upsample, GridSample, AffineGrid) and a few element-wise tests.
//!
//! Where onnx reads an attribute with a default of its own
//! (`getAttribute(ctx, name, default)`), the rules read the node's
//! attribute only (`NodeCtx::own_int`); where onnx narrows an attribute to a C++
//! `int`, so do they ([`narrow`]).

use super::nn::{divided, times};
use super::{onnx, Entry};
use crate::diag::codes;
use crate::infer::constant::{Const, MAX_CONST_ELEMS};
use crate::infer::context::{fatal, At, InferError, InferResult, NodeCtx};
use crate::infer::util::{self, bad_attr, bad_const, bad_rank, bad_shapes, failed};
use crate::ir::types::{elem_name, Dim, Dims, Type, MAX_RANK};

// ---- shared helpers ----------------------------------------------------------

/// A 64-bit value narrowed to a C++ `int` as onnx's `static_cast<int>`
/// does (wrapping), widened back.
pub(crate) fn narrow(v: i64) -> i64 {
    i64::from(v as i32)
}

/// A readable name of an element type code.
fn elem_str(code: i32) -> String {
    match elem_name(code) {
        Some(n) => n.to_string(),
        None => format!("<{code}>"),
    }
}

/// `n` unknown dims (a shape of known rank only).
fn unknown_dims(n: usize) -> Dims {
    std::iter::repeat_n(Dim::Unknown, n).collect()
}

/// Sets output `i`'s shape, unless its rank is beyond what the engine
/// represents (then the shape stays unknown).
fn set_dims(ctx: &mut NodeCtx<'_, '_>, i: usize, dims: Dims) {
    if dims.len() <= MAX_RANK {
        ctx.set_shape(i, dims);
    }
}

/// [`set_dims`] for a rule that writes the shape in place, as onnx's
/// `mutable_tensor_type()->mutable_shape()` (Squeeze, Unsqueeze, Reshape,
/// Unique): an output `propagate_elem` made a container fails nothing there.
fn set_dims_in_place(ctx: &mut NodeCtx<'_, '_>, i: usize, dims: Dims) {
    if dims.len() <= MAX_RANK {
        ctx.set_tensor_shape(i, dims);
    }
}

/// A defect onnx does not report as an inference error because it crashes
/// (an assertion in its C++): nothing before it hides it.
fn crash(message: impl Into<String>) -> InferError {
    fatal(codes::INFERENCE_FAILED, At::Node, message)
}

/// Constant input `i` (an initializer or a Constant node's output), unless
/// it holds more elements than inference reads: such a value counts as not
/// constant (unknown), so that a rule infers less rather than fails.
fn constant<'a, 'm>(ctx: &NodeCtx<'a, 'm>, i: usize) -> Option<&'a Const<'m>> {
    let c = ctx.constant(i)?;
    let count = c
        .dims()
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?));
    count.is_some_and(|n| n <= MAX_CONST_ELEMS).then_some(c)
}

/// A constant input as onnx's `ParseData<int64_t>` reads it: its element
/// type must be int64. `Ok(None)` when the input is not constant.
pub(crate) fn const_i64(ctx: &mut NodeCtx<'_, '_>, i: usize) -> InferResult<Option<Vec<i64>>> {
    let Some(c) = constant(ctx, i) else {
        return Ok(None);
    };
    if c.elem() != 7 {
        return Err(bad_const(
            i,
            format!(
                "input {i} must hold int64 values to be read, it holds {}",
                elem_str(c.elem())
            ),
        ));
    }
    ctx.const_ints(i)
}

/// A constant input of int32 or int64 indices (Slice's starts, ends, axes
/// and steps; CenterCropPad's shape). `Ok(None)` when not constant.
fn const_indices(ctx: &mut NodeCtx<'_, '_>, i: usize) -> InferResult<Option<Vec<i64>>> {
    let Some(c) = constant(ctx, i) else {
        return Ok(None);
    };
    if !matches!(c.elem(), 6 | 7) {
        return Err(bad_const(
            i,
            format!(
                "input {i} must hold int32 or int64 values, it holds {}",
                elem_str(c.elem())
            ),
        ));
    }
    ctx.const_ints(i)
}

/// A constant input as onnx's `ParseData<float>` reads it: its element type
/// must be float. `Ok(None)` when not constant.
fn const_f32(ctx: &mut NodeCtx<'_, '_>, i: usize, what: &str) -> InferResult<Option<Vec<f64>>> {
    let Some(c) = constant(ctx, i) else {
        return Ok(None);
    };
    if c.elem() != 1 {
        return Err(bad_const(
            i,
            format!(
                "{what} must hold float values, it holds {}",
                elem_str(c.elem())
            ),
        ));
    }
    ctx.const_floats(i)
}

/// True unless constant input `i` is a tensor without a `data_type` field.
fn const_has_data_type(ctx: &NodeCtx<'_, '_>, i: usize) -> bool {
    constant(ctx, i).is_none_or(Const::has_data_type)
}

/// A shape given as input `i` (onnx's `getShapeInput`).
pub(crate) fn shape_input(ctx: &mut NodeCtx<'_, '_>, i: usize) -> InferResult<Option<Dims>> {
    super::generator::shape_input(ctx, i, false)
}

/// Axes in `[-rank, rank)` made non-negative, each at most once (onnx's
/// checkAxesRange, adjustNegativeAxes, checkDuplicateAxes), as a defect
/// about `what`.
fn check_axes(values: &[i64], rank: usize, what: &str) -> InferResult<Vec<usize>> {
    util::axes(values, rank).map_err(|e| failed(format!("{what}: {e}")))
}

fn checked_add(a: i64, b: i64, what: &str) -> InferResult<i64> {
    a.checked_add(b)
        .ok_or_else(|| failed(format!("{what}: {a} + {b} overflows")))
}

/// An axis attribute in `[-rank, rank)` made non-negative.
fn attr_axis(value: i64, rank: usize, name: &str) -> InferResult<usize> {
    util::attr_axis(value, rank, name)
}

/// Element type of input 0 and its shape when known: the Scatter family,
/// Identity-like operators that only need a tensor.
fn elem_and_shape(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    ctx.propagate_shape(0, 0);
    Ok(())
}

// ---- casts and element-wise tests ----------------------------------------------

/// Output `out`'s element type from attribute `name` (onnx's
/// propagateElemTypeFromAttributeToOutput, which needs the attribute).
/// 0 (UNDEFINED, or a value whose low 32 bits are 0: onnx casts the int64
/// to its enum) is a valid enum value to onnx: the output gets element
/// type 0, which its type check (E704), a declared type or an If's other
/// branch then fail to name, ending its whole run; without those (no
/// type check) onnx accepts it.
fn elem_from_attr(ctx: &mut NodeCtx<'_, '_>, name: &str, out: usize) -> InferResult {
    let Some(a) = ctx.attr(name) else {
        return Err(bad_attr(name, format!("attribute '{name}' is needed")));
    };
    let Some(v) = a.i else {
        return Err(bad_attr(
            name,
            format!("attribute '{name}' must hold an integer element type"),
        ));
    };
    let code = v as i32;
    if code != 0 && elem_name(code).is_none() {
        return Err(bad_attr(
            name,
            format!("attribute '{name}' is {v}, which is not a tensor element type"),
        ));
    }
    ctx.set_elem(out, code);
    Ok(())
}

fn cast(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    elem_from_attr(ctx, "to", 0)?;
    ctx.propagate_shape(0, 0);
    Ok(())
}

fn cast_like(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(1, 0)?;
    ctx.propagate_shape(0, 0);
    Ok(())
}

/// Bits of an element type (0 when onnx gives it none).
fn bit_width(code: i32) -> u32 {
    match code {
        1 | 6 | 12 => 32,
        11 | 7 | 13 | 14 => 64,
        15 => 128,
        10 | 16 | 5 | 4 => 16,
        3 | 2 | 9 | 17 | 18 | 19 | 20 | 24 => 8,
        21..=23 => 4,
        25 | 26 => 2,
        _ => 0,
    }
}

fn bit_cast(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if let (Some(Type::Tensor(t)), Some(to)) = (ctx.ty(0), ctx.attr("to")) {
        let target = to.i.unwrap_or(0) as i32;
        let (a, b) = (bit_width(t.elem), bit_width(target));
        if a != 0 && b != 0 && a != b {
            return Err(bad_attr(
                "to",
                format!(
                    "BitCast from {} ({a} bits) to {} ({b} bits): the widths differ",
                    elem_str(t.elem),
                    elem_str(target)
                ),
            ));
        }
    }
    elem_from_attr(ctx, "to", 0)?;
    ctx.propagate_shape(0, 0);
    Ok(())
}

fn identity(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)
}

/// IsNaN, IsInf: booleans of the input's shape.
fn bool_like_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_elem(0, 9);
    ctx.propagate_shape(0, 0);
    Ok(())
}

fn non_zero(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    // onnx reads the rank by getInputShape.
    let rank = ctx.input_shape(0).map_or(Dim::Unknown, |s| {
        Dim::Value(i64::try_from(s.len()).unwrap_or(i64::MAX))
    });
    ctx.set_tensor(0, 7, Some([rank, Dim::Unknown].into_iter().collect()));
    Ok(())
}

fn size(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_tensor(0, 7, Some(Dims::new()));
    Ok(())
}

/// Shape 1 and 13: the input's rank.
fn shape_v1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let len = ctx.rank(0).map_or(Dim::Unknown, |r| {
        Dim::Value(i64::try_from(r).unwrap_or(i64::MAX))
    });
    ctx.set_tensor(0, 7, Some([len].into_iter().collect()));
    Ok(())
}

/// Shape 15 on: the length of `[start, end)` clamped to the rank.
fn shape_v15(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let len = match ctx.rank(0) {
        None => Dim::Unknown,
        Some(r) => {
            let rank = i64::try_from(r).unwrap_or(i64::MAX);
            let clamp = |v: i64| {
                let v = if v < 0 { v.saturating_add(rank) } else { v };
                v.clamp(0, rank)
            };
            let start = clamp(ctx.own_int("start", 0));
            let end = clamp(ctx.own_int("end", rank));
            Dim::Value((end - start).max(0))
        }
    };
    ctx.set_tensor(0, 7, Some([len].into_iter().collect()));
    Ok(())
}

fn where_rule(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(1, 0)?;
    util::broadcast_inputs(ctx, 0..3)
}

pub(super) fn trilu(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if let Some(s) = ctx.shape(0) {
        if s.len() < 2 {
            return Err(bad_rank(
                0,
                format!(
                    "Trilu needs an input of rank 2 or more, it has rank {}",
                    s.len()
                ),
            ));
        }
        ctx.propagate_shape(0, 0);
    }
    Ok(())
}

fn reverse_sequence(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(x), Some(lens)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    if x.len() < 2 {
        return Err(bad_rank(
            0,
            format!("'input' must have rank 2 or more, it has rank {}", x.len()),
        ));
    }
    if lens.len() != 1 {
        return Err(bad_rank(
            1,
            format!(
                "'sequence_lens' must have rank 1, it has rank {}",
                lens.len()
            ),
        ));
    }
    ctx.propagate_shape(0, 0);
    Ok(())
}

// ---- Concat, Split -------------------------------------------------------------

/// Concat 4 (`v4`: a negative axis gives no shape) and 11 on.
fn concat_shape(ctx: &mut NodeCtx<'_, '_>, v4: bool) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let n = ctx.n_inputs();
    let shapes: Option<Vec<&[Dim]>> = (0..n).map(|i| ctx.shape(i)).collect();
    let Some(shapes) = shapes else {
        return Ok(());
    };
    let Some(first) = shapes.first() else {
        return Ok(());
    };
    let rank = first.len();
    let Some(a) = ctx.attr("axis") else {
        return Err(bad_attr("axis", "attribute 'axis' is needed"));
    };
    let value = narrow(a.i.unwrap_or(0));
    let axis = if v4 {
        if i64::try_from(rank).unwrap_or(i64::MAX) <= value {
            return Err(bad_attr(
                "axis",
                format!("axis {value} is out of range for inputs of rank {rank}"),
            ));
        }
        match usize::try_from(value) {
            Ok(a) => a,
            Err(_) => return Ok(()),
        }
    } else {
        attr_axis(value, rank, "axis")?
    };
    if n == 1 && !v4 {
        ctx.propagate_shape(0, 0);
        return Ok(());
    }
    let mut out = unknown_dims(rank);
    let mut total = 0i64;
    let mut all_known = true;
    // With `symbolic`: the axis length as an expression (`past + seq`).
    let mut sum = Some(Dim::Value(0));
    for (i, s) in shapes.iter().enumerate() {
        if s.len() != rank {
            return Err(bad_shapes(format!(
                "all inputs of Concat must have the same rank: input 0 has rank {rank}, input {i} \
                 has rank {} {}",
                s.len(),
                ctx.show_dims(s)
            )));
        }
        for (j, &d) in s.iter().enumerate() {
            if j == axis {
                match d {
                    Dim::Value(v) => {
                        if v < 0 {
                            return Err(bad_shapes(format!(
                                "input {i} has a negative dimension {v} on the Concat axis"
                            )));
                        }
                        total = checked_add(total, v, "the Concat axis length")?;
                    }
                    _ => all_known = false,
                }
                sum = sum.and_then(|acc| ctx.sym_add(acc, d));
            } else if let Some(slot) = out.get_mut(j) {
                util::unify(d, slot).map_err(|e| {
                    bad_shapes(format!(
                        "dimension {j} of the Concat inputs: {e} (input {i} is {})",
                        ctx.show_dims(s)
                    ))
                })?;
            }
        }
    }
    if all_known {
        if let Some(slot) = out.get_mut(axis) {
            *slot = Dim::Value(total);
        }
    } else if let (Some(d), Some(slot)) = (sum, out.get_mut(axis)) {
        *slot = d;
    }
    set_dims(ctx, 0, out);
    Ok(())
}

fn concat_v4(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    concat_shape(ctx, true)
}

fn concat(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    concat_shape(ctx, false)
}

/// Split 18 makes a list of `num_outputs` sizes: beyond this many (16 GiB
/// of sizes) onnx's inference is taken to fail allocating it (it does for
/// 2^40; it cannot for more than 2^60).
const MAX_SPLIT_PARTS: i64 = 1 << 31;

/// How a Split node says the sizes of its parts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SplitSizes {
    /// Split 2 and 11: the `split` attribute, else equal parts.
    Attribute,
    /// Split 13: the `split` input, else equal parts.
    Input,
    /// Split 18: the `split` input, else the `num_outputs` attribute.
    InputOrCount,
}

fn split_shape(ctx: &mut NodeCtx<'_, '_>, how: SplitSizes) -> InferResult {
    let n_out = ctx.n_outputs();
    for i in 0..n_out {
        ctx.propagate_elem(0, i)?;
    }
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let rank = shape.len();
    let axis_value = narrow(ctx.own_int("axis", 0));
    let axis = util::axis(axis_value, rank).map_err(|e| bad_attr("axis", e))?;
    let part = |size: Dim| -> Dims {
        let mut d: Dims = shape.iter().copied().collect();
        if let Some(slot) = d.get_mut(axis) {
            *slot = size;
        }
        d
    };
    let Some(Dim::Value(total)) = shape.get(axis).copied() else {
        let sizes = match shape.get(axis) {
            Some(&d) => symbolic_split(ctx, d, how, n_out),
            None => Vec::new(),
        };
        for i in 0..n_out {
            set_dims(ctx, i, part(sizes.get(i).copied().unwrap_or(Dim::Unknown)));
        }
        return Ok(());
    };
    let total = narrow(total);
    let count = i64::try_from(n_out).unwrap_or(i64::MAX);
    let split_input = match how {
        SplitSizes::Attribute => false,
        SplitSizes::Input => ctx.n_inputs() == 2 && ctx.has_type(1),
        SplitSizes::InputOrCount => {
            // onnx's Split-18 asks whether the input is given (hasInput),
            // not whether it has a type.
            let given = ctx.has_input(1);
            if given && ctx.attr("num_outputs").is_some() {
                return Err(failed(
                    "both the 'split' input and the 'num_outputs' attribute are given",
                ));
            }
            given
        }
    };
    let listed: Option<Vec<i64>> = if how == SplitSizes::Attribute {
        ctx.own_ints("split").map(<[i64]>::to_vec)
    } else if split_input {
        match const_i64(ctx, 1)? {
            Some(v) => Some(v),
            None => return Ok(()),
        }
    } else {
        None
    };
    let sizes: Vec<i64> = if let Some(split) = listed {
        if split.len() != n_out {
            return Err(failed(format!(
                "'split' has {} values for {n_out} outputs",
                split.len()
            )));
        }
        let sum = split.iter().fold(0i64, |acc, &d| acc.wrapping_add(d));
        if sum != total {
            return Err(bad_shapes(format!(
                "the sizes in 'split' add up to {sum}, but the split dimension is {total}"
            )));
        }
        split
    } else if how == SplitSizes::InputOrCount {
        let Some(a) = ctx.attr("num_outputs") else {
            return Err(failed(
                "neither the 'split' input nor the 'num_outputs' attribute is given",
            ));
        };
        let parts = a.i.unwrap_or(0);
        if parts < 1 {
            return Err(bad_attr(
                "num_outputs",
                format!("'num_outputs' is {parts}, it must be 1 or more"),
            ));
        }
        if parts > MAX_SPLIT_PARTS {
            return Err(crash(format!(
                "'num_outputs' is {parts}: onnx's inference allocates a size for each part and \
                 fails (out of memory)"
            )));
        }
        if parts < count {
            return Err(crash(format!(
                "'num_outputs' is {parts} but the node has {n_out} outputs (onnx's inference \
                 crashes on this)"
            )));
        }
        let even = total % parts == 0;
        let chunk = if even {
            narrow(total / parts)
        } else {
            narrow(total / parts + 1)
        };
        let last = narrow(total.wrapping_sub(chunk.wrapping_mul(parts - 1)));
        (0..count)
            .map(|i| if !even && i == parts - 1 { last } else { chunk })
            .collect()
    } else {
        if total % count != 0 {
            return Err(bad_shapes(format!(
                "the split dimension {total} is not divisible into {n_out} equal parts"
            )));
        }
        vec![total / count; n_out]
    };
    for (i, &s) in sizes.iter().enumerate() {
        set_dims(ctx, i, part(Dim::Value(s)));
    }
    Ok(())
}

/// With `symbolic`: the sizes of a Split's parts along a symbolic dim `d`
/// (`torch.chunk`, `qkv.split(...)`): the listed sizes; with `num_outputs`
/// `ceil(d/n)` each and the rest, `d - (n - 1)*ceil(d/n)`, last; else equal
/// parts, `floor(d/n)` (the model is valid only when `n` divides `d`).
/// Empty (unknown parts, as onnx gives them) where the node says nothing
/// sure; its defects are reported where the dim is known.
fn symbolic_split(ctx: &mut NodeCtx<'_, '_>, d: Dim, how: SplitSizes, n_out: usize) -> Vec<Dim> {
    if !ctx.is_symbolic() || !d.is_known() {
        return Vec::new();
    }
    let listed = match how {
        SplitSizes::Attribute => ctx.own_ints("split").map(<[i64]>::to_vec),
        _ if ctx.has_type(1) => match const_i64(ctx, 1) {
            Ok(Some(v)) => Some(v),
            _ => return Vec::new(),
        },
        _ => None,
    };
    let count = i64::try_from(n_out).unwrap_or(i64::MAX);
    if let Some(split) = listed {
        if split.len() != n_out || split.iter().any(|&v| v < 0) {
            return Vec::new();
        }
        return split.into_iter().map(Dim::Value).collect();
    }
    if how == SplitSizes::InputOrCount {
        let parts = ctx.attr("num_outputs").and_then(|a| a.i).unwrap_or(0);
        if parts < count.max(1) || parts > MAX_SPLIT_PARTS {
            return Vec::new();
        }
        let Some(chunk) = ctx.sym_ceil_div(d, parts) else {
            return Vec::new();
        };
        let last = ctx
            .sym_mul(chunk, Dim::Value(parts - 1))
            .and_then(|before| ctx.sym_sub(d, before))
            .unwrap_or(Dim::Unknown);
        return (0..count)
            .map(|i| if i == parts - 1 { last } else { chunk })
            .collect();
    }
    let equal = ctx.sym_floor_div(d, count).unwrap_or(Dim::Unknown);
    vec![equal; n_out]
}

fn split_v2(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    split_shape(ctx, SplitSizes::Attribute)
}

fn split_v13(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    split_shape(ctx, SplitSizes::Input)
}

fn split_v18(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    split_shape(ctx, SplitSizes::InputOrCount)
}

// ---- Slice -----------------------------------------------------------------------

/// `std::clamp` as libstdc++ writes it (well defined even when `lo > hi`).
fn clamp(v: i64, lo: i64, hi: i64) -> i64 {
    if v < lo {
        lo
    } else if hi < v {
        hi
    } else {
        v
    }
}

/// The length of `[start, end)` by `step` (onnx's `ceil((end - start) /
/// step)` in doubles, at least 0).
fn slice_len(start: i64, end: i64, step: i64) -> i64 {
    let len = util::cast_i64((end.wrapping_sub(start) as f64 / step as f64).ceil());
    len.max(0)
}

/// Slice bounds at or past this are open ends (exporters write
/// `INT64_MAX`, `INT32_MAX`, `-INT64_MAX`): a symbolic dim is taken to be
/// smaller.
const OPEN_BOUND: i64 = i32::MAX as i64;

/// Which bound of a Slice, and which way it goes.
#[derive(Clone, Copy, PartialEq)]
enum SliceBound {
    Start,
    End,
}

/// With `symbolic`: where a Slice bound falls in a dim `d`, as an index
/// (an expression where `d` or the bound is symbolic), clamped as onnx
/// clamps it. A bound is assumed inside the dim where that cannot be
/// decided: a negative constant counts from the end (`d - 1`), a symbolic
/// bound is taken as it is when at least 0 (`seq`) and counted from the end
/// when below (`d - seq`), a forward slice's start and a backward slice's
/// end are taken as they are (`2:`). A forward slice's finite end and a
/// backward slice's finite start are clamped: `min(seq, 10)` for `:10`,
/// `min(seq, 11) - 1` for `10::-1` (the slices that cut a dim to at most
/// so much). `top` is where a backward end is clamped, relative to the
/// dim: `-1` (Slice 13), `0` (10, 11).
fn slice_index(
    ctx: &mut NodeCtx<'_, '_>,
    d: Dim,
    bound: Dim,
    which: SliceBound,
    forward: bool,
    top: i64,
) -> Option<Dim> {
    let (lo, hi) = match (forward, which) {
        (true, _) => (0, 0),
        (false, SliceBound::Start) => (0, -1),
        (false, SliceBound::End) => (-1, top),
    };
    let v = match bound {
        Dim::Value(v) => v,
        Dim::Sym(_) => {
            return match ctx.sym_sign(bound)? {
                true => Some(bound),
                false => ctx.sym_add(d, bound),
            }
        }
        Dim::Unknown => return None,
    };
    if let Dim::Value(n) = d {
        let at = if v < 0 { v.saturating_add(n) } else { v };
        return Some(Dim::Value(clamp(at, lo, n.saturating_add(hi))));
    }
    if v >= OPEN_BOUND {
        ctx.sym_add(d, Dim::Value(hi))
    } else if v <= -OPEN_BOUND {
        Some(Dim::Value(lo))
    } else if v < 0 {
        ctx.sym_add(d, Dim::Value(v))
    } else if (which == SliceBound::Start) == forward {
        // A forward start or a backward end: taken to fall inside.
        Some(Dim::Value(v))
    } else {
        // A forward end or a backward start: at most the dim's last place.
        let last = ctx.sym_add(d, Dim::Value(hi))?;
        ctx.sym_min(last, Dim::Value(v))
    }
}

/// With `symbolic`: the length of a Slice along `d` from its bounds (see
/// [`slice_index`]): `seq - 1` for `1:`, `seq` for `::-1`,
/// `floor((seq + 1)/2)` for `::2`, `seq` for `:seq` of a dim of 1024.
fn symbolic_slice_len(
    ctx: &mut NodeCtx<'_, '_>,
    d: Dim,
    (start, end, step): (Dim, Dim, i64),
    top: i64,
) -> Option<Dim> {
    // Without `symbolic` a dim without value slices to an unknown dim, as
    // in onnx (also where the bounds alone give an empty slice).
    if step == 0 || !ctx.is_symbolic() {
        return None;
    }
    if d == Dim::Value(0) {
        return Some(d);
    }
    let forward = step > 0;
    // A clamped bound (`min(seq, 10)`: a forward end, a backward start,
    // finite and at least 0 on a symbolic dim) is read against another
    // bound that is a constant at least 0 (taken to fall inside the dim):
    // the slice is empty when that one is past the clamp's constant, else
    // the clamp's length. Against any other bound the length has no
    // expression here.
    let (near, far) = if forward { (start, end) } else { (end, start) };
    if let (Dim::Sym(_), Dim::Value(v)) = (d, far) {
        if (0..OPEN_BOUND).contains(&v) {
            match near {
                Dim::Value(s) if s >= 0 && v <= s => return Some(Dim::Value(0)),
                Dim::Value(s) if s >= 0 => {}
                // An open backward end (`10::-1`): to the dim's start.
                Dim::Value(s) if !forward && s <= -OPEN_BOUND => {}
                _ => return None,
            }
        }
    }
    let first = slice_index(ctx, d, start, SliceBound::Start, forward, top)?;
    let past = slice_index(ctx, d, end, SliceBound::End, forward, top)?;
    let span = if forward {
        ctx.sym_sub(past, first)?
    } else {
        ctx.sym_sub(first, past)?
    };
    slice_count(ctx, span, step)
}

/// With `symbolic`: how many steps of `step` fit in `span` elements,
/// `ceil(span/|step|)`, at least 0. `None` for a span that shrinks as sizes
/// grow (empty wherever the bounds fit, or one bound past the other): not
/// a length.
pub(super) fn slice_count(ctx: &mut NodeCtx<'_, '_>, span: Dim, step: i64) -> Option<Dim> {
    if ctx.sym_sign(span) == Some(false) && !matches!(span, Dim::Value(_)) {
        return None;
    }
    // ceil(span / stride) = floor((span + stride - 1) / stride).
    let stride = step.checked_abs()?;
    let span = ctx.sym_add(span, Dim::Value(stride - 1))?;
    match ctx.sym_floor_div(span, stride)? {
        Dim::Value(n) => Some(Dim::Value(n.max(0))),
        len => Some(len),
    }
}

/// Slice 1: `starts`, `ends` and `axes` attributes.
fn slice_v1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let (starts, ends) = match (ctx.own_ints("starts"), ctx.own_ints("ends")) {
        (Some(s), Some(e)) if s.len() == e.len() => (s, e),
        _ => {
            return Err(bad_attr(
                "starts",
                "'starts' and 'ends' must both be given, with as many values",
            ))
        }
    };
    let axes: Vec<i64> = match ctx.own_ints("axes") {
        None => (0..i64::try_from(starts.len()).unwrap_or(i64::MAX)).collect(),
        Some(a) if a.len() != starts.len() => {
            return Err(bad_attr(
                "axes",
                format!(
                    "'axes' has {} values, 'starts' has {}",
                    a.len(),
                    starts.len()
                ),
            ))
        }
        Some(a) if a.windows(2).any(|w| w[0] > w[1]) => return Ok(()),
        Some(a) => a.to_vec(),
    };
    if axes.iter().any(|&a| a < 0) {
        set_dims(ctx, 0, unknown_dims(shape.len()));
        return Ok(());
    }
    let mut out = Dims::with_capacity(shape.len());
    let mut j = 0usize;
    for (i, &d) in shape.iter().enumerate() {
        let on_axis = axes
            .get(j)
            .is_some_and(|&a| usize::try_from(a).is_ok_and(|a| a == i));
        if !on_axis {
            out.push(d);
            continue;
        }
        let mut nd = Dim::Unknown;
        match (d, starts.get(j), ends.get(j)) {
            (Dim::Value(dv), Some(&s), Some(&e)) => {
                let s = if s < 0 { s.wrapping_add(dv) } else { s };
                let e = if e < 0 { e.wrapping_add(dv) } else { e };
                if s >= 0 && e >= 0 {
                    let len = dv.min(e).wrapping_sub(s);
                    if len >= 0 {
                        nd = Dim::Value(len);
                    }
                }
            }
            // onnx's Slice 1 does not clamp a start or end before the
            // dim's start (its length is then unknown).
            (Dim::Sym(_), Some(&s), Some(&e)) if s > -OPEN_BOUND && e > -OPEN_BOUND => {
                if let Some(len) = symbolic_slice_len(ctx, d, (Dim::Value(s), Dim::Value(e), 1), 0)
                {
                    nd = len;
                }
            }
            _ => {}
        }
        out.push(nd);
        j += 1;
    }
    set_dims(ctx, 0, out);
    Ok(())
}

/// Slice 10, 11 and 13: `starts`, `ends`, `axes`, `steps` inputs, read when
/// constant.
fn slice_inputs(ctx: &mut NodeCtx<'_, '_>, version: i64) -> InferResult {
    // onnx's rule checks its input count first (a misfit node reaches it
    // only after an unknown operator, which hides this failure).
    if !(3..=5).contains(&ctx.n_inputs()) {
        return Err(failed(format!(
            "Slice takes 3 to 5 inputs, the node has {}",
            ctx.n_inputs()
        )));
    }
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let rank = shape.len();
    // An axes or steps input without a known shape counts as not given.
    let axes_given = ctx.shape(3).is_some();
    let steps_given = ctx.shape(4).is_some();
    if constant(ctx, 1).is_none()
        || constant(ctx, 2).is_none()
        || (axes_given && constant(ctx, 3).is_none())
        || (steps_given && constant(ctx, 4).is_none())
    {
        match slice_of_values(ctx, shape, version, axes_given, steps_given) {
            Some(dims) => set_dims_in_place(ctx, 0, dims),
            // onnx adds an unknown dim per input dim to the output's shape,
            // so a scalar's output gets no shape (not rank 0).
            None if rank == 0 => {}
            None => set_dims_in_place(ctx, 0, unknown_dims(rank)),
        }
        return Ok(());
    }
    if !const_has_data_type(ctx, 1) {
        return Ok(());
    }
    let starts = const_indices(ctx, 1)?.unwrap_or_default();
    let ends = const_indices(ctx, 2)?.unwrap_or_default();
    if starts.len() != ends.len() {
        return Err(bad_const(
            2,
            format!(
                "'starts' has {} values, 'ends' has {}",
                starts.len(),
                ends.len()
            ),
        ));
    }
    let axes: Vec<i64> = if axes_given {
        let a = const_indices(ctx, 3)?.unwrap_or_default();
        if a.len() != starts.len() {
            return Err(bad_const(
                3,
                format!(
                    "'axes' has {} values, 'starts' has {}",
                    a.len(),
                    starts.len()
                ),
            ));
        }
        a
    } else {
        (0..i64::try_from(starts.len()).unwrap_or(i64::MAX)).collect()
    };
    let checked: Option<Vec<usize>> = if version >= 13 {
        Some(check_axes(&axes, rank, "Slice 'axes'")?)
    } else {
        None
    };
    let steps: Vec<i64> = if steps_given {
        let s = const_indices(ctx, 4)?.unwrap_or_default();
        if s.len() != axes.len() {
            return Err(bad_const(
                4,
                format!("'steps' has {} values, 'axes' has {}", s.len(), axes.len()),
            ));
        }
        s
    } else {
        vec![1; starts.len()]
    };
    let mut out: Dims = shape.iter().copied().collect();
    let mut seen = vec![false; rank];
    for k in 0..axes.len() {
        let axis = match &checked {
            Some(c) => c.get(k).copied().unwrap_or(0),
            None => {
                let a = axes.get(k).copied().unwrap_or(0);
                let r = i64::try_from(rank).unwrap_or(i64::MAX);
                let a = if a < 0 { a.wrapping_add(r) } else { a };
                let axis = usize::try_from(a)
                    .ok()
                    .filter(|&a| a < rank)
                    .ok_or_else(|| {
                        bad_const(
                            3,
                            format!("axis {} is out of range for rank {rank}", axes[k]),
                        )
                    })?;
                if std::mem::replace(&mut seen[axis], true) {
                    return Err(bad_const(3, format!("axis {} is given twice", axes[k])));
                }
                axis
            }
        };
        let (Some(&d), Some(slot)) = (shape.get(axis), out.get_mut(axis)) else {
            continue;
        };
        let (start, end, step) = (starts[k], ends[k], steps[k]);
        let Dim::Value(dv) = d else {
            if version >= 11 {
                *slot = Dim::Unknown;
                if d.is_known() && step != 0 {
                    let top = if version >= 13 { -1 } else { 0 };
                    let bounds = (Dim::Value(start), Dim::Value(end), step);
                    if let Some(len) = symbolic_slice_len(ctx, d, bounds, top) {
                        *slot = len;
                    }
                }
            }
            continue;
        };
        if version >= 13 {
            if step == 0 {
                return Err(bad_const(4, "a step of Slice is 0"));
            }
            if dv == 0 {
                *slot = Dim::Value(0);
                continue;
            }
        } else {
            if dv == 0 {
                *slot = Dim::Value(0);
                continue;
            }
            if step == 0 {
                return Err(bad_const(4, "a step of Slice is 0"));
            }
        }
        let start = if start < 0 {
            start.wrapping_add(dv)
        } else {
            start
        };
        let start = if step < 0 {
            clamp(start, 0, dv.wrapping_sub(1))
        } else {
            clamp(start, 0, dv)
        };
        let end = if end < 0 { end.wrapping_add(dv) } else { end };
        // Slice 10 and 11 clamp a backward end to the dim, 13 to the dim - 1.
        let top = if version >= 13 {
            dv.wrapping_sub(1)
        } else {
            dv
        };
        let end = if step < 0 {
            clamp(end, -1, top)
        } else {
            clamp(end, 0, dv)
        };
        *slot = Dim::Value(slice_len(start, end, step));
    }
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

/// With `symbolic` and `data_prop`: a Slice whose starts or ends are not
/// constant but computed from shapes (`bias[:, :, :seq]`, `x[:, :seq - 1]`),
/// its axes and steps constant. The sliced dims as [`symbolic_slice_len`]
/// gives them, the others as they are (with constant axes, a bound without
/// a value leaves only its axis unknown). `None` (onnx's unknown dims) where
/// the sliced axes are not known or the inputs disagree (onnx does not check
/// them then either).
fn slice_of_values(
    ctx: &mut NodeCtx<'_, '_>,
    shape: &[Dim],
    version: i64,
    axes_given: bool,
    steps_given: bool,
) -> Option<Dims> {
    if !ctx.is_symbolic() || version < 11 {
        return None;
    }
    let bound = |ctx: &mut NodeCtx<'_, '_>, i: usize| -> Option<Vec<Dim>> {
        match const_indices(ctx, i) {
            Ok(Some(v)) => Some(v.into_iter().map(Dim::Value).collect()),
            Ok(None) => ctx.data(i).map(|d| d.to_vec()),
            Err(_) => None,
        }
    };
    let given = |ctx: &mut NodeCtx<'_, '_>, on: bool, i: usize| match on {
        true => const_indices(ctx, i).ok().flatten(),
        false => None,
    };
    let rank = i64::try_from(shape.len()).ok()?;
    // Constant axes tell which dims a bound without a value leaves unknown.
    let axes = given(ctx, axes_given, 3);
    let count = axes.as_ref().map(Vec::len);
    let unknown = || count.map(|n| vec![Dim::Unknown; n]);
    let starts = bound(ctx, 1).or_else(unknown)?;
    let ends = bound(ctx, 2).or_else(unknown)?;
    let axes = axes.unwrap_or_else(|| (0..rank).take(starts.len()).collect());
    let steps = given(ctx, steps_given, 4).unwrap_or_else(|| vec![1; starts.len()]);
    if [ends.len(), axes.len(), steps.len()]
        .iter()
        .any(|&n| n != starts.len())
    {
        return None;
    }
    let top = if version >= 13 { -1 } else { 0 };
    let mut out: Dims = shape.iter().copied().collect();
    let mut seen = vec![false; shape.len()];
    for (k, &a) in axes.iter().enumerate() {
        let a = if a < 0 { a.checked_add(rank)? } else { a };
        let axis = usize::try_from(a).ok().filter(|&a| a < shape.len())?;
        if std::mem::replace(seen.get_mut(axis)?, true) {
            return None;
        }
        let (start, end, step) = (*starts.get(k)?, *ends.get(k)?, *steps.get(k)?);
        let d = *shape.get(axis)?;
        let len = if d.is_known() {
            symbolic_slice_len(ctx, d, (start, end, step), top)
        } else {
            None
        };
        *out.get_mut(axis)? = len.unwrap_or(Dim::Unknown);
    }
    Some(out)
}

pub(super) fn slice_v10(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    slice_inputs(ctx, 10)
}

fn slice_v11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    slice_inputs(ctx, 11)
}

fn slice_v13(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    slice_inputs(ctx, 13)
}

// ---- Transpose, Gather, Scatter ------------------------------------------------

/// Transpose (`v1`: an empty permutation gives no shape).
fn transpose_shape(ctx: &mut NodeCtx<'_, '_>, v1: bool) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let rank = shape.len();
    let perm: Vec<usize> = match ctx.own_ints("perm") {
        None => (0..rank).rev().collect(),
        Some(p) => {
            let mut seen = vec![false; rank];
            let mut out = Vec::with_capacity(p.len());
            for &v in p {
                let Some(a) = usize::try_from(v).ok().filter(|&a| a < rank) else {
                    return Err(bad_attr(
                        "perm",
                        format!(
                            "'perm' {p:?} holds {v}, out of range for the input {}",
                            ctx.show_dims(shape)
                        ),
                    ));
                };
                if std::mem::replace(&mut seen[a], true) {
                    return Err(bad_attr(
                        "perm",
                        format!("'perm' {p:?} holds {v} more than once"),
                    ));
                }
                out.push(a);
            }
            out
        }
    };
    if v1 && perm.is_empty() {
        return Ok(());
    }
    let out: Dims = perm.iter().filter_map(|&a| shape.get(a).copied()).collect();
    set_dims(ctx, 0, out);
    Ok(())
}

fn transpose_v1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    transpose_shape(ctx, true)
}

fn transpose(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    transpose_shape(ctx, false)
}

fn gather(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(data), Some(indices)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    if data.is_empty() {
        return Err(bad_rank(
            0,
            "Gather needs data of rank 1 or more, it has rank 0",
        ));
    }
    let axis = attr_axis(narrow(ctx.own_int("axis", 0)), data.len(), "axis")?;
    let out: Dims = data[..axis]
        .iter()
        .chain(indices)
        .chain(&data[axis + 1..])
        .copied()
        .collect();
    set_dims(ctx, 0, out);
    Ok(())
}

fn gather_elements(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    ctx.propagate_shape(1, 0);
    Ok(())
}

/// GatherND (`batch`: version 12 on, with `batch_dims`).
fn gather_nd_shape(ctx: &mut NodeCtx<'_, '_>, batch: bool) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(data), Some(indices)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    let (Some(_), Some(&last)) = (data.first(), indices.last()) else {
        return Err(bad_rank(
            if data.is_empty() { 0 } else { 1 },
            format!(
                "GatherND needs data and indices of rank 1 or more, they are {} and {}",
                ctx.show_dims(data),
                ctx.show_dims(indices)
            ),
        ));
    };
    let Dim::Value(k) = last else {
        return Ok(());
    };
    let k = if batch {
        checked_add(k, ctx.own_int("batch_dims", 0), "the indexed rank")?
    } else {
        k
    };
    let data_rank = i64::try_from(data.len()).unwrap_or(i64::MAX);
    if k > data_rank {
        return Err(bad_shapes(format!(
            "the last dimension of indices {} (with batch_dims) indexes {k} dimensions, more \
             than the rank of data {}",
            ctx.show_dims(indices),
            ctx.show_dims(data)
        )));
    }
    let Ok(k) = usize::try_from(k) else {
        return Err(crash(format!(
            "the indices {} index a negative number of dimensions ({k}): onnx's inference \
             reads out of bounds",
            ctx.show_dims(indices)
        )));
    };
    let out: Dims = indices[..indices.len() - 1]
        .iter()
        .chain(&data[k..])
        .copied()
        .collect();
    // onnx's rule adds the output's dims one by one: a scalar result (1-D
    // indices that index every dimension of data) is left without a shape.
    if !out.is_empty() {
        set_dims(ctx, 0, out);
    }
    Ok(())
}

pub(super) fn gather_nd_v11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    gather_nd_shape(ctx, false)
}

fn gather_nd(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    gather_nd_shape(ctx, true)
}

fn tensor_scatter(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (cache, update) = (ctx.shape(0), ctx.shape(1));
    if let (Some(cache), Some(update)) = (cache, update) {
        if cache.len() != update.len() {
            return Err(bad_shapes(format!(
                "past_cache {} and update {} must have the same rank",
                ctx.show_dims(cache),
                ctx.show_dims(update)
            )));
        }
        let rank = i64::try_from(cache.len()).unwrap_or(i64::MAX);
        let axis = ctx.attr("axis").map_or(-2, |a| a.i.unwrap_or(0));
        let axis = if axis < 0 {
            axis.saturating_add(rank)
        } else {
            axis
        };
        if axis <= 0 || axis >= rank {
            return Err(bad_attr(
                "axis",
                format!("axis {axis} is out of range for rank {rank} (it must be in [1, rank))"),
            ));
        }
        for (i, (&a, &b)) in cache.iter().zip(update).enumerate() {
            if i64::try_from(i).is_ok_and(|i| i == axis) {
                continue;
            }
            let mut d = Dim::Unknown;
            util::unify(a, &mut d)
                .and_then(|()| util::unify(b, &mut d))
                .map_err(|e| {
                    bad_shapes(format!(
                        "dimension {i} of past_cache {} and update {}: {e}",
                        ctx.show_dims(cache),
                        ctx.show_dims(update)
                    ))
                })?;
        }
    }
    if let Some(lens) = ctx.shape(2) {
        util::check_rank(ctx, 2, 1)?;
        if let Some(cache) = cache {
            let Some(&b) = cache.first() else {
                return Err(bad_rank(
                    0,
                    "past_cache must have rank 1 or more, it has rank 0",
                ));
            };
            let mut d = Dim::Unknown;
            util::unify(b, &mut d)
                .and_then(|()| util::unify(lens[0], &mut d))
                .map_err(|e| {
                    bad_shapes(format!(
                        "the batch dimension of past_cache {} and write_indices {}: {e}",
                        ctx.show_dims(cache),
                        ctx.show_dims(lens)
                    ))
                })?;
        }
    }
    ctx.propagate_shape(0, 0);
    Ok(())
}

// ---- Squeeze, Unsqueeze ------------------------------------------------------

/// Squeeze 1: `axes` attribute (used in order, as given).
fn squeeze_v1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let axes: Vec<i64> = match ctx.own_ints("axes") {
        Some(a) => a.to_vec(),
        None => match ones(shape) {
            Some(a) => a,
            None => return Ok(()),
        },
    };
    let mut out = Dims::new();
    let mut j = 0usize;
    for (i, &d) in shape.iter().enumerate() {
        if axes
            .get(j)
            .is_some_and(|&a| usize::try_from(a).is_ok_and(|a| a == i))
        {
            check_squeezable(ctx, shape, i)?;
            j += 1;
        } else {
            out.push(d);
        }
    }
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

/// The positions of the dims equal to 1, when every dim is known.
fn ones(shape: &[Dim]) -> Option<Vec<i64>> {
    let mut out = Vec::new();
    for (i, d) in shape.iter().enumerate() {
        if d.value()? == 1 {
            out.push(i64::try_from(i).unwrap_or(i64::MAX));
        }
    }
    Some(out)
}

fn check_squeezable(ctx: &NodeCtx<'_, '_>, shape: &[Dim], i: usize) -> InferResult {
    match shape.get(i) {
        Some(Dim::Value(v)) if *v != 1 => Err(bad_shapes(format!(
            "dimension {i} of {} is {v}: it cannot be squeezed",
            ctx.show_dims(shape)
        ))),
        _ => Ok(()),
    }
}

/// Squeeze 11: `axes` attribute (negative ones counted from the end, out
/// of range ones ignored).
fn squeeze_v11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let rank = i64::try_from(shape.len()).unwrap_or(i64::MAX);
    let axes: Vec<i64> = match ctx.own_ints("axes") {
        Some(a) => a
            .iter()
            .map(|&v| if v < 0 { v + rank } else { v })
            .collect(),
        None => match ones(shape) {
            Some(a) => a,
            None => return Ok(()),
        },
    };
    squeeze_listed(ctx, shape, &axes)
}

/// The dims of `shape` except those listed (which must be 1 when known).
fn squeeze_listed(ctx: &mut NodeCtx<'_, '_>, shape: &[Dim], axes: &[i64]) -> InferResult {
    let mut out = Dims::new();
    for (i, &d) in shape.iter().enumerate() {
        let listed = i64::try_from(i).is_ok_and(|i| axes.contains(&i));
        if listed {
            check_squeezable(ctx, shape, i)?;
        } else {
            out.push(d);
        }
    }
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

/// Squeeze 13 on: `axes` input, read when constant.
fn squeeze(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    if ctx.n_inputs() == 2 && ctx.has_type(1) {
        let Some(values) = const_i64(ctx, 1)? else {
            return Ok(());
        };
        let rank = shape.len();
        let mut axes = Vec::with_capacity(values.len());
        for &v in &values {
            let a = util::axis(v, rank).map_err(|e| bad_const(1, e))?;
            axes.push(i64::try_from(a).unwrap_or(i64::MAX));
        }
        return squeeze_listed(ctx, shape, &axes);
    }
    let Some(axes) = ones(shape) else {
        return Ok(());
    };
    squeeze_listed(ctx, shape, &axes)
}

/// The dims of `shape` with a 1 inserted wherever the output position is
/// the next of the sorted `axes` (onnx's walk, which skips axes it never
/// reaches).
fn unsqueeze_walk(shape: &[Dim], axes: &[i64]) -> Dims {
    let mut out = Dims::with_capacity(shape.len() + axes.len());
    let mut j = 0usize;
    let insert = |out: &mut Dims, j: &mut usize| {
        while axes
            .get(*j)
            .is_some_and(|&a| usize::try_from(a).is_ok_and(|a| a == out.len()))
        {
            out.push(Dim::Value(1));
            *j += 1;
        }
    };
    for &d in shape {
        insert(&mut out, &mut j);
        out.push(d);
    }
    insert(&mut out, &mut j);
    out
}

/// Unsqueeze 1: `axes` attribute, sorted, not checked. Like 11, onnx's rule
/// reads the input's own `tensor_type()` after `hasNInputShapes` (a sequence
/// or optional stops it there) and writes the output in place.
fn unsqueeze_v1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if ctx.shape(0).is_none() {
        return Ok(());
    }
    let Some(axes) = ctx.own_ints("axes") else {
        return Ok(());
    };
    let Some(shape) = ctx.tensor_shape(0) else {
        return Ok(());
    };
    let mut axes = axes.to_vec();
    axes.sort_unstable();
    set_dims_in_place(ctx, 0, unsqueeze_walk(shape, &axes));
    Ok(())
}

/// Unsqueeze 11: `axes` attribute, distinct values in range of the output.
fn unsqueeze_v11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if ctx.shape(0).is_none() {
        return Ok(());
    }
    let Some(values) = ctx.own_ints("axes") else {
        return Ok(());
    };
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(bad_attr(
            "axes",
            format!("'axes' holds {} more than once", w[0]),
        ));
    }
    let Some(shape) = ctx.tensor_shape(0) else {
        return Ok(());
    };
    let out_rank = shape.len().saturating_add(values.len());
    let r = i64::try_from(out_rank).unwrap_or(i64::MAX);
    let mut axes = Vec::with_capacity(values.len());
    for &v in values {
        if v < -r || v >= r {
            return Err(bad_attr(
                "axes",
                format!("axis {v} is out of range for the output rank {out_rank}"),
            ));
        }
        axes.push(if v < 0 { v + r } else { v });
    }
    axes.sort_unstable();
    set_dims_in_place(ctx, 0, unsqueeze_walk(shape, &axes));
    Ok(())
}

/// Unsqueeze 13 on: `axes` input, read when constant; the output written in
/// place, as onnx's rule writes it.
fn unsqueeze(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let Some(values) = const_i64(ctx, 1)? else {
        return Ok(());
    };
    let out_rank = shape.len().saturating_add(values.len());
    let axes = util::axes(&values, out_rank).map_err(|e| bad_const(1, e))?;
    let mut axes: Vec<i64> = axes
        .into_iter()
        .map(|a| i64::try_from(a).unwrap_or(i64::MAX))
        .collect();
    axes.sort_unstable();
    set_dims_in_place(ctx, 0, unsqueeze_walk(shape, &axes));
    Ok(())
}

// ---- DepthToSpace, SpaceToDepth, Tile, Pad, CenterCropPad -------------------------

/// The `blocksize` attribute (positive) and its square.
fn block_size(ctx: &NodeCtx<'_, '_>) -> InferResult<(i64, i64)> {
    let b = ctx.own_int("blocksize", 0);
    if b <= 0 {
        return Err(bad_attr(
            "blocksize",
            format!("'blocksize' is {b}, it must be positive"),
        ));
    }
    let area = b
        .checked_mul(b)
        .ok_or_else(|| bad_attr("blocksize", format!("'blocksize' {b} squared overflows")))?;
    Ok((b, area))
}

/// The input's 4 dims (when known), which the operator needs.
fn four_dims<'a>(ctx: &NodeCtx<'a, '_>) -> InferResult<Option<&'a [Dim]>> {
    match ctx.shape(0) {
        Some(s) if s.len() != 4 => Err(bad_rank(
            0,
            format!("the input must have rank 4, it is {}", ctx.show_dims(s)),
        )),
        s => Ok(s),
    }
}

fn depth_to_space(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (b, area) = block_size(ctx)?;
    if let Some(s) = four_dims(ctx)? {
        let out: Dims = [
            s[0],
            divided(ctx, s[1], area)?,
            times(ctx, s[2], b)?,
            times(ctx, s[3], b)?,
        ]
        .into_iter()
        .collect();
        ctx.set_shape(0, out);
    }
    Ok(())
}

fn space_to_depth(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (b, area) = block_size(ctx)?;
    if let Some(s) = four_dims(ctx)? {
        let out: Dims = [
            s[0],
            times(ctx, s[1], area)?,
            divided(ctx, s[2], b)?,
            divided(ctx, s[3], b)?,
        ]
        .into_iter()
        .collect();
        ctx.set_shape(0, out);
    }
    Ok(())
}

/// Tile 1: the element type only.
fn tile_v1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)
}

fn tile(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let rank = shape.len();
    let (Some(c), Some(rs)) = (constant(ctx, 1), ctx.shape(1)) else {
        // With `symbolic`: repeats computed from shapes (`data_prop`).
        let repeats = ctx.data(1).filter(|r| r.len() == rank && ctx.is_symbolic());
        let dims = match repeats {
            Some(r) => {
                let r: Dims = r.iter().copied().collect();
                let tiled = shape
                    .iter()
                    .zip(&r)
                    .map(|(&d, &k)| ctx.sym_mul(d, k).filter(|_| ctx.sym_sign(k) == Some(true)));
                tiled.map(|d| d.unwrap_or(Dim::Unknown)).collect()
            }
            None => unknown_dims(rank),
        };
        set_dims_in_place(ctx, 0, dims);
        return Ok(());
    };
    if rs.len() != 1 || c.elem() != 7 {
        return Err(bad_const(
            1,
            format!(
                "'repeats' must be a 1-D int64 tensor, it is {} {}",
                elem_str(c.elem()),
                ctx.show_dims(rs)
            ),
        ));
    }
    let repeats = ctx.const_ints(1)?.unwrap_or_default();
    if repeats.len() != rank {
        return Err(bad_const(
            1,
            format!(
                "'repeats' has {} values for an input of rank {rank}",
                repeats.len()
            ),
        ));
    }
    let mut out = Dims::with_capacity(rank);
    for (&d, &r) in shape.iter().zip(&repeats) {
        if r < 0 {
            return Err(bad_const(
                1,
                format!("'repeats' holds the negative value {r}"),
            ));
        }
        out.push(match d {
            Dim::Value(v) => Dim::Value(
                v.checked_mul(r)
                    .ok_or_else(|| failed(format!("the dimension {v} times {r} overflows")))?,
            ),
            _ => ctx.sym_mul(d, Dim::Value(r)).unwrap_or(Dim::Unknown),
        });
    }
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

/// A dim padded by `before + after`: a value grows (overflow fails), a dim
/// without value survives a total of 0, else becomes unknown.
/// With `symbolic`, a symbolic dim grows by the total (`h + 2`).
fn padded(ctx: &mut NodeCtx<'_, '_>, d: Dim, before: i64, after: i64) -> InferResult<Dim> {
    let total = checked_add(before, after, "the total padding")?;
    Ok(match d {
        Dim::Value(v) => Dim::Value(checked_add(v, total, "the padded dimension")?),
        _ if total == 0 => d,
        _ => ctx.sym_add(d, Dim::Value(total)).unwrap_or(Dim::Unknown),
    })
}

/// Every dim padded by `pads` (`[begins..., ends...]`, as many pairs as dims).
fn pad_all(ctx: &mut NodeCtx<'_, '_>, shape: &[Dim], pads: &[i64]) -> InferResult<Dims> {
    let n = shape.len();
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| padded(ctx, d, pads[i], pads[n + i]))
        .collect()
}

/// Pad 2: `pads` attribute.
fn pad_v2(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let Some(pads) = ctx.own_ints("pads") else {
        return Err(bad_attr("pads", "attribute 'pads' is needed"));
    };
    if pads.len() != shape.len().saturating_mul(2) {
        return Err(bad_attr(
            "pads",
            format!(
                "'pads' has {} values for an input of rank {}",
                pads.len(),
                shape.len()
            ),
        ));
    }
    let out = pad_all(ctx, shape, pads)?;
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

/// The constant `pads` input: 1-D int64 (onnx checks before reading it).
fn pads_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult<Vec<i64>> {
    let dims = ctx.const_dims(1).unwrap_or_default();
    let elem = constant(ctx, 1).map_or(0, |c| c.elem());
    if dims.len() != 1 || elem != 7 {
        return Err(bad_const(
            1,
            format!(
                "'pads' must be a 1-D int64 tensor, it is {} with dims {dims:?}",
                elem_str(elem)
            ),
        ));
    }
    Ok(ctx.const_ints(1)?.unwrap_or_default())
}

/// Pad 11 and 13: `pads` input, read when constant.
pub(super) fn pad_v11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let rank = shape.len();
    if constant(ctx, 1).is_none() {
        let all: Vec<usize> = (0..rank).collect();
        let out = padded_by_values(ctx, shape, &all).unwrap_or_else(|| unknown_dims(rank));
        // (Here onnx's rule takes the output's shape by getOutputShape,
        // which fails on an output its element propagation made a
        // container; with constant pads it writes in place.)
        if out.len() <= MAX_RANK {
            ctx.set_shape(0, out);
        }
        return Ok(());
    }
    let pads = pads_input(ctx)?;
    if pads.len() != rank.saturating_mul(2) {
        return Err(bad_const(
            1,
            format!(
                "'pads' has {} values for an input of rank {rank}",
                pads.len()
            ),
        ));
    }
    let out = pad_all(ctx, shape, &pads)?;
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

/// Pad 18 on: `pads` and `axes` inputs, read when constant.
fn pad(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let rank = shape.len();
    let axes: Vec<usize> = if ctx.shape(3).is_some() {
        let Some(values) = const_i64(ctx, 3)? else {
            return Ok(());
        };
        util::axes(&values, rank).map_err(|e| bad_const(3, e))?
    } else {
        (0..rank).collect()
    };
    let mut out = unknown_dims(rank);
    if constant(ctx, 1).is_none() {
        if let Some(padded) = padded_by_values(ctx, shape, &axes) {
            out = padded;
        }
    }
    if constant(ctx, 1).is_some() && !axes.is_empty() {
        let pads = pads_input(ctx)?;
        let n = axes.len();
        if pads.len() != n.saturating_mul(2) {
            return Err(bad_const(
                1,
                format!("'pads' has {} values for {n} axes", pads.len()),
            ));
        }
        for (slot, &d) in out.iter_mut().zip(shape) {
            if let Dim::Value(_) = d {
                *slot = d;
            }
        }
        for (k, &axis) in axes.iter().enumerate() {
            let d = shape[axis];
            let total = checked_add(pads[k], pads[n + k], "the total padding")?;
            match d {
                Dim::Value(v) => {
                    out[axis] = Dim::Value(checked_add(v, total, "the padded dimension")?)
                }
                _ if total == 0 => out[axis] = d,
                _ => {
                    if let Some(grown) = ctx.sym_add(d, Dim::Value(total)) {
                        out[axis] = grown;
                    }
                }
            }
        }
    }
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

/// With `symbolic` and `data_prop`: Pad with pads computed from shapes
/// (to a multiple of a window: `(7 - h % 7) % 7`), each padded axis grown
/// by its two pads (`7*floor((h + 6)/7)`), the others as they are.
/// `None` (onnx's unknown dims) when the pads have no values.
fn padded_by_values(ctx: &mut NodeCtx<'_, '_>, shape: &[Dim], axes: &[usize]) -> Option<Dims> {
    if !ctx.is_symbolic() {
        return None;
    }
    let pads = ctx.data(1)?.clone();
    let n = axes.len();
    if pads.len() != n.checked_mul(2)? {
        return None;
    }
    let mut out: Dims = shape.iter().copied().collect();
    for (k, &axis) in axes.iter().enumerate() {
        let d = *shape.get(axis)?;
        let total = ctx.sym_add(pads[k], pads[n + k]);
        let grown = total.and_then(|t| ctx.sym_add(d, t));
        *out.get_mut(axis)? = grown.unwrap_or(Dim::Unknown);
    }
    Some(out)
}

fn center_crop_pad(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    if constant(ctx, 1).is_none() || !const_has_data_type(ctx, 1) {
        return Ok(());
    }
    let sizes = const_indices(ctx, 1)?.unwrap_or_default();
    let rank = shape.len();
    let axes: Vec<usize> = match ctx.own_ints("axes") {
        Some(a) => check_axes(a, rank, "CenterCropPad 'axes'")?,
        None => (0..rank).collect(),
    };
    if sizes.len() != axes.len() {
        return Err(bad_const(
            1,
            format!("'shape' has {} values for {} axes", sizes.len(), axes.len()),
        ));
    }
    let mut out: Dims = shape.iter().copied().collect();
    for (&axis, &s) in axes.iter().zip(&sizes) {
        if let Some(slot) = out.get_mut(axis) {
            *slot = Dim::Value(s);
        }
    }
    set_dims(ctx, 0, out);
    Ok(())
}

// ---- Reshape --------------------------------------------------------------------

/// Reshape: the target shape from input 1 (`dynamic`, version 14 on: also
/// a non-constant input of known length, and `allowzero`).
fn reshape_shape(ctx: &mut NodeCtx<'_, '_>, dynamic: bool) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let target = if dynamic {
        shape_input(ctx, 1)?
    } else {
        match const_i64(ctx, 1)? {
            Some(v) => Some(util::dims_of(&v)),
            // Beyond onnx, whose Reshape 5 and 13 read a constant only: with
            // data_prop, the values data propagation computed (symbols
            // too), as Reshape 14 reads them. The operator is the same.
            None => ctx.data(1).cloned(),
        }
    };
    let Some(target) = target else {
        return Ok(());
    };
    let allow_zero = dynamic && narrow(ctx.own_int("allowzero", 0)) != 0;
    // onnx reads the data's shape and writes the output's as
    // `tensor_type().shape()`: a sequence or optional gives none and fails
    // nothing (its type check refuses it).
    let data = ctx.tensor_shape(0);
    let overflow = || failed("the product of the Reshape dimensions overflows");
    let mut out = Dims::with_capacity(target.len());
    let mut unresolved = vec![false; target.len()];
    let mut minus_one: Option<usize> = None;
    let mut product = 1i64;
    let mut product_known = true;
    for (i, &t) in target.iter().enumerate() {
        let v = match t {
            Dim::Value(v) => v,
            other => {
                out.push(if matches!(other, Dim::Sym(_)) {
                    other
                } else {
                    Dim::Unknown
                });
                product_known = false;
                continue;
            }
        };
        match v {
            -1 => {
                if minus_one.is_some() {
                    return Err(bad_const(1, "the target shape holds -1 more than once"));
                }
                minus_one = Some(i);
                out.push(Dim::Unknown);
            }
            0 if !allow_zero => {
                unresolved[i] = true;
                let mut d = Dim::Unknown;
                if let Some(data) = data {
                    let Some(&src) = data.get(i) else {
                        return Err(bad_shapes(format!(
                            "the target shape copies dimension {i} (a 0), but the input {} has \
                             rank {}",
                            ctx.show_dims(data),
                            data.len()
                        )));
                    };
                    match src {
                        Dim::Value(x) => {
                            d = src;
                            product = product.checked_mul(x).ok_or_else(overflow)?;
                            unresolved[i] = false;
                        }
                        Dim::Sym(_) => d = src,
                        Dim::Unknown => {}
                    }
                }
                out.push(d);
            }
            v if v >= 0 => {
                out.push(Dim::Value(v));
                product = product.checked_mul(v).ok_or_else(overflow)?;
            }
            v => {
                return Err(bad_const(
                    1,
                    format!("the target shape holds {v}, an invalid dimension"),
                ))
            }
        }
    }
    if let (Some(k), true) = (minus_one, product_known) {
        if product == 0 {
            return Err(bad_shapes(
                "the target shape has a -1 and other dimensions of product 0",
            ));
        }
        let mut input_product = Some(1i64);
        match data {
            None => input_product = None,
            Some(data) => {
                for (i, &d) in data.iter().enumerate() {
                    match (d, input_product) {
                        (Dim::Value(x), Some(p)) => {
                            input_product = Some(p.checked_mul(x).ok_or_else(overflow)?);
                        }
                        _ if unresolved.get(i).copied().unwrap_or(false) => {}
                        _ => {
                            input_product = None;
                            break;
                        }
                    }
                }
            }
        }
        if let Some(p) = input_product {
            match (p.checked_rem(product), p.checked_div(product)) {
                (Some(0), Some(q)) => out[k] = Dim::Value(q),
                _ => {
                    return Err(bad_shapes(format!(
                        "the input {} has {p} elements, which the target shape {} cannot hold",
                        data.map_or_else(String::new, |d| ctx.show_dims(d)),
                        ctx.show_dims(&out)
                    )))
                }
            }
        } else if let Some(data) = data {
            // With `symbolic`: `[-1, 768]` of `[B, S, 768]` is `[B*S, 768]`.
            let data: Dims = data.iter().copied().collect();
            if let Some(q) = symbolic_quotient(ctx, &data, &out, k) {
                out[k] = q;
            }
        }
    } else if let (Some(k), Some(data)) = (minus_one, data) {
        // A target computed by data propagation holds the model's symbols:
        // `[N, -1]` for an input `[N, 3, 4]` is `[N, 12]` (onnx leaves it
        // unknown).
        if let Some(q) = cancel_symbols(data, &out, k) {
            out[k] = Dim::Value(q);
        } else {
            // With `symbolic`: the quotient as an expression (`64*S`).
            let data: Dims = data.iter().copied().collect();
            if let Some(q) = symbolic_quotient(ctx, &data, &out, k) {
                out[k] = q;
            }
        }
    }
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

/// The `-1` of a Reshape target (at `k`) when the input's dims and the
/// other target dims are numbers and symbols, each symbol of the target
/// one of the input's and every input symbol matched: the quotient of the
/// numbers, when it divides.
fn cancel_symbols(input: &[Dim], target: &[Dim], k: usize) -> Option<i64> {
    let mut symbols: Vec<Dim> = Vec::new();
    let mut p = 1i64;
    for &d in input {
        match d {
            Dim::Value(v) => p = p.checked_mul(v)?,
            Dim::Sym(_) => symbols.push(d),
            Dim::Unknown => return None,
        }
    }
    let mut q = 1i64;
    for (i, &d) in target.iter().enumerate() {
        match d {
            _ if i == k => {}
            Dim::Value(v) => q = q.checked_mul(v)?,
            Dim::Sym(_) => {
                let at = symbols.iter().position(|&s| s == d)?;
                symbols.swap_remove(at);
            }
            Dim::Unknown => return None,
        }
    }
    if !symbols.is_empty() || q == 0 || p.checked_rem(q)? != 0 {
        return None;
    }
    p.checked_div(q)
}

/// The `-1` of a Reshape target (at `k`) as the input's element count over
/// the other target dims (`symbolic`): their symbols divided out exactly
/// as polynomials, then their numbers, as a floor where that does not
/// divide (`floor(h/3)`: the model is valid only when it divides); where
/// the symbols do not divide out, the count over their product as a floor
/// (`floor((s*b1)/b2)` for `[b2, -1]` of `[b1, s]`).
fn symbolic_quotient(
    ctx: &mut NodeCtx<'_, '_>,
    input: &[Dim],
    target: &[Dim],
    k: usize,
) -> Option<Dim> {
    let mut total = Dim::Value(1);
    for &d in input {
        total = ctx.sym_mul(total, d)?;
    }
    let (mut symbols, mut number) = (Dim::Value(1), 1i64);
    for (i, &d) in target.iter().enumerate() {
        match d {
            _ if i == k => {}
            Dim::Value(v) => number = number.checked_mul(v)?,
            Dim::Sym(_) => symbols = ctx.sym_mul(symbols, d)?,
            Dim::Unknown => return None,
        }
    }
    let Some(rest) = ctx.sym_div_exact(total, symbols) else {
        // Symbols that do not divide out (`[b2, -1]` of `[b1, s]`, two
        // batch symbols): the count over the other dims, rounded down.
        if number <= 0 {
            return None;
        }
        let others = ctx.sym_mul(symbols, Dim::Value(number))?;
        return ctx.sym_floor_div_by(total, others);
    };
    match ctx.sym_div_exact(rest, Dim::Value(number)) {
        Some(q) => Some(q),
        None if number > 0 => ctx.sym_floor_div(rest, number),
        None => None,
    }
}

fn reshape_v5(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    reshape_shape(ctx, false)
}

fn reshape(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    reshape_shape(ctx, true)
}

// ---- Resize, Upsample, GridSample, AffineGrid --------------------------------------

/// Each known dim times its scale, rounded down (onnx's
/// resizeShapeInferenceHelper_opset7_to_10); a symbolic dim as `symbolic`
/// gives it for its scale (see [`symbolic_scaled`]), else unknown.
fn scaled(
    shape: &[Dim],
    scales: &[f64],
    symbolic: &mut dyn FnMut(Dim, f64) -> Option<Dim>,
) -> Dims {
    shape
        .iter()
        .zip(scales)
        .map(|(&d, &s)| match d {
            Dim::Value(v) => Dim::Value(util::cast_i64((v as f64 * s).floor())),
            Dim::Sym(_) => symbolic(d, s).unwrap_or(Dim::Unknown),
            Dim::Unknown => Dim::Unknown,
        })
        .collect()
}

/// With `symbolic`: `floor(d * scale)` for a positive scale that is a
/// binary fraction `p/2^k`, `k <= 16`, `p < 2^31` (every float scale of 16
/// fraction bits or fewer): `2*h`, `floor(h/2)`, `floor((3*h)/4)`.
fn symbolic_scaled(ctx: &mut NodeCtx<'_, '_>, d: Dim, scale: f64) -> Option<Dim> {
    if !(scale > 0.0 && scale.is_finite()) {
        return None;
    }
    let (p, q) = (0..=16).find_map(|k: i32| {
        let q = 2f64.powi(k);
        let p = scale * q;
        (p.fract() == 0.0 && p < f64::from(i32::MAX)).then_some((p as i64, 1i64 << k))
    })?;
    let grown = ctx.sym_mul(d, Dim::Value(p))?;
    ctx.sym_floor_div(grown, q)
}

fn check_scale_count(n: usize, rank: usize, what: &str, i: usize) -> InferResult {
    if n != rank {
        return Err(bad_const(
            i,
            format!("{what} has {n} values for an input of rank {rank}"),
        ));
    }
    Ok(())
}

/// Upsample 7: `scales` attribute.
fn upsample_v7(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    ctx.propagate_elem(0, 0)?;
    let Some(scales) = ctx.attr("scales") else {
        return Err(bad_attr("scales", "attribute 'scales' is needed"));
    };
    let scales: Vec<f64> = scales.floats.iter().map(|&f| f64::from(f)).collect();
    if scales.len() != shape.len() {
        return Err(bad_attr(
            "scales",
            format!(
                "'scales' has {} values for an input of rank {}",
                scales.len(),
                shape.len()
            ),
        ));
    }
    let out = scaled(shape, &scales, &mut |d, k| symbolic_scaled(ctx, d, k));
    set_dims(ctx, 0, out);
    Ok(())
}

/// Upsample 9 and 10, Resize 10: `scales` input, read when constant.
fn resize_v10(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let out = match const_f32(ctx, 1, "'scales'")? {
        Some(scales) => {
            check_scale_count(scales.len(), shape.len(), "'scales'", 1)?;
            scaled(shape, &scales, &mut |d, k| symbolic_scaled(ctx, d, k))
        }
        None => unknown_dims(shape.len()),
    };
    set_dims(ctx, 0, out);
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum AspectPolicy {
    Stretch,
    NotLarger,
    NotSmaller,
}

/// Sizes adjusted to keep the input's aspect ratio (onnx's
/// KeepAspectRatioHelper): -1 for all when a resized dim is not known.
fn keep_aspect(policy: AspectPolicy, shape: &[Dim], axes: &[usize], sizes: &mut [i64]) {
    if policy == AspectPolicy::Stretch {
        return;
    }
    let dim_of = |i: usize| -> Option<i64> {
        let d = if axes.is_empty() { i } else { *axes.get(i)? };
        shape.get(d)?.value()
    };
    let mut scale = if policy == AspectPolicy::NotLarger {
        f64::MAX
    } else {
        f64::MIN
    };
    let mut unknown = false;
    for (i, &s) in sizes.iter().enumerate() {
        let Some(v) = dim_of(i) else {
            unknown = true;
            break;
        };
        let r = s as f64 / v as f64;
        scale = if policy == AspectPolicy::NotLarger {
            scale.min(r)
        } else {
            scale.max(r)
        };
    }
    for (i, s) in sizes.iter_mut().enumerate() {
        *s = match (unknown, dim_of(i)) {
            (false, Some(v)) => util::cast_i64((scale * v as f64).round()),
            _ => -1,
        };
    }
}

/// Resize 11 on (`one_of`: version 13 on, exactly one of `scales` and
/// `sizes` must be given).
fn resize_shape(ctx: &mut NodeCtx<'_, '_>, one_of: bool) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let rank = shape.len();
    // Given or not (onnx's hasInput), whatever their types.
    let mut has_scales = ctx.has_input(2);
    let mut has_sizes = ctx.has_input(3);
    let mut sizes: Vec<i64> = Vec::new();
    let mut size_dims = Dims::new();
    if ctx.n_inputs() > 3 {
        if let Some(s) = shape_input(ctx, 3)? {
            if s.is_empty() {
                has_sizes = false;
            } else {
                sizes = s.iter().map(|d| d.value().unwrap_or(0)).collect();
                size_dims = s;
            }
        }
    }
    let mut scales = if ctx.n_inputs() > 2 {
        const_f32(ctx, 2, "'scales'")?
    } else {
        None
    };
    if scales.as_ref().is_some_and(Vec::is_empty) {
        has_scales = false;
        scales = None;
    }
    if one_of && has_scales == has_sizes {
        return Err(failed(
            "exactly one of the 'scales' and 'sizes' inputs must be given",
        ));
    }
    let policy = match ctx
        .attr("keep_aspect_ratio_policy")
        .and_then(|a| a.s.as_deref())
    {
        None | Some(b"stretch") => AspectPolicy::Stretch,
        Some(b"not_larger") => AspectPolicy::NotLarger,
        Some(b"not_smaller") => AspectPolicy::NotSmaller,
        Some(other) => {
            return Err(bad_attr(
                "keep_aspect_ratio_policy",
                format!(
                    "'keep_aspect_ratio_policy' is \"{}\", not stretch, not_larger or not_smaller",
                    crate::diag::clean(&String::from_utf8_lossy(other))
                ),
            ))
        }
    };
    if has_scales && policy != AspectPolicy::Stretch {
        return Err(bad_attr(
            "keep_aspect_ratio_policy",
            "'scales' can only be given with keep_aspect_ratio_policy \"stretch\"",
        ));
    }
    let axes: Vec<usize> = match ctx.own_ints("axes") {
        Some(a) => check_axes(a, rank, "Resize 'axes'")?,
        None => Vec::new(),
    };
    let mut out = unknown_dims(rank);
    if has_sizes {
        let expected = if axes.is_empty() { rank } else { axes.len() };
        if sizes.len() != expected {
            return Err(bad_const(
                3,
                format!(
                    "'sizes' has {} values, it needs {expected} (the {})",
                    sizes.len(),
                    if axes.is_empty() {
                        "input's rank"
                    } else {
                        "number of axes"
                    }
                ),
            ));
        }
        keep_aspect(policy, shape, &axes, &mut sizes);
        if !axes.is_empty() {
            let mut all: Vec<i64> = shape.iter().map(|d| d.value().unwrap_or(-1)).collect();
            for (&a, &s) in axes.iter().zip(&sizes) {
                if let Some(slot) = all.get_mut(a) {
                    *slot = s;
                }
            }
            sizes = all;
        }
        for (slot, &s) in out.iter_mut().zip(&sizes) {
            if s > 0 {
                *slot = Dim::Value(s);
            }
        }
        if policy == AspectPolicy::Stretch && ctx.is_symbolic() {
            // With `symbolic`: sizes computed from the model's symbols, and
            // the dims of the axes not resized, are the output's.
            for (i, &d) in size_dims.iter().enumerate() {
                let axis = if axes.is_empty() {
                    Some(&i)
                } else {
                    axes.get(i)
                };
                if let (Dim::Sym(_), Some(slot)) = (d, axis.and_then(|&a| out.get_mut(a))) {
                    *slot = d;
                }
            }
            if !axes.is_empty() {
                for (a, (slot, &d)) in out.iter_mut().zip(shape).enumerate() {
                    if !axes.contains(&a) {
                        *slot = d;
                    }
                }
            }
        }
    } else if let Some(mut scales) = scales {
        if axes.is_empty() {
            check_scale_count(scales.len(), rank, "'scales'", 2)?;
        } else {
            if scales.len() != axes.len() {
                return Err(bad_const(
                    2,
                    format!(
                        "'scales' has {} values for {} axes",
                        scales.len(),
                        axes.len()
                    ),
                ));
            }
            let mut all = vec![1.0; rank];
            for (&a, &s) in axes.iter().zip(&scales) {
                if let Some(slot) = all.get_mut(a) {
                    *slot = s;
                }
            }
            scales = all;
        }
        out = scaled(shape, &scales, &mut |d, k| symbolic_scaled(ctx, d, k));
    }
    set_dims(ctx, 0, out);
    Ok(())
}

fn resize_v11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    resize_shape(ctx, false)
}

fn resize(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    resize_shape(ctx, true)
}

pub(super) fn grid_sample(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(x), Some(grid)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    if x.len() != grid.len() {
        return Err(bad_shapes(format!(
            "the input {} and the grid {} must have the same rank",
            ctx.show_dims(x),
            ctx.show_dims(grid)
        )));
    }
    let n = x.len();
    if n < 3 {
        return Err(bad_rank(
            0,
            format!("the input and the grid must have rank 3 or more, they have rank {n}"),
        ));
    }
    if let Dim::Value(v) = grid[n - 1] {
        if i64::try_from(n - 2).ok() != Some(v) {
            return Err(bad_shapes(format!(
                "the last dimension of the grid {} must be {} (its rank - 2)",
                ctx.show_dims(grid),
                n - 2
            )));
        }
    }
    let mut batch = Dim::Unknown;
    util::unify(x[0], &mut batch)
        .and_then(|()| util::unify(grid[0], &mut batch))
        .map_err(|e| {
            bad_shapes(format!(
                "the batch dimensions of the input {} and the grid {}: {e}",
                ctx.show_dims(x),
                ctx.show_dims(grid)
            ))
        })?;
    let out: Dims = [batch, x[1]]
        .into_iter()
        .chain(grid[1..n - 1].iter().copied())
        .collect();
    set_dims(ctx, 0, out);
    Ok(())
}

fn affine_grid(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if ctx.shape(0).is_none() {
        return Ok(());
    }
    util::check_rank(ctx, 1, 1)?;
    let Some(size) = shape_input(ctx, 1)? else {
        return Ok(());
    };
    let out: Dims = match size.len() {
        4 => [size[0], size[2], size[3], Dim::Value(2)]
            .into_iter()
            .collect(),
        5 => [size[0], size[2], size[3], size[4], Dim::Value(3)]
            .into_iter()
            .collect(),
        n => {
            return Err(bad_const(
                1,
                format!("'size' has {n} values, it must have 4 (2-D) or 5 (3-D)"),
            ))
        }
    };
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

// ---- Compress, OneHot, Unique -----------------------------------------------------

fn compress(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let axis = ctx.attr("axis");
    if let Some(shape) = ctx.shape(0) {
        if shape.is_empty() {
            return Err(bad_rank(0, "Compress needs an input of rank 1 or more"));
        }
        if let Some(a) = axis {
            let axis = attr_axis(narrow(a.i.unwrap_or(0)), shape.len(), "axis")?;
            let mut out: Dims = shape.iter().copied().collect();
            out[axis] = Dim::Unknown;
            set_dims(ctx, 0, out);
        }
    }
    if axis.is_none() {
        ctx.set_shape(0, [Dim::Unknown].into_iter().collect());
    }
    Ok(())
}

/// OneHot (`v9`: constant indices must not be negative).
fn one_hot_shape(ctx: &mut NodeCtx<'_, '_>, v9: bool) -> InferResult {
    if v9 {
        check_indices_not_negative(ctx)?;
    }
    let mut depth: Option<i64> = None;
    // onnx reads depth and values by getInputShape, indices in place.
    if let Some(ds) = ctx.input_shape(1) {
        if ds.len() > 1 {
            return Err(bad_rank(
                1,
                format!(
                    "'depth' must be a scalar or have rank 1, it is {}",
                    ctx.show_dims(ds)
                ),
            ));
        }
        if let Some(Dim::Value(n)) = ds.first() {
            if *n > 1 {
                return Err(bad_shapes(format!(
                    "'depth' must have at most one element, it is {}",
                    ctx.show_dims(ds)
                )));
            }
        }
        let elem = constant(ctx, 1).map(|c| c.elem());
        depth = match elem {
            Some(6 | 7) => ctx.const_ints(1)?.and_then(|v| v.first().copied()),
            Some(1) => ctx
                .const_floats(1)?
                .and_then(|v| v.first().map(|&f| util::cast_i64(f))),
            _ => None,
        };
        if let Some(d) = depth.filter(|&d| d < 0) {
            return Err(bad_const(
                1,
                format!("'depth' is {d}, it must not be negative"),
            ));
        }
    }
    if let Some(vs) = ctx.input_shape(2) {
        if vs.len() != 1 {
            return Err(bad_rank(
                2,
                format!("'values' must have rank 1, it is {}", ctx.show_dims(vs)),
            ));
        }
        if let Dim::Value(n) = vs[0] {
            if n != 2 {
                return Err(bad_shapes(format!(
                    "'values' must have two elements, it is {}",
                    ctx.show_dims(vs)
                )));
            }
        }
    }
    ctx.propagate_elem(2, 0)?;
    let Some(indices) = ctx.shape(0) else {
        return Ok(());
    };
    if indices.is_empty() {
        return Err(bad_rank(
            0,
            "'indices' must have rank 1 or more, it has rank 0",
        ));
    }
    let axis = attr_axis(narrow(ctx.own_int("axis", -1)), indices.len() + 1, "axis")?;
    let out: Dims = indices[..axis]
        .iter()
        .copied()
        .chain(std::iter::once(depth.map_or(Dim::Unknown, Dim::Value)))
        .chain(indices[axis..].iter().copied())
        .collect();
    set_dims(ctx, 0, out);
    Ok(())
}

/// OneHot 9: constant indices (int32, int64, float or double) must not be
/// negative.
fn check_indices_not_negative(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let elem = match constant(ctx, 0) {
        Some(c) if matches!(c.elem(), 1 | 6 | 7 | 11) => c.elem(),
        _ => return Ok(()),
    };
    let negative = if matches!(elem, 6 | 7) {
        ctx.const_ints(0)?.is_some_and(|v| v.iter().any(|&x| x < 0))
    } else {
        ctx.const_floats(0)?
            .is_some_and(|v| v.iter().any(|&x| x < 0.0))
    };
    if negative {
        return Err(bad_const(
            0,
            "OneHot before version 11 needs non-negative indices, these hold a negative one",
        ));
    }
    Ok(())
}

fn one_hot_v9(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    one_hot_shape(ctx, true)
}

fn one_hot(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    one_hot_shape(ctx, false)
}

fn unique(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    for i in 1..ctx.n_outputs().min(4) {
        ctx.set_tensor(i, 7, Some([Dim::Unknown].into_iter().collect()));
    }
    // onnx reads and writes these shapes as `tensor_type().shape()` (no
    // failure on a sequence or optional: its type check refuses it).
    let Some(a) = ctx.attr("axis") else {
        ctx.set_tensor_shape(0, [Dim::Unknown].into_iter().collect());
        return Ok(());
    };
    let Some(shape) = ctx.tensor_shape(0) else {
        return Ok(());
    };
    let axis = narrow(a.i.unwrap_or(0));
    let rank = i64::try_from(shape.len()).unwrap_or(i64::MAX);
    let adjusted = if axis < 0 { axis + rank } else { axis };
    let Some(axis) = usize::try_from(adjusted).ok().filter(|&x| x < shape.len()) else {
        return Err(bad_attr(
            "axis",
            format!(
                "axis {axis} is out of range for the input {}",
                ctx.show_dims(shape)
            ),
        ));
    };
    let mut out: Dims = shape.iter().copied().collect();
    out[axis] = Dim::Unknown;
    set_dims_in_place(ctx, 0, out);
    Ok(())
}

pub const OPS: &[Entry] = &[
    onnx("AffineGrid", 20, 20, affine_grid),
    onnx("BitCast", 26, 26, bit_cast),
    onnx("Cast", 6, 28, cast),
    onnx("CastLike", 15, 25, cast_like),
    onnx("CenterCropPad", 18, 18, center_crop_pad),
    onnx("Compress", 11, 28, compress),
    onnx("Concat", 4, 4, concat_v4),
    onnx("Concat", 11, 13, concat),
    onnx("DepthToSpace", 1, 28, depth_to_space),
    onnx("Gather", 1, 13, gather),
    onnx("GatherElements", 11, 13, gather_elements),
    onnx("GatherND", 11, 11, gather_nd_v11),
    onnx("GatherND", 12, 13, gather_nd),
    onnx("GridSample", 16, 22, grid_sample),
    onnx("Identity", 1, 25, identity),
    onnx("IsInf", 10, 20, bool_like_input),
    onnx("IsNaN", 9, 20, bool_like_input),
    onnx("NonZero", 9, 13, non_zero),
    onnx("OneHot", 9, 9, one_hot_v9),
    onnx("OneHot", 11, 28, one_hot),
    onnx("Pad", 2, 2, pad_v2),
    onnx("Pad", 11, 13, pad_v11),
    onnx("Pad", 18, 25, pad),
    onnx("Reshape", 5, 13, reshape_v5),
    onnx("Reshape", 14, 25, reshape),
    onnx("Resize", 10, 10, resize_v10),
    onnx("Resize", 11, 11, resize_v11),
    onnx("Resize", 13, 19, resize),
    onnx("ReverseSequence", 10, 28, reverse_sequence),
    onnx("Scatter", 9, 11, elem_and_shape),
    onnx("ScatterElements", 11, 18, elem_and_shape),
    onnx("ScatterND", 11, 18, elem_and_shape),
    onnx("Shape", 1, 13, shape_v1),
    onnx("Shape", 15, 25, shape_v15),
    onnx("Size", 1, 25, size),
    onnx("Slice", 1, 1, slice_v1),
    onnx("Slice", 10, 10, slice_v10),
    onnx("Slice", 11, 11, slice_v11),
    onnx("Slice", 13, 13, slice_v13),
    onnx("SpaceToDepth", 1, 28, space_to_depth),
    onnx("Split", 2, 11, split_v2),
    onnx("Split", 13, 13, split_v13),
    onnx("Split", 18, 18, split_v18),
    onnx("Squeeze", 1, 1, squeeze_v1),
    onnx("Squeeze", 11, 11, squeeze_v11),
    onnx("Squeeze", 13, 25, squeeze),
    onnx("TensorScatter", 24, 24, tensor_scatter),
    onnx("Tile", 1, 1, tile_v1),
    onnx("Tile", 6, 13, tile),
    onnx("Transpose", 1, 1, transpose_v1),
    onnx("Transpose", 13, 25, transpose),
    onnx("Trilu", 14, 14, trilu),
    onnx("Unique", 11, 28, unique),
    onnx("Unsqueeze", 1, 1, unsqueeze_v1),
    onnx("Unsqueeze", 11, 11, unsqueeze_v11),
    onnx("Unsqueeze", 13, 25, unsqueeze),
    onnx("Upsample", 7, 7, upsample_v7),
    onnx("Upsample", 9, 10, resize_v10),
    onnx("Where", 9, 16, where_rule),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: i64) -> Dim {
        Dim::Value(x)
    }

    #[test]
    fn unsqueeze_walk_skips_axes_it_never_reaches() {
        assert_eq!(
            unsqueeze_walk(&[v(2), v(3)], &[0, 3]).as_slice(),
            &[v(1), v(2), v(3), v(1)]
        );
        // Unsqueeze 1 does not check its axes: out of range ones are ignored.
        assert_eq!(unsqueeze_walk(&[v(2)], &[-1, 5]).as_slice(), &[v(2)]);
        // Unsqueeze 11 adjusts before a duplicate check of raw values: [0, -3] -> [0, 0].
        assert_eq!(unsqueeze_walk(&[v(2)], &[0, 0]).as_slice(), &[v(1), v(2)]);
    }

    #[test]
    fn slice_lengths_follow_onnx() {
        assert_eq!(clamp(5, 0, 3), 3);
        assert_eq!(clamp(-5, 0, 3), 0);
        // libstdc++'s clamp with lo > hi returns lo for values below it.
        assert_eq!(clamp(-2, -1, -2), -1);
        assert_eq!(slice_len(0, 10, 3), 4);
        assert_eq!(slice_len(9, -1, -2), 5);
        assert_eq!(slice_len(5, 2, 1), 0);
        assert_eq!(slice_len(i64::MIN, i64::MAX, 1), 0);
    }

    #[test]
    fn resize_helpers() {
        assert_eq!(
            scaled(
                &[v(4), Dim::Unknown, v(3)],
                &[2.5, 2.0, 0.5],
                &mut |_, _| None
            )
            .as_slice(),
            &[v(10), Dim::Unknown, v(1)]
        );
        let mut sizes = vec![8, 9];
        keep_aspect(
            AspectPolicy::NotLarger,
            &[v(1), v(3), v(4), v(6)],
            &[2, 3],
            &mut sizes,
        );
        assert_eq!(sizes, vec![6, 9]);
        let mut sizes = vec![8, 9];
        keep_aspect(
            AspectPolicy::NotSmaller,
            &[v(4), Dim::Unknown],
            &[],
            &mut sizes,
        );
        assert_eq!(sizes, vec![-1, -1]);
    }

    #[test]
    fn narrowing_to_int() {
        assert_eq!(narrow(1 << 32), 0);
        assert_eq!(narrow(-1), -1);
    }
}
