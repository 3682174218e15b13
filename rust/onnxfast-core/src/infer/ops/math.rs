//! Rules of onnx's `math` family: element-wise arithmetic and activations,
//! matrix products, softmax and losses, windows and spectral ops.

use super::{onnx, Entry};
use crate::diag::codes;
use crate::infer::context::{defect, At, Defect, InferError, InferResult, NodeCtx};
use crate::infer::util::{self, bad_attr, bad_const, bad_rank, bad_shapes, failed};
use crate::ir::types::{Dim, Dims, Type, MAX_RANK};

// ---- shared helpers ----------------------------------------------------------

/// The type of input `i`, which must be a tensor (onnx fails when it is
/// missing, untyped, declared empty or of another kind).
pub(crate) fn tensor_input(ctx: &NodeCtx<'_, '_>, i: usize) -> InferResult<i32> {
    match ctx.need_or_empty(i)? {
        Some(Type::Tensor(t)) => Ok(t.elem),
        other => Err(defect(
            codes::INPUT_KIND,
            At::Input(i),
            format!(
                "input {i} must be a tensor, it is {}",
                NodeCtx::kind_text(other)
            ),
        )),
    }
}

/// A constant input as INT64 values (onnx's `ParseData<int64_t>`, which
/// refuses any other element type). `Ok(None)` when not constant.
pub(crate) fn const_i64s(ctx: &mut NodeCtx<'_, '_>, i: usize) -> InferResult<Option<Vec<i64>>> {
    let Some(c) = ctx.constant(i) else {
        return Ok(None);
    };
    if c.elem() != 7 {
        return Err(bad_const(
            i,
            format!(
                "input {i} must hold int64 values, it holds {}",
                crate::ir::types::elem_name(c.elem()).unwrap_or("values of an unknown type")
            ),
        ));
    }
    ctx.const_ints(i)
}

/// The first value of constant input `i` as an integer (onnx's
/// `GetScalarValueFromTensor<int64_t>`: float, double, int32 or int64
/// data; floats truncated). The caller knows the input is constant.
pub(crate) fn const_scalar(ctx: &mut NodeCtx<'_, '_>, i: usize) -> InferResult<i64> {
    let elem = ctx.constant(i).map_or(0, |c| c.elem());
    let first = match elem {
        6 | 7 => ctx.const_ints(i)?.and_then(|v| v.first().copied()),
        1 | 11 => ctx
            .const_floats(i)?
            .and_then(|v| v.first().map(|&f| util::cast_i64(f))),
        other => {
            return Err(bad_const(
                i,
                format!(
                    "input {i} must hold float, double, int32 or int64 values, it holds {}",
                    crate::ir::types::elem_name(other).unwrap_or("values of an unknown type")
                ),
            ))
        }
    };
    // onnx reads element 0 unchecked: an empty tensor stops inference at once.
    first.ok_or_else(|| {
        InferError::Defect(Box::new(Defect {
            code: codes::BAD_CONSTANT_INPUT,
            message: format!("input {i} holds no value"),
            at: At::Input(i),
            reach: crate::infer::context::Reach::Node,
        }))
    })
}

/// Constant input `i` must be a scalar (rank 0).
fn check_scalar_const(ctx: &NodeCtx<'_, '_>, i: usize, what: &str) -> InferResult {
    match ctx.const_dims(i) {
        Some(d) if !d.is_empty() => Err(bad_const(
            i,
            format!("{what} must be a scalar, it has dims {d:?}"),
        )),
        _ => Ok(()),
    }
}

fn dims_of(s: &[Dim]) -> Dims {
    s.iter().copied().collect()
}

/// `n` unknown dims (a shape of known rank only).
fn unknown_dims(n: usize) -> Dims {
    std::iter::repeat_n(Dim::Unknown, n).collect()
}

// ---- element-wise --------------------------------------------------------------

/// Output 0 is input 0 (type and shape): unary element-wise operators
/// (onnx's propagateShapeAndTypeFromFirstInput).
pub fn same_as_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)
}

/// Element type of input 0; shape broadcast from inputs 0 and 1.
pub fn binary_broadcast(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    util::broadcast_inputs(ctx, 0..2)
}

/// Element type of input 0; shape broadcast from every input (Sum, Max, ...).
pub fn variadic_broadcast(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let n = ctx.n_inputs();
    util::broadcast_tensor_inputs(ctx, 0..n)
}

/// SwiGLU: the gate and the value have one shape (no broadcasting); their
/// dims are merged.
fn swiglu(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(a), Some(b)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    // onnx writes A's shape in place, then merges B's `tensor_type()`: a
    // sequence or optional B (after an unknown operator) merges nothing.
    if ctx.tensor_shape(1).is_none() {
        ctx.set_tensor_shape(0, dims_of(a));
        return Ok(());
    }
    if a.len() != b.len() {
        return Err(bad_shapes(format!(
            "the gate {} and the value {} must have the same shape, their ranks differ",
            ctx.show_dims(a),
            ctx.show_dims(b)
        )));
    }
    let mut out = dims_of(a);
    for (k, (&d, slot)) in b.iter().zip(out.iter_mut()).enumerate() {
        util::unify(d, slot).map_err(|e| {
            bad_shapes(format!(
                "the gate {} and the value {} must have the same shape: dimension {k}: {e}",
                ctx.show_dims(a),
                ctx.show_dims(b)
            ))
        })?;
    }
    ctx.set_tensor_shape(0, out);
    Ok(())
}

