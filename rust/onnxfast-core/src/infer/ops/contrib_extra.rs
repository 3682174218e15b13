//! More of onnxruntime's own operators (`infer_shapes(contrib_ops=True)`),
//! beyond its transformer optimizer's and quantizers' ([`super::contrib`]):
//!
//! - those PyTorch writes with onnxruntime's export helpers
//!   (`GridSample` before opset 16, `Inverse`, `Trilu`), and its other
//!   tensor utilities (`ExpandDims`, `Range`, `Pad`, `GatherND`, `Unique`,
//!   `CDist`, `CropAndResize`, `UnfoldTensor`, `MaxpoolWithMask`, ...);
//! - its dynamic quantizer's `DynamicQuantizeLSTM` and the other integer or
//!   4-bit matmuls (`MatMulInteger16`, `MatMulBnb4`, `TransposeMatMul`);
//! - the experimental operators onnx dropped in opset 10 that older models
//!   still use (`ImageScaler`, `Crop`, `Scale`, `Affine`, `ScaledTanh`,
//!   `ParametricSoftplus`, `DynamicSlice`), which onnxruntime keeps in the
//!   default domain until opset 9;
//! - building blocks of recent LLMs (`GatedRMSNorm`, `GatedAdd`,
//!   `ScaledSiLU`, `BranchwiseRMSNorm`, `MRotaryEmbedding`,
//!   `LinearAttention`, `LinearAttentionGate`, `CausalConvWithState`,
//!   hyper-connections, `EngramGate`, `NGramHashMapping`), speculative
//!   decoding's `BifurcationDetector`, and the quantized
//!   `QEmbedLayerNormalization`.
//!
//! As in `contrib.rs`, each rule gives what onnxruntime's inference gives,
//! and where it gives nothing or its kernel returns another shape, what
//! the kernel returns (`Crop`, `CDist`, `CropAndResize`,
//! `WordConvEmbedding`, `ExpandDims` with a negative axis). Attributes
//! without which the kernel refuses to start are errors at the node.
//! Tested against `onnxruntime.InferenceSession` in `tests/test_contrib_ops.py`.

use super::Rule;
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::{bad_attr, bad_const, bad_rank, bad_shapes, failed};
use crate::ir::types::{Dim, Dims};

const FLOAT: i32 = 1;
const INT32: i32 = 6;
const INT64: i32 = 7;
const UINT32: i32 = 12;

/// The rule of onnxruntime's operator `op` of `domain` at opset `version`
/// of that domain, if this file has it.
pub fn rule(domain: &str, op: &str, version: i64) -> Option<Rule> {
    let r: Rule = match (domain, op) {
        // Experimental operators of onnx's first opsets: onnxruntime
        // deprecates them at opset 10 (a model of a later opset fails to
        // load; the checker reports E406).
        ("" | "ai.onnx", "ImageScaler") if version < 10 => image_scaler,
        ("" | "ai.onnx", "Scale" | "Affine") if version < 10 => same_as_input,
        ("" | "ai.onnx", "ScaledTanh" | "ParametricSoftplus") if version < 10 => alpha_beta,
        ("" | "ai.onnx", "Crop") if version < 10 => crop,
        // Slice-10 without steps.
        ("" | "ai.onnx", "DynamicSlice") if version < 10 => super::tensor::slice_v10,
        ("com.microsoft", "GridSample") => grid_sample,
        ("com.microsoft", "Inverse") => inverse,
        ("com.microsoft", "Trilu") => super::tensor::trilu,
        ("com.microsoft", "ExpandDims") => expand_dims,
        // onnx's GatherND 11 and Pad 11, under other names.
        ("com.microsoft", "GatherND") => super::tensor::gather_nd_v11,
        ("com.microsoft", "Pad") => super::tensor::pad_v11,
        ("com.microsoft", "Range") => range,
        ("com.microsoft", "Unique") => unique,
        ("com.microsoft", "CDist") => cdist,
        ("com.microsoft", "CropAndResize") => crop_and_resize,
        ("com.microsoft", "UnfoldTensor") => unfold_tensor,
        // onnx's MaxPool window (no dilations, floor).
        ("com.microsoft", "MaxpoolWithMask") => super::nn::pool_22,
        ("com.microsoft", "DynamicQuantizeLSTM") => dynamic_quantize_lstm,
        ("com.microsoft", "MatMulInteger16") => matmul_integer16,
        ("com.microsoft", "MatMulBnb4") => matmul_bnb4,
        // FusedMatMul without its batch transposes.
        ("com.microsoft", "TransposeMatMul") => super::contrib::fused_matmul,
        ("com.microsoft", "NGramRepeatBlock") => ngram_repeat_block,
        ("com.microsoft", "MurmurHash3") => murmur_hash3,
        ("com.microsoft", "WordConvEmbedding") => word_conv_embedding,
        (
            "com.microsoft",
            "GatedRMSNorm" | "GatedAdd" | "ScaledSiLU" | "BranchwiseRMSNorm" | "MRotaryEmbedding"
            | "SampleOp",
        ) => same_as_input,
        ("com.microsoft", "LinearAttentionGate") => linear_attention_gate,
        ("com.microsoft", "LinearAttention") => linear_attention,
        ("com.microsoft", "CausalConvWithState") => causal_conv_with_state,
        ("com.microsoft", "QEmbedLayerNormalization") => quantized_embed_layer_norm,
        ("com.microsoft", "HyperConnectionPreMix") => hyper_connection_pre_mix,
        ("com.microsoft", "HyperConnectionPostMix") => same_as_input,
        ("com.microsoft", "EngramGate") => engram_gate,
        ("com.microsoft", "NGramHashMapping") => ngram_hash_mapping,
        ("com.microsoft", "BifurcationDetector") => bifurcation_detector,
        _ => return None,
    };
    Some(r)
}

