//! Python classes for every ONNX message.
//!
//! Each class wraps a [`Ptr`] into a loaded tree. Attribute names are the
//! onnx.proto field names; absent optional sub-messages read as `None`,
//! absent scalars as the proto default; repeated message fields are lazy
//! [`MessageList`]s, repeated scalars plain lists.

use pyo3::exceptions::{PyImportError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use onnxfast_core::proto;
use onnxfast_core::proto::type_proto;

use onnxfast_core::decode::lazy::{GraphLists, LazyList};

use crate::handle::{peek_node, peek_nothing, peek_tensor, peek_value_info};
use crate::handle::{Access, FromPeeked, Handle, Peeked, WrapListed};
use crate::lists::{MessageList, Wrap};
use crate::repr::Repr;
use crate::root::Ptr;

/// Serialized form of a message: the source bytes for a root message (exact,
/// unknown fields included), a fresh prost encoding otherwise.
fn serialize<'py, T: prost::Message + Sync + 'static>(
    py: Python<'py>,
    ptr: &Ptr<T>,
) -> PyResult<Bound<'py, PyBytes>> {
    if ptr.is_root() {
        return Ok(PyBytes::new(py, &ptr.root().source));
    }
    let owned = ptr.clone();
    let encoded = py.detach(move || encode_whole(&owned));
    match encoded {
        Ok(bytes) => Ok(PyBytes::new(py, &bytes)),
        Err(e) => Err(crate::errors::decode_error(py, &e)),
    }
}

/// The encoding of a message, with the decode-on-touch lists of a main
/// graph (or of the model holding it) decoded for it.
fn encode_whole<T: prost::Message + 'static>(
    ptr: &Ptr<T>,
) -> Result<Vec<u8>, onnxfast_core::error::DecodeError> {
    use std::any::Any;
    let any: &dyn Any = &**ptr;
    let root = ptr.root();
    if let Some(g) = any.downcast_ref::<proto::GraphProto>() {
        return Ok(prost::Message::encode_to_vec(&*root.full_graph(g)?));
    }
    if let Some(m) = any.downcast_ref::<proto::ModelProto>() {
        return Ok(prost::Message::encode_to_vec(&*root.full_model(m)?));
    }
    Ok(ptr.encode_to_vec())
}

/// Equality of two messages, lists decoded on touch included.
fn same_message<T: prost::Message + PartialEq + 'static>(a: &Ptr<T>, b: &Ptr<T>) -> bool {
    use std::any::Any;
    let lazy = |p: &Ptr<T>| {
        let any: &dyn Any = &**p;
        let root = p.root();
        any.downcast_ref::<proto::GraphProto>()
            .is_some_and(|g| root.lists_of(g).is_some())
            || any
                .downcast_ref::<proto::ModelProto>()
                .and_then(|m| m.graph.as_ref())
                .is_some_and(|g| root.lists_of(g).is_some())
    };
    if !lazy(a) && !lazy(b) {
        return **a == **b;
    }
    if a.addr() == b.addr() && std::sync::Arc::ptr_eq(a.root(), b.root()) {
        return true;
    }
    matches!((encode_whole(a), encode_whole(b)), (Ok(x), Ok(y)) if x == y)
}

/// `onnx.<path>.FromString(data)`.
fn to_onnx_message(
    py: Python<'_>,
    onnx_path: &str,
    data: Bound<'_, PyBytes>,
) -> PyResult<Py<PyAny>> {
    let onnx = py.import("onnx").map_err(|e| {
        PyImportError::new_err(format!(
            "to_onnx() needs the onnx package (pip install 'onnxfast[onnx]'): {e}"
        ))
    })?;
    let mut cls = onnx.into_any();
    for part in onnx_path.split('.') {
        cls = cls.getattr(part)?;
    }
    Ok(cls.call_method1("FromString", (data,))?.unbind())
}

macro_rules! field_name {
    ($f:ident) => {
        stringify!($f).trim_start_matches("r#")
    };
}