/// Softmax, LogSoftmax and Hardmax from opset 11: the input must have a
/// rank and `axis` must be in range; the shape is the input's.
fn softmax_with(ctx: &mut NodeCtx<'_, '_>, default_axis: i64) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    if shape.is_empty() {
        return Err(bad_rank(
            0,
            "the input must have rank 1 or more, it is a scalar",
        ));
    }
    // onnx reads the axis as a 32-bit int.
    let axis = i64::from(ctx.own_int("axis", default_axis) as i32);
    util::attr_axis(axis, shape.len(), "axis")?;
    ctx.propagate_shape(0, 0);
    Ok(())
}

fn softmax11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    softmax_with(ctx, 1)
}

fn softmax13(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    softmax_with(ctx, -1)
}

// ---- matrix products -----------------------------------------------------------

/// The shape of a matrix product of inputs `a` and `b` (numpy matmul):
/// 1-D operands are promoted, the batch dims broadcast.
pub fn matmul_shape(ctx: &mut NodeCtx<'_, '_>, a: usize, b: usize) -> InferResult {
    let (Some(s0), Some(s1)) = (ctx.shape(a), ctx.shape(b)) else {
        return Ok(());
    };
    let out = matmul_dims(ctx, s0, s1, (a, b))?;
    // In place, as onnx's matmulShapeInference writes it.
    ctx.set_tensor_shape(0, out);
    Ok(())
}

/// The dims of a matrix product of `s0` and `s1` (numpy matmul), the
/// operands of inputs `inputs` (where a defect points).
pub fn matmul_dims(
    ctx: &NodeCtx<'_, '_>,
    s0: &[Dim],
    s1: &[Dim],
    (a, b): (usize, usize),
) -> InferResult<Dims> {
    if s0.is_empty() || s1.is_empty() {
        return Err(bad_rank(
            if s0.is_empty() { a } else { b },
            "a matrix product needs inputs of rank 1 or more, one has rank 0",
        ));
    }
    let left: Dims = if s0.len() == 1 {
        [Dim::Value(1), s0[0]].into_iter().collect()
    } else {
        dims_of(s0)
    };
    let right: Dims = if s1.len() == 1 {
        [s1[0], Dim::Value(1)].into_iter().collect()
    } else {
        dims_of(s1)
    };
    // Both have rank 2 or more here.
    let (k0, k1) = (left[left.len() - 1], right[right.len() - 2]);
    if let (Dim::Value(x), Dim::Value(y)) = (k0, k1) {
        if x != y {
            return Err(bad_shapes(format!(
                "matrix product of {} and {}: the inner dimensions {x} and {y} differ",
                ctx.show_dims(s0),
                ctx.show_dims(s1)
            )));
        }
    }
    let mut out =
        util::broadcast(&[&left[..left.len() - 2], &right[..right.len() - 2]]).map_err(|e| {
            bad_shapes(format!(
                "matrix product of {} and {}: the batch dimensions do not broadcast: {e}",
                ctx.show_dims(s0),
                ctx.show_dims(s1)
            ))
        })?;
    if s0.len() != 1 {
        out.push(left[left.len() - 2]);
    }
    if s1.len() != 1 {
        out.push(right[right.len() - 1]);
    }
    Ok(out)
}

fn matmul(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    matmul_shape(ctx, 0, 1)
}

fn matmul_integer(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    tensor_input(ctx, 0)?;
    tensor_input(ctx, 1)?;
    ctx.set_elem(0, 6);
    matmul_shape(ctx, 0, 1)
}

/// QLinearMatMul: each zero point has its input's element type; the output
/// has y_zero_point's; the shape is the product of inputs 0 and 3.
fn qlinear_matmul(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let a = tensor_input(ctx, 0)?;
    let b = tensor_input(ctx, 3)?;
    for (input, zero_point) in [(0, 2), (3, 5)] {
        let elem = if input == 0 { a } else { b };
        let zp = match ctx.need_or_empty(zero_point)? {
            Some(Type::Tensor(t)) => t.elem,
            _ => 0,
        };
        if zp != elem {
            return Err(defect(
                codes::BAD_ELEM_TYPE,
                At::Input(zero_point),
                format!(
                    "the zero point (input {zero_point}) must have the element type of input {input} ({}), it has {}",
                    crate::ir::types::elem_name(elem).unwrap_or("unknown"),
                    crate::ir::types::elem_name(zp).unwrap_or("unknown")
                ),
            ));
        }
    }
    ctx.propagate_elem(7, 0)?;
    matmul_shape(ctx, 0, 3)
}

/// onnx reads transA / transB as a 32-bit int.
fn flag32(ctx: &NodeCtx<'_, '_>, name: &str) -> bool {
    (ctx.own_int(name, 0) as i32) != 0
}

/// Gemm up to opset 11: with both shapes, A and B must be matrices and the
/// output is (M, N).
fn gemm_matrices(ctx: &mut NodeCtx<'_, '_>) -> InferResult<bool> {
    let Some([a, b]) = ctx.input_shapes::<2>() else {
        return Ok(false);
    };
    for (i, s) in [(0, a), (1, b)] {
        if s.len() != 2 {
            return Err(bad_rank(
                i,
                format!(
                    "input {i} must be a matrix (rank 2), it has rank {}",
                    s.len()
                ),
            ));
        }
    }
    let m = a[usize::from(flag32(ctx, "transA"))];
    let n = b[usize::from(!flag32(ctx, "transB"))];
    ctx.set_shape(0, [m, n].into_iter().collect());
    Ok(true)
}

