//! Rules of onnx's `object_detection` family: RoiAlign, NonMaxSuppression.

use super::{onnx, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::{self, bad_shapes, check_rank};
use crate::ir::types::Dim;

/// Dim `k` of input `i`, unified into `target` (onnx's unifyInputDim), when
/// the input's shape is known.
fn unify_input_dim(ctx: &NodeCtx<'_, '_>, i: usize, k: usize, target: &mut Dim) -> InferResult {
    let Some(s) = ctx.shape(i) else {
        return Ok(());
    };
    let Some(&d) = s.get(k) else {
        return Ok(());
    };
    util::unify(d, target).map_err(|e| {
        bad_shapes(format!(
            "dimension {k} of input {i} (shape {}) disagrees with the other inputs: {e}",
            ctx.show_dims(s)
        ))
    })
}

/// Input X [N, C, H, W], rois [num_rois, 4], batch_indices [num_rois];
/// output [num_rois, C, output_height, output_width]. `rois_four`: the
/// rois' second dim must be 4 (version 22).
fn roi_align_shape(ctx: &mut NodeCtx<'_, '_>, rois_four: bool) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    check_rank(ctx, 0, 4)?;
    check_rank(ctx, 1, 2)?;
    check_rank(ctx, 2, 1)?;
    let (mut num_rois, mut channels) = (Dim::Unknown, Dim::Unknown);
    unify_input_dim(ctx, 0, 1, &mut channels)?;
    unify_input_dim(ctx, 1, 0, &mut num_rois)?;
    if rois_four {
        let mut four = Dim::Value(4);
        unify_input_dim(ctx, 1, 1, &mut four)?;
    }
    unify_input_dim(ctx, 2, 0, &mut num_rois)?;
    let size = |name: &str| match ctx.attr(name) {
        Some(a) => a.i.unwrap_or(0),
        None => 1,
    };
    let (height, width) = (size("output_height"), size("output_width"));
    ctx.set_shape(
        0,
        [num_rois, channels, Dim::Value(height), Dim::Value(width)]
            .into_iter()
            .collect(),
    );
    Ok(())
}

fn roi_align_v10(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    roi_align_shape(ctx, false)
}

fn roi_align(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    roi_align_shape(ctx, true)
}

/// NonMaxSuppression 10: int64 indices, shape not inferred.
fn nms_v10(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_elem(0, 7);
    Ok(())
}

/// int64 selected indices [num_selected, 3].
fn nms(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_tensor(
        0,
        7,
        Some([Dim::Unknown, Dim::Value(3)].into_iter().collect()),
    );
    Ok(())
}

pub const OPS: &[Entry] = &[
    onnx("RoiAlign", 10, 16, roi_align_v10),
    onnx("RoiAlign", 22, 22, roi_align),
    onnx("NonMaxSuppression", 10, 10, nms_v10),
    onnx("NonMaxSuppression", 11, 11, nms),
];
