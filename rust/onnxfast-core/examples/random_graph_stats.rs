//! Statistics of the random-graph generator used by the inference fuzz
//! test: how often node outputs get types and which findings occur.
use std::collections::BTreeMap;

use onnxfast_core::fuzzing::random_model;
use onnxfast_core::infer::{infer_model, InferOptions};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let (mut outputs, mut typed) = (0usize, 0usize);
    let mut codes: BTreeMap<&str, usize> = BTreeMap::new();
    for data in onnxfast_core::fuzzing::seeded_choices(1).take(n) {
        let m = random_model(&data);
        let inferred = infer_model(
            &m,
            &InferOptions {
                collect_types: true,
                report_unfit: false,
                ..InferOptions::default()
            },
        );
        let g = m
            .graph
            .as_ref()
            .map(|g| g.node.iter().flat_map(|n| n.output.iter()).count());
        outputs += g.unwrap_or(0);
        if let Some(main) = inferred.graphs.iter().find(|g| g.path == "main") {
            typed += main
                .values
                .iter()
                .filter(|(name, _)| name.starts_with('v'))
                .count();
        }
        for d in &inferred.diagnostics {
            *codes.entry(d.code).or_default() += 1;
        }
    }
    println!("{n} models: {typed} of {outputs} node outputs typed; findings: {codes:?}");
}