/// A Python class for an onnx.proto message:
/// `message! { /// doc \n Name(proto::Type) = "Name", onnx "TypeInOnnx"; methods }`.
/// Its field getters, repr fields and `WhichOneof` come from the field table
/// build.rs generates from onnx.proto (`onnxfast_core::onnx_fields!`); the
/// methods after the `;` are the class's own.
macro_rules! message {
    (
        $(#[$doc:meta])*
        $py:ident($proto:ty) = $pyname:literal, onnx $onnx:tt, listed $select:ident $peek:path;
        $($extra:tt)*
    ) => {
        onnxfast_core::onnx_fields! {
            $onnx,
            message_class,
            { $(#[$doc])* $py($proto) = $pyname, onnx $onnx, inner (Handle<$proto>), listed ($select, $peek) }
            { $($extra)* }
        }
    };
    (
        $(#[$doc:meta])*
        $py:ident($proto:ty) = $pyname:literal, onnx $onnx:tt;
        $($extra:tt)*
    ) => {
        onnxfast_core::onnx_fields! {
            $onnx,
            message_class,
            { $(#[$doc])* $py($proto) = $pyname, onnx $onnx, inner (Ptr<$proto>), listed () }
            { $($extra)* }
        }
    };
}

/// The class of [`message!`], given the message's fields by category.
/// `inner` is what an object holds: a [`Ptr`], or for the elements of
/// decode-on-touch lists (`listed`: which list, and what its bytes can
/// answer) a [`Handle`]; the getters reach the message through [`Access`].
macro_rules! message_class {
    (
        $(#[$doc:meta])*
        $py:ident($proto:ty) = $pyname:literal, onnx $onnx:literal,
        inner ($inner:ty), listed ($($select:ident, $peek:path)?)
        {
            scalars: [$($sc:ident: $sct:ty),* $(,)?],
            enums: [$($en:ident),* $(,)?],
            strs: [$($st:ident),* $(,)?],
            bytes: [$($by:ident),* $(,)?],
            str_lists: [$($sl:ident),* $(,)?],
            num_lists: [$($nl:ident: $nlt:ty),* $(,)?],
            bytes_lists: [$($bl:ident),* $(,)?],
            messages: [$($me:ident: ($($met:tt)*)),* $(,)?],
            method_messages: [$($mm:ident: ($($mmt:tt)*)),* $(,)?],
            lists: [$($li:ident),* $(,)?],
            method_lists: [$($ml:ident),* $(,)?],
            method_bytes_lists: [$($mb:ident),* $(,)?],
            graph_lists: [$($gl:ident),* $(,)?],
            oneof_scalars: [$($os:ident: $ost:ty => $osg:ident: ($($osv:tt)*)),* $(,)?],
            oneof_strs: [$($ot:ident => $otg:ident: ($($otv:tt)*)),* $(,)?],
            oneof_messages: [$($om:ident: ($($omt:tt)*) => $omg:ident: ($($omv:tt)*)),* $(,)?],
            oneofs: [$($og:ident: [$($of:ident ($($ofv:tt)*)),* $(,)?]),* $(,)?],
        }
        $($extra:tt)*
    ) => {
        $(#[$doc])*
        #[pyclass(module = "onnxfast", name = $pyname, frozen)]
        pub struct $py(pub $inner);

        // Holds a `Ptr` or `Handle`: Rust data only.
        impl crate::untracked::Acyclic for $py {}

        impl Wrap for $proto {
            const NAME: &'static str = $pyname;
            fn wrap(ptr: Ptr<Self>, py: Python<'_>) -> PyResult<Py<PyAny>> {
                Ok(crate::untracked::new(py, $py(ptr.into()))?.into_any())
            }
        }

        $(
            impl WrapListed for $proto {
                fn select(lists: &GraphLists) -> &LazyList<Self> {
                    &lists.$select
                }
                fn wrap_listed(handle: Handle<Self>, py: Python<'_>) -> PyResult<Py<PyAny>> {
                    Ok(crate::untracked::new(py, $py(handle))?.into_any())
                }
                fn peek<'a>(list: &'a LazyList<Self>, i: usize, field: &str) -> Option<Peeked<'a>> {
                    $peek(list, i, field)
                }
            }
        )?

        impl $py {
            /// The decoded message (decoded now, for a list element not yet).
            #[inline]
            fn m(&self, py: Python<'_>) -> PyResult<&Ptr<$proto>> {
                <$inner as Access<$proto>>::get(&self.0, py)
            }

            /// Field `field`, read from an undecoded list element's bytes.
            #[inline]
            #[allow(dead_code)]
            fn peek(&self, field: &str) -> Option<Peeked<'_>> {
                <$inner as Access<$proto>>::peek(&self.0, field)
            }

            /// After the strings a peek gave are copied out (see
            /// `Access::after_peek`).
            #[inline]
            #[allow(dead_code)]
            fn after_peek(&self) {
                <$inner as Access<$proto>>::after_peek(&self.0)
            }

            #[allow(unused_mut, dead_code)]
            fn generic_repr(&self, py: Python<'_>) -> PyResult<String> {
                let m = self.m(py)?;
                let mut r = Repr::new($pyname);
                $( r.text(field_name!($st), Some(m.$st())); )*
                $( r.scalar(field_name!($sc), m.$sc.as_ref()); )*
                $( r.texts(field_name!($sl), &m.$sl); )*
                $( r.nums(field_name!($nl), &m.$nl); )*
                $( r.present(field_name!($me), m.$me.is_some()); )*
                $( r.present(field_name!($mm), m.$mm().is_some()); )*
                $( r.count(field_name!($li), m.$li.len()); )*
                $( r.count(field_name!($ml), m.$ml().len()); )*
                Ok(r.finish())
            }
        }

        #[pymethods]
        impl $py {
            $(
                #[getter]
                fn $sc(&self, py: Python<'_>) -> PyResult<$sct> {
                    if let Some(v) = self.peek(stringify!($sc)).and_then(FromPeeked::from_peeked) {
                        self.after_peek();
                        return Ok(v);
                    }
                    Ok(self.m(py)?.$sc())
                }
            )*
            $(
                /// The enum's code (the default when absent or unknown).
                #[getter]
                fn $en(&self, py: Python<'_>) -> PyResult<i32> {
                    Ok(self.m(py)?.$en() as i32)
                }
            )*
            $(
                #[getter]
                pub(crate) fn $st<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
                    let shared = crate::texts::shared_field($pyname, stringify!($st));
                    if let Some(Peeked::Str(v)) = self.peek(stringify!($st)) {
                        let text = crate::texts::text(py, v, shared);
                        self.after_peek();
                        return Ok(text);
                    }
                    Ok(crate::texts::text(py, self.m(py)?.$st(), shared))
                }
            )*
            $(
                #[getter]
                fn $by<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                    Ok(PyBytes::new(py, self.m(py)?.$by()))
                }
            )*
            $(
                #[getter]
                pub(crate) fn $sl<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
                    if let Some(Peeked::Strs(v)) = self.peek(stringify!($sl)) {
                        let list = PyList::new(py, v);
                        self.after_peek();
                        return list;
                    }
                    PyList::new(py, self.m(py)?.$sl.iter().map(|s| s.as_str()))
                }
            )*
            $(
                #[getter]
                fn $nl<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
                    let peeked = self.peek(stringify!($nl));
                    if let Some(list) = peeked.and_then(|v| <$nlt as FromPeeked>::peeked_list(py, v)) {
                        self.after_peek();
                        return list;
                    }
                    PyList::new(py, self.m(py)?.$nl.iter().copied())
                }
            )*
            $(
                #[getter]
                fn $bl<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
                    Ok(self.m(py)?.$bl.iter().map(|b| PyBytes::new(py, b)).collect())
                }
            )*
            $(
                #[getter]
                fn $me(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
                    self.m(py)?
                        .try_project(|m| {
                            m.$me
                                .as_ref()
                                .map(::std::borrow::Borrow::<proto::$($met)*>::borrow)
                        })
                        .map(|p| Wrap::wrap(p, py))
                        .transpose()
                }
            )*
            $(
                /// (Kept out of line by the core type: few messages have it.)
                #[getter]
                fn $mm(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
                    self.m(py)?
                        .try_project(|m| m.$mm())
                        .map(|p| Wrap::wrap(p, py))
                        .transpose()
                }
            )*
            $(
                /// (Kept out of line by the core type: few messages have it.)
                #[getter]
                fn $mb<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
                    Ok(self.m(py)?.$mb().iter().map(|b| PyBytes::new(py, b)).collect())
                }
            )*
            $(
                #[getter]
                fn $li(&self, py: Python<'_>) -> PyResult<MessageList> {
                    Ok(MessageList::new(self.m(py)?.project(|m| &m.$li)))
                }
            )*
            $(
                /// (Kept out of line by the core type: few messages have it.)
                #[getter]
                fn $ml(&self, py: Python<'_>) -> PyResult<MessageList> {
                    Ok(MessageList::new(self.m(py)?.project(|m| m.$ml())))
                }
            )*
            $(
                /// (Decoded on touch for a model's main graph.)
                #[getter]
                fn $gl(&self, py: Python<'_>) -> PyResult<MessageList> {
                    Ok(MessageList::of_graph(self.m(py)?, |g| &g.$gl))
                }
            )*
            $(
                /// A member of a oneof (the default when another is set).
                #[getter]
                fn $os(&self, py: Python<'_>) -> PyResult<$ost> {
                    Ok(match &self.m(py)?.$osg {
                        Some(proto::$($osv)*(v)) => *v,
                        _ => Default::default(),
                    })
                }
            )*
            $(
                /// A member of a oneof ("" when another is set).
                #[getter]
                fn $ot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
                    let text = match &self.m(py)?.$otg {
                        Some(proto::$($otv)*(v)) => v,
                        _ => "",
                    };
                    let shared = crate::texts::shared_field($pyname, stringify!($ot));
                    Ok(crate::texts::text(py, text, shared))
                }
            )*
            $(
                /// A member of a oneof (None when another is set).
                #[getter]
                fn $om(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
                    self.m(py)?
                        .try_project(|m| match &m.$omg {
                            Some(proto::$($omv)*(v)) => {
                                Some(::std::borrow::Borrow::<proto::$($omt)*>::borrow(v))
                            }
                            _ => None,
                        })
                        .map(|p| Wrap::wrap(p, py))
                        .transpose()
                }
            )*

            /// Which member of oneof `group` is set, or None (as protobuf's
            /// `WhichOneof`; ValueError for a group the message does not have).
            #[allow(non_snake_case, unused_variables)]
            fn WhichOneof(&self, py: Python<'_>, group: &str) -> PyResult<Option<&'static str>> {
                $(
                    if group == field_name!($og) {
                        return Ok(match &self.m(py)?.$og {
                            $( Some(proto::$($ofv)*(_)) => Some(field_name!($of)), )*
                            None => None,
                        });
                    }
                )*
                Err(PyValueError::new_err(format!(
                    "{} has no oneof {group:?}", $pyname
                )))
            }

            /// Whether an optional field is present (as protobuf's `HasField`).
            #[allow(non_snake_case)]
            /// (Generated for every singular field from onnx.proto: `Presence`.)
            fn HasField(&self, py: Python<'_>, field: &str) -> PyResult<bool> {
                use onnxfast_core::proto::Presence;
                self.m(py)?.has_field(field).ok_or_else(|| PyValueError::new_err(format!(
                    "{} has no optional field {field:?}", $pyname
                )))
            }

            /// The protobuf serialization of this message.
            #[allow(non_snake_case)]
            fn SerializeToString<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                serialize(py, self.m(py)?)
            }

            /// This message as the `onnx` package's protobuf class
            #[doc = concat!("(`onnx.", $onnx, "`).")]
            fn to_onnx(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
                to_onnx_message(py, $onnx, serialize(py, self.m(py)?)?)
            }

            fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
                match other.cast::<$py>() {
                    Ok(other) => Ok(same_message(self.m(py)?, other.get().m(py)?)),
                    Err(_) => Ok(false),
                }
            }

            $($extra)*
        }
    };
}

