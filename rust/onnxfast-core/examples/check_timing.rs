//! Times the checker on one file: `cargo run --release --example check_timing -- FILE [N]`
//! (`FULL=1`: the full check; `POLICY=1`: each check run again with a
//! policy allowing ai.onnx's Add, Relu, Mul, Transpose and LeakyRelu only, and
//! no subgraph).
use std::time::Instant;

use std::sync::Arc;

use onnxfast_core::checker::policy::{OpRule, Policy};
use onnxfast_core::checker::{check_model, CheckOptions};
use onnxfast_core::decode::source;
use onnxfast_core::{decode, proto, DecodeOptions};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: check_timing FILE [N]")?;
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let full = std::env::var_os("FULL").is_some();
    let options = CheckOptions {
        full,
        ..CheckOptions::default()
    };
    let policy = std::env::var_os("POLICY").map(|_| {
        let ops = ["Add", "Relu", "Mul", "Transpose", "LeakyRelu"];
        let policy = Policy {
            allowed_domains: Some(vec!["ai.onnx".into()]),
            allowed_ops: Some(ops.iter().filter_map(|o| OpRule::parse(o).ok()).collect()),
            max_subgraph_depth: Some(0),
            ..Policy::default()
        };
        CheckOptions {
            policy: Some(Arc::new(policy.into())),
            ..options.clone()
        }
    });
    let buf = source::map_file(path.as_ref())?.bytes;
    let t = Instant::now();
    let model: proto::ModelProto = decode(buf, &DecodeOptions::default())?;
    println!("decode {:?}", t.elapsed());
    for _ in 0..n {
        let t = Instant::now();
        let report = check_model(&model, &options);
        println!(
            "check {:?} ({} findings)",
            t.elapsed(),
            report.diagnostics.len()
        );
        if let Some(with_policy) = &policy {
            let t = Instant::now();
            let report = check_model(&model, with_policy);
            println!(
                "check + policy {:?} ({} findings)",
                t.elapsed(),
                report.diagnostics.len()
            );
        }
    }
    Ok(())
}