/// The output is input 0 (type and shape).
fn same_as_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)
}

/// The shape of input `i` when known, checked to have rank `rank`.
fn rank_of<'a>(
    ctx: &NodeCtx<'a, '_>,
    i: usize,
    rank: usize,
    what: &str,
) -> InferResult<Option<&'a [Dim]>> {
    match ctx.shape(i) {
        Some(s) if s.len() != rank => Err(bad_rank(
            i,
            format!(
                "{what} must have rank {rank}, it has shape {}",
                ctx.show_dims(s)
            ),
        )),
        s => Ok(s),
    }
}

/// Input 0 as (N, C, H, W), when its shape is known: the image operators'
/// kernels refuse fewer dims.
fn image<'a>(ctx: &NodeCtx<'a, '_>) -> InferResult<Option<&'a [Dim]>> {
    match ctx.shape(0) {
        Some(x) if x.len() < 4 => Err(bad_rank(
            0,
            format!(
                "the input must be (N, C, H, W), it has shape {}",
                ctx.show_dims(x)
            ),
        )),
        x => Ok(x),
    }
}

/// Dim `i` of `a` and dim `j` of `b` (each with how to name it) must be
/// one `what` when both are known.
fn same_dim(
    ctx: &NodeCtx<'_, '_>,
    (a, i, a_name): (&[Dim], usize, &str),
    (b, j, b_name): (&[Dim], usize, &str),
    what: &str,
) -> InferResult {
    match (a[i], b[j]) {
        (Dim::Value(x), Dim::Value(y)) if x != y => Err(bad_shapes(format!(
            "{a_name} {} and {b_name} {} must have one {what}",
            ctx.show_dims(a),
            ctx.show_dims(b)
        ))),
        _ => Ok(()),
    }
}

/// An attribute the kernel cannot start without.
fn required(ctx: &NodeCtx<'_, '_>, name: &str, what: &str) -> InferResult {
    match ctx.attr(name) {
        Some(_) => Ok(()),
        None => Err(bad_attr(
            name,
            format!(
                "{} needs its '{name}' attribute ({what}): onnxruntime's kernel refuses to \
                 start without it",
                ctx.node.op_type()
            ),
        )),
    }
}

