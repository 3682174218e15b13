//! onnxruntime's own operators (`infer_shapes(contrib_ops=True)`): the
//! com.microsoft operators its transformer optimizer and quantizers write
//! (fused attention, skip layer norms, 4-bit matmuls, ...), and those it
//! adds to the default domain. onnx has no schema for any of them, so its
//! inference leaves their outputs untyped and stops checking the graph
//! after the first.
//!
//! Each rule gives what onnxruntime's own type and shape inference gives
//! (`onnxruntime/core/graph/contrib_ops/`), and more where its kernels fix
//! a dim its inference leaves unknown (a present key's length, `past +
//! seq`, as an expression with `symbolic`); where the two disagree, the
//! shape the kernel returns. Rules refuse what onnxruntime's inference
//! refuses (a quantized matmul whose `K` is not the input's last dim, an
//! attention query of the wrong rank). Tested against
//! `onnxruntime.InferenceSession` (its inferred output types and the shapes
//! of the arrays it returns at several sizes) and, for operators without a
//! CPU kernel, onnxruntime's `symbolic_shape_infer.py`.
//!
//! Their schemas are onnxruntime's own (`data/ort_schemas.txt`,
//! `SchemaRegistry::contrib`): a node that does not fit its schema is not
//! inferred (the checker reports why), and the engine checks its types
//! against the schema's constraints after the rule, as for onnx's.

use super::nn::Layout;
use super::Rule;
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::{attr_axis, bad_attr, bad_const, bad_rank, bad_shapes, failed};
use crate::ir::types::{elem_name, Dim, Dims, Type};

const FLOAT: i32 = 1;
const INT32: i32 = 6;
const UINT8: i32 = 2;

/// The rule of onnxruntime's operator `op` of `domain`, at opset `version`
/// of that domain.
pub fn rule(domain: &str, op: &str, version: i64) -> Option<Rule> {
    let r: Rule = match (domain, op) {
        ("com.microsoft", "SkipLayerNormalization" | "SkipSimplifiedLayerNormalization") => {
            skip_layer_norm
        }
        (
            "com.microsoft",
            "FastGelu" | "BiasGelu" | "Gelu" | "QuickGelu" | "BiasAdd" | "RotaryEmbedding"
            | "GroupNorm",
        ) => first_input,
        // Mixture of experts: the output is the input's shape.
        ("com.microsoft", "MoE" | "QMoE") => first_input,
        ("com.microsoft", "RemovePadding") => remove_padding,
        ("com.microsoft", "RestorePadding") => restore_padding,
        ("com.microsoft", "RelativePositionBias") => relative_position_bias,
        ("com.microsoft", "GatedRelativePositionBias") => gated_relative_position_bias,
        // Generation loops around a decoder (and an encoder) graph.
        ("com.microsoft", "BeamSearch") => beam_search,
        ("com.microsoft", "WhisperBeamSearch") => whisper_beam_search,
        ("com.microsoft", "GreedySearch" | "Sampling") => greedy_search,
        ("com.microsoft", "MatMulNBits") => matmul_nbits,
        ("com.microsoft", "GroupQueryAttention") => group_query_attention,
        ("com.microsoft", "SparseAttention") => sparse_attention,
        ("com.microsoft", "PackedAttention") => packed_attention,
        ("com.microsoft", "PackedMultiHeadAttention") => packed_multi_head_attention,
        ("com.microsoft", "MultiHeadAttention") => multi_head_attention,
        ("com.microsoft", "DecoderMaskedMultiHeadAttention") => decoder_masked_multi_head_attention,
        ("com.microsoft", "Attention") => attention,
        ("com.microsoft", "EmbedLayerNormalization") => embed_layer_norm,
        ("com.microsoft", "GatherBlockQuantized") => gather_block_quantized,
        ("com.microsoft", "SkipGroupNorm") => skip_group_norm,
        ("com.microsoft", "BiasSplitGelu") => bias_split_gelu,
        ("com.microsoft", "GemmFastGelu") => gemm_fast_gelu,
        ("com.microsoft", "FusedMatMul") => fused_matmul,
        // As onnx's QuantizeLinear 10-19 and DequantizeLinear 19-21.
        ("com.microsoft", "QuantizeLinear") => super::quantization::quantize_v10,
        ("com.microsoft", "DequantizeLinear") => super::quantization::dequantize_v19,
        ("com.microsoft", "QLinearAdd" | "QLinearMul") => qlinear_binary,
        ("com.microsoft", "QLinearSigmoid" | "QLinearLeakyRelu" | "QLinearSoftmax") => first_input,
        ("com.microsoft", "QLinearConcat") => qlinear_concat,
        ("com.microsoft", "QLinearGlobalAveragePool") => qlinear_global_average_pool,
        ("com.microsoft", "DynamicQuantizeMatMul") => dynamic_quantize_matmul,
        ("com.microsoft", "MatMulIntegerToFloat") => matmul_integer_to_float,
        ("com.microsoft", "QGemm") => qgemm,
        ("com.microsoft", "QAttention") => quantized_attention,
        ("com.microsoft", "QLinearAveragePool") => qlinear_average_pool,
        ("com.microsoft", "QLinearConv") => qlinear_conv,
        ("com.microsoft", "QLinearWhere") => qlinear_where,
        // The graph optimizer's fusions of an activation into Conv and
        // Gemm (and a sum into Conv: input Z), shaped as onnx's operators.
        ("com.microsoft", "FusedConv") => super::nn::conv_22,
        ("com.microsoft", "FusedGemm") => super::math::gemm13,
        // Its NHWC layout transformer's operators.
        ("com.microsoft", "NhwcConv") => super::nn::conv_channels_last,
        ("com.microsoft", "NhwcMaxPool") => nhwc_max_pool,
        // The NCHWc layout of its highest optimization level (float models).
        ("com.microsoft.nchwc", "ReorderInput") => nchwc_reorder_input,
        ("com.microsoft.nchwc", "ReorderOutput") => nchwc_reorder_output,
        ("com.microsoft.nchwc", "Conv") => super::nn::conv_22,
        // onnx's window rule (onnxruntime infers them with onnx's).
        ("com.microsoft.nchwc", "MaxPool" | "AveragePool") => super::nn::pool_22,
        ("com.microsoft.nchwc", "GlobalMaxPool" | "GlobalAveragePool") => super::nn::global_pool,
        ("com.microsoft.nchwc", "Upsample") => nchwc_upsample,
        ("" | "ai.onnx", "SimplifiedLayerNormalization") => simplified_layer_norm,
        // onnx has LayerNormalization from opset 17; onnxruntime serves
        // older opsets with its own, the same operator.
        ("" | "ai.onnx", "LayerNormalization") if version < 17 => super::nn::layer_norm,
        _ => return super::contrib_extra::rule(domain, op, version),
    };
    Some(r)
}