// ---------------------------------------------------------------- model

message! {
    /// A model (`onnx.ModelProto`): metadata, opsets, the main graph, functions.
    Model(proto::ModelProto) = "Model", onnx "ModelProto";

    /// The external files this model's tensors use: a list of
    /// `ExternalFile(location, size, tensors, error)` in first-use order.
    /// Files are opened with every safety rule (nothing is read); `size` is
    /// None and `error` says why when a file cannot be used.
    fn external_files(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let model = self.0.clone();
        let found = py.detach(move || {
            let mut order: Vec<String> = Vec::new();
            let mut by_location: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
            let mut refused: Vec<(String, String, String)> = Vec::new();
            let mut visit = |t: &proto::TensorProto| {
                if !onnxfast_core::external::is_external(t) {
                    return;
                }
                match onnxfast_core::external::parse_info(t) {
                    Ok(info) => {
                        let entry = by_location.entry(info.location.clone()).or_insert_with(|| {
                            order.push(info.location.clone());
                            Vec::new()
                        });
                        entry.push(t.name().to_string());
                    }
                    Err(e) => refused.push((e.location, t.name().to_string(), e.rule)),
                }
            };
            for_each_model_tensor(&model, &mut visit)?;
            let store = &model.root().external;
            let mut out = Vec::new();
            for location in order {
                let tensors = by_location.remove(&location).unwrap_or_default();
                let (size, error) = match store.file_size(&location) {
                    Ok(size) => (Some(size), None),
                    Err(e) => (None, Some(e)),
                };
                out.push((location, size, tensors, error));
            }
            for (location, tensor, rule) in refused {
                out.push((location, None, vec![tensor], Some(rule)));
            }
            Ok::<_, onnxfast_core::error::DecodeError>(out)
        });
        let found = found.map_err(|e| crate::errors::decode_error(py, &e))?;
        let cls = py.import("onnxfast._external")?.getattr("ExternalFile")?;
        let items = found
            .into_iter()
            .map(|(location, size, tensors, error)| cls.call1((location, size, tensors, error)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(pyo3::types::PyList::new(py, items)?.into_any().unbind())
    }

    /// Writes the model to `path`: a path, or a binary file object (anything
    /// with `write()`, as `onnx.save_model` takes): the bytes
    /// `SerializeToString()` gives, streamed (weights are written from the
    /// memory map, not copied into memory first). To a path they go
    /// through a temporary file beside it, renamed over it when complete;
    /// to a file object in chunks of at most 4 MiB, each copied once into
    /// a `bytes` given to `write()`. Tensors with external data keep their
    /// `location`, which is relative to the folder of the file that names
    /// it: save beside the data files, or with `save_as_external_data=True`,
    /// which writes the weights to data files beside `path` (a file object
    /// then needs a `name` that is its path, as an open file has): the
    /// files `onnx.save_model(onnx.load(src), path,
    /// save_as_external_data=True, ...)` writes, byte for byte. Data files
    /// are written under temporary names and renamed into place, before
    /// the model file, once all are complete.
    ///
    /// - `location`: the data file, relative to `path`'s folder (default: the
    ///   model file's name with `.data` appended); replaced if present.
    /// - `all_tensors_to_one_file`: with `False`, each moved tensor goes to
    ///   a file of `path`'s folder named after it, as onnx writes them;
    ///   files already there are replaced, not appended to. A name that
    ///   cannot be a file name there (empty, `.`, `..`, over 200 bytes,
    ///   with a path separator, a control character or one of
    ///   `<>:;,?"*|`; the model file's name in any case; a folder's; or a
    ///   temporary file's, `.*.tmp`) gets `<model file name>.<k>.data`
    ///   instead, `k` counting those from 0 (onnx: a random uuid, or a
    ///   failed save); names equal but for case share one file, the first
    ///   one's.
    /// - `size_threshold`: an initializer moves when `len(raw_data) + 33`
    ///   (onnx's `sys.getsizeof`) is at least this (default 1024).
    /// - `convert_attribute`: move attribute tensors too.
    /// - `alignment` (beyond onnx): a power of two; each moved tensor of at
    ///   least that many bytes starts at a multiple of it (zeros before;
    ///   4096: each on pages of its own).
    /// - `format`: `"protobuf"` (the binary format), or onnx's text formats
    ///   `"textproto"`, `"json"` and `"onnxtxt"`, written by onnx (needs it
    ///   installed; with `save_as_external_data=True`, the weights go to
    ///   data files as for protobuf, the rest in text). By default, as `onnx.save_model`
    ///   does, from the file's extension (`.json`, `.txtpb`, `.onnxtxt`,
    ///   ...), else protobuf.
    ///
    /// Returns the bytes written to `path`.
    #[pyo3(signature = (
        path,
        *,
        save_as_external_data = false,
        all_tensors_to_one_file = true,
        location = None,
        size_threshold = None,
        convert_attribute = false,
        alignment = None,
        format = None,
    ))]
    // One argument per Python keyword.
    #[allow(clippy::too_many_arguments)]
    fn save(
        slf: &Bound<'_, Self>,
        path: &Bound<'_, PyAny>,
        save_as_external_data: bool,
        all_tensors_to_one_file: bool,
        location: Option<String>,
        size_threshold: Option<i64>,
        convert_attribute: bool,
        alignment: Option<u64>,
        format: Option<String>,
    ) -> PyResult<u64> {
        let options = crate::saving::SaveOptions {
            save_as_external_data,
            all_tensors_to_one_file,
            location,
            size_threshold,
            convert_attribute,
            alignment,
            format,
        };
        crate::saving::save(slf.as_any(), &slf.get().0, path, options)
    }

    /// Opset versions by domain (`''` is the default `ai.onnx` domain).
    #[getter]
    fn opsets(&self) -> std::collections::HashMap<&str, i64> {
        self.0.opset_import.iter().map(|o| (o.domain(), o.version())).collect()
    }

    fn __repr__(&self) -> String {
        let m = &*self.0;
        let mut r = Repr::new("Model");
        r.scalar("ir_version", m.ir_version.as_ref());
        r.text("producer_name", m.producer_name.as_deref());
        let opsets: Vec<String> = m
            .opset_import
            .iter()
            .map(|o| format!("{}:{}", if o.domain().is_empty() { "ai.onnx" } else { o.domain() }, o.version()))
            .collect();
        r.texts("opset_import", &opsets);
        if let Some(g) = &m.graph {
            let (nodes, inits) = match self.0.root().lists_of(g) {
                Some(l) => (l.node.len(), l.initializer.len()),
                None => (g.node.len(), g.initializer.len()),
            };
            r.raw("graph", &format!("<{nodes} nodes, {inits} initializers>"));
        }
        r.count("functions", m.functions.len());
        r.finish()
    }
}

