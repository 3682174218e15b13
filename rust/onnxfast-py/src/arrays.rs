//! Tensors to numpy arrays.
//!
//! A [`BufferOwner`] exposes a byte buffer through numpy's
//! `__array_interface__`; `onnxfast._numpy` turns it into a typed array whose
//! `.base` chain ends at the owner. Views over the source (memory map or the
//! caller's bytes) are read-only; buffers made by a conversion are writable,
//! since nothing else references them.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple};

use onnxfast_core::proto::TensorProto;
use onnxfast_core::tensor::convert;
use onnxfast_core::tensor::{self, AlignedBuf, NumpyBytes, Source, TensorPlan};
use onnxfast_core::{Bytes, TensorError, TensorErrorKind};

use crate::errors::tensor_error;
use crate::root::Ptr;

enum Keep {
    Shared(#[allow(dead_code)] Bytes),
    Owned(#[allow(dead_code)] AlignedBuf),
}

/// Owner of the memory behind an array (see the module docs).
#[pyclass(module = "onnxfast", name = "_Buffer", frozen)]
pub struct BufferOwner {
    /// Address of the first byte; valid as long as `keep` lives.
    ptr: usize,
    len: usize,
    readonly: bool,
    keep: Keep,
}

impl BufferOwner {
    fn shared(bytes: Bytes) -> Self {
        BufferOwner {
            ptr: bytes.as_ptr() as usize,
            len: bytes.len(),
            readonly: true,
            keep: Keep::Shared(bytes),
        }
    }

    fn owned(mut buf: AlignedBuf) -> Self {
        BufferOwner {
            ptr: buf.as_mut_ptr() as usize,
            len: buf.len(),
            readonly: false,
            keep: Keep::Owned(buf),
        }
    }
}

#[pymethods]
impl BufferOwner {
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", (self.len,))?;
        d.set_item("typestr", "|u1")?;
        d.set_item("data", (self.ptr, self.readonly))?;
        Ok(d)
    }

    /// True when this buffer is a view of the model's bytes (no copy).
    #[getter]
    fn is_view(&self) -> bool {
        matches!(self.keep, Keep::Shared(_))
    }

    fn __len__(&self) -> usize {
        self.len
    }
}

static NUMPY_GLUE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn glue(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    Ok(NUMPY_GLUE
        .get_or_try_init(py, || py.import("onnxfast._numpy").map(Bound::unbind))?
        .bind(py))
}

fn dims_list<'py>(py: Python<'py>, plan: &TensorPlan) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, &plan.dims)
}

/// What `numpy(dtype=...)` asked for.
enum Target {
    Natural,
    F32,
    I8,
}

fn target(py: Python<'_>, plan: &TensorPlan, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Target> {
    let Some(dtype) = dtype else {
        return Ok(Target::Natural);
    };
    let name: String = glue(py)?.call_method1("dtype_name", (dtype,))?.extract()?;
    let natural: Option<String> = match glue(py)?.call_method1("dtype_of", (plan.elem.code,))? {
        d if d.is_none() => None,
        d => Some(d.getattr("name")?.extract()?),
    };
    if natural.as_deref() == Some(name.as_str()) {
        return Ok(Target::Natural);
    }
    match name.as_str() {
        "float32" if convert::converts_to_f32(plan.elem) => Ok(Target::F32),
        "int8" if convert::converts_to_i8(plan.elem) => Ok(Target::I8),
        _ => Err(PyValueError::new_err(format!(
            "no direct conversion from {} to {name}: float32 is offered for float16, bfloat16, \
             the float8/float6/float4 types, float8e8m0 and the packed integer types, int8 for \
             int4/uint4/int2/uint2; use .numpy().astype(...) for anything else",
            plan.elem.name
        ))),
    }
}

fn copy_refused(t: &TensorProto, why: &str) -> TensorError {
    TensorError {
        tensor: t.name().to_string(),
        kind: TensorErrorKind::Unsupported {
            detail: format!("copy=False, but {why}, so the array must be a copy"),
        },
    }
}

