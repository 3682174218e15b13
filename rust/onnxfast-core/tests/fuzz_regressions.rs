//! Replays the inputs kept under `fuzz/regressions/<target>/` (minimised
//! fuzzer findings and hand-made attack cases) through the same entry points
//! the fuzz targets use. Each must return without panicking.

#![allow(clippy::panic)] // a test harness: panicking is how it fails

use std::path::{Path, PathBuf};

use onnxfast_core::fuzzing;

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("regressions")
        .join(target);
    let mut found: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .map(|p| {
            let data = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, data)
        })
        .collect();
    found.sort();
    assert!(
        !found.is_empty(),
        "no regression inputs in {}",
        dir.display()
    );
    found
}

#[test]
fn decode_regressions() {
    for (_, data) in inputs("decode") {
        fuzzing::decode_roundtrip(&data);
    }
}

#[test]
fn check_regressions() {
    for (_, data) in inputs("check") {
        fuzzing::decode_and_check(&data);
    }
}

#[test]
fn evaluate_regressions() {
    for (_, data) in inputs("evaluate") {
        fuzzing::evaluate_text(&data);
    }
}

#[test]
fn tensor_regressions() {
    for (_, data) in inputs("tensor") {
        fuzzing::tensor_to_arrays(&data);
    }
}

#[cfg(unix)]
#[test]
fn external_data_regressions() {
    let root = std::env::temp_dir().join(format!(
        "onnxfast-regression-sandbox-{}",
        std::process::id()
    ));
    let sandbox = fuzzing::Sandbox::create(&root).unwrap_or_else(|e| panic!("sandbox: {e}"));
    for (_, data) in inputs("external_data") {
        let mmap = data.first().is_some_and(|b| b & 1 == 0);
        fuzzing::external_read(&sandbox, data.get(1..).unwrap_or(&[]), mmap);
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn infer_regressions() {
    for (_, data) in inputs("infer") {
        fuzzing::infer_random_model(&data);
    }
}

/// Random graphs of real operators (every schema, odd types, shapes and
/// attributes) through inference and the full check: none may panic. The
/// choices come from a fixed-seed generator, so failures reproduce
/// (`ONNXFAST_RANDOM_GRAPHS=N` runs N of them instead of 4,000).
#[test]
fn random_graphs_infer_without_panics() {
    let count: usize = std::env::var("ONNXFAST_RANDOM_GRAPHS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    for (case, data) in fuzzing::seeded_choices(1).take(count).enumerate() {
        let result = std::panic::catch_unwind(|| fuzzing::infer_random_model(&data));
        if result.is_err() {
            let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
            panic!("random graph {case} panicked; its choices: {hex}");
        }
    }
}
