//! Rules of onnx's `reduction` family: Reduce* along axes, ArgMax / ArgMin
//! along one axis.

use super::math::const_i64s;
use super::{onnx, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::{bad_attr, failed};
use crate::ir::types::{Dim, Dims};

/// How a version of Reduce* treats its axes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Axes {
    /// Opset 1 (and ReduceMax/Min-11): out-of-range axes are not refused,
    /// they reduce nothing.
    Lenient,
    /// An attribute, each axis in `[-rank, rank)`.
    Checked,
    /// Opset 13 onward: as `Checked`, or a constant input (axes 1), with
    /// `noop_with_empty_axes`.
    Input,
}

/// The output dims of a reduction over `axes` (in range, non-negative;
/// empty means every axis): a reduced dim is 1 with `keep`, else dropped.
fn reduced(shape: &[Dim], axes: &[usize], keep: bool) -> Dims {
    let mut hit = vec![axes.is_empty(); shape.len()];
    for &a in axes {
        if let Some(h) = hit.get_mut(a) {
            *h = true;
        }
    }
    shape
        .iter()
        .zip(hit)
        .filter_map(|(&d, h)| match (h, keep) {
            (false, _) => Some(d),
            (true, true) => Some(Dim::Value(1)),
            (true, false) => None,
        })
        .collect()
}

fn reduce(ctx: &mut NodeCtx<'_, '_>, mode: Axes) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    // onnx keeps a dim only for keepdims == 1 exactly.
    let keep = ctx.attr("keepdims").map_or(1, |a| a.i.unwrap_or(0)) == 1;
    let attr_axes = ctx.attr("axes").map(|a| a.ints.as_slice());
    let axes: Vec<i64> = if mode == Axes::Input && ctx.has_input(1) {
        if attr_axes.is_some() {
            return Err(bad_attr(
                "axes",
                "axes are given both as an input and as an attribute",
            ));
        }
        match const_i64s(ctx, 1)? {
            Some(v) => v,
            None => return Ok(()),
        }
    } else {
        attr_axes.map(<[i64]>::to_vec).unwrap_or_default()
    };
    if mode == Axes::Input && ctx.own_int("noop_with_empty_axes", 0) != 0 && axes.is_empty() {
        ctx.propagate_shape(0, 0);
        return Ok(());
    }
    let rank = shape.len() as i64;
    let mut normalized = Vec::with_capacity(axes.len());
    for &a in &axes {
        if mode != Axes::Lenient && (a < -rank || a >= rank) {
            return Err(failed(format!(
                "axis {a} is out of range for rank {rank} (expected [{}, {rank}))",
                -rank
            )));
        }
        let a = if a < 0 { a.saturating_add(rank) } else { a };
        // Out-of-range axes (lenient versions) match no dim.
        normalized.push(usize::try_from(a).unwrap_or(usize::MAX));
    }
    let out = reduced(shape, &normalized, keep);
    // (onnx writes it as `mutable_tensor_type()->mutable_shape()`.)
    ctx.set_tensor_shape(0, out);
    Ok(())
}

fn reduce_lenient(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    reduce(ctx, Axes::Lenient)
}

fn reduce_checked(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    reduce(ctx, Axes::Checked)
}

fn reduce_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    reduce(ctx, Axes::Input)
}

/// ArgMax / ArgMin: int64 indices, `axis` (the node's, else 0) reduced.
fn arg_reduce(ctx: &mut NodeCtx<'_, '_>, checked: bool) -> InferResult {
    ctx.set_elem(0, 7);
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let rank = shape.len() as i64;
    let axis = match ctx.attr("axis") {
        None => 0,
        Some(a) => {
            let v = a.i.unwrap_or(0);
            if checked && (v < -rank || v >= rank) {
                return Err(bad_attr(
                    "axis",
                    format!(
                        "axis {v} is out of range for rank {rank} (expected [{}, {rank}))",
                        -rank
                    ),
                ));
            }
            if v < 0 {
                v.saturating_add(rank)
            } else {
                v
            }
        }
    };
    let keep = ctx.attr("keepdims").map_or(1, |a| a.i.unwrap_or(0)) == 1;
    let axes: &[usize] = match usize::try_from(axis) {
        Ok(a) if a < shape.len() => &[a],
        // An axis out of range (opset 1) reduces nothing.
        _ => &[usize::MAX],
    };
    let out = reduced(shape, axes, keep);
    ctx.set_shape(0, out);
    Ok(())
}

fn arg_reduce1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    arg_reduce(ctx, false)
}

fn arg_reduce11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    arg_reduce(ctx, true)
}

pub const OPS: &[Entry] = &[
    onnx("ArgMax", 1, 1, arg_reduce1),
    onnx("ArgMin", 1, 1, arg_reduce1),
    onnx("ArgMax", 11, 13, arg_reduce11),
    onnx("ArgMin", 11, 13, arg_reduce11),
    // Opset 1; ReduceMax and ReduceMin kept that rule in opset 11.
    onnx("ReduceL1", 1, 1, reduce_lenient),
    onnx("ReduceL2", 1, 1, reduce_lenient),
    onnx("ReduceLogSum", 1, 1, reduce_lenient),
    onnx("ReduceLogSumExp", 1, 1, reduce_lenient),
    onnx("ReduceMax", 1, 11, reduce_lenient),
    onnx("ReduceMean", 1, 1, reduce_lenient),
    onnx("ReduceMin", 1, 11, reduce_lenient),
    onnx("ReduceProd", 1, 1, reduce_lenient),
    onnx("ReduceSum", 1, 1, reduce_lenient),
    onnx("ReduceSumSquare", 1, 1, reduce_lenient),
    // Opset 11 (12 for ReduceMax / ReduceMin): axes checked.
    onnx("ReduceL1", 11, 11, reduce_checked),
    onnx("ReduceL2", 11, 11, reduce_checked),
    onnx("ReduceLogSum", 11, 11, reduce_checked),
    onnx("ReduceLogSumExp", 11, 11, reduce_checked),
    onnx("ReduceMax", 12, 12, reduce_checked),
    onnx("ReduceMean", 11, 11, reduce_checked),
    onnx("ReduceMin", 12, 12, reduce_checked),
    onnx("ReduceProd", 11, 11, reduce_checked),
    onnx("ReduceSum", 11, 11, reduce_checked),
    onnx("ReduceSumSquare", 11, 11, reduce_checked),
    // Opset 13 onward (axes an attribute until 18, ReduceSum 13).
    onnx("ReduceL1", 13, 18, reduce_input),
    onnx("ReduceL2", 13, 18, reduce_input),
    onnx("ReduceLogSum", 13, 28, reduce_input),
    onnx("ReduceLogSumExp", 13, 28, reduce_input),
    onnx("ReduceMax", 13, 20, reduce_input),
    onnx("ReduceMean", 13, 18, reduce_input),
    onnx("ReduceMin", 13, 20, reduce_input),
    onnx("ReduceProd", 13, 18, reduce_input),
    onnx("ReduceSum", 13, 13, reduce_input),
    onnx("ReduceSumSquare", 13, 18, reduce_input),
];
