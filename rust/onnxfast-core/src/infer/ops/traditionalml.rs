//! Rules of onnx's `traditionalml` family (`ai.onnx.ml`): encoders,
//! classifiers and tree ensembles. Most of these infer only element types
//! (from attributes that name the labels or values) and a batch dimension.

use super::{ml, Entry};
use crate::infer::context::{InferResult, NodeCtx};
use crate::infer::util::{bad_attr, bad_rank, check_rank, failed};
use crate::ir::types::{elem_name, Dim, Dims, TensorType, Type, MAX_RANK};
use crate::proto::AttributeProto;

const FLOAT: i32 = 1;
const UINT8: i32 = 2;
const INT64: i32 = 7;
const STRING: i32 = 8;

// ---- helpers other families may share ----------------------------------

/// An element type for a message: its name, else its code.
pub(crate) fn elem_text(code: i32) -> String {
    elem_name(code).map_or_else(|| format!("{code}"), str::to_string)
}

/// onnx's `type.tensor_type().elem_type()`: the element type of a dense
/// tensor, 0 for any other kind of value.
pub(crate) fn dense_elem(t: &Type) -> i32 {
    match t {
        Type::Tensor(x) => x.elem,
        _ => 0,
    }
}

/// onnx's propagateShapeFromInputToOutput for tensor outputs: the output
/// must already be of the input's kind; a dense or sparse tensor's shape is
/// copied when known.
pub(crate) fn copy_shape(ctx: &mut NodeCtx<'_, '_>, j: usize, i: usize) -> InferResult {
    ctx.shape_copy_unguarded(j, i)?;
    let from = ctx.need(j)?;
    let to = ctx.outputs.get_mut(i).and_then(Option::as_mut);
    match (from, to) {
        (Type::Tensor(s), Some(Type::Tensor(t)))
        | (Type::SparseTensor(s), Some(Type::SparseTensor(t))) => {
            if s.shape.is_some() {
                t.shape.clone_from(&s.shape);
            }
            Ok(())
        }
        (s, Some(t)) if std::mem::discriminant(s) == std::mem::discriminant(t) => Ok(()),
        (s, t) => Err(failed(format!(
            "the shape of input {j} (a {}) cannot be passed to output {i} ({})",
            s.kind_name(),
            t.map_or("without a type", |t| t.kind_name())
        ))),
    }
}

/// onnx's getAttributeProtoElemTypeAndLength: the element type and length
/// of a list attribute (ints, floats, strings, or a 1-D tensor).
pub(crate) fn attr_elem_and_len(a: &AttributeProto) -> InferResult<(i32, i64)> {
    let len = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    if !a.ints.is_empty() {
        return Ok((INT64, len(a.ints.len())));
    }
    if !a.floats.is_empty() {
        return Ok((FLOAT, len(a.floats.len())));
    }
    if !a.strings().is_empty() {
        return Ok((STRING, len(a.strings().len())));
    }
    let Some(t) = a.t() else {
        return Ok((0, 0));
    };
    let name = a.name();
    match t.dims[..] {
        [n] if (0..=i64::from(i32::MAX)).contains(&n) => Ok((t.data_type.unwrap_or(0), n)),
        [n] => Err(bad_attr(
            name,
            format!(
                "attribute '{name}' has length {n}, outside [0, {}]",
                i32::MAX
            ),
        )),
        _ => Err(bad_attr(
            name,
            format!(
                "attribute '{name}' must be a 1-D tensor, it has rank {}",
                t.dims.len()
            ),
        )),
    }
}

/// onnx's getAttributeElementTypeAndLength: the element type and length
/// of the one attribute of `names` the node sets (0 and 0 when none does).
pub(crate) fn one_list_attr(ctx: &NodeCtx<'_, '_>, names: &[&str]) -> InferResult<(i32, i64)> {
    let mut found = (0, 0);
    for name in names {
        if let Some(a) = ctx.attr(name) {
            if found.0 != 0 {
                return Err(bad_attr(
                    name,
                    format!("only one of the attributes {} may be set", names.join(", ")),
                ));
            }
            found = attr_elem_and_len(a)?;
        }
    }
    Ok(found)
}