fn gemm6(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if gemm_matrices(ctx)? {
        return Ok(());
    }
    // Without A's or B's shape, C gives it when it is not broadcast.
    let broadcast = ctx
        .attr("broadcast")
        .is_some_and(|a| a.i.unwrap_or(0) as i32 != 0);
    if !broadcast {
        if let Some(c) = ctx.shape(2) {
            // (onnx writes C's shape in place: no failure on an output its
            // element propagation made a container.)
            ctx.set_tensor_shape(0, dims_of(c));
        }
    }
    Ok(())
}

fn gemm7(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    gemm_matrices(ctx).map(|_| ())
}

/// Gemm from opset 13: (M, K) x (K, N), K unified between A and B; the
/// output is always a matrix.
pub(super) fn gemm13(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (mut m, mut n, mut k) = (Dim::Unknown, Dim::Unknown, Dim::Unknown);
    let trans = [flag32(ctx, "transA"), flag32(ctx, "transB")];
    for (i, t) in trans.into_iter().enumerate() {
        // (onnx's unifyInputShape: hasInputShape, then getInputShape.)
        let Some(s) = ctx.input_shape(i) else {
            continue;
        };
        if s.len() != 2 {
            return Err(bad_rank(
                i,
                format!(
                    "input {i} must be a matrix (rank 2), it has rank {}",
                    s.len()
                ),
            ));
        }
        // A is (M, K), B is (K, N); transposed when the flag is set.
        let (outer, inner) = match (i, t) {
            (0, false) => (s[0], s[1]),
            (0, true) => (s[1], s[0]),
            (_, false) => (s[1], s[0]),
            (_, true) => (s[0], s[1]),
        };
        util::unify(outer, if i == 0 { &mut m } else { &mut n }).map_err(bad_shapes)?;
        util::unify(inner, &mut k)
            .map_err(|e| bad_shapes(format!("the inner dimensions of A and B differ ({e})")))?;
    }
    ctx.set_shape(0, [m, n].into_iter().collect());
    Ok(())
}

// ---- Expand --------------------------------------------------------------------

/// The shape a rank-only shape input gives (its length known, values not).
fn rank_only(len: Dim) -> Option<Dims> {
    match len {
        Dim::Value(n) if n < 0 => Some(Dims::new()),
        Dim::Value(n) if (n as u64) <= MAX_RANK as u64 => Some(unknown_dims(n as usize)),
        _ => None,
    }
}

fn expand_to(ctx: &mut NodeCtx<'_, '_>, target: &[Dim]) -> InferResult {
    // A longer constant shape is taken as an unknown rank.
    let Some(input) = ctx.shape(0).filter(|_| target.len() <= MAX_RANK) else {
        return Ok(());
    };
    let out = util::broadcast(&[input, target]).map_err(|e| {
        bad_shapes(format!(
            "the input {} does not broadcast to the shape {}: {e}",
            ctx.show_dims(input),
            ctx.show_dims(target)
        ))
    })?;
    ctx.set_shape(0, out);
    Ok(())
}

fn expand8(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(_), Some(shape_of_shape)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    if shape_of_shape.len() != 1 {
        return Err(bad_rank(
            1,
            format!("'shape' must be 1-D, it has rank {}", shape_of_shape.len()),
        ));
    }
    let len = shape_of_shape[0];
    let target = match const_i64s(ctx, 1)? {
        Some(v) => util::dims_of(&v),
        // Beyond onnx, whose Expand 8 reads a constant only: with
        // data_prop, the values data propagation computed, as Expand 13
        // reads them (the operator is the same), else the rank alone.
        None => match ctx.data(1).cloned().or_else(|| rank_only(len)) {
            Some(d) => d,
            None => return Ok(()),
        },
    };
    expand_to(ctx, &target)
}

fn expand13(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(_), Some(shape_of_shape)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    // A constant, else values data propagation computed (onnx's
    // getShapeInput), else the rank alone.
    let known = match const_i64s(ctx, 1)? {
        Some(v) => Some(util::dims_of(&v)),
        None => ctx.data(1).cloned(),
    };
    let target = match known {
        Some(dims) => dims,
        None => {
            if shape_of_shape.len() != 1 {
                return Err(bad_rank(
                    1,
                    format!("'shape' must be 1-D, it has rank {}", shape_of_shape.len()),
                ));
            }
            // onnx gives up on rank-only shapes above 1024 dims.
            match shape_of_shape[0] {
                Dim::Value(n) if (0..=1024).contains(&n) => unknown_dims(n as usize),
                _ => return Ok(()),
            }
        }
    };
    expand_to(ctx, &target)
}

// ---- TopK ----------------------------------------------------------------------

/// The rank of input 0 and `axis` made non-negative (onnx's TopK check).
fn topk_axis(ctx: &NodeCtx<'_, '_>, shape: &[Dim]) -> InferResult<usize> {
    let rank = shape.len() as i64;
    let given = ctx.own_int("axis", -1);
    let axis = if given < 0 {
        given.saturating_add(rank)
    } else {
        given
    };
    if axis < 0 || axis >= rank {
        return Err(bad_attr(
            "axis",
            format!("axis {given} is out of range for rank {rank}"),
        ));
    }
    Ok(axis as usize)
}

fn topk_types(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    ctx.set_elem(1, 7);
    Ok(())
}

fn topk_set(ctx: &mut NodeCtx<'_, '_>, dims: Dims) {
    ctx.set_shape(0, dims.clone());
    ctx.set_shape(1, dims);
}

