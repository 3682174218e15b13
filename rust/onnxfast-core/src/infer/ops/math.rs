//! Rules of onnx's `math` family: element-wise arithmetic and activations,
//! matrix products, reductions along an axis, windows and spectral ops.

use super::{onnx, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::{self, bad_shapes};
use crate::ir::types::{Dim, Dims};

/// Output 0 is input 0 (type and shape): unary element-wise operators.
pub fn same_as_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)
}

/// Element type of input 0; shape broadcast from inputs 0 and 1.
pub fn binary_broadcast(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    util::broadcast_inputs(ctx, 0..2)
}

/// Element type of input 0; shape broadcast from every input (Sum, Max, ...).
pub fn variadic_broadcast(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let n = ctx.n_inputs();
    util::broadcast_inputs(ctx, 0..n)
}

/// The shape of a matrix product of inputs `a` and `b` (numpy matmul):
/// 1-D operands are promoted, the batch dims broadcast.
pub fn matmul_shape(ctx: &mut NodeCtx<'_, '_>, a: usize, b: usize) -> InferResult {
    let (Some(s0), Some(s1)) = (ctx.shape(a), ctx.shape(b)) else {
        return Ok(());
    };
    if s0.is_empty() || s1.is_empty() {
        return Err(util::bad_rank(
            if s0.is_empty() { a } else { b },
            "a matrix product needs inputs of rank 1 or more, one has rank 0",
        ));
    }
    let left: Dims = if s0.len() == 1 {
        [Dim::Value(1), s0[0]].into_iter().collect()
    } else {
        s0.iter().copied().collect()
    };
    let right: Dims = if s1.len() == 1 {
        [s1[0], Dim::Value(1)].into_iter().collect()
    } else {
        s1.iter().copied().collect()
    };
    let (k0, k1) = (left[left.len() - 1], right[right.len() - 2]);
    if let (Dim::Value(x), Dim::Value(y)) = (k0, k1) {
        if x != y {
            return Err(bad_shapes(format!(
                "matrix product of {} and {}: the inner dimensions {x} and {y} differ",
                ctx.show_dims(s0),
                ctx.show_dims(s1)
            )));
        }
    }
    let mut out =
        util::broadcast(&[&left[..left.len() - 2], &right[..right.len() - 2]]).map_err(|e| {
            bad_shapes(format!(
                "matrix product of {} and {}: the batch dimensions do not broadcast: {e}",
                ctx.show_dims(s0),
                ctx.show_dims(s1)
            ))
        })?;
    if s0.len() != 1 {
        out.push(left[left.len() - 2]);
    }
    if s1.len() != 1 {
        out.push(right[right.len() - 1]);
    }
    ctx.set_shape(0, out);
    Ok(())
}

fn matmul(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    matmul_shape(ctx, 0, 1)
}

pub const OPS: &[Entry] = &[
    // Unary element-wise: same type and shape as the input.
    onnx("Abs", 6, 13, same_as_input),
    onnx("Acos", 7, 22, same_as_input),
    onnx("Acosh", 9, 22, same_as_input),
    onnx("Asin", 7, 22, same_as_input),
    onnx("Asinh", 9, 22, same_as_input),
    onnx("Atan", 7, 22, same_as_input),
    onnx("Atanh", 9, 22, same_as_input),
    onnx("Ceil", 6, 13, same_as_input),
    onnx("Cos", 7, 22, same_as_input),
    onnx("Cosh", 9, 22, same_as_input),
    onnx("Erf", 9, 13, same_as_input),
    onnx("Exp", 6, 13, same_as_input),
    onnx("Floor", 6, 13, same_as_input),
    onnx("Log", 6, 13, same_as_input),
    onnx("Neg", 6, 13, same_as_input),
    onnx("Reciprocal", 6, 13, same_as_input),
    onnx("Relu", 6, 14, same_as_input),
    onnx("Round", 11, 22, same_as_input),
    onnx("Sigmoid", 6, 13, same_as_input),
    onnx("Sign", 9, 13, same_as_input),
    onnx("Sin", 7, 22, same_as_input),
    onnx("Sinh", 9, 22, same_as_input),
    onnx("Sqrt", 6, 13, same_as_input),
    onnx("Tan", 7, 22, same_as_input),
    onnx("Tanh", 6, 13, same_as_input),
    // Binary with numpy broadcasting.
    onnx("Add", 7, 14, binary_broadcast),
    onnx("Sub", 7, 14, binary_broadcast),
    onnx("Mul", 7, 14, binary_broadcast),
    onnx("Div", 7, 14, binary_broadcast),
    // Variadic with broadcasting.
    onnx("Sum", 8, 13, variadic_broadcast),
    onnx("Mean", 8, 13, variadic_broadcast),
    onnx("Max", 8, 13, variadic_broadcast),
    onnx("Min", 8, 13, variadic_broadcast),
    onnx("MatMul", 9, 13, matmul),
];
