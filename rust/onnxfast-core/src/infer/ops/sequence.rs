//! Rules of onnx's `sequence` family: building, reading and splitting
//! sequences of tensors, and SequenceMap over a body graph.
//!
//! onnx reads these inputs through protobuf accessors that give defaults:
//! a value that is not a sequence (or a sequence without element type)
//! reads as element type 0 and rank 0 ([`tensor_elem`], [`tensor_dims`]);
//! the schema's type check refuses such inputs afterwards.

use super::controlflow::{has_shape, infer_subgraph, tensor_dims, tensor_elem, union_shape_into};
use super::{onnx, Entry};
use crate::diag::codes;
use crate::infer::context::{defect, At, InferResult, NodeCtx};
use crate::infer::util::{bad_attr, bad_const};
use crate::ir::types::{elem_name, Dim, Dims, TensorType, Type};

/// `seq(t)`.
fn seq_of(t: Type) -> Type {
    Type::Sequence(Some(Box::new(t)))
}

/// A sequence's element type, as onnx reads `sequence_type().elem_type()`.
fn seq_elem(t: &Type) -> Option<&Type> {
    match t {
        Type::Sequence(Some(e)) => Some(e),
        _ => None,
    }
}

fn elem_str(code: i32) -> String {
    elem_name(code).map_or_else(|| format!("<{code}>"), str::to_string)
}

fn sequence_empty(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let elem = match ctx.attr("dtype") {
        None => 1,
        // onnx converts the value to its 32-bit enum.
        Some(a) => match a.i {
            Some(v) => v as i32,
            None => return Err(bad_attr("dtype", "dtype has no integer value")),
        },
    };
    ctx.set(0, seq_of(Type::tensor(elem, None)));
    Ok(())
}

fn sequence_construct(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let n = ctx.n_inputs();
    let mut types = Vec::with_capacity(n);
    for i in 0..n {
        types.push(ctx.need(i)?);
    }
    let Some(first) = types.first() else {
        return Err(defect(
            codes::MISSING_INPUT_TYPE,
            At::Node,
            "SequenceConstruct needs at least one input",
        ));
    };
    let elem = tensor_elem(first);
    if let Some(i) = types.iter().position(|t| tensor_elem(t) != elem) {
        return Err(defect(
            codes::BAD_ELEM_TYPE,
            At::Input(i),
            format!(
                "the inputs of a sequence must have one element type: input 0 is {}, input {i} is {}",
                ctx.show(first),
                ctx.show(types[i])
            ),
        ));
    }
    let mut out = TensorType::new(elem, None);
    if types.iter().all(|t| has_shape(t)) {
        out.shape = Some(tensor_dims(first).iter().copied().collect());
        for t in types.iter().skip(1) {
            union_shape_into(tensor_dims(t), &mut out);
        }
    }
    ctx.set(0, seq_of(Type::Tensor(out)));
    Ok(())
}

fn sequence_insert(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    // onnx reads the element types of a type declared empty as 0.
    let (seq, tensor) = (ctx.need_or_empty(0)?, ctx.need_or_empty(1)?);
    let (Some(seq), Some(tensor)) = (seq, tensor) else {
        return sequence_insert_of_empty(ctx, seq, tensor);
    };
    let item = seq_elem(seq);
    let elem = item.map_or(0, tensor_elem);
    if elem != tensor_elem(tensor) {
        return Err(defect(
            codes::BAD_ELEM_TYPE,
            At::Input(1),
            format!(
                "the tensor to insert is {}, the sequence holds {}: element types {} and {} differ",
                ctx.show(tensor),
                ctx.show(seq),
                elem_str(tensor_elem(tensor)),
                elem_str(elem)
            ),
        ));
    }
    let mut out = TensorType::new(elem, None);
    if has_shape(seq) && has_shape(tensor) {
        out.shape = Some(item.map_or(&[][..], tensor_dims).iter().copied().collect());
        union_shape_into(tensor_dims(tensor), &mut out);
    }
    ctx.set(0, seq_of(Type::Tensor(out)));
    Ok(())
}

