//! Repeated message fields as lazy Python sequences.

use std::any::Any;

use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PySlice};

use crate::handle::{Handle, WrapListed};
use crate::root::Ptr;

/// A prost message type with a Python wrapper class.
pub trait Wrap: PartialEq + Send + Sync + Sized + 'static {
    /// Python class name, for reprs.
    const NAME: &'static str;
    fn wrap(ptr: Ptr<Self>, py: Python<'_>) -> PyResult<Py<PyAny>>;
}

/// Type-erased `Ptr<Vec<T>>`.
trait AnyList: Send + Sync {
    fn len(&self) -> usize;
    /// An iteration over the list is at element `index` (the one before
    /// it has been handed out): a decode-on-touch list may decode ahead.
    fn iteration_at(&self, _index: usize) {}
    fn item(&self, py: Python<'_>, index: usize) -> PyResult<Py<PyAny>>;
    fn element_name(&self) -> &'static str;
    fn as_any(&self) -> &dyn Any;
    fn same_values(&self, other: &dyn AnyList) -> Option<bool>;
}

impl<T: Wrap> AnyList for Ptr<Vec<T>> {
    fn len(&self) -> usize {
        (**self).len()
    }

    fn item(&self, py: Python<'_>, index: usize) -> PyResult<Py<PyAny>> {
        if index >= (**self).len() {
            return Err(PyIndexError::new_err("index out of range"));
        }
        T::wrap(self.project(|v| &v[index]), py)
    }

    fn element_name(&self) -> &'static str {
        T::NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same_values(&self, other: &dyn AnyList) -> Option<bool> {
        let other = other.as_any().downcast_ref::<Ptr<Vec<T>>>()?;
        Some(***self == ***other)
    }
}

/// A decode-on-touch list of a root's main graph: an element's Python
/// object reads what it can from the element's bytes and decodes it on
/// first need (kept by the root).
struct LazyListRef<T: 'static> {
    graph: Ptr<onnxfast_core::proto::GraphProto>,
    /// Whether decoding ahead of an iteration has started.
    ahead: std::sync::atomic::AtomicBool,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T: WrapListed> LazyListRef<T> {
    fn list(&self) -> Option<&onnxfast_core::decode::lazy::LazyList<T>> {
        self.graph.root().lists_of(&self.graph).map(T::select)
    }
}

impl<T: WrapListed> AnyList for LazyListRef<T> {
    fn len(&self) -> usize {
        self.list().map_or(0, |l| l.len())
    }

    /// An iteration that decodes what it reads (a field the bytes alone
    /// cannot give: an attribute, a tensor's data) decodes the rest of a
    /// long list ahead of it, in order, on the thread pool (without the
    /// GIL), while Python works; one that reads only names decodes nothing.
    fn iteration_at(&self, index: usize) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let Some(list) = self.list() else {
            return;
        };
        if index == 0
            || list.len() < onnxfast_core::decode::PARALLEL_MIN
            || self.ahead.load(Ordering::Relaxed)
            || list.cached(index - 1).is_none()
            || self.ahead.swap(true, Ordering::Relaxed)
        {
            return;
        }
        let next = Arc::new(AtomicUsize::new(
            index / onnxfast_core::decode::lazy::CHUNK + 1,
        ));
        for _ in 0..rayon::current_num_threads() {
            let (graph, next) = (self.graph.clone(), Arc::clone(&next));
            rayon::spawn(move || {
                if let Some(lists) = graph.root().lists_of(&graph) {
                    T::select(lists).decode_ahead(&next, |_| false);
                }
            });
        }
    }

    fn item(&self, py: Python<'_>, index: usize) -> PyResult<Py<PyAny>> {
        if index >= self.len() {
            return Err(PyIndexError::new_err("index out of range"));
        }
        T::wrap_listed(Handle::listed(self.graph.clone(), index), py)
    }

    fn element_name(&self) -> &'static str {
        T::NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same_values(&self, _other: &dyn AnyList) -> Option<bool> {
        // Compared element by element (decoding them).
        None
    }
}

/// A read-only sequence over a repeated message field. `len()` and indexing
/// are O(1); an element's Python object is created when it is accessed.
#[pyclass(module = "onnxfast", name = "RepeatedMessages", frozen, sequence)]
pub struct MessageList {
    inner: Box<dyn AnyList>,
}

impl MessageList {
    pub fn new<T: Wrap>(ptr: Ptr<Vec<T>>) -> Self {
        MessageList {
            inner: Box::new(ptr),
        }
    }

    /// A list of `graph`: its decode-on-touch list when it is a root's main
    /// graph loaded that way, else its own `Vec`.
    pub fn of_graph<T: WrapListed>(
        graph: &Ptr<onnxfast_core::proto::GraphProto>,
        eager: impl for<'a> FnOnce(&'a onnxfast_core::proto::GraphProto) -> &'a Vec<T>,
    ) -> Self {
        if graph.root().lists_of(graph).is_some() {
            return MessageList {
                inner: Box::new(LazyListRef::<T> {
                    graph: graph.clone(),
                    ahead: std::sync::atomic::AtomicBool::new(false),
                    marker: std::marker::PhantomData,
                }),
            };
        }
        MessageList::new(graph.project(eager))
    }
}

#[pymethods]
impl MessageList {
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = index.cast::<PySlice>() {
            let len = isize::try_from(self.inner.len())
                .map_err(|_| PyIndexError::new_err("list too long"))?;
            let indices = slice.indices(len)?;
            let mut items = Vec::with_capacity(indices.slicelength);
            let mut i = indices.start;
            for _ in 0..indices.slicelength {
                // `indices` clamps start/step to the list, so `i` is in range.
                items.push(self.inner.item(py, i as usize)?);
                i += indices.step;
            }
            return Ok(PyList::new(py, items)?.into_any().unbind());
        }
        let i: isize = index
            .extract()
            .map_err(|_| PyTypeError::new_err("indices must be integers or slices"))?;
        let len = self.inner.len() as isize;
        let j = if i < 0 { i + len } else { i };
        if j < 0 || j >= len {
            return Err(PyIndexError::new_err(format!(
                "index {i} out of range for {} {} elements",
                len,
                self.inner.element_name()
            )));
        }
        self.inner.item(py, j as usize)
    }

    fn __iter__(slf: Py<Self>) -> MessageListIter {
        MessageListIter {
            list: slf,
            next: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Ok(other) = other.cast::<MessageList>() {
            if let Some(same) = self.inner.same_values(other.get().inner.as_ref()) {
                return Ok(same);
            }
        }
        // Compare element-wise with any other sequence (e.g. a list).
        let Ok(len) = other.len() else {
            return Ok(false);
        };
        if len != self.inner.len() {
            return Ok(false);
        }
        for i in 0..len {
            let mine = self.inner.item(py, i)?;
            if !mine.bind(py).eq(other.get_item(i)?)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn __repr__(&self) -> String {
        format!(
            "<{} {} elements>",
            self.inner.len(),
            self.inner.element_name()
        )
    }
}

#[pyclass(module = "onnxfast", name = "RepeatedMessagesIterator", frozen)]
pub struct MessageListIter {
    list: Py<MessageList>,
    next: std::sync::atomic::AtomicUsize,
}

#[pymethods]
impl MessageListIter {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        use std::sync::atomic::Ordering;
        let list = self.list.get();
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if i >= list.inner.len() {
            return Ok(None);
        }
        list.inner.iteration_at(i);
        list.inner.item(py, i).map(Some)
    }
}
