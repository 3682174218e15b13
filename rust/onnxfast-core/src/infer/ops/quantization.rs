//! Rules of onnx's `quantization` family: QuantizeLinear, DequantizeLinear,
//! DynamicQuantizeLinear. Outputs have the shape of input `x` (read as
//! onnx's rules read it: hasInputShape, getInputShape, updateOutputShape).

use super::generator::{as_data_type, dtype_attr};
use super::{onnx, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::bad_attr;
use crate::ir::types::{elem_name, Dims, Type};

/// The element type the node's `output_dtype` names (0 when unset).
fn output_dtype(ctx: &NodeCtx<'_, '_>) -> i32 {
    ctx.attr("output_dtype")
        .map_or(0, |a| as_data_type(a.i.unwrap_or(0)))
}

fn type_name(code: i32) -> String {
    elem_name(code).map_or_else(|| code.to_string(), str::to_string)
}

/// QuantizeLinear 10 to 19: the zero point's type, else uint8 when there is
/// no zero point.
pub(super) fn quantize_v10(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
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
    ctx.set_elem(0, 1);
    ctx.update_shape_from_input(0, 0);
    Ok(())
}

/// DequantizeLinear 19 and 21: the scale's type.
pub(super) fn dequantize_v19(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(1, 0)?;
    ctx.update_shape_from_input(0, 0);
    Ok(())
}

/// DequantizeLinear 23 and later: `output_dtype`, else the scale's type.
fn dequantize(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
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
