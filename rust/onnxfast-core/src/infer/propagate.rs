//! Data propagation (onnx's `infer_shapes(..., data_prop=True)`): the
//! values of small integer tensors that describe shapes are followed
//! through the nodes that compute them (`Shape`, `Gather`, `Concat`, ...),
//! so that `Reshape`, `Expand`, `ConstantOfShape`, `Resize` and
//! `AffineGrid` read a target shape that is computed in the graph.
//!
//! A value's data is a list of dims, flattened in row-major order: a known
//! number, a symbol (a `dim_param` of the model, or a fresh one) or
//! unknown, exactly what onnx keeps (a `TensorShapeProto` per value).
//!
//! The steps follow onnx 1.23's data-propagation functions
//! (`onnx/defs/data_propagators.h`, the `PartialDataPropagationFunction`s of
//! `tensor/defs.cc` and `math/defs.cc`), for the schemas that have one:
//! Add, Sub, Mul (14+), Cast (13+), Concat (13+), Gather (all), Shape (all),
//! Size (13+), Slice (13+), Squeeze and Unsqueeze (13+). Beyond onnx
//! ([`Step::Beyond`]), for the same operators at older versions and for
//! Div, Mod, Neg, Identity, Reshape, Range, ConstantOfShape, Equal,
//! Where, Floor, Ceil, Round, Min, Max, Clip, ReduceSum, ReduceProd,
//! ReduceMax and ReduceMin (of 1-D values), and float constants of whole numbers,
//! where onnx gives up; and where onnx's
//! step would be wrong, it is not taken (see [`propagate`]).

use crate::ir::types::{Dim, Dims, Symbols, Type};

use super::context::Attrs;

/// Longest data kept for one value: shape values are a handful of dims;
/// a longer value (an embedding table's indices) is not followed.
pub const MAX_DATA: usize = 1024;

/// Values kept at most in one inference run (16 bytes each): past this,
/// later values are not followed (their consumers get what they would
/// without `data_prop`).
pub const MAX_DATA_TOTAL: usize = 1 << 22;

/// Whether (and how) an operator's schema propagates data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// onnx has a data-propagation function for this schema.
    Onnx,
    /// onnx has none; onnxfast follows the values anyway.
    Beyond,
}

/// The data-propagation step of an ai.onnx schema (by operator and the
/// schema's `since_version`), `None` when values are not followed.
pub fn step(op: &str, since: i64) -> Option<Step> {
    let onnx = match op {
        "Add" | "Sub" | "Mul" => since >= 14,
        "Cast" | "Concat" | "Size" | "Slice" | "Squeeze" | "Unsqueeze" => since >= 13,
        "Gather" | "Shape" => true,
        "Div" | "Mod" | "Identity" | "Reshape" | "Range" | "ConstantOfShape" | "Equal"
        | "Where" | "Floor" | "Ceil" | "Round" | "Neg" | "Min" | "Max" | "Clip" | "ReduceSum"
        | "ReduceProd" | "ReduceMax" | "ReduceMin" => false,
        _ => return None,
    };
    if onnx {
        return Some(Step::Onnx);
    }
    // Older versions whose inputs mean the same values (Slice-1 takes its
    // bounds as attributes, Cast-1 its target as a string: not followed).
    let beyond = match op {
        "Slice" => since >= 10,
        "Cast" => since >= 6,
        // Clip's bounds are inputs from 11 on (attributes of floats before).
        "Clip" => since >= 11,
        _ => true,
    };
    beyond.then_some(Step::Beyond)
}

/// What a step sees of the node.
pub struct Node<'a, 'm> {
    pub op: &'a str,
    pub since: i64,
    pub(crate) attrs: &'a Attrs<'a, 'm>,
    /// The input types (`None`: absent, untyped or unknown).
    pub types: &'a [Option<&'a Type>],
    /// Which inputs are given (a name that is not empty).
    pub given: &'a [bool],
    /// Element type of output 0, when known.
    pub out_elem: Option<i32>,
}

impl Node<'_, '_> {
    fn int_attr(&self, name: &str) -> Option<i64> {
        self.attrs.get(name).map(|a| a.i.unwrap_or(0))
    }

    fn shape(&self, i: usize) -> Option<&[Dim]> {
        match self.types.get(i).copied().flatten() {
            Some(Type::Tensor(t)) => t.shape.as_deref(),
            _ => None,
        }
    }
}

/// A failure onnx reports for the node (its data-propagation function
/// throws; the node's output types stay).
pub type Failure = String;