/// The node sets list attribute `name` with at least one string.
fn has_strings(ctx: &NodeCtx<'_, '_>, name: &str) -> bool {
    ctx.attr(name).is_some_and(|a| !a.strings().is_empty())
}

/// The batch dimension: dim 0 of input 0 when its shape is known.
fn batch_dim(ctx: &NodeCtx<'_, '_>) -> InferResult<Dim> {
    match ctx.shape(0) {
        None => Ok(Dim::Unknown),
        Some([]) => Err(bad_rank(
            0,
            "input 0 must have rank 1 or more, it has rank 0",
        )),
        Some([n, ..]) => Ok(*n),
    }
}

fn dims(list: &[Dim]) -> Dims {
    list.iter().copied().collect()
}

// ---- rules -----------------------------------------------------------------

/// ArrayFeatureExtractor: the last axis of X is replaced by as many entries
/// as Y has indices. As onnxruntime runs it (`contrib_ops`), where onnx's
/// rule gives less, its kernel's shape: a vector X gives `[1, indices]`,
/// and a scalar Y one index.
fn array_feature_extractor(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    let runtime = ctx.runtime_checks();
    if x.len() == 1 && !runtime {
        return Ok(());
    }
    let count = match index_count(ctx)? {
        Dim::Unknown if runtime && ctx.input_shape(1).is_some_and(<[Dim]>::is_empty) => {
            Dim::Value(1)
        }
        count => count,
    };
    let mut out = if x.len() == 1 {
        dims(&[Dim::Value(1)])
    } else {
        dims(&x[..x.len().saturating_sub(1)])
    };
    out.push(count);
    ctx.set_tensor_shape(0, out);
    Ok(())
}

/// The number of indices of input 1: the product of its dims, which may
/// hold one symbol when every other dim is 1.
fn index_count(ctx: &NodeCtx<'_, '_>) -> InferResult<Dim> {
    // Read by getInputShape in onnx (the data in place).
    let Some(indices) = ctx.input_shape(1) else {
        return Ok(Dim::Unknown);
    };
    if indices.is_empty() {
        return Ok(Dim::Unknown);
    }
    let mut count = 1i64;
    let mut symbol = None;
    for d in indices {
        match *d {
            Dim::Value(v) => {
                count = count.checked_mul(v).ok_or_else(|| {
                    failed(format!(
                        "the number of indices (product of {}) overflows",
                        ctx.show_dims(indices)
                    ))
                })?;
            }
            Dim::Sym(_) if symbol.is_none() => symbol = Some(*d),
            _ => return Ok(Dim::Unknown),
        }
    }
    Ok(match symbol {
        None => Dim::Value(count),
        Some(s) if count == 1 => s,
        Some(_) => Dim::Unknown,
    })
}

/// Binarizer: same type and shape as the input.
fn binarizer(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)
}

/// CastMap: a tensor of the element type `cast_to` names (float when the
/// attribute is not set; none for an unknown name).
fn cast_map(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let elem = match ctx.attr("cast_to") {
        None => FLOAT,
        Some(a) => match a.s.as_deref() {
            Some(b"TO_FLOAT") => FLOAT,
            Some(b"TO_INT64") => INT64,
            Some(b"TO_STRING") => STRING,
            _ => 0,
        },
    };
    ctx.set_tensor(0, elem, None);
    Ok(())
}

/// CategoryMapper: strings become int64 and int64 become strings; the shape
/// is kept. Both category lists are required, of one length.
fn category_mapper(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let ints = ctx
        .attr("cats_int64s")
        .ok_or_else(|| bad_attr("cats_int64s", "attribute 'cats_int64s' is required"))?;
    let strings = ctx
        .attr("cats_strings")
        .ok_or_else(|| bad_attr("cats_strings", "attribute 'cats_strings' is required"))?;
    if ints.ints.len() != strings.strings().len() {
        return Err(bad_attr(
            "cats_strings",
            format!(
                "'cats_int64s' has {} entries and 'cats_strings' {}: they must have the same length",
                ints.ints.len(),
                strings.strings().len()
            ),
        ));
    }
    let Some(x) = ctx.typed(0)? else {
        return Ok(());
    };
    match dense_elem(x) {
        STRING => ctx.set_elem(0, INT64),
        INT64 => ctx.set_elem(0, STRING),
        _ => {}
    }
    if ctx.shape(0).is_some() {
        copy_shape(ctx, 0, 0)?;
    }
    Ok(())
}