/// `a + b`: the value when both are known, an expression with `symbolic`.
pub(super) fn plus(ctx: &mut NodeCtx<'_, '_>, a: Dim, b: Dim) -> Dim {
    match (a, b) {
        (Dim::Value(x), Dim::Value(y)) => x.checked_add(y).map_or(Dim::Unknown, Dim::Value),
        _ => ctx.sym_add(a, b).unwrap_or(Dim::Unknown),
    }
}

/// `a * k`: the value when known, an expression with `symbolic`.
fn times(ctx: &mut NodeCtx<'_, '_>, a: Dim, k: i64) -> Dim {
    match a {
        Dim::Value(x) => x.checked_mul(k).map_or(Dim::Unknown, Dim::Value),
        Dim::Unknown => Dim::Unknown,
        _ => ctx.sym_mul(a, Dim::Value(k)).unwrap_or(Dim::Unknown),
    }
}

/// `a / k` for a dim `k` divides (the model's promise): the value when
/// known (a defect when `k` does not divide it), an expression with
/// `symbolic`.
fn over(ctx: &mut NodeCtx<'_, '_>, a: Dim, k: i64, what: &str) -> InferResult<Dim> {
    if k <= 0 {
        return Err(failed(format!("{what}: cannot divide by {k}")));
    }
    Ok(match a {
        Dim::Value(x) if x % k == 0 => Dim::Value(x / k),
        Dim::Value(x) => return Err(bad_shapes(format!("{what}: {x} is not a multiple of {k}"))),
        Dim::Unknown => Dim::Unknown,
        _ => ctx.sym_div_exact(a, Dim::Value(k)).unwrap_or(Dim::Unknown),
    })
}

/// `dims` with its last dim set to 1.
fn last_to_one(dims: &[Dim]) -> Dims {
    let mut out: Dims = dims.iter().copied().collect();
    if let Some(last) = out.last_mut() {
        *last = Dim::Value(1);
    }
    out
}

/// An INT attribute the operator requires.
fn required_int(ctx: &NodeCtx<'_, '_>, name: &str) -> InferResult<i64> {
    match ctx.attr(name).and_then(|a| a.i) {
        Some(v) => Ok(v),
        None => Err(bad_attr(
            name,
            format!("the attribute '{name}' is required"),
        )),
    }
}

/// An output that is input 0, type and shape (the activations, BiasAdd,
/// RotaryEmbedding).
fn first_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)
}

/// SkipGroupNorm: `Y` and the sum `S` (output 1) are the input.
fn skip_group_norm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    if ctx.has_output(1) {
        ctx.propagate_type(0, 1)?;
    }
    Ok(())
}

/// BiasSplitGelu: (N, S, D) and a bias (D) → (N, S, D/2).
fn bias_split_gelu(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ranked(ctx, 0, &[3], "the input")? else {
        return Ok(());
    };
    let half = match ctx.shape(1) {
        Some([d]) => over(ctx, *d, 2, "the bias's size")?,
        _ => over(ctx, x[2], 2, "the input's last dim")?,
    };
    ctx.set_shape(0, [x[0], x[1], half].into_iter().collect());
    Ok(())
}

/// GemmFastGelu: FastGelu(MatMul(X, W) + bias): the matrix product's shape
/// and X's element type.
fn gemm_fast_gelu(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    super::math::matmul_shape(ctx, 0, 1)
}

/// `dims` with its last two dims swapped (rank 2 or more).
/// A FusedMatMul operand as multiplied: a vector as it is; else its batch
/// dims and matrix, which are (dims 0 to rank - 3; the last two) or, with
/// `trans_batch`, (dims 1 to rank - 2; dim 0 and the last), as
/// onnxruntime's kernel and inference read them; the matrix transposed
/// with `trans`.
fn fused_operand(dims: &[Dim], trans: bool, trans_batch: bool) -> Dims {
    let n = dims.len();
    if n < 2 {
        return dims.iter().copied().collect();
    }
    let (batch, rows, cols) = if trans_batch {
        (&dims[1..n - 1], dims[0], dims[n - 1])
    } else {
        (&dims[..n - 2], dims[n - 2], dims[n - 1])
    };
    let mut out: Dims = batch.iter().copied().collect();
    if trans {
        out.extend([cols, rows]);
    } else {
        out.extend([rows, cols]);
    }
    out
}

/// FusedMatMul: `alpha`·A·B with A or B transposed first (`transA`,
/// `transB`: their matrices transposed; `transBatchA`, `transBatchB`: their
/// first dim taken as the matrix's rows, see [`fused_operand`]); the
/// matrix product's shape, A's element type.
pub(super) fn fused_matmul(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(a), Some(b)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    if a.is_empty() || b.is_empty() {
        return Err(bad_shapes("A and B must have rank 1 or more"));
    }
    let flag = |name: &str| ctx.own_int(name, 0) != 0;
    let a = fused_operand(a, flag("transA"), flag("transBatchA"));
    let b = fused_operand(b, flag("transB"), flag("transBatchB"));
    let out = super::math::matmul_dims(ctx, &a, &b, (0, 1))?;
    ctx.set_shape(0, out);
    Ok(())
}

/// SkipLayerNormalization and SkipSimplifiedLayerNormalization: `output`
/// and `input_skip_bias_sum` (output 3) are the input; `mean` and
/// `inv_std_var` float with the last dim 1.
fn skip_layer_norm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    if ctx.has_output(3) {
        ctx.propagate_type(0, 3)?;
    }
    let reduced = ctx.shape(0).map(last_to_one);
    for i in 1..3 {
        if ctx.has_output(i) {
            ctx.set_tensor(i, FLOAT, reduced.clone());
        }
    }
    Ok(())
}

/// The dims of a normalization's statistics: 1 from `axis` on.
fn stats_dims(ctx: &NodeCtx<'_, '_>, x: &[Dim]) -> InferResult<Dims> {
    let from = attr_axis(ctx.own_int("axis", -1), x.len(), "axis")?;
    Ok(x.iter()
        .enumerate()
        .map(|(d, &dim)| if d >= from { Dim::Value(1) } else { dim })
        .collect())
}

/// SimplifiedLayerNormalization (RMS norm): `Y` has X's shape and the
/// scale's element type; `inv_std_var` has `stash_type` and X's dims with
/// 1 from `axis` on (the kernel's; onnxruntime's inference sets only the
/// axis's dim to 1, which differs for an axis other than the last).
fn simplified_layer_norm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(1, 0)?;
    ctx.propagate_shape(0, 0);
    let stash = ctx.own_int("stash_type", i64::from(FLOAT));
    let stash = i32::try_from(stash).unwrap_or(FLOAT);
    if ctx.has_output(1) {
        let dims = match ctx.shape(0) {
            Some(x) => Some(stats_dims(ctx, x)?),
            None => None,
        };
        ctx.set_tensor(1, stash, dims);
    }
    Ok(())
}