/// The data of output 0, from the data of the inputs (`data(i)`, read on
/// demand as onnx's `getInputData`: another step's result, a small integer
/// constant, or as many unknown dims as a 1-D input's static length).
///
/// Where onnx's step would give values that are not the tensor's (Gather,
/// Slice or arithmetic over a tensor of rank 2 or more, a Slice bound that
/// is not known, read by onnx as 0), no data is given.
///
/// With `symbols` (inference with `symbolic`), arithmetic on dims that are
/// not values gives expressions (`12*batch`, `seq + 1`).
pub fn propagate(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
    symbols: Option<&mut Symbols>,
) -> Result<Option<Dims>, Failure> {
    match node.op {
        "Add" | "Sub" | "Mul" | "Div" | "Mod" => arithmetic(node, data, symbols),
        "Cast" | "Squeeze" | "Unsqueeze" | "Identity" | "Reshape" => Ok(data(0)),
        // Data holds whole numbers: rounding keeps them.
        "Floor" | "Ceil" | "Round" => Ok(data(0)),
        "Neg" => Ok(negated(data(0), symbols)),
        "Shape" => Ok(shape(node)),
        "Size" => Ok(size(node, data)),
        "Concat" => concat(node, data),
        "Gather" => gather(node, data),
        "Slice" => slice(node, data),
        "Range" => Ok(range(data)),
        "ConstantOfShape" => Ok(constant_of_shape(node, data)),
        "Equal" => Ok(equal(node, data, symbols.as_deref())),
        "Min" | "Max" => Ok(extremes(node, data, symbols)),
        "Clip" => Ok(clip(node, data, symbols)),
        "ReduceSum" | "ReduceProd" | "ReduceMax" | "ReduceMin" => Ok(reduce(node, data, symbols)),
        "Where" => Ok(where_(node, data)),
        _ => Ok(None),
    }
}

/// Add, Sub, Mul (onnx's MathOpDataPropagator), Div and Mod: element by
/// element, one side broadcast when it has one value.
fn arithmetic(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
    mut symbols: Option<&mut Symbols>,
) -> Result<Option<Dims>, Failure> {
    let op = node.op;
    if matches!(op, "Div" | "Mod") && !node.out_elem.is_some_and(is_integer) {
        // Integer division of shape values only.
        return Ok(None);
    }
    let exact = node.out_elem.and_then(float_exact);
    // Mod's remainder takes the divisor's sign, or with `fmod` the dividend's.
    let fmod = op == "Mod" && node.int_attr("fmod").is_some_and(|f| f != 0);
    // onnx reads both inputs (a constant it cannot parse fails the step).
    let (a, b) = (data(0), data(1));
    if beyond_1d(node, 0) || beyond_1d(node, 1) {
        // Element-wise on flattened values is only right for 1-D operands.
        return Ok(None);
    }
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(None);
    };
    let (n, m) = (a.len(), b.len());
    if n != m && n != 1 && m != 1 {
        return Err(format!(
            "data propagation: the values of the inputs cannot broadcast: {n} against {m} \
             elements in {op}"
        ));
    }
    let len = if n == 1 { m } else { n };
    let mut out = Dims::with_capacity(len);
    for i in 0..len {
        let (x, y) = (broadcast_at(&a, i), broadcast_at(&b, i));
        let v = match (x, y) {
            (Dim::Value(x), Dim::Value(y)) => {
                let r = match op {
                    "Add" => x.checked_add(y),
                    "Sub" => x.checked_sub(y),
                    "Mul" => x.checked_mul(y),
                    // Truncating division; by zero: unknown.
                    _ if y == 0 => {
                        out.push(Dim::Unknown);
                        continue;
                    }
                    "Mod" if fmod => x.checked_rem(y),
                    "Mod" => x.checked_rem(y).map(|r| {
                        if r != 0 && (r < 0) != (y < 0) {
                            r + y
                        } else {
                            r
                        }
                    }),
                    _ => x.checked_div(y),
                };
                match r {
                    Some(r) => within(r, exact),
                    None => {
                        return Err(format!(
                            "data propagation: {op} of the values {x} and {y} overflows int64"
                        ))
                    }
                }
            }
            _ => symbols
                .as_deref_mut()
                .and_then(|s| match op {
                    "Add" => s.dim_add(x, y),
                    "Sub" => s.dim_sub(x, y),
                    "Mul" => s.dim_mul(x, y),
                    // x mod d = x - d*floor(x/d) for d > 0 (the divisor's
                    // sign), a constant or a size.
                    "Mod" if fmod => None,
                    "Mod" => {
                        let q = s.dim_floor_div_by(x, y)?;
                        let dq = s.dim_mul(q, y)?;
                        s.dim_sub(x, dq)
                    }
                    // Truncation is floor for the non-negative sizes of shapes
                    // (`S*M / B`: `floor((S*M)/B)`; `floor_div_by` takes a
                    // positive constant or sizes only).
                    _ => s.dim_floor_div_by(x, y),
                })
                .unwrap_or(Dim::Unknown),
        };
        out.push(v);
    }
    Ok(Some(out))
}

/// Min and Max of any number of inputs, element by element (the ones of
/// a single value broadcast): known values compared, dims with
/// `symbols` as expressions (`min(seq, 512)`, see `Symbols::dim_min`),
/// without them a dim against itself.
fn extremes(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
    mut symbols: Option<&mut Symbols>,
) -> Option<Dims> {
    let larger = node.op == "Max";
    let n = node.given.len();
    if n == 0 || node.given.contains(&false) || (0..n).any(|i| beyond_1d(node, i)) {
        return None;
    }
    let inputs: Vec<Dims> = (0..n).map(&mut *data).collect::<Option<_>>()?;
    let lens: Vec<usize> = inputs.iter().map(|d| d.len()).collect();
    let len = broadcast_len(&lens)?;
    let mut out = Dims::with_capacity(len);
    for i in 0..len {
        let mut at = inputs.iter().map(|d| broadcast_at(d, i));
        let first = at.next().unwrap_or(Dim::Unknown);
        let v = at.try_fold(first, |x, y| extreme(x, y, larger, symbols.as_deref_mut()));
        out.push(v.unwrap_or(Dim::Unknown));
    }
    Some(out)
}