/// TopK-1: `k` is an attribute.
fn topk1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    topk_types(ctx)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let axis = topk_axis(ctx, shape)?;
    let k = ctx.own_int("k", -1);
    if k <= 0 {
        return Err(bad_attr("k", format!("k must be positive, it is {k}")));
    }
    let mut out = dims_of(shape);
    out[axis] = Dim::Value(k);
    topk_set(ctx, out);
    Ok(())
}

/// TopK from opset 10: `K` is an input; the axis dim is K when K is a
/// constant and the axis dim is known, else unknown (with `symbolic`: the
/// other dims, and K when constant or computed).
fn topk10(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    topk_types(ctx)?;
    let Some(shape) = ctx.shape(0) else {
        return Ok(());
    };
    let axis = topk_axis(ctx, shape)?;
    if let (Some(n), Some(kdims)) = (shape[axis].value(), ctx.const_dims(1)) {
        if kdims != [1] {
            return Err(bad_const(
                1,
                format!("K must be a 1-D tensor of one value, it has dims {kdims:?}"),
            ));
        }
        let k = const_i64s(ctx, 1)?
            .and_then(|v| v.first().copied())
            .ok_or_else(|| bad_const(1, "K holds no value"))?;
        if n < k {
            return Err(bad_shapes(format!(
                "the axis has {n} elements, fewer than k = {k}"
            )));
        }
        let mut out = dims_of(shape);
        out[axis] = Dim::Value(k);
        topk_set(ctx, out);
        return Ok(());
    }
    // With `symbolic`: the other dims stay, the axis's is K when K is
    // constant or computed from shapes (`data_prop`).
    let mut out = unknown_dims(shape.len());
    if ctx.is_symbolic() {
        let k = match ctx.const_dims(1) {
            Some(d) if d == [1] => const_i64s(ctx, 1)
                .ok()
                .flatten()
                .and_then(|v| v.first().copied().map(Dim::Value)),
            Some(_) => None,
            None => ctx.data_one(1),
        };
        out = dims_of(shape);
        out[axis] = k
            .filter(|k| ctx.sym_sign(*k) == Some(true))
            .unwrap_or(Dim::Unknown);
    }
    topk_set(ctx, out);
    Ok(())
}

// ---- Det, losses ---------------------------------------------------------------

/// Det: [..., M, M] -> [...].
fn det(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(s) = ctx.shape(0) else {
        return Ok(());
    };
    let r = s.len();
    if r < 2 {
        return Err(bad_rank(
            0,
            format!("the input must have rank 2 or more, it has rank {r}"),
        ));
    }
    if let (Dim::Value(h), Dim::Value(w)) = (s[r - 2], s[r - 1]) {
        if h != w {
            return Err(bad_shapes(format!(
                "the last two dimensions must be equal (square matrices), they are {h} and {w}"
            )));
        }
    }
    ctx.set_shape(0, s[..r - 2].iter().copied().collect());
    Ok(())
}

/// The input dim a target dim matches: (N, C, d1, ...) against (N, d1, ...).
fn nll_input_dim(i: usize) -> usize {
    if i == 0 {
        0
    } else {
        i + 1
    }
}

/// NegativeLogLikelihoodLoss 12 and 13: ranks and known dims checked.
fn nll12(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(input), Some(target)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    let r = input.len();
    if r < 2 {
        return Err(bad_rank(
            0,
            format!("the input must have rank 2 or more, it has rank {r}"),
        ));
    }
    if target.len() != r - 1 {
        return Err(bad_rank(
            1,
            format!(
                "the target must have rank {} (one less than the input), it has rank {}",
                r - 1,
                target.len()
            ),
        ));
    }
    for (i, t) in target.iter().enumerate() {
        if let (Dim::Value(x), Dim::Value(y)) = (input[nll_input_dim(i)], *t) {
            if x != y {
                return Err(bad_shapes(format!(
                    "the input {} and the target {} disagree: {x} against {y}",
                    ctx.show_dims(input),
                    ctx.show_dims(target)
                )));
            }
        }
    }
    if ctx.n_inputs() == 3 {
        if let Some(w) = ctx.shape(2) {
            if w.len() != 1 {
                return Err(bad_rank(
                    2,
                    format!("the weight must have rank 1, it has rank {}", w.len()),
                ));
            }
        }
    }
    let out = if ctx.own_str("reduction").unwrap_or(b"mean") == b"none" {
        (0..r - 1).map(|i| input[nll_input_dim(i)]).collect()
    } else {
        Dims::new()
    };
    ctx.set_shape(0, out);
    Ok(())
}

/// NegativeLogLikelihoodLoss from opset 22: dims unified between input,
/// target and weight.
fn nll22(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(input), Some(_)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    let r = input.len();
    if r < 2 {
        return Err(bad_rank(
            0,
            format!("the input must have rank 2 or more, it has rank {r}"),
        ));
    }
    util::check_rank(ctx, 1, r - 1)?;
    let target = ctx.shape(1).unwrap_or(&[]);
    let mismatch = |e: String| {
        bad_shapes(format!(
            "the input {} and the target {} disagree: {e}",
            ctx.show_dims(input),
            ctx.show_dims(target)
        ))
    };
    let mut out = Dims::with_capacity(r - 1);
    for (i, &t) in target.iter().enumerate() {
        let mut d = Dim::Unknown;
        util::unify(t, &mut d).map_err(&mismatch)?;
        util::unify(input[nll_input_dim(i)], &mut d).map_err(&mismatch)?;
        out.push(d);
    }
    let mut c = Dim::Unknown;
    util::unify(input[1], &mut c).map_err(&mismatch)?;
    if ctx.n_inputs() == 3 {
        if let Some(w) = ctx.shape(2) {
            if w.len() != 1 {
                return Err(bad_rank(
                    2,
                    format!("the weight must have rank 1, it has rank {}", w.len()),
                ));
            }
            util::unify(w[0], &mut c).map_err(|e| {
                bad_shapes(format!(
                    "the weight's length and the input's class dimension differ: {e}"
                ))
            })?;
        }
    }
    if ctx.own_str("reduction").unwrap_or(b"mean") != b"none" {
        out.clear();
    }
    ctx.set_shape(0, out);
    Ok(())
}

