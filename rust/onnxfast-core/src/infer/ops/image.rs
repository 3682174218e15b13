//! Rules of onnx's `image` family.

use super::{onnx, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::bad_rank;
use crate::ir::types::Dim;

/// A 1-D encoded image in, a uint8 tensor of rank 3 out (sizes unknown).
fn image_decoder(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if let Some(s) = ctx.shape(0) {
        if s.len() != 1 {
            return Err(bad_rank(
                0,
                format!(
                    "the encoded image must be 1-D; it has shape {}",
                    ctx.show_dims(s)
                ),
            ));
        }
    }
    ctx.set_tensor(0, 2, Some([Dim::Unknown; 3].into_iter().collect()));
    Ok(())
}

pub const OPS: &[Entry] = &[onnx("ImageDecoder", 20, 20, image_decoder)];
