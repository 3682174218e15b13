//! `onnxfast._onnxfast`: the Python binding of onnxfast-core.
//!
//! Thin by design: conversions, Python classes over the decoded tree, and
//! the one error-to-exception mapping (`errors.rs`). All decoding runs in
//! onnxfast-core with the GIL released.

mod arrays;
mod checking;
mod errors;
mod graph_index;
mod graph_values;
mod handle;
mod lists;
mod messages;
mod repr;
mod root;
mod saving;
mod shapes;
mod texts;
mod untracked;
mod values;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use onnxfast_core::decode::lazy::{decode_lazy, GraphLists};
use onnxfast_core::decode::source;
use onnxfast_core::external::{ExternalOptions, ExternalStore};
use onnxfast_core::{decode, proto, Bytes, DecodeOptions, Error};

use crate::errors::IntoPyResult;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use crate::root::{Ptr, Root, RootMessage};

/// Keeps a Python `bytes` object alive as the owner of a `Bytes` buffer.
struct PyBytesOwner {
    /// Owns the payload `ptr` points into; never read otherwise.
    #[allow(dead_code)]
    obj: Py<PyBytes>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the pointer targets the immutable payload of a `bytes` object that
// `obj` keeps alive; reading it needs no lock and no GIL. Dropping `obj`
// without the GIL is deferred by pyo3 to the next time a thread holds it.
unsafe impl Send for PyBytesOwner {}
// SAFETY: as above; the payload is never written.
unsafe impl Sync for PyBytesOwner {}

impl AsRef<[u8]> for PyBytesOwner {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr`/`len` describe the payload of `obj` (see the Send
        // impl); `bytes` objects are immutable and `obj` outlives `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

fn bytes_from_py(py: Python<'_>, obj: &Bound<'_, PyBytes>) -> Bytes {
    let data = obj.as_bytes();
    let owner = PyBytesOwner {
        ptr: data.as_ptr(),
        len: data.len(),
        obj: obj.clone().unbind(),
    };
    let _ = py;
    Bytes::from_owner(owner)
}

#[derive(Clone, Copy)]
enum Kind {
    Model,
    Tensor,
    Sequence,
    Map,
    Optional,
}

impl Kind {
    /// The message type decoded for this kind.
    fn root_name(self) -> &'static str {
        match self {
            Kind::Model => "ModelProto",
            Kind::Tensor => "TensorProto",
            Kind::Sequence => "SequenceProto",
            Kind::Map => "MapProto",
            Kind::Optional => "OptionalProto",
        }
    }

    fn parse(kind: &str) -> PyResult<Kind> {
        Ok(match kind {
            "model" => Kind::Model,
            "tensor" => Kind::Tensor,
            "sequence" => Kind::Sequence,
            "map" => Kind::Map,
            "optional" => Kind::Optional,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown message kind {other:?}"
                )))
            }
        })
    }
}

/// Decodes the root message; a model is loaded for decode on touch (its
/// main graph's long lists stay indexed in `buf`) unless `eager`.
fn decode_root(
    buf: Bytes,
    kind: Kind,
    options: &DecodeOptions,
    eager: bool,
) -> Result<(RootMessage, Option<GraphLists>), Error> {
    if let (Kind::Model, false) = (kind, eager) {
        let lazy = decode_lazy(buf, options)?;
        return Ok((RootMessage::Model(lazy.model), Some(lazy.lists)));
    }
    Ok((decode_root_eager(buf, kind, options)?, None))
}

fn decode_root_eager(
    buf: Bytes,
    kind: Kind,
    options: &DecodeOptions,
) -> Result<RootMessage, Error> {
    Ok(match kind {
        Kind::Model => RootMessage::Model(decode::<proto::ModelProto>(buf, options)?),
        Kind::Tensor => RootMessage::Tensor(decode::<proto::TensorProto>(buf, options)?),
        Kind::Sequence => RootMessage::Sequence(decode::<proto::SequenceProto>(buf, options)?),
        Kind::Map => RootMessage::Map(decode::<proto::MapProto>(buf, options)?),
        Kind::Optional => RootMessage::Optional(decode::<proto::OptionalProto>(buf, options)?),
    })
}