message! {
    /// A dataflow graph (`onnx.GraphProto`).
    Graph(proto::GraphProto) = "Graph", onnx "GraphProto";

    /// Initializers by name (a new dict; values are lazy `Tensor`s).
    #[getter]
    fn initializers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        if let Some(lists) = self.0.root().lists_of(&self.0) {
            // The list's name table: the names copied out with the pages
            // behind the pass released, so a model's weights do not stay
            // mapped for having had their names read (each header faults
            // in the folio it is in: 2 MiB where the file is cached in huge
            // folios).
            let names = lists
                .initializer
                .name_table()
                .map_err(|e| crate::errors::decode_error(py, &e))?;
            for (i, name) in names.iter().enumerate() {
                out.set_item(name.unwrap_or_default(), self.initializer_at(i)?)?;
            }
            return Ok(out);
        }
        let n = self.0.initializer.len();
        for i in 0..n {
            let tensor = self.initializer_at(i)?;
            let name = tensor.name(py)?.to_string();
            out.set_item(name, tensor)?;
        }
        Ok(out)
    }

    /// The node of this graph that outputs `name`, or None (graph inputs,
    /// initializers and values of enclosing graphs have no producer here).
    fn producer(&self, py: Python<'_>, name: &str) -> PyResult<Option<Node>> {
        let index = crate::graph_index::index(&self.0).map_err(|e| crate::errors::decode_error(py, &e))?;
        index.producer(name).map(|i| self.node_at(i)).transpose()
    }

    /// The nodes of this graph that read `name`, in graph order (a node
    /// reading it twice is listed once; uses inside subgraphs are not listed).
    fn consumers(&self, py: Python<'_>, name: &str) -> PyResult<Vec<Node>> {
        let index = crate::graph_index::index(&self.0).map_err(|e| crate::errors::decode_error(py, &e))?;
        index.consumers(name).iter().map(|&i| self.node_at(i)).collect()
    }

    /// The values of this graph by name (see `Values`): inputs,
    /// initializers and node outputs, then the values of enclosing graphs
    /// this graph reads.
    #[getter]
    fn values(&self, py: Python<'_>) -> PyResult<crate::graph_values::Values> {
        crate::graph_values::Values::of(py, &self.0)
    }

    /// What the graph's node outputs take when it runs at `sizes` (a
    /// mapping of the model's symbols to ints), in graph order: see
    /// `MemoryPlan`. Shapes are the values' types (`Value.type`, shape
    /// inference run once per model) evaluated at the sizes.
    fn memory_plan(
        &self,
        py: Python<'_>,
        sizes: &Bound<'_, PyAny>,
    ) -> PyResult<crate::graph_values::MemoryPlan> {
        crate::graph_values::memory_plan(py, &self.0, sizes)
    }

    fn __repr__(&self) -> String {
        let g = &*self.0;
        let mut r = Repr::new("Graph");
        r.text("name", g.name.as_deref());
        let names = |vis: &[proto::ValueInfoProto]| vis.iter().map(|v| v.name().to_string()).collect::<Vec<_>>();
        r.texts("input", &names(&g.input));
        r.texts("output", &names(&g.output));
        r.count("node", self.count(|l| l.node.len(), |g| g.node.len()));
        r.count("initializer", self.count(|l| l.initializer.len(), |g| g.initializer.len()));
        r.finish()
    }
}

