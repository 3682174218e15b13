//! The checker's binding: runs onnxfast-core's checker without the GIL and
//! hands the findings to `onnxfast._check` as plain tuples.

use std::path::PathBuf;

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use onnxfast_core::checker::policy::{OpRule, Policy};
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
    check_custom_domain = false, max_diagnostics = 10000, full = false, policy = None,
    contrib_ops = false, data_prop = false,
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
    policy: Option<&Bound<'_, PyDict>>,
    contrib_ops: bool,
    data_prop: bool,
) -> PyResult<Checked> {
    let policy = policy.map(policy_from_dict).transpose()?;
    let options = CheckOptions {
        strict,
        full,
        model_dir,
        skip_opset_compatibility_check,
        check_custom_domain,
        max_diagnostics: Some(max_diagnostics),
        policy: policy.map(|p| Arc::new(p.into())),
        source_bytes: Some(model.get().0.root().source.len() as u64),
        contrib_ops,
        data_prop,
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

/// Every diagnostic code: `[(id, severity, summary)]` in docs order (the
/// summary is docs/checks.md's Markdown line).
#[pyfunction]
pub fn diagnostic_codes() -> Vec<(&'static str, &'static str, &'static str)> {
    onnxfast_core::diag::codes::ALL
        .iter()
        .map(|c| (c.id, c.severity.as_str(), c.summary))
        .collect()
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

/// The core policy from the dict `onnxfast.Policy` hands over (keys as in
/// the TOML schema, already checked there; checked again here for type).
fn policy_from_dict(d: &Bound<'_, PyDict>) -> PyResult<Policy> {
    let mut p = Policy::default();
    for (key, value) in d.iter() {
        let key: String = key.extract()?;
        if value.is_none() {
            continue;
        }
        let ops = |v: &Bound<'_, PyAny>| -> PyResult<Vec<OpRule>> {
            v.extract::<Vec<String>>()?
                .iter()
                .map(|t| OpRule::parse(t).map_err(PyValueError::new_err))
                .collect()
        };
        let opsets = |v: &Bound<'_, PyAny>| -> PyResult<Vec<(String, i64)>> {
            let mut out: Vec<(String, i64)> = v
                .extract::<std::collections::HashMap<String, i64>>()?
                .into_iter()
                .collect();
            out.sort();
            Ok(out)
        };
        match key.as_str() {
            "allowed_domains" => p.allowed_domains = Some(value.extract()?),
            "denied_domains" => p.denied_domains = value.extract()?,
            "allowed_ops" => p.allowed_ops = Some(ops(&value)?),
            "denied_ops" => p.denied_ops = ops(&value)?,
            "min_opset" => p.min_opset = opsets(&value)?,
            "max_opset" => p.max_opset = opsets(&value)?,
            "min_ir_version" => p.min_ir_version = Some(value.extract()?),
            "max_ir_version" => p.max_ir_version = Some(value.extract()?),
            "max_file_bytes" => p.max_file_bytes = Some(value.extract()?),
            "max_parameters" => p.max_parameters = Some(value.extract()?),
            "max_nodes" => p.max_nodes = Some(value.extract()?),
            "max_subgraph_depth" => p.max_subgraph_depth = Some(value.extract()?),
            "allow_external_data" => p.allow_external_data = value.extract()?,
            "max_external_bytes" => p.max_external_bytes = Some(value.extract()?),
            "allow_functions" => p.allow_functions = value.extract()?,
            "required_metadata" => p.required_metadata = value.extract()?,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown policy key {other:?}"
                )));
            }
        }
    }
    Ok(p)
}
