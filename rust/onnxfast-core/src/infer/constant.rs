//! Values of constant inputs: initializers and Constant nodes' outputs, as
//! onnx's inference sees them (`getInputData`). Only the tensor a rule asks
//! for is read, and only when it is small enough to be a shape, axes or a
//! scalar ([`MAX_CONST_ELEMS`]): no other weight is touched.

use crate::error::TensorErrorKind;
use crate::external::{is_external, ExternalStore};
use crate::ir::view::TensorRef;
use crate::proto::TensorProto;
use crate::tensor::{self, Source};

/// Constants larger than this are not read (a shape, axes or pads list is
/// at most a few thousand values; a hostile model could point a Reshape at
/// a gigabyte initializer).
pub const MAX_CONST_ELEMS: usize = 1 << 16;

/// A constant value known to inference.
#[derive(Debug, Clone)]
pub enum Const<'m> {
    /// An initializer (of a decode-on-touch list: decoded when its value
    /// is read), or a Constant node's `value`.
    Tensor(TensorRef<'m>),
    /// A Constant node's `value_int` (scalar) / `value_ints` (1-D).
    Ints { values: Vec<i64>, scalar: bool },
    /// A Constant node's `value_float` / `value_floats`.
    Floats { values: Vec<f32>, scalar: bool },
    /// Values computed by data propagation (`data_prop`): every one known,
    /// of an integer element type (int64 or int32).
    Computed {
        values: Vec<i64>,
        elem: i32,
        scalar: bool,
    },
}

impl<'m> Const<'m> {
    /// The tensor of an initializer or a Constant's `value` (decoded now if
    /// it was not); `None` for the other constants, or a tensor that cannot
    /// be decoded (reported after inference, see `GraphView::read_nodes`).
    pub fn tensor(&self) -> Option<&'m TensorProto> {
        match self {
            Const::Tensor(t) => t.get().ok(),
            _ => None,
        }
    }

    /// False only for a tensor without a `data_type` field.
    pub fn has_data_type(&self) -> bool {
        self.tensor().is_none_or(|t| t.data_type.is_some())
    }

    /// The constant's dims.
    pub fn dims(&self) -> Vec<i64> {
        match self {
            Const::Tensor(_) => self.tensor().map(|t| t.dims.clone()).unwrap_or_default(),
            Const::Ints { values, scalar } => dims_of(values.len(), *scalar),
            Const::Floats { values, scalar } => dims_of(values.len(), *scalar),
            Const::Computed { values, scalar, .. } => dims_of(values.len(), *scalar),
        }
    }

    /// The constant's element type code.
    pub fn elem(&self) -> i32 {
        match self {
            Const::Tensor(_) => self.tensor().map_or(0, TensorProto::data_type),
            Const::Ints { .. } => 7,
            Const::Floats { .. } => 1,
            Const::Computed { elem, .. } => *elem,
        }
    }
}

fn dims_of(len: usize, scalar: bool) -> Vec<i64> {
    if scalar {
        Vec::new()
    } else {
        vec![i64::try_from(len).unwrap_or(i64::MAX)]
    }
}

/// Whether `c` is a tensor whose data is in an external file.
pub fn is_external_data(c: &Const<'_>) -> bool {
    match c {
        Const::Tensor(t) => t.get().is_ok_and(is_external),
        _ => false,
    }
}

/// The native-endian element bytes of a small tensor.
///
/// `raw_data` longer than the dims need is read as onnx's `ParseData` reads
/// it: the leading bytes, the rest ignored (onnx's checker accepts such a
/// tensor; only `check(strict=True)` reports it, S901). Shorter is an error,
/// as in onnx.
fn element_bytes(t: &TensorProto, store: Option<&ExternalStore>) -> Result<Vec<u8>, String> {
    let plan = match tensor::plan(t) {
        Ok(plan) => plan,
        Err(e) => match (&e.kind, &t.raw_data) {
            (
                TensorErrorKind::SizeMismatch {
                    field: "raw_data",
                    got,
                    expected,
                    ..
                },
                Some(raw),
            ) if got > expected => {
                let cut = TensorProto {
                    raw_data: Some(raw.slice(..*expected)),
                    ..t.clone()
                };
                tensor::plan(&cut).map_err(|e| e.to_string())?
            }
            _ => return Err(e.to_string()),
        },
    };
    if plan.count > MAX_CONST_ELEMS {
        return Err(format!(
            "it has {} elements, more than inference reads ({MAX_CONST_ELEMS})",
            plan.count
        ));
    }
    let raw = match &plan.source {
        Source::Raw(b) => Some(b.clone()),
        Source::External => {
            let store = store.ok_or_else(|| {
                "its data is external and the model's folder is not known".to_string()
            })?;
            let len = plan
                .elem
                .raw_len(plan.count)
                .ok_or_else(|| "its size overflows".to_string())?;
            Some(store.read(t, len).map_err(|e| e.to_string())?)
        }
        _ => None,
    };
    let bytes = tensor::numpy_bytes(t, &plan, raw.as_ref()).map_err(|e| e.to_string())?;
    Ok(bytes.as_bytes().to_vec())
}

