//! Rules of onnx's `text` family: string operators.

use super::{onnx, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::{self, bad_shapes};
use crate::ir::types::{Dim, Dims, Type, MAX_RANK};

/// Strings of the broadcast shape of both inputs.
fn string_concat(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    util::broadcast_inputs(ctx, 0..2)
}

/// Booleans of the input's shape.
fn regex_full_match(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.need_or_empty(0)?;
    ctx.set_elem(0, 9);
    ctx.shape_copy_unguarded(0, 0)?;
    ctx.propagate_shape(0, 0);
    Ok(())
}

/// Substrings [*X, max count] and their counts [*X], when X is a string
/// tensor of known shape.
fn string_split(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let Some(Type::Tensor(t)) = ctx.ty(0) else {
        return Ok(());
    };
    let (8, Some(shape)) = (t.elem, &t.shape) else {
        return Ok(());
    };
    let substrings = (shape.len() < MAX_RANK).then(|| {
        let mut dims = shape.clone();
        dims.push(Dim::Unknown);
        dims
    });
    ctx.set_tensor(0, 8, substrings);
    ctx.set_tensor(1, 7, Some(shape.clone()));
    Ok(())
}

/// Strings of shape [C'] from [C], or [1, C'] from [1, C].
fn string_normalizer(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_elem(0, 8);
    let Some(s) = ctx.shape(0) else {
        return Ok(());
    };
    let dims: Dims = match s {
        [_] => [Dim::Unknown].into_iter().collect(),
        [one @ Dim::Value(1), _] => [*one, Dim::Unknown].into_iter().collect(),
        _ => {
            return Err(bad_shapes(format!(
                "the input must have shape [C] or [1, C]; it has shape {}",
                ctx.show_dims(s)
            )))
        }
    };
    ctx.set_shape(0, dims);
    Ok(())
}

pub const OPS: &[Entry] = &[
    onnx("StringConcat", 20, 20, string_concat),
    onnx("RegexFullMatch", 20, 20, regex_full_match),
    onnx("StringSplit", 20, 20, string_split),
    onnx("StringNormalizer", 10, 10, string_normalizer),
];