/// MatMulNBits: A (..., K) times a quantized (K, N) weight: (..., N) of
/// A's element type. A known last dim of A must be `K`; a bias must be
/// (N).
fn matmul_nbits(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let k = required_int(ctx, "K")?;
    let n = required_int(ctx, "N")?;
    required_int(ctx, "block_size")?;
    if ctx.has_input(5) {
        match ctx.shape(5) {
            Some([Dim::Value(b)]) if *b == n => {}
            Some(b) => {
                return Err(bad_shapes(format!(
                    "the bias must have shape ({n}) (attribute N), it has {}",
                    ctx.show_dims(b)
                )))
            }
            None => {
                return Err(failed(
                    "the bias's shape is not known; onnxruntime's inference needs it",
                ))
            }
        }
    }
    let Some(a) = ctx.shape(0) else {
        return Ok(());
    };
    let Some((&last, batch)) = a.split_last() else {
        return Err(bad_rank(
            0,
            "input A must have rank 1 or more, it has rank 0",
        ));
    };
    if let Dim::Value(v) = last {
        if v != k {
            return Err(bad_shapes(format!(
                "the last dim of A is {v}, attribute K is {k}"
            )));
        }
    }
    let mut out: Dims = batch.iter().copied().collect();
    out.push(Dim::Value(n));
    ctx.set_shape(0, out);
    Ok(())
}

/// The dims of a past key or value cache (input `i`), which must be
/// (B, N, P, H); None when its shape is not known.
fn cache_dims(ctx: &NodeCtx<'_, '_>, i: usize) -> InferResult<Option<Dims>> {
    ranked(ctx, i, &[4], "the past key and value")
}

/// The dims of input `i` (`what`), which must have one of `ranks`; None
/// when its shape is not known.
fn ranked(
    ctx: &NodeCtx<'_, '_>,
    i: usize,
    ranks: &[usize],
    what: &str,
) -> InferResult<Option<Dims>> {
    let Some(dims) = ctx.shape(i) else {
        return Ok(None);
    };
    if !ranks.contains(&dims.len()) {
        let allowed: Vec<String> = ranks.iter().map(ToString::to_string).collect();
        return Err(bad_rank(
            i,
            format!(
                "{what} must have rank {}, it has rank {}",
                allowed.join(" or "),
                dims.len()
            ),
        ));
    }
    Ok(Some(dims.iter().copied().collect()))
}

/// A key or value cache's dims with its sequence dim (2) replaced.
fn with_length(cache: &[Dim], length: Dim) -> Dims {
    let mut out: Dims = cache.iter().copied().collect();
    if let Some(d) = out.get_mut(2) {
        *d = length;
    }
    out
}

/// The graphs of a generation loop (its encoder, its first-step decoder,
/// its decoder), each inferred with its own declared inputs, so a full
/// check reaches inside them.
fn generation_graphs(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    for name in ["encoder", "init_decoder", "decoder"] {
        ctx.infer_graph_as_declared(name)?;
    }
    Ok(())
}

/// A generation loop's positive scalar input `i` (max_length, num_beams,
/// num_return_sequences) when it is known.
fn positive_count(ctx: &mut NodeCtx<'_, '_>, i: usize, what: &str) -> InferResult<Dim> {
    match known_int(ctx, i)? {
        Some(Dim::Value(v)) if v <= 0 => Err(bad_const(
            i,
            format!("{what} must be a positive integer, it is {v}"),
        )),
        Some(d) => Ok(d),
        None => Ok(Dim::Unknown),
    }
}

/// The batch and length of a generation loop's input_ids (B, S), or of
/// Whisper's input features (B, features, frames): no length then.
fn generation_input(ctx: &NodeCtx<'_, '_>, whisper: bool) -> InferResult<Option<(Dim, Dim)>> {
    let ranks: &[usize] = if whisper { &[3] } else { &[2] };
    Ok(
        ranked(ctx, 0, ranks, "input 0")?
            .map(|x| (x[0], if whisper { Dim::Unknown } else { x[1] })),
    )
}

/// BeamSearch (model_type 0, GPT-2, the default; 1, T5; 2, Whisper).
fn beam_search(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let model_type = ctx.own_int("model_type", 0);
    beams(ctx, model_type).map(|_| ())
}

/// WhisperBeamSearch: BeamSearch of a Whisper model (model_type 2 is its
/// default), with two outputs of its own: cross_qk, float (B, R, pairs,
/// T, F), the kept (layer, head) pairs' cross attention (pairs is
/// cross_qk_layer_head's first dim when given; the decoded length T and
/// the frames F are not visible in the node); non_speech_probs (B), of
/// length_penalty's element type. onnxruntime's inference gives cross_qk
/// six dims; its documentation and kernel five.
fn whisper_beam_search(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let model_type = ctx.own_int("model_type", 2);
    if model_type != 2 {
        return Err(bad_attr(
            "model_type",
            format!(
                "WhisperBeamSearch runs Whisper models only (model_type 2), it is {model_type}"
            ),
        ));
    }
    let batch = beams(ctx, model_type)?;
    if ctx.has_output(3) {
        ctx.set_elem(3, FLOAT);
    }
    if ctx.has_output(4) && ctx.has_input(5) {
        ctx.propagate_elem(5, 4)?;
    }
    let Some((batch, returned)) = batch else {
        return Ok(());
    };
    if ctx.has_output(3) {
        let pairs = match ctx.has_input(12) {
            true => ranked(ctx, 12, &[2], "cross_qk_layer_head")?.map_or(Dim::Unknown, |d| d[0]),
            false => Dim::Unknown,
        };
        let dims = [batch, returned, pairs, Dim::Unknown, Dim::Unknown];
        ctx.set_shape(3, dims.into_iter().collect());
    }
    if ctx.has_output(4) {
        ctx.set_shape(4, [batch].into_iter().collect());
    }
    Ok(())
}

/// A beam search of `model_type`: sequences (B, R, max_length) int32,
/// sequences_scores (B, R) and scores (steps, B, num_beams, vocab_size) of
/// length_penalty's element type, R being num_return_sequences; the steps
/// are max_length less the tokens the sequences start with
/// ([`prompt_length`]). Its graphs are inferred with their own inputs.
/// onnxruntime's inference gives sequences_scores no dims (its kernel
/// returns (B, R)) and needs every dim static; here a symbolic batch is
/// kept. Gives (B, R) when input 0 has a shape.
fn beams(ctx: &mut NodeCtx<'_, '_>, model_type: i64) -> InferResult<Option<(Dim, Dim)>> {
    generation_graphs(ctx)?;
    ctx.set_elem(0, INT32);
    for out in [1, 2] {
        if ctx.has_output(out) && ctx.has_input(5) {
            ctx.propagate_elem(5, out)?;
        }
    }
    let longest = positive_count(ctx, 1, "max_length")?;
    let beams = positive_count(ctx, 3, "num_beams")?;
    let returned = positive_count(ctx, 4, "num_return_sequences")?;
    let Some((batch, length)) = generation_input(ctx, model_type == 2)? else {
        return Ok(None);
    };
    let prompt = prompt_length(ctx, model_type, length)?;
    let steps = match (longest, prompt) {
        (Dim::Unknown, _) | (_, Dim::Unknown) => Dim::Unknown,
        (Dim::Value(a), Dim::Value(b)) if a <= b => {
            return Err(bad_const(
                1,
                format!(
                    "max_length ({a}) must be greater than the length the sequences start \
                     with ({b})"
                ),
            ))
        }
        (Dim::Value(a), Dim::Value(b)) => Dim::Value(a - b),
        // With `symbolic`: max_length - S.
        (a, b) => {
            let minus = times(ctx, b, -1);
            plus(ctx, a, minus)
        }
    };
    ctx.set_shape(0, [batch, returned, longest].into_iter().collect());
    if ctx.has_output(1) {
        ctx.set_shape(1, [batch, returned].into_iter().collect());
    }
    if ctx.has_output(2) {
        let vocab = vocab_size(ctx);
        ctx.set_shape(2, [steps, batch, beams, vocab].into_iter().collect());
    }
    Ok(Some((batch, returned)))
}