/// SoftmaxCrossEntropyLoss: the loss has the labels' shape (reduction
/// "none") or is a scalar; the optional log_prob output is the input's.
fn softmax_cross_entropy(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if ctx.own_str("reduction").unwrap_or(b"mean") == b"none" {
        ctx.propagate_shape(1, 0);
    } else {
        ctx.set_shape(0, Dims::new());
    }
    if ctx.n_outputs() == 2 {
        ctx.propagate_elem(0, 1)?;
        ctx.shape_copy_unguarded(0, 1)?;
        ctx.propagate_shape(0, 1);
    }
    Ok(())
}

// ---- Einsum --------------------------------------------------------------------

/// Einsum: the output shape from the equation and the operands' shapes
/// (labels in the explicit output, or the labels used once in alphabetical
/// order; the broadcast dims of ellipses first).
fn einsum(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let equation: Vec<u8> = ctx
        .own_str("equation")
        .unwrap_or(b"")
        .iter()
        .copied()
        .filter(|&c| c != b' ')
        .collect();
    if equation.is_empty() {
        return Ok(());
    }
    let n = ctx.n_inputs();
    let mut shapes = Vec::with_capacity(n);
    for i in 0..n {
        match ctx.shape(i) {
            Some(s) => shapes.push(s),
            None => return Ok(()),
        }
    }
    if shapes.is_empty() {
        return Ok(());
    }
    let out = einsum_shape(&equation, &shapes).map_err(|e| {
        defect(
            codes::BAD_ATTRIBUTE,
            At::Attribute("equation".into()),
            format!("equation '{}': {e}", String::from_utf8_lossy(&equation)),
        )
    })?;
    // An equation can repeat output labels without bound: a rank above
    // the engine's limit is taken as unknown.
    if out.len() <= MAX_RANK {
        ctx.set_shape(0, out);
    }
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn einsum_shape(equation: &[u8], shapes: &[&[Dim]]) -> Result<Dims, String> {
    let arrow = find(equation, b"->");
    let left = &equation[..arrow.unwrap_or(equation.len())];
    // label -> its dim (the first operand's that has it); labels seen twice.
    let mut labels: std::collections::BTreeMap<u8, Dim> = Default::default();
    let mut repeated = std::collections::BTreeSet::new();
    let mut ellipsis: Option<Dims> = None;
    let mut operands = 0usize;
    for term in left.split(|&c| c == b',') {
        let Some(shape) = shapes.get(operands) else {
            return Err(format!(
                "it has more operands than the {} inputs",
                shapes.len()
            ));
        };
        let rank = shape.len();
        let letters = term.iter().filter(|c| c.is_ascii_alphabetic()).count();
        let dots = find(term, b"...");
        let covered = match dots {
            Some(_) => {
                let Some(covered) = rank.checked_sub(letters) else {
                    return Err(format!(
                        "operand {operands} has rank {rank}, fewer than its {letters} labels"
                    ));
                };
                if let Some(e) = &ellipsis {
                    if e.len() != covered {
                        return Err(format!(
                            "the ellipsis of operand {operands} covers {covered} dimensions, an earlier one {}",
                            e.len()
                        ));
                    }
                }
                covered
            }
            None => {
                if rank != letters {
                    return Err(format!(
                        "operand {operands} has rank {rank}, its term has {letters} labels"
                    ));
                }
                0
            }
        };
        let mut pos = 0usize; // the dim of the next label
        let mut k = 0usize;
        while k < term.len() {
            if Some(k) == dots {
                let dims = &shape[pos..pos + covered];
                match &mut ellipsis {
                    None => ellipsis = Some(dims_of(dims)),
                    Some(e) => {
                        for (slot, &d) in e.iter_mut().zip(dims) {
                            if let (Dim::Value(cur), Dim::Value(v)) = (*slot, d) {
                                if cur == 1 && v > 1 {
                                    *slot = d;
                                }
                            }
                        }
                    }
                }
                pos += covered;
                k += 3;
                continue;
            }
            let c = term[k];
            if !c.is_ascii_alphabetic() {
                // onnx loops forever on such a character.
                return Err(format!(
                    "operand {operands} has '{}', which is neither a letter nor an ellipsis",
                    char::from(c).escape_default()
                ));
            }
            match labels.entry(c) {
                std::collections::btree_map::Entry::Occupied(_) => {
                    repeated.insert(c);
                }
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(shape[pos]);
                }
            }
            pos += 1;
            k += 1;
        }
        operands += 1;
    }
    if operands != shapes.len() {
        return Err(format!(
            "it has {operands} operands for {} inputs",
            shapes.len()
        ));
    }
    let ellipsis = ellipsis.unwrap_or_default();
    let mut out = Dims::new();
    match arrow {
        Some(a) => {
            let right = &equation[a + 2..];
            let dots = find(right, b"...");
            let mut k = 0;
            while k < right.len() {
                if Some(k) == dots {
                    out.extend(ellipsis.iter().copied());
                    k += 3;
                    continue;
                }
                let c = right[k];
                if c.is_ascii_alphabetic() {
                    match labels.get(&c) {
                        Some(&d) => out.push(d),
                        None => {
                            return Err(format!(
                                "the output has label '{}', which no operand has",
                                char::from(c)
                            ))
                        }
                    }
                }
                k += 1;
            }
        }
        None => {
            out.extend(ellipsis.iter().copied());
            out.extend(
                labels
                    .iter()
                    .filter(|(c, _)| !repeated.contains(*c))
                    .map(|(_, &d)| d),
            );
        }
    }
    Ok(out)
}

