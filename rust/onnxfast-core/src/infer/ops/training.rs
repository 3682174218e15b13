//! Rules of onnx's `training` family (`ai.onnx.preview.training`: the
//! optimizers) and of the `ai.onnx.preview` domain (FlexAttention).

use super::Entry;
use crate::diag::codes;
use crate::infer::context::{defect, At, InferResult, NodeCtx};
use crate::infer::util::fatal_failure;
use crate::infer::util::{bad_attr, bad_rank, bad_shapes, failed, unify};
use crate::ir::types::{Dim, Dims, Type};
use crate::proto::tensor_shape_proto::dimension;
use crate::proto::{type_proto, ValueInfoProto};

const FLOAT: i32 = 1;
const FLOAT16: i32 = 10;
const DOUBLE: i32 = 11;
const BFLOAT16: i32 = 16;

/// The optimizers' inputs are `R, T` and then blocks of `n` tensors each
/// (`X`, gradients, state); `passes` maps an input block to an output
/// block: output `out * n + i` gets the type of input `2 + in * n + i`.
fn optimizer(ctx: &mut NodeCtx<'_, '_>, n: usize, passes: &[(usize, usize)]) -> InferResult {
    for i in 0..n {
        for &(from, to) in passes {
            let (Some(j), Some(o)) = (
                from.checked_mul(n).and_then(|x| x.checked_add(2 + i)),
                to.checked_mul(n).and_then(|x| x.checked_add(i)),
            ) else {
                return Err(fatal_failure("input or output index overflows"));
            };
            ctx.propagate_type(j, o)?;
            if o >= ctx.n_outputs() {
                return Err(fatal_failure(format!(
                    "input {j} is passed to output {o}, but the node has {} outputs",
                    ctx.n_outputs()
                )));
            }
            ctx.shape_copy_unguarded(j, o)?;
        }
    }
    Ok(())
}

/// The number of tensors after `R` and `T`, which must be a multiple of
/// `group` (the tensors per optimized variable).
fn groups(ctx: &NodeCtx<'_, '_>, group: usize, what: &str) -> InferResult<usize> {
    let count = ctx.n_inputs().saturating_sub(2);
    if count % group != 0 {
        return Err(failed(format!(
            "after R and T, the inputs must come in groups of {group} ({what}); there are {count}"
        )));
    }
    Ok(count / group)
}

/// Adagrad: inputs R, T, X.., G.., H..; outputs X_new.., H_new...
fn adagrad(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let n = ctx.n_inputs().saturating_sub(2) / 3;
    optimizer(ctx, n, &[(0, 0), (2, 1)])
}

/// Momentum: inputs R, T, X.., G.., V..; outputs X_new.., V_new...
fn momentum(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let n = groups(ctx, 3, "tensors, gradients, momenta")?;
    optimizer(ctx, n, &[(0, 0), (2, 1)])
}

/// Adam: inputs R, T, X.., G.., V.., H..; outputs X_new.., V_new.., H_new...
fn adam(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let n = groups(
        ctx,
        4,
        "tensors, gradients, averaged gradients, averaged squared gradients",
    )?;
    optimizer(ctx, n, &[(0, 0), (2, 1), (3, 2)])
}

// ---- FlexAttention ---------------------------------------------------------

/// FlexAttention: Q (B, Hq, L, D), K (B, Hkv, S, D), V (B, Hkv, S, Dv) give
/// Y (B, Hq, L, Dv); Hq is a multiple of Hkv. The optional `score_mod` and
/// `prob_mod` graphs map a rank-4 tensor of the softmax precision to one of
/// the same type and shape.
fn flex_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if ctx.n_inputs() < 3 {
        return Err(failed("FlexAttention needs query, key and value inputs"));
    }
    // onnx's rule returns when an input has no type (an unknown operator's
    // output too), and its type check then runs on the inputs that have one.
    // A type declared empty is a type, of no kind: not a tensor.
    if !(0..3).all(|i| ctx.has_type(i)) {
        return Ok(());
    }
    let (Some(Type::Tensor(q)), Some(Type::Tensor(k)), Some(Type::Tensor(v))) =
        (ctx.ty(0), ctx.ty(1), ctx.ty(2))
    else {
        return Err(defect(
            codes::INPUT_KIND,
            At::Node,
            "query, key and value must be tensors",
        ));
    };
    if q.elem != k.elem || q.elem != v.elem {
        return Err(defect(
            codes::BAD_ELEM_TYPE,
            At::Node,
            "query, key and value must have one element type",
        ));
    }
    ctx.set_tensor(0, q.elem, None);
    let (Some(&[b, hq, l, dqk]), Some(&[kb, hkv, s, kd]), Some(&[vb, vh, vs, dv])) =
        (q.shape.as_deref(), k.shape.as_deref(), v.shape.as_deref())
    else {
        let rank = |t: &crate::ir::types::TensorType| {
            t.rank()
                .map_or_else(|| "unknown".to_string(), |r| r.to_string())
        };
        return Err(bad_rank(
            0,
            format!(
                "query, key and value must have known rank 4, their ranks are {}, {} and {}",
                rank(q),
                rank(k),
                rank(v)
            ),
        ));
    };
    let differ = |a: Dim, b: Dim| matches!((a, b), (Dim::Value(x), Dim::Value(y)) if x != y);
    if differ(hkv, vh) {
        return Err(bad_shapes(format!(
            "key and value have different numbers of heads: {}",
            ctx.show_dims(&[hkv, vh])
        )));
    }
    if differ(s, vs) {
        return Err(bad_shapes(format!(
            "key and value have different sequence lengths: {}",
            ctx.show_dims(&[s, vs])
        )));
    }
    if differ(dqk, kd) {
        return Err(bad_shapes(format!(
            "query and key have different head sizes: {}",
            ctx.show_dims(&[dqk, kd])
        )));
    }
    if let (Dim::Value(x), Dim::Value(y)) = (hq, hkv) {
        if x != y && (y <= 0 || x.checked_rem(y) != Some(0)) {
            return Err(bad_shapes(format!(
                "the query's {x} heads are not a multiple of the key's {y}"
            )));
        }
    }
    let mut batch = b;
    for other in [kb, vb] {
        unify(other, &mut batch).map_err(|e| {
            bad_shapes(format!(
                "query, key and value have different batch sizes: {e}"
            ))
        })?;
    }
    let out: Dims = [batch, hq, l, dv].into_iter().collect();
    ctx.set_shape(0, out);

    // onnx reads the attribute as an int32.
    #[allow(clippy::cast_possible_truncation)]
    let softmax = ctx
        .attr("softmax_precision")
        .map_or(if q.elem == DOUBLE { DOUBLE } else { FLOAT }, |a| {
            a.i.unwrap_or(0) as i32
        });
    if !matches!(softmax, FLOAT | FLOAT16 | BFLOAT16 | DOUBLE) {
        return Err(bad_attr(
            "softmax_precision",
            format!(
                "the softmax precision must be float, float16, bfloat16 or double, it is {}",
                super::traditionalml::elem_text(softmax)
            ),
        ));
    }
    modifier_graph(ctx, "score_mod", softmax)?;
    modifier_graph(ctx, "prob_mod", softmax)
}