/// DictVectorizer: a tensor of the map's value element type.
fn dict_vectorizer(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    // onnx reads the map's value type unguarded: a type of no kind gives
    // element type 0 too (which its type check cannot name).
    let elem = match ctx.need_or_empty(0)? {
        Some(Type::Map(_, Some(v))) => dense_elem(v),
        _ => 0,
    };
    ctx.set_tensor(0, elem, None);
    Ok(())
}

/// LabelEncoder-1: strings become int64 and int64 become strings.
fn label_encoder_1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let elem = match ctx.need_or_empty(0)?.map_or(0, dense_elem) {
        STRING => INT64,
        INT64 => STRING,
        _ => 0,
    };
    ctx.set_tensor(0, elem, None);
    Ok(())
}

/// LabelEncoder-2: exactly one `keys_*` list, matching the input's element
/// type, and one `values_*` list, which gives the output's; same shape.
fn label_encoder_2(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if ctx.n_inputs() != 1 || ctx.n_outputs() != 1 {
        return Err(failed("LabelEncoder has one input and one output"));
    }
    const KEYS: [(&str, i32); 3] = [
        ("keys_strings", STRING),
        ("keys_int64s", INT64),
        ("keys_floats", FLOAT),
    ];
    const VALUES: [(&str, i32); 3] = [
        ("values_strings", STRING),
        ("values_int64s", INT64),
        ("values_floats", FLOAT),
    ];
    let set = |list: &[(&'static str, i32); 3]| -> Vec<(&'static str, i32)> {
        list.iter()
            .copied()
            .filter(|(name, _)| ctx.attr(name).is_some())
            .collect()
    };
    let keys = set(&KEYS);
    let [(key_attr, key_type)] = keys[..] else {
        return Err(bad_attr(
            "keys_strings",
            format!(
                "exactly one of keys_strings, keys_int64s, keys_floats must be set, {} are",
                keys.len()
            ),
        ));
    };
    let input = ctx.need_or_empty(0)?.map_or(0, dense_elem);
    if input != key_type {
        return Err(bad_attr(
            key_attr,
            format!(
                "'{key_attr}' is set, so the input must be a {} tensor, it is {}",
                elem_text(key_type),
                elem_text(input)
            ),
        ));
    }
    let values = set(&VALUES);
    let [(_, value_type)] = values[..] else {
        return Err(bad_attr(
            "values_strings",
            format!(
                "exactly one of values_strings, values_int64s, values_floats must be set, {} are",
                values.len()
            ),
        ));
    };
    ctx.set_tensor(0, value_type, None);
    copy_shape(ctx, 0, 0)
}

/// LabelEncoder-4: one `keys_*` and one `values_*` attribute (lists or 1-D
/// tensors) of one length; keys of the input's element type; the output
/// has the values' element type and the input's shape.
fn label_encoder_4(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    const KEYS: [&str; 4] = ["keys_tensor", "keys_strings", "keys_int64s", "keys_floats"];
    const VALUES: [&str; 4] = [
        "values_tensor",
        "values_strings",
        "values_int64s",
        "values_floats",
    ];
    let (key_type, key_len) = one_list_attr(ctx, &KEYS)?;
    if key_type == 0 {
        return Err(bad_attr(
            "keys_tensor",
            format!("one of {} must be set", KEYS.join(", ")),
        ));
    }
    let input = ctx.need_or_empty(0)?.map_or(0, dense_elem);
    if key_type != input {
        return Err(bad_attr(
            "keys_tensor",
            format!(
                "the keys are {} but the input is a {} tensor",
                elem_text(key_type),
                elem_text(input)
            ),
        ));
    }
    let (value_type, value_len) = one_list_attr(ctx, &VALUES)?;
    if value_type == 0 {
        return Err(bad_attr(
            "values_tensor",
            format!("one of {} must be set", VALUES.join(", ")),
        ));
    }
    if value_len != key_len {
        return Err(bad_attr(
            "values_tensor",
            format!("there are {key_len} keys but {value_len} values"),
        ));
    }
    if let Some(t) = ctx.attr("default_tensor").and_then(|a| a.t()) {
        let elem = t.data_type.unwrap_or(0);
        if elem != 0 {
            if elem != value_type {
                return Err(bad_attr(
                    "default_tensor",
                    format!(
                        "the default is {} but the values are {}",
                        elem_text(elem),
                        elem_text(value_type)
                    ),
                ));
            }
            if t.dims[..] != [1] {
                return Err(bad_attr(
                    "default_tensor",
                    format!(
                        "the default must be a 1-D tensor of one element, its dims are {:?}",
                        t.dims
                    ),
                ));
            }
        }
    }
    ctx.set_tensor(0, value_type, None);
    copy_shape(ctx, 0, 0)
}

/// LinearClassifier: labels [N] (strings or int64), scores [N, classes];
/// a 1-D input is one example.
fn linear_classifier(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let strings = has_strings(ctx, "classlabels_strings");
    let labels = if strings {
        ctx.attr("classlabels_strings")
            .map_or(0, |a| a.strings().len())
    } else {
        ctx.attr("classlabels_ints").map_or(0, |a| a.ints.len())
    };
    let intercepts = ctx.attr("intercepts").map_or(0, |a| a.floats.len());
    let mut classes = i64::try_from(intercepts).unwrap_or(i64::MAX);
    if intercepts == 1 && labels == 2 {
        classes = 2;
    }
    let batch = match ctx.shape(0) {
        None => Dim::Unknown,
        Some([_]) => Dim::Value(1),
        Some([n, _]) => *n,
        Some(s) => {
            return Err(bad_rank(
                0,
                format!("input 0 must have rank 1 or 2, it has rank {}", s.len()),
            ))
        }
    };
    ctx.set_tensor(
        0,
        if strings { STRING } else { INT64 },
        Some(dims(&[batch])),
    );
    ctx.set_tensor(1, FLOAT, Some(dims(&[batch, Dim::Value(classes)])));
    Ok(())
}

/// OneHotEncoder: exactly one category list; the output adds an axis of
/// that many categories.
fn one_hot_encoder(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let ints = ctx.attr("cats_int64s");
    let strings = ctx.attr("cats_strings");
    if ints.is_some() == strings.is_some() {
        return Err(bad_attr(
            "cats_int64s",
            "exactly one of 'cats_int64s' and 'cats_strings' must be set",
        ));
    }
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    if x.len() >= MAX_RANK {
        ctx.set_tensor(0, FLOAT, None);
        return Ok(());
    }
    let count = ints
        .map_or(0, |a| a.ints.len())
        .max(strings.map_or(0, |a| a.strings().len()));
    let mut out = dims(x);
    out.push(Dim::Value(i64::try_from(count).unwrap_or(i64::MAX)));
    ctx.set_tensor(0, FLOAT, Some(out));
    Ok(())
}

/// Classifiers that infer only the label type (SVMClassifier and
/// TreeEnsembleClassifier-1 as onnx infers them): strings when
/// `classlabels_strings` is set.
fn label_type_only(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let strings = has_strings(ctx, "classlabels_strings");
    ctx.set_tensor(0, if strings { STRING } else { INT64 }, None);
    Ok(())
}

/// Tree ensembles of version 3: a list attribute and its `_as_tensor` twin
/// are not both set.
fn no_twin_attrs(ctx: &NodeCtx<'_, '_>, names: &[&str]) -> InferResult {
    for name in names {
        let twin = format!("{name}_as_tensor");
        if ctx.attr(name).is_some() && ctx.attr(&twin).is_some() {
            return Err(bad_attr(
                &twin,
                format!("only one of the attributes '{name}' and '{twin}' may be set"),
            ));
        }
    }
    Ok(())
}

/// TreeEnsembleClassifier-1: the label type (onnx's rule). As onnxruntime
/// runs it (`contrib_ops`), version 3's shapes too, which its kernel gives
/// every version: skl2onnx and onnxmltools write version 1.
fn tree_ensemble_classifier_1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    label_type_only(ctx)?;
    if !ctx.runtime_checks() {
        return Ok(());
    }
    ctx.set_elem(1, FLOAT);
    let e = class_count(ctx)?;
    if let Some(n) = runtime_batch(ctx) {
        labels_and_scores(ctx, n, e);
    }
    Ok(())
}

