//! Rules of onnx's `nn` family: convolutions and pooling, normalizations,
//! dropout, flatten, attention and friends.
//!
//! onnx's inference functions read only the node's own attributes (no
//! schema defaults), each with a default of its own; the helpers `own_*`
//! below do the same. Dims are computed with checked arithmetic: an
//! overflow is a failure, as in onnx.

use super::{onnx, Entry};
use crate::infer::constant::MAX_CONST_ELEMS;
use crate::infer::context::{InferError, InferResult, NodeCtx};
use crate::infer::util::{self, bad_attr, bad_rank, bad_shapes, failed};
use crate::ir::types::{Dim, Dims, Type};

const FLOAT: i32 = 1;
const INT32: i32 = 6;
const INT64: i32 = 7;
const BOOL: i32 = 9;

/// onnx's kMaxMaterializedRank: Col2Im builds no shape of a larger rank.
const MAX_MATERIALIZED_RANK: i64 = 1024;

// ---- shared helpers -------------------------------------------------------

fn overflow(op: &str, a: i64, b: i64) -> InferError {
    failed(format!(
        "integer overflow computing a dimension: {a} {op} {b}"
    ))
}

pub(crate) fn add(a: i64, b: i64) -> InferResult<i64> {
    a.checked_add(b).ok_or_else(|| overflow("+", a, b))
}

pub(crate) fn sub(a: i64, b: i64) -> InferResult<i64> {
    a.checked_sub(b).ok_or_else(|| overflow("-", a, b))
}

pub(crate) fn mul(a: i64, b: i64) -> InferResult<i64> {
    a.checked_mul(b).ok_or_else(|| overflow("*", a, b))
}

/// Truncating division (as C++), failing on a zero divisor or overflow.
pub(crate) fn div(a: i64, b: i64) -> InferResult<i64> {
    if b == 0 {
        return Err(failed(format!(
            "division by zero computing a dimension: {a} / 0"
        )));
    }
    a.checked_div(b).ok_or_else(|| overflow("/", a, b))
}

/// A dim times a dim (onnx's `Dim * Dim`): values multiply; a factor 1
/// keeps the other dim; anything else is unknown.
pub(crate) fn dim_mul(a: Dim, b: Dim) -> InferResult<Dim> {
    Ok(match (a, b) {
        (Dim::Value(x), Dim::Value(y)) => Dim::Value(mul(x, y)?),
        (Dim::Value(1), _) => b,
        (_, Dim::Value(1)) => a,
        _ => Dim::Unknown,
    })
}

/// A dim times a number (onnx's `Dim * int`).
pub(crate) fn dim_times(a: Dim, k: i64) -> InferResult<Dim> {
    Ok(match a {
        Dim::Value(x) => Dim::Value(mul(x, k)?),
        _ if k == 1 => a,
        _ => Dim::Unknown,
    })
}

/// A dim divided by a number (onnx's `Dim / int`).
pub(crate) fn dim_div(a: Dim, k: i64) -> InferResult<Dim> {
    Ok(match a {
        Dim::Value(x) => Dim::Value(div(x, k)?),
        _ if k == 1 => a,
        _ => Dim::Unknown,
    })
}

/// The product of dims (onnx's multiplyDims).
pub(crate) fn dims_product(dims: &[Dim]) -> InferResult<Dim> {
    dims.iter()
        .try_fold(Dim::Value(1), |acc, &d| dim_mul(acc, d))
}

/// [`dim_times`], an expression with `symbolic` where onnx's gives unknown.
pub(crate) fn times(ctx: &mut NodeCtx<'_, '_>, a: Dim, k: i64) -> InferResult<Dim> {
    let d = dim_times(a, k)?;
    Ok(match d {
        Dim::Unknown if a.is_known() => ctx.sym_mul(a, Dim::Value(k)).unwrap_or(d),
        _ => d,
    })
}

/// [`dim_div`], an expression with `symbolic` (the division is exact in a
/// valid model: floor).
pub(crate) fn divided(ctx: &mut NodeCtx<'_, '_>, a: Dim, k: i64) -> InferResult<Dim> {
    let d = dim_div(a, k)?;
    Ok(match d {
        Dim::Unknown if a.is_known() && k > 0 => ctx.sym_floor_div(a, k).unwrap_or(d),
        _ => d,
    })
}

/// [`dims_product`], an expression with `symbolic`.
pub(crate) fn product(ctx: &mut NodeCtx<'_, '_>, dims: &[Dim]) -> InferResult<Dim> {
    let d = dims_product(dims)?;
    if d.is_known() || dims.iter().any(|x| !x.is_known()) {
        return Ok(d);
    }
    let mut acc = Some(Dim::Value(1));
    for &x in dims {
        acc = acc.and_then(|a| ctx.sym_mul(a, x));
    }
    Ok(acc.unwrap_or(d))
}

/// onnx's `unifyDim(dim, value)`: a known dim must equal `value`, an
/// unknown or symbolic one becomes it.
pub(crate) fn unify_value(dim: &mut Dim, value: i64, what: &str) -> InferResult {
    match *dim {
        Dim::Value(v) if v != value => Err(bad_shapes(format!(
            "{what} is {value}, which contradicts {v} found before"
        ))),
        _ => {
            *dim = Dim::Value(value);
            Ok(())
        }
    }
}

/// onnx's `unifyInputShape(i, {...})`: when input `i` has a shape, it must
/// have rank `pattern.len()`, and its dim `k` is unified into
/// `dims[pattern[k]]`.
pub(crate) fn unify_input(
    ctx: &NodeCtx<'_, '_>,
    i: usize,
    dims: &mut [Dim],
    pattern: &[usize],
) -> InferResult {
    let Some(s) = ctx.shape(i) else {
        return Ok(());
    };
    if s.len() != pattern.len() {
        return Err(bad_rank(
            i,
            format!(
                "input {i} must have rank {}, it has shape {}",
                pattern.len(),
                ctx.show_dims(s)
            ),
        ));
    }
    for (k, (&d, &slot)) in s.iter().zip(pattern).enumerate() {
        if let Some(target) = dims.get_mut(slot) {
            util::unify(d, target).map_err(|e| {
                bad_shapes(format!(
                    "dimension {k} of input {i} (shape {}): {e}",
                    ctx.show_dims(s)
                ))
            })?;
        }
    }
    Ok(())
}

/// onnx's `unifyInputDim(i, k, dim)`: when input `i` has a shape, it must
/// have a dim `k`, which is unified into `dim`.
pub(crate) fn unify_input_dim(
    ctx: &NodeCtx<'_, '_>,
    i: usize,
    k: usize,
    dim: &mut Dim,
) -> InferResult {
    let Some(s) = ctx.shape(i) else {
        return Ok(());
    };
    let Some(&d) = s.get(k) else {
        return Err(bad_rank(
            i,
            format!(
                "input {i} must have rank {} or more, it has rank {}",
                k + 1,
                s.len()
            ),
        ));
    };
    util::unify(d, dim).map_err(|e| {
        bad_shapes(format!(
            "dimension {k} of input {i} (shape {}): {e}",
            ctx.show_dims(s)
        ))
    })
}

/// Output 0 is input 0, type and shape (onnx's
/// propagateShapeAndTypeFromFirstInput).
fn same_as_input(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)
}

// ---- convolution and pooling ------------------------------------------------

/// How a pooling window count is rounded up with `ceil_mode`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ceil {
    /// Up to opset 21: `ceil_mode = 1` rounds the stride count up.
    Exact,
    /// From opset 22 (PyTorch's rule): any `ceil_mode` rounds up, and with
    /// `ceil_mode = 1` a last window starting in the end padding is dropped.
    Torch,
}

/// Where the kernel's spatial shape comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kernel {
    /// The `kernel_shape` attribute (pooling).
    Attribute,
    /// The attribute, else the spatial dims of this weight input; the output
    /// channels are the weight's first dim (convolutions).
    Weights(usize),
    /// As `Weights`, of weights laid out (M, k1, ..., kn, C/group), as
    /// onnxruntime's NhwcConv has them.
    WeightsChannelsLast(usize),
}