// ---- spectral ops and windows --------------------------------------------------

/// The element type from `output_datatype` (onnx narrows it to 32 bits).
fn output_datatype(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let v = ctx.own_int("output_datatype", 1);
    let elem = i32::try_from(v).map_err(|_| {
        bad_attr(
            "output_datatype",
            format!("{v} is not a data type (it does not fit 32 bits)"),
        )
    })?;
    ctx.set_elem(0, elem);
    Ok(())
}

/// HannWindow, HammingWindow, BlackmanWindow: a 1-D tensor of the constant
/// `size`.
fn window(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    output_datatype(ctx)?;
    if ctx.shape(0).is_none() || ctx.constant(0).is_none() {
        return Ok(());
    }
    check_scalar_const(ctx, 0, "size")?;
    let size = const_scalar(ctx, 0)?;
    if size <= 0 {
        return Err(bad_const(0, format!("size must be positive, it is {size}")));
    }
    ctx.set_shape(0, util::dims_of(&[size]));
    Ok(())
}

/// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] when both are
/// positive constants.
fn mel_weight_matrix(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    output_datatype(ctx)?;
    if ctx.shape(0).is_none() || ctx.shape(1).is_none() {
        return Ok(());
    }
    if ctx.constant(0).is_none() || ctx.constant(1).is_none() {
        return Ok(());
    }
    check_scalar_const(ctx, 0, "num_mel_bins")?;
    let bins = const_scalar(ctx, 0)?;
    check_scalar_const(ctx, 1, "dft_length")?;
    let dft = const_scalar(ctx, 1)?;
    if bins > 0 && dft > 0 {
        ctx.set_shape(0, util::dims_of(&[(dft >> 1) + 1, bins]));
    }
    Ok(())
}

/// DFT's checks of the last dim (real or complex input for a one-sided
/// transform).
fn dft_check_last(onesided: bool, inverse: bool, last: Dim) -> InferResult {
    if !onesided {
        return Ok(());
    }
    let want = if inverse { 2 } else { 1 };
    match last {
        Dim::Value(v) if v != want => Err(bad_shapes(format!(
            "a one-sided {}DFT needs a last dimension of {want} ({} input), it is {v}",
            if inverse { "inverse " } else { "" },
            if inverse { "complex" } else { "real" }
        ))),
        _ => Ok(()),
    }
}

/// The signal axis's output dim: from dft_length when known, else from the
/// input (one-sided transforms change it).
fn dft_signal_dim(
    d: Dim,
    dft_length: Option<i64>,
    onesided: bool,
    inverse: bool,
) -> InferResult<Dim> {
    Ok(match dft_length {
        Some(n) if onesided && !inverse => Dim::Value((n >> 1) + 1),
        Some(n) => Dim::Value(n),
        None if !onesided => d,
        None => match d {
            Dim::Value(v) if inverse => Dim::Value(
                v.checked_sub(1)
                    .and_then(|x| x.checked_mul(2))
                    .ok_or_else(|| failed(format!("2 * ({v} - 1) overflows")))?,
            ),
            Dim::Value(v) => Dim::Value((v >> 1) + 1),
            _ => Dim::Unknown,
        },
    })
}

fn dft_last(onesided: bool, inverse: bool) -> Dim {
    Dim::Value(if onesided && inverse { 1 } else { 2 })
}

/// Reads dft_length (input 1) when constant: a scalar.
fn dft_length(ctx: &mut NodeCtx<'_, '_>) -> InferResult<Option<i64>> {
    if ctx.constant(1).is_none() {
        return Ok(None);
    }
    check_scalar_const(ctx, 1, "dft_length")?;
    const_scalar(ctx, 1).map(Some)
}

fn dft_axis_check(axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    if !(-r <= axis && axis != -1 && axis < r - 1) {
        return Err(format!(
            "axis {axis} is not a signal axis of a rank-{rank} input (expected [{}, {}), not -1)",
            -r,
            r - 1
        ));
    }
    Ok(if axis < 0 { axis + r } else { axis } as usize)
}

/// DFT-17: the axis is an attribute.
fn dft17(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let onesided = ctx.own_int("onesided", 0) != 0;
    let inverse = ctx.own_int("inverse", 0) != 0;
    ctx.propagate_elem(0, 0)?;
    let Some(s) = ctx.shape(0) else {
        return Ok(());
    };
    let axis = i64::from(ctx.own_int("axis", 1) as i32);
    let r = s.len();
    if r < 2 {
        return Err(bad_rank(
            0,
            format!("the input must have rank 2 or more (the last dim is real/imaginary), it has rank {r}"),
        ));
    }
    dft_check_last(onesided, inverse, s[r - 1])?;
    let axis = dft_axis_check(axis, r).map_err(|e| bad_attr("axis", e))?;
    let length = if ctx.has_input(1) {
        match dft_length(ctx)? {
            Some(n) => Some(n),
            None => return Ok(()),
        }
    } else {
        None
    };
    let mut out = dims_of(s);
    out[axis] = dft_signal_dim(s[axis], length, onesided, inverse)?;
    out[r - 1] = dft_last(onesided, inverse);
    ctx.set_shape(0, out);
    Ok(())
}

