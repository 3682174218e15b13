//! Rules of onnx's `rnn` family: RNN, GRU, LSTM. Every output has input X's
//! element type; the shapes come from X's dims, `direction` and
//! `hidden_size`.

use super::{onnx, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::bad_rank;
use crate::ir::types::{Dim, Dims};

/// The dims the outputs are built from.
struct RnnDims {
    seq_length: Dim,
    batch_size: Dim,
    num_directions: Dim,
    hidden_size: Dim,
    /// Batch first (`layout` = 1, version 14 and later).
    batch_first: bool,
}

/// Reads the attributes and X's shape (rank 3, when known).
fn rnn_dims(ctx: &NodeCtx<'_, '_>, has_layout: bool) -> InferResult<RnnDims> {
    let direction = match ctx.attr("direction") {
        Some(a) => a.s.as_deref().unwrap_or_default(),
        None => b"forward",
    };
    let num_directions = match direction {
        b"forward" | b"reverse" => Dim::Value(1),
        b"bidirectional" => Dim::Value(2),
        _ => Dim::Unknown,
    };
    let hidden_size = match ctx.attr("hidden_size").map(|a| a.i.unwrap_or(0)) {
        Some(h) if h > 0 => Dim::Value(h),
        _ => Dim::Unknown,
    };
    let batch_first = has_layout && ctx.attr("layout").is_some_and(|a| a.i.unwrap_or(0) != 0);
    let (mut seq_length, mut batch_size) = (Dim::Unknown, Dim::Unknown);
    if let Some(s) = ctx.shape(0) {
        let &[d0, d1, _] = s else {
            return Err(bad_rank(
                0,
                format!(
                    "input X must have rank 3; it has shape {}",
                    ctx.show_dims(s)
                ),
            ));
        };
        (seq_length, batch_size) = if batch_first { (d1, d0) } else { (d0, d1) };
    }
    Ok(RnnDims {
        seq_length,
        batch_size,
        num_directions,
        hidden_size,
        batch_first,
    })
}

impl RnnDims {
    /// Y: [seq_length, num_directions, batch_size, hidden_size] (or batch
    /// first).
    fn y(&self) -> Dims {
        let d = [
            self.seq_length,
            self.num_directions,
            self.batch_size,
            self.hidden_size,
        ];
        if self.batch_first {
            [d[2], d[0], d[1], d[3]].into_iter().collect()
        } else {
            d.into_iter().collect()
        }
    }

    /// Y_h, Y_c: [num_directions, batch_size, hidden_size] (or batch first).
    fn state(&self) -> Dims {
        let d = [self.num_directions, self.batch_size, self.hidden_size];
        if self.batch_first {
            [d[1], d[0], d[2]].into_iter().collect()
        } else {
            d.into_iter().collect()
        }
    }
}

/// Versions 1 to 6 (GRU 3 to 6): shapes only with `output_sequence`.
fn rnn_v1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let dims = rnn_dims(ctx, false)?;
    let n = ctx.n_outputs().min(3);
    for i in 0..n {
        ctx.propagate_elem(0, i)?;
    }
    if ctx
        .attr("output_sequence")
        .is_some_and(|a| a.i.unwrap_or(0) != 0)
    {
        for i in 0..n {
            ctx.set_shape(i, if i == 0 { dims.y() } else { dims.state() });
        }
    }
    Ok(())
}

/// Versions 7 and later (`layout` from version 14).
fn rnn_outputs(ctx: &mut NodeCtx<'_, '_>, has_layout: bool) -> InferResult {
    let dims = rnn_dims(ctx, has_layout)?;
    for i in 0..ctx.n_outputs().min(3) {
        ctx.propagate_elem(0, i)?;
        ctx.set_shape(i, if i == 0 { dims.y() } else { dims.state() });
    }
    Ok(())
}

pub(super) fn rnn_v7(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    rnn_outputs(ctx, false)
}

fn rnn(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    rnn_outputs(ctx, true)
}

pub const OPS: &[Entry] = &[
    onnx("RNN", 1, 1, rnn_v1),
    onnx("LSTM", 1, 1, rnn_v1),
    onnx("GRU", 3, 3, rnn_v1),
    onnx("RNN", 7, 7, rnn_v7),
    onnx("LSTM", 7, 7, rnn_v7),
    onnx("GRU", 7, 7, rnn_v7),
    onnx("RNN", 14, 22, rnn),
    onnx("LSTM", 14, 22, rnn),
    onnx("GRU", 14, 22, rnn),
];