impl Graph {
    /// A list's length: of the decode-on-touch list, or of the graph's own.
    fn count(
        &self,
        lazy: impl FnOnce(&onnxfast_core::decode::lazy::GraphLists) -> usize,
        eager: impl FnOnce(&proto::GraphProto) -> usize,
    ) -> usize {
        match self.0.root().lists_of(&self.0) {
            Some(l) => lazy(l),
            None => eager(&self.0),
        }
    }

    /// Node `i` (decoded on touch for a main graph).
    fn node_at(&self, i: usize) -> PyResult<Node> {
        node_at(&self.0, i)
    }

    /// Initializer `i` (decoded on touch for a main graph).
    fn initializer_at(&self, i: usize) -> PyResult<Tensor> {
        element_at(&self.0, i, |g| &g.initializer)
            .map(Tensor)
            .ok_or_else(|| {
                pyo3::exceptions::PyIndexError::new_err("initializer index out of range")
            })
    }
}

/// Element `i` of one of `graph`'s lists (`eager`): of its decode-on-touch
/// list for a main graph (read from its bytes, decoded on first need).
fn element_at<T: WrapListed>(
    graph: &Ptr<proto::GraphProto>,
    i: usize,
    eager: impl for<'a> FnOnce(&'a proto::GraphProto) -> &'a Vec<T>,
) -> Option<Handle<T>> {
    if let Some(lists) = graph.root().lists_of(graph) {
        return (i < T::select(lists).len()).then(|| Handle::listed(graph.clone(), i));
    }
    graph.try_project(|g| eager(g).get(i)).map(Handle::from)
}