/// DFT-20: the axis is input 2 (default -2).
fn dft20(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let onesided = ctx.own_int("onesided", 0) != 0;
    let inverse = ctx.own_int("inverse", 0) != 0;
    ctx.propagate_elem(0, 0)?;
    let Some(s) = ctx.shape(0) else {
        return Ok(());
    };
    let r = s.len();
    if r < 2 {
        return Err(bad_rank(
            0,
            format!("the input must have rank 2 or more (the last dim is real/imaginary), it has rank {r}"),
        ));
    }
    dft_check_last(onesided, inverse, s[r - 1])?;
    let mut out = dims_of(s);
    if ctx.has_input(2) && ctx.constant(2).is_none() {
        // The signal axis is not known.
        if onesided || ctx.has_input(1) {
            out = unknown_dims(r);
        }
        out[r - 1] = dft_last(onesided, inverse);
        ctx.set_shape(0, out);
        return Ok(());
    }
    let axis = if ctx.has_input(2) {
        check_scalar_const(ctx, 2, "axis")?;
        const_scalar(ctx, 2)?
    } else {
        -2
    };
    let axis = dft_axis_check(axis, r).map_err(|e| bad_const(2, e))?;
    if ctx.has_input(1) {
        match dft_length(ctx)? {
            Some(n) => out[axis] = dft_signal_dim(s[axis], Some(n), onesided, inverse)?,
            // Unknown length: a known size is dropped, a symbol kept.
            None => {
                if let Dim::Value(_) = out[axis] {
                    out[axis] = Dim::Unknown;
                }
            }
        }
    } else {
        out[axis] = dft_signal_dim(s[axis], None, onesided, inverse)?;
    }
    out[r - 1] = dft_last(onesided, inverse);
    ctx.set_shape(0, out);
    Ok(())
}

/// STFT: [batch, frames, bins, 2] when the signal length, the frame step
/// and the frame length (or the window's length) are known.
fn stft(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(s) = ctx.shape(0) else {
        return Ok(());
    };
    if s.len() < 2 {
        return Err(bad_rank(
            0,
            format!(
                "the signal must have rank 2 or more, it has rank {}",
                s.len()
            ),
        ));
    }
    let Dim::Value(signal) = s[1] else {
        return Ok(());
    };
    if ctx.constant(1).is_none() {
        return Ok(());
    }
    let step = const_scalar(ctx, 1)?;
    let has_frame_length = ctx.has_input(3);
    if has_frame_length && ctx.constant(3).is_none() {
        return Ok(());
    }
    // A window of any tensor type counts, its shape unknown meaning rank 0.
    let window: Option<&[Dim]> = if ctx.n_inputs() >= 3 {
        match ctx.ty(2) {
            None => None,
            Some(Type::Tensor(t)) | Some(Type::SparseTensor(t)) => {
                Some(t.shape.as_deref().unwrap_or(&[]))
            }
            Some(other) => {
                return Err(defect(
                    codes::INPUT_KIND,
                    At::Input(2),
                    format!("the window must be a tensor, it is a {}", other.kind_name()),
                ))
            }
        }
    } else {
        None
    };
    let check_window = |w: &[Dim]| -> InferResult<Dim> {
        if w.len() != 1 {
            return Err(bad_rank(
                2,
                format!("the window must have rank 1, it has rank {}", w.len()),
            ));
        }
        Ok(w[0])
    };
    let dft_size = match (window, has_frame_length) {
        (None, false) => return Ok(()),
        (Some(w), true) => {
            check_scalar_const(ctx, 3, "frame_length")?;
            let n = const_scalar(ctx, 3)?;
            if let Dim::Value(len) = check_window(w)? {
                if len != n {
                    return Err(bad_shapes(format!(
                        "the window has length {len}, frame_length is {n}"
                    )));
                }
            }
            n
        }
        (Some(w), false) => match check_window(w)? {
            Dim::Value(len) => len,
            _ => return Ok(()),
        },
        (None, true) => {
            check_scalar_const(ctx, 3, "frame_length")?;
            const_scalar(ctx, 3)?
        }
    };
    let onesided = ctx.own_int("onesided", 0) != 0;
    let bins = if onesided {
        (dft_size >> 1) + 1
    } else {
        dft_size
    };
    let frames = util::cast_i64(f64::from(
        signal.wrapping_sub(dft_size) as f32 / step as f32,
    ))
    .wrapping_add(1);
    let batch = match s[0] {
        Dim::Value(v) => Dim::Value(v),
        _ => Dim::Unknown,
    };
    ctx.set_shape(
        0,
        [batch, Dim::Value(frames), Dim::Value(bins), Dim::Value(2)]
            .into_iter()
            .collect(),
    );
    Ok(())
}