/// Where an input's channels are (output 0 has the input's layout).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// (N, C, D1, ..., Dn): onnx's operators.
    ChannelsFirst,
    /// (N, D1, ..., Dn, C): onnxruntime's NHWC operators and those with
    /// `channels_last = 1`. Its weights stay (M, C/group, k1, ..., kn).
    ChannelsLast,
}

/// A positive-valued list attribute of one entry per spatial axis, else
/// all ones (strides, dilations).
fn per_axis_positive(ctx: &NodeCtx<'_, '_>, name: &str, n: usize) -> InferResult<Vec<i64>> {
    match ctx.own_ints(name) {
        None => Ok(vec![1; n]),
        Some(v) if v.len() != n => Err(bad_attr(
            name,
            format!(
                "'{name}' has {} values, the input has {n} spatial axes",
                v.len()
            ),
        )),
        Some(v) => match v.iter().find(|&&x| x <= 0) {
            Some(x) => Err(bad_attr(
                name,
                format!("'{name}' must hold positive values, it holds {x}"),
            )),
            None => Ok(v.to_vec()),
        },
    }
}

/// The `strides` of a convolution or pooling with `n` spatial axes (onnx's
/// getConvPoolStrides).
pub(crate) fn conv_pool_strides(ctx: &NodeCtx<'_, '_>, n: usize) -> InferResult<Vec<i64>> {
    per_axis_positive(ctx, "strides", n)
}

/// A list attribute of `len` non-negative values (pads, output_padding,
/// output_shape), `None` when absent.
fn non_negative(ctx: &NodeCtx<'_, '_>, name: &str, len: usize) -> InferResult<Option<Vec<i64>>> {
    let Some(v) = ctx.own_ints(name) else {
        return Ok(None);
    };
    if v.len() != len {
        return Err(bad_attr(
            name,
            format!("'{name}' has {} values, {len} are expected", v.len()),
        ));
    }
    if let Some(x) = v.iter().find(|&&x| x < 0) {
        return Err(bad_attr(
            name,
            format!("'{name}' must not hold negative values, it holds {x}"),
        ));
    }
    Ok(Some(v.to_vec()))
}

/// The kernel extent of each axis with dilation: `(k - 1) * d + 1`.
fn effective_kernel(kernel: &[i64], dilations: &[i64]) -> InferResult<Vec<i64>> {
    kernel
        .iter()
        .zip(dilations)
        .map(|(&k, &d)| add(mul(sub(k, 1)?, d)?, 1))
        .collect()
}

/// The kernel shape: the attribute, else the weights' spatial dims (`None`
/// when one of those is not a known value: no shape is inferred).
fn kernel_shape(
    ctx: &NodeCtx<'_, '_>,
    weights: Option<&[Dim]>,
    n: usize,
    weights_message: &str,
) -> InferResult<Option<Vec<i64>>> {
    let kernel = match (ctx.own_ints("kernel_shape"), weights) {
        (Some(k), _) => {
            if k.len() != n {
                return Err(bad_attr(
                    "kernel_shape",
                    format!(
                        "'kernel_shape' has {} values, the input has {n} spatial axes",
                        k.len()
                    ),
                ));
            }
            k.to_vec()
        }
        (None, None) => {
            return Err(bad_attr(
                "kernel_shape",
                "the attribute 'kernel_shape' is required",
            ))
        }
        (None, Some(w)) => {
            let mut k = Vec::with_capacity(w.len().saturating_sub(2));
            for d in w.iter().skip(2) {
                match d.value() {
                    Some(v) => k.push(v),
                    None => return Ok(None),
                }
            }
            if k.len() != n {
                return Err(bad_shapes(format!(
                    "{weights_message}: the weights have {} spatial axes, the input has {n}",
                    k.len()
                )));
            }
            k
        }
    };
    if let Some(k) = kernel.iter().find(|&&k| k <= 0) {
        return Err(bad_attr(
            "kernel_shape",
            format!("the kernel shape must hold positive values, it holds {k}"),
        ));
    }
    Ok(Some(kernel))
}

/// Splits a total padding (none when negative) between the two ends as
/// `auto_pad` says: SAME_UPPER puts the odd one at the end, SAME_LOWER at
/// the beginning; other modes pad nothing.
fn split_pad(total: i64, mode: &[u8]) -> InferResult<Option<(i64, i64)>> {
    let total = total.max(0);
    let small = total >> 1;
    let big = sub(total, small)?;
    Ok(match mode {
        b"SAME_UPPER" => Some((small, big)),
        b"SAME_LOWER" => Some((big, small)),
        _ => None,
    })
}

/// Pads from `auto_pad` when `pads` is not given (SAME_UPPER / SAME_LOWER
/// split the padding that keeps `ceil(size / stride)` windows).
fn auto_pads(
    ctx: &NodeCtx<'_, '_>,
    x: &[Dim],
    strides: &[i64],
    effective: &[i64],
) -> InferResult<Vec<i64>> {
    let n = effective.len();
    let mut pads = vec![0; 2 * n];
    let Some(mode) = ctx.own_str("auto_pad") else {
        return Ok(pads);
    };
    if mode == b"VALID" {
        return Ok(pads);
    }
    for i in 0..n {
        let (Some(&stride), Some(&k)) = (strides.get(i), effective.get(i)) else {
            continue;
        };
        let mut residual = 0;
        if stride > 1 {
            let Some(size) = x.get(2 + i).and_then(|d| d.value()) else {
                continue;
            };
            if size < 0 {
                continue;
            }
            residual = size % stride;
        }
        let total = sub(k, if residual == 0 { stride } else { residual })?;
        if let Some((begin, end)) = split_pad(total, mode)? {
            pads[i] = begin;
            pads[i + n] = end;
        }
    }
    Ok(pads)
}

/// Output shape of a convolution or pooling (onnx's convPoolShapeInference):
/// batch, channels (the input's, or the weights' first dim), then one
/// window count per spatial axis. Output 1 (MaxPool's indices) gets the
/// same shape.
fn conv_pool_shape(
    ctx: &mut NodeCtx<'_, '_>,
    use_dilations: bool,
    kernel_from: Kernel,
    ceil: Ceil,
) -> InferResult {
    conv_pool_shape_in(ctx, use_dilations, kernel_from, ceil, Layout::ChannelsFirst)
}