/// Inputs at least this large are processed with the GIL released.
pub(crate) const GIL_RELEASE_BYTES: usize = 256 << 10;

/// Runs `f` with the GIL released when the work is `large`. For small
/// inputs, releasing and re-acquiring the GIL costs more than the work, and
/// with several Python threads a thread waiting to re-acquire it can sleep a
/// whole switch interval (5 ms): checking thousands of small models from two
/// threads was slower than from one.
pub(crate) fn maybe_detach<T: Send>(
    py: Python<'_>,
    large: bool,
    f: impl FnOnce() -> T + Send,
) -> T {
    if large {
        py.detach(f)
    } else {
        f()
    }
}

/// Default decode budget: 16 × the encoded size + 64 MiB.
fn default_budget(len: usize) -> u64 {
    (len as u64).saturating_mul(16).saturating_add(64 << 20)
}

pub(crate) fn wrap_root(py: Python<'_>, root: Arc<Root>) -> PyResult<Py<PyAny>> {
    macro_rules! wrap {
        ($variant:ident, $class:ident) => {
            Ptr::try_new(root, |r| match &r.message {
                RootMessage::$variant(m) => Some(m),
                _ => None,
            })
            .map(|p| crate::untracked::new(py, messages::$class(p.into())).map(Py::into_any))
        };
    }
    let wrapped = match &root.message {
        RootMessage::Model(_) => wrap!(Model, Model),
        RootMessage::Tensor(_) => wrap!(Tensor, Tensor),
        RootMessage::Sequence(_) => wrap!(Sequence, SequenceValue),
        RootMessage::Map(_) => wrap!(Map, MapValue),
        RootMessage::Optional(_) => wrap!(Optional, OptionalValue),
    };
    wrapped.unwrap_or_else(|| {
        Err(pyo3::exceptions::PyRuntimeError::new_err(
            "root message kind mismatch",
        ))
    })
}

/// Decodes a serialized ONNX message from a path (memory-mapped unless
/// `mmap=False`) or a `bytes` object (zero-copy), with the GIL released.
///
/// `kind` is one of "model", "tensor", "sequence", "map", "optional".
/// A path that names a stream (a pipe, a FIFO) is read into memory, at
/// most the smaller of `max_memory` and `max_stream` bytes (a DecodeError
/// with `stream_limit` past it).
#[pyfunction]
#[pyo3(signature = (
    source, *, kind = "model", base_dir = None, mmap = true, max_memory = None, max_depth = 100,
    load_external_data = false, allow_hardlinks = false, verify_checksum = false, offset = 0,
    max_stream = None,
))]
#[allow(clippy::too_many_arguments)]
fn decode_message(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    kind: &str,
    base_dir: Option<PathBuf>,
    mmap: bool,
    max_memory: Option<u64>,
    max_depth: usize,
    load_external_data: bool,
    allow_hardlinks: bool,
    verify_checksum: bool,
    offset: u64,
    max_stream: Option<u64>,
) -> PyResult<Py<PyAny>> {
    errors::guard(py, "decoding", || {
        decode_message_impl(
            py,
            source,
            kind,
            base_dir,
            (mmap, offset),
            (max_memory, max_stream),
            max_depth,
            (load_external_data, allow_hardlinks, verify_checksum),
        )
    })
}

/// A file of its own for the open descriptor `fd` (a duplicate of it).
#[cfg(unix)]
fn duplicate_fd(_py: Python<'_>, fd: i32) -> PyResult<std::fs::File> {
    use std::os::fd::BorrowedFd;
    if fd < 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{fd} is not a file descriptor"
        )));
    }
    // SAFETY: `fd` is the descriptor of a file object the caller holds
    // (its fileno()), not -1; with the GIL held (`_py`), no Python code can
    // close it before it is duplicated here, and it is used for nothing else.
    let owned = unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned()?;
    Ok(std::fs::File::from(owned))
}

#[cfg(not(unix))]
fn duplicate_fd(_py: Python<'_>, _fd: i32) -> PyResult<std::fs::File> {
    Err(PyTypeError::new_err(
        "file descriptors are mapped on Unix only; pass the path or the bytes",
    ))
}

