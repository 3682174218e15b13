//! The checker's binding: runs onnxfast-core's checker without the GIL and
//! hands the findings to `onnxfast._check` as plain tuples.

use std::path::PathBuf;

use pyo3::prelude::*;

use onnxfast_core::checker::{self, CheckOptions};

use crate::messages::Model;

/// One finding as Python receives it: (code, severity, message, location, suggestion).
type Finding = (&'static str, &'static str, String, String, Option<String>);

/// Checks `model`; returns `[(code, severity, message, location, suggestion)]`.
#[pyfunction]
#[pyo3(signature = (model, *, strict = false, model_dir = None, skip_opset_compatibility_check = false, check_custom_domain = false))]
pub fn check_model(
    py: Python<'_>,
    model: &Bound<'_, Model>,
    strict: bool,
    model_dir: Option<PathBuf>,
    skip_opset_compatibility_check: bool,
    check_custom_domain: bool,
) -> PyResult<Vec<Finding>> {
    let ptr = model.get().0.clone();
    let model_dir = model_dir.or_else(|| Some(ptr.root().external.base().to_path_buf()));
    let options = CheckOptions {
        strict,
        model_dir,
        skip_opset_compatibility_check,
        check_custom_domain,
    };
    let report = py.detach(move || checker::check_model(&ptr, &options));
    Ok(report
        .diagnostics
        .into_iter()
        .map(|d| {
            (
                d.code,
                d.severity.as_str(),
                d.message,
                d.location.to_string(),
                d.suggestion,
            )
        })
        .collect())
}