/// SequenceInsert where the sequence or the tensor is declared with an
/// empty type: onnx compares their element types (0 for the empty one),
/// and with both 0 gives a sequence of tensors of element type 0.
fn sequence_insert_of_empty(
    ctx: &mut NodeCtx<'_, '_>,
    seq: Option<&Type>,
    tensor: Option<&Type>,
) -> InferResult {
    let seq = seq.map_or(0, |t| seq_elem(t).map_or(0, tensor_elem));
    let tensor = tensor.map_or(0, tensor_elem);
    if seq != tensor {
        return Err(defect(
            codes::BAD_ELEM_TYPE,
            At::Input(1),
            format!(
                "the tensor to insert has element type {}, the sequence holds {} (a type declared \
                 empty reads as element type 0)",
                elem_str(tensor),
                elem_str(seq)
            ),
        ));
    }
    ctx.set(0, seq_of(Type::tensor(seq, None)));
    Ok(())
}

fn sequence_at(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if let Some(e) = seq_elem(ctx.need(0)?) {
        ctx.set(0, e.clone());
    }
    Ok(())
}

fn sequence_erase(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let t = ctx.need(0)?.clone();
    ctx.set(0, t);
    Ok(())
}

fn sequence_length(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_tensor(0, 7, Some(Dims::new()));
    Ok(())
}

fn concat_from_sequence(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let seq = ctx.need(0)?;
    let item = seq_elem(seq);
    ctx.set_tensor(0, item.map_or(0, tensor_elem), None);
    if !has_shape(seq) {
        return Ok(());
    }
    // onnx reads both attributes as 32-bit ints.
    let axis = i64::from(ctx.attr("axis").and_then(|a| a.i).unwrap_or(0) as i32);
    let new_axis = ctx.attr("new_axis").map_or(0, |a| a.i.unwrap_or(0) as i32);
    let dims = item.map_or(&[][..], tensor_dims);
    let rank = i64::try_from(dims.len()).unwrap_or(i64::MAX);
    if new_axis != 0 && new_axis != 1 {
        return Err(bad_attr(
            "new_axis",
            format!("new_axis is {new_axis}; it must be 0 or 1"),
        ));
    }
    let stack = new_axis == 1;
    let (lower, upper) = if stack {
        (-rank - 1, rank)
    } else {
        (-rank, rank - 1)
    };
    if axis < lower || axis > upper {
        return Err(bad_attr(
            "axis",
            format!(
                "axis {axis} is out of range [{lower}, {upper}] for elements of shape {}{}",
                ctx.show_dims(dims),
                if stack { " stacked on a new axis" } else { "" }
            ),
        ));
    }
    let axis = if axis < 0 { axis + upper + 1 } else { axis };
    let mut out = Dims::new();
    for i in 0..=upper {
        out.push(if i == axis {
            Dim::Unknown
        } else {
            let from = if stack && i > axis { i - 1 } else { i };
            usize::try_from(from)
                .ok()
                .and_then(|k| dims.get(k))
                .copied()
                .unwrap_or(Dim::Unknown)
        });
    }
    ctx.set_shape(0, out);
    Ok(())
}

/// The size of every chunk when a constant `split` makes them all equal
/// (`None` when unknown), checking the split against the split dim.
fn split_chunk(ctx: &mut NodeCtx<'_, '_>, split_dim: Dim) -> InferResult<Option<i64>> {
    if !ctx.ty(1).is_some_and(has_shape) {
        return Ok(None);
    }
    let Some(c) = ctx.constant(1) else {
        return Ok(None);
    };
    if !c.has_data_type() {
        return Ok(None);
    }
    if !matches!(c.elem(), 6 | 7) {
        return Err(bad_const(
            1,
            format!(
                "split is a constant of type {}; only int32 and int64 are read",
                elem_str(c.elem())
            ),
        ));
    }
    let sizes = ctx.const_ints(1)?.unwrap_or_default();
    let Some(&first) = sizes.first() else {
        return Err(bad_const(1, "split is empty"));
    };
    let Dim::Value(total) = split_dim else {
        return Ok(None);
    };
    let scalar = match ctx.ty(1) {
        Some(Type::Tensor(t) | Type::SparseTensor(t)) => {
            t.shape.as_ref().is_some_and(|s| s.is_empty())
        }
        Some(other) => {
            return Err(defect(
                codes::INPUT_KIND,
                At::Input(1),
                format!("split must be a tensor, it is a {}", other.kind_name()),
            ))
        }
        None => false,
    };
    if scalar {
        if first <= 0 {
            return Err(bad_const(
                1,
                format!("a scalar split must be positive, it is {first}"),
            ));
        }
        return Ok((total % first == 0).then_some(first));
    }
    // onnx sums in 64-bit arithmetic that wraps.
    let sum = sizes.iter().fold(0i64, |acc, &v| acc.wrapping_add(v));
    if sum != total {
        return Err(bad_const(
            1,
            format!("the split sizes add up to {sum}, the split dimension is {total}"),
        ));
    }
    Ok(sizes.iter().all(|&v| v == first).then_some(first))
}

