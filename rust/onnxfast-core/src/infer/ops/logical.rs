//! Rules of onnx's `logical` family: comparisons and boolean operators
//! (bool output), bitwise operators (the input's type).

use super::math::{binary_broadcast, same_as_input};
use super::{onnx, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util;

/// Bool output with input 0's shape (opset 1, before broadcasting; Not).
fn bool_like_first(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_elem(0, 9);
    ctx.propagate_shape(0, 0);
    Ok(())
}

/// Bool output, shape broadcast from inputs 0 and 1.
fn bool_broadcast(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_elem(0, 9);
    util::broadcast_inputs(ctx, 0..2)
}

pub const OPS: &[Entry] = &[
    onnx("Not", 1, 1, bool_like_first),
    onnx("And", 1, 1, bool_like_first),
    onnx("Or", 1, 1, bool_like_first),
    onnx("Xor", 1, 1, bool_like_first),
    onnx("Equal", 1, 1, bool_like_first),
    onnx("Greater", 1, 1, bool_like_first),
    onnx("Less", 1, 1, bool_like_first),
    onnx("And", 7, 7, bool_broadcast),
    onnx("Or", 7, 7, bool_broadcast),
    onnx("Xor", 7, 7, bool_broadcast),
    onnx("Equal", 7, 19, bool_broadcast),
    onnx("Greater", 7, 13, bool_broadcast),
    onnx("Less", 7, 13, bool_broadcast),
    onnx("GreaterOrEqual", 16, 16, bool_broadcast),
    onnx("LessOrEqual", 16, 16, bool_broadcast),
    onnx("BitShift", 11, 28, binary_broadcast),
    onnx("BitwiseAnd", 18, 18, binary_broadcast),
    onnx("BitwiseOr", 18, 18, binary_broadcast),
    onnx("BitwiseXor", 18, 18, binary_broadcast),
    onnx("BitwiseNot", 18, 18, same_as_input),
];
