//! Helpers shared by the operator rules: broadcasting, dim unification,
//! axes, attribute lists, type unions. Each returns the reason as text on
//! failure; the rule turns it into a defect with a code and a place.

use crate::diag::codes;
use crate::ir::types::{Dim, Dims, TensorType, Type};

use super::context::{defect, At, InferError, InferResult, NodeCtx};

/// A float converted to int64 as onnx's `static_cast<int64_t>` does on
/// x86-64, where its wheels run (`cvttsd2si`): truncated toward zero, and
/// NaN or a value outside i64's range gives i64::MIN (Rust's `as`
/// saturates instead, and gives 0 for NaN).
pub fn cast_i64(x: f64) -> i64 {
    // 2^63, exactly: i64 holds [-2^63, 2^63).
    const BOUND: f64 = 9_223_372_036_854_775_808.0;
    if (-BOUND..BOUND).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

/// Dims from a list of known values.
pub fn dims_of(values: &[i64]) -> Dims {
    values.iter().map(|&v| Dim::Value(v)).collect()
}

/// Numpy-style broadcasting of several shapes (onnx's
/// multidirectionalBroadcastShapeInference): a dim is the one value above 1
/// (two different ones conflict), else the one symbol (several different
/// ones give an unknown dim), else 1.
pub fn broadcast(shapes: &[&[Dim]]) -> Result<Dims, String> {
    // Equal shapes (most elementwise operators' inputs) broadcast to
    // themselves: a value, a symbol or an unknown dim met alone.
    if let Some((first, rest)) = shapes.split_first() {
        if rest.iter().all(|s| s == first) {
            return Ok(Dims::from_slice(first));
        }
    }
    broadcast_dims(shapes)
}

/// [`broadcast`] dim by dim.
fn broadcast_dims(shapes: &[&[Dim]]) -> Result<Dims, String> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = Dims::with_capacity(rank);
    for i in 0..rank {
        let mut value = 1i64;
        let mut symbolic: Option<Dim> = None;
        let mut symbols = 0;
        for s in shapes {
            let Some(j) = (i + s.len()).checked_sub(rank) else {
                continue;
            };
            match s[j] {
                Dim::Value(v) => {
                    if v != 1 {
                        if value != v && value != 1 {
                            return Err(format!(
                                "dimension {i} of the broadcast is {value} in one input and {v} in another"
                            ));
                        }
                        value = v;
                    }
                }
                d => {
                    if symbols == 0 {
                        symbolic = Some(d);
                        symbols = 1;
                    } else if Some(d) != symbolic {
                        symbols += 1;
                    }
                }
            }
        }
        out.push(if value != 1 || symbols == 0 {
            Dim::Value(value)
        } else if symbols == 1 {
            symbolic.unwrap_or(Dim::Unknown)
        } else {
            Dim::Unknown
        });
    }
    Ok(out)
}

/// Output 0 is the broadcast of the shapes of inputs `inputs`, when every
/// one of them has a known shape (onnx infers nothing otherwise), read as
/// onnx's `hasNInputShapes` then `tensor_type().shape()` read them.
pub fn broadcast_inputs(ctx: &mut NodeCtx<'_, '_>, inputs: std::ops::Range<usize>) -> InferResult {
    broadcast_of(ctx, inputs, true)
}

/// [`broadcast_inputs`] for onnx's variadic rules (Sum, Max, Min, Mean),
/// which stop at an input that is not a tensor with a shape.
pub fn broadcast_tensor_inputs(
    ctx: &mut NodeCtx<'_, '_>,
    inputs: std::ops::Range<usize>,
) -> InferResult {
    broadcast_of(ctx, inputs, false)
}

fn broadcast_of(
    ctx: &mut NodeCtx<'_, '_>,
    inputs: std::ops::Range<usize>,
    containers_as_scalars: bool,
) -> InferResult {
    let mut shapes: smallvec::SmallVec<[&[Dim]; 4]> = smallvec::SmallVec::new();
    let mut container = false;
    for i in inputs {
        // onnx reads these shapes as `tensor_type().shape()` after
        // `hasNInputShapes`, not by getInputShape: a sequence or optional
        // of a shaped tensor reads as a scalar (`NodeCtx::shape`; where
        // onnx hides the node's errors, else its type check refuses it
        // first), which can still fail the broadcast of the others.
        let shape = match ctx.ty(i) {
            Some(Type::Tensor(t)) => t.shape.as_deref(),
            Some(t) if containers_as_scalars => {
                container |= !matches!(t, Type::SparseTensor(_));
                ctx.shape(i)
            }
            _ => None,
        };
        let Some(s) = shape else {
            return Ok(());
        };
        shapes.push(s);
    }
    let dims = broadcast(&shapes).map_err(|e| {
        let shown: Vec<String> = shapes.iter().map(|s| ctx.show_dims(s)).collect();
        defect(
            codes::INCOMPATIBLE_SHAPES,
            At::Node,
            format!(
                "the input shapes {} do not broadcast: {e}",
                shown.join(", ")
            ),
        )
    })?;
    // (onnx writes the shape into an output its element propagation made a
    // container; the type check then refuses the container input.)
    if !container {
        ctx.set_shape(0, dims);
    }
    Ok(())
}