/// Node `i` of `graph` (decoded on touch for a main graph).
pub(crate) fn node_at(graph: &Ptr<proto::GraphProto>, i: usize) -> PyResult<Node> {
    element_at(graph, i, |g| &g.node)
        .map(Node)
        .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("node index out of range"))
}

message! {
    /// One operator invocation (`onnx.NodeProto`).
    Node(proto::NodeProto) = "Node", onnx "NodeProto", listed node peek_node;

    /// Attribute values by name, as `onnx.helper.get_attribute_value` gives
    /// them (bytes for strings; `Tensor`, `Graph`, ... objects for messages).
    #[getter]
    fn attrs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        let node = self.m(py)?;
        for i in 0..node.attribute.len() {
            let attr = node.project(|n| &n.attribute[i]);
            out.set_item(attr.name(), crate::values::attribute_value(py, &attr)?)?;
        }
        Ok(out)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// A named attribute of a node or function (`onnx.AttributeProto`).
    Attribute(proto::AttributeProto) = "Attribute", onnx "AttributeProto";

    /// The attribute's value (see `Node.attrs`).
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::values::attribute_value(py, &self.0)
    }

    fn __repr__(&self) -> String {
        let a = &*self.0;
        let mut r = Repr::new("Attribute");
        r.text("name", a.name.as_deref());
        r.raw("type", a.r#type().as_str_name());
        r.text("ref_attr_name", a.ref_attr_name_opt());
        r.scalar("f", a.f.as_ref());
        r.scalar("i", a.i.as_ref());
        if let Some(s) = &a.s {
            r.text("s", Some(&String::from_utf8_lossy(s)));
        }
        r.nums("floats", &a.floats);
        r.nums("ints", &a.ints);
        r.count("strings", a.strings().len());
        r.present("t", a.t().is_some());
        r.present("g", a.g().is_some());
        r.present("sparse_tensor", a.sparse_tensor().is_some());
        r.present("tp", a.tp().is_some());
        r.count("tensors", a.tensors().len());
        r.count("graphs", a.graphs().len());
        r.finish()
    }
}

message! {
    /// The name and type of a value (`onnx.ValueInfoProto`).
    ValueInfo(proto::ValueInfoProto) = "ValueInfo", onnx "ValueInfoProto", listed value_info peek_value_info;

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let v = &**self.m(py)?;
        let mut r = Repr::new("ValueInfo");
        r.text("name", v.name.as_deref());
        if let Some(t) = &v.r#type {
            r.raw("type", &crate::values::describe_type(t));
        }
        Ok(r.finish())
    }
}