/// A classifier's outputs: labels [n], scores [n, k] (element types set
/// by the caller).
fn labels_and_scores(ctx: &mut NodeCtx<'_, '_>, n: Dim, k: Dim) {
    ctx.set_shape(0, dims(&[n]));
    ctx.set_shape(1, dims(&[n, k]));
}

/// A count read from an attribute as a dim: a negative one is no size
/// (the kernel fails when run).
fn count_dim(v: i64) -> Dim {
    if v < 0 {
        Dim::Unknown
    } else {
        Dim::Value(v)
    }
}

/// The batch onnxruntime's kernels of the classic ML operators read from
/// X: 1 for a vector, else its first dim (unknown without a shape; `None`
/// for a scalar, which they refuse when run).
fn runtime_batch(ctx: &NodeCtx<'_, '_>) -> Option<Dim> {
    match ctx.shape(0) {
        None => Some(Dim::Unknown),
        Some([]) => None,
        Some([_]) => Some(Dim::Value(1)),
        Some([n, ..]) => Some(*n),
    }
}

/// As onnxruntime runs it (`contrib_ops`), onnx's rule being types only:
/// output 0 of X's shape, which their kernels give it (none for a scalar
/// X, which they refuse when run): floats (Scaler, Normalizer), else X's
/// element type (Imputer).
fn runtime_same_shape(ctx: &mut NodeCtx<'_, '_>, floats: bool) -> InferResult {
    if !ctx.runtime_checks() {
        return Ok(());
    }
    if floats {
        ctx.set_elem(0, FLOAT);
    } else {
        ctx.propagate_elem(0, 0)?;
    }
    if let Some(s) = ctx.shape(0).filter(|s| !s.is_empty()) {
        let s = dims(s);
        ctx.set_shape(0, s);
    }
    Ok(())
}