/// [`conv_pool_shape`] over an input of either layout: a channels-last
/// input is read as (N, C, D1, ..., Dn) and the output written back as
/// (N, D1', ..., Dn', M), as onnxruntime's NHWC operators infer.
fn conv_pool_shape_in(
    ctx: &mut NodeCtx<'_, '_>,
    use_dilations: bool,
    kernel_from: Kernel,
    ceil: Ceil,
    layout: Layout,
) -> InferResult {
    let Some(given) = ctx.shape(0) else {
        return Ok(());
    };
    let x: Dims = match layout {
        Layout::ChannelsFirst => given.iter().copied().collect(),
        Layout::ChannelsLast => match given {
            [n, spatial @ .., c] if !spatial.is_empty() => [*n, *c]
                .into_iter()
                .chain(spatial.iter().copied())
                .collect(),
            _ => {
                return Err(bad_rank(
                    0,
                    format!(
                        "a channels-last input must have rank 3 or more (batch, spatial axes, \
                         channels), it has shape {}",
                        ctx.show_dims(given)
                    ),
                ))
            }
        },
    };
    let x = x.as_slice();
    let weights: Option<(usize, Dims)> = match kernel_from {
        Kernel::Attribute => None,
        Kernel::Weights(j) | Kernel::WeightsChannelsLast(j) => match ctx.shape(j) {
            Some(w) => Some((j, w.iter().copied().collect())),
            None => return Ok(()),
        },
    };
    // Channels-last weights read as (M, C/group, k1, ..., kn).
    let weights = match (kernel_from, weights) {
        (Kernel::WeightsChannelsLast(_), Some((j, w))) => match w.as_slice() {
            [m, kernel @ .., c] if !kernel.is_empty() => Some((
                j,
                [*m, *c].into_iter().chain(kernel.iter().copied()).collect(),
            )),
            _ => Some((j, w)),
        },
        (_, weights) => weights,
    };
    if x.len() < 3 {
        return Err(bad_rank(
            0,
            format!(
                "the input must have rank 3 or more (batch, channels, spatial axes), it has shape {}",
                ctx.show_dims(x)
            ),
        ));
    }
    let n = x.len() - 2;
    let dilations = if use_dilations {
        per_axis_positive(ctx, "dilations", n)?
    } else {
        vec![1; n]
    };
    let strides = conv_pool_strides(ctx, n)?;
    let Some(kernel) = kernel_shape(
        ctx,
        weights.as_ref().map(|(_, w)| w.as_slice()),
        n,
        "convolution",
    )?
    else {
        return Ok(());
    };
    let effective = effective_kernel(&kernel, &dilations)?;
    let given = non_negative(ctx, "pads", 2 * n)?;
    let same_auto = given.is_none()
        && ctx
            .own_str("auto_pad")
            .is_some_and(|m| m == b"SAME_UPPER" || m == b"SAME_LOWER");
    let pads = match given {
        Some(p) => p,
        None => auto_pads(ctx, x, &strides, &effective)?,
    };

    let mut out = Dims::with_capacity(x.len());
    out.push(x[0]);
    match weights {
        None => out.push(x[1]),
        Some((j, w)) => match w.first() {
            Some(&m) => out.push(m),
            None => {
                return Err(bad_rank(
                    j,
                    "the weights must have rank 1 or more, they have rank 0",
                ))
            }
        },
    }
    let ceil_mode = ctx.own_int("ceil_mode", 0);
    for i in 0..n {
        let (stride, k) = (strides[i], effective[i]);
        let Some(size) = x[2 + i].value() else {
            // With `symbolic`: the window count as an expression of the size.
            let window = Window {
                stride,
                kernel: k,
                pads: add(pads[i], pads[i + n])?,
                round_up: ceil_mode != 0,
                same_auto,
            };
            let count = match ceil {
                // PyTorch's rule drops a last window that would start in
                // the end padding: that cannot happen when the kernel is
                // longer than the end padding plus stride - 1 (the last
                // start, ceil(gap/stride)*stride, is at most gap + stride -
                // 1, before the padding); otherwise it depends on the size.
                Ceil::Torch if ceil_mode == 1 && k < add(pads[i + n], stride)? => None,
                _ => symbolic_windows(ctx, x[2 + i], window),
            };
            out.push(count.unwrap_or(Dim::Unknown));
            continue;
        };
        let padded = add(add(size, pads[i])?, pads[i + n])?;
        let count = match ceil {
            Ceil::Exact => {
                let gap = sub(padded, k)?;
                let mut steps = div(gap, stride)?;
                if ceil_mode == 1 && gap % stride > 0 {
                    steps = add(steps, 1)?;
                }
                add(1, steps)?
            }
            Ceil::Torch => {
                let mut numerator = sub(padded, k)?;
                if ceil_mode != 0 {
                    numerator = add(numerator, sub(stride, 1)?)?;
                }
                let mut count = add(div(numerator, stride)?, 1)?;
                if ceil_mode == 1 && mul(sub(count, 1)?, stride)? >= add(size, pads[i])? {
                    count -= 1;
                }
                count
            }
        };
        out.push(Dim::Value(count));
    }
    if layout == Layout::ChannelsLast {
        // (N, M, D1', ..., Dn') back to (N, D1', ..., Dn', M).
        if let [_, m, ..] = *out.as_slice() {
            out.remove(1);
            out.push(m);
        }
    }
    if ctx.n_outputs() > 1 {
        ctx.set_tensor_shape(1, out.clone());
    }
    ctx.set_tensor_shape(0, out);
    Ok(())
}

/// One spatial axis of a convolution or pooling window.
#[derive(Clone, Copy)]
struct Window {
    stride: i64,
    /// The dilated kernel size.
    kernel: i64,
    /// Both pads of the axis.
    pads: i64,
    /// `ceil_mode`: the window count rounds up.
    round_up: bool,
    /// `auto_pad` SAME_UPPER / SAME_LOWER without `pads`: `ceil(size / stride)`.
    same_auto: bool,
}

/// The window count over a symbolic size (`floor((h + pads - k)/stride) + 1`,
/// rounded up with `ceil_mode`), assuming the size is at least the kernel.
fn symbolic_windows(ctx: &mut NodeCtx<'_, '_>, size: Dim, w: Window) -> Option<Dim> {
    if w.same_auto {
        return ctx.sym_ceil_div(size, w.stride);
    }
    let gap = ctx.sym_add(size, Dim::Value(w.pads.checked_sub(w.kernel)?))?;
    let steps = if w.round_up {
        ctx.sym_ceil_div(gap, w.stride)?
    } else {
        ctx.sym_floor_div(gap, w.stride)?
    };
    ctx.sym_add(steps, Dim::Value(1))
}

/// AveragePool, MaxPool, LpPool: element type of X (MaxPool's indices
/// are int64), shape from the window.
fn pool(ctx: &mut NodeCtx<'_, '_>, use_dilations: bool, ceil: Ceil) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if ctx.n_outputs() > 1 {
        ctx.set_elem(1, INT64);
    }
    conv_pool_shape(ctx, use_dilations, Kernel::Attribute, ceil)
}

fn pool_plain(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    pool(ctx, false, Ceil::Exact)
}

fn pool_dilated(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    pool(ctx, true, Ceil::Exact)
}

pub(super) fn pool_22(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    pool(ctx, true, Ceil::Torch)
}

/// Conv and DeformConv: element type of X, shape from X and W.
fn conv(ctx: &mut NodeCtx<'_, '_>, ceil: Ceil) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    conv_pool_shape(ctx, true, Kernel::Weights(1), ceil)
}

fn conv_old(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    conv(ctx, Ceil::Exact)
}

pub(super) fn conv_22(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    conv(ctx, Ceil::Torch)
}

/// A convolution over a channels-last input with channels-last weights
/// (onnxruntime's NhwcConv: X is (N, H, W, C), W is (M, kH, kW, C/group),
/// as its NHWC fusion writes them and its kernel reads them; its
/// inference reads W as (M, C/group, kH, kW), right only with a
/// `kernel_shape`): element type of X, Conv's shape, channels last.
pub(super) fn conv_channels_last(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    conv_pool_shape_in(
        ctx,
        true,
        Kernel::WeightsChannelsLast(1),
        Ceil::Torch,
        Layout::ChannelsLast,
    )
}

/// A pooling over an input of `layout` with a `kernel_shape` attribute
/// (onnxruntime's NhwcMaxPool, QLinearAveragePool): element type of X.
pub(super) fn pool_in(
    ctx: &mut NodeCtx<'_, '_>,
    use_dilations: bool,
    layout: Layout,
) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    conv_pool_shape_in(ctx, use_dilations, Kernel::Attribute, Ceil::Torch, layout)
}

/// Inputs `x` and `w` of a quantized convolution must be tensors.
fn quantized_operands<'a>(ctx: &NodeCtx<'a, '_>, x: usize, w: usize) -> InferResult<(i32, i32)> {
    match (ctx.typed(x)?, ctx.typed(w)?) {
        (Some(Type::Tensor(a)), Some(Type::Tensor(b))) => Ok((a.elem, b.elem)),
        _ => Err(failed(format!("inputs {x} and {w} must be typed tensors"))),
    }
}

/// Zero point input `zp` must have the element type of its operand.
fn same_elem_as(ctx: &NodeCtx<'_, '_>, zp: usize, elem: i32, operand: usize) -> InferResult {
    let found = match ctx.typed(zp)? {
        Some(Type::Tensor(t)) => t.elem,
        Some(_) => 0,
        None => {
            return Err(failed(format!(
                "input {zp} (the zero point of input {operand}) has no type"
            )))
        }
    };
    if found != elem {
        return Err(util::bad_shapes(format!(
            "input {zp} must have the element type of input {operand} ({}), it has {}",
            crate::ir::types::elem_name(elem).unwrap_or("?"),
            crate::ir::types::elem_name(found).unwrap_or("?")
        )));
    }
    Ok(())
}

fn qlinear_conv(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    qlinear_conv_in(ctx, Layout::ChannelsFirst)
}

