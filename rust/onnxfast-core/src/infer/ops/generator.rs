//! Rules of onnx's `generator` family: Constant, ConstantOfShape, Range,
//! EyeLike and the random generators.

use super::{onnx, Entry};
use crate::diag::codes;
use crate::infer::constant::Const;
use crate::infer::context::{defect, At, InferError, InferResult, NodeCtx};
use crate::infer::util::{self, bad_attr, bad_const, bad_rank, dims_of};
use crate::ir::types::{elem_name, Dim, Dims, TensorType, Type, MAX_RANK};
use crate::proto::attribute_proto::AttributeType;

/// The element type code an INT attribute names, as onnx reads it: cast to
/// the 32-bit enum (so the upper half of the value is dropped).
pub(crate) fn as_data_type(value: i64) -> i32 {
    value as i32
}

/// True for an element type code onnx's `DataType` enum defines (0,
/// UNDEFINED, included).
pub(crate) fn is_data_type(code: i32) -> bool {
    code == 0 || elem_name(code).is_some()
}

/// The element type named by the node's INT attribute `name` (onnx's
/// propagateElemTypeFromAttributeToOutput): `default` when the node does
/// not set it (a defect when there is no default), a defect when it holds
/// no integer or not a data type.
pub(crate) fn dtype_attr(
    ctx: &NodeCtx<'_, '_>,
    name: &str,
    default: Option<i32>,
) -> InferResult<i32> {
    let Some(a) = ctx.attr(name) else {
        return default.ok_or_else(|| {
            bad_attr(
                name,
                format!("attribute '{name}' is needed to know the output type"),
            )
        });
    };
    let Some(code) = a.i else {
        return Err(bad_attr(
            name,
            format!("attribute '{name}' must hold an integer naming an element type"),
        ));
    };
    let elem = as_data_type(code);
    if !is_data_type(elem) {
        return Err(bad_attr(
            name,
            format!("attribute '{name}' is {code}, which is not an element type"),
        ));
    }
    Ok(elem)
}

/// Dims from a tensor's dims, `None` when there are too many to represent.
fn dims_of_tensor(dims: &[i64]) -> Option<Dims> {
    (dims.len() <= MAX_RANK).then(|| dims_of(dims))
}

/// The longest shape onnx makes up from the length of a shape input alone
/// (longer ones give no shape).
const MAX_RANK_FROM_LENGTH: i64 = 1024;

/// `dims` of shape input `i`, refused when `non_negative` and one of them
/// is a negative number.
fn check_non_negative(i: usize, dims: Dims, non_negative: bool) -> InferResult<Dims> {
    match dims.iter().filter_map(|d| d.value()).find(|&v| v < 0) {
        Some(v) if non_negative => Err(bad_const(
            i,
            format!("input {i} gives a shape with the negative dimension {v}"),
        )),
        _ => Ok(dims),
    }
}

fn not_1d(ctx: &NodeCtx<'_, '_>, i: usize, s: &[Dim]) -> InferError {
    bad_rank(
        i,
        format!(
            "input {i} gives a shape, so it must be 1-D; it has shape {}",
            ctx.show_dims(s)
        ),
    )
}

/// The shape given by input `i`, a 1-D int64 tensor of dims (onnx's
/// getShapeInput): its values when it is constant, else the values data
/// propagation computed for it, else as many unknown dims as its length
/// when that is known. `non_negative`: a negative value is a defect.
pub(crate) fn shape_input(
    ctx: &mut NodeCtx<'_, '_>,
    i: usize,
    non_negative: bool,
) -> InferResult<Option<Dims>> {
    // Without values of its own, onnx's getShapeInput infers the rank from
    // the input's length, which must be 1-D: values only onnxfast follows
    // do not excuse a shape input of another rank.
    if !ctx.onnx_has_values(i) {
        if let Some(s) = ctx.shape(i) {
            if s.len() != 1 {
                return Err(not_1d(ctx, i, s));
            }
        }
    }
    if let Some(c) = ctx.constant(i) {
        if c.elem() != 7 {
            return Err(bad_const(
                i,
                format!(
                    "input {i} gives a shape, so it must hold int64 values; it holds {}",
                    elem_name(c.elem()).unwrap_or("values of an unknown type")
                ),
            ));
        }
        let count = c
            .dims()
            .iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(d.max(0)));
        if count.is_none_or(|n| n > MAX_RANK as i64) {
            // A rank beyond what the engine represents: unknown.
            return Ok(None);
        }
        let Some(values) = ctx.const_ints(i)? else {
            return Ok(None);
        };
        return check_non_negative(i, dims_of(&values), non_negative).map(Some);
    }
    if let Some(data) = ctx.data(i) {
        // The values data propagation computed (symbols and unknowns too).
        return check_non_negative(i, data.clone(), non_negative).map(Some);
    }
    let Some(s) = ctx.shape(i) else {
        return Ok(None);
    };
    if s.len() != 1 {
        return Err(not_1d(ctx, i, s));
    }
    match s.first().copied().and_then(Dim::value) {
        Some(n) if (0..=MAX_RANK_FROM_LENGTH).contains(&n) => Ok(Some(
            std::iter::repeat_n(Dim::Unknown, n as usize).collect(),
        )),
        _ => Ok(None),
    }
}