fn scaled_floats(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    runtime_same_shape(ctx, true)
}

fn imputer(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    runtime_same_shape(ctx, false)
}

/// FeatureVectorizer: as onnxruntime runs it, float [N, the sum of
/// `inputdimensions`], N read from the first input (onnx: types only).
fn feature_vectorizer(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if !ctx.runtime_checks() {
        return Ok(());
    }
    let total = ctx.attr("inputdimensions").map_or(Some(0i64), |a| {
        a.ints.iter().try_fold(0i64, |sum, &v| {
            (v >= 0).then(|| sum.checked_add(v)).flatten()
        })
    });
    ctx.set_elem(0, FLOAT);
    if let (Some(n), Some(total)) = (runtime_batch(ctx), total) {
        ctx.set_shape(0, dims(&[n, Dim::Value(total)]));
    }
    Ok(())
}

/// LinearRegressor: as onnxruntime runs it, float [N, targets] for an X of
/// rank 1 or 2 (onnx: types only).
fn linear_regressor(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if !ctx.runtime_checks() || ctx.shape(0).is_some_and(|s| s.len() > 2) {
        return Ok(());
    }
    let targets = count_dim(ctx.own_int("targets", 1));
    if let Some(n) = runtime_batch(ctx) {
        ctx.set_tensor(0, FLOAT, Some(dims(&[n, targets])));
    }
    Ok(())
}