fn chunks<const N: usize>(bytes: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    bytes
        .chunks_exact(N)
        .filter_map(|c| <[u8; N]>::try_from(c).ok())
}

/// Integer elements of a constant (INT64, INT32 and the other integer
/// types, BOOL); an error for other types or unreadable data.
pub fn ints(c: &Const<'_>, store: Option<&ExternalStore>) -> Result<Vec<i64>, String> {
    let t = match c {
        Const::Ints { values, .. } | Const::Computed { values, .. } => return Ok(values.clone()),
        Const::Floats { .. } => return Err("it holds floats, not integers".into()),
        Const::Tensor(t) => t.get().map_err(|e| e.to_string())?,
    };
    if is_external(t) && store.is_none() {
        return Err("its data is external and the model's folder is not known".into());
    }
    let bytes = element_bytes(t, store)?;
    Ok(match t.data_type() {
        7 => chunks::<8>(&bytes).map(i64::from_ne_bytes).collect(),
        6 => chunks::<4>(&bytes)
            .map(|b| i64::from(i32::from_ne_bytes(b)))
            .collect(),
        13 => chunks::<8>(&bytes)
            .map(|b| i64::try_from(u64::from_ne_bytes(b)).unwrap_or(i64::MAX))
            .collect(),
        12 => chunks::<4>(&bytes)
            .map(|b| i64::from(u32::from_ne_bytes(b)))
            .collect(),
        5 => chunks::<2>(&bytes)
            .map(|b| i64::from(i16::from_ne_bytes(b)))
            .collect(),
        4 => chunks::<2>(&bytes)
            .map(|b| i64::from(u16::from_ne_bytes(b)))
            .collect(),
        3 => bytes.iter().map(|&b| i64::from(b as i8)).collect(),
        2 | 9 => bytes.iter().map(|&b| i64::from(b)).collect(),
        other => {
            return Err(format!(
                "its element type {} is not an integer type",
                crate::ir::types::elem_name(other).unwrap_or("?")
            ))
        }
    })
}

/// Numeric elements of a constant as f64 (floats and integers).
pub fn floats(c: &Const<'_>, store: Option<&ExternalStore>) -> Result<Vec<f64>, String> {
    let t = match c {
        Const::Ints { values, .. } | Const::Computed { values, .. } => {
            return Ok(values.iter().map(|&v| v as f64).collect())
        }
        Const::Floats { values, .. } => return Ok(values.iter().map(|&v| f64::from(v)).collect()),
        Const::Tensor(t) => t.get().map_err(|e| e.to_string())?,
    };
    match t.data_type() {
        1 => {
            let bytes = element_bytes(t, store)?;
            Ok(chunks::<4>(&bytes)
                .map(|b| f64::from(f32::from_ne_bytes(b)))
                .collect())
        }
        11 => {
            let bytes = element_bytes(t, store)?;
            Ok(chunks::<8>(&bytes).map(f64::from_ne_bytes).collect())
        }
        10 => {
            let bytes = element_bytes(t, store)?;
            Ok(chunks::<2>(&bytes)
                .map(|b| {
                    f64::from(f32::from_bits(crate::tensor::convert::f16_to_f32_bits(
                        u16::from_ne_bytes(b),
                    )))
                })
                .collect())
        }
        16 => {
            let bytes = element_bytes(t, store)?;
            Ok(chunks::<2>(&bytes)
                .map(|b| f64::from(f32::from_bits(u32::from(u16::from_ne_bytes(b)) << 16)))
                .collect())
        }
        _ => ints(c, store).map(|v| v.into_iter().map(|x| x as f64).collect()),
    }
}