/// ImageScaler: scale·x + bias[c] on (N, C, H, W); the kernel needs one
/// bias per channel.
fn image_scaler(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    required(ctx, "bias", "one value per channel")?;
    let Some(x) = image(ctx)? else {
        return Ok(());
    };
    let biases = ctx.attr("bias").map_or(0, |a| a.floats.len());
    if let Dim::Value(c) = x[1] {
        if i64::try_from(biases).ok() != Some(c) {
            return Err(bad_attr(
                "bias",
                format!(
                    "{biases} biases for the {c} channels of the input {}",
                    ctx.show_dims(x)
                ),
            ));
        }
    }
    Ok(())
}

/// ScaledTanh and ParametricSoftplus: α·f(β·x); the kernel needs both.
fn alpha_beta(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    required(ctx, "alpha", "its scale")?;
    required(ctx, "beta", "its input's scale")
}

/// Crop (N, C, H, W) by `border` (left, top, right, bottom), to `scale`
/// (height, width) from the top left corner when given: onnxruntime's
/// kernel's shape (its opset-1 schema has no inference).
fn crop(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let border = match ctx.own_ints("border") {
        Some(b) if b.len() >= 4 => [b[0], b[1], b[2], b[3]],
        _ => {
            return Err(bad_attr(
                "border",
                "Crop needs 'border' as four values (left, top, right, bottom)",
            ))
        }
    };
    let scale = match ctx.own_ints("scale") {
        None => None,
        Some(&[h, w, ..]) => Some((h, w)),
        Some(_) => {
            return Err(bad_attr(
                "scale",
                "Crop's 'scale' is two values (height, width)",
            ))
        }
    };
    if let Some(&v) = border.iter().find(|&&v| v < 0) {
        return Err(bad_attr(
            "border",
            format!("a border of {v}: borders cannot be negative"),
        ));
    }
    let Some(x) = image(ctx)? else {
        return Ok(());
    };
    if x.len() > 4 {
        return Ok(());
    }
    let [left, top, right, bottom] = border;
    let mut out: Dims = x.iter().copied().collect();
    for (k, first, last, size, what) in [
        (2, top, bottom, scale.map(|s| s.0), "height"),
        (3, left, right, scale.map(|s| s.1), "width"),
    ] {
        let cut = first
            .checked_add(last)
            .ok_or_else(|| failed("borders too large"))?;
        out[k] = match (x[k], size) {
            (Dim::Value(d), _) if d < cut => {
                return Err(bad_shapes(format!(
                    "the input's {what} {d} is less than its two borders ({first} + {last})"
                )))
            }
            (Dim::Value(d), Some(s)) if d < first.saturating_add(s) => {
                return Err(bad_shapes(format!(
                    "the input's {what} {d} is less than its border and scale ({first} + {s})"
                )))
            }
            (_, Some(s)) => Dim::Value(s),
            (Dim::Value(d), None) => Dim::Value(d - cut),
            (d, None) => super::contrib::plus(ctx, d, Dim::Value(-cut)),
        };
    }
    ctx.set_shape(0, out);
    Ok(())
}

/// onnxruntime's GridSample before onnx had one: 2-D only (rank 4), as
/// onnx's rule otherwise.
fn grid_sample(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    rank_of(ctx, 0, 4, "the input")?;
    rank_of(ctx, 1, 4, "the grid")?;
    super::tensor::grid_sample(ctx)
}

/// Inverse of the square matrices in the last two dims.
fn inverse(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    let [.., rows, cols] = x else {
        return Err(bad_rank(
            0,
            format!(
                "Inverse needs matrices (rank 2 or more), the input is {}",
                ctx.show_dims(x)
            ),
        ));
    };
    if let (Dim::Value(r), Dim::Value(c)) = (rows, cols) {
        if r != c {
            return Err(bad_shapes(format!(
                "Inverse needs square matrices, the input is {}",
                ctx.show_dims(x)
            )));
        }
    }
    Ok(())
}

