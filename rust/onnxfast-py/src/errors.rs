//! The one place where core errors become Python exceptions.
//!
//! The exception classes live in `onnxfast/errors.py` (so they can inherit
//! from both `OnnxFastError` and a builtin like `ValueError`); this module
//! instantiates them with their structured attributes.

use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use onnxfast_core::{DecodeError, Error, TensorError};

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The exception class `name` of `onnxfast.errors`.
pub fn exception_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    let module =
        ERRORS_MODULE.get_or_try_init(py, || py.import("onnxfast.errors").map(Bound::unbind))?;
    Ok(module.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// Builds `onnxfast.errors.<name>(message, **attrs)`.
pub fn make_error(py: Python<'_>, name: &str, message: String, attrs: &Bound<'_, PyDict>) -> PyErr {
    let built = exception_class(py, name).and_then(|cls| cls.call((message.clone(),), Some(attrs)));
    match built {
        Ok(instance) => PyErr::from_value(instance),
        // The errors module itself failed to import: still raise something useful.
        Err(import_error) => {
            PyRuntimeError::new_err(format!("{message} (while raising: {import_error})"))
        }
    }
}

pub fn decode_error(py: Python<'_>, err: &DecodeError) -> PyErr {
    use onnxfast_core::error::DecodeErrorKind;
    let attrs = PyDict::new(py);
    let filled = attrs
        .set_item("offset", err.offset)
        .and_then(|()| attrs.set_item("path", &err.path))
        .and_then(|()| attrs.set_item("reason", err.kind.to_string()))
        .and_then(|()| match &err.kind {
            // A stream read up to its limit: no more of it was read.
            DecodeErrorKind::StreamOverBudget { budget, .. } => {
                attrs.set_item("stream_limit", budget)
            }
            _ => Ok(()),
        });
    if let Err(e) = filled {
        return e;
    }
    make_error(py, "DecodeError", err.to_string(), &attrs)
}

pub fn tensor_error(py: Python<'_>, err: &TensorError) -> PyErr {
    let attrs = PyDict::new(py);
    let filled = attrs
        .set_item("tensor", &err.tensor)
        .and_then(|()| attrs.set_item("reason", err.kind.to_string()));
    if let Err(e) = filled {
        return e;
    }
    make_error(py, "TensorError", err.to_string(), &attrs)
}

pub fn external_error(py: Python<'_>, err: &onnxfast_core::external::ExternalDataError) -> PyErr {
    let attrs = PyDict::new(py);
    let filled = attrs
        .set_item("tensor", &err.tensor)
        .and_then(|()| attrs.set_item("location", &err.location))
        .and_then(|()| attrs.set_item("reason", &err.rule));
    if let Err(e) = filled {
        return e;
    }
    make_error(py, "ExternalDataError", err.to_string(), &attrs)
}

/// An OS error with its errno and file name, so Python picks the right
/// subclass (`FileNotFoundError`, `IsADirectoryError`, ...).
pub fn os_error(py: Python<'_>, path: &std::path::Path, source: &std::io::Error) -> PyErr {
    let errno = source.raw_os_error().unwrap_or(match source.kind() {
        std::io::ErrorKind::NotFound => 2,
        std::io::ErrorKind::PermissionDenied => 13,
        std::io::ErrorKind::IsADirectory => 21,
        std::io::ErrorKind::InvalidInput => 22,
        _ => 5,
    });
    // The system's words for the number, as Python gives them, unless the
    // error carries words of its own.
    let system_words = source.raw_os_error().is_some() || source.get_ref().is_none();
    let reason = match system_words {
        true => std::io::Error::from_raw_os_error(errno).to_string(),
        false => source.to_string(),
    };
    // Strip Rust's " (os error N)" suffix: Python shows the errno itself.
    let reason = reason
        .rsplit_once(" (os error")
        .map_or(reason.as_str(), |(text, _)| text)
        .to_string();
    let filename = path.to_string_lossy().into_owned();
    let os_error = py.get_type::<PyOSError>();
    match os_error.call1((errno, reason, filename)) {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// A save's I/O error: where the core names the file and the system's
/// error (`encode::WriteFailed`), an `OSError` with its number, message and
/// file name, as `open()` raises them (`errno.ENOSPC` can be told apart);
/// else as pyo3 converts it.
pub fn write_error(py: Python<'_>, err: std::io::Error) -> PyErr {
    use onnxfast_core::encode::WriteFailed;
    let failed = err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<WriteFailed>());
    match failed {
        Some(w)
            if w.source.raw_os_error().is_some()
                || matches!(
                    w.source.kind(),
                    std::io::ErrorKind::IsADirectory | std::io::ErrorKind::PermissionDenied
                ) =>
        {
            os_error(py, &w.path, &w.source)
        }
        _ => err.into(),
    }
}

/// Converts any core error.
pub fn to_py(py: Python<'_>, err: &Error) -> PyErr {
    match err {
        Error::Decode(e) => decode_error(py, e),
        Error::Tensor(e) => tensor_error(py, e),
        Error::External(e) => external_error(py, e),
        Error::Io { path, source } => os_error(py, path, source),
    }
}

pub trait IntoPyResult<T> {
    fn into_py_result(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn into_py_result(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}

/// Where the last panic in this library happened (`file:line:column`), set
/// by the hook [`install_panic_hook`] installs and taken by [`guard`].
static LAST_PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Replaces the default panic output (a message and a hint about
/// RUST_BACKTRACE on stderr, from whatever thread panicked, rayon workers
/// included) with a record of the panic's location, which [`guard`] puts in
/// the `InternalError`. With `RUST_BACKTRACE` set, the default output is kept
/// too, for debugging. The hook belongs to this extension's copy of the Rust
/// runtime: other Rust extensions in the process are not affected.
pub fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(at) = info.location() {
            if let Ok(mut last) = LAST_PANIC.lock() {
                *last = Some(format!("{}:{}:{}", at.file(), at.line(), at.column()));
            }
        }
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            default(info);
        }
    }));
}

/// Runs `f`, turning a Rust panic into `onnxfast.InternalError` (asking for
/// a bug report) instead of letting it cross into Python as a
/// `PanicException`, which is not an `Exception` and would escape ordinary
/// error handling.
pub fn guard<T>(py: Python<'_>, what: &str, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let at = LAST_PANIC
                .lock()
                .ok()
                .and_then(|mut last| last.take())
                .map(|at| format!(" (at {at})"))
                .unwrap_or_default();
            let message = format!(
                "internal error in onnxfast while {what}: {detail}{at}. This is a bug in onnxfast: please \
                 report it (with the input file if you can) at https://github.com/onnxfast/onnxfast/issues"
            );
            let attrs = PyDict::new(py);
            Err(make_error(py, "InternalError", message, &attrs))
        }
    }
}