fn split_to_sequence(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let Some(input) = ctx.need_or_empty(0)? else {
        // onnx gives a sequence of its element type, 0 for a type declared
        // empty (which its type check cannot name).
        ctx.set(0, seq_of(Type::tensor(0, None)));
        return Ok(());
    };
    ctx.set(0, seq_of(Type::tensor(tensor_elem(input), None)));
    if !has_shape(input) {
        return Ok(());
    }
    let dims = tensor_dims(input);
    let rank = i64::try_from(dims.len()).unwrap_or(i64::MAX);
    // onnx reads the axis as a 32-bit int.
    let axis = i64::from(ctx.int_or("axis", 0) as i32);
    if axis < -rank || axis >= rank {
        return Err(bad_attr(
            "axis",
            format!(
                "axis {axis} is out of range for input shape {} (expected [{}, {}))",
                ctx.show_dims(dims),
                -rank,
                rank
            ),
        ));
    }
    let axis = usize::try_from(if axis < 0 { axis + rank } else { axis }).unwrap_or(0);
    let split_dim = dims.get(axis).copied().unwrap_or(Dim::Unknown);
    let (chunk, keepdims) = if ctx.n_inputs() == 1 {
        let keep = ctx.attr("keepdims").map_or(1, |a| a.i.unwrap_or(0));
        (Some(1), keep != 0)
    } else {
        (split_chunk(ctx, split_dim)?, true)
    };
    let out: Dims = if keepdims {
        let mut out: Dims = dims.iter().copied().collect();
        if let Some(d) = out.get_mut(axis) {
            *d = match chunk {
                Some(c) if c > 0 => Dim::Value(c),
                _ => Dim::Unknown,
            };
        }
        out
    } else {
        dims.iter()
            .enumerate()
            .filter(|&(i, _)| i != axis)
            .map(|(_, d)| *d)
            .collect()
    };
    ctx.set(0, seq_of(Type::tensor(tensor_elem(input), Some(out))));
    Ok(())
}

fn sequence_map(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let n_in = ctx.n_inputs();
    let mut given = Vec::with_capacity(n_in);
    for i in 0..n_in {
        match ctx.need_or_empty(i)? {
            Some(Type::Sequence(e)) => given.push(e.as_deref().cloned()),
            other if i == 0 => {
                return Err(defect(
                    codes::INPUT_KIND,
                    At::Input(0),
                    format!(
                        "the first input of SequenceMap must be a sequence, it is {}",
                        NodeCtx::kind_text(other)
                    ),
                ))
            }
            // A type declared empty gives the body nothing.
            other => given.push(other.cloned()),
        }
    }
    let outs = infer_subgraph(ctx, "body", &given)?;
    if outs.is_empty() {
        return Ok(());
    }
    if outs.len() != ctx.n_outputs() {
        return Err(defect(
            codes::SUBGRAPH_SIGNATURE,
            At::Attribute("body".into()),
            format!(
                "the body has {} outputs, the node {}",
                outs.len(),
                ctx.n_outputs()
            ),
        ));
    }
    for (i, t) in outs.into_iter().enumerate() {
        ctx.set(i, Type::Sequence(t.map(Box::new)));
    }
    Ok(())
}

pub const OPS: &[Entry] = &[
    onnx("ConcatFromSequence", 11, 11, concat_from_sequence),
    onnx("SequenceAt", 11, 11, sequence_at),
    onnx("SequenceConstruct", 11, 11, sequence_construct),
    onnx("SequenceEmpty", 11, 11, sequence_empty),
    onnx("SequenceErase", 11, 11, sequence_erase),
    onnx("SequenceInsert", 11, 11, sequence_insert),
    onnx("SequenceLength", 11, 11, sequence_length),
    onnx("SequenceMap", 17, 17, sequence_map),
    onnx("SplitToSequence", 11, 24, split_to_sequence),
];