/// `Tensor.numpy()`: see the Python docs in `_onnxfast.pyi`.
pub fn tensor_to_numpy(
    py: Python<'_>,
    t: &Ptr<TensorProto>,
    copy: Option<bool>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let plan = tensor::plan(t).map_err(|e| tensor_error(py, &e))?;
    if plan.elem.storage == tensor::Storage::StringData {
        if copy == Some(false) {
            return Err(tensor_error(
                py,
                &copy_refused(t, "STRING elements become Python objects"),
            ));
        }
        let items = tensor::string_elements(t, &plan).map_err(|e| tensor_error(py, &e))?;
        let mut values = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let text = std::str::from_utf8(item).map_err(|_| {
                tensor_error(
                    py,
                    &TensorError {
                        tensor: t.name().to_string(),
                        kind: TensorErrorKind::InvalidUtf8 { index },
                    },
                )
            })?;
            values.push(text);
        }
        let out = glue(py)?.call_method1("strings", (values, dims_list(py, &plan)?))?;
        return Ok(out.unbind());
    }

    let stored: Option<Bytes> = match &plan.source {
        Source::Raw(raw) => Some(raw.clone()),
        Source::External => Some(read_external(py, t, &plan)?),
        _ => None,
    };
    match target(py, &plan, dtype)? {
        Target::Natural => {
            let ptr = t.clone();
            let plan_ref = plan.clone();
            let large = plan.nbytes() >= crate::GIL_RELEASE_BYTES;
            let data = crate::maybe_detach(py, large, move || {
                tensor::numpy_bytes(&ptr, &plan_ref, stored.as_ref())
            })
            .map_err(|e| tensor_error(py, &e))?;
            let (owner, must_copy) = match data {
                NumpyBytes::View(bytes) => (BufferOwner::shared(bytes), copy == Some(true)),
                NumpyBytes::Owned(buf) => {
                    if copy == Some(false) {
                        let why = match plan.source {
                            Source::Typed => {
                                format!("the data is in {}", plan.elem.storage.field_name())
                            }
                            _ if plan.elem.bits < 8 => {
                                format!("{} elements are packed", plan.elem.name)
                            }
                            _ => "the host is big-endian".to_string(),
                        };
                        return Err(tensor_error(py, &copy_refused(t, &why)));
                    }
                    (BufferOwner::owned(buf), false)
                }
            };
            let out = glue(py)?.call_method1(
                "array",
                (
                    Py::new(py, owner)?,
                    plan.elem.code,
                    dims_list(py, &plan)?,
                    must_copy,
                ),
            )?;
            Ok(out.unbind())
        }
        kind @ (Target::F32 | Target::I8) => {
            if copy == Some(false) {
                return Err(tensor_error(
                    py,
                    &copy_refused(t, "a dtype conversion was requested"),
                ));
            }
            let ptr = t.clone();
            let plan_ref = plan.clone();
            let to_f32 = matches!(kind, Target::F32);
            let large = plan.nbytes() >= crate::GIL_RELEASE_BYTES;
            let buf = crate::maybe_detach(py, large, move || -> Result<AlignedBuf, TensorError> {
                // Convert straight from the stored form (packed when raw).
                let (src, packed): (NumpyBytes, bool) = match stored {
                    Some(raw) => (NumpyBytes::View(raw), true),
                    None => (tensor::numpy_bytes(&ptr, &plan_ref, None)?, false),
                };
                let elem = plan_ref.elem;
                let width = if to_f32 { 4 } else { 1 };
                let mut out = AlignedBuf::zeroed(plan_ref.count.saturating_mul(width));
                if to_f32 {
                    convert::to_f32(elem, src.as_bytes(), packed, out.as_f32_mut());
                } else {
                    let bytes = out.as_bytes_mut();
                    // SAFETY: i8 and u8 have the same size, alignment and validity.
                    let as_i8 = unsafe {
                        std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<i8>(), bytes.len())
                    };
                    convert::to_i8(elem, src.as_bytes(), packed, as_i8);
                }
                Ok(out)
            })
            .map_err(|e| tensor_error(py, &e))?;
            let np_name = if to_f32 { "float32" } else { "int8" };
            let out = glue(py)?.call_method1(
                "converted",
                (
                    Py::new(py, BufferOwner::owned(buf))?,
                    np_name,
                    dims_list(py, &plan)?,
                ),
            )?;
            Ok(out.unbind())
        }
    }
}

/// Reads (maps) the external bytes of `t`, with the GIL released; warns
/// about `external_data` keys that are ignored.
pub fn read_external(py: Python<'_>, t: &Ptr<TensorProto>, plan: &TensorPlan) -> PyResult<Bytes> {
    let expected = plan.elem.raw_len(plan.count).ok_or_else(|| {
        tensor_error(
            py,
            &TensorError {
                tensor: t.name().to_string(),
                kind: TensorErrorKind::CountOverflow {
                    dims: t.dims.clone(),
                },
            },
        )
    })?;
    if let Ok(info) = onnxfast_core::external::parse_info(t) {
        if !info.ignored_keys.is_empty() {
            let category = crate::errors::exception_class(py, "ExternalDataWarning")?;
            let msg = format!(
                "tensor '{}': external_data keys {:?} are not part of the ONNX spec and were ignored",
                onnxfast_core::diag::clean(t.name()),
                info.ignored_keys
            );
            let msg = std::ffi::CString::new(msg.replace('\0', "")).unwrap_or_default();
            PyErr::warn(py, &category, &msg, 1)?;
        }
    }
    let ptr = t.clone();
    py.detach(move || ptr.root().external.read(&ptr, expected))
        .map_err(|e| crate::errors::external_error(py, &e))
}

/// `Tensor.dtype`: the numpy dtype `numpy()` returns, or None for unknown types.
pub fn tensor_dtype(py: Python<'_>, data_type: i32) -> PyResult<Py<PyAny>> {
    Ok(glue(py)?.call_method1("dtype_of", (data_type,))?.unbind())
}

/// `Tensor.shape`.
pub fn shape<'py>(py: Python<'py>, t: &TensorProto) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, &t.dims)
}