/// ExpandDims: a 1 inserted at `axis` (input 1, a scalar), as the kernel
/// inserts it: before dim `axis`, or for a negative axis at `rank + 1 +
/// axis` (-1 appends). onnxruntime's inference inserts a negative axis one
/// place earlier than its kernel does; the kernel's shape is given.
fn expand_dims(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(x), Some(axis)) = (ctx.shape(0), ctx.const_ints(1)?) else {
        return Ok(());
    };
    let &[axis] = axis.as_slice() else {
        return Err(bad_const(
            1,
            format!("the axis must be one value, it is {axis:?}"),
        ));
    };
    let rank = i64::try_from(x.len()).unwrap_or(i64::MAX);
    let at = if axis < 0 { rank + 1 + axis } else { axis };
    let Some(at) = usize::try_from(at).ok().filter(|&a| a <= x.len()) else {
        return Err(bad_const(
            1,
            format!(
                "axis {axis} is out of range for the input {}",
                ctx.show_dims(x)
            ),
        ));
    };
    let mut out: Dims = x.iter().copied().collect();
    out.insert(at, Dim::Value(1));
    ctx.set_shape(0, out);
    Ok(())
}

/// onnxruntime's Range: onnx's, with `delta` optional (1).
fn range(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if ctx.has_input(2) {
        return super::generator::range(ctx);
    }
    ctx.propagate_elem(0, 0)?;
    let mut len = Dim::Unknown;
    if matches!(ctx.const_elem(0), Some(INT32 | INT64)) && ctx.const_elem(1) == ctx.const_elem(0) {
        let (start, limit) = (
            super::math::const_scalar(ctx, 0)?,
            super::math::const_scalar(ctx, 1)?,
        );
        len = Dim::Value(limit.saturating_sub(start).max(0));
    }
    ctx.set_shape(0, [len].into_iter().collect());
    Ok(())
}

/// onnxruntime's Unique of a 1-D input: the distinct values y (U), the
/// index in y of each input value (the input's shape), and the count of
/// each distinct value (U); the kernel takes 1-D inputs only.
fn unique(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let x = rank_of(ctx, 0, 1, "Unique's input")?;
    ctx.set_shape(0, [Dim::Unknown].into_iter().collect());
    for i in [1, 2] {
        if ctx.has_output(i) {
            let dims = match i {
                1 => x.map(|x| x.iter().copied().collect()),
                _ => Some([Dim::Unknown].into_iter().collect()),
            };
            ctx.set_tensor(i, INT64, dims);
        }
    }
    Ok(())
}

/// CDist: the distances between the rows of A (M, K) and of B (N, K),
/// (M, N), as the kernel returns them (onnxruntime's inference gives no
/// shape); the kernel computes the (squared) euclidean distance only.
fn cdist(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if let Some(metric) = ctx.own_str("metric") {
        if !matches!(metric, b"sqeuclidean" | b"euclidean") {
            return Err(bad_attr(
                "metric",
                format!(
                    "metric '{}': onnxruntime computes 'sqeuclidean' and 'euclidean' only",
                    String::from_utf8_lossy(metric)
                ),
            ));
        }
    }
    let (Some(a), Some(b)) = (rank_of(ctx, 0, 2, "A")?, rank_of(ctx, 1, 2, "B")?) else {
        return Ok(());
    };
    same_dim(ctx, (a, 1, "the rows of A"), (b, 1, "of B"), "length")?;
    ctx.set_shape(0, [a[0], b[0]].into_iter().collect());
    Ok(())
}

/// CropAndResize of X (N, C, H, W) to crop_size (h, w) for each box:
/// (boxes, C, h, w), as the kernel returns it (onnxruntime's inference
/// checks the ranks and gives no shape).
fn crop_and_resize(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let x = rank_of(ctx, 0, 4, "X")?;
    rank_of(ctx, 1, 2, "rois")?;
    let boxes = rank_of(ctx, 2, 1, "batch_indices")?;
    rank_of(ctx, 3, 1, "crop_size")?;
    let crop = match ctx.const_ints(3)? {
        Some(v) if v.len() == 2 => [Dim::Value(v[0]), Dim::Value(v[1])],
        Some(v) => {
            return Err(bad_const(
                3,
                format!("crop_size is (height, width), it is {v:?}"),
            ));
        }
        None => [Dim::Unknown; 2],
    };
    let boxes = boxes.map_or(Dim::Unknown, |b| b[0]);
    let channels = x.map_or(Dim::Unknown, |x| x[1]);
    ctx.set_shape(0, [boxes, channels, crop[0], crop[1]].into_iter().collect());
    Ok(())
}

