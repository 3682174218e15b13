//! Shape inference as a product: `onnxfast.infer_shapes` returns a new
//! model holding the inferred types (onnx's `infer_shapes` convention).

use pyo3::prelude::*;

use onnxfast_core::error::DecodeError;
use onnxfast_core::external::ExternalStore;
use onnxfast_core::infer::{self, InferOptions, Inference};
use onnxfast_core::proto;

use crate::checking::{checked, Checked};
use crate::messages::Model;
use crate::root::{Root, RootMessage};

/// What to infer (the options of `onnxfast.infer_shapes`).
#[derive(Clone, Copy)]
pub struct Flags {
    pub max_diagnostics: usize,
    pub data_prop: bool,
    pub symbolic: bool,
    pub check_type: bool,
    pub contrib_ops: bool,
}

/// `onnxfast.infer_shapes`'s defaults (types checked).
impl Default for Flags {
    fn default() -> Self {
        Flags {
            max_diagnostics: onnxfast_core::checker::DEFAULT_MAX_DIAGNOSTICS,
            data_prop: false,
            symbolic: false,
            check_type: true,
            contrib_ops: false,
        }
    }
}

/// `model` (inside `root`) whole, inferred and annotated as onnx's
/// `infer_shapes` returns it (constants' external data read from the
/// root's store), and what inference found.
pub fn annotated(
    root: &Root,
    model: &proto::ModelProto,
    flags: Flags,
) -> Result<(proto::ModelProto, Inference), DecodeError> {
    let whole = root.full_model(model)?.into_owned();
    let (annotated, inference, _) = infer::infer_shapes(whole, &options(root, flags));
    Ok((annotated, inference))
}

pub fn options(root: &Root, flags: Flags) -> InferOptions<'_> {
    InferOptions {
        store: Some(&root.external),
        max_diagnostics: flags.max_diagnostics,
        data_prop: flags.data_prop,
        symbolic: flags.symbolic,
        check_type: flags.check_type,
        contrib_ops: flags.contrib_ops,
        ..InferOptions::default()
    }
}

/// Infers every value's type and returns `(model, findings)`: a new model
/// equal to `model` with the inferred types written into its graphs'
/// `value_info` and outputs (its weights are the same bytes as `model`'s:
/// nothing is copied), and the findings as `check_model` returns them.
/// `data_prop`: follow the values of shape computations; `symbolic`: dims
/// as expressions over the model's symbols; `check_type`: check each node's
/// types against its operator's type constraints (onnx's option);
/// `contrib_ops`: infer onnxruntime's own operators too.
#[pyfunction]
#[pyo3(signature = (model, *, max_diagnostics = 10000, data_prop = false, symbolic = false, check_type = true, contrib_ops = false))]
pub fn infer_shapes(
    py: Python<'_>,
    model: &Bound<'_, Model>,
    max_diagnostics: usize,
    data_prop: bool,
    symbolic: bool,
    check_type: bool,
    contrib_ops: bool,
) -> PyResult<(Py<PyAny>, Checked)> {
    let flags = Flags {
        max_diagnostics,
        data_prop,
        symbolic,
        check_type,
        contrib_ops,
    };
    crate::errors::guard(py, "inferring shapes", || {
        infer_shapes_impl(py, model, flags)
    })
}

fn infer_shapes_impl(
    py: Python<'_>,
    model: &Bound<'_, Model>,
    flags: Flags,
) -> PyResult<(Py<PyAny>, Checked)> {
    let ptr = model.get().0.clone();
    let root = ptr.root().clone();
    let large = root.source.len() >= crate::GIL_RELEASE_BYTES;
    let (annotated, found) = crate::maybe_detach(py, large, move || {
        let store = ExternalStore::new(
            Some(root.external.base().to_path_buf()),
            root.external.options(),
        );
        let lists = ptr.graph.as_ref().and_then(|g| root.lists_of(g));
        let (message, lists, inference) = match lists {
            // Loaded for decode on touch: the result's lists are the
            // source's, written back as they are decoded.
            Some(lists) => {
                let (header, lists, inference, _) =
                    infer::infer_shapes_lazy(&ptr, lists, &options(&root, flags))?;
                (header, lists, inference)
            }
            None => {
                let (annotated, inference) = annotated(&root, &ptr, flags)?;
                (annotated, None, inference)
            }
        };
        let found = checked(inference.diagnostics, inference.omitted, &inference.counts);
        let new_root = Root::with_flags(
            root.source.clone(),
            root.source_pages.clone(),
            RootMessage::Model(message),
            store,
            false,
            lists,
            flags,
        );
        Ok::<_, DecodeError>((new_root, found))
    })
    .map_err(|e| crate::errors::decode_error(py, &e))?;
    Ok((crate::wrap_root(py, annotated)?, found))
}