/// `min(x, y)`, or `max(x, y)` when `larger`; `None`: unknown.
fn extreme(x: Dim, y: Dim, larger: bool, symbols: Option<&mut Symbols>) -> Option<Dim> {
    match (x, y) {
        (Dim::Value(a), Dim::Value(b)) => {
            Some(Dim::Value(if larger { a.max(b) } else { a.min(b) }))
        }
        _ if x == y && x.is_known() => Some(x),
        _ => {
            let s = symbols?;
            if larger {
                s.dim_max(x, y)
            } else {
                s.dim_min(x, y)
            }
        }
    }
}

/// Clip (11+) of data by its `min` and `max` inputs (each optional, a
/// single value): `min(max(x, lo), hi)` element by element.
fn clip(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
    mut symbols: Option<&mut Symbols>,
) -> Option<Dims> {
    if beyond_1d(node, 0) {
        return None;
    }
    let values = data(0)?;
    // A bound given but without a value: unknown.
    let mut bound = |i: usize| -> Option<Option<Dim>> {
        if !node.given.get(i).copied().unwrap_or(false) {
            return Some(None);
        }
        match data(i)?.as_slice() {
            [one] => Some(Some(*one)),
            _ => None,
        }
    };
    let (lo, hi) = (bound(1)?, bound(2)?);
    let mut out = Dims::with_capacity(values.len());
    for &x in &values {
        let mut v = Some(x);
        if let Some(lo) = lo {
            v = v.and_then(|x| extreme(x, lo, true, symbols.as_deref_mut()));
        }
        if let Some(hi) = hi {
            v = v.and_then(|x| extreme(x, hi, false, symbols.as_deref_mut()));
        }
        out.push(v.unwrap_or(Dim::Unknown));
    }
    Some(out)
}

/// ReduceSum, ReduceProd, ReduceMax and ReduceMin of a value of rank 0
/// or 1, over all of it (the one axis, or none given): the data's sum,
/// product, largest or smallest element, expressions with `symbols`
/// (`C*H*W` for the product of a shape's last three). `noop_with_empty_axes`
/// with no axes keeps the data; an empty value's max or min is not taken.
fn reduce(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
    mut symbols: Option<&mut Symbols>,
) -> Option<Dims> {
    let rank = node.shape(0)?.len();
    if rank > 1 {
        return None;
    }
    // Axes: an input from ReduceSum 13 and the others' 18, else an attribute.
    let from_input = node.since >= if node.op == "ReduceSum" { 13 } else { 18 };
    let axes: Vec<i64> = if from_input {
        match node.given.get(1).copied().unwrap_or(false) {
            true => data(1)?
                .iter()
                .map(|d| match d {
                    Dim::Value(v) => Some(*v),
                    _ => None,
                })
                .collect::<Option<_>>()?,
            false => Vec::new(),
        }
    } else {
        node.attrs
            .get("axes")
            .map(|a| a.ints.clone())
            .unwrap_or_default()
    };
    let values = data(0)?;
    if axes.is_empty()
        && node
            .int_attr("noop_with_empty_axes")
            .is_some_and(|v| v != 0)
    {
        return Some(values);
    }
    if !axes.iter().all(|&a| rank == 1 && (a == 0 || a == -1)) {
        return None;
    }
    let op = node.op;
    let mut at = values.iter().copied();
    let first = match at.next() {
        Some(d) => d,
        None => match op {
            "ReduceSum" => Dim::Value(0),
            "ReduceProd" => Dim::Value(1),
            _ => return None,
        },
    };
    let folded = at.try_fold(first, |x, y| match op {
        "ReduceMax" => extreme(x, y, true, symbols.as_deref_mut()),
        "ReduceMin" => extreme(x, y, false, symbols.as_deref_mut()),
        _ => match (x, y) {
            (Dim::Value(a), Dim::Value(b)) if op == "ReduceSum" => a.checked_add(b).map(Dim::Value),
            (Dim::Value(a), Dim::Value(b)) => a.checked_mul(b).map(Dim::Value),
            _ => {
                let s = symbols.as_deref_mut()?;
                match op {
                    "ReduceSum" => s.dim_add(x, y),
                    _ => s.dim_mul(x, y),
                }
            }
        },
    });
    let v = match folded {
        Some(Dim::Value(v)) => within(v, node.out_elem.and_then(float_exact)),
        Some(d) => d,
        None => Dim::Unknown,
    };
    Some([v].into_iter().collect())
}

/// Whole numbers of float values, as data (beyond onnx, which reads
/// integer constants only); `None` when one is not (`0.5`), or not exact.
pub fn whole_numbers(values: &[f64]) -> Option<Vec<i64>> {
    const EXACT: f64 = (1u64 << 53) as f64;
    values
        .iter()
        .map(|&v| (v.fract() == 0.0 && v.abs() <= EXACT).then_some(v as i64))
        .collect()
}