/// onnx's unifyDim(source, target): a source value fills or must equal the
/// target's; a source symbol fills an empty target.
pub fn unify(source: Dim, target: &mut Dim) -> Result<(), String> {
    match (source, *target) {
        (Dim::Value(a), Dim::Value(b)) if a != b => {
            Err(format!("dimension mismatch: {a} against {b}"))
        }
        (Dim::Value(_), _) => {
            *target = source;
            Ok(())
        }
        (Dim::Sym(_), Dim::Unknown) => {
            *target = source;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// An axis in `[-rank, rank)` made non-negative, or why not.
pub fn axis(value: i64, rank: usize) -> Result<usize, String> {
    let r = i64::try_from(rank).unwrap_or(i64::MAX);
    if value < -r || value >= r {
        return Err(format!(
            "axis {value} is out of range for rank {rank} (expected [{}, {}))",
            -r, r
        ));
    }
    Ok(if value < 0 { value + r } else { value } as usize)
}

/// As [`axis`], as a defect about attribute `name`.
pub fn attr_axis(value: i64, rank: usize, name: &str) -> InferResult<usize> {
    axis(value, rank).map_err(|e| defect(codes::BAD_ATTRIBUTE, At::Attribute(name.to_string()), e))
}

/// Axes in range, made non-negative, each at most once.
pub fn axes(values: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(values.len());
    for &v in values {
        let a = axis(v, rank)?;
        if seen[a] {
            return Err(format!("axis {v} is given more than once"));
        }
        seen[a] = true;
        out.push(a);
    }
    Ok(out)
}

/// A failure as an attribute defect.
pub fn bad_attr(name: &str, message: impl Into<String>) -> InferError {
    defect(
        codes::BAD_ATTRIBUTE,
        At::Attribute(name.to_string()),
        message,
    )
}

/// A failure about the shapes of the inputs.
pub fn bad_shapes(message: impl Into<String>) -> InferError {
    defect(codes::INCOMPATIBLE_SHAPES, At::Node, message)
}

/// A failure about the rank of input `i`.
pub fn bad_rank(i: usize, message: impl Into<String>) -> InferError {
    defect(codes::BAD_INPUT_RANK, At::Input(i), message)
}

/// A failure about the value of constant input `i`.
pub fn bad_const(i: usize, message: impl Into<String>) -> InferError {
    defect(codes::BAD_CONSTANT_INPUT, At::Input(i), message)
}

/// A failure onnx raises outside its per-node error collection (a runtime
/// error, an index out of range): an earlier unknown operator does not
/// hide it.
pub fn fatal_failure(message: impl Into<String>) -> InferError {
    super::context::fatal(codes::INFERENCE_FAILED, At::Node, message)
}

/// Any other inference failure.
pub fn failed(message: impl Into<String>) -> InferError {
    defect(codes::INFERENCE_FAILED, At::Node, message)
}

/// Input `i` must have rank `expected` when its rank is known (onnx's
/// checkInputRank).
pub fn check_rank(ctx: &NodeCtx<'_, '_>, i: usize, expected: usize) -> InferResult {
    match ctx.rank(i) {
        Some(r) if r != expected => Err(bad_rank(
            i,
            format!("input {i} must have rank {expected}, it has rank {r}"),
        )),
        _ => Ok(()),
    }
}

/// The union of two shapes (onnx's UnionShapeInfo): equal dims stay,
/// different ones become unknown; different ranks give no shape.
pub fn union_dims(a: &[Dim], b: &[Dim]) -> Option<Dims> {
    if a.len() != b.len() {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .map(|(x, y)| match (x, y) {
                (Dim::Value(p), Dim::Value(q)) if p == q => *x,
                (Dim::Sym(p), Dim::Sym(q)) if p == q => *x,
                _ => Dim::Unknown,
            })
            .collect(),
    )
}

/// The union of two types of the same kind (onnx's UnionTypeInfo): element
/// types must agree; shapes are united. `Err` with the reason otherwise.
pub fn union_type(source: &Type, target: &mut Type) -> Result<(), String> {
    fn tensors(s: &TensorType, t: &mut TensorType, what: &str) -> Result<(), String> {
        if s.elem != t.elem {
            return Err(format!(
                "{what} element types differ: {} and {}",
                crate::ir::types::elem_name(s.elem).unwrap_or("?"),
                crate::ir::types::elem_name(t.elem).unwrap_or("?")
            ));
        }
        t.shape = match (&s.shape, &t.shape) {
            (Some(a), Some(b)) => union_dims(a, b),
            _ => None,
        };
        Ok(())
    }
    match (source, target) {
        (Type::Tensor(s), Type::Tensor(t)) => tensors(s, t, "tensor"),
        (Type::SparseTensor(s), Type::SparseTensor(t)) => tensors(s, t, "sparse tensor"),
        (Type::Sequence(s), Type::Sequence(t)) | (Type::Optional(s), Type::Optional(t)) => {
            match (s, t) {
                (Some(s), Some(t)) => union_type(s, t),
                (_, t) => {
                    *t = None;
                    Ok(())
                }
            }
        }
        (Type::Map(ks, vs), Type::Map(kt, vt)) => {
            if ks != kt {
                return Err("map key types differ".into());
            }
            match (vs, vt) {
                (Some(s), Some(t)) => union_type(s, t),
                (_, t) => {
                    *t = None;
                    Ok(())
                }
            }
        }
        (s, t) => Err(format!(
            "types of different kinds: {} and {}",
            s.kind_name(),
            t.kind_name()
        )),
    }
}

/// A product of dims: the value when every dim is known.
pub fn product(dims: &[Dim]) -> Option<i64> {
    dims.iter()
        .try_fold(1i64, |acc, d| acc.checked_mul(d.value()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_shapes_broadcast_as_dim_by_dim() {
        let mut symbols = crate::ir::types::Symbols::default();
        let (n, m) = (symbols.intern("N"), symbols.intern("M"));
        let dims = [
            Dim::Value(1),
            Dim::Value(3),
            Dim::Value(0),
            n,
            m,
            Dim::Unknown,
        ];
        // Every shape of rank 0-2 over these dims, alone, twice and three
        // times: the shortcut gives what the general rule gives.
        let mut shapes: Vec<Vec<Dim>> = vec![vec![]];
        for &a in &dims {
            shapes.push(vec![a]);
            for &b in &dims {
                shapes.push(vec![a, b]);
            }
        }
        for s in &shapes {
            for k in 1..=3 {
                let same: Vec<&[Dim]> = (0..k).map(|_| s.as_slice()).collect();
                assert_eq!(broadcast(&same), broadcast_dims(&same), "{s:?} x{k}");
            }
        }
        // Different shapes still take the general rule.
        let (a, b) = (
            [Dim::Value(1), Dim::Value(3)],
            [Dim::Value(2), Dim::Value(1)],
        );
        assert_eq!(
            broadcast(&[&a, &b]).map(|d| d.to_vec()),
            Ok(vec![Dim::Value(2), Dim::Value(3)])
        );
    }

    #[test]
    fn fatal_failures_are_not_hidden() {
        assert!(matches!(
            fatal_failure("x"),
            InferError::Defect(d) if d.reach == crate::infer::context::Reach::Node && d.code == codes::INFERENCE_FAILED
        ));
    }

    #[test]
    fn broadcasting_follows_onnx() {
        let v = Dim::Value;
        let n = crate::ir::types::Symbols::default().intern("N");
        assert_eq!(
            broadcast(&[&[v(2), v(1)], &[v(3)]]).as_deref(),
            Ok(&[v(2), v(3)][..])
        );
        assert!(broadcast(&[&[v(2)], &[v(3)]]).is_err());
        assert_eq!(broadcast(&[&[n], &[v(1)]]).as_deref(), Ok(&[n][..]));
        assert_eq!(broadcast(&[&[n], &[v(4)]]).as_deref(), Ok(&[v(4)][..]));
        assert_eq!(
            broadcast(&[&[n], &[Dim::Unknown]]).as_deref(),
            Ok(&[Dim::Unknown][..])
        );
        assert_eq!(broadcast(&[&[], &[v(5)]]).as_deref(), Ok(&[v(5)][..]));
        assert_eq!(axis(-1, 3), Ok(2));
        assert!(axis(3, 3).is_err());
        assert!(axes(&[0, -3], 3).is_err());
    }
}