/// SVMClassifier: the label type (onnx's rule). As onnxruntime runs it
/// (`contrib_ops`), its kernel's shapes: labels [N] and scores [N, k], `k`
/// the number of classes, or without `prob_a` for support vectors the
/// number of class pairs (2 for two classes).
fn svm_classifier(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    label_type_only(ctx)?;
    if !ctx.runtime_checks() {
        return Ok(());
    }
    ctx.set_elem(1, FLOAT);
    let strings = ctx
        .attr("classlabels_strings")
        .map_or(0, |a| a.strings().len());
    let ints = ctx.attr("classlabels_ints").map_or(0, |a| a.ints.len());
    let classes = if strings > 0 { strings } else { ints };
    let vectors = ctx.attr("vectors_per_class").map_or(Some(0i64), |a| {
        a.ints.iter().try_fold(0i64, |sum, &v| sum.checked_add(v))
    });
    let (Some(n), Ok(classes), Some(vectors)) =
        (runtime_batch(ctx), i64::try_from(classes), vectors)
    else {
        return Ok(());
    };
    if classes == 0 {
        // (The kernel refuses a classifier without labels.)
        return Ok(());
    }
    let probabilities = ctx.attr("prob_a").is_some_and(|a| !a.floats.is_empty());
    let scores = if vectors > 0 && !probabilities {
        match classes {
            ..=2 => Some(2),
            c => c.checked_mul(c - 1).map(|p| p / 2),
        }
    } else {
        Some(classes)
    };
    let Some(scores) = scores else {
        return Ok(());
    };
    labels_and_scores(ctx, n, Dim::Value(scores));
    Ok(())
}

/// SVMRegressor: as onnxruntime runs it, float [N, 1] (one target; onnx:
/// types only).
fn svm_regressor(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if !ctx.runtime_checks() {
        return Ok(());
    }
    if let Some(n) = runtime_batch(ctx) {
        ctx.set_tensor(0, FLOAT, Some(dims(&[n, Dim::Value(1)])));
    }
    Ok(())
}

/// TreeEnsembleClassifier-3: labels [N], scores [N, labels]; X is [N, F].
fn tree_ensemble_classifier_3(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    no_twin_attrs(
        ctx,
        &[
            "nodes_values",
            "nodes_hitrates",
            "class_weights",
            "base_values",
        ],
    )?;
    classifier_shapes(ctx)
}

/// A tree classifier's outputs: labels [N] (strings when
/// `classlabels_strings` is set), float scores [N, labels].
fn classifier_shapes(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let strings = has_strings(ctx, "classlabels_strings");
    ctx.set_elem(0, if strings { STRING } else { INT64 });
    ctx.set_elem(1, FLOAT);
    check_rank(ctx, 0, 2)?;
    let n = batch_dim(ctx)?;
    let e = class_count(ctx)?;
    labels_and_scores(ctx, n, e);
    Ok(())
}

/// A tree classifier's number of classes: its labels' (one of
/// `classlabels_strings` and `classlabels_int64s` must be set).
fn class_count(ctx: &NodeCtx<'_, '_>) -> InferResult<Dim> {
    let strings = has_strings(ctx, "classlabels_strings");
    let labels = if strings {
        ctx.attr("classlabels_strings")
            .map_or(0, |a| a.strings().len())
    } else {
        match ctx.attr("classlabels_int64s").map(|a| a.ints.len()) {
            Some(k) if k > 0 => k,
            _ => {
                return Err(bad_attr(
                    "classlabels_int64s",
                    "one of 'classlabels_strings' and 'classlabels_int64s' must be set",
                ))
            }
        }
    };
    Ok(Dim::Value(i64::try_from(labels).unwrap_or(i64::MAX)))
}

/// The number of targets of a regressor: attribute `n_targets` when set.
fn targets(ctx: &NodeCtx<'_, '_>) -> Dim {
    ctx.attr("n_targets")
        .map_or(Dim::Unknown, |a| Dim::Value(a.i.unwrap_or(0)))
}

/// TreeEnsembleRegressor-1: onnx has no rule (the schema's types only).
/// As onnxruntime runs it (`contrib_ops`), version 3's float
/// [N, n_targets], which its kernel gives every version.
fn tree_ensemble_regressor_1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if !ctx.runtime_checks() {
        return Ok(());
    }
    if let Some(n) = runtime_batch(ctx) {
        let e = match targets(ctx) {
            Dim::Value(v) => count_dim(v),
            e => e,
        };
        ctx.set_tensor(0, FLOAT, Some(dims(&[n, e])));
    }
    Ok(())
}

/// TreeEnsembleRegressor-3: float [N, n_targets]; X is [N, F].
fn tree_ensemble_regressor_3(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    no_twin_attrs(
        ctx,
        &[
            "nodes_values",
            "nodes_hitrates",
            "target_weights",
            "base_values",
        ],
    )?;
    regressor_shapes(ctx)
}