/// `v` as a dim, unknown past `exact` (a float result beyond its type's
/// whole numbers is not exact; `None`: an integer type).
fn within(v: i64, exact: Option<i64>) -> Dim {
    match exact {
        Some(e) if v.unsigned_abs() > e.unsigned_abs() => Dim::Unknown,
        _ => Dim::Value(v),
    }
}

/// The largest magnitude up to which every whole number is exact in a
/// float element type (`None`: not a float type).
fn float_exact(elem: i32) -> Option<i64> {
    match elem {
        1 => Some(1 << 24),
        10 => Some(1 << 11),
        16 => Some(1 << 8),
        11 => Some(1 << 53),
        _ => None,
    }
}

fn is_integer(elem: i32) -> bool {
    matches!(elem, 2..=7 | 12 | 13)
}

/// Shape: the input's dims, `start` to `end` (version 15 on).
fn shape(node: &Node<'_, '_>) -> Option<Dims> {
    let dims = node.shape(0)?;
    let rank = i64::try_from(dims.len()).ok()?;
    let clamp = |v: i64| {
        let v = if v < 0 { v.saturating_add(rank) } else { v };
        v.clamp(0, rank)
    };
    let (start, end) = if node.since >= 15 {
        (
            clamp(node.int_attr("start").unwrap_or(0)),
            clamp(node.int_attr("end").unwrap_or(rank)),
        )
    } else {
        (0, rank)
    };
    let (start, end) = (usize::try_from(start).ok()?, usize::try_from(end).ok()?);
    // A declared negative dim (Paddle2ONNX's -1 for a dynamic one) is no
    // size: the runtime's value is the array's, so it is unknown here.
    let size = |d: &Dim| match d {
        Dim::Value(v) if *v < 0 => Dim::Unknown,
        d => *d,
    };
    Some(dims.get(start..end.max(start))?.iter().map(size).collect())
}

/// Size: onnx gives the length of the input's data (its element count
/// when the input is 1-D); beyond onnx, the product of a static shape.
fn size(node: &Node<'_, '_>, data: &mut dyn FnMut(usize) -> Option<Dims>) -> Option<Dims> {
    if let Some(d) = data(0) {
        return Some(Dims::from_elem(Dim::Value(d.len() as i64), 1));
    }
    let dims = node.shape(0)?;
    let mut n = 1i64;
    for d in dims {
        n = n.checked_mul(d.value().filter(|v| *v >= 0)?)?;
    }
    Some(Dims::from_elem(Dim::Value(n), 1))
}

/// True when the `axis` attribute names axis 0 of input 0 (onnx's
/// axisIsZero); a missing attribute is axis 0 when `default_zero`.
fn axis_is_zero(node: &Node<'_, '_>, default_zero: bool) -> Result<bool, Failure> {
    let Some(axis) = node.int_attr("axis") else {
        if default_zero {
            return Ok(true);
        }
        return Err("data propagation: the required attribute 'axis' is missing".into());
    };
    if axis >= 0 {
        return Ok(axis == 0);
    }
    let Some(dims) = node.shape(0) else {
        return Ok(false);
    };
    let rank = dims.len() as i64;
    if axis < -rank {
        return Err(format!(
            "data propagation: axis {axis} is out of range for rank {rank}"
        ));
    }
    Ok(axis + rank == 0)
}

/// Concat along axis 0: the inputs' data one after the other.
fn concat(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
) -> Result<Option<Dims>, Failure> {
    if !axis_is_zero(node, false)? {
        return Ok(None);
    }
    let mut out = Dims::new();
    for i in 0..node.types.len() {
        let Some(d) = data(i) else {
            return Ok(None);
        };
        if out.len() + d.len() > MAX_DATA {
            return Ok(None);
        }
        out.extend(d);
    }
    Ok((!out.is_empty()).then_some(out))
}

/// True when input `i` is known to have rank 2 or more (its data is then
/// not a list onnx's steps index correctly).
fn beyond_1d(node: &Node<'_, '_>, i: usize) -> bool {
    node.shape(i).is_some_and(|s| s.len() > 1)
}

/// Gather along axis 0 of 1-D data, with known indices.
fn gather(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
) -> Result<Option<Dims>, Failure> {
    if !axis_is_zero(node, true)? {
        return Ok(None);
    }
    // onnx reads the indices only when it has the data.
    let Some(values) = data(0) else {
        return Ok(None);
    };
    let Some(indices) = data(1) else {
        return Ok(None);
    };
    if beyond_1d(node, 0) {
        return Ok(None);
    }
    let n = values.len() as i64;
    let mut out = Dims::with_capacity(indices.len());
    for ix in indices {
        let Dim::Value(k) = ix else {
            return Ok(None);
        };
        if k < -n || k >= n {
            return Err(format!(
                "data propagation: index {k} is out of range for the {n} values of input 0 \
                 (indices must be in [-{n}, {}])",
                n - 1
            ));
        }
        let k = if k < 0 { k + n } else { k };
        out.push(values[usize::try_from(k).unwrap_or(0)]);
    }
    Ok((!out.is_empty()).then_some(out))
}