/// QLinearConv over an input of `layout` (onnx's, and onnxruntime's own
/// with `channels_last`): y_zero_point's element type.
pub(super) fn qlinear_conv_in(ctx: &mut NodeCtx<'_, '_>, layout: Layout) -> InferResult {
    let (x, w) = quantized_operands(ctx, 0, 3)?;
    same_elem_as(ctx, 2, x, 0)?;
    same_elem_as(ctx, 5, w, 3)?;
    ctx.propagate_elem(7, 0)?;
    conv_pool_shape_in(ctx, true, Kernel::Weights(3), Ceil::Torch, layout)
}

fn conv_integer(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    quantized_operands(ctx, 0, 1)?;
    ctx.set_elem(0, INT32);
    conv_pool_shape(ctx, true, Kernel::Weights(1), Ceil::Torch)
}

/// ConvTranspose: element type of X; shape from X, W and the attributes.
/// From opset 11, `pads` and a non-NOTSET `auto_pad` exclude each other.
fn conv_transpose(ctx: &mut NodeCtx<'_, '_>, pads_exclude_auto_pad: bool) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(x), Some(w)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    let group = ctx.own_int("group", 1);
    if group <= 0 {
        return Err(bad_attr(
            "group",
            format!("'group' must be positive, it is {group}"),
        ));
    }
    if x.len() < 3 {
        return Err(bad_rank(
            0,
            format!(
                "the input must have rank 3 or more (batch, channels, spatial axes), it has shape {}",
                ctx.show_dims(x)
            ),
        ));
    }
    if let Some(c) = x[1].value() {
        if c % group != 0 {
            return Err(bad_shapes(format!(
                "the input channels ({c}) must be a multiple of 'group' ({group})"
            )));
        }
    }
    if w.len() < 3 {
        return Err(bad_rank(
            1,
            format!(
                "the weights must have rank 3 or more (C, M/group, kernel axes), they have shape {}",
                ctx.show_dims(w)
            ),
        ));
    }
    let n = x.len() - 2;
    let dilations = per_axis_positive(ctx, "dilations", n)?;
    let strides = per_axis_positive(ctx, "strides", n)?;
    let Some(kernel) = kernel_shape(ctx, Some(w), n, "transposed convolution")? else {
        return Ok(());
    };
    let effective = effective_kernel(&kernel, &dilations)?;
    let pads = match non_negative(ctx, "pads", 2 * n)? {
        Some(p) => {
            if pads_exclude_auto_pad {
                if let Some(mode) = ctx.own_str("auto_pad") {
                    if mode != b"NOTSET" {
                        return Err(bad_attr(
                            "pads",
                            "'pads' cannot be given together with 'auto_pad'",
                        ));
                    }
                }
            }
            p
        }
        None => transpose_auto_pads(ctx, &strides, &effective)?,
    };
    let output_shape = non_negative(ctx, "output_shape", n)?;
    let output_padding = non_negative(ctx, "output_padding", n)?.unwrap_or_else(|| vec![0; n]);

    let mut out = Dims::with_capacity(x.len());
    out.push(x[0]);
    out.push(times(ctx, w[1], group)?);
    match output_shape {
        Some(shape) => {
            for (i, &s) in shape.iter().enumerate() {
                if let Some(v) = x[i + 2].value() {
                    if s < v {
                        // onnx stops here, leaving the dims built so far.
                        ctx.set_shape(0, out);
                        return Ok(());
                    }
                }
                out.push(Dim::Value(s));
            }
        }
        None => {
            for i in 0..n {
                let Some(v) = x[i + 2].value() else {
                    // With `symbolic`: stride*x + the constant part.
                    let rest = [
                        output_padding[i],
                        effective[i],
                        -pads[i],
                        -pads[i + n],
                        -strides[i],
                    ]
                    .into_iter()
                    .try_fold(0i64, i64::checked_add);
                    let grown = ctx.sym_mul(x[i + 2], Dim::Value(strides[i]));
                    let d = match (grown, rest) {
                        (Some(g), Some(r)) => ctx.sym_add(g, Dim::Value(r)),
                        _ => None,
                    };
                    out.push(d.unwrap_or(Dim::Unknown));
                    continue;
                };
                let mut d = mul(strides[i], sub(v, 1)?)?;
                d = add(d, output_padding[i])?;
                d = add(d, effective[i])?;
                d = sub(d, pads[i])?;
                d = sub(d, pads[i + n])?;
                out.push(Dim::Value(d));
            }
        }
    }
    ctx.set_shape(0, out);
    Ok(())
}

/// ConvTranspose's pads from `auto_pad` (the padding of `stride` less
/// than the kernel, split as in [`auto_pads`]).
fn transpose_auto_pads(
    ctx: &NodeCtx<'_, '_>,
    strides: &[i64],
    effective: &[i64],
) -> InferResult<Vec<i64>> {
    let n = effective.len();
    let mut pads = vec![0; 2 * n];
    let Some(mode) = ctx.own_str("auto_pad") else {
        return Ok(pads);
    };
    if mode == b"VALID" {
        return Ok(pads);
    }
    for (i, (&k, &s)) in effective.iter().zip(strides).enumerate() {
        if let Some((begin, end)) = split_pad(sub(k, s)?, mode)? {
            pads[i] = begin;
            pads[i + n] = end;
        }
    }
    Ok(pads)
}

fn conv_transpose_1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    conv_transpose(ctx, false)
}

fn conv_transpose_11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    conv_transpose(ctx, true)
}

/// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: `(N, C, 1, ..., 1)`
/// (no shape for inputs of rank below 2).
pub(super) fn global_pool(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    if x.len() < 2 {
        return Ok(());
    }
    let mut out: Dims = x[..2].iter().copied().collect();
    out.extend(std::iter::repeat_n(Dim::Value(1), x.len() - 2));
    ctx.set_shape(0, out);
    Ok(())
}

/// MaxRoiPool's `pooled_shape`: required, `len` positive values.
fn pooled_shape<'a>(ctx: &NodeCtx<'a, '_>, len: usize) -> InferResult<&'a [i64]> {
    let Some(p) = ctx.own_ints("pooled_shape") else {
        return Err(bad_attr(
            "pooled_shape",
            "the attribute 'pooled_shape' is required",
        ));
    };
    if p.len() != len {
        return Err(bad_attr(
            "pooled_shape",
            format!("'pooled_shape' has {} values, {len} are expected", p.len()),
        ));
    }
    if let Some(v) = p.iter().find(|&&v| v <= 0) {
        return Err(bad_attr(
            "pooled_shape",
            format!("'pooled_shape' must hold positive values, it holds {v}"),
        ));
    }
    Ok(p)
}

/// MaxRoiPool 1: `(num_rois, C, pooled_h, pooled_w)`.
fn max_roi_pool_1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let (Some(x), Some(rois)) = (ctx.shape(0), ctx.shape(1)) else {
        return Ok(());
    };
    if x.len() < 4 {
        return Err(bad_rank(
            0,
            format!(
                "the input must have rank 4 or more, it has shape {}",
                ctx.show_dims(x)
            ),
        ));
    }
    if rois.len() != 2 {
        return Err(bad_rank(
            1,
            format!(
                "the RoIs must have rank 2, they have shape {}",
                ctx.show_dims(rois)
            ),
        ));
    }
    let p = pooled_shape(ctx, x.len() - 2)?;
    let out: Dims = [rois[0], x[1], Dim::Value(p[0]), Dim::Value(p[1])]
        .into_iter()
        .collect();
    ctx.set_shape(0, out);
    Ok(())
}

/// MaxRoiPool 22: X is `(N, C, H, W)`, rois `(num_rois, 5)`.
fn max_roi_pool_22(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    if ctx.shape(0).is_none() || ctx.shape(1).is_none() {
        return Ok(());
    }
    // N, C, H, W, num_rois, 5
    let mut d = [Dim::Unknown; 6];
    d[5] = Dim::Value(5);
    unify_input(ctx, 0, &mut d, &[0, 1, 2, 3])?;
    unify_input(ctx, 1, &mut d, &[4, 5])?;
    let p = pooled_shape(ctx, 2)?;
    let out: Dims = [d[4], d[1], Dim::Value(p[0]), Dim::Value(p[1])]
        .into_iter()
        .collect();
    ctx.set_shape(0, out);
    Ok(())
}

