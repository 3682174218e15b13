//! What a Python message object holds: a [`Ptr`] into the decoded tree, or,
//! for an element of a decode-on-touch list, the list and an index.
//!
//! A listed element answers the fields readers ask for most (a node's
//! names, a tensor's name, type and dims) from its bytes, so walking a big
//! graph from Python decodes nothing and allocates no tree; any other field
//! decodes it (with the rest of its chunk, kept by the list, as before).
//! The scan proved the element's framing, wire types and UTF-8 at load, so
//! what the bytes give is what decoding gives.

use std::sync::OnceLock;

use pyo3::prelude::*;
use smallvec::SmallVec;

use onnxfast_core::decode::lazy::{GraphLists, LazyList, ListElement};
use onnxfast_core::error::DecodeError;
use onnxfast_core::proto;

use crate::lists::Wrap;
use crate::root::Ptr;

/// A field's value as read from an element's bytes.
pub enum Peeked<'a> {
    Str(&'a str),
    Strs(SmallVec<[&'a str; 2]>),
    Int(i64),
    Ints(SmallVec<[i64; 4]>),
}

/// A message type whose Python objects can stand for an element of a
/// decode-on-touch list (see [`Handle`]).
pub trait WrapListed: Wrap + ListElement {
    /// Which list of a graph's decode-on-touch lists holds this type.
    fn select(lists: &GraphLists) -> &LazyList<Self>;

    /// The Python object for element `index` of a list.
    fn wrap_listed(handle: Handle<Self>, py: Python<'_>) -> PyResult<Py<PyAny>>;

    /// Field `field` (its onnx.proto name) of element `i`, read from its
    /// bytes, where the bytes alone can give it; `None`: decode.
    fn peek<'a>(list: &'a LazyList<Self>, i: usize, field: &str) -> Option<Peeked<'a>>;
}

/// How the generated getters reach a message: a [`Ptr`] is the message;
/// a [`Handle`] may answer from bytes, or decode first.
pub trait Access<T: 'static> {
    /// The decoded message (decoding it now if needed).
    fn get(&self, py: Python<'_>) -> PyResult<&Ptr<T>>;

    /// Field `field` read from the undecoded element's bytes, if it can be.
    fn peek(&self, _field: &str) -> Option<Peeked<'_>> {
        None
    }

    /// After the strings a peek gave are copied out: the element's pages
    /// released where a peek releases them (a weight's: reading the
    /// strings faulted them back in).
    #[inline]
    fn after_peek(&self) {}
}

impl<T: 'static> Access<T> for Ptr<T> {
    #[inline]
    fn get(&self, _py: Python<'_>) -> PyResult<&Ptr<T>> {
        Ok(self)
    }
}

/// Element `index` of a decode-on-touch list of a root's main graph.
struct Listed<T: 'static> {
    graph: Ptr<proto::GraphProto>,
    index: usize,
    marker: std::marker::PhantomData<fn() -> T>,
}

/// A message a Python object stands for: decoded, or an element of a
/// decode-on-touch list not decoded yet (decoded on first need, then kept
/// by the list and pointed at from here).
pub struct Handle<T: 'static> {
    decoded: OnceLock<Ptr<T>>,
    listed: Option<Listed<T>>,
}

impl<T: 'static> From<Ptr<T>> for Handle<T> {
    fn from(ptr: Ptr<T>) -> Self {
        Handle {
            decoded: OnceLock::from(ptr),
            listed: None,
        }
    }
}

impl<T: WrapListed> Handle<T> {
    /// Element `index` of `graph`'s decode-on-touch list of `T`, decoded
    /// when first needed.
    pub fn listed(graph: Ptr<proto::GraphProto>, index: usize) -> Self {
        Handle {
            decoded: OnceLock::new(),
            listed: Some(Listed {
                graph,
                index,
                marker: std::marker::PhantomData,
            }),
        }
    }

    /// The list and index of a listed element not decoded yet.
    fn unread(&self) -> Option<(&LazyList<T>, usize)> {
        if self.decoded.get().is_some() {
            return None;
        }
        let listed = self.listed.as_ref()?;
        let lists = listed.graph.root().lists_of(&listed.graph)?;
        Some((T::select(lists), listed.index))
    }

    /// Decodes a listed element (its chunk, kept by the list) and points at it.
    fn decode(&self, listed: &Listed<T>) -> Result<Ptr<T>, DecodeError> {
        let graph: &proto::GraphProto = &listed.graph;
        let missing = || DecodeError {
            offset: 0,
            path: String::new(),
            root: "ModelProto",
            kind: onnxfast_core::error::DecodeErrorKind::Internal {
                detail: format!("element {} of a list the graph no longer has", listed.index),
            },
        };
        let lists = listed.graph.root().lists_of(graph).ok_or_else(missing)?;
        T::select(lists).get(listed.index)?;
        Ptr::try_new(std::sync::Arc::clone(listed.graph.root()), |r| {
            T::select(r.lists_of(graph)?).cached(listed.index)
        })
        .ok_or_else(missing)
    }
}