message! {
    /// A key/value pair (`onnx.StringStringEntryProto`).
    StringStringEntry(proto::StringStringEntryProto) = "StringStringEntry", onnx "StringStringEntryProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// An opset import (`onnx.OperatorSetIdProto`).
    OperatorSetId(proto::OperatorSetIdProto) = "OperatorSetId", onnx "OperatorSetIdProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// Quantization parameters of a tensor (`onnx.TensorAnnotation`).
    TensorAnnotation(proto::TensorAnnotation) = "TensorAnnotation", onnx "TensorAnnotation";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// Training information (`onnx.TrainingInfoProto`).
    TrainingInfo(proto::TrainingInfoProto) = "TrainingInfo", onnx "TrainingInfoProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// A model-local function (`onnx.FunctionProto`).
    Function(proto::FunctionProto) = "Function", onnx "FunctionProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

// ---------------------------------------------------------------- tensors

message! {
    /// A dense tensor (`onnx.TensorProto`).
    Tensor(proto::TensorProto) = "Tensor", onnx "TensorProto", listed initializer peek_tensor;

    /// True when the data lives in an external file.
    #[getter]
    fn is_external(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.m(py)?.data_location() == proto::tensor_proto::DataLocation::External)
    }

    /// The tensor as a numpy array, with the dtype and shape
    /// `onnx.numpy_helper.to_array` gives. See the type stubs for `copy`
    /// and `dtype`.
    #[pyo3(signature = (copy = None, dtype = None))]
    fn numpy(&self, py: Python<'_>, copy: Option<bool>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(py, "converting a tensor", || crate::arrays::tensor_to_numpy(py, self.m(py)?, copy, dtype))
    }

    /// `(location, offset, length, checksum)` of external data, or None when
    /// the data is inline. Raises ExternalDataError if the entries break the
    /// rules (see `onnxfast.load`).
    #[getter]
    fn external_info(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        if !self.is_external(py)? {
            return Ok(None);
        }
        let info = onnxfast_core::external::parse_info(self.m(py)?).map_err(|e| crate::errors::external_error(py, &e))?;
        let cls = py.import("onnxfast._external")?.getattr("ExternalInfo")?;
        Ok(Some(cls.call1((info.location, info.offset, info.length, info.checksum))?.unbind()))
    }

    /// numpy dtype of `numpy()` (None for an undefined or unknown data_type).
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::arrays::tensor_dtype(py, self.data_type(py)?)
    }

    /// `tuple(dims)`.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        if let Some(Peeked::Ints(dims)) = self.peek("dims") {
            self.after_peek();
            return pyo3::types::PyTuple::new(py, dims);
        }
        crate::arrays::shape(py, self.m(py)?)
    }

    /// Bytes of the array `numpy()` returns (elements × itemsize), from the
    /// metadata alone.
    #[getter]
    fn nbytes(&self, py: Python<'_>) -> PyResult<usize> {
        let plan = onnxfast_core::tensor::plan(self.m(py)?).map_err(|e| crate::errors::tensor_error(py, &e))?;
        Ok(plan.nbytes())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let t = &**self.m(py)?;
        let mut r = Repr::new("Tensor");
        r.text("name", t.name.as_deref());
        r.raw("data_type", &crate::values::data_type_name(t.data_type()));
        r.nums("dims", &t.dims);
        if self.is_external(py)? {
            r.raw("data_location", "EXTERNAL");
        }
        Ok(r.finish())
    }
}