/// MaxUnpool: `(N, C, ...)` with each spatial size
/// `(in - 1) * stride + kernel - pads`, unless `output_shape` is given.
fn max_unpool(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let inputs = ctx.n_inputs();
    if inputs != 2 && inputs != 3 {
        return Err(failed(format!(
            "MaxUnpool takes two or three inputs, this node has {inputs}"
        )));
    }
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    if x.len() < 2 {
        return Err(bad_rank(
            0,
            format!(
                "the input must have rank 2 or more, it has shape {}",
                ctx.show_dims(x)
            ),
        ));
    }
    let n = x.len() - 2;
    let sized = |name: &str, len: usize, fill: i64| -> InferResult<Vec<i64>> {
        match ctx.own_ints(name) {
            None => Ok(vec![fill; len]),
            Some(v) if v.len() == len => Ok(v.to_vec()),
            Some(v) => Err(bad_attr(
                name,
                format!("'{name}' has {} values, {len} are expected", v.len()),
            )),
        }
    };
    let pads = sized("pads", 2 * n, 0)?;
    let strides = sized("strides", n, 1)?;
    let kernel = match ctx.own_ints("kernel_shape") {
        None => {
            return Err(bad_attr(
                "kernel_shape",
                "the attribute 'kernel_shape' is required",
            ))
        }
        Some(k) if k.len() != n => {
            return Err(bad_attr(
                "kernel_shape",
                format!(
                    "'kernel_shape' has {} values, the input has {n} spatial axes",
                    k.len()
                ),
            ))
        }
        Some(k) => k,
    };
    if inputs == 3 {
        // The output shape is a runtime value; only its length is checked.
        if let Some(s) = ctx.shape(2) {
            if s.len() != 1 {
                return Err(bad_rank(
                    2,
                    format!(
                        "'output_shape' must have rank 1, it has shape {}",
                        ctx.show_dims(s)
                    ),
                ));
            }
            if let Some(v) = s[0].value() {
                // onnx compares the length as a C int.
                if v as i32 != x.len() as i32 {
                    return Err(bad_shapes(format!(
                        "'output_shape' has {v} values, the input has rank {}",
                        x.len()
                    )));
                }
            }
        }
        return Ok(());
    }
    let Some(indices) = ctx.shape(1) else {
        return Ok(());
    };
    if indices.len() < 2 {
        return Err(bad_rank(
            1,
            format!(
                "the indices must have rank 2 or more, they have shape {}",
                ctx.show_dims(indices)
            ),
        ));
    }
    let mut out = Dims::with_capacity(x.len());
    out.push(x[0]);
    out.push(indices[1]);
    for i in 0..n {
        let Some(v) = x[2 + i].value() else {
            out.push(Dim::Unknown);
            continue;
        };
        let mut d = mul(strides[i], sub(v, 1)?)?;
        d = add(d, kernel[i])?;
        d = sub(d, pads[i])?;
        d = sub(d, pads[i + n])?;
        out.push(Dim::Value(d));
    }
    ctx.set_shape(0, out);
    Ok(())
}

/// Col2Im: `(N, C / prod(block_shape), image_shape...)`; the number of
/// image axes is unified from the inputs' lengths and the attributes.
fn col2im(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    if ctx.shape(1).is_none() || ctx.shape(2).is_none() {
        return Ok(());
    }
    let mut axes = Dim::Unknown;
    unify_input_dim(ctx, 1, 0, &mut axes)?;
    unify_input_dim(ctx, 2, 0, &mut axes)?;
    util::check_rank(ctx, 1, 1)?;
    util::check_rank(ctx, 2, 1)?;
    let mut image: Vec<i64> = Vec::new();
    if let Some(count) = const_count(ctx, 1) {
        if count > MAX_MATERIALIZED_RANK {
            // Too many axes to build a shape: only the count matters.
            unify_value(&mut axes, count, "the length of 'image_shape'")?;
        } else if let Some(values) = ctx.const_ints(1)? {
            unify_value(
                &mut axes,
                len_i64(values.len()),
                "the length of 'image_shape'",
            )?;
            image = values;
        }
    }
    if let Some(p) = ctx.own_ints("pads") {
        if p.len() % 2 != 0 {
            return Err(bad_attr(
                "pads",
                format!(
                    "'pads' must have an even number of values, it has {}",
                    p.len()
                ),
            ));
        }
        unify_value(&mut axes, len_i64(p.len() / 2), "half the length of 'pads'")?;
    }
    for name in ["dilations", "strides"] {
        if let Some(v) = ctx.own_ints(name) {
            unify_value(
                &mut axes,
                len_i64(v.len()),
                &format!("the length of '{name}'"),
            )?;
        }
    }
    if x.len() != 3 {
        return Err(bad_rank(
            0,
            format!(
                "the input must have rank 3, it has shape {}",
                ctx.show_dims(x)
            ),
        ));
    }
    let mut block: Vec<i64> = Vec::new();
    match const_count(ctx, 2) {
        // Larger than the engine reads: only the count is checked.
        Some(count) if count > len_i64(MAX_CONST_ELEMS) => {
            unify_value(&mut axes, count, "the length of 'block_shape'")?
        }
        Some(_) => {
            if let Some(values) = ctx.const_ints(2)? {
                unify_value(
                    &mut axes,
                    len_i64(values.len()),
                    "the length of 'block_shape'",
                )?;
                block = values;
            }
        }
        None => {}
    }
    unify_input_dim(ctx, 2, 0, &mut axes)?;
    let mut block_size = 0;
    if !block.is_empty() {
        block_size = 1;
        for &b in &block {
            if b <= 0 {
                return Err(util::bad_const(
                    2,
                    format!("'block_shape' must hold positive values, it holds {b}"),
                ));
            }
            block_size = mul(block_size, b)?;
        }
    }
    let Some(count) = axes.value() else {
        return Ok(());
    };
    if !(0..=MAX_MATERIALIZED_RANK).contains(&count) {
        return Ok(());
    }
    let mut out = Dims::new();
    out.push(if x[0].value().is_some() {
        x[0]
    } else {
        Dim::Unknown
    });
    out.push(if block_size > 0 {
        dim_div(x[1], block_size)?
    } else {
        Dim::Unknown
    });
    for i in 0..count as usize {
        out.push(image.get(i).map_or(Dim::Unknown, |&v| Dim::Value(v)));
    }
    ctx.set_shape(0, out);
    Ok(())
}

/// The number of elements of constant input `i` (from its dims, without
/// reading it), `None` when the input is not constant.
fn const_count(ctx: &NodeCtx<'_, '_>, i: usize) -> Option<i64> {
    let dims = ctx.const_dims(i)?;
    Some(
        dims.iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(d))
            .unwrap_or(i64::MAX),
    )
}

fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

// ---- normalization, dropout, flatten ----------------------------------------

/// BatchNormalization 14 and 15: Y is X; scale, B, mean and var have rank
/// 1 and the channel count; in training mode the running mean and var
/// outputs have shape `(C)`.
fn batch_norm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    // onnx copies the shape once more, unguarded.
    ctx.shape_copy_unguarded(0, 0)?;
    for i in 1..=4 {
        util::check_rank(ctx, i, 1)?;
    }
    let mut channels = Dim::Unknown;
    if let Some(x) = ctx.shape(0) {
        if x.len() > 1 {
            unify_input_dim(ctx, 0, 1, &mut channels)?;
        } else {
            channels = Dim::Value(1);
        }
    }
    for i in 1..=4 {
        unify_input_dim(ctx, i, 0, &mut channels)?;
    }
    // onnx reads the flag as a C int.
    let training = ctx
        .attr("training_mode")
        .is_some_and(|a| a.i.unwrap_or(0) as i32 != 0);
    let outputs = ctx.n_outputs();
    let wanted = if training { 3 } else { 1 };
    if outputs != wanted {
        return Err(failed(format!(
            "with training_mode = {}, BatchNormalization has {wanted} output{}, this node has {outputs}",
            i32::from(training),
            if wanted == 1 { "" } else { "s" }
        )));
    }
    if outputs > 1 {
        let shape: Dims = [channels].into_iter().collect();
        ctx.propagate_elem(3, 1)?;
        ctx.set_shape(1, shape.clone());
        if outputs > 2 {
            ctx.propagate_elem(4, 2)?;
            ctx.set_shape(2, shape);
        }
    }
    Ok(())
}