/// One known integer of an input's data of length one.
fn single(d: Option<Dims>) -> Option<Option<i64>> {
    match d.as_deref() {
        Some([Dim::Value(v)]) => Some(Some(*v)),
        Some([_]) => Some(None),
        _ => None,
    }
}

/// Slice of 1-D data along axis 0 with one known start, end and step.
fn slice(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
) -> Result<Option<Dims>, Failure> {
    let n_inputs = node.types.len();
    // onnx reads the data, starts and ends, then axes and steps: an
    // unknown axes or steps stops it before it looks at the first three.
    let (values, starts, ends) = (data(0), data(1), data(2));
    let axes = if n_inputs >= 4 {
        match data(3) {
            Some(a) => Some(a),
            None => return Ok(None),
        }
    } else {
        None
    };
    let steps = if n_inputs >= 5 {
        match data(4) {
            Some(s) => Some(s),
            None => return Ok(None),
        }
    } else {
        None
    };
    let (Some(values), Some(starts), Some(ends)) = (values, starts, ends) else {
        return Ok(None);
    };
    if starts.len() != ends.len() {
        return Err(format!(
            "data propagation: Slice has {} starts and {} ends",
            starts.len(),
            ends.len()
        ));
    }
    if beyond_1d(node, 0) {
        return Ok(None);
    }
    match axes.as_deref() {
        None | Some([Dim::Value(0)]) => {}
        // Axis -1 of 1-D data is axis 0 (onnx stops there).
        Some([Dim::Value(-1)]) if node.shape(0).is_some_and(|s| s.len() == 1) => {}
        Some(_) => return Ok(None),
    }
    let (Some(Some(mut start)), Some(Some(mut end))) = (single(Some(starts)), single(Some(ends)))
    else {
        return Ok(None);
    };
    let step = match steps {
        None => 1,
        Some(s) => match single(Some(s)) {
            Some(Some(v)) => v,
            _ => return Ok(None),
        },
    };
    if step == 0 {
        return Err("data propagation: Slice's step cannot be 0".into());
    }
    let n = values.len() as i64;
    if n == 0 {
        return Ok(None);
    }
    // onnx's processSliceInputs.
    if start < 0 {
        start = start.saturating_add(n);
    }
    start = if step < 0 {
        start.clamp(0, n - 1)
    } else {
        start.clamp(0, n)
    };
    if end < 0 {
        end = end.saturating_add(n);
    }
    end = if step < 0 {
        end.clamp(-1, n - 1)
    } else {
        end.clamp(0, n)
    };
    let mut out = Dims::new();
    let mut i = start;
    while (step > 0 && i < end) || (step < 0 && i > end) {
        out.push(values[usize::try_from(i).unwrap_or(0)]);
        i = match i.checked_add(step) {
            Some(i) => i,
            None => break,
        };
    }
    Ok((!out.is_empty()).then_some(out))
}

/// The element `i` of data broadcast to `len` (one value: that value).
fn broadcast_at(d: &[Dim], i: usize) -> Dim {
    match d {
        [one] => *one,
        _ => d.get(i).copied().unwrap_or(Dim::Unknown),
    }
}

/// The common length of data that broadcast element by element (lengths
/// equal, or 1); `None` otherwise.
fn broadcast_len(lens: &[usize]) -> Option<usize> {
    let len = lens.iter().copied().max()?;
    lens.iter().all(|&n| n == len || n == 1).then_some(len)
}

/// Neg of data (beyond onnx): values negated, symbols too with `symbols`
/// (`-seq`), unknown otherwise (and for `i64::MIN`).
fn negated(data: Option<Dims>, mut symbols: Option<&mut Symbols>) -> Option<Dims> {
    let out = data?.into_iter().map(|d| match d {
        Dim::Value(v) => v.checked_neg().map_or(Dim::Unknown, Dim::Value),
        Dim::Sym(_) => symbols
            .as_deref_mut()
            .and_then(|s| s.dim_sub(Dim::Value(0), d))
            .unwrap_or(Dim::Unknown),
        Dim::Unknown => Dim::Unknown,
    });
    Some(out.collect())
}

/// ConstantOfShape of a 1-D shape of known length, filled with an integer
/// value (beyond onnx): the `ones` of `torch.expand`'s export.
fn constant_of_shape(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
) -> Option<Dims> {
    if !node.out_elem.is_some_and(is_integer) {
        return None;
    }
    let n = single(data(0))??;
    let n = usize::try_from(n).ok().filter(|&n| n <= MAX_DATA)?;
    let t = node.attrs.get("value")?.t()?;
    let value = super::constant::ints(
        &super::constant::Const::Tensor(crate::ir::view::TensorRef::Decoded(t)),
        None,
    )
    .ok()?;
    let [v] = value.as_slice() else {
        return None;
    };
    Some(std::iter::repeat_n(Dim::Value(*v), n).collect())
}