fn regressor_shapes(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    check_rank(ctx, 0, 2)?;
    let n = batch_dim(ctx)?;
    let e = targets(ctx);
    ctx.set_tensor(0, FLOAT, Some(dims(&[n, e])));
    Ok(())
}

/// Attribute `name` holds `expected` entries of element type `elem` (when
/// set; it must be when `required`).
fn check_list_attr(
    ctx: &NodeCtx<'_, '_>,
    name: &str,
    expected: i64,
    elem: i32,
    required: bool,
) -> InferResult {
    let Some(a) = ctx.attr(name) else {
        return if required {
            Err(bad_attr(name, format!("attribute '{name}' is required")))
        } else {
            Ok(())
        };
    };
    let (found, len) = attr_elem_and_len(a)?;
    if found != elem {
        return Err(bad_attr(
            name,
            format!(
                "attribute '{name}' must hold {} values, it holds {}",
                elem_text(elem),
                if found == 0 {
                    "none".to_string()
                } else {
                    elem_text(found)
                }
            ),
        ));
    }
    if len != expected {
        return Err(bad_attr(
            name,
            format!(
                "attribute '{name}' must have {expected} entries (as 'nodes_splits'), it has {len}"
            ),
        ));
    }
    Ok(())
}

/// The element type of a tensor attribute (0 when it holds no tensor).
fn tensor_attr_elem(a: &AttributeProto) -> i32 {
    a.t().and_then(|t| t.data_type).unwrap_or(0)
}

/// TreeEnsemble-5: the `nodes_*` attributes have one length (that of
/// `nodes_splits`), the `leaf_*` ones another; splits, membership values
/// and leaf weights have the input's element type. Y is [N, n_targets].
fn tree_ensemble(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    check_rank(ctx, 0, 2)?;
    let splits = ctx
        .attr("nodes_splits")
        .ok_or_else(|| bad_attr("nodes_splits", "attribute 'nodes_splits' is required"))?;
    let split_dims: &[i64] = splits.t().map_or(&[], |t| &t.dims);
    let [expected] = split_dims[..] else {
        return Err(bad_attr(
            "nodes_splits",
            format!(
                "attribute 'nodes_splits' must be a 1-D tensor, it has rank {}",
                split_dims.len()
            ),
        ));
    };
    let input = ctx.need_or_empty(0)?.map_or(0, dense_elem);
    let split_elem = tensor_attr_elem(splits);
    if split_elem != input {
        return Err(bad_attr(
            "nodes_splits",
            format!(
                "'nodes_splits' is {} but the input is {}",
                elem_text(split_elem),
                elem_text(input)
            ),
        ));
    }
    for (name, elem, required) in [
        ("nodes_featureids", INT64, true),
        ("nodes_hitrates", FLOAT, false),
        ("nodes_modes", UINT8, true),
        ("nodes_truenodeids", INT64, true),
        ("nodes_falsenodeids", INT64, true),
        ("nodes_trueleafs", INT64, true),
        ("nodes_falseleafs", INT64, true),
        ("nodes_missing_value_tracks_true", INT64, false),
    ] {
        check_list_attr(ctx, name, expected, elem, required)?;
    }
    if let Some(m) = ctx.attr("membership_values") {
        let elem = tensor_attr_elem(m);
        if elem != input {
            return Err(bad_attr(
                "membership_values",
                format!(
                    "'membership_values' is {} but the input is {}",
                    elem_text(elem),
                    elem_text(input)
                ),
            ));
        }
    }
    check_list_attr(ctx, "nodes_splits", expected, input, true)?;
    let (Some(ids), Some(weights)) = (ctx.attr("leaf_targetids"), ctx.attr("leaf_weights")) else {
        return Err(bad_attr(
            "leaf_weights",
            "attributes 'leaf_targetids' and 'leaf_weights' must both be set",
        ));
    };
    let weight_dims: &[i64] = weights.t().map_or(&[], |t| &t.dims);
    let [leaves] = weight_dims[..] else {
        return Err(bad_attr(
            "leaf_weights",
            format!(
                "attribute 'leaf_weights' must be a 1-D tensor, it has rank {}",
                weight_dims.len()
            ),
        ));
    };
    if i64::try_from(ids.ints.len()).ok() != Some(leaves) {
        return Err(bad_attr(
            "leaf_targetids",
            format!(
                "'leaf_targetids' has {} entries but 'leaf_weights' {leaves}",
                ids.ints.len()
            ),
        ));
    }
    let weight_elem = tensor_attr_elem(weights);
    if weight_elem != input {
        return Err(bad_attr(
            "leaf_weights",
            format!(
                "'leaf_weights' is {} but the input is {}",
                elem_text(weight_elem),
                elem_text(input)
            ),
        ));
    }
    let n = batch_dim(ctx)?;
    let e = targets(ctx);
    ctx.set_tensor(0, input, Some(dims(&[n, e])));
    Ok(())
}