#[allow(clippy::too_many_arguments)]
fn decode_message_impl(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    kind: &str,
    base_dir: Option<PathBuf>,
    (mmap, offset): (bool, u64),
    (max_memory, max_stream): (Option<u64>, Option<u64>),
    max_depth: usize,
    (load_external_data, allow_hardlinks, verify_checksum): (bool, bool, bool),
) -> PyResult<Py<PyAny>> {
    let kind = Kind::parse(kind)?;
    // The decoder releases pages by offsets in its buffer: only a buffer
    // that starts at its map's start can have them released.
    let mut whole_map = true;
    let (buf, pages, base_dir) = if let Ok(data) = source.cast::<PyBytes>() {
        (bytes_from_py(py, data), None, base_dir)
    } else if source.is_instance_of::<pyo3::types::PyInt>()
        && !source.is_instance_of::<pyo3::types::PyBool>()
    {
        // An open file's descriptor: mapped, the message from `offset` on
        // (the file object's position) to the end.
        let fd: i32 = source.extract()?;
        let file = duplicate_fd(py, fd)?;
        let name = PathBuf::from(format!("<file descriptor {fd}>"));
        let loaded = py
            .detach(|| source::map_open_file(&file, &name))
            .into_py_result(py)?;
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(loaded.bytes.len());
        whole_map = start == 0;
        (loaded.bytes.slice(start..), loaded.pages, base_dir)
    } else if let Ok(path) = source.extract::<PathBuf>() {
        // A pipe or socket is read into memory: max_memory bounds it.
        let limit = match (max_memory, max_stream) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let loaded = py
            .detach(|| source::open_path(&path, mmap, limit, kind.root_name()))
            .into_py_result(py)?;
        let dir = base_dir.or_else(|| Some(parent_dir(&path)));
        (loaded.bytes, loaded.pages, dir)
    } else {
        return Err(PyTypeError::new_err(format!(
            "expected a path or bytes, got {}",
            source.get_type().name()?
        )));
    };
    let source_pages = pages.clone();
    let options = DecodeOptions {
        max_depth,
        max_memory: Some(max_memory.unwrap_or_else(|| default_budget(buf.len()))),
        pages: pages.filter(|_| whole_map),
    };
    let source_buf = buf.clone();
    let store = ExternalStore::new(
        base_dir,
        ExternalOptions {
            mmap,
            allow_hardlinks,
            verify_checksum,
        },
    );
    let large = buf.len() >= GIL_RELEASE_BYTES || load_external_data;
    let (message, lists, store) = maybe_detach(
        py,
        large,
        move || -> Result<(RootMessage, Option<GraphLists>, ExternalStore), Error> {
            // Inlining external data changes the tree: decode it all now.
            let (mut message, lists) = decode_root(buf, kind, &options, load_external_data)?;
            if load_external_data {
                if let RootMessage::Model(model) = &mut message {
                    onnxfast_core::external::inline_all(model, &store)?;
                }
            }
            Ok((message, lists, store))
        },
    )
    .into_py_result(py)?;
    wrap_root(
        py,
        Root::new(
            source_buf,
            source_pages,
            message,
            store,
            !load_external_data,
            lists,
        ),
    )
}

/// Panics on purpose, to prove (in tests) that a Rust panic surfaces as
/// `onnxfast.InternalError` and leaves the interpreter running.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    errors::guard(py, "running a self-test", || -> PyResult<()> {
        let empty: Vec<u8> = Vec::new();
        let index = empty.len() + 1;
        #[allow(clippy::indexing_slicing)]
        let _ = empty[index];
        Ok(())
    })
}

/// The folder `path` is in (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[pymodule]
fn _onnxfast(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::install_panic_hook();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(decode_message, m)?)?;
    m.add_function(wrap_pyfunction!(checking::check_model, m)?)?;
    m.add_function(wrap_pyfunction!(checking::diagnostic_codes, m)?)?;
    m.add_function(wrap_pyfunction!(shapes::infer_shapes, m)?)?;
    m.add_function(wrap_pyfunction!(graph_values::evaluate_dim, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(saving::_write_file, m)?)?;
    messages::register(m)?;
    Ok(())
}