message! {
    /// The [begin, end) slice a segmented tensor covers (`onnx.TensorProto.Segment`).
    TensorSegment(proto::tensor_proto::Segment) = "TensorSegment", onnx "TensorProto.Segment";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// A sparse tensor in coordinate form (`onnx.SparseTensorProto`).
    SparseTensor(proto::SparseTensorProto) = "SparseTensor", onnx "SparseTensorProto", listed sparse_initializer peek_nothing;
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

// ---------------------------------------------------------------- types

message! {
    /// A shape: a list of dimensions (`onnx.TensorShapeProto`).
    TensorShape(proto::TensorShapeProto) = "TensorShape", onnx "TensorShapeProto";

    fn __repr__(&self) -> String {
        format!("TensorShape({})", crate::values::describe_shape(&self.0))
    }
}

message! {
    /// One dimension: a value, a symbolic name, or unknown
    /// (`onnx.TensorShapeProto.Dimension`).
    Dimension(proto::tensor_shape_proto::Dimension) = "Dimension", onnx "TensorShapeProto.Dimension";

    fn __repr__(&self) -> String {
        format!("Dimension({})", crate::values::describe_dim(&self.0))
    }
}

message! {
    /// The type of a value (`onnx.TypeProto`): exactly one of `tensor_type`,
    /// `sequence_type`, `map_type`, `optional_type`, `sparse_tensor_type`,
    /// `opaque_type` is set; the others read as None.
    Type(proto::TypeProto) = "Type", onnx "TypeProto";

    fn __repr__(&self) -> String {
        format!("Type({})", crate::values::describe_type(&self.0))
    }
}

message! {
    /// A tensor type: element type and optional shape (`onnx.TypeProto.Tensor`).
    /// `shape is None` means unknown rank; an empty shape is a scalar.
    TensorType(type_proto::Tensor) = "TensorType", onnx "TypeProto.Tensor";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// A sparse tensor type (`onnx.TypeProto.SparseTensor`).
    SparseTensorType(type_proto::SparseTensor) = "SparseTensorType", onnx "TypeProto.SparseTensor";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// A sequence type (`onnx.TypeProto.Sequence`).
    SequenceType(type_proto::Sequence) = "SequenceType", onnx "TypeProto.Sequence";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// A map type (`onnx.TypeProto.Map`).
    MapType(type_proto::Map) = "MapType", onnx "TypeProto.Map";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// An optional type (`onnx.TypeProto.Optional`).
    OptionalType(type_proto::Optional) = "OptionalType", onnx "TypeProto.Optional";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// An opaque type (`onnx.TypeProto.Opaque`).
    OpaqueType(type_proto::Opaque) = "OpaqueType", onnx "TypeProto.Opaque";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

// ---------------------------------------------------------------- devices (IR 11)

message! {
    /// A device configuration of the model (`onnx.DeviceConfigurationProto`).
    DeviceConfiguration(proto::DeviceConfigurationProto) = "DeviceConfiguration", onnx "DeviceConfigurationProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// How a node runs under a device configuration (`onnx.NodeDeviceConfigurationProto`).
    NodeDeviceConfiguration(proto::NodeDeviceConfigurationProto) = "NodeDeviceConfiguration",
        onnx "NodeDeviceConfigurationProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// Sharding of one tensor (`onnx.ShardingSpecProto`).
    ShardingSpec(proto::ShardingSpecProto) = "ShardingSpec", onnx "ShardingSpecProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// A key and a list of ints (`onnx.IntIntListEntryProto`).
    IntIntListEntry(proto::IntIntListEntryProto) = "IntIntListEntry", onnx "IntIntListEntryProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// Sharding along one axis (`onnx.ShardedDimProto`).
    ShardedDim(proto::ShardedDimProto) = "ShardedDim", onnx "ShardedDimProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// One simple sharding of a dimension (`onnx.SimpleShardedDimProto`).
    SimpleShardedDim(proto::SimpleShardedDimProto) = "SimpleShardedDim", onnx "SimpleShardedDimProto";

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

// ---------------------------------------------------------------- test data

message! {
    /// A sequence value (`onnx.SequenceProto`, test data).
    SequenceValue(proto::SequenceProto) = "SequenceValue", onnx "SequenceProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// A map value (`onnx.MapProto`, test data).
    MapValue(proto::MapProto) = "MapValue", onnx "MapProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

message! {
    /// An optional value (`onnx.OptionalProto`, test data).
    OptionalValue(proto::OptionalProto) = "OptionalValue", onnx "OptionalProto";
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.generic_repr(py)
    }
}

/// Registers every message class on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_class::<Graph>()?;
    m.add_class::<crate::graph_values::MemoryPlan>()?;
    m.add_class::<Node>()?;
    m.add_class::<Attribute>()?;
    m.add_class::<ValueInfo>()?;
    m.add_class::<StringStringEntry>()?;
    m.add_class::<OperatorSetId>()?;
    m.add_class::<TensorAnnotation>()?;
    m.add_class::<TrainingInfo>()?;
    m.add_class::<Function>()?;
    m.add_class::<Tensor>()?;
    m.add_class::<TensorSegment>()?;
    m.add_class::<SparseTensor>()?;
    m.add_class::<TensorShape>()?;
    m.add_class::<Dimension>()?;
    m.add_class::<Type>()?;
    m.add_class::<TensorType>()?;
    m.add_class::<SparseTensorType>()?;
    m.add_class::<SequenceType>()?;
    m.add_class::<MapType>()?;
    m.add_class::<OptionalType>()?;
    m.add_class::<OpaqueType>()?;
    m.add_class::<DeviceConfiguration>()?;
    m.add_class::<NodeDeviceConfiguration>()?;
    m.add_class::<ShardingSpec>()?;
    m.add_class::<IntIntListEntry>()?;
    m.add_class::<ShardedDim>()?;
    m.add_class::<SimpleShardedDim>()?;
    m.add_class::<SequenceValue>()?;
    m.add_class::<MapValue>()?;
    m.add_class::<OptionalValue>()?;
    m.add_class::<MessageList>()?;
    m.add_class::<crate::graph_values::Values>()?;
    m.add_class::<crate::graph_values::Value>()?;
    m.add_class::<crate::graph_values::ValuesIter>()?;
    m.add_class::<crate::arrays::BufferOwner>()?;
    m.add_class::<crate::lists::MessageListIter>()?;
    Ok(())
}

/// Every tensor of a model, those of a decode-on-touch main graph's lists
/// included (read one at a time, not kept).
pub(crate) fn for_each_model_tensor<'a>(
    model: &'a crate::root::Ptr<proto::ModelProto>,
    visit: &mut dyn FnMut(&proto::TensorProto),
) -> Result<(), onnxfast_core::error::DecodeError> {
    onnxfast_core::ir::visit::for_each_tensor(model, &mut |t| visit(t));
    if let Some(lists) = model.graph.as_ref().and_then(|g| model.root().lists_of(g)) {
        lists.for_each_tensor(visit)?;
    }
    Ok(())
}