pub const OPS: &[Entry] = &[
    // Unary element-wise: same type and shape as the input.
    onnx("Abs", 6, 13, same_as_input),
    onnx("Acos", 7, 22, same_as_input),
    onnx("Acosh", 9, 22, same_as_input),
    onnx("Asin", 7, 22, same_as_input),
    onnx("Asinh", 9, 22, same_as_input),
    onnx("Atan", 7, 22, same_as_input),
    onnx("Atanh", 9, 22, same_as_input),
    onnx("Ceil", 6, 13, same_as_input),
    onnx("Celu", 12, 28, same_as_input),
    onnx("Clip", 6, 13, same_as_input),
    onnx("Cos", 7, 22, same_as_input),
    onnx("Cosh", 9, 22, same_as_input),
    onnx("CumProd", 26, 26, same_as_input),
    onnx("CumSum", 11, 14, same_as_input),
    onnx("Elu", 6, 22, same_as_input),
    onnx("Erf", 9, 13, same_as_input),
    onnx("Exp", 6, 13, same_as_input),
    onnx("Floor", 6, 13, same_as_input),
    onnx("Gelu", 20, 20, same_as_input),
    onnx("HardSigmoid", 6, 22, same_as_input),
    onnx("HardSwish", 14, 22, same_as_input),
    onnx("LeakyRelu", 6, 16, same_as_input),
    onnx("Log", 6, 13, same_as_input),
    onnx("Mish", 18, 22, same_as_input),
    onnx("Neg", 6, 13, same_as_input),
    onnx("PRelu", 6, 16, same_as_input),
    onnx("Reciprocal", 6, 13, same_as_input),
    onnx("Relu", 6, 14, same_as_input),
    onnx("Round", 11, 22, same_as_input),
    onnx("Selu", 6, 22, same_as_input),
    onnx("Sigmoid", 6, 13, same_as_input),
    onnx("Sign", 9, 13, same_as_input),
    onnx("Sin", 7, 22, same_as_input),
    onnx("Sinh", 9, 22, same_as_input),
    onnx("Softplus", 1, 22, same_as_input),
    onnx("Softsign", 1, 22, same_as_input),
    onnx("Sqrt", 6, 13, same_as_input),
    onnx("Swish", 24, 24, same_as_input),
    onnx("Tan", 7, 22, same_as_input),
    onnx("Tanh", 6, 13, same_as_input),
    onnx("ThresholdedRelu", 10, 22, same_as_input),
    onnx("SwiGLU", 28, 28, swiglu),
    // Binary: opset 6 and older keep A's shape; later versions broadcast.
    onnx("Add", 6, 6, same_as_input),
    onnx("Sub", 6, 6, same_as_input),
    onnx("Mul", 6, 6, same_as_input),
    onnx("Div", 6, 6, same_as_input),
    onnx("Pow", 1, 1, same_as_input),
    onnx("Add", 7, 14, binary_broadcast),
    onnx("Sub", 7, 14, binary_broadcast),
    onnx("Mul", 7, 14, binary_broadcast),
    onnx("Div", 7, 14, binary_broadcast),
    onnx("Pow", 7, 15, binary_broadcast),
    onnx("Mod", 10, 28, binary_broadcast),
    // Variadic: opset 6 keeps the first input's shape; later ones broadcast.
    onnx("Sum", 6, 6, same_as_input),
    onnx("Mean", 6, 6, same_as_input),
    onnx("Max", 6, 6, same_as_input),
    onnx("Min", 6, 6, same_as_input),
    onnx("Sum", 8, 13, variadic_broadcast),
    onnx("Mean", 8, 13, variadic_broadcast),
    onnx("Max", 8, 13, variadic_broadcast),
    onnx("Min", 8, 13, variadic_broadcast),
    // Softmax family.
    onnx("Softmax", 1, 1, same_as_input),
    onnx("LogSoftmax", 1, 1, same_as_input),
    onnx("Hardmax", 1, 1, same_as_input),
    onnx("Softmax", 11, 11, softmax11),
    onnx("LogSoftmax", 11, 11, softmax11),
    onnx("Hardmax", 11, 11, softmax11),
    onnx("Softmax", 13, 13, softmax13),
    onnx("LogSoftmax", 13, 13, softmax13),
    onnx("Hardmax", 13, 13, softmax13),
    // Matrix products.
    onnx("MatMul", 1, 13, matmul),
    onnx("MatMulInteger", 10, 10, matmul_integer),
    onnx("QLinearMatMul", 10, 21, qlinear_matmul),
    onnx("Gemm", 6, 6, gemm6),
    onnx("Gemm", 7, 11, gemm7),
    onnx("Gemm", 13, 13, gemm13),
    onnx("Einsum", 12, 28, einsum),
    onnx("Det", 11, 22, det),
    // Shapes from inputs.
    onnx("Expand", 8, 8, expand8),
    onnx("Expand", 13, 13, expand13),
    onnx("TopK", 1, 1, topk1),
    onnx("TopK", 10, 24, topk10),
    // Losses.
    onnx("NegativeLogLikelihoodLoss", 12, 13, nll12),
    onnx("NegativeLogLikelihoodLoss", 22, 22, nll22),
    onnx("SoftmaxCrossEntropyLoss", 12, 13, softmax_cross_entropy),
    // Spectral ops and windows.
    onnx("DFT", 17, 17, dft17),
    onnx("DFT", 20, 20, dft20),
    onnx("STFT", 17, 17, stft),
    onnx("HannWindow", 17, 17, window),
    onnx("HammingWindow", 17, 17, window),
    onnx("BlackmanWindow", 17, 17, window),
    onnx("MelWeightMatrix", 17, 17, mel_weight_matrix),
];