/// How many tokens a beam search's sequences start with, as onnxruntime's
/// kernels count them: GPT-2's prompt (input_ids' S); for T5 the decoder
/// start token (`decoder_start_token_id`; unset, the encoder graph gives
/// the start, which the node does not show); for Whisper the decoder
/// prompt (decoder_input_ids, input 10: its length), else the start token.
fn prompt_length(ctx: &NodeCtx<'_, '_>, model_type: i64, length: Dim) -> InferResult<Dim> {
    let start_token = ctx.own_int("decoder_start_token_id", -1) >= 0;
    Ok(match model_type {
        0 => length,
        2 if ctx.has_input(10) => {
            ranked(ctx, 10, &[2], "decoder_input_ids")?.map_or(Dim::Unknown, |d| d[1])
        }
        _ if start_token => Dim::Value(1),
        _ => Dim::Unknown,
    })
}

/// A generation loop's `vocab_size` attribute, when given (positive).
fn vocab_size(ctx: &NodeCtx<'_, '_>) -> Dim {
    match ctx.own_int("vocab_size", -1) {
        v if v > 0 => Dim::Value(v),
        _ => Dim::Unknown,
    }
}

/// GreedySearch and Sampling: sequences (B, max_length) int32; Sampling's
/// filtered_logits (B, vocab).
fn greedy_search(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    generation_graphs(ctx)?;
    ctx.set_elem(0, INT32);
    let longest = positive_count(ctx, 1, "max_length")?;
    let Some((batch, _)) = generation_input(ctx, false)? else {
        return Ok(());
    };
    ctx.set_shape(0, [batch, longest].into_iter().collect());
    if ctx.has_output(1) {
        ctx.set_elem(1, FLOAT);
        let vocab = vocab_size(ctx);
        ctx.set_shape(1, [batch, vocab].into_iter().collect());
    }
    Ok(())
}

/// An integer input `i` known as one value: a constant, or followed by
/// data propagation (an expression with `symbolic`).
fn known_int(ctx: &mut NodeCtx<'_, '_>, i: usize) -> InferResult<Option<Dim>> {
    Ok(ctx
        .const_ints(i)?
        .and_then(|v| v.first().copied())
        .map(Dim::Value)
        .or_else(|| ctx.data_one(i)))
}

/// RemovePadding (input (B, S, hidden), sequence_token_count (B)): the
/// tokens without padding (tokens, hidden); token_offset (B, S) of
/// sequence_token_count's element type; cumulated_seq_len (B + 1);
/// max_seq_len (1).
fn remove_padding(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    for out in 1..4 {
        ctx.propagate_elem(1, out)?;
    }
    let Some(x) = ranked(ctx, 0, &[3], "the input")? else {
        return Ok(());
    };
    ctx.set_shape(0, [Dim::Unknown, x[2]].into_iter().collect());
    ctx.set_shape(1, [x[0], x[1]].into_iter().collect());
    let batches = plus(ctx, x[0], Dim::Value(1));
    ctx.set_shape(2, [batches].into_iter().collect());
    ctx.set_shape(3, [Dim::Value(1)].into_iter().collect());
    Ok(())
}

/// RestorePadding (input (tokens, hidden), token_offset (B, S)): the
/// padded (B, S, hidden).
fn restore_padding(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(x), Some(offsets)) = (
        ranked(ctx, 0, &[2], "the input")?,
        ranked(ctx, 1, &[2], "token_offset")?,
    ) else {
        return Ok(());
    };
    ctx.set_shape(0, [offsets[0], offsets[1], x[1]].into_iter().collect());
    Ok(())
}

/// RelativePositionBias (bias_table (buckets, N), query_length,
/// key_length): (1, N, query_length, key_length), the lengths where they
/// are known (constants, or with data propagation).
fn relative_position_bias(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(table) = ranked(ctx, 0, &[2], "the bias table")? else {
        return Ok(());
    };
    let heads = table[1];
    let query = known_int(ctx, 1)?.unwrap_or(Dim::Unknown);
    let key = known_int(ctx, 2)?.unwrap_or(Dim::Unknown);
    ctx.set_shape(0, [Dim::Value(1), heads, query, key].into_iter().collect());
    Ok(())
}

/// GatedRelativePositionBias (query_layer (B, S, D), ..., token_offset
/// (B, S) when the tokens are packed): (B, num_heads, S, S).
fn gated_relative_position_bias(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let heads = Dim::Value(required_int(ctx, "num_heads")?);
    let (batch, length) = if ctx.has_input(6) {
        match ranked(ctx, 6, &[2], "token_offset")? {
            Some(t) => (t[0], t[1]),
            None => return Ok(()),
        }
    } else {
        match ranked(ctx, 0, &[3], "the query layer")? {
            Some(q) => (q[0], q[1]),
            None => return Ok(()),
        }
    };
    ctx.set_shape(0, [batch, heads, length, length].into_iter().collect());
    Ok(())
}

/// Output 0 of GroupQueryAttention and SparseAttention: the query (B, S,
/// N·H), or for a packed QKV query (B, S, (N + 2·kv_N)·H) its N·H part; it
/// is set, and returned with the query's dims.
fn grouped_output(
    ctx: &mut NodeCtx<'_, '_>,
    heads: i64,
    kv_heads: i64,
) -> InferResult<Option<(Dims, Dim)>> {
    let Some(q) = ranked(ctx, 0, &[3], "the query")? else {
        return Ok(None);
    };
    let packed = !ctx.has_input(2);
    let hidden = if packed {
        // (B, S, (N + 2·kv_N)·H): the query's part is N·H.
        let parts = heads
            .checked_add(kv_heads.saturating_mul(2))
            .filter(|p| *p > 0)
            .ok_or_else(|| bad_attr("num_heads", "num_heads + 2·kv_num_heads must be positive"))?;
        match q[2] {
            Dim::Value(d) if d % parts == 0 => (d / parts)
                .checked_mul(heads)
                .map_or(Dim::Unknown, Dim::Value),
            Dim::Value(d) => {
                return Err(bad_shapes(format!(
                    "the packed query's last dim {d} is not a multiple of num_heads + \
                     2·kv_num_heads = {parts}"
                )))
            }
            d => {
                let per = over(ctx, d, parts, "the packed query's last dim")?;
                times(ctx, per, heads)
            }
        }
    } else {
        q[2]
    };
    ctx.set_shape(0, [q[0], q[1], hidden].into_iter().collect());
    Ok(Some((q, hidden)))
}