/// Dropout 10: Y is X; the mask is bool of X's shape.
fn dropout_10(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    if ctx.n_outputs() == 2 {
        ctx.set_elem(1, BOOL);
        ctx.propagate_shape(0, 1);
    }
    Ok(())
}

/// Dropout 12 and later: as 10, and `ratio` and `training_mode` are scalars.
fn dropout_12(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    ctx.propagate_shape(0, 0);
    // onnx reads these shapes by getInputShape.
    for (i, name) in [(1, "ratio"), (2, "training_mode")] {
        if let Some(s) = ctx.input_shape(i) {
            if !s.is_empty() {
                return Err(bad_rank(
                    i,
                    format!(
                        "'{name}' must be a scalar, it has shape {}",
                        ctx.show_dims(s)
                    ),
                ));
            }
        }
    }
    if ctx.n_outputs() == 2 {
        ctx.set_elem(1, BOOL);
        ctx.propagate_shape(0, 1);
    }
    Ok(())
}

/// Flatten: `(d0 * ... * d(axis-1), d(axis) * ... * d(r-1))`; negative
/// axes count from the end from opset 11.
fn flatten(ctx: &mut NodeCtx<'_, '_>, negative_axis: bool) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    // onnx works with C ints here.
    let rank = x.len() as i32;
    let given = ctx.own_int("axis", 1);
    let mut axis = given as i32;
    if negative_axis && axis < 0 {
        axis += rank;
    }
    if axis < 0 || axis > rank {
        return Err(bad_attr(
            "axis",
            format!(
                "'axis' {given} is out of range for an input of shape {} (expected [{}, {rank}])",
                ctx.show_dims(x),
                if negative_axis { -rank } else { 0 }
            ),
        ));
    }
    let (outer, inner) = x.split_at(axis as usize);
    let (outer, inner) = (outer.to_vec(), inner.to_vec());
    let out: Dims = [product(ctx, &outer)?, product(ctx, &inner)?]
        .into_iter()
        .collect();
    ctx.set_shape(0, out);
    Ok(())
}

fn flatten_1(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    flatten(ctx, false)
}

fn flatten_11(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    flatten(ctx, true)
}

/// The `axis` of LayerNormalization / RMSNormalization made non-negative
/// (values past the rank are kept: onnx does not reject them).
fn normalized_axis(ctx: &NodeCtx<'_, '_>, rank: usize) -> InferResult<i64> {
    let rank = len_i64(rank);
    let given = ctx.own_int("axis", -1);
    let axis = if given < 0 {
        given.saturating_add(rank)
    } else {
        given
    };
    if axis < 0 {
        return Err(bad_attr(
            "axis",
            format!("'axis' {given} is out of range for an input of rank {rank}"),
        ));
    }
    Ok(axis)
}

/// LayerNormalization: Y is X; Mean and InvStdDev have X's dims before
/// `axis` and 1 from it on, element type `stash_type`.
pub(super) fn layer_norm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    let stash = ctx.own_int("stash_type", i64::from(FLOAT)) as i32;
    let outputs = ctx.n_outputs();
    for i in 1..outputs.min(3) {
        ctx.set_elem(i, stash);
    }
    // Read by getInputShape in onnx.
    let Some(x) = ctx.input_shape(0) else {
        return Ok(());
    };
    let axis = normalized_axis(ctx, x.len())?;
    // onnx starts the loop at the axis as a C int.
    let from = usize::try_from(axis as i32).unwrap_or(0);
    let reduced: Dims = x
        .iter()
        .enumerate()
        .map(|(d, &dim)| if d >= from { Dim::Value(1) } else { dim })
        .collect();
    for i in 1..outputs.min(3) {
        ctx.set_shape(i, reduced.clone());
    }
    Ok(())
}

/// RMSNormalization: Y is X; the axis must be in range.
fn rms_norm(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    if let Some(x) = ctx.shape(0) {
        normalized_axis(ctx, x.len())?;
    }
    Ok(())
}

/// TfIdfVectorizer: float, `(max(ngram_indexes) + 1)` or
/// `(N, max(ngram_indexes) + 1)`.
fn tfidf_vectorizer(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_elem(0, FLOAT);
    let Some(x) = ctx.shape(0) else {
        return Ok(());
    };
    let indexes = ctx.own_ints("ngram_indexes").unwrap_or(&[]);
    let Some(&max) = indexes.iter().max() else {
        return Err(bad_attr(
            "ngram_indexes",
            "'ngram_indexes' must not be empty",
        ));
    };
    if let Some(v) = indexes.iter().find(|&&v| v < 0) {
        return Err(bad_attr(
            "ngram_indexes",
            format!("'ngram_indexes' must not hold negative values, it holds {v}"),
        ));
    }
    // onnx adds without a check (wrapping in practice).
    let last = Dim::Value(max.wrapping_add(1));
    let out: Dims = match x.len() {
        1 => [last].into_iter().collect(),
        2 => [x[0], last].into_iter().collect(),
        _ => {
            return Err(bad_rank(
                0,
                format!(
                    "the input must have rank 1 or 2, it has shape {}",
                    ctx.show_dims(x)
                ),
            ))
        }
    };
    ctx.set_shape(0, out);
    Ok(())
}

// ---- attention ----------------------------------------------------------------

/// The rank of input `i`, which must be 3 or 4 when known.
fn rank_3_or_4(ctx: &NodeCtx<'_, '_>, i: usize, name: &str) -> InferResult<Option<usize>> {
    match ctx.shape(i) {
        Some(s) if s.len() != 3 && s.len() != 4 => Err(bad_rank(
            i,
            format!(
                "'{name}' must have rank 3 or 4, it has shape {}",
                ctx.show_dims(s)
            ),
        )),
        s => Ok(s.map(<[Dim]>::len)),
    }
}

/// RotaryEmbedding: Y is X, of rank 3 (with `num_heads`) or 4.
fn rotary_embedding(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_type(0, 0)?;
    ctx.shape_copy_unguarded(0, 0)?;
    if rank_3_or_4(ctx, 0, "input")? == Some(3) && ctx.attr("num_heads").is_none() {
        return Err(bad_attr(
            "num_heads",
            "a 3-D input needs the attribute 'num_heads'",
        ));
    }
    Ok(())
}