/// UnfoldTensor: windows of `size` every `step` along `dim`: that dim
/// becomes the window count (d - size) / step + 1, and `size` is appended.
fn unfold_tensor(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let size = ctx.own_int("size", 0);
    let step = ctx.own_int("step", 1);
    if step <= 0 {
        return Err(bad_attr(
            "step",
            format!("step must be positive, it is {step}"),
        ));
    }
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    let axis = crate::infer::util::attr_axis(ctx.own_int("dim", -1), x.len(), "dim")?;
    let windows = match x[axis] {
        Dim::Value(d) if size <= 0 || size > d => {
            return Err(bad_attr(
                "size",
                format!("a window of {size} over a dimension of {d}"),
            ))
        }
        Dim::Value(d) => Dim::Value((d - size) / step + 1),
        _ => Dim::Unknown,
    };
    let mut out: Dims = x.iter().copied().collect();
    out[axis] = windows;
    out.push(Dim::Value(size));
    ctx.set_shape(0, out);
    Ok(())
}

/// DynamicQuantizeLSTM: onnx's LSTM outputs (Y, Y_h, Y_c) from X; the
/// kernel needs `hidden_size`.
fn dynamic_quantize_lstm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if ctx.own_int("hidden_size", 0) <= 0 {
        return Err(bad_attr(
            "hidden_size",
            "DynamicQuantizeLSTM needs a positive 'hidden_size': onnxruntime's kernel refuses \
             to start without it",
        ));
    }
    super::rnn::rnn_v7(ctx)
}

/// MatMulInteger16: int16 matmul to int32.
fn matmul_integer16(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_elem(0, INT32);
    super::math::matmul_shape(ctx, 0, 1)
}

/// MatMulBnb4: A (..., K) times the 4-bit (K, N) → (..., N); with
/// `transB` = 0 the roles of K and N swap, as onnxruntime's inference reads
/// them.
fn matmul_bnb4(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (k, n) = (ctx.own_int("K", 0), ctx.own_int("N", 0));
    let (inner, outer) = if ctx.own_int("transB", 1) != 0 {
        (k, n)
    } else {
        (n, k)
    };
    let Some(a) = ctx.shape(0) else {
        return Ok(());
    };
    let Some((last, rest)) = a.split_last() else {
        return Err(bad_rank(0, "A must have rank 1 or more, it is a scalar"));
    };
    if let Dim::Value(v) = last {
        if *v != inner {
            return Err(bad_shapes(format!(
                "A {} must end in {inner} (the quantized matrix is {k}×{n})",
                ctx.show_dims(a)
            )));
        }
    }
    let out: Dims = rest.iter().copied().chain([Dim::Value(outer)]).collect();
    ctx.set_shape(0, out);
    Ok(())
}

/// NGramRepeatBlock: the scores (batch, vocab) with repeated n-grams
/// blocked; the kernel needs input ids and scores of one batch.
fn ngram_repeat_block(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(1, 0)?;
    if ctx.own_int("ngram_size", 0) <= 0 {
        return Err(bad_attr("ngram_size", "ngram_size must be positive"));
    }
    let (Some(ids), Some(scores)) = (
        rank_of(ctx, 0, 2, "input_ids")?,
        rank_of(ctx, 1, 2, "scores")?,
    ) else {
        return Ok(());
    };
    same_dim(
        ctx,
        (ids, 0, "input_ids"),
        (scores, 0, "scores"),
        "batch size",
    )?;
    Ok(())
}

/// MurmurHash3 of each value: uint32 (`positive`, the default) or int32.
fn murmur_hash3(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let elem = if ctx.own_int("positive", 1) == 1 {
        UINT32
    } else {
        INT32
    };
    let dims = ctx.shape(0).map(|s| s.iter().copied().collect());
    ctx.set_tensor(0, elem, dims);
    Ok(())
}