/// SparseAttention (Phi-3-small's block-sparse attention): output 0 as
/// GroupQueryAttention's; its past key and value (inputs 3 and 4) are
/// buffers of the longest length shared with the presents, which have
/// their shapes (of the query's element type).
fn sparse_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let heads = required_int(ctx, "num_heads")?;
    let kv_heads = required_int(ctx, "kv_num_heads")?;
    grouped_output(ctx, heads, kv_heads)?;
    for (out, past) in [(1, 3), (2, 4)] {
        if !ctx.has_output(out) {
            continue;
        }
        ctx.propagate_elem(0, out)?;
        if let Some(p) = cache_dims(ctx, past)? {
            ctx.set_shape(out, p);
        }
    }
    Ok(())
}

/// PackedAttention (tokens without padding (T, D), weights (D, 3·D'),
/// bias (3·D')): (T, V), V `qkv_hidden_sizes[2]` or a third of the bias.
fn packed_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(x), Some(bias)) = (
        ranked(ctx, 0, &[2], "the input")?,
        ranked(ctx, 2, &[1], "the bias")?,
    ) else {
        return Ok(());
    };
    let v = match ctx.own_ints("qkv_hidden_sizes") {
        Some(&[_, _, v]) => Dim::Value(v),
        Some(_) => {
            return Err(bad_attr(
                "qkv_hidden_sizes",
                "qkv_hidden_sizes must have 3 values",
            ))
        }
        None => over(ctx, bias[0], 3, "the bias's size")?,
    };
    ctx.set_shape(0, [x[0], v].into_iter().collect());
    Ok(())
}

/// PackedMultiHeadAttention (tokens without padding): (T, V), V the
/// value's hidden size (T, V), or N·H for a packed QKV query (T, N, 3, H).
fn packed_multi_head_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(q) = ranked(ctx, 0, &[2, 4], "the query")? else {
        return Ok(());
    };
    if let [t, n, _, h] = q[..] {
        let hidden = match (n, h) {
            (Dim::Value(a), Dim::Value(b)) => a.checked_mul(b).map_or(Dim::Unknown, Dim::Value),
            _ => ctx.sym_mul(n, h).unwrap_or(Dim::Unknown),
        };
        ctx.set_shape(0, [t, hidden].into_iter().collect());
        return Ok(());
    }
    if ctx.has_input(2) {
        if let Some(v) = ranked(ctx, 2, &[2], "the value")? {
            ctx.set_shape(0, [q[0], v[1]].into_iter().collect());
        }
    }
    Ok(())
}

/// GroupQueryAttention. `output`: the query's shape (Q, K and V given
/// apart), or (B, S, D·N/(N + 2·kv_N)) for a packed QKV query; the
/// presents (B, kv_N, T, H) of the past's element type: T the past's
/// length when the cache is shared or a sliding window, else the larger
/// of the past's length and `total_sequence_length` (input 6) when both
/// are known (a constant, or followed with data_prop; with `symbolic`, the
/// total length, which counts the past's), without a past the total
/// length, else the key's.
fn group_query_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let heads = required_int(ctx, "num_heads")?;
    let kv_heads = required_int(ctx, "kv_num_heads")?;
    let Some((q, hidden)) = grouped_output(ctx, heads, kv_heads)? else {
        return Ok(());
    };
    let packed = !ctx.has_input(2);
    let head_size = over(ctx, hidden, heads.max(1), "the query's hidden size")?;
    // The total length, when a constant or data propagation gives it.
    let total = known_int(ctx, 6)?;
    let shared = ctx.own_int("sliding_window_cache", 0) != 0;
    for (out, past) in [(1, 3), (2, 4)] {
        if !ctx.has_output(out) {
            continue;
        }
        if ctx.has_input(past) {
            ctx.propagate_elem(past, out)?;
            let Some(p) = cache_dims(ctx, past)? else {
                continue;
            };
            let length = match (shared, p[2], total) {
                (true, d, _) => d,
                (false, Dim::Value(a), Some(Dim::Value(b))) => Dim::Value(a.max(b)),
                (false, a, Some(b)) if a == b => a,
                // A valid model's total length counts the past's.
                (false, _, Some(b)) if ctx.is_symbolic() => b,
                _ => Dim::Unknown,
            };
            ctx.set_shape(out, with_length(&p, length));
        } else {
            ctx.propagate_elem(0, out)?;
            let length = match total {
                Some(t) => t,
                None if !packed => ctx.shape(1).and_then(|k| k.get(1).copied()).unwrap_or(q[1]),
                None => q[1],
            };
            let dims = [q[0], Dim::Value(kv_heads), length, head_size];
            ctx.set_shape(out, dims.into_iter().collect());
        }
    }
    Ok(())
}

/// MultiHeadAttention. `output` (B, S, V): V the value's hidden size
/// (B, L, V), N·H for a value already in heads (B, N, L, H) or a packed
/// QKV query (B, S, N, 3, H), the query's for packed KV. With a past (B,
/// N, P, H) the presents are (B, N, P + L, H), L the key's length (without
/// a past: (B, N, L, H)); a buffer shared between past and present keeps
/// the past's shape.
fn multi_head_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    // Its past key and value are inputs 6 and 7; a past_sequence_length
    // (input 8) shares the buffers too.
    let shared = ctx.own_int("past_present_share_buffer", 0) != 0 || ctx.has_input(8);
    heads_attention(ctx, 6, shared)
}

/// DecoderMaskedMultiHeadAttention (one decoding step, past key and value
/// inputs 5 and 6): MultiHeadAttention's shapes; onnxruntime's kernels
/// take a past only in a buffer shared with the present (refusing it
/// otherwise), so the presents have the past's shape.
fn decoder_masked_multi_head_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if ctx.has_input(5) && ctx.own_int("past_present_share_buffer", 0) == 0 {
        return Err(bad_attr(
            "past_present_share_buffer",
            "with a past key, past_present_share_buffer must be 1 (onnxruntime's kernels refuse \
             the node otherwise)",
        ));
    }
    heads_attention(ctx, 5, true)
}