// ---- Constant ---------------------------------------------------------------

/// The attributes that hold a Constant's value, by schema version.
fn value_attrs(since: i64) -> &'static [&'static str] {
    const ALL: &[&str] = &[
        "value",
        "sparse_value",
        "value_int",
        "value_ints",
        "value_float",
        "value_floats",
        "value_string",
        "value_strings",
    ];
    if since >= 12 {
        ALL
    } else {
        &ALL[..2]
    }
}

/// Constant 1: the type of `value`, when given.
fn constant_v1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if let Some(t) = ctx.attr("value").and_then(|a| a.t()) {
        ctx.set_tensor(0, t.data_type(), dims_of_tensor(&t.dims));
    }
    Ok(())
}

/// Constant 9: `value` must hold a tensor.
fn constant_v9(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let Some(t) = ctx.attr("value").and_then(|a| a.t()) else {
        return Err(bad_attr(
            "value",
            "a Constant needs attribute 'value' holding a tensor",
        ));
    };
    ctx.set_tensor(0, t.data_type(), dims_of_tensor(&t.dims));
    Ok(())
}

/// Constant 11 and later: exactly one value attribute, which gives the type.
fn constant(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let names = value_attrs(ctx.schema.since_version);
    let mut given = names.iter().filter_map(|&n| ctx.attr(n).map(|a| (n, a)));
    let (Some((name, a)), None) = (given.next(), given.next()) else {
        let set: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| ctx.attr(n).is_some())
            .collect();
        return Err(defect(
            codes::INFERENCE_FAILED,
            At::Node,
            if set.is_empty() {
                format!(
                    "a Constant needs one of the attributes {}; it has none",
                    names.join(", ")
                )
            } else {
                format!(
                    "a Constant takes exactly one of the attributes {}; it has {}",
                    names.join(", "),
                    set.join(", ")
                )
            },
        ));
    };
    let missing = |what: &str| {
        bad_attr(
            name,
            format!("attribute '{name}' of the Constant holds no {what}"),
        )
    };
    let scalar = Some(Dims::new());
    let (elem, shape) = match name {
        "value" => match a.t() {
            Some(t) => (t.data_type(), dims_of_tensor(&t.dims)),
            None => (0, scalar),
        },
        "sparse_value" => match a.sparse_tensor() {
            Some(s) => (
                s.values.as_ref().map_or(0, |v| v.data_type()),
                dims_of_tensor(&s.dims),
            ),
            None => (0, scalar),
        },
        "value_int" => {
            a.i.ok_or_else(|| missing("integer"))?;
            (7, scalar)
        }
        "value_float" => {
            a.f.ok_or_else(|| missing("float"))?;
            (1, scalar)
        }
        "value_string" => {
            a.s.as_ref().ok_or_else(|| missing("string"))?;
            (8, scalar)
        }
        "value_ints" => (7, Some(list_dims(a.ints.len()))),
        "value_floats" => (1, Some(list_dims(a.floats.len()))),
        _ => (8, Some(list_dims(a.strings().len()))),
    };
    ctx.set(0, Type::Tensor(TensorType::new(elem, shape)));
    Ok(())
}

/// The 1-D shape of a list of `len` values.
fn list_dims(len: usize) -> Dims {
    dims_of(&[i64::try_from(len).unwrap_or(i64::MAX)])
}

// ---- ConstantOfShape, EyeLike ----------------------------------------------

/// Element type of `value` (a one-element 1-D tensor), else float; the
/// shape is the value of input 0.
fn constant_of_shape(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let elem = match ctx.attr("value") {
        None => 1,
        Some(a) => match a.t() {
            Some(t) if t.dims.len() == 1 => t.data_type(),
            t => {
                return Err(bad_attr(
                    "value",
                    format!(
                        "attribute 'value' must be a 1-D tensor; it has rank {}",
                        t.as_ref().map_or(0, |t| t.dims.len())
                    ),
                ))
            }
        },
    };
    ctx.set_elem(0, elem);
    if let Some(dims) = shape_input(ctx, 0, true)? {
        ctx.set_shape(0, dims);
    }
    Ok(())
}