impl<T: WrapListed> Access<T> for Handle<T> {
    fn get(&self, py: Python<'_>) -> PyResult<&Ptr<T>> {
        if let Some(ptr) = self.decoded.get() {
            return Ok(ptr);
        }
        let Some(listed) = &self.listed else {
            // `From<Ptr>` is the one other constructor, and it fills `decoded`.
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "a message handle holds neither a message nor a list element",
            ));
        };
        let ptr = self
            .decode(listed)
            .map_err(|e| crate::errors::decode_error(py, &e))?;
        // Another thread may have set it meanwhile: both point at the same
        // kept element.
        Ok(self.decoded.get_or_init(|| ptr))
    }

    #[inline]
    fn peek(&self, field: &str) -> Option<Peeked<'_>> {
        let (list, i) = self.unread()?;
        T::peek(list, i, field)
    }

    #[inline]
    fn after_peek(&self) {
        if let Some(listed) = &self.listed {
            if let Some(lists) = listed.graph.root().lists_of(&listed.graph) {
                T::select(lists).release_peeked(listed.index);
            }
        }
    }
}

/// A scalar type of a generated getter, as read from bytes.
pub trait FromPeeked: Sized {
    fn from_peeked(_value: Peeked<'_>) -> Option<Self> {
        None
    }
    /// A list field's values read from bytes, as the Python list the
    /// getter returns (made from them in place, not from a copy).
    fn peeked_list<'py>(
        _py: Python<'py>,
        _value: Peeked<'_>,
    ) -> Option<PyResult<Bound<'py, pyo3::types::PyList>>> {
        None
    }
}

impl FromPeeked for i64 {
    fn from_peeked(value: Peeked<'_>) -> Option<Self> {
        match value {
            Peeked::Int(v) => Some(v),
            _ => None,
        }
    }
    fn peeked_list<'py>(
        py: Python<'py>,
        value: Peeked<'_>,
    ) -> Option<PyResult<Bound<'py, pyo3::types::PyList>>> {
        match value {
            Peeked::Ints(v) => Some(pyo3::types::PyList::new(py, v)),
            _ => None,
        }
    }
}

impl FromPeeked for i32 {
    fn from_peeked(value: Peeked<'_>) -> Option<Self> {
        match value {
            // An int32 field is the low 32 bits of its varint (as decoded).
            Peeked::Int(v) => Some(v as i32),
            _ => None,
        }
    }
}

impl FromPeeked for u64 {}
impl FromPeeked for f32 {}
impl FromPeeked for f64 {}

/// String field `number` of element `i` of `list` from its bytes: the last
/// value of a singular field, every value of a repeated one.
fn peek_strings<T: ListElement>(
    list: &LazyList<T>,
    i: usize,
    number: u32,
    singular: bool,
) -> Option<Peeked<'_>> {
    let found = list.strings(i, number)?;
    Some(match singular {
        true => Peeked::Str(found.last().copied().unwrap_or_default()),
        false => Peeked::Strs(found),
    })
}

/// `NodeProto`'s names from a node's bytes.
pub fn peek_node<'a>(
    list: &'a LazyList<proto::NodeProto>,
    i: usize,
    field: &str,
) -> Option<Peeked<'a>> {
    use onnxfast_core::proto::schema::fields::node_proto as F;
    let (number, singular) = match field {
        "input" => (F::INPUT, false),
        "output" => (F::OUTPUT, false),
        "op_type" => (F::OP_TYPE, true),
        "name" => (F::NAME, true),
        "domain" => (F::DOMAIN, true),
        _ => return None,
    };
    peek_strings(list, i, number, singular)
}

/// `TensorProto`'s name, element type and dims from a tensor's bytes.
pub fn peek_tensor<'a>(
    list: &'a LazyList<proto::TensorProto>,
    i: usize,
    field: &str,
) -> Option<Peeked<'a>> {
    match field {
        "name" => {
            use onnxfast_core::proto::schema::fields::tensor_proto as F;
            peek_strings(list, i, F::NAME, true)
        }
        "data_type" => {
            let header = list.header(i)?;
            Some(Peeked::Int(i64::from(header.data_type.unwrap_or_default())))
        }
        "dims" => Some(Peeked::Ints(list.header(i)?.dims)),
        _ => None,
    }
}

/// `ValueInfoProto`'s name from an entry's bytes.
pub fn peek_value_info<'a>(
    list: &'a LazyList<proto::ValueInfoProto>,
    i: usize,
    field: &str,
) -> Option<Peeked<'a>> {
    use onnxfast_core::proto::schema::fields::value_info_proto as F;
    match field {
        "name" => peek_strings(list, i, F::NAME, true),
        _ => None,
    }
}

/// Nothing of a sparse tensor is read from bytes.
pub fn peek_nothing<'a, T>(_: &'a LazyList<T>, _: usize, _: &str) -> Option<Peeked<'a>> {
    None
}