/// MultiHeadAttention's rule with the past key at input `past_key` (the
/// past value after it); `shared`: a past shares its buffer with the
/// present, which keeps the past's shape.
fn heads_attention(ctx: &mut NodeCtx<'_, '_>, past_key: usize, shared: bool) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let heads = required_int(ctx, "num_heads")?;
    let Some(q) = ranked(ctx, 0, &[3, 5], "the query")? else {
        return Ok(());
    };
    let value = ctx.has_input(2).then(|| ctx.shape(2)).flatten();
    let value: Option<Dims> = value.map(|v| v.iter().copied().collect());
    let key_rank = ctx.rank(1);
    let output: Option<Dims> = if q.len() == 5 {
        let hidden = times(ctx, q[4], heads);
        Some([q[0], q[1], hidden].into_iter().collect())
    } else {
        match value.as_deref() {
            Some([_, _, v]) => Some([q[0], q[1], *v].into_iter().collect()),
            Some([_, n, _, h]) => {
                let hidden = match (n, h) {
                    (Dim::Value(a), Dim::Value(b)) => {
                        a.checked_mul(*b).map_or(Dim::Unknown, Dim::Value)
                    }
                    _ => times(ctx, *h, heads),
                };
                Some([q[0], q[1], hidden].into_iter().collect())
            }
            None if key_rank == Some(5) => Some(q.clone()),
            _ => None,
        }
    };
    if let Some(o) = output {
        ctx.set_shape(0, o);
    }
    // The key's length L: (B, L, D), (B, N, L, H) or packed KV (B, L, N,
    // 2, H) keys; the query's own for a packed QKV query.
    let length = match ctx.has_input(1).then(|| ctx.shape(1)).flatten() {
        Some([_, l, _] | [_, _, l, _] | [_, l, _, _, _]) => Some(*l),
        None if !ctx.has_input(1) && q.len() == 5 => Some(q[1]),
        _ => None,
    };
    for (out, past) in [(1, past_key), (2, past_key + 1)] {
        if !ctx.has_output(out) {
            continue;
        }
        ctx.propagate_elem(0, out)?;
        if ctx.has_input(past) {
            let Some(p) = cache_dims(ctx, past)? else {
                continue;
            };
            if shared {
                ctx.set_shape(out, p);
                continue;
            }
            let total = match length {
                Some(l) => plus(ctx, p[2], l),
                None => Dim::Unknown,
            };
            ctx.set_shape(out, with_length(&p, total));
        } else if let (Some(l), Some(v)) = (length, output_hidden(ctx)) {
            let h = over(ctx, v, heads.max(1), "the output's hidden size")?;
            let dims = [q[0], Dim::Value(heads), l, h];
            ctx.set_shape(out, dims.into_iter().collect());
        }
    }
    Ok(())
}

/// The last dim of output 0 as set so far.
fn output_hidden(ctx: &NodeCtx<'_, '_>) -> Option<Dim> {
    match ctx.outputs.first() {
        Some(Some(crate::ir::types::Type::Tensor(t))) => t.shape.as_ref()?.last().copied(),
        _ => None,
    }
}

/// Attention (BERT/GPT-2 fused): input (B, S, D) and weights (D, 3·D') →
/// output (B, S, V) of the input's element type, V the value's hidden size
/// (`qkv_hidden_sizes[2]`, else a third of the bias's or the weights'
/// last dim). A past (2, B, N, P, H) gives a present (2, B, N, P + S, H).
fn attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    attention_of(ctx, 0, 4)
}

/// QAttention (the int8 quantizer's Attention: input, weight, bias,
/// input_scale, weight_scale, mask_index, zero points, past): Attention's
/// shapes, the input scale's element type.
fn quantized_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    attention_of(ctx, 3, 8)
}

/// Attention's rule with the element type of input `elem` and the past at
/// input `past`.
fn attention_of(ctx: &mut NodeCtx<'_, '_>, elem: usize, past: usize) -> InferResult {
    ctx.propagate_elem(elem, 0)?;
    required_int(ctx, "num_heads")?;
    if ctx.has_output(1) {
        ctx.propagate_elem(elem, 1)?;
    }
    let Some(x) = ranked(ctx, 0, &[3], "the input")? else {
        return Ok(());
    };
    let sizes = ctx.own_ints("qkv_hidden_sizes").unwrap_or(&[]);
    let v = if let Some(&v) = sizes.get(2) {
        if sizes.len() != 3 {
            return Err(bad_attr(
                "qkv_hidden_sizes",
                "'qkv_hidden_sizes' must hold 3 sizes",
            ));
        }
        Dim::Value(v)
    } else {
        let packed = if ctx.has_input(2) {
            ctx.shape(2).and_then(|b| b.first().copied())
        } else {
            ctx.shape(1).and_then(|w| w.get(1).copied())
        };
        match packed {
            Some(d) => over(ctx, d, 3, "the packed Q, K, V size")?,
            None => Dim::Unknown,
        }
    };
    ctx.set_shape(0, [x[0], x[1], v].into_iter().collect());
    if ctx.has_output(1) && ctx.has_input(past) {
        if let Some(mut present) = ranked(ctx, past, &[5], "the past")? {
            let shared = ctx.own_int("past_present_share_buffer", 0) != 0;
            if !shared {
                present[3] = plus(ctx, present[3], x[1]);
            }
            ctx.set_shape(1, present);
        }
    }
    Ok(())
}

/// EmbedLayerNormalization: input_ids (B, S) → output (B, S, D) of the word
/// embedding's element type, D its hidden size (a known value);
/// `mask_index` int32 (B); `embedding_sum` as the output.
pub(super) fn embed_layer_norm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(2, 0)?;
    if ctx.has_output(1) {
        ctx.set_tensor(1, INT32, None);
    }
    if ctx.has_output(2) {
        ctx.propagate_elem(2, 2)?;
    }
    let Some(ids) = ranked(ctx, 0, &[2], "input_ids")? else {
        return Ok(());
    };
    let Some(word) = ctx.shape(2) else {
        return Err(failed(
            "the word embedding's shape is not known; onnxruntime's inference needs it",
        ));
    };
    let hidden = match word {
        [_, Dim::Value(d)] => *d,
        _ => {
            return Err(bad_rank(
                2,
                format!(
                    "the word embedding must be (vocabulary, hidden) with a known hidden size, it \
                     is {}",
                    ctx.show_dims(word)
                ),
            ))
        }
    };
    for (i, what) in [(3, "position embedding"), (4, "segment embedding")] {
        if let Some([_, Dim::Value(v)]) = ctx.shape(i).filter(|_| ctx.has_input(i)) {
            if *v != hidden {
                return Err(bad_shapes(format!(
                    "the {what}'s hidden size {v} differs from the word embedding's {hidden}"
                )));
            }
        }
    }
    for (i, what) in [(5, "gamma"), (6, "beta")] {
        if let Some([Dim::Value(v)]) = ctx.shape(i).filter(|_| ctx.has_input(i)) {
            if *v != hidden {
                return Err(bad_shapes(format!(
                    "{what} has {v} elements, the hidden size is {hidden}"
                )));
            }
        }
    }
    let out: Dims = [ids[0], ids[1], Dim::Value(hidden)].into_iter().collect();
    ctx.set_shape(0, out.clone());
    if ctx.has_output(1) {
        ctx.set_shape(1, [ids[0]].into_iter().collect());
    }
    if ctx.has_output(2) {
        ctx.set_shape(2, out);
    }
    Ok(())
}