/// Attention (23 and later): Y from Q and V; the QK product
/// `(B, q_heads, q_seq, kv_seq)`; the present key and value as the past
/// ones with the sequences joined.
fn attention_shapes(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.propagate_elem(0, 0)?;
    // onnx reads the kv sequence length as a dim value (0 when symbolic);
    // with `symbolic` the dim itself is used (`past + seq` for the present).
    let mut kv_len: i64 = -1;
    let mut kv_dim = Dim::Unknown;
    let symbolic = ctx.is_symbolic();
    let kv_of = |d: Dim| match d {
        Dim::Sym(_) if symbolic => d,
        _ => Dim::Value(d.value().unwrap_or(0)),
    };
    let mut qk = Dims::new();
    if let Some(q) = ctx.shape(0) {
        let q_rank = rank_3_or_4(ctx, 0, "Q")?;
        if q_rank == Some(3) {
            for name in ["q_num_heads", "kv_num_heads"] {
                if ctx.attr(name).is_none() {
                    return Err(bad_attr(
                        name,
                        format!("3-D inputs need the attribute '{name}'"),
                    ));
                }
            }
        }
        let mut y: Dims = q[..2].iter().copied().collect();
        qk.push(q[0]);
        rank_3_or_4(ctx, 1, "K")?;
        if let Some(v) = ctx.shape(2) {
            rank_3_or_4(ctx, 2, "V")?;
            match (q.len(), v.len()) {
                (4, 4) => {
                    kv_len = v[2].value().unwrap_or(0);
                    kv_dim = v[2];
                    y.push(q[2]);
                    y.push(v[3]);
                    ctx.set_shape(0, y);
                    qk.extend([q[1], q[2], kv_of(v[2])]);
                }
                (3, 3) => {
                    kv_len = v[1].value().unwrap_or(0);
                    kv_dim = v[1];
                    let q_heads = ctx.own_int("q_num_heads", 0);
                    let kv_heads = ctx.own_int("kv_num_heads", 0);
                    if q_heads <= 0 || kv_heads <= 0 {
                        return Err(bad_attr(
                            if q_heads <= 0 { "q_num_heads" } else { "kv_num_heads" },
                            format!(
                                "'q_num_heads' ({q_heads}) and 'kv_num_heads' ({kv_heads}) must be positive"
                            ),
                        ));
                    }
                    let out = match v[2] {
                        // With `symbolic`: (hidden / kv_heads) * q_heads, the
                        // division exact in a valid model (onnx reads 0).
                        Dim::Sym(_) if symbolic => {
                            let head = divided(ctx, v[2], kv_heads)?;
                            ctx.sym_mul(head, Dim::Value(q_heads))
                                .unwrap_or(Dim::Unknown)
                        }
                        _ => {
                            let v_head = div(v[2].value().unwrap_or(0), kv_heads)?;
                            Dim::Value(mul(v_head, q_heads)?)
                        }
                    };
                    y.push(out);
                    ctx.set_shape(0, y);
                    qk.extend([Dim::Value(q_heads), q[1], kv_of(v[1])]);
                }
                _ => {}
            }
        }
    }
    if ctx.has_output(3) {
        ctx.propagate_elem(0, 3)?;
        ctx.set_shape(3, qk.clone());
    }
    if !(ctx.has_output(1) && ctx.has_output(2) && ctx.has_input(4) && ctx.has_input(5)) {
        return Ok(());
    }
    ctx.propagate_elem(4, 1)?;
    ctx.propagate_elem(5, 2)?;
    let (Some(past_k), Some(past_v)) = (ctx.shape(4), ctx.shape(5)) else {
        return Ok(());
    };
    for (i, s, name) in [(4, past_k, "past_key"), (5, past_v, "past_value")] {
        if s.len() != 4 {
            return Err(bad_rank(
                i,
                format!(
                    "'{name}' must have rank 4, it has shape {}",
                    ctx.show_dims(s)
                ),
            ));
        }
    }
    let total = match past_k[2].value() {
        Some(past_len) if kv_len > 0 => Dim::Value(add(kv_len, past_len)?),
        _ => match ctx.sym_add(past_k[2], kv_dim) {
            Some(total) if symbolic => total,
            _ => return Ok(()),
        },
    };
    if ctx.has_output(3) {
        if let Some(d) = qk.get_mut(3) {
            *d = total;
        }
        ctx.set_shape(3, qk);
    }
    let mut present_k: Dims = past_k.iter().copied().collect();
    let mut present_v: Dims = past_v.iter().copied().collect();
    present_k[2] = total;
    present_v[2] = total;
    ctx.set_shape(1, present_k);
    ctx.set_shape(2, present_v);
    Ok(())
}

/// Attention 25: as 23, and the window sizes, head counts and cache
/// inputs/outputs are checked against each other.
fn attention_25(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    attention_shapes(ctx)?;
    for name in ["left_window_size", "right_window_size"] {
        let v = ctx.own_int(name, -1);
        if v < -1 {
            return Err(bad_attr(
                name,
                format!("'{name}' must be -1 or non-negative, it is {v}"),
            ));
        }
    }
    let q_rank = ctx.rank(0);
    if q_rank == Some(3) {
        if let (Some(q), Some(kv)) = (ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")) {
            let (q, kv) = (q.i.unwrap_or(0), kv.i.unwrap_or(0));
            if q <= 0 || kv <= 0 {
                return Err(bad_attr(
                    if q <= 0 {
                        "q_num_heads"
                    } else {
                        "kv_num_heads"
                    },
                    format!("'q_num_heads' ({q}) and 'kv_num_heads' ({kv}) must be positive"),
                ));
            }
        }
    }
    let past = ctx.has_input(4);
    if past != ctx.has_input(5) {
        return Err(failed("'past_key' and 'past_value' must be given together"));
    }
    let present = ctx.has_output(1);
    if present != ctx.has_output(2) {
        return Err(failed(
            "'present_key' and 'present_value' must be requested together",
        ));
    }
    if ctx.has_input(6) && (past || present) {
        return Err(failed(
            "'nonpad_kv_seqlen' cannot be combined with past or present key and value",
        ));
    }
    if q_rank == Some(4) {
        for name in ["q_num_heads", "kv_num_heads"] {
            if ctx.attr(name).is_some() {
                return Err(bad_attr(
                    name,
                    format!("'{name}' must not be given for 4-D inputs"),
                ));
            }
        }
    }
    Ok(())
}

/// CausalConvWithState: output as the input `(B, C, L)`; present state
/// `(B, C, k - 1)` from the weights `(C, 1, k)` and the past state.
fn causal_conv_with_state(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    if let Some(a) = ctx.attr("activation") {
        if let Some(s) = a.s.as_deref() {
            if !matches!(s, b"none" | b"silu" | b"swish") {
                return Err(bad_attr(
                    "activation",
                    format!(
                        "'activation' must be 'none', 'silu' or 'swish', it is '{}'",
                        String::from_utf8_lossy(s)
                    ),
                ));
            }
        }
    }
    ctx.propagate_elem(0, 0)?;
    ctx.propagate_elem(0, 1)?;
    // onnx copies the shape unguarded.
    ctx.shape_copy_unguarded(0, 0)?;
    ctx.propagate_shape(0, 0);
    const B: usize = 0;
    const C: usize = 1;
    const L: usize = 2;
    const ONE: usize = 3;
    const K: usize = 4;
    const K1: usize = 5;
    let mut d = [Dim::Unknown; 6];
    d[ONE] = Dim::Value(1);
    unify_input(ctx, 0, &mut d, &[B, C, L])?;
    unify_input(ctx, 1, &mut d, &[C, ONE, K])?;
    if ctx.has_input(2) {
        unify_input(ctx, 2, &mut d, &[C])?;
    }
    if ctx.has_input(3) {
        unify_input(ctx, 3, &mut d, &[B, C, K1])?;
    }
    if let Some(k) = d[K].value() {
        let state = sub(k, 1)?;
        match d[K1] {
            Dim::Value(v) if v != state => {
                return Err(bad_shapes(format!(
                    "the past state's last dim ({v}) must be the kernel size minus 1 ({state})"
                )))
            }
            _ => d[K1] = Dim::Value(state),
        }
        if k < 1 {
            return Err(bad_shapes(format!(
                "the kernel size must be 1 or more, it is {k}"
            )));
        }
    }
    let out: Dims = [d[B], d[C], d[K1]].into_iter().collect();
    ctx.set_shape(1, out);
    Ok(())
}

