//! Rules of onnx's `quantization` family: QuantizeLinear, DequantizeLinear,
//! DynamicQuantizeLinear. Outputs have the shape of input `x` (read as
//! onnx's rules read it: hasInputShape, getInputShape, updateOutputShape).

use super::generator::{as_data_type, dtype_attr};
use super::{onnx, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::{bad_attr, bad_shapes};
use crate::ir::types::{elem_name, Dim, Dims, Type};

/// The element type the node's `output_dtype` names (0 when unset).
fn output_dtype(ctx: &NodeCtx<'_, '_>) -> i32 {
    ctx.attr("output_dtype")
        .map_or(0, |a| as_data_type(a.i.unwrap_or(0)))
}

fn type_name(code: i32) -> String {
    elem_name(code).map_or_else(|| code.to_string(), str::to_string)
}

/// What onnxruntime's QuantizeLinear and DequantizeLinear kernels refuse
/// where the shapes tell, checked when the model is checked as onnxruntime
/// runs it ([`NodeCtx::runtime_checks`]; onnx's rules do not look, and
/// onnxruntime loads such a model and fails on its first run). A scale is a
/// scalar or a one-element vector (per tensor), a block scale (`block_size`,
/// not checked here), or else a 1-D tensor of `x`'s dim on `axis` (per
/// axis); a zero point has the scale's shape.
fn runtime_scale(ctx: &NodeCtx<'_, '_>) -> InferResult {
    if !ctx.runtime_checks() {
        return Ok(());
    }
    let (Some(x), Some(scale)) = (ctx.input_shape(0), ctx.input_shape(1)) else {
        return Ok(());
    };
    let per_tensor = match scale {
        [] => true,
        [d] => *d == Dim::Value(1),
        _ => false,
    };
    if per_tensor || ctx.int_or("block_size", 0) != 0 {
        return Ok(());
    }
    let rank = x.len() as i64;
    let axis = ctx.int_or("axis", 1);
    let at = if axis < 0 {
        axis.checked_add(rank)
    } else {
        Some(axis)
    };
    let Some((at, dim)) = at
        .and_then(|a| usize::try_from(a).ok())
        .and_then(|a| Some((a, x.get(a)?)))
    else {
        return Err(bad_attr(
            "axis",
            format!(
                "the scale {} is per axis and 'axis' is {axis}, out of range for x of \
                 rank {rank}: onnxruntime's kernel refuses it",
                ctx.show_dims(scale)
            ),
        ));
    };
    let fits = match (scale, dim) {
        ([Dim::Value(k)], Dim::Value(n)) => k == n,
        ([_], _) => true,
        _ => false,
    };
    if !fits {
        return Err(bad_shapes(format!(
            "the scale {} is neither a scalar nor a 1-D tensor of x's dim {at} ({}): \
             onnxruntime's kernel refuses it",
            ctx.show_dims(scale),
            ctx.show_dims(std::slice::from_ref(dim))
                .trim_matches(['[', ']']),
        )));
    }
    if let Some(zero) = ctx.has_input(2).then(|| ctx.input_shape(2)).flatten() {
        let known = |d: &[Dim]| d.iter().all(|d| matches!(d, Dim::Value(_)));
        if known(zero) && known(scale) && zero != scale {
            return Err(bad_shapes(format!(
                "the zero point {} is not the scale's shape {}: onnxruntime's kernel \
                 refuses it",
                ctx.show_dims(zero),
                ctx.show_dims(scale)
            )));
        }
    }
    Ok(())
}

/// QuantizeLinear 10 to 19: the zero point's type, else uint8 when there is
/// no zero point.
pub(super) fn quantize_v10(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    runtime_scale(ctx)?;
    if !ctx.has_input(2) {
        ctx.set_elem(0, 2);
    } else if ctx.has_type(2) {
        ctx.propagate_elem(2, 0)?;
    }
    ctx.update_shape_from_input(0, 0);
    Ok(())
}

/// QuantizeLinear 21 and later: the zero point's type, which must agree
/// with `output_dtype` when both are given; else `output_dtype`; else
/// uint8 when there is no zero point.
fn quantize(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    runtime_scale(ctx)?;
    let dtype = output_dtype(ctx);
    let zp = if ctx.has_input(2) { ctx.ty(2) } else { None };
    if let Some(zp) = zp {
        let zp_elem = match zp {
            Type::Tensor(t) | Type::SparseTensor(t) => t.elem,
            _ => 0,
        };
        if dtype != 0 && dtype != zp_elem {
            return Err(bad_attr(
                "output_dtype",
                format!(
                    "output_dtype is {} but the zero point is {}: they must agree",
                    type_name(dtype),
                    type_name(zp_elem)
                ),
            ));
        }
        ctx.propagate_elem(2, 0)?;
    } else if dtype != 0 {
        let elem = dtype_attr(ctx, "output_dtype", None)?;
        ctx.set_elem(0, elem);
    } else if !ctx.has_input(2) {
        ctx.set_elem(0, 2);
    }
    ctx.update_shape_from_input(0, 0);
    Ok(())
}

/// DequantizeLinear 10 and 13: float.
fn dequantize_v10(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    runtime_scale(ctx)?;
    ctx.set_elem(0, 1);
    ctx.update_shape_from_input(0, 0);
    Ok(())
}

/// DequantizeLinear 19 and 21: the scale's type.
pub(super) fn dequantize_v19(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    runtime_scale(ctx)?;
    ctx.propagate_elem(1, 0)?;
    ctx.update_shape_from_input(0, 0);
    Ok(())
}

/// DequantizeLinear 23 and later: `output_dtype`, else the scale's type.
fn dequantize(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    runtime_scale(ctx)?;
    if output_dtype(ctx) != 0 {
        let elem = dtype_attr(ctx, "output_dtype", None)?;
        ctx.set_elem(0, elem);
    } else {
        ctx.propagate_elem(1, 0)?;
    }
    ctx.update_shape_from_input(0, 0);
    Ok(())
}

/// y: uint8 of x's shape; y_scale: float scalar; y_zero_point: uint8 scalar.
fn dynamic_quantize(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_elem(0, 2);
    ctx.set_tensor(1, 1, Some(Dims::new()));
    ctx.set_tensor(2, 2, Some(Dims::new()));
    ctx.update_shape_from_input(0, 0);
    Ok(())
}

pub const OPS: &[Entry] = &[
    onnx("QuantizeLinear", 10, 19, quantize_v10),
    onnx("QuantizeLinear", 21, 28, quantize),
    onnx("DequantizeLinear", 10, 13, dequantize_v10),
    onnx("DequantizeLinear", 19, 21, dequantize_v19),
    onnx("DequantizeLinear", 23, 28, dequantize),
    onnx("DynamicQuantizeLinear", 11, 11, dynamic_quantize),
];