/// GatherBlockQuantized: Gather of blockwise-quantized data, dequantized
/// to the scales' element type: data[:g] + indices + data[g+1:], the
/// quantized axis's dim times 8/bits for packed uint8 data.
fn gather_block_quantized(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(2, 0)?;
    let (Some(data), Some(indices)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    let data: Dims = data.iter().copied().collect();
    let indices: Dims = indices.iter().copied().collect();
    if data.len() <= 1 {
        return Err(bad_rank(
            0,
            format!("data must have rank 2 or more, it has rank {}", data.len()),
        ));
    }
    let gather = attr_axis(ctx.own_int("gather_axis", 0), data.len(), "gather_axis")?;
    let quantize = attr_axis(ctx.own_int("quantize_axis", 1), data.len(), "quantize_axis")?;
    let bits = ctx.own_int("bits", 4);
    let packed = ctx.elem(0)? == UINT8; // sub-byte values packed
    let mut data = data;
    if packed {
        if gather != 0 {
            return Err(bad_attr(
                "gather_axis",
                "uint8 data must be gathered along axis 0",
            ));
        }
        if !matches!(bits, 2 | 4 | 8) {
            return Err(bad_attr("bits", format!("'bits' {bits} is not 2, 4 or 8")));
        }
        if let Some(d) = data.get_mut(quantize) {
            *d = times(ctx, *d, 8 / bits);
        }
    }
    let mut out: Dims = data.get(..gather).unwrap_or(&[]).iter().copied().collect();
    out.extend(indices.iter().copied());
    out.extend(data.get(gather + 1..).unwrap_or(&[]).iter().copied());
    ctx.set_shape(0, out);
    Ok(())
}

// ---- quantized operators (onnxruntime's quantizer) ---------------------------

/// QLinearAdd and QLinearMul (A, A_scale, A_zero_point, B, B_scale,
/// B_zero_point, C_scale, C_zero_point): A's element type, A and B
/// broadcast; scales and zero points scalars, as onnxruntime checks them.
fn qlinear_binary(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    scalar_params(ctx, 0, &[(1, 2), (6, 7)])?;
    scalar_params(ctx, 3, &[(4, 5)])?;
    let (Some(a), Some(b)) = (ctx.shape(0), ctx.shape(3)) else {
        return Ok(());
    };
    let out = crate::infer::util::broadcast(&[a, b])
        .map_err(|e| bad_shapes(format!("A and B do not broadcast: {e}")))?;
    ctx.set_shape(0, out);
    Ok(())
}

/// QLinearConcat (Y_scale, Y_zero_point, then (X, scale, zero point) per
/// input): the inputs concatenated along `axis`, Y_zero_point's element
/// type.
fn qlinear_concat(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(1, 0)?;
    let inputs: Vec<usize> = (2..ctx.n_inputs()).step_by(3).collect();
    let shapes: Option<Vec<Dims>> = inputs
        .iter()
        .map(|&i| ctx.shape(i).map(|d| d.iter().copied().collect()))
        .collect();
    let Some(shapes) = shapes else {
        return Ok(());
    };
    let Some(first) = shapes.first() else {
        return Err(failed("QLinearConcat needs at least one input"));
    };
    let rank = first.len();
    let Some(axis) = ctx.attr("axis").and_then(|a| a.i) else {
        return Err(bad_attr("axis", "the attribute 'axis' is required"));
    };
    let axis = attr_axis(axis, rank, "axis")?;
    let mut out = first.clone();
    for (k, s) in shapes.iter().enumerate().skip(1) {
        if s.len() != rank {
            return Err(bad_shapes(format!(
                "the inputs must have the same rank: the first has rank {rank}, input {} has \
                 rank {}",
                inputs.get(k).copied().unwrap_or(0),
                s.len()
            )));
        }
        for (j, (o, &d)) in out.iter_mut().zip(s.iter()).enumerate() {
            if j == axis {
                *o = plus(ctx, *o, d);
            } else if *o == Dim::Unknown {
                *o = d;
            }
        }
    }
    ctx.set_shape(0, out);
    Ok(())
}

/// QLinearGlobalAveragePool: X's element type; (N, C, 1, ...) or, with
/// `channels_last`, (N, 1, ..., C).
fn qlinear_global_average_pool(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    if x.len() < 3 {
        return Err(bad_rank(
            0,
            format!(
                "the input must have rank 3 or more, it has rank {}",
                x.len()
            ),
        ));
    }
    let last = x.len() - 1;
    let channels_last = ctx.own_int("channels_last", 0) != 0;
    let out: Dims = x
        .iter()
        .enumerate()
        .map(|(d, &dim)| match (d, channels_last) {
            (0, _) => dim,
            (1, false) => dim,
            (d, true) if d == last => dim,
            _ => Dim::Value(1),
        })
        .collect();
    ctx.set_shape(0, out);
    Ok(())
}

/// Input `i`, a per-tensor scale or zero point, as onnxruntime's inference
/// checks it (`ValidateTypeAndShapeForScaleAndZP`, scalar): when given and
/// typed, a tensor of element type `elem` (none to compare when 0), and a
/// scalar where its shape is known.
fn scalar_param(ctx: &NodeCtx<'_, '_>, i: usize, elem: i32, what: &str) -> InferResult {
    if !ctx.has_input(i) {
        return Ok(());
    }
    let t = match ctx.typed(i)? {
        None => return Ok(()),
        Some(Type::Tensor(t)) => t,
        Some(_) => return Err(failed(format!("input {i} ({what}) must be a tensor"))),
    };
    if elem != 0 && t.elem != 0 && t.elem != elem {
        return Err(bad_shapes(format!(
            "input {i} ({what}) must be {}, it is {}",
            elem_name(elem).unwrap_or("?"),
            elem_name(t.elem).unwrap_or("?")
        )));
    }
    match t.shape.as_deref() {
        Some(dims) if !dims.is_empty() => Err(bad_rank(
            i,
            format!(
                "input {i} ({what}) must be a scalar, it has shape {}",
                ctx.show_dims(dims)
            ),
        )),
        _ => Ok(()),
    }
}

/// The element type of input `i` when it is a typed tensor (0 otherwise).
fn tensor_elem(ctx: &NodeCtx<'_, '_>, i: usize) -> InferResult<i32> {
    Ok(match ctx.typed(i)? {
        Some(Type::Tensor(t)) => t.elem,
        _ => 0,
    })
}

/// Checks a quantized operator's (scale, zero point) pairs: each scale a
/// float scalar, each zero point a scalar of input `x`'s element type.
fn scalar_params(ctx: &NodeCtx<'_, '_>, x: usize, pairs: &[(usize, usize)]) -> InferResult {
    let elem = tensor_elem(ctx, x)?;
    for &(scale, zero_point) in pairs {
        scalar_param(ctx, scale, FLOAT, "a scale")?;
        scalar_param(ctx, zero_point, elem, "a zero point")?;
    }
    Ok(())
}

/// The channels-last flag of onnxruntime's quantized operators.
fn layout(ctx: &NodeCtx<'_, '_>) -> Layout {
    if ctx.own_int("channels_last", 0) != 0 {
        Layout::ChannelsLast
    } else {
        Layout::ChannelsFirst
    }
}

/// QLinearAveragePool (X, x_scale, x_zero_point, y_scale, y_zero_point):
/// X's element type; AveragePool's window counts (`kernel_shape`, pads,
/// strides, `ceil_mode`), over an NHWC input with `channels_last`.
fn qlinear_average_pool(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if let Some(t) = ctx.typed(0)? {
        if !matches!(t, Type::Tensor(_)) {
            return Err(failed("input 0 must be a tensor"));
        }
    }
    scalar_params(ctx, 0, &[(1, 2), (3, 4)])?;
    let layout = layout(ctx);
    super::nn::pool_in(ctx, false, layout)
}

/// onnxruntime's QLinearConv: onnx's, over an NHWC input with
/// `channels_last` (what its NHWC transformer writes).
fn qlinear_conv(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let layout = layout(ctx);
    super::nn::qlinear_conv_in(ctx, layout)
}

/// NhwcMaxPool (int8 / uint8): MaxPool over an NHWC input.
fn nhwc_max_pool(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    super::nn::pool_in(ctx, true, Layout::ChannelsLast)
}

/// QLinearWhere (condition, X, x_scale, x_zero_point, Y, y_scale,
/// y_zero_point, z_scale, z_zero_point): X's element type, condition, X
/// and Y broadcast.
fn qlinear_where(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(1, 0)?;
    let shapes = [ctx.shape(0), ctx.shape(1), ctx.shape(4)];
    let [Some(c), Some(x), Some(y)] = shapes else {
        return Ok(());
    };
    let out = crate::infer::util::broadcast(&[c, x, y])
        .map_err(|e| bad_shapes(format!("condition, X and Y do not broadcast: {e}")))?;
    ctx.set_shape(0, out);
    Ok(())
}

// ---- NCHWc layout (com.microsoft.nchwc) --------------------------------------
//
// onnxruntime's highest optimization level lays float convolutions out in
// blocks of channels (8 or 16, as the machine's vector width decides): a
// tensor (N, C', H, W) whose channels C' are the real ones rounded up to the
// block. Weights saved in the model are already in blocks, so only
// ReorderInput's block count depends on the machine that runs the model.

/// ReorderInput (a tensor into blocks of channels; `channels_last`: from
/// (N, H, W, C)): (N, C', spatial...). C' is C rounded up to the machine's
/// block of 8 or 16 channels: known when both give the same (C a multiple
/// of 16).
fn nchwc_reorder_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    if x.len() < 2 {
        return Err(bad_rank(0, "the input must have rank 2 or more"));
    }
    let last = ctx.own_int("channels_last", 0) != 0;
    let (channels, spatial) = if last {
        (x[x.len() - 1], &x[1..x.len() - 1])
    } else {
        (x[1], &x[2..])
    };
    let blocked = match channels {
        Dim::Value(c) if c % 16 == 0 => Dim::Value(c),
        _ => Dim::Unknown,
    };
    let out: Dims = [x[0], blocked]
        .into_iter()
        .chain(spatial.iter().copied())
        .collect();
    ctx.set_shape(0, out);
    Ok(())
}

