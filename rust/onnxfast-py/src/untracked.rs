//! Objects Python's cycle collector does not track.
//!
//! pyo3 makes every class a GC type, so each object we hand out joins the
//! collector's generations: a program that keeps 200,000 nodes or values
//! (`list(graph.node)`, `graph.values.values()`) has the collector
//! traverse them again and again while it builds them (4-5x the time of
//! building them). Our message and value objects hold only Rust data (the
//! shared root, indexes), so they can never be part of a reference cycle:
//! they are untracked as soon as they exist, as CPython untracks tuples and
//! dicts of atomic values.

use pyo3::prelude::*;
use pyo3::PyClass;

/// A class whose objects hold no Python object (directly or through the
/// Rust data they own), so none can be part of a reference cycle.
pub trait Acyclic: PyClass {}

/// A new object of `T`, not tracked by the cycle collector.
pub fn new<T>(py: Python<'_>, value: T) -> PyResult<Py<T>>
where
    T: Acyclic + Into<pyo3::PyClassInitializer<T>>,
{
    let obj = Py::new(py, value)?;
    // SAFETY: `obj` is a live object of a GC type (every pyo3 class is
    // one) and we hold the GIL. Untracking is allowed at any time; its
    // deallocation untracks only a tracked object. `T: Acyclic` holds no
    // Python reference, so the collector has nothing to find through it.
    unsafe { pyo3::ffi::PyObject_GC_UnTrack(obj.as_ptr().cast()) };
    Ok(obj)
}