/// WordConvEmbedding: an embedding per word of Sequence (words, chars),
/// (words, W's first dim), as the kernel returns it.
fn word_conv_embedding(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let words = ctx.shape(0).and_then(|s| s.first().copied());
    let size = ctx.shape(1).and_then(|s| s.first().copied());
    let dims = match (words, size) {
        (Some(w), Some(s)) => Some([w, s].into_iter().collect()),
        _ => None,
    };
    ctx.set_tensor(0, FLOAT, dims);
    Ok(())
}

/// LinearAttentionGate: decay (a's type and shape) and beta (b's shape,
/// which needs b).
fn linear_attention_gate(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    if !ctx.has_output(1) {
        return Ok(());
    }
    if !ctx.has_input(3) {
        return Err(failed("the beta output needs the b input"));
    }
    ctx.propagate_elem(0, 1)?;
    if let Some(b) = ctx.shape(3) {
        let dims: Dims = b.iter().copied().collect();
        ctx.set_shape(1, dims);
    }
    Ok(())
}

/// LinearAttention of query (B, S, Hq·dk), key and value (B, S, Hkv·dv):
/// output (B, S, max(Hq, Hkv)·dv) and present_state (B, Hkv, dk, dv) (of
/// past_state's type when given); with a `state_window` the state has a
/// leading window dim this rule leaves unknown.
fn linear_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if ctx.has_output(1) {
        ctx.propagate_elem(if ctx.has_input(3) { 3 } else { 0 }, 1)?;
    }
    let (hq, hkv) = (
        ctx.own_int("q_num_heads", 0),
        ctx.own_int("kv_num_heads", 0),
    );
    if hq <= 0 || hkv <= 0 {
        let name = if hq <= 0 {
            "q_num_heads"
        } else {
            "kv_num_heads"
        };
        return Err(bad_attr(name, format!("{name} must be positive")));
    }
    let (Some(q), Some(v)) = (
        rank_of(ctx, 0, 3, "the query")?,
        rank_of(ctx, 2, 3, "the value")?,
    ) else {
        return Ok(());
    };
    for (i, x, heads, what) in [(0, q, hq, "q_num_heads"), (2, v, hkv, "kv_num_heads")] {
        if let Dim::Value(d) = x[2] {
            if d % heads != 0 {
                return Err(bad_shapes(format!(
                    "input {i}'s hidden size {d} is not a multiple of {what} ({heads})"
                )));
            }
        }
    }
    let dk = super::nn::divided(ctx, q[2], hq)?;
    let dv = super::nn::divided(ctx, v[2], hkv)?;
    let hidden = super::nn::times(ctx, dv, hq.max(hkv))?;
    ctx.set_shape(0, [q[0], q[1], hidden].into_iter().collect());
    if ctx.has_output(1) && ctx.own_int("state_window", 0) == 0 {
        ctx.set_shape(1, [q[0], Dim::Value(hkv), dk, dv].into_iter().collect());
    }
    Ok(())
}

/// CausalConvWithState (depthwise causal 1-D convolution of (B, C, L), or
/// (B, L, C) with `channels_last`, weights (C, 1, K)): the output is the
/// input's shape; the present state holds the last (K - 1)·dilation steps,
/// (B, C, (K - 1)·dilation) or (B, (K - 1)·dilation, C). Its newer layout
/// attributes (`state_length`, `state_channels_last`, `input_channels`, a
/// state window or update capacity) leave the state's shape unknown.
fn causal_conv_with_state(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    for out in [1, 2] {
        if ctx.has_output(out) {
            ctx.propagate_elem(0, out)?;
        }
    }
    let dilation = ctx.own_int("dilation", 1);
    if dilation < 1 {
        return Err(bad_attr(
            "dilation",
            format!("dilation must be 1 or more, it is {dilation}"),
        ));
    }
    let layout = [
        "state_length",
        "state_channels_last",
        "input_channels",
        "input_channel_offset",
        "state_window",
        "state_update_capacity",
    ];
    if ctx.own_int("ndim", 1) != 1 || layout.iter().any(|a| ctx.own_int(a, 0) != 0) {
        return Ok(());
    }
    let (Some(x), Some(w)) = (
        rank_of(ctx, 0, 3, "the input")?,
        rank_of(ctx, 1, 3, "the weights")?,
    ) else {
        return Ok(());
    };
    let steps = match w[2] {
        Dim::Value(k) if k >= 1 => Dim::Value((k - 1).saturating_mul(dilation)),
        Dim::Value(k) => return Err(bad_shapes(format!("a kernel of {k} steps"))),
        _ => Dim::Unknown,
    };
    let state = match ctx.own_int("channels_last", 0) {
        0 => [x[0], x[1], steps],
        _ => [x[0], steps, x[2]],
    };
    ctx.set_shape(1, state.into_iter().collect());
    Ok(())
}

