//! Python strings of the short texts many objects share: a node's op_type
//! and domain, an attribute's name, a dimension's symbol. A walk over a
//! graph reads the same few dozen of them again and again; each read made
//! a new string and freed it (~45 ns of the ~80 a node's `op_type` took),
//! where handing out one made before costs a compare.
//!
//! Each thread keeps its own small direct-mapped cache (no lock: the
//! getters run with the GIL, but on any thread). A text of another slot's
//! way replaces it; a long text is not cached. The strings are immutable,
//! so sharing one between objects is invisible but to `is`.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::PyString;

/// Texts up to this many bytes are cached (op types, domains, attribute
/// names and symbols are short; a long text is likely unique).
const SHORT: usize = 32;

/// Slots of a thread's cache (a model has a few dozen distinct op types).
const WAYS: usize = 128;

type Slot = Option<(Box<str>, Py<PyString>)>;

thread_local! {
    // Dropped with its thread: each string is then released when pyo3
    // next holds the GIL (pyo3 queues a release without it).
    static CACHE: RefCell<Vec<Slot>> = const { RefCell::new(Vec::new()) };
}

/// Whether field `field` of class `class` holds texts many objects share
/// (what [`text`] caches).
#[inline(always)]
pub fn shared_field(class: &str, field: &str) -> bool {
    // (Both are literals where the getters call it: folded away.)
    matches!(
        (class, field),
        ("Node", "op_type" | "domain" | "overload")
            | ("Attribute", "name")
            | ("OperatorSetId" | "Function", "domain")
            | ("Dimension", "dim_param" | "denotation")
    )
}

/// The Python string of `text`: for a field many objects share, the one
/// this thread made before, if it is still cached; else a new one.
pub fn text<'py>(py: Python<'py>, text: &str, shared: bool) -> Bound<'py, PyString> {
    if !shared || text.len() > SHORT {
        return PyString::new(py, text);
    }
    let way = way(text);
    CACHE
        .try_with(|cache| {
            // No Python code runs below (a string's creation and release
            // call none), so the borrow cannot be taken twice.
            let Ok(mut cache) = cache.try_borrow_mut() else {
                return PyString::new(py, text);
            };
            if cache.is_empty() {
                cache.resize_with(WAYS, || None);
            }
            let Some(slot) = cache.get_mut(way) else {
                return PyString::new(py, text);
            };
            if let Some((cached, string)) = slot {
                if onnxfast_core::names::same(cached, text) {
                    return string.bind(py).clone();
                }
            }
            let string = PyString::new(py, text);
            *slot = Some((text.into(), string.clone().unbind()));
            string
        })
        // (The thread is ending: its cache is gone.)
        .unwrap_or_else(|_| PyString::new(py, text))
}

/// The slot of `text`: its length and three of its bytes, mixed.
fn way(text: &str) -> usize {
    let b = text.as_bytes();
    let at = |i: usize| u32::from(b.get(i).copied().unwrap_or(0));
    let n = b.len();
    let h = (n as u32)
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(at(0))
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(at(n / 2))
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(at(n.wrapping_sub(1)));
    (h >> 16) as usize % WAYS
}