/// ZipMap: a sequence of maps from the labels (strings or int64) to float
/// scalars; X is 1-D or 2-D.
fn zip_map(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if let Some(r) = ctx.rank(0) {
        if r != 1 && r != 2 {
            return Err(bad_rank(
                0,
                format!("input 0 must have rank 1 or 2, it has rank {r}"),
            ));
        }
    }
    let mut key = 0;
    if has_strings(ctx, "classlabels_strings") {
        key = STRING;
    }
    if ctx
        .attr("classlabels_int64s")
        .is_some_and(|a| !a.ints.is_empty())
    {
        key = INT64;
    }
    let value = Type::Tensor(TensorType::new(FLOAT, Some(Dims::new())));
    ctx.set(
        0,
        Type::Sequence(Some(Box::new(Type::Map(key, Some(Box::new(value)))))),
    );
    Ok(())
}

pub const OPS: &[Entry] = &[
    ml("ArrayFeatureExtractor", 1, 1, array_feature_extractor),
    ml("Binarizer", 1, 1, binarizer),
    ml("CastMap", 1, 1, cast_map),
    ml("CategoryMapper", 1, 1, category_mapper),
    ml("DictVectorizer", 1, 1, dict_vectorizer),
    ml("LabelEncoder", 1, 1, label_encoder_1),
    ml("LabelEncoder", 2, 2, label_encoder_2),
    ml("LabelEncoder", 4, 4, label_encoder_4),
    ml("FeatureVectorizer", 1, 1, feature_vectorizer),
    ml("Imputer", 1, 1, imputer),
    ml("LinearClassifier", 1, 1, linear_classifier),
    ml("LinearRegressor", 1, 1, linear_regressor),
    ml("Normalizer", 1, 1, scaled_floats),
    ml("OneHotEncoder", 1, 1, one_hot_encoder),
    ml("Scaler", 1, 1, scaled_floats),
    ml("SVMClassifier", 1, 1, svm_classifier),
    ml("SVMRegressor", 1, 1, svm_regressor),
    ml("TreeEnsemble", 5, 5, tree_ensemble),
    ml("TreeEnsembleClassifier", 1, 1, tree_ensemble_classifier_1),
    ml("TreeEnsembleClassifier", 3, 3, tree_ensemble_classifier_3),
    ml("TreeEnsembleRegressor", 1, 1, tree_ensemble_regressor_1),
    ml("TreeEnsembleRegressor", 3, 3, tree_ensemble_regressor_3),
    ml("ZipMap", 1, 1, zip_map),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_attributes_give_type_and_length() {
        let mut a = AttributeProto::default();
        assert_eq!(attr_elem_and_len(&a), Ok((0, 0)));
        a.ints = vec![1, 2];
        assert_eq!(attr_elem_and_len(&a), Ok((INT64, 2)));
        a.ints.clear();
        a.extras_mut().t = Some(Box::new(crate::proto::TensorProto {
            dims: vec![3],
            data_type: Some(11),
            ..Default::default()
        }));
        assert_eq!(attr_elem_and_len(&a), Ok((11, 3)));
        if let Some(t) = a.t_mut() {
            t.dims = vec![-1];
        }
        assert!(attr_elem_and_len(&a).is_err());
    }

    #[test]
    fn elem_names_fall_back_to_codes() {
        assert_eq!(elem_text(1), "float");
        assert_eq!(elem_text(99), "99");
    }
}