/// LinearAttention: output `(B, T, q_heads * d_v)`, present state
/// `(B, kv_heads, d_k, d_v)`; the update rule decides which of decay and
/// beta are given.
fn linear_attention(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let q_heads = ctx.attr("q_num_heads").and_then(|a| a.i).unwrap_or(0);
    let kv_heads = ctx.attr("kv_num_heads").and_then(|a| a.i).unwrap_or(0);
    for (name, v) in [("q_num_heads", q_heads), ("kv_num_heads", kv_heads)] {
        if v <= 0 {
            return Err(bad_attr(
                name,
                format!("'{name}' must be positive, it is {v}"),
            ));
        }
    }
    if q_heads % kv_heads != 0 {
        return Err(bad_attr(
            "q_num_heads",
            format!("'q_num_heads' ({q_heads}) must be a multiple of 'kv_num_heads' ({kv_heads})"),
        ));
    }
    let rule = ctx.own_str("update_rule").unwrap_or(b"gated_delta");
    let (needs_decay, needs_beta) = match rule {
        b"linear" => (false, false),
        b"gated" => (true, false),
        b"delta" => (false, true),
        b"gated_delta" => (true, true),
        _ => {
            return Err(bad_attr(
                "update_rule",
                format!(
                    "'update_rule' must be 'linear', 'gated', 'delta' or 'gated_delta', it is '{}'",
                    String::from_utf8_lossy(rule)
                ),
            ))
        }
    };
    let has_past = ctx.has_input(3);
    let has_decay = ctx.has_input(4);
    let has_beta = ctx.has_input(5);
    let rule_name = String::from_utf8_lossy(rule);
    for (given, needed, name) in [
        (has_decay, needs_decay, "decay"),
        (has_beta, needs_beta, "beta"),
    ] {
        if given != needed {
            return Err(failed(format!(
                "update_rule '{rule_name}' {} the input '{name}'",
                if needed { "needs" } else { "does not take" }
            )));
        }
    }

    ctx.propagate_elem(0, 0)?;
    if has_past && matches!(ctx.ty(3), Some(Type::Tensor(_))) {
        ctx.propagate_elem(3, 1)?;
    } else {
        ctx.propagate_elem(0, 1)?;
    }

    const B: usize = 0;
    const T: usize = 1;
    const QP: usize = 2;
    const KP: usize = 3;
    const VP: usize = 4;
    const HKV: usize = 5;
    const DK: usize = 6;
    const DV: usize = 7;
    const LAST: usize = 8;
    let mut d = [Dim::Unknown; 9];
    d[HKV] = Dim::Value(kv_heads);
    unify_input(ctx, 0, &mut d, &[B, T, QP])?;
    unify_input(ctx, 1, &mut d, &[B, T, KP])?;
    unify_input(ctx, 2, &mut d, &[B, T, VP])?;
    if has_past {
        unify_input(ctx, 3, &mut d, &[B, HKV, DK, DV])?;
    }
    for (given, i) in [(has_decay, 4), (has_beta, 5)] {
        if given {
            d[LAST] = Dim::Unknown;
            unify_input(ctx, i, &mut d, &[B, T, LAST])?;
        }
    }
    for (packed, heads, target, name) in [
        (QP, q_heads, DK, "query"),
        (KP, kv_heads, DK, "key"),
        (VP, kv_heads, DV, "value"),
    ] {
        if let Some(p) = d[packed].value() {
            if p % heads != 0 {
                return Err(bad_shapes(format!(
                    "the {name}'s last dim ({p}) must be a multiple of its head count ({heads})"
                )));
            }
            unify_value(
                &mut d[target],
                div(p, heads)?,
                &format!("the head size from the {name}"),
            )?;
        }
    }
    let last_dim = |i: usize| -> Option<i64> {
        ctx.shape(i)
            .filter(|s| s.len() == 3)
            .and_then(|s| s[2].value())
    };
    if has_decay {
        if let Some(last) = last_dim(4) {
            match d[DK].value() {
                Some(dk) => {
                    let per_key = mul(kv_heads, dk)?;
                    if last != kv_heads && last != per_key {
                        return Err(bad_shapes(format!(
                            "the decay's last dim ({last}) must be kv_num_heads ({kv_heads}) or kv_num_heads * d_k ({per_key})"
                        )));
                    }
                }
                None => {
                    if last != kv_heads && last % kv_heads != 0 {
                        return Err(bad_shapes(format!(
                            "the decay's last dim ({last}) must be a multiple of kv_num_heads ({kv_heads})"
                        )));
                    }
                }
            }
        }
    }
    if has_beta {
        if let Some(last) = last_dim(5) {
            if last != 1 && last != kv_heads {
                return Err(bad_shapes(format!(
                    "the beta's last dim ({last}) must be 1 or kv_num_heads ({kv_heads})"
                )));
            }
        }
    }
    let out_last = match d[DV].value() {
        Some(dv) => Dim::Value(mul(q_heads, dv)?),
        // With `symbolic`: q_heads times the state's width (`4*dv`).
        None => ctx
            .sym_mul(d[DV], Dim::Value(q_heads))
            .unwrap_or(Dim::Unknown),
    };
    ctx.set_shape(0, [d[B], d[T], out_last].into_iter().collect());
    ctx.set_shape(1, [d[B], d[HKV], d[DK], d[DV]].into_iter().collect());
    Ok(())
}

pub const OPS: &[Entry] = &[
    // Pooling.
    onnx("AveragePool", 1, 10, pool_plain),
    onnx("AveragePool", 11, 19, pool_dilated),
    onnx("AveragePool", 22, 22, pool_22),
    onnx("MaxPool", 1, 8, pool_plain),
    onnx("MaxPool", 10, 12, pool_dilated),
    onnx("MaxPool", 22, 22, pool_22),
    onnx("LpPool", 2, 11, pool_plain),
    onnx("LpPool", 18, 18, pool_dilated),
    onnx("LpPool", 22, 22, pool_22),
    onnx("GlobalAveragePool", 1, 22, global_pool),
    onnx("GlobalMaxPool", 1, 22, global_pool),
    onnx("GlobalLpPool", 2, 22, global_pool),
    onnx("MaxRoiPool", 1, 1, max_roi_pool_1),
    onnx("MaxRoiPool", 22, 22, max_roi_pool_22),
    onnx("MaxUnpool", 9, 22, max_unpool),
    // Convolutions.
    onnx("Conv", 1, 11, conv_old),
    onnx("Conv", 22, 22, conv_22),
    onnx("DeformConv", 19, 19, conv_old),
    onnx("DeformConv", 22, 22, conv_22),
    onnx("QLinearConv", 10, 10, qlinear_conv),
    onnx("ConvInteger", 10, 10, conv_integer),
    onnx("ConvTranspose", 1, 1, conv_transpose_1),
    onnx("ConvTranspose", 11, 22, conv_transpose_11),
    onnx("Col2Im", 18, 18, col2im),
    onnx("CausalConvWithState", 27, 27, causal_conv_with_state),
    // Normalizations.
    onnx("BatchNormalization", 6, 9, same_as_input),
    onnx("BatchNormalization", 14, 15, batch_norm),
    onnx("InstanceNormalization", 6, 22, same_as_input),
    onnx("LpNormalization", 1, 22, same_as_input),
    onnx("LRN", 1, 13, same_as_input),
    onnx("LayerNormalization", 17, 17, layer_norm),
    onnx("RMSNormalization", 23, 23, rms_norm),
    // Element-wise and reshaping.
    onnx("Dropout", 6, 7, same_as_input),
    onnx("Dropout", 10, 10, dropout_10),
    onnx("Dropout", 12, 22, dropout_12),
    onnx("Shrink", 9, 9, same_as_input),
    onnx("Flatten", 1, 9, flatten_1),
    onnx("Flatten", 11, 25, flatten_11),
    onnx("TfIdfVectorizer", 9, 9, tfidf_vectorizer),
    // Attention.
    onnx("RotaryEmbedding", 23, 23, rotary_embedding),
    onnx("Attention", 23, 24, attention_shapes),
    onnx("Attention", 25, 25, attention_25),
    onnx("LinearAttention", 27, 27, linear_attention),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim_arithmetic_follows_onnx() {
        let sym = crate::ir::types::Symbols::default().intern("N");
        let v = Dim::Value;
        assert_eq!(dims_product(&[]).ok(), Some(v(1)));
        assert_eq!(dims_product(&[v(2), v(3)]).ok(), Some(v(6)));
        assert_eq!(dims_product(&[sym, v(1)]).ok(), Some(sym));
        assert_eq!(dims_product(&[v(2), sym]).ok(), Some(Dim::Unknown));
        assert!(dims_product(&[v(1 << 40), v(1 << 40)]).is_err());
        assert_eq!(dim_times(sym, 1).ok(), Some(sym));
        assert_eq!(dim_times(sym, 2).ok(), Some(Dim::Unknown));
        assert_eq!(dim_div(v(7), 2).ok(), Some(v(3)));
        assert_eq!(div(-7, 2).ok(), Some(-3));
        assert!(div(1, 0).is_err());
        assert!(div(i64::MIN, -1).is_err());
        let mut d = sym;
        assert!(unify_value(&mut d, 4, "x").is_ok());
        assert_eq!(d, v(4));
        assert!(unify_value(&mut d, 5, "x").is_err());
    }
}
