//! The checker's binding: runs onnxfast-core's checker without the GIL and
//! hands the findings to `onnxfast._check` as plain tuples.

use std::path::PathBuf;

use pyo3::prelude::*;

use onnxfast_core::checker::{self, CheckOptions};

use crate::messages::Model;

/// One finding as Python receives it: (code, severity, message, location, suggestion).
type Finding = (&'static str, &'static str, String, String, Option<String>);

/// What `check_model` returns: (findings, omitted, errors, warnings).
pub(crate) type Checked = (Vec<Finding>, u64, u64, u64);

/// Checks `model`; returns `([(code, severity, message, location,
/// suggestion)], omitted, errors, warnings)`: the kept findings, how many
/// were not kept, and how many errors and warnings there were in all.
#[pyfunction]
#[pyo3(signature = (
    model, *, strict = false, model_dir = None, skip_opset_compatibility_check = false,
    check_custom_domain = false, max_diagnostics = 10000, full = false,
))]
#[allow(clippy::too_many_arguments)]
pub fn check_model(
    py: Python<'_>,
    model: &Bound<'_, Model>,
    strict: bool,
    model_dir: Option<PathBuf>,
    skip_opset_compatibility_check: bool,
    check_custom_domain: bool,
    max_diagnostics: usize,
    full: bool,
) -> PyResult<Checked> {
    let options = CheckOptions {
        strict,
        full,
        model_dir,
        skip_opset_compatibility_check,
        check_custom_domain,
        max_diagnostics: Some(max_diagnostics),
    };
    crate::errors::guard(py, "checking", || check_model_impl(py, model, options))
}

fn check_model_impl(
    py: Python<'_>,
    model: &Bound<'_, Model>,
    mut options: CheckOptions,
) -> PyResult<Checked> {
    let ptr = model.get().0.clone();
    if options.model_dir.is_none() {
        options.model_dir = Some(ptr.root().external.base().to_path_buf());
    }
    let large = ptr.root().source.len() >= crate::GIL_RELEASE_BYTES;
    let report = crate::maybe_detach(py, large, move || {
        let lists = ptr.graph.as_ref().and_then(|g| ptr.root().lists_of(g));
        match lists {
            Some(lists) => checker::check_lazy(&ptr, lists, &options),
            None => Ok(checker::check_model(&ptr, &options)),
        }
    })
    .map_err(|e: onnxfast_core::error::DecodeError| crate::errors::decode_error(py, &e))?;
    Ok(checked(report.diagnostics, report.omitted, &report.counts))
}

/// Findings as `onnxfast._check` takes them.
pub(crate) fn checked(
    diagnostics: Vec<onnxfast_core::diag::Diagnostic>,
    omitted: u64,
    counts: &onnxfast_core::diag::Counts,
) -> Checked {
    let findings = diagnostics
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
        .collect();
    (findings, omitted, counts.errors, counts.warnings)
}