/// Equal of 1-D integer data (beyond onnx), as 1 and 0: values compare;
/// a symbol equals itself; a size (a symbol, or with `symbols` an
/// expression whose terms are positive) differs from a negative value,
/// as `torch.expand`'s export asks of `-1`; anything else is unknown.
fn equal(
    node: &Node<'_, '_>,
    data: &mut dyn FnMut(usize) -> Option<Dims>,
    symbols: Option<&Symbols>,
) -> Option<Dims> {
    if beyond_1d(node, 0) || beyond_1d(node, 1) {
        return None;
    }
    let (a, b) = (data(0)?, data(1)?);
    let len = broadcast_len(&[a.len(), b.len()])?;
    let size = |d: Dim| match symbols {
        Some(s) => s.dim_sign(d) == Some(true),
        None => matches!(d, Dim::Sym(_)),
    };
    let out = (0..len).map(|i| match (broadcast_at(&a, i), broadcast_at(&b, i)) {
        (Dim::Value(x), Dim::Value(y)) => Dim::Value(i64::from(x == y)),
        (Dim::Sym(x), Dim::Sym(y)) if x == y => Dim::Value(1),
        (s @ Dim::Sym(_), Dim::Value(v)) | (Dim::Value(v), s @ Dim::Sym(_)) if v < 0 && size(s) => {
            Dim::Value(0)
        }
        _ => Dim::Unknown,
    });
    Some(out.collect())
}

/// Where of 1-D data (beyond onnx): each element from input 1 where the
/// condition's is known true, from input 2 where known false, and where it
/// is unknown only if both agree.
fn where_(node: &Node<'_, '_>, data: &mut dyn FnMut(usize) -> Option<Dims>) -> Option<Dims> {
    if (0..3).any(|i| beyond_1d(node, i)) {
        return None;
    }
    let (c, x, y) = (data(0)?, data(1)?, data(2)?);
    let len = broadcast_len(&[c.len(), x.len(), y.len()])?;
    let out = (0..len).map(|i| {
        let (x, y) = (broadcast_at(&x, i), broadcast_at(&y, i));
        match broadcast_at(&c, i) {
            Dim::Value(0) => y,
            Dim::Value(_) => x,
            _ if x == y && x.is_known() => x,
            _ => Dim::Unknown,
        }
    });
    Some(out.collect())
}

