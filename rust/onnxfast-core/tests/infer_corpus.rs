//! Inference against what onnx infers, model by model, without Python.
//!
//! Reads every `*.jsonl` file of `tests/.corpus/onnx-<version>/` (written by
//! `scripts/gen_infer_expected.py`; the pytest suite generates
//! `infer_expected.jsonl` with the node-test corpus and the onnx wheel's
//! models, and `cases_expected.jsonl` with the edge and failure cases of
//! `tests/infer_cases`), or only the file `ONNXFAST_INFER_EXPECTED` names,
//! and, for each model:
//! - the full check's verdict must be onnx's `check_model(full_check=True)`;
//! - every value onnx types must get the same type from onnxfast: element
//!   type, rank, static dims and the model's symbolic dims (onnx's made-up
//!   `unk__N` symbols and unknown dims are both `?`).
//!
//! `ONNXFAST_INFER_FILTER=substring` limits the run to matching paths;
//! `ONNXFAST_INFER_ALL=1` prints every mismatch (not only the first ones).
//! Without an expected file the test says so and passes: run `pytest` (or
//! the script) first.

use std::path::PathBuf;

use onnxfast_core::checker::{check_model, CheckOptions};
use onnxfast_core::infer::{infer_model, InferOptions};
use onnxfast_core::opset::SchemaRegistry;
use onnxfast_core::proto::ModelProto;
use onnxfast_core::{decode, DecodeOptions};

/// `ONNXFAST_INFER_EXPECTED` when set, else every `*.jsonl` file of the
/// corpus folder of the onnx release the schemas come from (sorted).
fn expected_files() -> Vec<PathBuf> {
    if let Ok(p) = std::env::var("ONNXFAST_INFER_EXPECTED") {
        return vec![PathBuf::from(p)];
    }
    let version = &SchemaRegistry::global().onnx_version;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/.corpus")
        .join(format!("onnx-{version}"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
fn inference_matches_onnx_on_the_corpus() {
    let mut text = String::new();
    for path in expected_files() {
        match std::fs::read_to_string(&path) {
            Ok(t) => {
                eprintln!("reading {}", path.display());
                text.push_str(&t);
                if !text.ends_with('\n') {
                    text.push('\n');
                }
            }
            Err(e) => eprintln!("skipped {}: {e}", path.display()),
        }
    }
    if text.is_empty() {
        eprintln!("skipped: no expected file (run pytest, or scripts/gen_infer_expected.py)");
        return;
    }
    let filter = std::env::var("ONNXFAST_INFER_FILTER").unwrap_or_default();
    let mut verdict_mismatches = Vec::new();
    let mut type_mismatches = Vec::new();
    let mut write_back_mismatches = Vec::new();
    let (mut models, mut values) = (0usize, 0usize);
    for line in text.lines() {
        let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let model_path = record["path"].as_str().expect("path");
        if !model_path.contains(&filter) {
            continue;
        }
        let bytes = std::fs::read(model_path).expect("model file");
        let decoded = decode::<ModelProto>(bytes.into(), &DecodeOptions::default());
        let Ok(model) = decoded else {
            verdict_mismatches.push(format!("{model_path}: does not decode"));
            continue;
        };
        models += 1;
        let stripped = record["stripped"].as_bool().unwrap_or(false);
        if !stripped {
            let options = CheckOptions {
                full: true,
                model_dir: PathBuf::from(model_path).parent().map(PathBuf::from),
                ..CheckOptions::default()
            };
            let report = check_model(&model, &options);
            let theirs = record["full_check"].as_str();
            if theirs.is_none() != report.ok() {
                let ours: Vec<String> = report.errors().take(2).map(|d| d.to_string()).collect();
                verdict_mismatches.push(format!(
                    "{model_path}:\n    onnx: {}\n    ours: {}",
                    theirs.unwrap_or("valid"),
                    if ours.is_empty() {
                        "valid".to_string()
                    } else {
                        ours.join("\n          ")
                    }
                ));
            }
        }
        // Written back to a model loaded for decode on touch: the same
        // model as written back to the decoded one (with data propagation
        // too), or a panic naming the first difference.
        for data_prop in [false, true] {
            let options = InferOptions {
                data_prop,
                ..InferOptions::default()
            };
            let agrees = std::panic::catch_unwind(|| {
                onnxfast_core::fuzzing::write_back_agrees(&model, &options);
            });
            if agrees.is_err() {
                write_back_mismatches.push(format!("{model_path} (data_prop={data_prop})"));
            }
        }
        let Some(graphs) = record["graphs"].as_object() else {
            continue;
        };
        let inferred = infer_model(
            &model,
            &InferOptions {
                collect_types: true,
                report_unfit: false,
                ..InferOptions::default()
            },
        );
        for (graph, expected_values) in graphs {
            let ours = inferred.graphs.iter().find(|g| &g.path == graph);
            for (name, theirs) in expected_values.as_object().expect("values") {
                let theirs = theirs.as_str().expect("type");
                values += 1;
                let mine = ours
                    .and_then(|g| g.values.iter().find(|(n, _)| n == name))
                    .map(|(_, t)| inferred.symbols.show(t));
                if mine.as_deref() != Some(theirs) {
                    type_mismatches.push(format!(
                        "{model_path} {graph} '{name}': onnx {theirs}, ours {}",
                        mine.as_deref().unwrap_or("(none)")
                    ));
                }
            }
        }
    }
    eprintln!(
        "{models} models, {values} values; {} verdict and {} type mismatches; {} lazy \
         write-backs differ",
        verdict_mismatches.len(),
        type_mismatches.len(),
        write_back_mismatches.len()
    );
    for m in write_back_mismatches.iter().take(20) {
        eprintln!("write-back: {m}");
    }
    let all = std::env::var_os("ONNXFAST_INFER_ALL").is_some();
    for m in verdict_mismatches
        .iter()
        .take(if all { usize::MAX } else { 40 })
    {
        eprintln!("verdict: {m}");
    }
    for m in type_mismatches
        .iter()
        .take(if all { usize::MAX } else { 60 })
    {
        eprintln!("type: {m}");
    }
    assert!(
        verdict_mismatches.is_empty()
            && type_mismatches.is_empty()
            && write_back_mismatches.is_empty()
    );
}