/// QEmbedLayerNormalization: EmbedLayerNormalization of quantized tables,
/// whose output is float.
fn quantized_embed_layer_norm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    super::contrib::embed_layer_norm(ctx)?;
    ctx.set_elem(0, FLOAT);
    Ok(())
}

/// HyperConnectionPreMix: the C streams of (..., C, H) (or flattened
/// (..., C·H) with `num_branches` = C) mixed into one (..., H).
fn hyper_connection_pre_mix(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    let branches = ctx.own_int("num_branches", 0);
    let (keep, hidden) = match (x, branches) {
        ([rest @ .., _, h], 0) => (rest, *h),
        ([rest @ .., flat], c) if c > 0 => {
            if let Dim::Value(v) = flat {
                if v % c != 0 {
                    return Err(bad_shapes(format!(
                        "the flattened streams {} do not split into {c} branches",
                        ctx.show_dims(x)
                    )));
                }
            }
            (rest, super::nn::divided(ctx, *flat, c)?)
        }
        _ => {
            return Err(bad_rank(
                0,
                format!("the streams {} have too few dims", ctx.show_dims(x)),
            ))
        }
    };
    let out: Dims = keep.iter().copied().chain([hidden]).collect();
    ctx.set_shape(0, out);
    Ok(())
}

/// EngramGate: the output and the gated, normalized value have the key's
/// shape (rank 4).
fn engram_gate(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let key = rank_of(ctx, 0, 4, "the key")?.map(|k| k.iter().copied().collect::<Dims>());
    for out in [0, 1] {
        if ctx.has_output(out) {
            ctx.propagate_elem(0, out)?;
            if let Some(k) = &key {
                ctx.set_shape(out, k.clone());
            }
        }
    }
    Ok(())
}

/// NGramHashMapping of input_ids (B, S): hash ids (B, S, (n - 1)·heads)
/// for n-grams up to `max_ngram_size` = n with `n_head_per_ngram` heads
/// each, and the present ids (B, n - 1) carried to the next call.
fn ngram_hash_mapping(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let (n, heads) = (
        ctx.own_int("max_ngram_size", 0),
        ctx.own_int("n_head_per_ngram", 0),
    );
    if n < 2 {
        return Err(bad_attr(
            "max_ngram_size",
            "max_ngram_size must be at least 2",
        ));
    }
    if heads <= 0 {
        return Err(bad_attr(
            "n_head_per_ngram",
            "n_head_per_ngram must be positive",
        ));
    }
    let per = (n - 1).checked_mul(heads).ok_or_else(|| {
        bad_attr(
            "n_head_per_ngram",
            "(max_ngram_size - 1) · n_head_per_ngram overflows",
        )
    })?;
    for out in [0, 1] {
        if ctx.has_output(out) {
            ctx.propagate_elem(0, out)?;
        }
    }
    let Some(ids) = rank_of(ctx, 0, 2, "input_ids")? else {
        return Ok(());
    };
    ctx.set_shape(0, [ids[0], ids[1], Dim::Value(per)].into_iter().collect());
    if ctx.has_output(1) {
        ctx.set_shape(1, [ids[0], Dim::Value(n - 1)].into_iter().collect());
    }
    Ok(())
}

/// BifurcationDetector: the tokens (1-D, of cur_tokens' type; their
/// length depends on the values) and the suffix match index (as
/// prev_suffix_match_idx).
fn bifurcation_detector(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(1, 0)?;
    ctx.set_shape(0, [Dim::Unknown].into_iter().collect());
    if ctx.has_output(1) {
        ctx.propagate_type(2, 1)?;
    }
    Ok(())
}