/// Range with known scalar start, limit and delta (beyond onnx).
fn range(data: &mut dyn FnMut(usize) -> Option<Dims>) -> Option<Dims> {
    let start = single(data(0))??;
    let limit = single(data(1))??;
    let delta = single(data(2))??;
    if delta == 0 {
        return None;
    }
    let span = i128::from(limit) - i128::from(start);
    let count = (span + i128::from(delta) - i128::from(delta.signum())) / i128::from(delta);
    let count = usize::try_from(count.max(0)).ok()?;
    if count > MAX_DATA {
        return None;
    }
    let mut out = Dims::with_capacity(count);
    let mut v = start;
    for _ in 0..count {
        out.push(Dim::Value(v));
        v = v.checked_add(delta)?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::types::TensorType;

    fn vals(v: &[i64]) -> Dims {
        v.iter().map(|&x| Dim::Value(x)).collect()
    }

    fn run(op: &str, since: i64, inputs: Vec<Option<Dims>>) -> Result<Option<Dims>, Failure> {
        run_to(op, since, 7, inputs)
    }

    /// [`run`] with output element type `elem`.
    fn run_to(
        op: &str,
        since: i64,
        elem: i32,
        inputs: Vec<Option<Dims>>,
    ) -> Result<Option<Dims>, Failure> {
        let types: Vec<Option<&Type>> = vec![None; inputs.len()];
        let given = vec![true; inputs.len()];
        let node = Node {
            op,
            since,
            attrs: &Attrs::Direct(&[]),
            types: &types,
            given: &given,
            out_elem: Some(elem),
        };
        run_node(&node, &inputs, None)
    }

    /// `node`'s step on `inputs`.
    fn run_node(
        node: &Node<'_, '_>,
        inputs: &[Option<Dims>],
        symbols: Option<&mut Symbols>,
    ) -> Result<Option<Dims>, Failure> {
        propagate(node, &mut |i| inputs.get(i).cloned().flatten(), symbols)
    }

    #[test]
    fn min_max_and_clip_compare_values_and_dims() {
        let got = run("Min", 13, vec![Some(vals(&[2, 9, 5])), Some(vals(&[4]))]);
        assert_eq!(got, Ok(Some(vals(&[2, 4, 4]))));
        let three = vec![Some(vals(&[2, 9])), Some(vals(&[7, 1])), Some(vals(&[3]))];
        assert_eq!(run("Max", 13, three), Ok(Some(vals(&[7, 9]))));
        assert_eq!(
            run("Min", 13, vec![Some(vals(&[1, 2])), Some(vals(&[1, 2, 3]))]),
            Ok(None)
        );
        assert_eq!(run("Max", 13, vec![Some(vals(&[1])), None]), Ok(None));
        // A symbol against a value: unknown without `symbolic`, the same
        // symbol against itself kept.
        let mut s = Symbols::default();
        let seq = s.intern("seq");
        let d = |x: Dim| -> Option<Dims> { Some([x].into_iter().collect()) };
        assert_eq!(
            run("Min", 13, vec![d(seq), Some(vals(&[4]))]),
            Ok(Some([Dim::Unknown].into_iter().collect()))
        );
        assert_eq!(run("Max", 13, vec![d(seq), d(seq)]), Ok(d(seq)));
        // Clip: bounds optional; one given without a value leaves nothing.
        let clip = |given: &[bool], inputs: Vec<Option<Dims>>, s: Option<&mut Symbols>| {
            let types: Vec<Option<&Type>> = vec![None; inputs.len()];
            let node = Node {
                op: "Clip",
                since: 13,
                attrs: &Attrs::Direct(&[]),
                types: &types,
                given,
                out_elem: Some(7),
            };
            run_node(&node, &inputs, s)
        };
        let x = Some(vals(&[1, 6, 3]));
        let (lo, hi) = (Some(vals(&[2])), Some(vals(&[5])));
        let both = vec![x.clone(), lo.clone(), hi.clone()];
        assert_eq!(clip(&[true; 3], both, None), Ok(Some(vals(&[2, 5, 3]))));
        let no_low = vec![x.clone(), None, hi.clone()];
        assert_eq!(
            clip(&[true, false, true], no_low, None),
            Ok(Some(vals(&[1, 5, 3])))
        );
        let unknown_low = vec![x.clone(), None, hi];
        assert_eq!(clip(&[true; 3], unknown_low, None), Ok(None));
        let sym = vec![d(seq), lo, None];
        let got = clip(&[true, true, false], sym, Some(&mut s));
        let at_least = s.dim_max(seq, Dim::Value(2));
        assert_eq!(got, Ok(at_least.and_then(d)));
    }

    #[test]
    fn reductions_of_1d_values() {
        let reduce =
            |op: &str, since: i64, x: Dims, axes: Option<Dims>, s: Option<&mut Symbols>| {
                let list = [crate::proto::AttributeProto {
                    name: Some("keepdims".into()),
                    i: Some(0),
                    r#type: Some(2),
                    ..Default::default()
                }];
                let attrs = Attrs::Direct(&list);
                let t = Type::Tensor(TensorType {
                    elem: 7,
                    shape: Some(vals(&[x.len() as i64])),
                });
                let types = [Some(&t), None];
                let given = [true, axes.is_some()];
                let node = Node {
                    op,
                    since,
                    attrs: &attrs,
                    types: &types,
                    given: &given,
                    out_elem: Some(7),
                };
                run_node(&node, &[Some(x), axes], s)
            };
        assert_eq!(
            reduce("ReduceProd", 18, vals(&[3, 4, 5]), None, None),
            Ok(Some(vals(&[60])))
        );
        assert_eq!(
            reduce("ReduceSum", 13, vals(&[3, 4]), Some(vals(&[0])), None),
            Ok(Some(vals(&[7])))
        );
        assert_eq!(
            reduce("ReduceMax", 18, vals(&[3, 9, 4]), Some(vals(&[-1])), None),
            Ok(Some(vals(&[9])))
        );
        assert_eq!(
            reduce("ReduceMin", 13, vals(&[3, 9]), None, None),
            Ok(Some(vals(&[3])))
        );
        assert_eq!(
            reduce("ReduceSum", 13, vals(&[]), None, None),
            Ok(Some(vals(&[0])))
        );
        assert_eq!(reduce("ReduceMax", 18, vals(&[]), None, None), Ok(None));
        // An axis a 1-D value does not have: not reduced here.
        assert_eq!(
            reduce("ReduceSum", 13, vals(&[3, 4]), Some(vals(&[1])), None),
            Ok(None)
        );
        let mut s = Symbols::default();
        let (c, h) = (s.intern("C"), s.intern("H"));
        let x: Dims = [c, h, Dim::Value(2)].into_iter().collect();
        let got = reduce("ReduceProd", 18, x, None, Some(&mut s));
        let want = s.dim_mul(c, h).and_then(|ch| s.dim_mul(ch, Dim::Value(2)));
        assert_eq!(got, Ok(want.map(|d| [d].into_iter().collect())));
    }

    #[test]
    fn arithmetic_broadcasts_one_value_and_reports_overflow() {
        let got = run("Mul", 14, vec![Some(vals(&[2, 3])), Some(vals(&[4]))]);
        assert_eq!(got, Ok(Some(vals(&[8, 12]))));
        let got = run("Div", 14, vec![Some(vals(&[7, -7])), Some(vals(&[2]))]);
        assert_eq!(got, Ok(Some(vals(&[3, -3]))));
        let got = run("Neg", 13, vec![Some(vals(&[3, -2, i64::MIN]))]);
        let want: Dims = [Dim::Value(-3), Dim::Value(2), Dim::Unknown]
            .into_iter()
            .collect();
        assert_eq!(got, Ok(Some(want)));
        assert_eq!(whole_numbers(&[2.0, -3.0, 0.0]), Some(vec![2, -3, 0]));
        assert_eq!(whole_numbers(&[2.0, 0.5]), None);
        assert_eq!(whole_numbers(&[f64::NAN]), None);
        assert_eq!(whole_numbers(&[1e300]), None);
        // A float32 result past 2^24 is not exact: unknown.
        let got = run_to(
            "Mul",
            14,
            1,
            vec![Some(vals(&[3, 1 << 24])), Some(vals(&[2]))],
        );
        let want: Dims = [Dim::Value(6), Dim::Unknown].into_iter().collect();
        assert_eq!(got, Ok(Some(want)));
        let got = run(
            "Mod",
            13,
            vec![
                Some(vals(&[7, -7, 7, -7, 6])),
                Some(vals(&[3, 3, -3, -3, 0])),
            ],
        );
        let want: Dims = [1, 2, -2, -1]
            .map(Dim::Value)
            .into_iter()
            .chain([Dim::Unknown])
            .collect();
        assert_eq!(
            got,
            Ok(Some(want)),
            "Mod takes the divisor's sign (as Python's %)"
        );
        assert!(run("Add", 14, vec![Some(vals(&[i64::MAX])), Some(vals(&[1]))]).is_err());
        assert!(run("Add", 14, vec![Some(vals(&[1, 2])), Some(vals(&[1, 2, 3]))]).is_err());
    }

    #[test]
    fn gather_and_slice_index_the_values() {
        let shape = Some(vals(&[2, 3, 5, 7]));
        let got = run("Gather", 13, vec![shape.clone(), Some(vals(&[-1, 0]))]);
        assert_eq!(got, Ok(Some(vals(&[7, 2]))));
        assert!(run("Gather", 13, vec![shape.clone(), Some(vals(&[4]))]).is_err());
        let got = run(
            "Slice",
            13,
            vec![
                shape.clone(),
                Some(vals(&[-1])),
                Some(vals(&[i64::MIN])),
                Some(vals(&[0])),
                Some(vals(&[-2])),
            ],
        );
        assert_eq!(got, Ok(Some(vals(&[7, 3]))));
        // An unknown bound: no values (onnx reads it as 0).
        let got = run(
            "Slice",
            13,
            vec![
                shape,
                Some(Dims::from_elem(Dim::Unknown, 1)),
                Some(vals(&[2])),
            ],
        );
        assert_eq!(got, Ok(None));
    }

    #[test]
    fn equal_and_where_keep_the_asked_sizes() {
        let mut symbols = Symbols::default();
        let batch = symbols.intern("batch");
        let asked: Dims = [batch, Dim::Value(-1), Dim::Value(4), Dim::Unknown]
            .into_iter()
            .collect();
        let minus = Some(vals(&[-1]));
        let keep = run("Equal", 13, vec![Some(asked.clone()), minus]);
        let want: Dims = [Dim::Value(0), Dim::Value(1), Dim::Value(0), Dim::Unknown]
            .into_iter()
            .collect();
        assert_eq!(keep, Ok(Some(want.clone())));
        // A symbol is not a known number other than itself.
        let same = run("Equal", 13, vec![Some(asked.clone()), Some(asked.clone())]);
        assert_eq!(same.ok().flatten().map(|d| d[0]), Some(Dim::Value(1)));
        let other = run("Equal", 13, vec![Some(asked.clone()), Some(vals(&[3]))]);
        assert_eq!(other.ok().flatten().map(|d| d[0]), Some(Dim::Unknown));
        let target = run("Where", 16, vec![Some(want), Some(vals(&[1])), Some(asked)]);
        let expected: Dims = [batch, Dim::Value(1), Dim::Value(4), Dim::Unknown]
            .into_iter()
            .collect();
        assert_eq!(target, Ok(Some(expected)));
        // An unknown condition with equal sides gives that side.
        let unsure = Some(Dims::from_elem(Dim::Unknown, 2));
        let both = run(
            "Where",
            16,
            vec![unsure, Some(vals(&[5, 6])), Some(vals(&[5, 7]))],
        );
        assert_eq!(
            both,
            Ok(Some([Dim::Value(5), Dim::Unknown].into_iter().collect()))
        );
        // Lengths that do not broadcast: no values.
        let bad = run(
            "Equal",
            13,
            vec![Some(vals(&[1, 2])), Some(vals(&[1, 2, 3]))],
        );
        assert_eq!(bad, Ok(None));
    }

    #[test]
    fn range_counts_like_the_operator() {
        let s = |v| Some(vals(&[v]));
        assert_eq!(
            range(&mut |i| [s(1), s(10), s(3)][i].clone()),
            Some(vals(&[1, 4, 7]))
        );
        assert_eq!(
            range(&mut |i| [s(5), s(0), s(-2)][i].clone()),
            Some(vals(&[5, 3, 1]))
        );
        assert_eq!(
            range(&mut |i| [s(0), s(0), s(1)][i].clone()),
            Some(Dims::new())
        );
    }

    #[test]
    fn shape_honours_start_and_end() {
        let t = Type::Tensor(TensorType {
            elem: 1,
            shape: Some(vals(&[1, 2, 3])),
        });
        let types = [Some(&t)];
        let list = [crate::proto::AttributeProto {
            name: Some("start".into()),
            i: Some(-2),
            r#type: Some(2),
            ..Default::default()
        }];
        let attrs = Attrs::Direct(&list);
        let node = Node {
            op: "Shape",
            since: 15,
            attrs: &attrs,
            types: &types,
            given: &[true],
            out_elem: Some(7),
        };
        assert_eq!(shape(&node), Some(vals(&[2, 3])));
    }
}