/// The tensor type a value declares, if it declares one.
fn declared_tensor(vi: &ValueInfoProto) -> Option<&type_proto::Tensor> {
    match vi.r#type.as_ref()?.value.as_ref()? {
        type_proto::Value::TensorType(t) => Some(t),
        _ => None,
    }
}

/// The dims a declared tensor type gives (none without a shape).
fn shape_dims(t: &type_proto::Tensor) -> &[crate::proto::tensor_shape_proto::Dimension] {
    t.shape.as_ref().map_or(&[], |s| &s.dim[..])
}

/// A modifier graph (`score_mod`, `prob_mod`), when given: one input, one
/// output; the element types it declares are `elem`, the shapes it declares
/// have rank 4 and agree where both give a value.
fn modifier_graph(ctx: &NodeCtx<'_, '_>, name: &str, elem: i32) -> InferResult {
    let Some(a) = ctx.attr(name) else {
        return Ok(());
    };
    let bad = |message: String| bad_attr(name, message);
    let Some(g) = a.g() else {
        return Err(bad(format!("attribute '{name}' must be a graph")));
    };
    let (Some(input), Some(output)) = (g.input.first(), g.output.first()) else {
        return Err(bad(format!(
            "graph '{name}' must have one input and one output, it has {} and {}",
            g.input.len(),
            g.output.len()
        )));
    };
    if g.input.len() != 1 || g.output.len() != 1 {
        return Err(bad(format!(
            "graph '{name}' must have one input and one output, it has {} and {}",
            g.input.len(),
            g.output.len()
        )));
    }
    let elem_name = super::traditionalml::elem_text;
    if let Some(t) = declared_tensor(input) {
        let found = t.elem_type.unwrap_or(0);
        if found != elem {
            return Err(bad(format!(
                "the input of graph '{name}' must be {}, it is {}",
                elem_name(elem),
                elem_name(found)
            )));
        }
    }
    if output.r#type.is_some() {
        let Some(t) = declared_tensor(output) else {
            return Err(bad(format!(
                "the output of graph '{name}' must be a tensor"
            )));
        };
        let found = t.elem_type.unwrap_or(0);
        if found != elem {
            return Err(bad(format!(
                "the output of graph '{name}' must be {}, it is {}",
                elem_name(elem),
                elem_name(found)
            )));
        }
    }
    for (what, vi) in [("input", input), ("output", output)] {
        if let Some(shape) = declared_tensor(vi).and_then(|t| t.shape.as_ref()) {
            if shape.dim.len() != 4 {
                return Err(bad(format!(
                    "the {what} of graph '{name}' must have rank 4, it has rank {}",
                    shape.dim.len()
                )));
            }
        }
    }
    if let (Some(i), Some(o)) = (declared_tensor(input), declared_tensor(output)) {
        let value = |d: &crate::proto::tensor_shape_proto::Dimension| match d.value {
            Some(dimension::Value::DimValue(v)) => Some(v),
            _ => None,
        };
        for (x, y) in shape_dims(i).iter().zip(shape_dims(o)) {
            if let (Some(x), Some(y)) = (value(x), value(y)) {
                if x != y {
                    return Err(bad(format!(
                        "graph '{name}' must keep its input's shape: a dimension {x} becomes {y}"
                    )));
                }
            }
        }
    }
    Ok(())
}

pub const OPS: &[Entry] = &[
    Entry {
        domain: "ai.onnx.preview.training",
        op: "Adagrad",
        from: 1,
        to: 1,
        rule: adagrad,
    },
    Entry {
        domain: "ai.onnx.preview.training",
        op: "Adam",
        from: 1,
        to: 1,
        rule: adam,
    },
    Entry {
        domain: "ai.onnx.preview.training",
        op: "Momentum",
        from: 1,
        to: 1,
        rule: momentum,
    },
    Entry {
        domain: "ai.onnx.preview",
        op: "FlexAttention",
        from: 1,
        to: 1,
        rule: flex_attention,
    },
];