/// Element type from `dtype`, else the input's; same 2-D shape as the input.
fn eye_like(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    elem_from_dtype_or_input(ctx)?;
    if let Some(s) = ctx.shape(0) {
        if s.len() != 2 {
            return Err(bad_rank(
                0,
                format!("input 0 must be 2-D; it has shape {}", ctx.show_dims(s)),
            ));
        }
    }
    ctx.shape_copy_unguarded(0, 0)?;
    ctx.propagate_shape(0, 0);
    Ok(())
}

/// Output 0's element type: attribute `dtype` when the node sets it, else
/// input 0's.
fn elem_from_dtype_or_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if ctx.attr("dtype").is_some() {
        let elem = dtype_attr(ctx, "dtype", None)?;
        ctx.set_elem(0, elem);
        Ok(())
    } else {
        ctx.propagate_elem(0, 0)
    }
}

// ---- Random generators ------------------------------------------------------

/// RandomNormal, RandomUniform: type from `dtype` (float by default), shape
/// from `shape`.
fn random(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let elem = dtype_attr(ctx, "dtype", Some(1))?;
    ctx.set_elem(0, elem);
    let Some(a) = ctx
        .attr("shape")
        .filter(|a| a.r#type == Some(AttributeType::Ints as i32))
    else {
        return Err(bad_attr(
            "shape",
            "attribute 'shape' must give the output's shape as integers",
        ));
    };
    if let Some(v) = a.ints.iter().find(|&&v| v < 0) {
        return Err(bad_attr(
            "shape",
            format!("attribute 'shape' has the negative dimension {v}"),
        ));
    }
    if a.ints.len() <= MAX_RANK {
        ctx.set_shape(0, dims_of(&a.ints));
    }
    Ok(())
}

/// RandomNormalLike, RandomUniformLike, Bernoulli: type from `dtype`, else
/// the input's; the input's shape.
fn random_like(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    elem_from_dtype_or_input(ctx)?;
    ctx.propagate_shape(0, 0);
    Ok(())
}

/// int32 or int64 (`dtype`); shape [batch_size, sample_size].
fn multinomial(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let elem = match ctx.attr("dtype") {
        None => 6,
        Some(a) => match as_data_type(a.i.unwrap_or(0)) {
            v @ (6 | 7) => v,
            v => {
                return Err(bad_attr(
                    "dtype",
                    format!(
                        "attribute 'dtype' must be int32 (6) or int64 (7); it is {}",
                        elem_name(v).map_or_else(|| v.to_string(), |n| format!("{n} ({v})"))
                    ),
                ))
            }
        },
    };
    ctx.set_elem(0, elem);
    let batch = match ctx.shape(0) {
        Some(s) => match s {
            [batch, _] => *batch,
            _ => {
                return Err(bad_rank(
                    0,
                    format!("input 0 must be 2-D; it has shape {}", ctx.show_dims(s)),
                ))
            }
        },
        None => Dim::Unknown,
    };
    let sample_size = match ctx.attr("sample_size") {
        Some(a) => a.i.unwrap_or(0),
        None => 1,
    };
    ctx.set_shape(0, [batch, Dim::Value(sample_size)].into_iter().collect());
    Ok(())
}

// ---- Range ------------------------------------------------------------------

/// A 1-D tensor of input 0's type; its length when start, limit and delta
/// are constants of a type onnx computes with.
pub(super) fn range(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    ctx.set_tensor_shape(0, [Dim::Unknown].into_iter().collect());
    let (Some(start), Some(limit), Some(delta)) =
        (ctx.constant(0), ctx.constant(1), ctx.constant(2))
    else {
        if let Some(len) = symbolic_range_len(ctx) {
            ctx.set_tensor_shape(0, [len].into_iter().collect());
        }
        return Ok(());
    };
    let elem = start.elem();
    if limit.elem() != elem || delta.elem() != elem {
        let name = |c: &Const<'_>| elem_name(c.elem()).unwrap_or("undefined");
        return Err(bad_const(
            0,
            format!(
                "start, limit and delta must have one type; they are {}, {} and {}",
                name(start),
                name(limit),
                name(delta)
            ),
        ));
    }
    if !matches!(elem, 1 | 6 | 7 | 11) {
        return Ok(());
    }
    for (i, c) in [start, limit, delta].into_iter().enumerate() {
        let dims = c.dims();
        if !dims.is_empty() {
            return Err(bad_const(
                i,
                format!("input {i} must be a scalar; it has dims {dims:?}"),
            ));
        }
    }
    // The difference is taken in the inputs' own type, as onnx does.
    let quotient = if matches!(elem, 6 | 7) {
        let [s, l, d] = [
            scalar_int(ctx, 0)?,
            scalar_int(ctx, 1)?,
            scalar_int(ctx, 2)?,
        ];
        if elem == 6 {
            let [s, l, d] = [s, l, d].map(|v| v as i32);
            f64::from(l.wrapping_sub(s)) / f64::from(d)
        } else {
            l.wrapping_sub(s) as f64 / d as f64
        }
    } else {
        let [s, l, d] = [
            scalar_float(ctx, 0)?,
            scalar_float(ctx, 1)?,
            scalar_float(ctx, 2)?,
        ];
        if elem == 1 {
            f64::from(l as f32 - s as f32) / d
        } else {
            (l - s) / d
        }
    };
    ctx.set_tensor_shape(
        0,
        [Dim::Value(range_length(quotient))].into_iter().collect(),
    );
    Ok(())
}

/// With `symbolic` and `data_prop`: the length of a Range whose start or
/// limit is computed from shapes (`Range(0, seq, 1)` is `seq`,
/// `Range(past, past + seq, 1)` is `seq`), its delta constant:
/// `ceil((limit - start)/delta)`. Integers, or floats of whole numbers
/// (torch's `arange(seq, dtype=float32)` of rotary embeddings:
/// `Range(0.0, Cast(seq, float), 1.0)`), which compute the same length
/// while they are exact (sizes below 2^24 in float32). `None` where a bound
/// has no value or is not a whole number, and for a length that shrinks as
/// sizes grow (empty wherever it is valid).
fn symbolic_range_len(ctx: &mut NodeCtx<'_, '_>) -> Option<Dim> {
    if !ctx.is_symbolic() {
        return None;
    }
    let elem = ctx.elem(0).ok()?;
    let mut at = [Dim::Unknown; 3];
    for (i, slot) in at.iter_mut().enumerate() {
        if ctx.elem(i).ok()? != elem || !matches!(elem, 1 | 6 | 7 | 11) {
            return None;
        }
        *slot = match ctx.constant(i) {
            Some(c) if !c.dims().is_empty() => return None,
            Some(_) if matches!(elem, 6 | 7) => Dim::Value(*ctx.const_ints(i).ok()??.first()?),
            Some(_) => {
                let floats = ctx.const_floats(i).ok()??;
                Dim::Value(*crate::infer::propagate::whole_numbers(&floats)?.first()?)
            }
            None => ctx.data_one(i)?,
        };
    }
    let [start, limit, Dim::Value(delta)] = at else {
        return None;
    };
    let span = match delta {
        0 => return None,
        d if d > 0 => ctx.sym_sub(limit, start)?,
        _ => ctx.sym_sub(start, limit)?,
    };
    super::tensor::slice_count(ctx, span, delta)
}

/// The value of constant scalar input `i`, as an integer.
fn scalar_int(ctx: &mut NodeCtx<'_, '_>, i: usize) -> InferResult<i64> {
    ctx.const_ints(i)?
        .and_then(|v| v.first().copied())
        .ok_or_else(|| bad_const(i, format!("input {i} holds no value")))
}

/// The value of constant scalar input `i`, as a float.
fn scalar_float(ctx: &mut NodeCtx<'_, '_>, i: usize) -> InferResult<f64> {
    ctx.const_floats(i)?
        .and_then(|v| v.first().copied())
        .ok_or_else(|| bad_const(i, format!("input {i} holds no value")))
}

/// ceil(quotient) as a length, never negative. A quotient that is not a
/// finite number in i64's range gives 0, as onnx's conversion does on x86
/// (the integer it yields there is i64::MIN, clamped to 0).
fn range_length(quotient: f64) -> i64 {
    util::cast_i64(quotient.ceil()).max(0)
}

pub const OPS: &[Entry] = &[
    onnx("Constant", 1, 1, constant_v1),
    onnx("Constant", 9, 9, constant_v9),
    onnx("Constant", 11, 25, constant),
    onnx("ConstantOfShape", 9, 25, constant_of_shape),
    onnx("EyeLike", 9, 22, eye_like),
    onnx("RandomNormal", 1, 22, random),
    onnx("RandomUniform", 1, 22, random),
    onnx("RandomNormalLike", 1, 22, random_like),
    onnx("RandomUniformLike", 1, 22, random_like),
    onnx("Bernoulli", 15, 22, random_like),
    onnx("Multinomial", 7, 22, multinomial),
    onnx("Range", 11, 27, range),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_lengths() {
        assert_eq!(range_length(2.5), 3);
        assert_eq!(range_length(-3.0), 0);
        assert_eq!(range_length(f64::INFINITY), 0);
        assert_eq!(range_length(f64::NAN), 0);
        assert_eq!(range_length(1e300), 0);
    }
}