/// ReorderOutput (blocks of channels back to a plain tensor of `channels`
/// channels; `channels_last`: (N, H, W, channels)).
fn nchwc_reorder_output(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let channels = ctx.own_int("channels", 0);
    if channels <= 0 {
        return Err(bad_attr(
            "channels",
            format!("the channel count must be positive, it is {channels}"),
        ));
    }
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    if x.len() < 2 {
        return Err(bad_rank(0, "the input must have rank 2 or more"));
    }
    let spatial = x[2..].iter().copied();
    let out: Dims = if ctx.own_int("channels_last", 0) != 0 {
        [x[0]]
            .into_iter()
            .chain(spatial)
            .chain([Dim::Value(channels)])
            .collect()
    } else {
        [x[0], Dim::Value(channels)]
            .into_iter()
            .chain(spatial)
            .collect()
    };
    ctx.set_shape(0, out);
    Ok(())
}

/// Upsample over blocks of channels: each dim times its integer scale.
fn nchwc_upsample(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    let Some(scales) = ctx.own_ints("scales") else {
        return Ok(());
    };
    if scales.len() != x.len() {
        return Err(bad_attr(
            "scales",
            format!(
                "'scales' has {} values, the input has rank {}",
                scales.len(),
                x.len()
            ),
        ));
    }
    let mut out = Dims::with_capacity(x.len());
    for (&d, &k) in x.iter().zip(scales) {
        if k <= 0 {
            return Err(bad_attr(
                "scales",
                format!("scales must be positive, one is {k}"),
            ));
        }
        out.push(times(ctx, d, k));
    }
    ctx.set_shape(0, out);
    Ok(())
}

/// DynamicQuantizeMatMul: A (float) times a quantized B: float, the
/// matrix product's shape.
fn dynamic_quantize_matmul(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    super::math::matmul_shape(ctx, 0, 1)
}

/// MatMulIntegerToFloat: quantized A times quantized B, dequantized: the
/// element type of A's scale (input 2), the matrix product's shape.
fn matmul_integer_to_float(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(2, 0)?;
    super::math::matmul_shape(ctx, 0, 1)
}

/// QGemm (A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale,
/// y_zero_point): (M, N) from A and B (`transA`, `transB`); quantized
/// with y_zero_point's element type when y_scale is given, else float.
fn qgemm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if ctx.has_input(7) {
        if ctx.has_input(8) {
            ctx.propagate_elem(8, 0)?;
        } else {
            ctx.set_elem(0, UINT8);
        }
    } else {
        ctx.set_elem(0, FLOAT);
    }
    let (Some(a), Some(b)) = (ctx.shape(0), ctx.shape(3)) else {
        return Ok(());
    };
    let (Some(a), Some(b)) = (
        <&[Dim; 2]>::try_from(a).ok().copied(),
        <&[Dim; 2]>::try_from(b).ok().copied(),
    ) else {
        return Err(bad_shapes("A and B must be matrices (rank 2)"));
    };
    let [m, ka] = if ctx.own_int("transA", 0) != 0 {
        [a[1], a[0]]
    } else {
        a
    };
    let [kb, n] = if ctx.own_int("transB", 0) != 0 {
        [b[1], b[0]]
    } else {
        b
    };
    if let (Dim::Value(x), Dim::Value(y)) = (ka, kb) {
        if x != y {
            return Err(bad_shapes(format!(
                "the inner dimensions of A and B differ: {x} and {y}"
            )));
        }
    }
    ctx.set_shape(0, [m, n].into_iter().collect());
    Ok(())
}
